#!/usr/bin/env python3
"""Warm-kernel benchmark: the round trip of a trivial Python cell (1+1) over `kern kernel serve`,
against a fresh `kern box ... -- python3 -c 1+1`, against the floor (the same request and answer
bytes bounced through a pipe pair by two plain host processes), and `kern kernel run` (a new
kern process per cell), and beside the floor the three-process floor (relay_floor.c: the same
peer behind a C relay that only moves bytes, what the supervisor's crossing alone costs). Prints
medians and ratios against issue 13's goals (serve <= 3x the floor, >= 500x faster than a fresh
box). Serve and floor run pinned to one CPU (--cpu).

  kernel_bench.py --kern KERN --rootfs DIR [--image REF] [--cells N] [--boxes N] [--cpu N] [--detail N]
"""

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_inputs  # noqa: E402

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


def pinned(cpu):
    """Pins this process (and what it starts from now on) to one CPU; returns the old set."""
    old = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    return old


def measure(kern, src, cells=2000, boxes=20, runs=100, cpu=None, block=200):
    """Medians in us: serve (a warm kernel's round trip), floor (the same bytes through a pipe
    pair), fresh (a new box per cell), run (a new kern process per cell). With cpu, the serve and
    floor rounds run pinned to that CPU (client, kern and the kernel's box alike; no cross-CPU
    wake-ups, which made the floor swing 2-3x between runs), in alternating blocks of `block`
    round trips so that drift hits both alike; the fresh boxes and kernel run are not pinned."""
    env = dict(os.environ, KERN_ALLOW_UNCAPPED="1")
    old = pinned(cpu) if cpu is not None else None
    try:
        k = LineChild([kern, "kernel", "serve"] + src + ["--lang", "python"], env)
        ready = json.loads(k.line())
        assert ready["status"] == "ready", ready
        answer = None
        for _ in range(200):  # warm-up
            _, answer = k.rtt(REQ)
        res = json.loads(answer)
        assert res["status"] == "done" and res["results"] == [{"text/plain": "2"}], res
        f = LineChild([sys.executable, "-c", PEER, answer.decode()])
        for _ in range(200):
            f.rtt(REQ)
        # The three-process floor: the same peer behind a C relay that only moves bytes (what
        # the supervisor's place between client and driver costs by itself). Informative; the
        # goal stays against the two-process floor.
        tmp = tempfile.mkdtemp(prefix="kern-bench-relay-")
        relay_bin = bench_inputs.build_floor(tmp, "relay_floor")
        r = LineChild([relay_bin, sys.executable, "-c", PEER, answer.decode()]) if relay_bin else None
        for _ in range(200 if r else 0):
            r.rtt(REQ)
        serve, floor, relay = [], [], []
        while len(serve) < cells:
            serve += [k.rtt(REQ)[0] for _ in range(block)]
            floor += [f.rtt(REQ)[0] for _ in range(block)]
            if r:
                relay += [r.rtt(REQ)[0] for _ in range(block)]
        k.close()
        f.close()
        if r:
            r.close()
        shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if old is not None:
            os.sched_setaffinity(0, old)

    fresh = []
    for i in range(boxes + 2):
        t0 = time.perf_counter_ns()
        r = subprocess.run([kern, "box", "-q"] + src + ["--", "python3", "-c", "1+1"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        dt = time.perf_counter_ns() - t0
        if r.returncode != 0:
            raise SystemExit("kern box failed: %s" % r.stderr.decode())
        if i >= 2:
            fresh.append(dt)

    out = {"serve": median_us(serve), "floor": median_us(floor), "fresh": median_us(fresh),
           "n_serve": len(serve), "n_fresh": len(fresh)}
    if relay:
        out["relay"] = median_us(relay)
    if runs:
        name = "bench-%d" % os.getpid()
        subprocess.run([kern, "kernel", "start", name] + src + ["--lang", "python"], env=env, check=True)
        try:
            rr = []
            for i in range(runs + 5):
                t0 = time.perf_counter_ns()
                r = subprocess.run([kern, "kernel", "run", name, "1+1"], env=env, stdout=subprocess.PIPE)
                dt = time.perf_counter_ns() - t0
                assert r.stdout == b"2\n", r
                if i >= 5:
                    rr.append(dt)
        finally:
            subprocess.run([kern, "kernel", "stop", name], env=env)
        out["run"], out["n_run"] = median_us(rr), len(rr)
    return out


def proc_cost(pid):
    """(CPU ns so far, voluntary, involuntary context switches) of a process, from /proc."""
    with open("/proc/%d/schedstat" % pid) as f:
        ns = int(f.read().split()[0])
    sw = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if "ctxt_switches:" in line:
                k, v = line.split(":")
                sw[k.strip()] = int(v)
    return ns, sw.get("voluntary_ctxt_switches", 0), sw.get("nonvoluntary_ctxt_switches", 0)


def detail(kern, src, cells, cpu):
    """Per cell of a serve (pinned like measure's): CPU us and context switches of the client (this
    process), the supervisor and the driver. CPU time moves less than wall time on a shared machine."""
    env = dict(os.environ, KERN_ALLOW_UNCAPPED="1")
    old = pinned(cpu) if cpu is not None else None
    try:
        k = LineChild([kern, "kernel", "serve"] + src + ["--lang", "python"], env)
        k.line()
        for _ in range(200):
            k.rtt(REQ)
        _, st = k.rtt(b'{"op":"status"}\n')
        init = json.loads(st)["box_pid"]
        with open("/proc/%d/task/%d/children" % (init, init)) as f:
            driver = int(f.read().split()[0])
        who = {"client": os.getpid(), "supervisor": k.p.pid, "driver": driver}
        before = {n: proc_cost(p) for n, p in who.items()}
        for _ in range(cells):
            k.rtt(REQ)
        after = {n: proc_cost(p) for n, p in who.items()}
        k.close()
    finally:
        if old is not None:
            os.sched_setaffinity(0, old)
    return {n: tuple((a - b) / cells for a, b in zip(after[n], before[n])) for n in who}


SERVE_PER_FLOOR, FRESH_PER_SERVE = 3.0, 500.0  # issue 13's goals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kern", required=True)
    ap.add_argument("--rootfs")
    ap.add_argument("--image")
    ap.add_argument("--cells", type=int, default=2000)
    ap.add_argument("--boxes", type=int, default=20)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--cpu", type=int, default=0, help="the CPU serve and floor are pinned to (-1: none)")
    ap.add_argument("--detail", type=int, default=0, metavar="N",
                    help="also N cells of a serve with each process's CPU and context switches per cell")
    a = ap.parse_args()
    src = ["--image", a.image] if a.image else ["--rootfs", a.rootfs]
    if a.detail:
        for name, (ns, vol, invol) in detail(a.kern, src, a.detail, None if a.cpu < 0 else a.cpu).items():
            print("  per cell: %-10s cpu %6.2f us, switches %.2f voluntary %.2f involuntary" % (name, ns / 1000, vol, invol))
    m = measure(a.kern, src, a.cells, a.boxes, a.runs, None if a.cpu < 0 else a.cpu)
    s, fl, fr = m["serve"], m["floor"], m["fresh"]
    pin = "unpinned" if a.cpu < 0 else "pinned to CPU %d" % a.cpu
    print("kernel bench: median round trip of a trivial Python cell (1+1)")
    print("  serve (warm kernel, %d cells, %s) %10.1f us" % (m["n_serve"], pin, s))
    print("  floor (pipe pair, 2 host procs)    %10.1f us" % fl)
    if "relay" in m:
        print("  relay floor (3 procs, C relay)     %10.1f us  (%.2fx floor: the crossing alone)" % (m["relay"], m["relay"] / fl))
    print("  fresh kern box python3 -c (%d)     %10.1f us" % (m["n_fresh"], fr))
    if "run" in m:
        print("  kern kernel run (new process, %d) %10.1f us" % (m["n_run"], m["run"]))
    print("  fresh box / serve   = %8.1fx   (goal >= %.0fx)" % (fr / s, FRESH_PER_SERVE))
    print("  serve / floor       = %8.2fx   (goal <= %.0fx)" % (s / fl, SERVE_PER_FLOOR))
    if "run" in m:
        print("  kernel run / serve  = %8.1fx" % (m["run"] / s))
    ok = fr / s >= FRESH_PER_SERVE and s / fl <= SERVE_PER_FLOOR
    print("kernel bench: %s" % ("goals met" if ok else "GOALS MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
