"""kern rename, as the unprivileged user: a running detached box takes another name (kern ps,
inspect, logs, exec and stop find it by the new one, none by the old; a kept upper follows it
through a restart; an event says so), an exited one too; a name in use, a bad name, a foreground
box and an unknown box are refused with the reason, nothing changed."""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


class RenameTest(DetachedCase):

    def named(self, name):
        self.addCleanup(self.kern, "rm", "-f", name, timeout=30)
        return name

    def test_a_running_box_takes_the_new_name_everywhere(self):
        old = self.started(["sh", "-c", "echo written > /data; while :; do echo tick; sleep 0.1; done"],
                           ["--restart", "always"])
        new = self.named(self.s.new_name("renamed"))
        self.wait_for(old, lambda r: r["state"] == "running")
        self.assertExit(self.kern("rename", old, new), 0)
        # The old name is gone from every verb, the new one answers.
        self.assertKernErrorLike(self.kern("inspect", old), old)
        ps = self.kern("ps", "-a", "--format", "{{.Names}}")
        self.assertExit(ps, 0)
        self.assertIn(new, ps.out.split(), ps.describe())
        self.assertNotIn(old, ps.out.split(), ps.describe())
        rec = self.inspect(new)
        self.assertEqual(rec["name"], new)
        self.assertEqual(rec["state"], "running")
        ex = self.kern("exec", new, "--", "cat", "/data")
        self.assertExit(ex, 0)
        self.assertEqual(ex.out, "written\n")
        self.assertNotEqual(self.kern("exec", old, "--", "true").rc, 0)
        self.assertIn("tick", self.kern("logs", new).out)
        # The restart policy's next box is made under the new name, with what the box wrote.
        before = rec["restart_count"]
        self.assertExit(self.kern("kill", new), 0)
        rec = self.wait_for(new, lambda r: r["restart_count"] > before and r["state"] == "running", timeout=30)
        ex = self.kern("exec", new, "--", "cat", "/data")
        self.assertExit(ex, 0)
        self.assertEqual(ex.out, "written\n")
        # kern stop by the new name ends it.
        self.assertExit(self.kern("stop", "-t", "1", new, timeout=30), 0)
        self.wait_for(new, lambda r: r["state"] == "exited")
        self.assertFalse(os.path.exists(os.path.join(self.runtime_kern_dir(), "detached", old + ".sock")))
        self.assertFalse(os.path.exists(os.path.join(self.runtime_kern_dir(), "detached", old + ".log")))

    def test_an_exited_box_is_renamed_with_its_log(self):
        old = self.started(["sh", "-c", "echo last-words"])
        self.wait_for(old, lambda r: r["state"] == "exited")
        new = self.named(self.s.new_name("was"))
        self.assertExit(self.kern("rename", old, new), 0)
        self.assertEqual(self.inspect(new)["state"], "exited")
        self.assertIn("last-words", self.kern("logs", new).out)
        self.assertNotEqual(self.kern("inspect", old).rc, 0)

    def test_refusals_change_nothing(self):
        a = self.started(["sleep", "60"])
        b = self.started(["sleep", "60"])
        run = self.kern("rename", a, b)
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn(b, run.err)
        self.assertEqual(self.inspect(a)["name"], a)
        self.assertEqual(self.inspect(b)["name"], b)
        self.assertExit(self.kern("exec", a, "--", "true"), 0)
        run = self.kern("rename", a, "bad/name")
        self.assertEqual(run.rc, 2, run.describe())
        self.assertIn("invalid box name", run.err)
        run = self.kern("rename", "no-such-box-" + str(os.getpid()), "x")
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn("kern: error: no box named", run.err)
        # A foreground box: its kern process holds the name.
        fg = self.spawn_box(["sleep", "30"])
        self.assertEqual(len(fg.wait_started()), 2)
        run = self.kern("rename", fg.name, self.s.new_name())
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn("runs in the foreground", run.err)
        fg.kill()
        fg.finish(30)

    def assertKernErrorLike(self, run, needle):
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn("kern: error:", run.err)
        self.assertIn(needle, run.err)


if __name__ == "__main__":
    kerntest.main()
