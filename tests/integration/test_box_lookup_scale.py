"""Verbs given many box names read each box's record once (kern(1) inspect, rm, stop; issue 21
item 24): `kern inspect` and `kern rm` of N names open about N record files, not N for each name
(500 names took 26 s and 18 s), and `kern stop` polls the boxes it waits for, not every record.
Counted with strace as the record files opened under the runtime dir's boxes/, not timed."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

N = 150


class LookupScaleTest(kerntest.KernTestCase):

    def setUp(self):
        super().setUp()
        self.use_private_runtime_dir()
        self.strace = shutil.which("strace")
        self.require("strace", self.strace is not None, "strace is not installed (apt-get install strace)")

    def boxes_dir(self):
        return os.path.join(self.runtime_kern_dir(), "boxes")

    def exited_boxes(self, n):
        """n exited detached boxes: one real one, and copies of its record under other names
        (what n runs of `kern box -d` leave, without running n boxes)."""
        run = self.box(["/bin/true"], flags=["-d"], name="scale-0")
        self.assertExit(run, 0)
        path = os.path.join(self.boxes_dir(), "scale-0")
        end = time.monotonic() + 15
        while True:
            with open(path) as f:
                text = f.read()
            try:
                rec = json.loads(text)
            except ValueError:
                rec = {}
            if rec.get("state") == "exited":
                break
            self.assertLess(time.monotonic(), end, "scale-0 did not exit")
            time.sleep(0.05)
        names = ["scale-%d" % i for i in range(n)]
        for name in names[1:]:
            rec["name"] = name
            with open(os.path.join(self.boxes_dir(), name), "w") as f:
                json.dump(rec, f)
        return names

    def record_opens(self, *args, timeout=60):
        """Runs kern ARGS under strace; returns (run, how many record files it opened)."""
        fd, trace = tempfile.mkstemp(prefix="strace-", dir=self.s.tmp)
        os.close(fd)
        run = self.host_run([self.strace, "-f", "-qq", "-e", "trace=open,openat", "-o", trace,
                             self.s.kern] + list(args), timeout=timeout)
        prefix = '"' + self.boxes_dir() + "/"
        with open(trace) as f:
            opens = sum(1 for line in f if prefix in line)
        os.unlink(trace)
        return run, opens

    def test_inspect_reads_each_record_once(self):
        names = self.exited_boxes(N)
        run, opens = self.record_opens("inspect", *names)
        self.assertExit(run, 0)
        self.assertEqual(sorted(b["name"] for b in json.loads(run.out)), sorted(names))
        self.assertLessEqual(opens, 3 * N, "kern inspect of %d names opened %d record files" % (N, opens))

    def test_rm_reads_each_record_once(self):
        names = self.exited_boxes(N)
        run, opens = self.record_opens("rm", *names)
        self.assertExit(run, 0)
        self.assertEqual(os.listdir(self.boxes_dir()), [])
        self.assertLessEqual(opens, 4 * N, "kern rm of %d names opened %d record files" % (N, opens))

    def test_stop_polls_only_the_boxes_it_waits_for(self):
        self.exited_boxes(N)
        live = []
        for i in range(3):
            name = "live-%d" % i
            run = self.box(["/bin/sh", "-c", "trap '' TERM; sleep 100 & wait; sleep 100"], flags=["-d"], name=name)
            self.assertExit(run, 0)
            self.addCleanup(self.kern, "rm", "-f", name, timeout=30)
            live.append(name)
        # The boxes ignore SIGTERM: stop waits its grace (1 s) for each, polling, then kills.
        run, opens = self.record_opens("stop", "--time", "1", *live)
        self.assertExit(run, 0)
        # One listing (N + 3) plus each poll of the three boxes: not N per poll (about 50 polls
        # per box, N records each, before).
        self.assertLess(opens, N + 3 + 3 * 200,
                        "kern stop of 3 boxes beside %d records opened %d record files" % (N, opens))


if __name__ == "__main__":
    kerntest.main()
