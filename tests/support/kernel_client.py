"""Helpers for the warm-kernel tests: the language root file system and an SDK-like client of
`kern kernel serve` (a child process speaking JSON Lines over pipes).

lang_rootfs() builds (once) the root of tests/support/make_lang_rootfs.sh: python3 (with
matplotlib when the host has it), bash, node. As root (before kerntest drops privileges) it is
built next to the kern binary, readable by everyone, and reused; as an unprivileged user it is
built under the given scratch dir.
"""

import json
import os
import select
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILDER = os.path.join(HERE, "make_lang_rootfs.sh")


def shared_rootfs_path():
    kern = os.environ.get("KERN_BIN", "")
    if not kern:
        return None
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(kern))), "lang-rootfs")


def build_lang_rootfs(dest):
    """Runs the builder; returns (path, features) or raises RuntimeError with its output."""
    env = dict(os.environ)
    if os.environ.get("CI") and os.geteuid() == 0:
        env["KERN_TEST_INSTALL"] = "1"
    p = subprocess.run(["bash", BUILDER, dest], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=1500)
    if p.returncode != 0:
        raise RuntimeError("make_lang_rootfs.sh failed (%d): %s" % (p.returncode, p.stderr.decode()[-2000:]))
    feats = {l.split()[1] for l in p.stdout.decode().splitlines() if l.startswith("feature ")}
    return dest, feats


def read_features(path):
    try:
        with open(os.path.join(path, ".kern-features")) as f:
            return {l.split()[1] for l in f if l.startswith("feature ")}
    except OSError:
        return None


class ServeKernel:
    """`kern kernel serve` as an SDK drives it: requests on its stdin, answers on its stdout."""

    def __init__(self, argv, env, ready_timeout=60):
        self.argv = argv
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd="/", start_new_session=True)
        self.buf = b""
        self.ready = self.read_answer(ready_timeout)

    def read_answer(self, timeout=60):
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from %s within %ss" % (self.argv, timeout))
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                err = self.p.stderr.read().decode(errors="replace") if self.p.poll() is not None else ""
                raise EOFError("kern kernel serve ended without an answer (rc %s): %s" % (self.p.poll(), err))
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def request(self, obj, timeout=60):
        self.send_raw(json.dumps(obj).encode() + b"\n")
        return self.read_answer(timeout)

    def run(self, code, timeout=None, wait=60):
        req = {"op": "run", "code": code}
        if timeout is not None:
            req["timeout"] = timeout
        return self.request(req, wait)

    def close(self, timeout=20):
        """Ends the kernel by closing its input (what an SDK does on exit); returns the exit code."""
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.stderr = self.p.stderr.read().decode(errors="replace")
        self.p.stdout.close()
        self.p.stderr.close()
        return self.p.returncode


def prepare_shared_rootfs():
    """Called at import time by the kernel test modules: as root (before kerntest drops root)
    the shared root is built next to the kern binary, where the test user can read it."""
    path = shared_rootfs_path()
    if path and os.geteuid() == 0:
        try:
            build_lang_rootfs(path)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            print("kernel tests: building %s failed: %s" % (path, e))
