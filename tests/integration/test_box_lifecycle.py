"""A box's life: it dies with its launcher (even on SIGKILL), --timeout (SIGTERM, SIGKILL 2 s
later, also against a workload that ignores SIGTERM), an output flood into a closed pipe does
not hang kern, and a live name cannot be taken twice."""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

LOOP = "while :; do sleep 1; done"


def pid_ns(pid):
    try:
        return os.readlink("/proc/%d/ns/pid" % pid)
    except OSError:
        return None


def pids_in_ns(ns):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and pid_ns(int(entry)) == ns and not kerntest.is_zombie(int(entry)):
            out.append(int(entry))
    return out


class DiesWithLauncherTest(kerntest.KernTestCase):

    def test_box_gone_within_a_second_after_sigkill_to_kern(self):
        self.start_and_sigkill()

    def start_and_sigkill(self):
        """Starts a box, checks it lives, SIGKILLs kern, checks the box is gone within 1 s;
        returns the box's name. Uses a registry of its own (the entry is left stale)."""
        self.use_private_runtime_dir()
        marker = kerntest.unique_marker("sigkill")
        sp = self.spawn_box(["/bin/sh", "-c", LOOP, marker])
        self.assertEqual(len(sp.wait_started()), 2, "the box did not start")
        box_pids = []
        deadline = time.monotonic() + 5
        while not box_pids and time.monotonic() < deadline:
            box_pids = [p for p in kerntest.pids_with_marker(marker) if p != sp.pid]
            time.sleep(0.02)
        self.assertTrue(box_pids, "no box process carries the marker (the test cannot see the box)")
        namespaces = {pid_ns(p) for p in box_pids} - {None, pid_ns(os.getpid())}
        self.assertTrue(namespaces, "the box's processes are not in a pid namespace of their own")
        # Positive control: the box is alive and stays so while kern lives.
        time.sleep(0.3)
        self.assertTrue(all(os.path.exists("/proc/%d" % p) for p in box_pids), "box died on its own")

        os.kill(sp.pid, signal.SIGKILL)
        t0 = time.monotonic()
        sp.popen.wait()
        left = []
        while time.monotonic() - t0 < 1.0:
            left = kerntest.pids_with_marker(marker) + [p for ns in namespaces for p in pids_in_ns(ns)]
            if not left:
                break
            time.sleep(0.01)
        self.assertEqual(left, [], "box processes still alive 1 s after SIGKILL to kern")
        return sp.name

    def test_kern_ps_reaps_the_entry_of_a_killed_box_and_a_box_end_reads_none(self):
        # kern-box(1): the entry a SIGKILLed kern leaves goes at the next kern ps (or kern stop,
        # kern gc, or a box of that name); the end of another box reads no other box's entry, so
        # that it costs the same however many boxes run (issue 13: no O(n) work per box).
        killed = self.start_and_sigkill()
        self.assertEqual(self.registered_boxes(), [killed], "the killed box's registry entry")
        nxt = self.box(["/bin/true"])
        self.assertExit(nxt, 0)
        self.assertEqual(self.registered_boxes(), [killed],
                         "BUG (launcher): the end of another box looked at the stale entry of %s" % killed)
        ps = self.kern("ps")
        self.assertExit(ps, 0)
        self.assertNotIn(killed, ps.out, "kern ps listed a box whose kern was killed")
        self.assertEqual(self.registered_boxes(), [],
                         "BUG: kern ps did not reap the stale entry of %s, killed with SIGKILL" % killed)

    def test_kern_gc_reaps_the_entry_of_a_killed_box(self):
        killed = self.start_and_sigkill()
        self.assertEqual(self.registered_boxes(), [killed], "the killed box's registry entry")
        self.assertExit(self.kern("gc"), 0)
        self.assertEqual(self.registered_boxes(), [],
                         "BUG: kern gc did not reap the stale entry of %s, killed with SIGKILL" % killed)

    def test_name_of_a_killed_box_can_be_reused(self):
        killed = self.start_and_sigkill()
        again = self.box(["/bin/true"], name=killed)
        self.assertExit(again, 0)
        self.assertEqual(self.registered_boxes(), [])

    def test_sigterm_to_kern_ends_the_box(self):
        marker = kerntest.unique_marker("sigterm")
        sp = self.spawn_box(["/bin/sh", "-c", LOOP, marker])
        self.assertEqual(len(sp.wait_started()), 2)
        os.kill(sp.pid, signal.SIGTERM)
        run = sp.finish(timeout=10)
        self.assertExit(run, 143, "SIGTERM forwarded to the workload")
        self.assertNothingLeft(marker)


class TimeoutTest(kerntest.KernTestCase):

    def test_timeout_kills_a_sigterm_trapping_loop(self):
        marker = kerntest.unique_marker("trap")
        script = 'trap "" TERM; while :; do sleep 0.2; done'
        run = self.box(["/bin/sh", "-c", script, marker], flags=["--timeout", "1"], timeout=20, report="flag")
        self.assertExit(run, 137, "SIGKILL 2 s after the SIGTERM that was ignored")
        self.assertGreaterEqual(run.seconds, 2.7, "SIGKILL came before the 2 s grace\n" + run.describe())
        self.assertLessEqual(run.seconds, 4.0, "not killed within ~3.5 s\n" + run.describe())
        exited = [r for r in run.report_records() if r.get("event") == "exited"]
        self.assertEqual(len(exited), 1, run.report)
        self.assertIs(exited[0].get("timed_out"), True, exited[0])
        self.assertNothingLeft(marker)

    def test_timeout_terminates_a_plain_sleep(self):
        run = self.box(["/bin/sleep", "30"], flags=["--timeout", "1"], timeout=20)
        self.assertExit(run, 143, "the plain sleep dies of the SIGTERM")
        self.assertGreaterEqual(run.seconds, 0.9)
        self.assertLess(run.seconds, 2.5)

    def test_positive_control_no_timeout_fires_early(self):
        run = self.box(["/bin/sh", "-c", "sleep 1.5; exit 7"], flags=["--timeout", "5"], timeout=20)
        self.assertExit(run, 7)
        run = self.box(["/bin/sh", "-c", "sleep 1.2; exit 8"], flags=["--timeout", "0"], timeout=20)
        self.assertExit(run, 8)


class FloodTest(kerntest.KernTestCase):

    def flood_into_closed_pipe(self, cmd):
        argv = self._argv_box(cmd, (), self.s.new_name(), None)
        env = self.base_env()
        t0 = time.monotonic()
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd="/", start_new_session=True)
        first = p.stdout.read(65536)
        p.stdout.close()  # the reader goes away mid-flood
        try:
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            self.fail("kern hangs on a flood into a closed pipe: %s" % argv)
        run = kerntest.Run(argv, p.returncode, b"", err, time.monotonic() - t0)
        self.assertTrue(first, "no output at all\n" + run.describe())
        self.assertLess(run.seconds, 20, run.describe())
        return run

    def test_200mb_flood_busybox_head(self):
        run = self.flood_into_closed_pipe(["head", "-c", "200000000", "/dev/zero"])
        self.assertExit(run, 141, "head dies of SIGPIPE (default disposition in the box)")

    def test_200mb_flood_probe_ignoring_sigpipe(self):
        self.need_probe()
        run = self.flood_into_closed_pipe(["/bin/kern-probe", "flood", "200m"])
        self.assertExit(run, 1, "the probe sees EPIPE and exits 1")
        self.assertIn("flood: EPIPE", run.err)

    def test_positive_control_full_flood_is_delivered(self):
        run = self.box(["head", "-c", "20000000", "/dev/zero"], timeout=60)
        self.assertExit(run, 0)
        self.assertEqual(len(run.out_b), 20000000)


class NameTest(kerntest.KernTestCase):

    def test_same_name_twice_at_once(self):
        name = self.s.new_name("dup")
        marker = kerntest.unique_marker("dup")
        first = self.spawn_box(["/bin/sh", "-c", LOOP, marker], name=name)
        self.assertEqual(len(first.wait_started()), 2, "the first box did not start")
        self.assertIn(name, self.registered_boxes())
        second = self.box(["/bin/true"], name=name, started=True)
        self.assertKernError(second, name)
        self.assertEqual(second.started, b"")
        # The refusal did not disturb the first box.
        self.assertIsNone(first.popen.poll(), "the first box died")
        first.kill(signal.SIGTERM)
        done = first.finish(timeout=10)
        self.assertExit(done, 143)
        self.assertNothingLeft(marker)
        # Positive control: the name is free again once the first box has ended.
        third = self.box(["/bin/true"], name=name)
        self.assertExit(third, 0)

    def test_default_name_and_hostname(self):
        run = self.box(["/bin/hostname"], name=False)
        self.assertExit(run, 0)
        self.assertRegex(run.out.strip(), r"^box-\d+$")


if __name__ == "__main__":
    kerntest.main()
