"""--secret FILE[:NAME], as the unprivileged user: the file's bytes are /run/secrets/NAME in the
box (mode 0400, the workload's, on a tmpfs of the box's own, read-only), and nowhere else: not in
the workload's environment or command line, not in `kern inspect`, not in the runtime dir or a
restart policy's kept upper on the host's disk. Bad names and files are refused before anything
starts."""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


class SecretTest(DetachedCase):

    def secret_file(self, content):
        d = tempfile.mkdtemp(prefix="kern-secret-", dir=self.s.tmp)
        os.chmod(d, 0o755)
        path = os.path.join(d, "db_password.txt")
        with open(path, "w") as f:
            f.write(content)
        os.chmod(path, 0o644)
        return path

    def grep_tree(self, top, needle):
        """Files under `top` whose bytes hold `needle` (read as root: the tree is the user's)."""
        hits = []
        for base, _, files in os.walk(top):
            for n in files:
                p = os.path.join(base, n)
                try:
                    with open(p, "rb") as f:
                        if needle.encode() in f.read():
                            hits.append(p)
                except OSError:
                    pass
        return hits

    def test_a_secret_is_a_file_of_the_box_and_nowhere_else(self):
        mark = kerntest.unique_marker("secret")
        src = self.secret_file(mark)
        script = ("cat /run/secrets/db_password; echo; stat -c '%a %u' /run/secrets/db_password; "
                  "grep -c ' /run/secrets tmpfs ' /proc/mounts; echo x > /run/secrets/other || echo read-only; "
                  "env; cat /proc/self/cmdline | tr '\\0' ' '")
        run = self.box(["sh", "-c", script], flags=["--secret", src + ":db_password"])
        self.assertExit(run, 0)
        lines = run.out.splitlines()
        self.assertEqual(lines[0], mark, run.describe())
        self.assertEqual(lines[1], "400 0")
        # The tmpfs, and its read-only bind onto itself.
        self.assertGreaterEqual(int(lines[2]), 1, "a tmpfs of its own at /run/secrets\n" + run.describe())
        self.assertIn("read-only", run.out)
        self.assertEqual(run.out.count(mark), 1, "only the file holds it, not env or argv\n" + run.describe())
        # The control: without --secret there is no such file.
        plain = self.box(["sh", "-c", "cat /run/secrets/db_password"])
        self.assertNotEqual(plain.rc, 0, plain.describe())
        # A detached box with a restart policy: the kept upper and the runtime dir never hold it.
        name = self.started(["sh", "-c", "cat /run/secrets/db_password.txt > /dev/null && sleep 60"],
                            ["--secret", src, "--restart", "always"])
        self.wait_for(name, lambda r: r["state"] == "running")
        ex = self.kern("exec", name, "--", "cat", "/run/secrets/db_password.txt")
        self.assertExit(ex, 0)
        self.assertEqual(ex.out, mark)
        ins = self.kern("inspect", name)
        self.assertNotIn(mark, ins.out)
        self.assertEqual(self.grep_tree(self.runtime_dir, mark), [])
        # The control of that scan: it does read the runtime dir's files (the record names the box).
        self.assertTrue(self.grep_tree(self.runtime_dir, name), "the scan read nothing")

    def test_bad_secrets_are_refused_before_the_start(self):
        src = self.secret_file("x")
        for flags, said in ((["--secret", src + ":../x"], "is not a secret's name"),
                            (["--secret", src + ":a/b"], "is not a secret's name"),
                            (["--secret", "/nonexistent/kern-secret"], "/nonexistent/kern-secret"),
                            (["--secret", os.path.dirname(src) + ":d"], "--secret"),
                            (["--secret", src + ":s", "--secret", src + ":s"], "given twice")):
            self.assertKernError(self.box(["true"], flags=flags), said)
        self.assertEqual(self.registered_boxes(), [])


if __name__ == "__main__":
    kerntest.main()
