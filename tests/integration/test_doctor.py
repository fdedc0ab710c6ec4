"""`kern doctor` tries what a box does: its overlay verdict agrees with the root a real box gets
on this host (a box on an overlay root while doctor says overlay is MISSING was the bug)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


def root_fstype(mountinfo):
    """The file system type of "/" in a mountinfo text (the last line for "/" wins)."""
    fstype = None
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) >= 5 and fields[4] == "/" and right:
            fstype = right.split()[0]
    return fstype


class DoctorTest(kerntest.KernTestCase):

    def doctor_lines(self):
        run = self.kern("doctor", timeout=60)
        self.assertIn(run.rc, (0, 1), run.describe())
        lines = {}
        for line in run.out.splitlines():
            head, _, rest = line.partition(": ")
            verdict, _, name = head.partition(" ")
            if verdict in ("ok", "MISSING", "limited"):
                lines[name.strip()] = (verdict, rest)
        return run, lines

    def test_overlay_verdict_agrees_with_a_real_box(self):
        box = self.box(["/bin/cat", "/proc/self/mountinfo"])
        self.assertExit(box, 0)
        fstype = root_fstype(box.out)
        self.assertIsNotNone(fstype, "no root in the box's mountinfo:\n" + box.out)
        run, lines = self.doctor_lines()
        self.assertIn("overlay in a user namespace", lines, run.describe())
        verdict, detail = lines["overlay in a user namespace"]
        self.assertEqual(verdict == "ok", fstype == "overlay",
                         "doctor says %s (%s) but a box's root here is %s\n%s"
                         % (verdict, detail, fstype, run.describe()))
        # A box ran: nothing doctor requires can be missing.
        self.assertNotIn("boxes will NOT run", run.out, run.describe())
        self.assertExit(run, 0)


if __name__ == "__main__":
    kerntest.main()
