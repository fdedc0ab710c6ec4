#!/usr/bin/env python3
"""A three-service stack's `up -d` and `down` (issue 25's row), side by side in one run: kern compose
against podman-compose (Debian's podman-compose, driving podman with runc), on the same compose file
and the same busybox image (built here from the host's busybox-static, loaded into both), alternating
the two tools each round. Wall time of each command, median and spread of -n rounds.

  tests/bench/compose_bench.py --kern build/cli/kern [--baseline OLD_KERN] [-n 5]

Run it as root on an idle machine. A benchmark, not a test."""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
import build_images  # noqa: E402

STACK = """name: bench
services:
  store:
    image: busybox:latest
    command: ["httpd", "-f", "-p", "6379", "-h", "/"]
  web:
    image: busybox:latest
    command: ["sh", "-c", "while true; do wget -q -O /dev/null http://store:6379/ || true; sleep 1; done"]
    depends_on: [store]
  worker:
    image: busybox:latest
    command: ["sh", "-c", "while true; do sleep 1; done"]
    depends_on: [store]
"""


def timed(argv, env, cwd):
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    dt = (time.perf_counter() - t) * 1000
    if r.returncode != 0:
        sys.exit("%s failed (%d): %s" % (" ".join(argv), r.returncode, r.stderr[-2000:]))
    return dt


def row(name, values):
    med = statistics.median(values)
    return "%-34s %9.1f ms  (min %.1f, max %.1f, n=%d)" % (name, med, min(values), max(values), len(values)), med


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kern", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("-n", type=int, default=5)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="compose-bench-")
    try:
        stack = os.path.join(tmp, "stack")
        os.makedirs(stack)
        with open(os.path.join(stack, "compose.yaml"), "w") as f:
            f.write(STACK)
        tar = os.path.join(tmp, "busybox.tar")
        build_images.write_docker_archive(tar, [build_images.busybox_layer()], ["busybox:latest"])
        env = dict(os.environ)
        env.update({"XDG_RUNTIME_DIR": os.path.join(tmp, "run"), "XDG_CACHE_HOME": os.path.join(tmp, "cache"),
                    "KERN_NO_SCOPE": "1"})
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
        conf = os.path.join(tmp, "containers.conf")
        with open(conf, "w") as f:
            f.write('[engine]\nruntime = "runc"\n')
        penv = dict(os.environ)
        penv["CONTAINERS_CONF"] = conf
        kerns = [("kern", os.path.abspath(a.kern))] + ([("kern (baseline)", os.path.abspath(a.baseline))] if a.baseline else [])
        for _, k in kerns:
            subprocess.run([k, "load", "-i", tar], env=env, check=True, capture_output=True)
        pc = shutil.which("podman-compose")
        if pc:
            subprocess.run(["podman", "load", "-i", tar], env=penv, check=True, capture_output=True)
        times = {}
        for _ in range(a.n):
            for label, k in kerns:
                times.setdefault(label + " compose up -d", []).append(timed([k, "compose", "up", "-d"], env, stack))
                times.setdefault(label + " compose down", []).append(timed([k, "compose", "down"], env, stack))
            if pc:
                times.setdefault("podman-compose up -d", []).append(timed([pc, "up", "-d"], penv, stack))
                times.setdefault("podman-compose down", []).append(timed([pc, "down", "-t", "1"], penv, stack))
        meds = {}
        for name, vals in times.items():
            line, meds[name] = row(name, vals)
            print(line)
        if pc:
            for verb in ("up -d", "down"):
                print("kern compose %s / podman-compose %s: %.2fx" % (verb, verb, meds["kern compose " + verb] /
                                                                        meds["podman-compose " + verb]))
        else:
            print("podman-compose is not installed: no peer row (apt-get install podman-compose)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
