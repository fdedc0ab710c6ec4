"""kern generate systemd, as the unprivileged user: the unit of a detached box passes
`systemd-analyze --user verify` (SKIPPED by name where systemd-analyze is missing), and its
ExecStart, run as systemd would run it, makes the box again with the same name, flags and command
(after ExecStartPre's kern rm -f of the exited one); its ExecStop stops it. A box made in the
foreground, or a name nobody has, gets a clear refusal. Starting it at boot under a systemd
PID 1 is the VM lane's part (tests/vm/)."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


def unit_commands(text):
    """Key -> systemd's words of each Exec line (the unit quotes every word in double quotes)."""
    out = {}
    for line in text.splitlines():
        for key in ("ExecStartPre=-", "ExecStart=", "ExecStop="):
            if line.startswith(key):
                words = shlex.split(line[len(key):].replace("$$", "$").replace("%%", "%"))
                out[key.rstrip("=-")] = words
    return out


class SystemdUnitTest(DetachedCase):
    def test_the_unit_verifies_and_makes_the_box_again(self):
        run = self.box(["sh", "-c", "echo \"hello $GREETING\"; exec sleep 1000"],
                       flags=["-d", "--restart", "on-failure:2", "-e", "GREETING=a b $c"], name=False)
        self.assertExit(run, 0)
        name = run.out.strip()
        self.addCleanup(self.kern, "rm", "-f", name, timeout=30)
        gen = self.kern("generate", "systemd", name)
        self.assertExit(gen, 0)
        unit = gen.out
        cmds = unit_commands(unit)
        self.assertEqual(cmds["ExecStart"][1:3], ["box", name], unit)
        self.assertIn("GREETING=a b $c", cmds["ExecStart"])
        analyze = shutil.which("systemd-analyze")
        self.require("systemd-analyze", analyze is not None, "systemd-analyze is not installed (Debian's systemd package)")
        path = os.path.join(self.runtime_dir, "kern-%s.service" % name)
        with open(path, "w") as f:
            f.write(unit)
        os.chmod(path, 0o644)
        v = self.kern_as_user([analyze, "--user", "verify", path])
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        # The discriminant: the same check refuses a unit whose command cannot run.
        bad = path.replace(".service", "-bad.service")
        with open(bad, "w") as f:
            f.write(unit.replace('ExecStart="' + cmds["ExecStart"][0], 'ExecStart="/nonexistent/kern'))
        v = self.kern_as_user([analyze, "--user", "verify", bad])
        self.assertNotEqual(v.returncode, 0, "systemd-analyze verify passed a unit it cannot run")
        # Stopped, then made again as systemd would: ExecStartPre, ExecStart.
        self.assertExit(self.kern("stop", name), 0)
        for key in ("ExecStartPre", "ExecStart"):
            r = self.kern_as_user(cmds[key])
            self.assertEqual(r.returncode, 0, "%s: %s" % (key, r.stderr))
        rec = self.inspect(name)
        self.assertEqual(rec["state"], "running")
        self.assertEqual(rec["restart_policy"], "on-failure:2")
        end = time.monotonic() + 10
        while "hello a b $c" not in self.kern("logs", name).out and time.monotonic() < end:
            time.sleep(0.05)
        self.assertEqual(self.kern("logs", name).out, "hello a b $c\n")
        r = self.kern_as_user(cmds["ExecStop"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.inspect(name)["state"], "exited")

    def test_a_foreground_box_or_an_unknown_name_is_refused(self):
        run = self.kern("generate", "systemd", "nobody-has-this")
        self.assertEqual(run.rc, 1, run.describe())
        self.assertIn("kern: error:", run.err)

    def kern_as_user(self, argv):
        """Runs argv (a unit's words, kern's path first) as this test runs (the unprivileged user),
        with its environment, as a user manager would."""
        return subprocess.run(argv, env=self.base_env(), capture_output=True, text=True, timeout=60)


if __name__ == "__main__":
    kerntest.main()
