"""Labels and a box's own stop, as Docker users spell them: -l/--label in inspect and in kern ps
--filter label=...; --stop-signal is what kern stop sends first (a box that traps SIGINT ends by
itself, exit 0), --stop-timeout the grace before SIGKILL (a box that ignores the signal is killed
after it, not after the default 10 s); bad values refused before anything starts."""

import os
import sys
import signal
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


class LabelsStopTest(DetachedCase):
    def test_labels_in_inspect_and_ps_filter(self):
        a = self.started(["sleep", "1000"], ["-l", "app=web", "--label", "tier"])
        b = self.started(["sleep", "1000"], ["-l", "app=db"])
        self.assertEqual(self.inspect(a)["labels"], {"app": "web", "tier": ""})
        q = lambda *f: sorted(self.kern("ps", "-q", *f).out.split())
        self.assertEqual(q("--filter", "label=app=web"), [a])
        self.assertEqual(q("--filter", "label=app"), sorted([a, b]))
        self.assertEqual(q("--filter", "label=tier", "--filter", "label=app=db"), [])
        self.assertEqual(q("--filter", "name=" + b[2:]), [b])
        run = self.kern("ps", "--filter", "status=running")
        self.assertEqual(run.rc, 2, run.describe())
        self.assertIn("label= and name=", run.err)

    def test_stop_signal_is_sent_first(self):
        name = self.started(["sh", "-c", "trap 'echo got-INT; exit 0' INT; while :; do sleep 0.1; done"],
                            ["--stop-signal", "SIGINT"])
        self.assertEqual(self.inspect(name)["stop_signal"], "SIGINT")
        time.sleep(0.5)
        t0 = time.monotonic()
        self.assertExit(self.kern("stop", name), 0)
        self.assertLess(time.monotonic() - t0, 5)
        rec = self.wait_for(name, lambda r: r["state"] == "exited", timeout=10)
        self.assertEqual(rec["exit_code"], 0, "the box's INT handler ended it")
        self.assertIn("got-INT", self.kern("logs", name).out)

    def test_every_catchable_stop_signal_reaches_the_workload(self):
        # SIGPWR and systemd's SIGRTMIN+3 go through the launcher (foreground) or the supervisor
        # (detached), then box init, to the workload, which traps them by number. The
        # discriminant: the same box without the trap is ended by the signal (128+N), so the
        # exit 7 is the trap's answer, not a kill.
        for spelled, num in (("SIGPWR", signal.SIGPWR), ("SIGRTMIN+3", signal.SIGRTMIN + 3)):
            trap = "trap 'echo got-%d; exit 7' %d; while :; do sleep 0.1; done" % (num, num)
            for script, want in ((trap, 7), ("while :; do sleep 0.1; done", 128 + num)):
                name = self.started(["sh", "-c", script], ["--stop-signal", spelled])
                self.assertEqual(self.inspect(name)["stop_signal"], spelled)
                time.sleep(0.4)
                self.assertExit(self.kern("stop", name), 0)
                rec = self.wait_for(name, lambda r: r["state"] == "exited", timeout=10)
                self.assertEqual(rec["exit_code"], want, "detached, %s, %s" % (spelled, script))
                fg = self.spawn_box(["sh", "-c", script], flags=["--stop-signal", spelled])
                self.assertEqual(len(fg.wait_started()), 2, "the foreground box did not start")
                time.sleep(0.4)
                self.assertExit(self.kern("stop", fg.name), 0)
                run = fg.finish(timeout=15)
                self.assertExit(run, want, "foreground, %s, %s" % (spelled, script))
                if want == 7:
                    self.assertIn("got-%d" % num, run.out)

    def test_stop_timeout_is_the_grace(self):
        name = self.started(["sh", "-c", "trap '' TERM; sleep 1000"], ["--stop-timeout", "1"])
        self.assertEqual(self.inspect(name)["stop_timeout"], 1)
        time.sleep(0.3)
        t0 = time.monotonic()
        run = self.kern("stop", name, timeout=30)
        took = time.monotonic() - t0
        self.assertExit(run, 0)
        self.assertIn("ignored SIGTERM for 1 s", run.err)
        self.assertGreaterEqual(took, 0.9)
        self.assertLess(took, 6, "kern stop waited longer than --stop-timeout 1")
        self.assertEqual(self.wait_for(name, lambda r: r["state"] == "exited")["exit_code"], 137)

    def test_bad_values_are_refused(self):
        for flags, said in ((["--stop-signal", "SIGNOPE"], "is not a signal"), (["-l", "=v"], "the key is empty"),
                            (["--stop-timeout", "99999"], "at most 3600")):
            run = self.box(["true"], flags=["-d"] + flags, name=False)
            self.assertExit(run, 125, " ".join(flags))
            self.assertIn(said, run.err)
        self.assertEqual(self.registered_boxes(), [])


if __name__ == "__main__":
    kerntest.main()
