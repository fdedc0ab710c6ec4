#!/usr/bin/env python3
"""Box start benchmark (issues 2 and 13): kern against bubblewrap and unshare, side by side.

Prints the rows of issue 13's table from one run, each with kern's figure, the peers', the ratio
and the goal:
  box -- /bin/true      kern box (full default lockdown: user, pid, mount, net, uts, ipc, cgroup
                        namespaces, overlay root, masks, seccomp allowlist, capabilities dropped,
                        reaping init) against bwrap --unshare-all --die-with-parent --bind ROOTFS /
                        --proc /proc --dev /dev; beside them the in-process floor (start_floor.c:
                        the seven namespaces, the root bound or overlaid (-o), /proc, pivot_root,
                        exec, nothing of kern's), unshare -Urmpfniu -C --mount-proc (the same seven
                        namespaces and nothing else), unshare -Urmpf, a bare exec of /bin/true, and
                        kern's --net host, --egress-allow and --net private modes, and bwrap
                        --share-net (a note puts what a network namespace costs each runtime side
                        by side); a note says what each exec pays here for the loader's CPU
                        identification (loader_floor.c)
  python3 -c pass       the same with a python tree (--python-rootfs DIR, or --python-image REF
                        for kern alone; by default the host's python3 copied with its shared
                        libraries by tests/support/make_lang_rootfs.sh), against bwrap and the
                        floor on the same tree and the host's python3
  200 boxes at once     wall time until all of N concurrent /bin/true boxes are done
  load                  kern load of a docker-archive (--archive FILE; by default one of about
                        150 MB made from the python tree and the host's /usr) into a fresh store
                        on disk, against tar -xf of the archive and of its layers (and the
                        --baseline kern), --load-runs N interleaved runs; beside it N loads of
                        the same archive started together into one fresh store (--load-at-once,
                        default 10) against one load: the goal is one load's time plus 20%
  RSS                   resident memory (VmRSS, and Pss where readable) of kern's processes
                        (launcher and box init) while a box sleeps, against bwrap's two
  stripped binary       size of kern after strip, its PT_INTERP and DT_NEEDED, and ldd; what
                        kern's code, libstdc++, glibc, CLI11 and nlohmann add (size_breakdown.py,
                        from the linker's map beside the binary), and the floor: size_floor.cc,
                        a C++ program linked as kern is with only what kern cannot do without;
                        with --arm64-kern BINARY (a cross build's cli/kern) its stripped size
                        beside, each stripped by its own architecture's strip
  warm-kernel cell      a trivial python cell over `kern kernel serve` against the pipe floor
                        (same bytes, two plain processes) and a fresh box, pinned to one CPU
                        (kernel_bench.py)
  OCI rows (--oci)      in the /bin/true loop: kern-oci against crun and runc, `RUNTIME run` of one
                        bundle in oci_bench.py's cgroup2 namespace (crun refuses this hybrid host
                        otherwise); `ctr run --rm` of a busybox image through io.containerd.runc.v2
                        with each runtime as the runc binary (a containerd of its own, as root, on
                        the host); rootless `podman --runtime X run --rm` as the benchmark's user.
                        Each against the fastest peer that ran; one that cannot run here is named
                        with its error. Start the benchmark as root for the first two.
The Rust kern column is filled only with --rust-kern BINARY (else "not installed").
All timed rows are interleaved in one loop (A B C, B C A, C A B ...: each round starts one command
further on) so that machine drift and a round's first place hit every command alike; medians are
printed. Then kern's own start-up phases (KERN_TIMING).

Steadiness: --repeat N runs the /bin/true loop (with the OCI rows) N times and prints each row's N
medians with their spread (min..max, max/min), and each ratio in every repeat; a goal
(--goal ROW/PEER=RATIO, by the loop's names: kern/bwrap, kern-oci/crun, kern-oci@podman/runc@podman)
is met only when all N repeats meet it. The table shows the median of the N medians.

  tests/bench/start_bench.py --kern build/cli/kern [-n 100] [--concurrent 200]
      [--python-rootfs DIR | --python-image REF] [--archive FILE] [--load-runs N] [--baseline OLD_KERN]
      [--rust-kern BINARY] [--arm64-kern BINARY] [--extra-env K=V] [--cells N] [--cpu N] [--skip ROW ...]
      [--oci] [--repeat 5] [--goal kern-oci/crun=0.6 ...]
  tests/bench/start_bench.py --kern build/cli/kern --arm64-kern build-arm64/cli/kern --size-only
      (the stripped sizes alone: nothing is run, no box started; any user)

Run it as an unprivileged user (as root it re-runs itself as $KERN_TEST_USER, default kerntest;
with --oci, root first starts oci_bench.py's helpers, which run their rows as root, and hands their
pipes across that re-run).
A benchmark, not a test: shared machines are noisy, so read the medians and the ratios.
"""
import argparse, json, os, random, re, resource, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_inputs  # noqa: E402
import kernel_bench  # noqa: E402
import size_breakdown  # noqa: E402

GOALS = {  # issue 13: kern's figure against the peer named, at most this ratio
    "true": ("bwrap", 0.85),
    "python": ("bwrap", 1.0),
    "concurrent": ("bwrap", 1.0),
    "load": ("tar", 1.0),
    "load at once": ("one load", 1.2),
    "rss": ("bwrap", 1.2),
}
STRIPPED_GOAL = 2.5e6  # issue 27: <= 2.5 MB on both architectures, every feature kept
CPU_MS = {}  # argv -> CPU ms of each run (user + system of the process, what it waited for, and
            # the orphans it left that ended within 0.2 s: bwrap's init, see reap_orphans)


def drop_root():
    if os.geteuid() != 0:
        return
    user = os.environ.get("KERN_TEST_USER", "kerntest")
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    # The system interpreter: root's own may live where the user cannot read it.
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    os.execvpe("runuser", ["runuser", "-u", user, "--", py] + sys.argv, env)


# e_machine of the ELF header -> the architecture's name and Debian's strip for it (binutils on
# amd64 and binutils-aarch64-linux-gnu, which crossbuild-essential-arm64 brings and the arm64
# binutils itself depends on). The host's own strip reads no other architecture's files.
STRIP_FOR = {0x3E: ("x86_64", "x86_64-linux-gnu-strip"), 0xB7: ("arm64", "aarch64-linux-gnu-strip")}


def elf_machine(path):
    """e_machine of an ELF file (16 bits at offset 18, in the file's byte order), or None."""
    with open(path, "rb") as f:
        head = f.read(20)
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    return int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")


def stripped_size(path, tmp):
    """(architecture, bytes after strip) of an ELF file, stripped by the strip of its own
    architecture into tmp; bytes is None when that strip is missing or fails."""
    arch, tool = STRIP_FOR.get(elf_machine(path), (None, None))
    if arch is None:
        return None, None
    if not shutil.which(tool) and os.uname().machine == {"x86_64": "x86_64", "arm64": "aarch64"}[arch]:
        tool = "strip"  # the host's own, for its own architecture
    out = os.path.join(tmp, os.path.basename(path) + "." + arch + ".stripped")
    if not shutil.which(tool) or subprocess.run([tool, "-o", out, path]).returncode != 0:
        return arch, None
    return arch, os.path.getsize(out)


def size_rows(kern, tmp, rust=None, arm64=None):
    """The stripped-binary rows: kern's (and the Rust kern's beside it), then with arm64 (a
    cross build's kern) its own row, its size against x86_64's. Returns (rows, notes)."""
    rows, notes = [], []
    arch, size = stripped_size(kern, tmp)
    if size is None:
        notes.append(f"stripped binary: no strip for {arch or 'this ELF machine'} here, or it failed")
        return rows, notes
    rs = stripped_size(rust, tmp)[1] if rust else None
    rows.append((f"stripped binary ({arch})", f"{size / 1e6:.2f} MB", "not installed" if rs is None else f"{rs / 1e6:.2f}",
                 "", "", f"<= {STRIPPED_GOAL / 1e6:.1f} MB", "met" if size <= STRIPPED_GOAL else "not met"))
    if arm64:
        a_arch, a_size = stripped_size(arm64, tmp)
        if a_arch != "arm64":
            notes.append(f"--arm64-kern {arm64}: not an aarch64 ELF file")
        elif a_size is None:
            notes.append("stripped binary (arm64): aarch64-linux-gnu-strip is not installed or failed "
                         "(Debian's binutils-aarch64-linux-gnu)")
        else:
            rows.append(("stripped binary (arm64)", f"{a_size / 1e6:.2f} MB", "", f"{arch} {size / 1e6:.2f}",
                         f"{a_size / size:.2f}x {arch}", f"<= {STRIPPED_GOAL / 1e6:.1f} MB",
                         "met" if a_size <= STRIPPED_GOAL else "not met"))
    return rows, notes


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


class CommandFailed(Exception):
    pass


def timed(cmd, env, fail=True):
    """Wall ms of cmd; fail: a failed run ends the benchmark (else CommandFailed). env may be a
    helper that runs cmd elsewhere (oci_bench.Helper: in another namespace, as root)."""
    if hasattr(env, "timed"):
        try:
            return env.timed(cmd)
        except CommandFailed as e:
            if fail:
                sys.exit(f"benchmark command failed: {e}")
            raise
    # posix_spawn (vfork here) rather than subprocess, whose fork of this interpreter costs
    # milliseconds and would be counted in every figure.
    path = cmd[0] if os.path.isabs(cmd[0]) else shutil.which(cmd[0])
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        before = set(own_children())
        t = time.perf_counter()
        pid = os.posix_spawn(path, cmd, env, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1),
                                                           (os.POSIX_SPAWN_DUP2, null, 2)])
        _, status, ru = os.wait4(pid, 0)
        dt = (time.perf_counter() - t) * 1000
        cpu = (ru.ru_utime + ru.ru_stime) * 1000
        CPU_MS.setdefault(tuple(cmd), []).append(cpu + reap_orphans(before))
    finally:
        os.close(null)
    if os.waitstatus_to_exitcode(status) != 0:
        r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        msg = f"({r.returncode}): {' '.join(cmd)}\n{r.stderr.decode()}"
        if fail:
            sys.exit("benchmark command failed " + msg)
        raise CommandFailed(msg)
    return dt


def become_subreaper():
    """Orphans of the commands timed from now on become this process's children, so that their
    CPU is counted (reap_orphans): bwrap returns its workload's status before its init in the
    box has exited, and that init was reaped by whoever reaps orphans, its CPU in no figure."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER


def own_children():
    # One thread spawns and reaps here, and orphans go to the subreaper's leader.
    return children(os.getpid())


def reap_orphans(before, wait_s=0.2):
    """CPU ms of what the command just timed left behind as this process's children (not in
    `before`), reaped as they end within wait_s; one that lives on (a daemon of an engine) is left
    alone and not counted. Outside the timed span."""
    left = set(own_children()) - before
    cpu, end = 0.0, time.perf_counter() + wait_s
    while left:
        for p in list(left):
            try:
                got, _, ru = os.wait4(p, os.WNOHANG)
            except ChildProcessError:
                left.discard(p)
                continue
            if got == p:
                cpu += (ru.ru_utime + ru.ru_stime) * 1000
                left.discard(p)
        if not left or time.perf_counter() > end:
            break
        time.sleep(0.0005)
    reap_zombies()
    return cpu


def reap_zombies():
    """Reaps the children that have ended and that nothing here waits for: orphans that outlived
    reap_orphans' wait, or came from commands started with subprocess (the concurrent row). Every
    subprocess this script starts is waited for before the next command, so none is taken from
    under its Popen."""
    for p in own_children():
        try:
            with open(f"/proc/{p}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state == "Z":
            try:
                os.wait4(p, os.WNOHANG)
            except ChildProcessError:
                pass


def in_turn(names, r):
    """The order of round r: a shuffle of its own, the same for the same r in every run. With one
    order for every round the first command ran 2-4% slower than a copy of itself run second
    (python3 -c pass, 100 rounds, twice), a bias that fell on kern, first in every row. Starting
    each round one command further on kept each command's neighbours: the first command always
    came after the last, and with --oci that is a rootless podman run, whose clean-up goes on after
    it returns: kern's box row ran 8% slower than the same loop's baseline build (CPU 4.33 against
    4.03 ms), and the baseline's when it was given as --kern (2026-12-04). A shuffle gives every
    command every neighbour."""
    names = list(names)
    random.Random(r).shuffle(names)
    return names


def interleaved(cmds, n):
    """{name: median ms} of commands run in turn n times (after one warm-up each)."""
    times = {k: [] for k in cmds}
    for k, (c, e) in cmds.items():
        timed(c, e)
    for r in range(n):
        for k in in_turn(cmds, r):
            c, e = cmds[k]
            times[k].append(timed(c, e))
    return {k: statistics.median(v) for k, v in times.items()}


def concurrent_wall(cmd, env, count):
    t = time.perf_counter()
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for _ in range(count)]
    bad = sum(1 for p in procs if p.wait() != 0)
    dt = (time.perf_counter() - t) * 1000
    time.sleep(0.05)
    reap_zombies()  # the inits bwrap's runs left behind
    if bad:
        sys.exit(f"{bad} of {count} concurrent runs failed: {' '.join(cmd)}")
    return dt


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def memory_while_running(cmd, env, depth):
    """[(comm, VmRSS kB, Pss kB or None)] of the process started and of its descendants `depth`
    levels down (the launcher and box init for kern; bwrap and its child for bwrap), read while
    the workload sleeps; the workload itself is not counted."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        pids, level = [p.pid], [p.pid]
        for _ in range(depth):
            level = [c for x in level for c in children(x)]
            pids += level
        out = []
        for x in pids:
            try:
                comm = open(f"/proc/{x}/comm").read().strip()
            except OSError:
                comm = "?"
            out.append((comm,) + bench_inputs.memory_kb(x))
        return out
    finally:
        p.kill()
        p.wait()
        time.sleep(0.1)


def mem_text(procs):
    return " + ".join(f"{c} {r / 1024:.2f}" + (f" (Pss {p / 1024:.2f})" if p is not None else "")
                      for c, r, p in procs)


def verdict(ratio, goal, at_least=False):
    if ratio is None:
        return ""
    return "met" if (ratio >= goal if at_least else ratio <= goal) else "not met"


def parse_goal(text):
    """"A/B=RATIO" (--goal) -> (A, B, RATIO): row A's median at most RATIO times row B's."""
    pair, eq, value = text.rpartition("=")
    a, slash, b = pair.partition("/")
    try:
        ratio = float(value)
    except ValueError:
        ratio = None
    if not eq or not slash or not a or not b or ratio is None or ratio <= 0:
        raise ValueError(f"--goal {text!r}: not ROW/PEER=RATIO (e.g. kern-oci/crun=0.6)")
    return a, b, ratio


def spread(values):
    """(min, max, max/min) of a row's medians over the repeats."""
    lo, hi = min(values), max(values)
    return lo, hi, (hi / lo if lo > 0 else float("inf"))


def ratio_runs(runs, a, b, goal=None):
    """A's median over B's in each repeat (runs: [{row: median ms}]), and the verdict when a goal
    is given: "met" only when every repeat meets it. None when a row is missing from a repeat."""
    if not runs or any(a not in r or b not in r or not r[b] for r in runs):
        return None
    ratios = [r[a] / r[b] for r in runs]
    met = None if goal is None else sum(1 for x in ratios if x <= goal)
    return {"ratios": ratios, "met": met,
            "verdict": "" if goal is None else ("met" if met == len(ratios) else "not met")}


def steadiness(runs, pairs):
    """The lines of --repeat: per row its medians in each repeat and their spread, then per pair
    (A, B, goal or None) the ratio in each repeat and whether all of them meet the goal."""
    lines = []
    names = [k for k in runs[0] if all(k in r for r in runs)] if runs else []
    w = max([len(k) for k in names] + [4])
    for k in names:
        vals = [r[k] for r in runs]
        lo, hi, f = spread(vals)
        lines.append(f"  {k:{w}s}  " + " ".join(f"{v:7.2f}" for v in vals) +
                     f"   {lo:.2f}..{hi:.2f} ms, max/min {f:.2f}")
    for a, b, goal in pairs:
        got = ratio_runs(runs, a, b, goal)
        if got is None:
            lines.append(f"  {a}/{b}: not in every repeat")
            continue
        lo, hi, _ = spread(got["ratios"])
        text = f"  {a}/{b}  " + " ".join(f"{x:.2f}" for x in got["ratios"]) + f"   {lo:.2f}..{hi:.2f}"
        if goal is not None:
            text += f"; goal <= {goal:.2f}: {got['met']} of {len(got['ratios'])} -> {got['verdict']}"
        lines.append(text)
    return lines


OCI_GROUPS = (  # (measure, suffix of its rows' names): kern-oci<suffix> against crun<suffix>, runc<suffix>
    ("RUNTIME run -- /bin/true (cgroup2 ns)", ""),
    ("ctr run --rm (containerd, as root)", "@ctr"),
    ("podman run --rm (rootless)", "@podman"),
)


def oci_row(table, measure, med, suffix, goals, peers=("crun", "runc")):
    """An OCI row: kern-oci<suffix> against the fastest of the peers that ran; the goal is the one
    --goal gives that pair, if any. False when kern-oci's row did not run."""
    kern = "kern-oci" + suffix
    ran = {p + suffix: med[p + suffix] for p in peers if p + suffix in med}
    if kern not in med:
        return False
    fastest = min(ran, key=ran.get) if ran else None
    ratio = med[kern] / ran[fastest] if fastest else None
    goal = goals.get((kern, fastest))
    table.append((measure, f"{med[kern]:.2f} ms", "", ", ".join(f"{k} {v:.2f}" for k, v in ran.items()),
                  f"{ratio:.2f}x {fastest}" if ratio else "n/a", f"<= {goal:.2f}x {fastest}" if goal else "",
                  verdict(ratio, goal) if goal else ""))
    return True


def row(table, measure, kern, peers, key, unit="ms", rust=None):
    peer, goal = GOALS[key]
    ratio = kern / peers[peer] if peers.get(peer) else None
    table.append((measure, f"{kern:.2f} {unit}", "not installed" if rust is None else f"{rust:.2f}",
                  ", ".join(f"{k} {v:.2f}" for k, v in peers.items()),
                  f"{ratio:.2f}x {peer}" if ratio else "n/a", f"<= {goal:.2f}x {peer}", verdict(ratio, goal)))


def print_table(table, notes):
    head = ("measure", "kern", "Rust kern", "others", "ratio", "goal", "")
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


def load_row(kerns, archive, runs, kenv, at_once=10):
    """Medians of wall ms and of CPU ms for `kern load` of the archive into a fresh store, for each
    kern binary, for tar_layers, and for `at_once` loads of the archive started together into one
    fresh store by the first kern ("kern xN": the wall time until all are done; a store that
    unpacks an image once however many ask for it takes about one load's time), interleaved, all
    on disk (not tmpfs): under
    $KERN_BENCH_WORKDIR, default /var/tmp. Every run starts after `sync` (no dirty pages of the
    run before) with the archive in the page cache (read by the run before). Returns
    (wall, cpu, note)."""
    work = tempfile.mkdtemp(prefix="kern-bench-load-", dir=os.environ.get("KERN_BENCH_WORKDIR", "/var/tmp"))
    # A run must not follow the deletion of another's ~7,000 files: ext4 without a journal does
    # not reuse an inode for 60 s after its deletion and scans past such inodes on every create,
    # so a fresh tree in the block group just emptied cost seconds (3.6-4.0 s of system time for
    # tar -xf of the 60 MB layer here, against 0.2-0.4 s), and the figure depended on which
    # command had deleted what before it. So the trees are kept until the row is done (when the
    # disk has room for them), under a work dir flagged as the top of a directory hierarchy
    # (chattr +T), whose subdirectories ext4 spreads over its block groups as it does those of /.
    topdir = subprocess.run(["chattr", "+T", work], capture_output=True).returncode == 0
    first = next(iter(kerns))
    together = f"{first} x{at_once}"
    names = list(kerns) + ["tar"] + ([together] if at_once > 1 else [])
    need = (runs + 1) * (len(kerns) + 3) * os.path.getsize(archive) * 1.2
    keep = shutil.disk_usage(work).free > 3 * need
    wall = {k: [] for k in names}
    cpu = {k: [] for k in names}
    try:
        for i in range(runs + 1):  # the first round warms the page cache and is not counted
            for k in in_turn(names, i):
                d = tempfile.mkdtemp(dir=work)
                subprocess.run(["sync"])
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t = time.perf_counter()
                if k == "tar":
                    tar_layers(archive, d)
                elif k == together:
                    procs = [subprocess.Popen([kerns[first], "load", "-q", "-i", archive],
                                              env=dict(kenv, XDG_CACHE_HOME=d), stdout=subprocess.DEVNULL)
                             for _ in range(at_once)]
                    bad = [p.wait() for p in procs].count(0) != at_once
                    if bad:
                        sys.exit(f"{together}: a load failed")
                else:
                    subprocess.run([kerns[k], "load", "-q", "-i", archive], env=dict(kenv, XDG_CACHE_HOME=d),
                                   check=True, stdout=subprocess.DEVNULL)
                dt = (time.perf_counter() - t) * 1000
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                if i:
                    wall[k].append(dt)
                    cpu[k].append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
                if not keep:
                    subprocess.run(["chmod", "-R", "u+rwx", d])
                    subprocess.run(["rm", "-rf", d])
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", work])
        subprocess.run(["rm", "-rf", work])
    note = (f"load: {runs} interleaved runs, page cache warm, sync before each, "
            + ("trees kept until the end" if keep else "each tree deleted after its run (disk too full to keep them): "
               "a run may pay for the deletes of the one before")
            + ("; work dir chattr +T" if topdir else "; work dir not chattr +T (not ext4?)"))
    return ({k: statistics.median(v) for k, v in wall.items()},
            {k: statistics.median(v) for k, v in cpu.items()}, note)


def loader_floor(tmp):
    """A note on what every exec pays here before main to identify the CPU (loader_floor.c), or
    None where it cannot be measured (no cc, not x86, no ptrace)."""
    exe = bench_inputs.build_floor(tmp, "loader_floor")
    true = shutil.which("true")
    if not exe or not true:
        return None
    r = subprocess.run([exe, true], capture_output=True, text=True, timeout=300)
    try:
        m = json.loads(r.stdout)
    except ValueError:
        return f"loader's CPU identification: not measured ({r.stderr.strip() or 'no output'})"
    if "cpuid_ns" not in m:
        return None
    each_ms = m["cpuid_per_exec"] * m["cpuid_ns"] / 1e6
    return (f"loader's CPU identification: {m['cpuid_per_exec']} cpuid per exec of {true} (glibc's, which "
            f"kern, bwrap and the workload load alike), {m['cpuid_ns'] / 1000:.1f} us each here: "
            f"{each_ms:.2f} ms of every exec, {2 * each_ms:.2f} ms of a box start (the runtime's exec and "
            f"the workload's), in every runtime's row")


ROWS = ("true", "python", "concurrent", "load", "rss", "size", "kernel")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kern", default=os.environ.get("KERN_BIN", "build/cli/kern"))
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--concurrent", type=int, default=200, help="boxes started at once")
    ap.add_argument("--python-rootfs", help="a tree with python3 (bwrap runs the same tree)")
    ap.add_argument("--python-image", help="an image with python3, for kern alone")
    ap.add_argument("--archive", help="a docker-archive for the load row (default: one made)")
    ap.add_argument("--load-runs", type=int, default=10, help="interleaved runs of the load row")
    ap.add_argument("--load-at-once", type=int, default=10, help="loads of the archive started together (one store)")
    ap.add_argument("--extra-env", action="append", default=[], help="K=V for kern's runs")
    ap.add_argument("--baseline", help="another kern binary (an older build) timed in the same loop")
    ap.add_argument("--rust-kern", help="the Rust kern binary, timed in the same loops")
    ap.add_argument("--arm64-kern", help="an arm64 kern (a cross build's cli/kern): its stripped size beside")
    ap.add_argument("--size-only", action="store_true", help="the stripped sizes alone, nothing run")
    ap.add_argument("--cells", type=int, default=4000, help="warm-kernel round trips")
    ap.add_argument("--cpu", type=int, default=0, help="the CPU the warm-kernel row is pinned to")
    ap.add_argument("--skip", nargs="*", default=[], choices=ROWS, help="rows left out")
    ap.add_argument("--oci", action="store_true",
                    help="add the OCI rows to the /bin/true loop (oci_bench.py: kern-oci, crun, runc in a "
                         "cgroup2 namespace; ctr run and rootless podman with each); start it as root")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the /bin/true loop this many times: each row's medians and their spread")
    ap.add_argument("--goal", action="append", default=[], metavar="ROW/PEER=RATIO",
                    help="a ratio every repeat must meet, e.g. kern-oci/crun=0.6 (rows by their loop names)")
    args = ap.parse_args()
    try:
        goals = {(a, b): g for a, b, g in map(parse_goal, args.goal)}
    except ValueError as e:
        ap.error(str(e))
    if args.repeat < 1:
        ap.error("--repeat: at least 1")
    kern = os.path.abspath(args.kern)
    rust = os.path.abspath(args.rust_kern) if args.rust_kern else None
    arm64 = os.path.abspath(args.arm64_kern) if args.arm64_kern else None
    if args.size_only:
        with tempfile.TemporaryDirectory(prefix="kern-size-") as tmp:
            rows, notes = size_rows(kern, tmp, rust, arm64)
        print("the stripped binaries (nothing run)")
        print_table(rows, notes)
        return
    helpers, oci_errors = [], {}
    if args.oci:
        # oci_bench imports this module by name: the same one (its CPU_MS, its CommandFailed).
        sys.modules.setdefault("start_bench", sys.modules[__name__])
        import oci_bench  # noqa: E402 (here: it imports this module)
        if os.geteuid() == 0 and "KERN_BENCH_OCI_HELPERS" not in os.environ:
            # Root's part, made before the benchmark drops to its user; the pipes go across the exec.
            started = [oci_bench.Helper.start(args, cgroup2_ns=True), oci_bench.Helper.start(args, containerd=True)]
            os.environ["KERN_BENCH_OCI_HELPERS"] = ";".join(h.fds() for h in started)
        if os.geteuid() != 0:
            spec = os.environ.pop("KERN_BENCH_OCI_HELPERS", "")
            helpers = [oci_bench.Helper.from_fds(x) for x in spec.split(";") if x]
            if not helpers:
                oci_errors["RUNTIME run (cgroup2 ns), ctr run"] = (
                    "need root: start start_bench.py as root (the namespace and containerd are made as root, "
                    "then it drops to its user)")
    drop_root()
    subreaper = become_subreaper()
    tmp = tempfile.mkdtemp(prefix="kern-bench-")
    table, notes = [], []
    if not subreaper:
        notes.append("CPU figures: not a child subreaper here, so what a command leaves running after it "
                     "returns (bwrap's init) is in no CPU figure")
    podman_home = None
    want = [r for r in ROWS if r not in args.skip]
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
        floor = bench_inputs.build_floor(tmp)
        if not floor:
            notes.append("in-process floor: no C compiler to build tests/bench/start_floor.c, left out")
        if not rust:
            notes.append("Rust kern: not installed here (give --rust-kern BINARY): its column is left empty")

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
            # bwrap in the host's network namespace: what a network namespace costs bwrap, beside
            # what it costs kern (kern --net host), in wall and CPU.
            "bwrap --share-net": (bwrap + ["--share-net", "--bind", root, "/", "--proc", "/proc", "--dev", "/dev",
                                           "/bin/true"], env),
            # Not targets: the same namespaces and root with no kern code (bound, overlaid), the
            # seven namespaces kern makes and nothing else, fewer namespaces, and no namespace at all.
            "floor": ([floor, root, "/bin/true"], env) if floor else None,
            "floor -o": ([floor, "-o", root, "/bin/true"], env) if floor else None,
            "unshare -Urmpfniu -C": (["unshare", "-Urmpfniu", "-C", "--mount-proc", "--root", root, "/bin/true"], env),
            "unshare -Urmpf": (["unshare", "-Urmpf", "--mount-proc", "--root", root, "/bin/true"], env),
            "exec": ([os.path.join(root, "bin", "busybox"), "true"], env),
        }
        cmds = {k: v for k, v in cmds.items() if v}
        if args.baseline:
            cmds["baseline"] = ([os.path.abspath(args.baseline)] + cmds["kern"][0][1:], kenv)
        if rust:
            cmds["rust"] = ([rust] + cmds["kern"][0][1:], kenv)
        for k in [k for k, (c, _) in cmds.items() if shutil.which(c[0]) is None and not os.path.exists(c[0])]:
            notes.append(f"{k}: not installed, left out")
            del cmds[k]
        oci = {}
        if args.oci:
            for h in helpers:
                oci.update(h.commands())
                oci_errors.update(h.errors)
            pods, perr, podman_home = oci_bench.podman_rows(kern, tmp)
            oci.update(pods)
            oci_errors.update(perr)
        loop = dict(cmds if "true" in want else {}, **oci)
        runs = [interleaved(loop, args.n) for _ in range(args.repeat)] if loop else []
        med = {k: statistics.median(r[k] for r in runs) for k in loop}
        if "true" in want:
            modes = [k for k in med if k.startswith("kern ")]
            if "baseline" in med:
                notes.append(f"baseline kern: {med['baseline']:.2f} ms; kern/baseline {med['kern'] / med['baseline']:.2f}")
            cpu = {k: statistics.median(CPU_MS[tuple(c)]) for k, (c, _) in cmds.items()}
            notes.append("box -- /bin/true, CPU ms (medians; steadier than wall on a loaded host): " +
                         ", ".join(f"{k} {v:.2f}" for k, v in cpu.items()))
            row(table, "box -- /bin/true", med["kern"],
                {k: v for k, v in med.items() if k not in ["kern", "baseline", "rust", "bwrap --share-net"] + modes and k not in oci},
                "true", rust=med.get("rust"))
            for k in modes:
                notes.append(f"{k}: {med[k]:.2f} ms, {med[k] - med['kern']:+.2f} ms against --net none")
            if "bwrap --share-net" in med and "kern --net host" in med:
                # The network namespace's own cost, each runtime against itself in the host's.
                notes.append("a network namespace costs (default against the host's namespace): kern "
                             f"{med['kern'] - med['kern --net host']:+.2f} ms wall, "
                             f"{cpu['kern'] - cpu['kern --net host']:+.2f} ms CPU; bwrap "
                             f"{med['bwrap'] - med['bwrap --share-net']:+.2f} ms wall, "
                             f"{cpu['bwrap'] - cpu['bwrap --share-net']:+.2f} ms CPU")
            lf = loader_floor(tmp)
            if lf:
                notes.append(lf)
        if args.oci:
            for measure, suffix in OCI_GROUPS:
                if not oci_row(table, measure, med, suffix, goals):
                    table.append((measure, "not run", "", "", "", "", ""))
            if oci:
                cpu = {k: statistics.median(CPU_MS[tuple(c)]) for k, (c, _) in oci.items()}
                notes.append("OCI rows, CPU ms (medians): " + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items()))
            for k, why in oci_errors.items():
                notes.append(f"not run: {k} ({why})")

        # Row 2: python3 -c pass.
        if "python" in want:
            pyroot = args.python_rootfs
            if not pyroot and not args.python_image:
                pyroot = bench_inputs.python_rootfs()
                if pyroot:
                    notes.append(f"python tree: the host's python3 with its standard library and ldd closure "
                                 f"({pyroot}; no python image offline)")
            if pyroot or args.python_image:
                src = ["--rootfs", pyroot] if pyroot else ["--image", args.python_image]
                py = ["python3", "-c", "pass"]
                pc = {"kern": (kbox + src + ["--"] + py, kenv)}
                if rust:
                    pc["rust"] = ([rust] + pc["kern"][0][1:], kenv)
                if pyroot and have_bwrap:
                    pc["bwrap"] = (bwrap + ["--bind", pyroot, "/", "--proc", "/proc", "--dev", "/dev"] + py, env)
                if pyroot and floor:
                    pc["floor"] = ([floor, pyroot, "/usr/bin/python3", "-c", "pass"], env)
                    pc["floor -o"] = ([floor, "-o", pyroot, "/usr/bin/python3", "-c", "pass"], env)
                if shutil.which("python3"):
                    pc["host python3"] = ([shutil.which("python3"), "-c", "pass"], env)
                # As many rounds as the /bin/true row: with a quarter of them (15 at -n 60) the
                # medians of two commands 15 ms long moved by 10% between runs.
                pm = interleaved(pc, max(10, args.n))
                row(table, "python3 -c pass", pm["kern"], {k: v for k, v in pm.items() if k not in ("kern", "rust")},
                    "python", rust=pm.get("rust"))
            else:
                notes.append("python3 -c pass: left out (no python3 on the host to copy; give --python-rootfs DIR)")

        # Row 3: N boxes at once.
        if "concurrent" in want:
            conc = {"kern": cmds["kern"]}
            if "bwrap" in cmds:
                conc["bwrap"] = cmds["bwrap"]
            if "rust" in cmds:
                conc["rust"] = cmds["rust"]
            walls = {k: [] for k in conc}
            for r in range(3):
                for k in in_turn(conc, r):
                    c, e = conc[k]
                    walls[k].append(concurrent_wall(c, e, args.concurrent))
            cm = {k: statistics.median(v) for k, v in walls.items()}
            row(table, f"{args.concurrent} boxes at once, wall", cm["kern"],
                {k: v for k, v in cm.items() if k not in ("kern", "rust")}, "concurrent", rust=cm.get("rust"))

        # Row 4: load of a docker-archive into a fresh store on disk.
        if "load" in want:
            archive = args.archive
            if not archive:
                pyroot = args.python_rootfs or bench_inputs.python_rootfs()
                archive = bench_inputs.docker_archive(pyroot) if pyroot else None
            if archive:
                kerns = {"kern": kern}
                if args.baseline:
                    kerns["baseline"] = os.path.abspath(args.baseline)
                lm, lc, note = load_row(kerns, archive, args.load_runs, kenv, args.load_at_once)
                row(table, f"load of a {os.path.getsize(archive) / 1e6:.0f} MB docker-archive", lm["kern"],
                    {"tar": lm["tar"]}, "load")
                if args.load_at_once > 1:
                    row(table, f"{args.load_at_once} loads of it at once, wall", lm[f"kern x{args.load_at_once}"],
                        {"one load": lm["kern"]}, "load at once")
                notes.append(note + "; CPU ms: " + ", ".join(f"{k} {v:.0f}" for k, v in lc.items()) +
                             (f"; kern/baseline {lm['kern'] / lm['baseline']:.2f}" if "baseline" in lm else ""))
            else:
                notes.append("load of a docker-archive: left out (give --archive FILE)")

        # Row 5: memory while a box runs (launcher + box init; bwrap + its child).
        if "rss" in want:
            mk = memory_while_running(kbox + ["--rootfs", root, "--", "/bin/sleep", "5"], kenv, 1)
            rp = {}
            mb = None
            if have_bwrap:
                mb = memory_while_running(bwrap + ["--bind", root, "/", "--proc", "/proc", "--dev", "/dev",
                                                   "/bin/sleep", "5"], env, 1)
                rp["bwrap"] = sum(r for _, r, _ in mb) / 1024
            row(table, "RSS while a box runs (with its init)", sum(r for _, r, _ in mk) / 1024, rp, "rss", unit="MB")
            notes.append("RSS while a box runs, MB: kern " + mem_text(mk) + ("; bwrap " + mem_text(mb) if mb else ""))

        # Row 6: the stripped binary, and what it needs at run time.
        if "size" in want:
            rows, size_notes = size_rows(kern, tmp, rust, arm64)
            table += rows
            notes += size_notes
            notes.append("kern's run-time dependencies: " + bench_inputs.elf_deps(kern))
            # What each part adds, from the linker's map the build writes beside the binary.
            kmap = kern + ".map"
            notes.append("kern's binary by part: " + (size_breakdown.summary(kmap) if os.path.exists(kmap) else
                                                      f"left out ({kmap}, the linker's map, is not there)"))
            floor_sizes = bench_inputs.size_floor(tmp)
            notes.append("size floor, no kern code (size_floor.cc, stripped MB): " +
                         (", ".join(f"{k} {v / 1e6:.2f}" for k, v in floor_sizes.items()) if floor_sizes
                          else "left out (no C++ compiler, or it cannot link static libstdc++)"))

        # Row 7: a warm-kernel cell against the pipe floor and a fresh box, pinned to one CPU.
        if "kernel" in want:
            pyroot = args.python_rootfs or bench_inputs.python_rootfs()
            if pyroot:
                m = kernel_bench.measure(kern, ["--rootfs", pyroot], cells=args.cells, boxes=20, runs=0,
                                         cpu=args.cpu)
                spf, fps = m["serve"] / m["floor"], m["fresh"] / m["serve"]
                table.append(("warm-kernel cell (1+1)", f"{m['serve']:.1f} us", "not installed",
                              f"pipe floor {m['floor']:.1f}" +
                              (f", relay floor (3 procs) {m['relay']:.1f}" if "relay" in m else "") +
                              f", fresh box {m['fresh'] / 1000:.2f} ms",
                              f"{spf:.2f}x floor, {fps:.0f}x fresh",
                              f"<= {kernel_bench.SERVE_PER_FLOOR:.0f}x floor, >= {kernel_bench.FRESH_PER_SERVE:.0f}x",
                              "met" if spf <= kernel_bench.SERVE_PER_FLOOR and fps >= kernel_bench.FRESH_PER_SERVE
                              else "not met"))
                notes.append(f"warm-kernel cell: medians of {m['n_serve']} round trips each, serve and floor "
                             f"pinned to CPU {args.cpu} in alternating blocks; {m['n_fresh']} fresh boxes unpinned")
            else:
                notes.append("warm-kernel cell: left out (no python tree)")

        print(f"issue 13's rows, one run ({args.n} interleaved runs each for the start rows"
              + (f", medians of {args.repeat} repeats of that loop" if args.repeat > 1 else "")
              + "; wall ms, whole process)")
        print_table(table, notes)
        if args.repeat > 1 and runs:
            pairs = dict(goals)
            if "kern" in med and "bwrap" in med:
                pairs.setdefault(("kern", "bwrap"), GOALS["true"][1])
            for _, suffix in OCI_GROUPS:
                for p in ("crun", "runc"):
                    if "kern-oci" + suffix in med and p + suffix in med:
                        pairs.setdefault(("kern-oci" + suffix, p + suffix), None)
            print(f"steadiness: the /bin/true loop {args.repeat} times ({args.n} rounds each); "
                  "per row its medians (ms) and their spread, per ratio its value in each repeat")
            for line in steadiness(runs, [(a, b, g) for (a, b), g in pairs.items()]):
                print(line)

        if "true" in want:
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
        print("ldd: " + (", ".join(libs) if libs else "none (" + (ldd.stdout.strip() or ldd.stderr.strip()) + ")"))
    finally:
        if podman_home:
            podman_home.cleanup()
        subprocess.run(["chmod", "-R", "u+rwx", tmp])
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
