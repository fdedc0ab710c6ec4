"""Processes the integration tests run: finished runs (Run), kern left running (Spawned), the
probe's `key: value` output, and the host processes that carry a marker in their argv."""

import json
import os
import select
import signal
import subprocess
import time


class Run:
    """One finished process: rc, stdout, stderr (text), raw bytes, wall time, extra fd data."""

    def __init__(self, argv, rc, out_b, err_b, seconds, started=None, report=None):
        self.argv = argv
        self.rc = rc
        self.out_b = out_b
        self.err_b = err_b
        self.out = out_b.decode(errors="replace")
        self.err = err_b.decode(errors="replace")
        self.seconds = seconds
        self.started = started    # bytes read from KERN_STARTED_FD, when asked for
        self.report = report      # bytes read from --report-fd, when asked for

    def kv(self):
        """`key: value` lines of stdout as a dict (the last of a repeated key wins)."""
        return parse_kv(self.out)

    def kv_all(self, key):
        return [v for k, v in parse_kv_pairs(self.out) if k == key]

    def report_records(self):
        return [json.loads(line) for line in (self.report or b"").decode().splitlines() if line.strip()]

    def describe(self):
        return ("command: %s\nexit code: %s after %.2fs\n--- stdout ---\n%s\n--- stderr ---\n%s"
                % (" ".join(self.argv), self.rc, self.seconds, self.out[-3000:], self.err[-3000:]))


def parse_kv_pairs(text):
    out = []
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            out.append((key, value))
    return out


def parse_kv(text):
    return dict(parse_kv_pairs(text))


def _drain(fd, deadline=None):
    """All bytes until end-of-file on fd (which is closed afterwards)."""
    chunks = []
    try:
        while True:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                r, _, _ = select.select([fd], [], [], left)
                if not r:
                    break
            b = os.read(fd, 65536)
            if not b:
                break
            chunks.append(b)
    finally:
        os.close(fd)
    return b"".join(chunks)


class Spawned:
    """A kern process left running (for concurrency, signals and timing tests)."""

    def __init__(self, argv, popen, started_r=None, report_r=None, t0=None):
        self.argv = argv
        self.popen = popen
        self.started_r = started_r
        self.report_r = report_r
        self.t0 = t0 or time.monotonic()
        self.started_bytes = b""

    @property
    def pid(self):
        return self.popen.pid

    def wait_started(self, timeout=15):
        """Reads the started fd until two bytes or end-of-file; returns what was read."""
        deadline = time.monotonic() + timeout
        while len(self.started_bytes) < 2 and time.monotonic() < deadline:
            r, _, _ = select.select([self.started_r], [], [], max(0.0, deadline - time.monotonic()))
            if not r:
                break
            b = os.read(self.started_r, 2 - len(self.started_bytes))
            if not b:
                break
            self.started_bytes += b
        return self.started_bytes

    def finish(self, timeout=30):
        """Waits for kern (SIGKILL after timeout) and returns the Run."""
        killed = False
        try:
            out, err = self.popen.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            out, err = self.popen.communicate()
            killed = True
        seconds = time.monotonic() - self.t0
        started = report = None
        if self.started_r is not None:
            started = self.started_bytes + _drain(self.started_r, time.monotonic() + 5)
        if self.report_r is not None:
            report = _drain(self.report_r, time.monotonic() + 5)
        run = Run(self.argv, self.popen.returncode, out or b"", err or b"", seconds, started, report)
        run.timed_out = killed
        return run

    def kill(self, sig=signal.SIGKILL):
        if self.popen.poll() is None:
            os.kill(self.popen.pid, sig)


def is_zombie(pid):
    """A dead process whose status nobody has collected yet (kern's box init, re-parented to a
    host init that reaps slowly, stays one for a while): it runs nothing."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def pids_with_marker(marker, exclude=()):
    """Live (non-zombie) host pids whose argv contains marker (from /proc/PID/cmdline)."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in exclude or int(entry) == os.getpid():
            continue
        if is_zombie(int(entry)):
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                if needle in f.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found
