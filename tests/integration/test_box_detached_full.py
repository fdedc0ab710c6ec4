"""Detached boxes whose runtime dir is on a small, or full, file system (a size-limited tmpfs
made for this test process, tests/support/small_fs.py): the start fails with ENOSPC and the
path, exit 125, and leaves nothing; a box that starts never meets a SIGBUS later."""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
import small_fs  # noqa: E402
import test_box_detached  # noqa: E402

KERNTEST_SMALL_TMPFS = "size=3m"


class FullRuntimeDirTest(kerntest.KernTestCase):
    # test_box_detached's helpers (its tests are not run again here).
    started = test_box_detached.DetachedTest.started
    detach = test_box_detached.DetachedTest.detach
    force_remove = test_box_detached.DetachedTest.force_remove
    detached_files = test_box_detached.DetachedTest.detached_files
    assertGone = test_box_detached.DetachedTest.assertGone

    def setUp(self):
        super().setUp()
        small = os.environ.get(small_fs.ENV)
        self.require("small-fs", bool(small) and os.access(small or "/", os.W_OK),
                     "no small tmpfs for the runtime dir (start the test as root: it mounts one before "
                     "dropping to the test user)")
        self.runtime_dir = tempfile.mkdtemp(prefix="run-", dir=small)
        os.chmod(self.runtime_dir, 0o700)
        self.addCleanup(shutil.rmtree, self.runtime_dir, True)

    def lockdown_leftovers(self):
        d = os.path.join(self.runtime_kern_dir(), "lockdown")
        try:
            return sorted(n for n in os.listdir(d) if ".tmp-" in n)
        except FileNotFoundError:
            return []

    def assertEnospc(self, run, name):
        self.assertKernError(run)
        self.assertTrue("No space left on device" in run.err or "ENOSPC" in run.err,
                        "the error does not say ENOSPC\n" + run.describe())
        self.assertIn(self.runtime_dir, run.err, "the error names no path in the runtime dir\n" + run.describe())
        self.assertNotIn("supervisor", run.err, run.describe())
        self.assertGone(name)
        self.assertEqual(self.lockdown_leftovers(), [], "lockdown temporaries left")

    def test_a_log_ring_the_file_system_cannot_hold_fails_the_start(self):
        # An 8 MiB ring on a 3 MiB tmpfs: a sparse ring would start and die of SIGBUS once the
        # box's output reaches the missing blocks (silently: no code, no log).
        name = "it-dring-%d" % os.getpid()
        run = self.box(["sh", "-c", "head -c 6000000 /dev/zero | tr '\\0' x; echo; echo done"],
                       flags=["-d", "--log-size", "8m"], name=name)
        if run.rc == 0:
            self.addCleanup(self.force_remove, name)
            waited = self.kern("wait", name, timeout=60)
            self.fail("an 8m ring on a 3m runtime dir started (the box then ended with %s)\n%s"
                      % (waited.rc, run.describe() + waited.describe()))
        self.assertEnospc(run, name)
        self.assertIn("detached/%s.log" % name, run.err)
        # The control: a ring that fits starts on the same file system and keeps the output.
        ok = self.started(["sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x; echo; echo done"],
                          flags=["--log-size", "64k"])
        self.assertExit(self.kern("wait", ok, timeout=60), 0)
        logs = self.kern("logs", ok)
        self.assertTrue(logs.out.endswith("x\ndone\n"), logs.describe()[-600:])

    def test_a_full_runtime_dir_says_enospc_and_leaves_nothing(self):
        # One box first, so that every directory of the runtime dir exists; then the file
        # system is filled to its last byte.
        first = self.started(["true"], flags=["--log-size", "4k"])
        self.assertExit(self.kern("wait", first, timeout=30), 0)
        self.assertExit(self.kern("rm", first), 0)
        filler = os.path.join(self.runtime_dir, "filler")
        small_fs.fill(filler)
        self.addCleanup(os.unlink, filler)
        name = "it-dfull-%d" % os.getpid()
        run = self.box(["true"], flags=["-d", "--log-size", "4k"], name=name)
        if run.rc == 0:
            self.addCleanup(self.force_remove, name)
        self.assertEnospc(run, name)


if __name__ == "__main__":
    kerntest.main()
