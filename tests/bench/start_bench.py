#!/usr/bin/env python3
"""Box start benchmark (issues 2 and 13): kern against bubblewrap and unshare, side by side.

Prints the rows of issue 13's table from one run, each with kern's figure, the peers', the ratio
and the goal:
  box -- /bin/true      kern box (full default lockdown: user, pid, mount, net, uts, ipc, cgroup
                        namespaces, overlay root, masks, seccomp allowlist, capabilities dropped,
                        reaping init) against bwrap --unshare-all --die-with-parent --bind ROOTFS /
                        --proc /proc --dev /dev; beside them unshare -Urmpfniu -C --mount-proc (the
                        same seven namespaces and nothing else), unshare -Urmpf, a bare exec of
                        /bin/true, and kern's --net host, --egress-allow and --net private modes
  python3 -c pass       the same with a python tree (--python-rootfs DIR, or --python-image REF
                        for kern alone), against bwrap on the same tree and the host's python3
  200 boxes at once     wall time until all of N concurrent /bin/true boxes are done
  load                  kern load of a docker-archive (--archive FILE) into a fresh store, against
                        tar -xf of the archive and of its layers
  RSS                   resident memory of kern's processes (launcher and box init) while a box
                        runs, against bwrap's
  stripped binary       size of kern after strip, and its shared libraries (ldd)
All timed rows are interleaved in one loop (A B A B ...) so that machine drift hits every
command alike; medians are printed. Then kern's own start-up phases (KERN_TIMING).

  tests/bench/start_bench.py --kern build/cli/kern [-n 100] [--concurrent 200]
      [--python-rootfs DIR | --python-image REF] [--archive FILE] [--baseline OLD_KERN]
      [--extra-env K=V]

Run it as an unprivileged user (as root it re-runs itself as $KERN_TEST_USER, default kerntest).
A benchmark, not a test: shared machines are noisy, so read the medians and the ratios.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tarfile, tempfile, time

GOALS = {  # issue 13: kern's figure against the peer named, at most this ratio
    "true": ("bwrap", 0.85),
    "python": ("bwrap", 1.0),
    "concurrent": ("bwrap", 1.0),
    "load": ("tar", 1.0),
    "rss": ("bwrap", 1.2),
}
STRIPPED_GOAL = 1.5e6
CPU_MS = {}  # argv -> CPU ms of each run (user + system of the process and what it waited for)


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
    # posix_spawn (vfork here) rather than subprocess, whose fork of this interpreter costs
    # milliseconds and would be counted in every figure.
    path = cmd[0] if os.path.isabs(cmd[0]) else shutil.which(cmd[0])
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        t = time.perf_counter()
        pid = os.posix_spawn(path, cmd, env, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1),
                                                           (os.POSIX_SPAWN_DUP2, null, 2)])
        _, status, ru = os.wait4(pid, 0)
        dt = (time.perf_counter() - t) * 1000
        CPU_MS.setdefault(tuple(cmd), []).append((ru.ru_utime + ru.ru_stime) * 1000)
    finally:
        os.close(null)
    if os.waitstatus_to_exitcode(status) != 0:
        r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        sys.exit(f"benchmark command failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr.decode()}")
    return dt


def interleaved(cmds, n):
    """{name: median ms} of commands run in turn n times (after one warm-up each)."""
    times = {k: [] for k in cmds}
    for k, (c, e) in cmds.items():
        timed(c, e)
    for _ in range(n):
        for k, (c, e) in cmds.items():
            times[k].append(timed(c, e))
    return {k: statistics.median(v) for k, v in times.items()}


def concurrent_wall(cmd, env, count):
    t = time.perf_counter()
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for _ in range(count)]
    bad = sum(1 for p in procs if p.wait() != 0)
    dt = (time.perf_counter() - t) * 1000
    if bad:
        sys.exit(f"{bad} of {count} concurrent runs failed: {' '.join(cmd)}")
    return dt


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def rss_while_running(cmd, env, depth):
    """RSS (kB) of the process started and of its descendants `depth` levels down (the launcher
    and box init for kern; bwrap and its child for bwrap), while the workload sleeps."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.4)
        pids, level = [p.pid], [p.pid]
        for _ in range(depth):
            level = [c for x in level for c in children(x)]
            pids += level
        return sum(rss_kb(x) for x in pids)
    finally:
        p.kill()
        p.wait()
        time.sleep(0.1)


def row(table, measure, kern, peers, key, unit="ms"):
    peer, goal = GOALS[key]
    ratio = kern / peers[peer] if peers.get(peer) else None
    table.append((measure, f"{kern:.2f} {unit}", ", ".join(f"{k} {v:.2f}" for k, v in peers.items()),
                  f"{ratio:.2f}x {peer}" if ratio else "n/a", f"<= {goal:.2f}x {peer}",
                  "" if ratio is None else ("met" if ratio <= goal else "not met")))


def print_table(table, notes):
    head = ("measure", "kern", "others", "ratio", "goal", "")
    w = [max(len(str(r[i])) for r in table + [head]) for i in range(len(head))]
    for r in [head] + table:
        print("  " + "  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)).rstrip())
    for n in notes:
        print("  " + n)


def tar_layers(archive, dest):
    """tar -xf of the archive, then of every layer its manifest names (what a store must at least do)."""
    subprocess.run(["tar", "-xf", archive, "-C", dest], check=True)
    man = os.path.join(dest, "manifest.json")
    layers = []
    if os.path.exists(man):
        for m in json.load(open(man)):
            layers += m.get("Layers", [])
    for i, l in enumerate(layers):
        out = os.path.join(dest, f"layer{i}")
        os.makedirs(out)
        subprocess.run(["tar", "-xf", os.path.join(dest, l), "-C", out], check=True)


def main():
    drop_root()
    ap = argparse.ArgumentParser()
    ap.add_argument("--kern", default=os.environ.get("KERN_BIN", "build/cli/kern"))
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--concurrent", type=int, default=200, help="boxes started at once")
    ap.add_argument("--python-rootfs", help="a tree with python3 (bwrap runs the same tree)")
    ap.add_argument("--python-image", help="an image with python3, for kern alone")
    ap.add_argument("--archive", help="a docker-archive for the load row")
    ap.add_argument("--extra-env", action="append", default=[], help="K=V for kern's runs")
    ap.add_argument("--baseline", help="another kern binary (an older build) timed in the same loop")
    args = ap.parse_args()
    kern = os.path.abspath(args.kern)
    tmp = tempfile.mkdtemp(prefix="kern-bench-")
    table, notes = [], []
    try:
        root = os.path.join(tmp, "rootfs")
        make_rootfs(root)
        env = dict(os.environ)
        kenv = dict(env)
        for kv in args.extra_env:
            k, v = kv.split("=", 1)
            kenv[k] = v
        kbox = [kern, "box", "-q", "--allow-uncapped"]
        bwrap = ["bwrap", "--unshare-all", "--die-with-parent"]
        have_bwrap = shutil.which("bwrap") is not None
        if not have_bwrap:
            notes.append("bwrap: not installed (Debian package bubblewrap): every ratio against it left out")

        # Row 1: box -- /bin/true.
        cmds = {
            "kern": (kbox + ["--rootfs", root, "--", "/bin/true"], kenv),
            # The network modes against the default (--net none): the host's namespace (none made),
            # and --egress-allow (the relay and the proxy forked and listening before the workload).
            "kern --net host": (kbox + ["--net", "host", "--rootfs", root, "--", "/bin/true"], kenv),
            "kern --egress-allow": (kbox + ["--egress-allow", "example.org", "--rootfs", root, "--", "/bin/true"], kenv),
            # --net private: pasta started and the box's interface configured before the workload.
            "kern --net private": (kbox + ["--net", "private", "--rootfs", root, "--", "/bin/true"], kenv),
            "bwrap": (bwrap + ["--bind", root, "/", "--proc", "/proc", "--dev", "/dev", "/bin/true"], env),
            # Not targets: the seven namespaces kern makes and nothing else, fewer namespaces, and
            # no namespace at all.
            "unshare -Urmpfniu -C": (["unshare", "-Urmpfniu", "-C", "--mount-proc", "--root", root, "/bin/true"], env),
            "unshare -Urmpf": (["unshare", "-Urmpf", "--mount-proc", "--root", root, "/bin/true"], env),
            "exec": ([os.path.join(root, "bin", "busybox"), "true"], env),
        }
        if args.baseline:
            cmds["baseline"] = ([os.path.abspath(args.baseline)] + cmds["kern"][0][1:], kenv)
        for k in [k for k, (c, _) in cmds.items() if shutil.which(c[0]) is None and not os.path.exists(c[0])]:
            notes.append(f"{k}: not installed, left out")
            del cmds[k]
        med = interleaved(cmds, args.n)
        floor = os.path.join(os.path.dirname(os.path.abspath(__file__)), "start_floor")
        if not os.path.exists(floor):
            notes.append("in-process floor: no floor program in tests/bench, left out")
        modes = [k for k in med if k.startswith("kern ")]
        if "baseline" in med:
            notes.append(f"baseline kern: {med['baseline']:.2f} ms; kern/baseline {med['kern'] / med['baseline']:.2f}")
            modes.append("baseline")
        cpu = {k: statistics.median(CPU_MS[tuple(c)]) for k, (c, _) in cmds.items()}
        notes.append("box -- /bin/true, CPU ms (medians; steadier than wall on a loaded host): " +
                     ", ".join(f"{k} {v:.2f}" for k, v in cpu.items()))
        row(table, "box -- /bin/true", med["kern"], {k: v for k, v in med.items() if k != "kern" and k not in modes},
            "true")
        for k in modes:
            if k != "baseline":
                notes.append(f"{k}: {med[k]:.2f} ms, {med[k] - med['kern']:+.2f} ms against --net none")

        # Row 2: python3 -c pass.
        if args.python_rootfs or args.python_image:
            src = ["--rootfs", args.python_rootfs] if args.python_rootfs else ["--image", args.python_image]
            pc = {"kern": (kbox + src + ["--", "python3", "-c", "pass"], kenv)}
            if args.python_rootfs and have_bwrap:
                pc["bwrap"] = (bwrap + ["--bind", args.python_rootfs, "/", "--proc", "/proc", "--dev", "/dev",
                                        "python3", "-c", "pass"], env)
            if shutil.which("python3"):
                pc["host python3"] = ([shutil.which("python3"), "-c", "pass"], env)
            pm = interleaved(pc, max(10, args.n // 4))
            row(table, "python3 -c pass", pm["kern"], {k: v for k, v in pm.items() if k != "kern"}, "python")
        else:
            notes.append("python3 -c pass: left out (give --python-rootfs DIR or --python-image REF)")

        # Row 3: N boxes at once.
        conc = {"kern": cmds["kern"]}
        if "bwrap" in cmds:
            conc["bwrap"] = cmds["bwrap"]
        walls = {k: [] for k in conc}
        for _ in range(3):
            for k, (c, e) in conc.items():
                walls[k].append(concurrent_wall(c, e, args.concurrent))
        cm = {k: statistics.median(v) for k, v in walls.items()}
        row(table, f"{args.concurrent} boxes at once, wall", cm["kern"], {k: v for k, v in cm.items() if k != "kern"},
            "concurrent")

        # Row 4: load of a docker-archive into a fresh store.
        if args.archive:
            lt = {"kern": [], "tar": []}
            for _ in range(3):
                d = tempfile.mkdtemp(dir=tmp)
                lenv = dict(kenv, XDG_CACHE_HOME=os.path.join(d, "cache"))
                t = time.perf_counter()
                subprocess.run([kern, "load", "-i", args.archive], env=lenv, check=True, stdout=subprocess.DEVNULL)
                lt["kern"].append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                tar_layers(args.archive, tempfile.mkdtemp(dir=tmp))
                lt["tar"].append((time.perf_counter() - t) * 1000)
                subprocess.run(["rm", "-rf", d])
            lm = {k: statistics.median(v) for k, v in lt.items()}
            row(table, f"load of {os.path.basename(args.archive)}", lm["kern"], {"tar": lm["tar"]}, "load")
        else:
            notes.append("load of a docker-archive: left out (give --archive FILE)")

        # Row 5: RSS while a box runs (launcher + box init; bwrap + its child).
        rk = rss_while_running(kbox + ["--rootfs", root, "--", "/bin/sleep", "5"], kenv, 1)
        rp = {}
        if have_bwrap:
            rp["bwrap"] = rss_while_running(bwrap + ["--bind", root, "/", "--proc", "/proc", "--dev", "/dev",
                                                     "/bin/sleep", "5"], env, 1) / 1024
        row(table, "RSS while a box runs (with its init)", rk / 1024, rp, "rss", unit="MB")

        # Row 6: the stripped binary.
        stripped = os.path.join(tmp, "kern.stripped")
        if shutil.which("strip") and subprocess.run(["strip", "-o", stripped, kern]).returncode == 0:
            size = os.path.getsize(stripped)
            table.append(("stripped binary", f"{size / 1e6:.2f} MB", "", "", f"<= {STRIPPED_GOAL / 1e6:.1f} MB",
                          "met" if size <= STRIPPED_GOAL else "not met"))
        else:
            notes.append("stripped binary: strip failed or is not installed")

        print(f"issue 13's rows, one run ({args.n} interleaved runs each for the start rows; wall ms, whole process)")
        print_table(table, notes)

        phases = {}
        for _ in range(20):
            # Without -q: the timing line is a note, which -q silences.
            argv = [a for a in cmds["kern"][0] if a != "-q"]
            r = subprocess.run(argv, env=dict(kenv, KERN_TIMING="1"), capture_output=True, text=True)
            for k, v in re.findall(r"(\w+)=([\d.]+)ms", r.stderr):
                phases.setdefault(k, []).append(float(v))
        print("kern start-up phases (median of 20, ms): " +
              " ".join(f"{k}={statistics.median(v):.3f}" for k, v in phases.items()))
        print(f"kern binary: {os.path.getsize(kern)} bytes as built")
        ldd = subprocess.run(["ldd", kern], capture_output=True, text=True)
        libs = [l.split()[0] for l in ldd.stdout.splitlines() if "=>" in l or l.strip().startswith("/")]
        print("shared libraries: " + (", ".join(libs) if libs else "none (" + (ldd.stdout.strip() or ldd.stderr.strip()) + ")"))
    finally:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
