"""`kern doctor` tries what a box does: its overlay verdict agrees with the root a real box gets
on this host (a box on an overlay root while doctor says overlay is MISSING was the bug)."""

import os
import shutil
import subprocess
import sys
import tempfile

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


    def in_fresh_machine(self, *argv):
        """argv with /dev/net/tun as a host without udev leaves it (0600, the host root's: a
        file made so as root, bound over the device in a mount namespace of the test's own)."""
        info = kerntest.root_part()
        self.require("root", info is not None, "the 0600 root-owned device stand-in is made as root: run this "
                     "test as root (it drops to the test user itself)")
        self.require("unshare", shutil.which("unshare") is not None, "unshare(1) is not installed")
        script = 'mount --bind "$0" /dev/net/tun && exec "$@"'
        return subprocess.run(["unshare", "-rm", "sh", "-c", script, info["tun"]] + list(argv),
                              capture_output=True, text=True, timeout=60, env=self.base_env())

    def test_each_network_mode_is_checked_and_an_unusable_tun_is_named_with_its_fix(self):
        run, lines = self.doctor_lines()
        for name in ("--net none (the default, a network namespace with loopback only)", "--net host",
                     "--egress-allow (kern's own relay and proxy)", "--net private (pasta)",
                     "--net private (/dev/net/tun)"):
            self.assertIn(name, lines, run.describe())
        # On a machine without udev pasta cannot open the device; doctor says so and how to fix
        # it, and a --net private box refuses to start with the same words.
        fresh = self.in_fresh_machine(self.s.kern, "doctor")
        self.assertIn(fresh.returncode, (0, 1), fresh.stderr)
        self.assertRegex(fresh.stdout, r"limited --net private \(/dev/net/tun\): open \"/dev/net/tun\": "
                         r"permission denied \(EACCES\)\n        fix: as root: chmod 0666 /dev/net/tun")
        box = self.in_fresh_machine(self.s.kern, "box", "--allow-uncapped", "--rootfs", self.s.rootfs, "--net",
                                    "private", "--", "true")
        self.assertEqual(box.returncode, 125, box.stderr)
        self.assertIn("kern: error: --net private needs /dev/net/tun: open \"/dev/net/tun\": permission denied",
                      box.stderr)
        self.assertIn("kern: hint: as root: chmod 0666 /dev/net/tun", box.stderr)
        # The discriminant: the same namespace without the stand-in opens the host's device,
        # which setup.sh made usable.
        self.require("tun", lines["--net private (/dev/net/tun)"][0] == "ok",
                     "this host's /dev/net/tun is not usable either: " + lines["--net private (/dev/net/tun)"][1])
        plain = subprocess.run(["unshare", "-rm", self.s.kern, "doctor"], capture_output=True, text=True,
                               timeout=60, env=self.base_env())
        self.assertIn("ok      --net private (/dev/net/tun): ok", plain.stdout, plain.stderr)


def make_tun_stand_in(user):
    """As root: a 0600 file of root's, to stand for /dev/net/tun as a host without udev has it."""
    top = tempfile.mkdtemp(prefix="kern-itest-tun-", dir="/var/tmp")
    os.chmod(top, 0o755)
    path = os.path.join(top, "tun")
    with open(path, "w"):
        pass
    os.chmod(path, 0o600)
    return {"tun": path}, lambda: shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    kerntest.main(make_tun_stand_in)
