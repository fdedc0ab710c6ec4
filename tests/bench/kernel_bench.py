#!/usr/bin/env python3
"""Warm-kernel benchmark: the round trip of a trivial Python cell (1+1) over `kern kernel serve`,
against a fresh `kern box ... -- python3 -c 1+1`, against the floor (the same request and answer
bytes bounced through a pipe pair by two plain host processes), and `kern kernel run` (a new
kern process per cell). Prints medians and ratios.

  kernel_bench.py --kern KERN --rootfs DIR [--image REF] [--cells N] [--boxes N]
"""

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import time

REQ = b'{"op":"run","code":"1+1"}\n'


class LineChild:
    def __init__(self, argv, env=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.fd_in = self.p.stdin.fileno()
        self.fd_out = self.p.stdout.fileno()
        self.buf = b""

    def line(self):
        while b"\n" not in self.buf:
            select.select([self.fd_out], [], [], 60)
            chunk = os.read(self.fd_out, 1 << 16)
            if not chunk:
                raise EOFError("child ended")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def rtt(self, req):
        t0 = time.perf_counter_ns()
        os.write(self.fd_in, req)
        ans = self.line()
        return time.perf_counter_ns() - t0, ans

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)


# The floor's echo peer: reads a request line, writes the canned answer line. Plain Python, so
# that it costs what a minimal peer costs; the client is the same code as for the kernel.
PEER = r"""
import os, sys
ans = sys.argv[1].encode() + b"\n"
buf = b""
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    buf += chunk
    while b"\n" in buf:
        _, buf = buf.split(b"\n", 1)
        os.write(1, ans)
"""


def median_us(samples_ns):
    return statistics.median(samples_ns) / 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kern", required=True)
    ap.add_argument("--rootfs")
    ap.add_argument("--image")
    ap.add_argument("--cells", type=int, default=2000)
    ap.add_argument("--boxes", type=int, default=20)
    ap.add_argument("--runs", type=int, default=100)
    a = ap.parse_args()
    src = ["--image", a.image] if a.image else ["--rootfs", a.rootfs]
    env = dict(os.environ, KERN_ALLOW_UNCAPPED="1")

    # 1. serve
    k = LineChild([a.kern, "kernel", "serve"] + src + ["--lang", "python"], env)
    ready = json.loads(k.line())
    assert ready["status"] == "ready", ready
    answer = None
    for _ in range(200):  # warm-up
        _, answer = k.rtt(REQ)
    res = json.loads(answer)
    assert res["status"] == "done" and res["results"] == [{"text/plain": "2"}], res
    serve = [k.rtt(REQ)[0] for _ in range(a.cells)]
    k.close()

    # 2. floor: the same request and answer bytes through a pipe pair, two host processes
    f = LineChild([sys.executable, "-c", PEER, answer.decode()])
    for _ in range(200):
        f.rtt(REQ)
    floor = [f.rtt(REQ)[0] for _ in range(a.cells)]
    f.close()

    # 3. a fresh box per cell
    fresh = []
    for i in range(a.boxes + 2):
        t0 = time.perf_counter_ns()
        r = subprocess.run([a.kern, "box", "-q"] + src + ["--", "python3", "-c", "1+1"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        dt = time.perf_counter_ns() - t0
        if r.returncode != 0:
            raise SystemExit("kern box failed: %s" % r.stderr.decode())
        if i >= 2:
            fresh.append(dt)

    # 4. kern kernel run: a new kern process per cell, over the socket
    name = "bench-%d" % os.getpid()
    subprocess.run([a.kern, "kernel", "start", name] + src + ["--lang", "python"], env=env, check=True)
    try:
        runs = []
        for i in range(a.runs + 5):
            t0 = time.perf_counter_ns()
            r = subprocess.run([a.kern, "kernel", "run", name, "1+1"], env=env, stdout=subprocess.PIPE)
            dt = time.perf_counter_ns() - t0
            assert r.stdout == b"2\n", r
            if i >= 5:
                runs.append(dt)
    finally:
        subprocess.run([a.kern, "kernel", "stop", name], env=env)

    s, fl, fr, ru = median_us(serve), median_us(floor), median_us(fresh), median_us(runs)
    print("kernel bench: median round trip of a trivial Python cell (1+1)")
    print("  serve (warm kernel, %d cells)      %10.1f us" % (len(serve), s))
    print("  floor (pipe pair, 2 host procs)    %10.1f us" % fl)
    print("  fresh kern box python3 -c (%d)     %10.1f us" % (len(fresh), fr))
    print("  kern kernel run (new process, %d) %10.1f us" % (len(runs), ru))
    print("  fresh box / serve   = %8.1fx   (target >= 50x)" % (fr / s))
    print("  serve / floor       = %8.2fx   (target <= 5x)" % (s / fl))
    print("  kernel run / serve  = %8.1fx" % (ru / s))
    ok = fr / s >= 50 and s / fl <= 5
    print("kernel bench: %s" % ("targets met" if ok else "TARGETS MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
