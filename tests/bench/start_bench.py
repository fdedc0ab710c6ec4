#!/usr/bin/env python3
"""Box start benchmark (issue 2): kern box against bubblewrap and unshare, side by side.

Runs, interleaved in one loop so that machine drift hits all three alike:
  kern box   full default lockdown: user, pid, mount, net, uts, ipc, cgroup namespaces, overlay
             root, seccomp allowlist, capabilities dropped
  bwrap      --unshare-all --die-with-parent --bind ROOTFS / --proc /proc --dev /dev
  unshare    -Urmpf --mount-proc
  kern host  the same with --net host; kern egr: with --egress-allow example.org; kern priv:
             with --net private (pasta); the network modes' start-time cost against --net none
  unshare7   -Urmpfniu -C --mount-proc: no target, the cost of making the same seven namespaces
             as kern and nothing else (a new network namespace alone is most of it)
each on the same busybox root file system, /bin/true, and prints medians and the ratios against
the targets (kern <= 0.6x bwrap, <= 1.3x unshare). Then kern's own start-up phases
(KERN_TIMING), the binary's size and its shared libraries.

  tests/bench/start_bench.py --kern build/cli/kern [-n 200] [--extra-env KERN_NO_SCOPE=1]

Run it as an unprivileged user (as root it re-runs itself as $KERN_TEST_USER, default kerntest).
A benchmark, not a test: shared machines are noisy, so read the medians and the ratios.
"""
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile, time


def drop_root():
    if os.geteuid() != 0:
        return
    user = os.environ.get("KERN_TEST_USER", "kerntest")
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    # The system interpreter: root's own may live where the user cannot read it.
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    os.execvpe("runuser", ["runuser", "-u", user, "--", py] + sys.argv, env)


def make_rootfs(dest):
    busybox = shutil.which("busybox") or "/bin/busybox"
    os.makedirs(os.path.join(dest, "bin"))
    for d in ("proc", "dev", "tmp", "sys", "etc"):
        os.makedirs(os.path.join(dest, d))
    shutil.copy2(busybox, os.path.join(dest, "bin", "busybox"))
    applets = subprocess.run([busybox, "--list"], capture_output=True, text=True).stdout.split()
    for a in applets:
        p = os.path.join(dest, "bin", a)
        if not os.path.exists(p):
            os.symlink("busybox", p)


def timed(cmd, env):
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = (time.perf_counter() - t) * 1000
    if r.returncode != 0:
        sys.exit(f"benchmark command failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr.decode()}")
    return dt


def main():
    drop_root()
    ap = argparse.ArgumentParser()
    ap.add_argument("--kern", default=os.environ.get("KERN_BIN", "build/cli/kern"))
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--extra-env", action="append", default=[], help="K=V for kern's runs")
    args = ap.parse_args()
    kern = os.path.abspath(args.kern)
    tmp = tempfile.mkdtemp(prefix="kern-bench-")
    try:
        root = os.path.join(tmp, "rootfs")
        make_rootfs(root)
        env = dict(os.environ)
        kenv = dict(env)
        for kv in args.extra_env:
            k, v = kv.split("=", 1)
            kenv[k] = v
        cmds = {
            "kern box": ([kern, "box", "-q", "--allow-uncapped", "--rootfs", root, "--", "/bin/true"], kenv),
            # The network modes against the default (--net none): the host's namespace (none made),
            # and --egress-allow (the relay and the proxy forked and the relay listening before
            # the workload starts), and --net private (pasta started and the box's interface
            # configured before the workload starts; a -p adds one bind).
            "kern host": ([kern, "box", "-q", "--allow-uncapped", "--net", "host", "--rootfs", root, "--",
                           "/bin/true"], kenv),
            "kern egr": ([kern, "box", "-q", "--allow-uncapped", "--egress-allow", "example.org", "--rootfs", root,
                          "--", "/bin/true"], kenv),
            "kern priv": ([kern, "box", "-q", "--allow-uncapped", "--net", "private", "--rootfs", root, "--",
                           "/bin/true"], kenv),
            "bwrap": (["bwrap", "--unshare-all", "--die-with-parent", "--bind", root, "/", "--proc", "/proc",
                       "--dev", "/dev", "/bin/true"], env),
            "unshare": (["unshare", "-Urmpf", "--mount-proc", "--root", root, "/bin/true"], env),
            # Not a target: the same unshare making every namespace kern makes (net, ipc, uts and
            # cgroup too) and nothing else, to show what the namespaces alone cost here.
            "unshare7": (["unshare", "-Urmpfniu", "-C", "--mount-proc", "--root", root, "/bin/true"], env),
        }
        missing = [n for n, (c, _) in cmds.items() if shutil.which(c[0]) is None and not os.path.exists(c[0])]
        for n in missing:
            print(f"{n}: not installed, left out")
            del cmds[n]
        times = {n: [] for n in cmds}
        for n, (c, e) in cmds.items():  # warm-up
            timed(c, e)
        for _ in range(args.n):
            for n, (c, e) in cmds.items():
                times[n].append(timed(c, e))
        print(f"box start, /bin/true, {args.n} interleaved runs each (wall ms, whole process)")
        med = {}
        for n, v in times.items():
            med[n] = statistics.median(v)
            print(f"  {n:9s} min {min(v):7.2f}  median {med[n]:7.2f}  max {max(v):7.2f}")
        if "bwrap" in med:
            print(f"  kern/bwrap   median ratio {med['kern box'] / med['bwrap']:.2f}  (target <= 0.60)")
        if "unshare" in med:
            print(f"  kern/unshare median ratio {med['kern box'] / med['unshare']:.2f}  (target <= 1.30)")
        for mode in ("kern host", "kern egr", "kern priv"):
            if mode in med:
                print(f"  {mode}/kern box median ratio {med[mode] / med['kern box']:.2f}  "
                      f"(+{med[mode] - med['kern box']:.2f} ms against --net none)")
        if "unshare7" in med and "unshare" in med:
            print(f"  unshare7/unshare median ratio {med['unshare7'] / med['unshare']:.2f}  "
                  "(the four more namespaces alone, no mounts, no seccomp)")
        phases = {}
        for _ in range(20):
            r = subprocess.run(cmds["kern box"][0], env=dict(kenv, KERN_TIMING="1"), capture_output=True, text=True)
            for k, v in re.findall(r"(\w+)=([\d.]+)ms", r.stderr):
                phases.setdefault(k, []).append(float(v))
        print("kern start-up phases (median of 20, ms): " +
              " ".join(f"{k}={statistics.median(v):.3f}" for k, v in phases.items()))
        print(f"kern binary: {os.path.getsize(kern)} bytes")
        ldd = subprocess.run(["ldd", kern], capture_output=True, text=True).stdout
        print("shared libraries: " + ", ".join(l.split()[0] for l in ldd.splitlines() if l.strip()))
    finally:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
