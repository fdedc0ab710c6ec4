"""Detached boxes: `kern box -d` and the lifecycle verbs (logs, attach, wait, kill, stop, rm,
inspect, ps -a), as the unprivileged user. Every test runs against a registry of its own and
checks that nothing is left: processes, the registry record, the log and socket, the cgroup."""

import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from test_box_tty import TerminalRun  # noqa: E402


class DetachedTest(kerntest.KernTestCase):
    def setUp(self):
        super().setUp()
        self.use_private_runtime_dir()

    # ---- helpers

    def detach(self, cmd, flags=(), name=None, **kw):
        run = self.box(cmd, flags=["-d"] + list(flags), name=name if name is not None else False, **kw)
        return run

    def started(self, cmd, flags=(), name=None):
        run = self.detach(cmd, flags, name)
        self.assertExit(run, 0)
        got = run.out.strip()
        self.assertTrue(got, "kern box -d printed no name\n" + run.describe())
        self.addCleanup(self.force_remove, got)
        return got

    def force_remove(self, name):
        self.kern("rm", "-f", name, timeout=30)

    def records(self, all_=True):
        run = self.kern("ps", "--json", *(["-a"] if all_ else []))
        self.assertExit(run, 0)
        return {r["name"]: r for r in json.loads(run.out)}

    def wait_exited(self, name, timeout=15):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            rec = self.records().get(name)
            if rec is None or rec.get("state") == "exited":
                return rec
            time.sleep(0.05)
        self.fail("box %s still running after %ss" % (name, timeout))

    def detached_files(self, name):
        d = os.path.join(self.runtime_kern_dir(), "detached")
        try:
            return sorted(n for n in os.listdir(d) if n.startswith(name + "."))
        except FileNotFoundError:
            return []

    def assertGone(self, name, marker=None, cgroup=None):
        if marker:
            end = time.monotonic() + 2
            while kerntest.pids_with_marker(marker) and time.monotonic() < end:
                time.sleep(0.02)
            self.assertEqual(kerntest.pids_with_marker(marker), [], "processes left")
        self.assertNotIn(name, self.registered_boxes(), "record left")
        self.assertEqual(self.detached_files(name), [], "log or socket left")
        self.assertFalse(os.path.exists(os.path.join(self.runtime_kern_dir(), "kept", name)), "its upper layer left")
        if cgroup:
            self.assertFalse(os.path.exists(cgroup), "cgroup left: " + cgroup)
        with open("/proc/self/mountinfo") as f:
            self.assertNotIn(name, f.read(), "a mount naming the box is left on the host")

    # ---- tests

    def test_detached_prints_name_returns_and_logs_follow(self):
        m = kerntest.unique_marker("logs")
        t0 = time.monotonic()
        name = self.started(["sh", "-c", "echo one; echo two >&2; sleep 1; echo three", m])
        self.assertLess(time.monotonic() - t0, 1.0, "kern box -d waited for the workload")
        self.assertEqual(self.records()[name]["state"], "running")
        run = self.kern("logs", "-f", name, timeout=20)
        self.assertExit(run, 0)
        self.assertEqual(run.out, "one\nthree\n", run.describe())
        self.assertEqual(run.err, "two\n", run.describe())
        self.assertNotIn("kern:", self.kern("logs", name).out + self.kern("logs", name).err,
                         "kern's own lines went into the box's log")
        stamped = self.kern("logs", "--timestamps", name)
        self.assertRegex(stamped.out, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z one\n")
        cg = self.records()[name]["cgroup"]
        self.assertExit(self.kern("rm", name), 0)
        self.assertGone(name, m, cg)

    def test_a_follower_that_falls_behind_loses_nothing(self):
        # Megabytes while `kern logs -f` is not read: the supervisor lets the follower go, and
        # it takes what it missed from the ring; every line once, in order.
        name = self.started(["sh", "-c", "sleep 1; seq 1 300000; sleep 1"], flags=["--log-size", "16m"])
        sp = subprocess.Popen([self.s.kern, "logs", "-f", name], env=self.base_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        time.sleep(3)
        out, err = sp.communicate(timeout=60)
        self.assertEqual(sp.returncode, 0, err)
        want = "".join("%d\n" % i for i in range(1, 300001)).encode()
        self.assertEqual(len(out), len(want))
        self.assertTrue(out == want, "the followed output differs from what the box wrote")

    def test_a_follower_too_slow_for_the_ring_is_told_what_it_lost(self):
        # 20 MB through a 1 MiB ring while `kern logs -f` is not read: what fell out of the ring
        # before the follower came back is gone, and the follower says how much on stderr;
        # what it printed and what it says it lost add up to what the box wrote.
        total = 20000000 + 1
        name = self.started(["sh", "-c", "sleep 1; head -c 20000000 /dev/zero | tr '\\0' x; echo; sleep 1"],
                            flags=["--log-size", "1m"])
        sp = subprocess.Popen([self.s.kern, "logs", "-f", name], env=self.base_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        time.sleep(4)
        out, err = sp.communicate(timeout=120)
        err = err.decode(errors="replace")
        self.assertEqual(sp.returncode, 0, err)
        self.assertLess(len(out), total, "the test did not make the follower lose anything")
        lost = re.findall(r"^kern: warning: (\d+) bytes of the log were overwritten before they were read$", err, re.M)
        self.assertTrue(lost, "kern logs -f printed %d of %d bytes and said nothing\n%s" % (len(out), total, err))
        self.assertEqual(len(out) + sum(int(n) for n in lost), total, err)
        self.assertTrue(out.endswith(b"x\n"))

    def test_logs_follow_into_a_closed_pipe_ends_quietly(self):
        # `kern logs -f NAME | head`: the reader goes, kern logs ends with 0 and no message, as
        # `docker logs -f | head` does (not 141, killed by SIGPIPE).
        name = self.started(["sh", "-c", "while :; do echo line-line-line-line; done"], flags=["--log-size", "64k"])
        sp = subprocess.Popen([self.s.kern, "logs", "-f", name], env=self.base_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        # The 64k ring may have wrapped before the follower starts, so its first byte can be
        # inside a line: any 10 bytes of the box's output will do.
        self.assertIn(sp.stdout.read(10), b"line-line-line-line\n" * 2)
        sp.stdout.close()
        try:
            rc = sp.wait(timeout=30)
        finally:
            if sp.poll() is None:
                sp.kill()
        err = sp.stderr.read().decode(errors="replace")
        self.assertEqual(rc, 0, err)
        self.assertEqual(err, "")

    def test_attach_with_a_stopped_reader_says_what_happened(self):
        # kern attach's output is not read (a stopped pager): the supervisor lets it go rather
        # than stall the box. attach must not say the box went away: the box still runs.
        m = kerntest.unique_marker("slowattach")
        name = self.started(["sh", "-c", "sleep 1; head -c 30000000 /dev/zero | tr '\\0' x; sleep 1000", m])
        sp = subprocess.Popen([self.s.kern, "attach", name], env=self.base_env(), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(4)
        out, err = sp.communicate(timeout=120)
        err = err.decode(errors="replace")
        self.assertLess(len(out), 30000000, "attach was not let go: the test proves nothing")
        self.assertEqual(self.records()[name]["state"], "running")
        self.assertNotIn("went away", err)
        self.assertIn("still runs", err)
        self.assertNotEqual(sp.returncode, 0)
        self.assertExit(self.kern("rm", "-f", name, timeout=30), 0)
        self.assertGone(name, m)

    def test_generated_name_is_readable(self):
        name = self.started(["true"])
        self.assertRegex(name, r"^[a-z]+-[a-z]+$")

    def test_started_fd_gets_its_two_bytes(self):
        sp = self._popen(self._argv_box(["sleep", "30"], ["-d"], None, None), None, subprocess.DEVNULL, (), True,
                         None)
        run = sp.finish(30)
        self.assertExit(run, 0)
        self.addCleanup(self.force_remove, run.out.strip())
        self.assertEqual(len(run.started), 2, run.describe())
        self.assertEqual(run.started[0], 1)

    def test_report_fd_gets_started_then_exited_from_the_supervisor(self):
        run = self.box(["sh", "-c", "sleep 0.5; exit 2"], flags=["-d"], name=False, report="flag", timeout=30)
        self.assertExit(run, 0)
        self.addCleanup(self.force_remove, run.out.strip())
        events = [r["event"] for r in run.report_records()]
        self.assertEqual(events, ["started", "exited"], run.report)
        self.assertEqual(run.report_records()[1]["exit_code"], 2)

    def test_supervisor_keeps_no_descriptor_of_the_callers(self):
        # A pipe the caller handed down (not close-on-exec) must reach end-of-file when kern box
        # -d returns, not when the box ends.
        r, w = os.pipe()
        os.set_inheritable(w, True)
        try:
            run = self.box(["sleep", "100"], flags=["-d"], name=False, pass_fds=(w,))
        finally:
            os.close(w)
        self.assertExit(run, 0)
        self.addCleanup(self.force_remove, run.out.strip())
        import select
        ready, _, _ = select.select([r], [], [], 5)
        self.assertTrue(ready and os.read(r, 1) == b"", "the supervisor holds the caller's pipe")
        os.close(r)

    def test_wait_returns_the_exit_code(self):
        name = self.started(["sh", "-c", "sleep 0.5; exit 7"])
        run = self.kern("wait", name)
        self.assertExit(run, 7)
        self.assertEqual(run.out, "7\n")
        again = self.kern("wait", "--json", name)
        self.assertExit(again, 7)
        self.assertEqual(json.loads(again.out), {"name": name, "exit_code": 7})

    def test_timeout_applies_to_a_detached_box(self):
        name = self.started(["sleep", "100"], flags=["--timeout", "1"])
        t0 = time.monotonic()
        self.assertExit(self.kern("wait", name, timeout=20), 143)
        self.assertLess(time.monotonic() - t0, 5)

    def test_log_size_needs_detach_and_a_size(self):
        run = self.box(["true"], flags=["--log-size", "64k"])
        self.assertKernError(run, "--log-size")
        run = self.box(["true"], flags=["-d", "--log-size", "12"])
        self.assertKernError(run, "--log-size")

    def test_kill_with_a_signal(self):
        m = kerntest.unique_marker("kill")
        name = self.started(["sh", "-c", "sleep 1000", m])
        self.assertExit(self.kern("kill", "-s", "TERM", name), 0)
        run = self.kern("wait", name, timeout=20)
        self.assertExit(run, 143)
        self.assertExit(self.kern("kill", "-s", "NOPE", name), 2)

    def test_stop_kills_a_sigterm_trapping_box_after_the_grace(self):
        m = kerntest.unique_marker("stop")
        name = self.started(["sh", "-c", "trap 'echo got-term' TERM; while :; do sleep 0.1; done", m])
        time.sleep(0.3)
        t0 = time.monotonic()
        run = self.kern("stop", "-t", "1", name, timeout=30)
        self.assertExit(run, 0)
        self.assertGreater(time.monotonic() - t0, 0.9, "stop did not wait for the grace")
        rec = self.wait_exited(name)
        self.assertEqual(rec["exit_code"], 137, rec)
        self.assertIn("got-term", self.kern("logs", name).out)
        self.assertEqual(kerntest.pids_with_marker(m), [])

    def test_rm_refuses_a_running_box_and_leaves_nothing(self):
        m = kerntest.unique_marker("rm")
        name = self.started(["sh", "-c", "sleep 1000", m])
        cg = self.records()[name]["cgroup"]
        refused = self.kern("rm", name)
        self.assertExit(refused, 2)
        self.assertIn("is running", refused.err)
        self.assertTrue(kerntest.pids_with_marker(m), "the refused rm ended the box")
        self.assertExit(self.kern("rm", "-f", name), 0)
        self.assertGone(name, m, cg)

    def test_auto_remove_at_exit(self):
        name = self.started(["sh", "-c", "exit 3"], flags=["--rm"])
        end = time.monotonic() + 10
        while name in self.records() and time.monotonic() < end:
            time.sleep(0.05)
        self.assertNotIn(name, self.records())
        self.assertGone(name)

    def test_sigkill_of_the_supervisor_leaves_nothing_after_ps(self):
        m = kerntest.unique_marker("sigkill")
        name = self.started(["sh", "-c", "sleep 1000", m])
        rec = self.records()[name]
        os.kill(rec["launcher_pid"], signal.SIGKILL)
        end = time.monotonic() + 3
        while kerntest.pids_with_marker(m) and time.monotonic() < end:
            time.sleep(0.02)
        self.assertEqual(kerntest.pids_with_marker(m), [], "the box outlived its supervisor")
        self.assertExit(self.kern("ps"), 0)
        self.assertGone(name, m, rec["cgroup"])

    def test_failure_before_exec_is_125_and_leaves_nothing(self):
        missing = os.path.join(self.s.work, "no-such-dir")
        run = self.box(["true"], flags=["-d", "-v", missing + ":/x"], name="it-dfail-%d" % os.getpid(),
                       started=True)
        self.assertKernError(run, "no-such-dir")
        self.assertEqual(run.started, b"")
        self.assertGone("it-dfail-%d" % os.getpid())

    def test_failure_inside_the_box_before_exec_reaches_the_caller(self):
        # The working directory is entered by the box's workload before its execve: the error
        # crosses the channel to the supervisor and the ready pipe to the command.
        name = "it-dwd-%d" % os.getpid()
        run = self.box(["true"], flags=["-d", "-w", "/etc/passwd"], name=name, started=True)
        self.assertKernError(run, "chdir \"/etc/passwd\"")
        self.assertEqual(run.started, b"")
        self.assertGone(name)
        missing = self.box(["/no/such/command"], flags=["-d"], name=name)
        self.assertExit(missing, 127)
        self.assertIn("kern: error: ", missing.err)
        self.assertEqual(missing.out, "")
        self.assertGone(name)

    def test_docker_spelling_of_the_name(self):
        """`kern box -d --name web ...`, as `docker run -d --name web`: the name given is the name
        (a generated one was drawn as well, and the two were refused as two names)."""
        name = self.s.new_name()
        got = self.started(["sleep", "30"], flags=["--name", name])
        self.assertEqual(got, name)
        self.assertIn(name, self.records())

    def test_ps_all_and_inspect(self):
        name = self.started(["sh", "-c", "exit 5"])
        self.assertExit(self.kern("wait", name), 5)
        self.assertNotIn(name, self.records(all_=False))
        table = self.kern("ps", "-a").out
        self.assertRegex(table, re.escape(name) + r" .*exited \(5\)")
        run = self.kern("inspect", name)
        self.assertExit(run, 0)
        doc = json.loads(run.out)[0]
        self.assertEqual(doc["state"], "exited")
        self.assertEqual(doc["exit_code"], 5)
        self.assertGreater(doc["started_unix"], 0)
        self.assertGreaterEqual(doc["exited_unix"], doc["started_unix"])
        self.assertIn(doc["enforcement"]["memory"], ("enforced", "not_enforced", "undetermined", "not_requested"))
        self.assertIsInstance(doc["pids"], dict)
        self.assertEqual(doc["spec"]["argv"], ["sh", "-c", "exit 5"])
        # The exited box keeps its name until kern rm.
        again = self.box(["true"], flags=["-d"], name=name)
        self.assertKernError(again, "kern rm " + name)
        self.assertExit(self.kern("rm", name), 0)
        self.assertExit(self.kern("inspect", name), 1)

    def test_log_stays_within_its_cap_and_keeps_the_newest(self):
        script = "i=0; while [ $i -lt 5000 ]; do echo line-$i-padding-padding-padding; i=$((i+1)); done"
        name = self.started(["sh", "-c", script], flags=["--log-size", "64k"])
        self.assertExit(self.kern("wait", name, timeout=60), 0)
        path = os.path.join(self.runtime_kern_dir(), "detached", name + ".log")
        self.assertLessEqual(os.path.getsize(path), 64 * 1024 + 64)
        out = self.kern("logs", name).out
        self.assertTrue(out.endswith("line-4999-padding-padding-padding\n"), out[-200:])
        self.assertNotIn("line-0-", out)
        self.assertLess(len(out), 64 * 1024)
        tail = self.kern("logs", "--tail", "2", name).out
        self.assertEqual(tail, "line-4998-padding-padding-padding\nline-4999-padding-padding-padding\n")

    def test_attach_to_a_tty_box_and_detach(self):
        m = kerntest.unique_marker("attach")
        name = self.started(["sh", "-c", "exec sh", m], flags=["-i", "-t"])
        env = self.base_env()
        t = TerminalRun([self.s.kern, "attach", name], env)
        t.type("stty size; echo $((6*7))\n")
        self.assertTrue(t.read_until("24 80"), t.out)
        self.assertTrue(t.read_until("42"), t.out)
        t.type("\x10\x11")
        rc = t.p.wait(10)
        self.assertEqual(rc, 0, t.out)
        self.assertEqual(self.records()[name]["state"], "running", "detaching ended the box")
        t2 = TerminalRun([self.s.kern, "attach", name], env)
        t2.type("exit 4\n")
        self.assertEqual(t2.p.wait(10), 4)
        self.assertEqual(self.wait_exited(name)["exit_code"], 4)

    def test_attach_feeds_stdin_of_an_interactive_box(self):
        name = self.started(["sh", "-c", "read line; echo got-$line"], flags=["-i"])
        sp = subprocess.Popen([self.s.kern, "attach", name], env=self.base_env(), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = sp.communicate(b"hello\n", timeout=20)
        self.assertEqual(sp.returncode, 0, err)
        self.assertEqual(out, b"got-hello\n")


if __name__ == "__main__":
    kerntest.main()
