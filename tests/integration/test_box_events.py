"""kern events as the unprivileged user: the events of detached boxes in the order they happened
(start, die with the code, restart with the count, start again; stop after kern stop's die), as
JSON lines or text, streamed from the moment kern events started (--since-start: the log's past
first)."""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


class EventsTest(DetachedCase):
    def follow(self, *flags):
        sp = subprocess.Popen([self.s.kern, "events"] + list(flags), env=self.base_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: sp.poll() is None and sp.kill())
        time.sleep(0.3)  # it has found where the log ends
        return sp

    @staticmethod
    def collect(sp):
        sp.terminate()
        out, err = sp.communicate(timeout=10)
        return out, err

    def test_restart_and_stop_in_order(self):
        sp = self.follow("--format", "json")
        flaky = self.started(["sh", "-c", "exit 2"], ["--restart", "on-failure:1"])
        self.wait_for(flaky, lambda r: r["state"] == "exited", what="on-failure:1 to give up")
        calm = self.started(["sleep", "1000"])
        self.assertExit(self.kern("stop", calm), 0)
        self.wait_for(calm, lambda r: r["state"] == "exited")
        time.sleep(0.4)
        out, err = self.collect(sp)
        events = [json.loads(l) for l in out.splitlines()]
        seq = lambda name: [(e["type"], e.get("exit_code", e.get("restart_count"))) for e in events if e["name"] == name]
        self.assertEqual(seq(flaky), [("start", None), ("die", 2), ("restart", 1), ("start", None), ("die", 2)], out)
        self.assertEqual(seq(calm), [("start", None), ("die", 143), ("stop", None)], out)
        stamps = [e["time_ns"] for e in events]
        self.assertEqual(stamps, sorted(stamps), "events out of order")

    def test_rename_is_an_event(self):
        sp = self.follow("--format", "json")
        old = self.started(["sleep", "1000"])
        self.wait_for(old, lambda r: r["state"] == "running")
        new = self.s.new_name("ev")
        self.assertExit(self.kern("rename", old, new), 0)
        self.addCleanup(self.kern, "rm", "-f", new, timeout=30)
        self.assertExit(self.kern("stop", "-t", "1", new), 0)
        self.wait_for(new, lambda r: r["state"] == "exited")
        time.sleep(0.4)
        out, _ = self.collect(sp)
        events = [json.loads(l) for l in out.splitlines()]
        mine = [(e["type"], e["name"], e.get("old_name")) for e in events if e["name"] in (old, new)]
        self.assertEqual(mine, [("start", old, None), ("rename", new, old), ("die", new, None), ("stop", new, None)], out)

    def test_text_and_the_past(self):
        name = self.started(["true"])
        self.wait_for(name, lambda r: r["state"] == "exited")
        sp = self.follow()
        time.sleep(0.3)
        out, _ = self.collect(sp)
        self.assertNotIn(name, out, "kern events streamed the past without --since-start")
        sp = self.follow("--since-start")
        out, _ = self.collect(sp)
        self.assertRegex(out, r"(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z box %s start$" % name)
        self.assertRegex(out, r"(?m)^\S+ box %s die \(exit_code=0\)$" % name)


if __name__ == "__main__":
    kerntest.main()
