"""Telling the caller (kern-box(1)): the two KERN_STARTED_FD bytes read the way an SDK reads
them (Python's subprocess with pass_fds), end-of-file for a box that never started, and the
--report-fd / KERN_REPORT_FD JSON lines."""

import json
import os
import select
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


def read_to_eof(fd, timeout=30):
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], deadline - time.monotonic())
        if not r:
            break
        chunk = os.read(fd, 64)
        if not chunk:
            break
        data += chunk
    return data


class SdkStartedFdTest(kerntest.KernTestCase):

    def sdk_run(self, cmd, flags=(), extra_env=None, rootfs=None):
        """What kern-sandbox's Python binding does: a pipe, the write end passed with pass_fds
        and named in KERN_STARTED_FD, the two bytes read back, then the exit code."""
        read_end, write_end = os.pipe()
        env = self.base_env()
        env.update(extra_env or {})
        env["KERN_STARTED_FD"] = str(write_end)
        argv = [self.s.kern, "box", self.s.new_name("sdk"), "--rootfs", rootfs or self.s.rootfs] + list(flags)
        argv += ["--"] + list(cmd)
        proc = subprocess.Popen(argv, env=env, pass_fds=(write_end,), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/")
        os.close(write_end)
        try:
            started = read_to_eof(read_end)
        finally:
            os.close(read_end)
        out, err = proc.communicate(timeout=60)
        return kerntest.Run(argv, proc.returncode, out, err, 0.0, started=started)

    def expected_memory_byte(self, memory_requested, no_scope):
        """kern-box(1) byte 1, from what the host probe found: a box gets a cgroup only where a
        delegated subtree exists and KERN_NO_SCOPE is unset; without one, a requested cap is not
        in force (2) and an unrequested one is undetermined (0)."""
        if not no_scope and self.s.host.cgroup:
            return 1
        return 2 if memory_requested else 0

    def check(self, flags, env, memory_requested, no_scope):
        run = self.sdk_run(["/bin/true"], flags=flags, extra_env=env)
        self.assertExit(run, 0)
        want = bytes([1, self.expected_memory_byte(memory_requested, no_scope)])
        self.assertEqual(run.started, want, "host cgroup: %s\n%s" % (self.s.host.cgroup.detail, run.describe()))

    def test_no_scope_no_memory_flag_reads_01_00(self):
        self.check([], {"KERN_NO_SCOPE": "1"}, memory_requested=False, no_scope=True)

    def test_no_scope_value_0_counts_as_set(self):
        self.check(["-m", "64m"], {"KERN_NO_SCOPE": "0"}, memory_requested=True, no_scope=True)

    def test_no_scope_with_memory_cap_reads_01_02(self):
        self.check(["-m", "64m"], {"KERN_NO_SCOPE": "1"}, memory_requested=True, no_scope=True)

    def test_default_without_memory_flag(self):
        self.check(["--allow-uncapped"], {}, memory_requested=False, no_scope=False)

    def test_default_with_memory_flag(self):
        self.check(["--allow-uncapped", "-m", "64m"], {}, memory_requested=True, no_scope=False)

    def test_failed_start_gives_eof(self):
        run = self.sdk_run(["/bin/true"], rootfs=os.path.join(self.s.work, "missing-rootfs"))
        self.assertKernError(run)
        self.assertEqual(run.started, b"", "bytes on the started fd of a box that never started")

    def test_failed_exec_gives_eof(self):
        run = self.sdk_run(["/bin/no-such-command"])
        self.assertExit(run, 127)
        self.assertEqual(run.started, b"")

    def test_bytes_arrive_while_the_workload_runs(self):
        sp = self.spawn_box(["/bin/sleep", "3"], env={"KERN_NO_SCOPE": "1"})
        t0 = time.monotonic()
        got = sp.wait_started(timeout=2.5)
        self.assertEqual(got, b"\x01\x00", "two bytes expected before the workload ends")
        self.assertLess(time.monotonic() - t0, 2.5)
        self.assertIsNone(sp.popen.poll(), "kern already exited")
        run = sp.finish()
        self.assertExit(run, 0)
        self.assertEqual(run.started, b"\x01\x00", "more than two bytes on the started fd")

    def test_invalid_started_fd_values_are_ignored(self):
        for value in ("2", "1", "0", "999", "-1", "abc"):
            env = self.base_env()
            env["KERN_STARTED_FD"] = value
            run = self.box(["/bin/sh", "-c", "echo ran"], env=env)
            self.assertExit(run, 0, "KERN_STARTED_FD=%s" % value)
            self.assertEqual(run.out, "ran\n", "KERN_STARTED_FD=%s must not write into stdout" % value)


class StderrLinesTest(kerntest.KernTestCase):
    """The uncapped warning (kern-box(1)) and what silences it (KERN_QUIET, --allow-uncapped)."""

    def warnings(self, run):
        return [l for l in run.err.splitlines() if l.startswith("kern: warning: ")]

    def test_uncapped_warning_and_silencers(self):
        self.require("no-cgroup", not self.s.host.cgroup,
                     "this host has a delegated cgroup, so boxes are capped and nothing warns")
        loud = self.box(["/bin/true"])
        self.assertExit(loud, 0)
        self.assertEqual(len(self.warnings(loud)), 1, "one warning for an uncapped box\n" + loud.describe())
        for flags, env in (([], {"KERN_QUIET": "1"}), ([], {"KERN_QUIET": "0"}), (["--allow-uncapped"], {}),
                           ([], {"KERN_ALLOW_UNCAPPED": "1"}), (["-q"], {"KERN_QUIET": "yes"})):
            run = self.box(["/bin/true"], flags=flags, env=env)
            self.assertExit(run, 0)
            self.assertEqual(run.err, "", "flags %s env %s\n%s" % (flags, env, run.describe()))

    def test_require_limits_without_cgroup_is_125(self):
        self.require("no-cgroup", not self.s.host.cgroup, "this host has a delegated cgroup")
        marker = kerntest.unique_marker("require")
        run = self.box(["/bin/sh", "-c", "sleep 30", marker], flags=["--require-limits"], started=True)
        self.assertKernError(run)
        self.assertEqual(run.started, b"")
        self.assertNothingLeft(marker)
        both = self.box(["/bin/true"], flags=["--require-limits", "--allow-uncapped"])
        self.assertKernError(both)

    def test_timing_lines(self):
        run = self.box(["/bin/true"], env={"KERN_TIMING": "1"}, flags=["--allow-uncapped"])
        self.assertExit(run, 0)
        timing = [l for l in run.err.splitlines() if "timing" in l]
        self.assertTrue(timing, "KERN_TIMING printed nothing\n" + run.describe())
        for l in run.err.splitlines():
            self.assertTrue(l.startswith(("kern: note: ", "kern: warning: ")), "stray stderr line: " + l)
        self.assertEqual(run.out, "", "timings must not go to stdout")


class ReportFdTest(kerntest.KernTestCase):

    STARTED_KEYS = ("event", "pid", "cgroup", "enforcement", "seccomp", "id_map", "network", "phases_ms")
    ENFORCEMENT_KEYS = ("memory", "pids", "cpu", "cpuset", "io", "devices")
    EXITED_KEYS = ("event", "exit_code", "signal", "oom_kill", "timed_out", "pids_limit_hits",
                   "memory_peak", "cpu_usec", "wall_ms")

    def records(self, run):
        try:
            recs = run.report_records()
        except json.JSONDecodeError as e:
            self.fail("report fd is not JSON lines: %s\n%r" % (e, run.report))
        self.assertEqual([r.get("event") for r in recs], ["started", "exited"], run.report)
        return recs

    def check_started(self, rec):
        for k in self.STARTED_KEYS:
            self.assertIn(k, rec, "started record lacks %r: %s" % (k, rec))
        self.assertIsInstance(rec["pid"], int)
        self.assertGreater(rec["pid"], 1)
        for k in self.ENFORCEMENT_KEYS:
            self.assertIn(k, rec["enforcement"], "enforcement lacks %r: %s" % (k, rec))
        self.assertEqual(rec["seccomp"], "allowlist")
        self.assertEqual(rec["network"], "none")
        self.assertIsInstance(rec["phases_ms"], dict)
        self.assertTrue(rec["phases_ms"], "no start-up phase timings")
        for name, ms in rec["phases_ms"].items():
            self.assertIsInstance(ms, (int, float), name)
            self.assertGreaterEqual(ms, 0, name)
        self.assertIsInstance(rec["id_map"], str)

    def check_exited(self, rec, code, signal_no):
        for k in self.EXITED_KEYS:
            self.assertIn(k, rec, "exited record lacks %r: %s" % (k, rec))
        self.assertEqual(rec["exit_code"], code, rec)
        self.assertEqual(rec["signal"], signal_no, rec)
        self.assertIs(rec["timed_out"], False, rec)
        self.assertGreater(rec["wall_ms"], 0, rec)

    def test_report_fd_flag(self):
        run = self.box(["/bin/sh", "-c", "exit 3"], report="flag")
        self.assertExit(run, 3)
        started, exited = self.records(run)
        self.check_started(started)
        self.check_exited(exited, 3, None)

    def test_report_fd_env_and_signal(self):
        run = self.box(["/bin/sh", "-c", "kill -TERM $$"], report="env", flags=["--net", "host"])
        self.assertExit(run, 143)
        started, exited = self.records(run)
        self.assertEqual(started["network"], "host")
        self.check_exited(exited, 143, 15)

    def test_report_matches_started_fd_and_pid(self):
        run = self.box(["/bin/sh", "-c", "exit 0"], report="flag", started=True, env={"KERN_NO_SCOPE": "1"},
                       flags=["-m", "64m"])
        self.assertExit(run, 0)
        started, _ = self.records(run)
        self.assertEqual(run.started, b"\x01\x02")
        self.assertEqual(started["enforcement"]["memory"], "not_enforced", started)

    def test_denylist_is_reported(self):
        run = self.box(["/bin/true"], report="flag", env={"KERN_SECCOMP": "denylist"})
        self.assertExit(run, 0)
        started, _ = self.records(run)
        self.assertEqual(started["seccomp"], "denylist")

    def test_no_report_for_a_failed_start(self):
        run = self.box(["/bin/true"], report="flag", rootfs=os.path.join(self.s.work, "missing"))
        self.assertKernError(run)
        self.assertEqual(run.report, b"", "report records for a box that never started")


if __name__ == "__main__":
    kerntest.main()
