#!/usr/bin/env python3
"""kern build against podman build (buildah) on one context (issue 26's row), side by side in one
run: the multi-stage Dockerfile of tests/integration/test_build_peers.py (build_peer_context.py)
on the busybox image made here from the host's busybox-static, loaded into both.

  cold  a fresh store each round with only the base image loaded (kern: a new XDG_CACHE_HOME;
        podman: a new storage root), then the build: every step runs
  warm  the same build again in that store, nothing changed: every step comes from the cache
        (the script checks that both tools said so)

Rootless podman as the same user: runc as its runtime (Debian's crun refuses this host's hybrid
cgroups), cgroupfs, a file event log (tests/support/rootless_podman.py), `--network none` (kern's
RUN has no network by default), --format oci, the storage driver of --podman-driver (default
overlay, podman's own choice for a rootless store on a kernel with overlay in user namespaces).
The loads and the removal of each round's stores are not timed. Rounds alternate which tool
builds first. Wall time of each build (and the CPU of the build and what it waited for), median
and spread of -n rounds, and the ratio kern/podman of the medians.

  tests/bench/build_bench.py --kern build/cli/kern [-n 5] [--podman-driver overlay|vfs]

Run it as an unprivileged user (as root it re-runs itself as $KERN_TEST_USER, default kerntest)
on an idle machine. A benchmark, not a test."""
import argparse, os, resource, shutil, statistics, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
import build_images  # noqa: E402
import build_peer_context  # noqa: E402
import rootless_podman  # noqa: E402
from start_bench import drop_root, in_turn  # noqa: E402


def timed(argv, env, cwd="/"):
    """(wall ms, CPU ms of the command and the children it waited for, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    dt = (time.perf_counter() - t) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("%s failed (%d): %s%s" % (" ".join(argv), r.returncode, r.stdout[-1000:], r.stderr[-2000:]))
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return dt, cpu, r.stdout + r.stderr


def run(argv, env):
    r = subprocess.run(argv, env=env, cwd="/", capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s failed (%d): %s" % (" ".join(argv), r.returncode, r.stderr[-2000:]))


class KernStore:
    def __init__(self, kern, top, archive):
        self.kern = kern
        self.top = top
        os.mkdir(top, 0o700)
        self.env = {"PATH": rootless_podman.PATH, "LANG": "C.UTF-8", "HOME": top,
                    "XDG_RUNTIME_DIR": os.path.join(top, "run"), "XDG_CACHE_HOME": os.path.join(top, "cache"),
                    "XDG_CONFIG_HOME": os.path.join(top, "config"), "KERN_NO_SCOPE": "1"}
        for d in ("run", "cache", "config"):
            os.mkdir(os.path.join(top, d), 0o700)
        run([kern, "load", "-i", archive], self.env)

    def build(self, ctx):
        return timed([self.kern, "build", "-t", "bench/app:kern", ctx], self.env)

    def cleanup(self):
        subprocess.run([self.kern, "builder", "prune", "-a", "-f"], env=self.env, capture_output=True)
        shutil.rmtree(self.top, ignore_errors=True)


class PodmanStore:
    def __init__(self, top, archive, driver):
        self.home = rootless_podman.PodmanHome(top, runtime="runc", driver=driver)
        self.env = self.home.full_env()
        run(["podman", "load", "-i", archive], self.env)

    def build(self, ctx):
        return timed(["podman", "build", "--network", "none", "--format", "oci", "-t", "bench/app:podman", ctx],
                     self.env)

    def cleanup(self):
        self.home.cleanup()


def row(name, values):
    med = statistics.median(values)
    return "%-24s %9.1f ms  (min %.1f, max %.1f, n=%d)" % (name, med, min(values), max(values), len(values)), med


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kern", required=True)
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--podman-driver", default="overlay", choices=("overlay", "vfs"))
    a = ap.parse_args()
    kern = os.path.abspath(a.kern)
    drop_root()
    if rootless_podman.missing_tools("runc"):
        sys.exit("not installed: %s (apt-get install podman conmon uidmap slirp4netns runc)"
                 % " ".join(rootless_podman.missing_tools("runc")))
    tmp = tempfile.mkdtemp(prefix="build-bench-")
    try:
        archive = os.path.join(tmp, "busybox.tar")
        build_images.write_docker_archive(archive, [build_images.busybox_layer()], ["busybox:latest"],
                                          history=build_images.one_history_per_layer(1))
        ctx = build_peer_context.write(os.path.join(tmp, "ctx"))
        times, cpus = {}, {}
        tools = {"kern": lambda top: KernStore(kern, top, archive),
                 "podman": lambda top: PodmanStore(top, archive, a.podman_driver)}
        for r in range(a.n):
            for tool in in_turn(["kern", "podman"], r):
                store = tools[tool](os.path.join(tmp, "%s-%d" % (tool, r)))
                try:
                    for kind in ("cold", "warm"):
                        dt, cpu, out = store.build(ctx)
                        cached = out.count("Using cache")
                        if (kind == "warm") != (cached > 0):
                            sys.exit("%s build (%s) said 'Using cache' %d times:\n%s" % (tool, kind, cached, out[-3000:]))
                        times.setdefault((tool, kind), []).append(dt)
                        cpus.setdefault((tool, kind), []).append(cpu)
                finally:
                    store.cleanup()
        print("podman %s, storage %s, runtime runc; %d rounds" % (
            subprocess.run(["podman", "--version"], capture_output=True, text=True).stdout.split()[-1],
            a.podman_driver, a.n))
        meds = {}
        for kind in ("cold", "warm"):
            for tool in ("kern", "podman"):
                line, meds[(tool, kind)] = row("%s build (%s)" % (tool, kind), times[(tool, kind)])
                print("%s  CPU %.1f ms" % (line, statistics.median(cpus[(tool, kind)])))
        for kind in ("cold", "warm"):
            print("kern build / podman build (%s): %.3gx wall, %.3gx CPU" % (
                kind, meds[("kern", kind)] / meds[("podman", kind)],
                statistics.median(cpus[("kern", kind)]) / statistics.median(cpus[("podman", kind)])))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
