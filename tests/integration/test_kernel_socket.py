"""Started kernels: `kern kernel start NAME` returns once ready, a detached supervisor serves
run/fire/poll/int/status/ls/stop over a unix socket only this user may use, and `stop` leaves
nothing behind; run on a name that is not a kernel, or a stopped one, exits 1 clearly."""

import json
import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kernel_client  # noqa: E402
import kerntest  # noqa: E402
from kernel_testcase import KernelTestCase  # noqa: E402

kernel_client.prepare_shared_rootfs()


class StartedKernelTest(KernelTestCase):

    def start(self, name, *flags):
        run = self.kern("kernel", "start", name, "--rootfs", self.root, "--json", *flags, timeout=90)
        self.assertExit(run, 0)
        self.addCleanup(self.kern, "kernel", "stop", name)
        return json.loads(run.out)

    def sock(self, name):
        return os.path.join(self.runtime_kern_dir(), "kernels", name + ".sock")

    def test_kern_exec_joins_a_kernel_under_its_lockdown(self):
        # A warm kernel's box is started by the same session as kern box's: kern exec finds its
        # lockdown record and joins it. The process gets the answers the kernel's own cells get
        # (a new way into a box), and not the caller's (the positive control: the same read on
        # the host differs).
        name = self.s.new_name("k")
        self.start(name)
        fields = ("Seccomp:", "NoNewPrivs:", "CapEff:", "CapBnd:", "Uid:")
        read = "print(''.join(l for l in open('/proc/self/status') if l.startswith(%r)))" % (fields,)
        cell = self.kern("kernel", "run", name, read)
        self.assertExit(cell, 0)
        ex = self.kern("exec", name, "--", "python3", "-c", read)
        self.assertExit(ex, 0)
        self.assertEqual(ex.out.split(), cell.out.split(), "kern exec and the kernel's cell disagree")
        self.assertIn("Seccomp:\t2", ex.out)
        host = self.host_run(["python3", "-c", read])
        self.assertNotEqual(host.out.split(), ex.out.split(), host.describe())

    def test_lifecycle_over_the_socket(self):
        name = self.s.new_name("k")
        ready = self.start(name)
        self.assertEqual(ready["status"], "ready")
        sup = ready["pid"]
        self.assertTrue(os.path.exists("/proc/%d" % sup))
        st = os.stat(self.sock(name))
        self.assertEqual(st.st_mode & 0o077, 0, "the socket is private")
        self.assertEqual(os.stat(os.path.dirname(self.sock(name))).st_mode & 0o077, 0)

        self.assertExit(self.kern("kernel", "run", name, "x = 20"), 0)
        run = self.kern("kernel", "run", name, "x * 2 + 2")
        self.assertExit(run, 0)
        self.assertEqual(run.out, "42\n")
        run = self.kern("kernel", "run", name, "print('out'); import sys; print('err', file=sys.stderr)")
        self.assertEqual((run.out, run.err), ("out\n", "err\n"))
        run = self.kern("kernel", "run", name, "import sys; sys.exit(4)")
        self.assertExit(run, 4, "the cell's rc is the exit code")
        run = self.kern("kernel", "run", name, "--json", "x")
        res = json.loads(run.out)
        self.assertEqual(res["results"], [{"text/plain": "20"}])

        fire = self.kern("kernel", "fire", name, "import time; time.sleep(1); 'fired'")
        self.assertExit(fire, 0)
        cid = fire.out.strip()
        busy = self.kern("kernel", "run", name, "1")
        self.assertExit(busy, 1)
        self.assertIn("busy", busy.err)
        deadline = time.monotonic() + 10
        while True:
            p = json.loads(self.kern("kernel", "poll", name, cid).out)
            if p["status"] != "running" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(p["status"], "done", p)
        self.assertEqual(p["results"], [{"text/plain": "'fired'"}])

        ls = json.loads(self.kern("kernel", "ls", "--json").out)
        mine = [k for k in ls if k["name"] == name]
        self.assertEqual(len(mine), 1, ls)
        self.assertEqual(mine[0]["state"], "idle")
        self.assertIn(name, self.kern("kernel", "ls").out)
        st = json.loads(self.kern("kernel", "status", name).out)
        self.assertEqual(st["lang"], "python")

        pids = self.descendants(sup)
        self.assertExit(self.kern("kernel", "stop", name), 0)
        self.assertFalse(os.path.exists(self.sock(name)), "socket left after stop")
        time.sleep(0.2)
        left = [p for p in pids + [sup] if os.path.exists("/proc/%d" % p) and not kerntest.is_zombie(p)]
        self.assertEqual(left, [], "kernel processes left after stop")
        self.assertEqual(self.registered_boxes(), [])
        after = self.kern("kernel", "run", name, "1")
        self.assertKernelError(after, 1, "no kernel named")

    def descendants(self, pid):
        out, todo = [], [pid]
        while todo:
            p = todo.pop()
            try:
                with open("/proc/%d/task/%d/children" % (p, p)) as f:
                    kids = [int(x) for x in f.read().split()]
            except OSError:
                kids = []
            out += kids
            todo += kids
        return out

    def test_int_over_the_socket(self):
        name = self.s.new_name("k")
        self.start(name)
        cid = self.kern("kernel", "fire", name, "n = 0\nwhile True: n += 1").out.strip()
        time.sleep(0.3)
        self.assertExit(self.kern("kernel", "int", name), 0)
        time.sleep(0.3)
        p = json.loads(self.kern("kernel", "poll", name, cid).out)
        self.assertEqual((p["status"], p["rc"]), ("done", 1), p)
        self.assertEqual(self.kern("kernel", "run", name, "n > 0").out, "True\n")

    def test_run_with_timeout_flag(self):
        name = self.s.new_name("k")
        self.start(name)
        run = self.kern("kernel", "run", name, "-t", "0.5", "--json", "import time\nwhile True: time.sleep(0.05)")
        res = json.loads(run.out)
        self.assertEqual(res["status"], "timeout", res)
        self.assertExit(run, 1)

    def test_not_a_kernel_and_a_killed_supervisor(self):
        run = self.kern("kernel", "run", "no-such-kernel", "1")
        self.assertKernelError(run, 1, 'no kernel named "no-such-kernel"')
        name = self.s.new_name("k")
        ready = self.start(name)
        self.assertEqual(self.kern("kernel", "run", name, "1").out, "1\n")
        pids = self.descendants(ready["pid"])
        os.kill(ready["pid"], signal.SIGKILL)
        time.sleep(0.5)
        left = [p for p in pids if os.path.exists("/proc/%d" % p) and not kerntest.is_zombie(p)]
        self.assertEqual(left, [], "the box outlived its supervisor")
        run = self.kern("kernel", "run", name, "1")
        self.assertKernelError(run, 1, "not running")
        # the stale socket was removed: the name can be started again once the dead launcher
        # has been reaped (the registry counts a zombie launcher as alive)
        deadline = time.monotonic() + 10
        while any(os.path.exists("/proc/%d" % p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.start(name)
        self.assertEqual(self.kern("kernel", "run", name, "2").out, "2\n")

    def test_same_name_twice_is_refused(self):
        name = self.s.new_name("k")
        self.start(name)
        again = self.kern("kernel", "start", name, "--rootfs", self.root, timeout=60)
        self.assertKernelError(again, 125, "already running")
        self.assertEqual(self.kern("kernel", "run", name, "'alive'").out, "'alive'\n")

    def test_raw_protocol_on_the_socket(self):
        name = self.s.new_name("k")
        self.start(name)
        c = socket.socket(socket.AF_UNIX)
        c.connect(self.sock(name))
        f = c.makefile("rwb")
        f.write(b'{"op":"run","code":"1+1","id":7}\nnot json\n{"op":"status"}\n')
        f.flush()
        a1, a2, a3 = (json.loads(f.readline()) for _ in range(3))
        self.assertEqual((a1["id"], a1["results"]), (7, [{"text/plain": "2"}]))
        self.assertEqual(a2["status"], "error")
        self.assertEqual(a3["state"], "running", "decided on arrival, answered in order")
        c.close()

    def test_start_failure_is_reported(self):
        name = self.s.new_name("k")
        run = self.kern("kernel", "start", name, "--rootfs", self.root, "--", "/no/such/python", timeout=60)
        self.assertKernelError(run, 127, "/no/such/python")
        self.assertFalse(os.path.exists(self.sock(name)))


    def test_a_driver_ready_line_of_the_wrong_types_is_a_clear_start_failure(self):
        # {"ready":1} is valid JSON with the wrong type: the supervisor refuses it (it used to
        # die of nlohmann's exception, "died while it was starting") and leaves nothing.
        name = self.s.new_name("k")
        fake = "printf '%s' 'W{\"ready\":1}' >&4; sleep 30"
        run = self.kern("kernel", "start", name, "--rootfs", self.root, "--lang", "python", "--",
                        "sh", "-c", fake, timeout=60)
        self.assertKernelError(run, 125, '{"ready":true,...}', '"{"ready":1}"')
        self.assertNotIn("died", run.err)
        self.assertLess(run.seconds, 20, "refused at once, not at the ready timeout")
        self.assertFalse(os.path.exists(self.sock(name)))
        # The control: the same fake driver with {"ready":true} starts.
        good = fake.replace('"ready":1', '"ready":true')
        ok = self.kern("kernel", "start", name, "--rootfs", self.root, "--lang", "python", "--",
                       "sh", "-c", good, timeout=60)
        self.assertExit(ok, 0)
        self.addCleanup(self.kern, "kernel", "stop", name)

    def test_a_cell_printing_100_mb_costs_the_supervisor_about_its_output_limit(self):
        # The supervisor keeps a cell's output up to the limit (64 MiB a stream by default) and
        # writes the answer from it a piece at a time: not the output and its JSON line both
        # (41adc44: 199 MB peak for 100 MB of short lines, whose escaped line is half as long
        # again as the output).
        name = self.s.new_name("k")
        ready = self.start(name)
        def hwm_kb():
            with open("/proc/%d/status" % ready["pid"]) as f:
                return int(next(l for l in f if l.startswith("VmHWM:")).split()[1])
        before = hwm_kb()
        run = self.kern("kernel", "run", name, "import sys; sys.stdout.write('ab\\n' * 33_000_000); 1", timeout=120)
        self.assertExit(run, 0)
        self.assertEqual(len(run.out), (64 << 20) + len("1\n"), "the output is kept up to its limit")
        self.assertTrue(run.out.startswith("ab\nab\n"))
        grown_mb = (hwm_kb() - before) / 1024
        self.assertLess(grown_mb, 64 + 24, "the supervisor's peak grew by %.0f MB for a 64 MiB output limit" % grown_mb)

    def test_a_killed_kernels_log_is_removed_by_the_next_verb(self):
        name = self.s.new_name("k")
        ready = self.start(name)
        log = os.path.join(self.runtime_kern_dir(), "kernels", name + ".log")
        self.assertTrue(os.path.exists(log))
        pids = self.descendants(ready["pid"])
        os.kill(ready["pid"], signal.SIGKILL)
        deadline = time.monotonic() + 10
        while any(os.path.exists("/proc/%d" % p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertExit(self.kern("kernel", "ls"), 0)
        self.assertFalse(os.path.exists(self.sock(name)), "the dead kernel's socket is left")
        self.assertFalse(os.path.exists(log), "the dead kernel's log is left")
        # A log whose socket someone else removed goes too.
        with open(log, "w") as f:
            f.write("left by a kern that removed only the socket\n")
        self.assertExit(self.kern("kernel", "ls"), 0)
        self.assertFalse(os.path.exists(log), "an orphan log is left")
        # The box's record goes at the next ps, as any dead launcher's.
        self.assertExit(self.kern("ps"), 0)
        self.assertNotIn(name, self.registered_boxes())

if __name__ == "__main__":
    kerntest.main()
