"""Block I/O caps (io.max, kern-box(1)): --device-read-bps, --device-write-bps, --device-read-iops
and --device-write-iops. Bad values and devices that are not whole disks are refused with 125
before anything starts; a box asked for a cap where no per-box cgroup can be had says io
not_enforced on the report fd. That the kernel holds and applies the cap is shown in the VM lane
(tests/vm), where cgroup v2 has the io controller and a RAM disk is throttled."""

import os
import stat
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


def block_device():
    """A block device node of this machine, or None."""
    for name in sorted(os.listdir("/dev")):
        path = os.path.join("/dev", name)
        try:
            if stat.S_ISBLK(os.stat(path).st_mode):
                return path
        except OSError:
            pass
    return None


class IoLimitsTest(kerntest.KernTestCase):

    def test_bad_values_and_devices_are_125_before_anything_starts(self):
        cases = (
            ("--device-write-bps", "/dev/null:1m", '"/dev/null" is not a block device'),
            ("--device-read-bps", "/no/such/disk:1m", 'stat "/no/such/disk"'),
            ("--device-write-bps", "sda:1m", "absolute path"),
            ("--device-write-bps", "/dev/sda", "expected DEVICE:RATE"),
            ("--device-read-iops", "/dev/sda:1.5", "whole number"),
            ("--device-write-iops", "/dev/sda:0", "above 0"),
        )
        for flag, value, why in cases:
            marker = kerntest.unique_marker("io")
            run = self.box(["/bin/sh", "-c", "sleep 30", marker], flags=[flag, value], started=True)
            self.assertKernError(run, flag, why)
            self.assertEqual(run.started, b"", value)
            self.assertNothingLeft(marker, value)

    def test_plan_shows_one_io_max_line_per_disk(self):
        dev = block_device()
        self.require("block-device", dev is not None, "this machine has no block device node in /dev")
        st = os.stat(dev)
        run = self.box(["/bin/true"], flags=["--device-write-bps", dev + ":1m", "--device-read-iops", dev + ":200",
                                             "--plan"])
        self.assertExit(run, 0)
        line = '%d:%d wbps=1048576 riops=200' % (os.major(st.st_rdev), os.minor(st.st_rdev))
        self.assertIn('io.max="%s"' % line, run.out, run.describe())

    def test_uncapped_box_reports_io_not_enforced(self):
        self.require("no-cgroup", not self.s.host.cgroup,
                     "this host has a delegated cgroup: the cap is held there (the VM lane shows it)")
        dev = block_device()
        self.require("block-device", dev is not None, "this machine has no block device node in /dev")
        run = self.box(["/bin/true"], flags=["--device-write-bps", dev + ":1m", "--allow-uncapped"],
                       report="flag", started=True)
        self.assertExit(run, 0)
        started = run.report_records()[0]
        self.assertEqual(started["enforcement"]["io"], "not_enforced", started)
        # Without the flag nothing was asked for (the positive control of the verdict).
        plain = self.box(["/bin/true"], flags=["--allow-uncapped"], report="flag")
        self.assertEqual(plain.report_records()[0]["enforcement"]["io"], "not_requested")


if __name__ == "__main__":
    kerntest.main()
