"""kern stats and kern top, as the unprivileged user: a box that burns a CPU and holds 30 MB shows
both in `kern stats --no-stream --format json` (from its cgroup where it has one, else from /proc
for its processes, the source said), an idle one shows neither; kern top lists the box's
processes and no one else's; a name that is not running is refused."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


class StatsTest(DetachedCase):
    def stats(self, *names):
        run = self.kern("stats", "--no-stream", "--format", "json", *names, timeout=30)
        self.assertExit(run, 0)
        return {u["name"]: u for u in json.loads(run.out)}

    def test_a_busy_box_and_an_idle_one(self):
        busy = self.started(["sh", "-c", "x=$(head -c 30000000 /dev/zero | tr '\\0' a); while :; do :; done"])
        idle = self.started(["sleep", "1000"])
        time.sleep(1.5)  # the 30 MB are made
        got = self.stats()
        self.assertEqual(set(got), {busy, idle})
        b, i = got[busy], got[idle]
        self.assertIn(b["source"], ("cgroup", "proc"))
        self.assertGreater(b["cpu_percent"], 50, json.dumps(b))
        self.assertGreater(b["memory"], 25 * 1024 * 1024, json.dumps(b))
        self.assertLess(i["cpu_percent"], 10, json.dumps(i))
        self.assertLess(i["memory"], 10 * 1024 * 1024, json.dumps(i))
        self.assertGreaterEqual(b["pids"], 1)
        only = self.stats(idle)
        self.assertEqual(list(only), [idle])
        table = self.kern("stats", "--no-stream", busy, timeout=30)
        self.assertExit(table, 0)
        self.assertRegex(table.out, r"(?m)^NAME\s+SOURCE\s+CPU %")
        self.assertIn(busy, table.out)

    def test_top_lists_the_boxs_processes(self):
        name = self.started(["sh", "-c", "sleep 1001 & sleep 1002"])
        end = time.monotonic() + 10
        run = None
        while time.monotonic() < end:
            run = self.kern("top", name)
            if "sleep 1001" in run.out and "sleep 1002" in run.out:
                break
            time.sleep(0.05)
        self.assertExit(run, 0)
        self.assertRegex(run.out, r"(?m)^PID\s+PPID\s+TIME\s+CMD$")
        self.assertIn("sleep 1001", run.out)
        self.assertIn("sleep 1002", run.out)

    def test_ps_q_feeds_rm_f(self):
        # docker's habit: `kern rm -f $(kern ps -aq)` removes every box, running or exited.
        a = self.started(["sleep", "1000"])
        run = self.box(["true"], flags=["-d"], name=False)
        self.assertExit(run, 0)
        b = run.out.strip()
        end = time.monotonic() + 10
        while b in self.kern("ps", "-q").out.split() and time.monotonic() < end:
            time.sleep(0.05)
        self.assertEqual(self.kern("ps", "-q").out.split(), [a])
        names = self.kern("ps", "-aq").out.split()
        self.assertEqual(sorted(names), sorted([a, b]))
        self.assertExit(self.kern("rm", "-f", *names), 0)
        self.assertEqual(self.kern("ps", "-aq").out, "")
        self.assertEqual(json.loads(self.kern("ps", "--format", "json").out), [])

    def test_a_name_that_is_not_running_is_refused(self):
        run = self.kern("stats", "--no-stream", "nobody-runs-this")
        self.assertEqual(run.rc, 1, run.describe())
        self.assertIn("kern: error: no running box named", run.err)
        run = self.kern("top", "nobody-runs-this")
        self.assertEqual(run.rc, 1, run.describe())


if __name__ == "__main__":
    kerntest.main()
