"""A test case for detached boxes (kern box -d) with a registry of its own: start one and have it
removed at the end, read its `kern inspect` object, wait until it reaches a state."""

import json
import time

import kerntest


class DetachedCase(kerntest.KernTestCase):
    def setUp(self):
        super().setUp()
        self.use_private_runtime_dir()

    def started(self, cmd, flags=(), rootfs=None):
        """`kern box -d FLAGS -- CMD` with a generated name; the name (removed with rm -f at the end)."""
        run = self.box(cmd, flags=["-d"] + list(flags), name=False, rootfs=rootfs)
        self.assertExit(run, 0)
        name = run.out.strip()
        self.assertTrue(name, run.describe())
        self.addCleanup(self.kern, "rm", "-f", name, timeout=30)
        return name

    def inspect(self, name):
        run = self.kern("inspect", name)
        self.assertExit(run, 0)
        j = json.loads(run.out)
        return j[0] if isinstance(j, list) else j

    def wait_for(self, name, pred, timeout=30, what="the box"):
        """The inspect object once pred(it) holds; fails with the last one after `timeout` s."""
        end = time.monotonic() + timeout
        last = None
        while time.monotonic() < end:
            last = self.inspect(name)
            if pred(last):
                return last
            time.sleep(0.05)
        self.fail("%s: not reached within %ss; last: %s" % (what, timeout, json.dumps(last)))
