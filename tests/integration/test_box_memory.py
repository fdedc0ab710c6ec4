"""The memory kern keeps while a box runs: the launcher and box init touch much of kern's code
while the box starts; once the box has run a moment they let those pages go (kern-box(1)), and
what they still have to do (forward a signal, reap the workload, report its status) works."""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

# kern's code is several MB; a process that dropped it keeps a few hundred kB of it mapped (the
# writable data, the pages touched since). A process that kept what it touched at start holds
# more than a megabyte in the launcher and in init alike.
FILE_RSS_LIMIT_KB = 1024
# But a kernel that maps a whole large page-cache folio on a fault (6.18 here) gives back, for
# the few functions touched after the drop, every folio they sit in: kern's and libc's, whose
# sizes depend on how each file was read or written into the page cache. Measured on one
# binary and its copy: box init at 888-1148 kB after the drop, and 1840-1872 kB in half the
# runs of a binary freshly written by the linker (from 1860-2564 kB before it). So a process
# above the limit must at least have let go of this much of what it held right after the start;
# one that never drops keeps all of it and more.
DROPPED_AT_LEAST_KB = 512


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%d/status" % (field, pid))


def children(pid):
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        return [int(x) for x in f.read().split()]


class WaitingMemoryTest(kerntest.KernTestCase):

    def running_box(self, script):
        """A box running `script`, started; returns (Spawned, init pid)."""
        sp = self.spawn_box(["/bin/sh", "-c", script])
        self.assertEqual(len(sp.wait_started()), 2, "the box did not start")
        inits = children(sp.pid)
        self.assertEqual(len(inits), 1, "kern has not one child (box init): %s" % inits)
        return sp, inits[0]

    def test_launcher_and_init_let_kerns_code_go_while_the_box_runs(self):
        sp, init = self.running_box("sleep 4; exit 7")
        # Positive control: right after the start both hold more code than the limit.
        early = {p: status_kb(p, "RssFile") for p in (sp.pid, init)}
        self.assertGreater(max(early.values()), FILE_RSS_LIMIT_KB,
                           "the control: kern held little code right after the start %s" % early)
        # The drop comes after 100 ms of quiet; a busy host may run the launcher late, so the
        # test watches for up to 3 s (kern that never drops keeps its pages all along).
        def let_go(p, kb):
            return kb < FILE_RSS_LIMIT_KB or early[p] - kb >= DROPPED_AT_LEAST_KB
        deadline = time.monotonic() + 3.0
        while True:
            time.sleep(0.1)
            late = {p: status_kb(p, "RssFile") for p in (sp.pid, init)}
            if all(let_go(p, kb) for p, kb in late.items()) or time.monotonic() > deadline:
                break
        for who, p in (("the launcher", sp.pid), ("box init", init)):
            self.assertTrue(let_go(p, late[p]), "%s keeps %d kB of kern's file pages while the box runs (%d kB "
                            "right after the start)" % (who, late[p], early[p]))
        # What runs after the drop still works: init reaps, reports 7, the launcher exits 7.
        run = sp.finish(timeout=30)
        self.assertExit(run, 7)

    def test_a_signal_after_the_drop_still_reaches_the_workload(self):
        sp, _ = self.running_box("trap 'exit 42' TERM; while :; do sleep 0.05; done")
        time.sleep(0.4)
        os.kill(sp.pid, signal.SIGTERM)
        run = sp.finish(timeout=30)
        self.assertExit(run, 42)


if __name__ == "__main__":
    kerntest.main()
