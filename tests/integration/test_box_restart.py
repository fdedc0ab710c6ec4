"""--restart for detached boxes, as the unprivileged user: a workload that fails is given a new box
of the same name after a back-off that doubles from 100 ms, on-failure:N stops after N, always
survives SIGKILL of the workload and ends at `kern stop`, what a box wrote is there for the next
one (its upper layer is kept on the host until `kern rm`), and the flags that make no sense
together are refused before anything starts."""

import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


class RestartTest(DetachedCase):
    def kept_dir(self, name):
        return os.path.join(self.runtime_kern_dir(), "kept", name)

    # Each box says how many boxes of its name wrote to / before it (what survives a restart)
    # and when it started, by the kernel's clock (/proc/uptime), then fails.
    COUNTING = "n=$(cat /starts 2>/dev/null | wc -l); echo x >> /starts; read up idle < /proc/uptime; " \
               "echo \"start $n at $up\"; exit 3"

    def test_on_failure_n_restarts_with_back_off_then_stops(self):
        name = self.started(["sh", "-c", self.COUNTING], ["--restart", "on-failure:3"])
        rec = self.wait_for(name, lambda r: r["state"] == "exited", what="on-failure:3 to give up")
        self.assertEqual(rec["restart_count"], 3, json.dumps(rec))
        self.assertEqual(rec["restart_policy"], "on-failure:3")
        self.assertEqual(rec["exit_code"], 3)
        logs = self.kern("logs", name)
        starts = re.findall(r"^start (\d+) at ([0-9.]+)$", logs.out, re.M)
        # Four boxes; each found what the ones before it wrote.
        self.assertEqual([int(n) for n, _ in starts], [0, 1, 2, 3], logs.describe())
        # The waits between them: 100, 200 and 400 ms at least (the clock is the host's uptime,
        # which every box shares).
        at = [float(t) for _, t in starts]
        gaps = [b - a for a, b in zip(at, at[1:])]
        for gap, least in zip(gaps, [0.1, 0.2, 0.4]):
            self.assertGreaterEqual(gap, least - 0.01, "back-off too short: %s" % gaps)
        self.assertLess(gaps[2], 5, "back-off far too long: %s" % gaps)
        # The kept upper is removed with the record.
        self.assertTrue(os.path.isdir(self.kept_dir(name)))
        self.assertExit(self.kern("rm", name), 0)
        self.assertFalse(os.path.exists(self.kept_dir(name)), "kern rm left the kept upper")

    def test_on_failure_leaves_a_success_alone(self):
        name = self.started(["sh", "-c", "echo once; exit 0"], ["--restart", "on-failure"])
        rec = self.wait_for(name, lambda r: r["state"] == "exited")
        self.assertEqual(rec["restart_count"], 0)
        self.assertEqual(self.kern("logs", name).out, "once\n")

    def test_always_survives_sigkill_of_the_workload_but_not_stop(self):
        name = self.started(["sh", "-c", "echo up; exec sleep 1000"], ["--restart", "always"])
        first = self.wait_for(name, lambda r: r["state"] == "running")
        # The workload: box init's child, once it is the sleep (the supervisor's command line has
        # the same words, and must not be the one killed).
        init = first["pids"]["init"]
        end = time.monotonic() + 10
        workload = None
        while workload is None and time.monotonic() < end:
            with open("/proc/%d/task/%d/children" % (init, init)) as f:
                for pid in f.read().split():
                    with open("/proc/%s/cmdline" % pid, "rb") as c:
                        if c.read().startswith(b"sleep\0"):
                            workload = int(pid)
            time.sleep(0.02)
        self.assertIsNotNone(workload, "the workload's process")
        os.kill(workload, signal.SIGKILL)  # from the host, as the OOM killer or an operator would
        again = self.wait_for(name, lambda r: r["restart_count"] == 1 and r["state"] == "running",
                              what="always to restart after SIGKILL")
        self.assertNotEqual(again["pids"]["init"], first["pids"]["init"], "the same box, not a new one")
        self.assertEqual(again["last_exit_code"], 137, "the killed box's code")
        t0 = time.monotonic()
        self.assertExit(self.kern("stop", "-t", "2", name), 0)
        rec = self.wait_for(name, lambda r: r["state"] == "exited", timeout=10, what="kern stop to end it")
        self.assertLess(time.monotonic() - t0, 8)
        time.sleep(0.5)  # a restart would come after 100 ms
        rec = self.inspect(name)
        self.assertEqual(rec["state"], "exited", "kern stop did not end the policy")
        self.assertEqual(rec["restart_count"], 1)
        self.assertEqual(self.kern("logs", name).out, "up\nup\n")
        self.assertFalse(os.path.exists("/proc/%d" % again["pids"]["init"]), "the last box's init is left")

    def test_stop_during_the_back_off_ends_it(self):
        # on-failure with a box that fails at once: by the fourth exit the wait is 800 ms, and a
        # kern stop then ends the policy without a new box.
        name = self.started(["sh", "-c", "exit 9"], ["--restart", "on-failure"])
        self.wait_for(name, lambda r: r["restart_count"] >= 3 and r["state"] == "restarting",
                      what="the box to be between restarts")
        self.assertExit(self.kern("stop", name), 0)
        rec = self.wait_for(name, lambda r: r["state"] == "exited", timeout=5)
        count = rec["restart_count"]
        time.sleep(2)
        self.assertEqual(self.inspect(name)["restart_count"], count, "a box started after kern stop")
        self.assertEqual(rec["exit_code"], 9)

    def test_ps_says_restarting_and_counts(self):
        name = self.started(["sh", "-c", "sleep 0.3; exit 4"], ["--restart", "on-failure:2"])
        self.wait_for(name, lambda r: r["state"] == "exited", what="on-failure:2 to give up")
        run = self.kern("ps", "-a")
        self.assertRegex(run.out, re.escape(name) + r".*exited \(4\)")
        self.assertEqual(self.inspect(name)["restart_count"], 2)

    def test_flags_that_do_not_go_together_are_refused(self):
        cases = [
            (["--restart", "always"], "only a detached box"),
            (["-d", "--restart", "sometimes"], "not a restart policy"),
            (["-d", "--restart", "always", "--rm"], "--restart and --rm"),
            (["-d", "--restart", "always:3"], "only on-failure takes a count"),
            (["-d", "--restart-max", "2"], "without a --restart policy"),
        ]
        for flags, said in cases:
            run = self.box(["true"], flags=flags, name=False)
            self.assertExit(run, 125, " ".join(flags))
            self.assertIn("kern: error:", run.err)
            self.assertIn(said, run.err, " ".join(flags))
            self.assertIn("hint", run.err, " ".join(flags))
        self.assertEqual(self.registered_boxes(), [], "a refused box left a record")


if __name__ == "__main__":
    kerntest.main()
