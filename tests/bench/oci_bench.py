#!/usr/bin/env python3
"""kern-oci against runc and crun (issues 23 and 27): `RUNTIME run` of one bundle, the way engines
drive an OCI runtime, side by side in one interleaved loop (start_bench.py's: each round starts
one command further on; medians printed, with the CPU each run took).

The bundle is `runc spec`'s document, as it comes but for process.terminal false, process.args
["/bin/true"] and a busybox root file system; each runtime gets its own --root. `run` creates,
starts, waits for the process and deletes the container, for all three alike.

  tests/bench/oci_bench.py --kern build/cli/kern [-n 50] [--cgroup2-ns]

Run it as root (the engines' case; runc and crun then need nothing else).

--cgroup2-ns: crun 1.8 refuses a host whose cgroups are hybrid (v1 and v2). With this option the
three runtimes run in one namespace where /sys/fs/cgroup is cgroup2 alone, made by root as:

  unshare -m --propagation private -- sh -c 'umount -R /sys/fs/cgroup &&
      exec unshare -Urm --cgroup -- sh -c "mount -t cgroup2 none /sys/fs/cgroup && RUNTIME ..."'

(the user namespace maps 0 -> 0, size 1: root's own id), with the bundle given a user namespace
of its own and linux.uidMappings/gidMappings 0 -> 0, size 1, and its devpts mount without gid=5
(no such group in that namespace). The v1 hierarchies are unmounted before the user namespace is
made: in it they are locked under the new cgroup2 mount, still listed in mountinfo, and kern-oci
would take them for the host's v1 hierarchies (it refuses with "bind cgroup v1 ... ENOENT").

The runtimes run in a helper (this script with --serve) that holds the namespace and times each
command there: start_bench.py --oci puts the same rows into its own interleaved loop through it
(the helper is made by root before start_bench drops to its unprivileged user). A runtime that
cannot run is named with its error, never left out silently.

A benchmark, not a test: read the medians and the ratio against the fastest peer."""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import start_bench  # noqa: E402

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IMAGE = "localhost/kern-bench-busybox:latest"
CTR_NS = "kern-bench"
PEERS = ("crun", "runc")  # the runtimes kern-oci is set against, in this order

# The namespace of --cgroup2-ns, as argv prefixes: the outer one (root, a private mount namespace
# without the v1 tree), then the inner one (a user namespace mapping root to itself, a cgroup
# namespace, a mount namespace of its own) in which cgroup2 is mounted.
OUTER = ["unshare", "-m", "--propagation", "private", "--"]
INNER = ["unshare", "-Urm", "--cgroup", "--"]


def make_bundle(bundle, rootfs_maker, in_userns=False):
    """A runc-spec bundle running /bin/true, its root made by rootfs_maker(dir). in_userns: the
    --cgroup2-ns bundle (a user namespace mapping 0 -> 0, size 1; devpts without gid=)."""
    os.mkdir(bundle)
    rootfs_maker(os.path.join(bundle, "rootfs"))
    subprocess.run(["runc", "spec"], cwd=bundle, check=True)
    with open(os.path.join(bundle, "config.json")) as f:
        cfg = json.load(f)
    cfg = bundle_config(cfg, in_userns)
    with open(os.path.join(bundle, "config.json"), "w") as f:
        json.dump(cfg, f)


def bundle_config(cfg, in_userns):
    """runc spec's document with the benchmark's changes (a new dict)."""
    cfg = json.loads(json.dumps(cfg))
    cfg["process"]["terminal"] = False
    cfg["process"]["args"] = ["/bin/true"]
    if in_userns:
        lx = cfg.setdefault("linux", {})
        ns = lx.setdefault("namespaces", [])
        if not any(n.get("type") == "user" for n in ns):
            ns.append({"type": "user"})
        lx["uidMappings"] = [{"containerID": 0, "hostID": 0, "size": 1}]
        lx["gidMappings"] = [{"containerID": 0, "hostID": 0, "size": 1}]
        for m in cfg.get("mounts", []):
            if m.get("type") == "devpts":
                m["options"] = [o for o in m.get("options", []) if not o.startswith("gid=")]
    return cfg


def link_kern_oci(kern, where):
    """A link named kern-oci to the kern binary (kern runs as the runtime by that name)."""
    os.makedirs(where, exist_ok=True)
    link = os.path.join(where, "kern-oci")
    os.symlink(os.path.abspath(kern), link)
    return link


def last_line(text):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else "no message"


def runtimes(kern, baseline):
    """[(row name, executable or None)]: kern-oci first, then the peers."""
    out = [("kern-oci", kern)]
    if baseline:
        out.append(("kern-oci (baseline)", baseline))
    out += [(p, shutil.which(p)) for p in PEERS]
    return out


# --------------------------------------------------------------------------------------------
# The helper: started as root (on the host, or inside the --cgroup2-ns namespace), it sets up the
# rows, probes each once and then times the commands it is sent, one JSON line each way.


def serve(a):
    if a.cgroup2_ns:
        r = subprocess.run(["mount", "-t", "cgroup2", "none", "/sys/fs/cgroup"], capture_output=True, text=True)
        if r.returncode != 0:
            hello = {"rows": {}, "errors": {"namespace": "mount -t cgroup2 on /sys/fs/cgroup: " + last_line(r.stderr)}}
            print(json.dumps(hello), flush=True)
            return
    tmp = tempfile.mkdtemp(prefix="kern-oci-bench-")
    env = {"PATH": PATH}
    rows, errors, ctr = {}, {}, None
    try:
        bundle = os.path.join(tmp, "bundle")
        make_bundle(bundle, start_bench.make_rootfs, in_userns=a.cgroup2_ns)
        for i, (name, exe) in enumerate(runtimes(a.kern, a.baseline) if not a.containerd else []):
            if not exe:
                errors[name] = "not installed"
                continue
            if name.startswith("kern-oci"):
                exe = link_kern_oci(exe, os.path.join(tmp, "bin%d" % i))
            argv = [exe, "--root", os.path.join(tmp, "state%d" % i), "run", "--bundle", bundle, "bench"]
            probe = subprocess.run(argv, env=env, capture_output=True, text=True)
            if probe.returncode != 0:
                errors[name] = "exit %d: %s" % (probe.returncode, last_line(probe.stderr))
            else:
                rows[name] = argv
        if a.containerd:
            ctr = Containerd(tmp, env)
            if ctr.problem:
                errors["ctr run (containerd)"] = ctr.problem
            else:
                for i, (name, exe) in enumerate(runtimes(a.kern, None)):
                    row = name + "@ctr"
                    if not exe:
                        errors[row] = "not installed"
                        continue
                    if name.startswith("kern-oci"):
                        exe = link_kern_oci(exe, os.path.join(tmp, "ctrbin%d" % i))
                    argv = ctr.run_argv(exe, os.path.join(tmp, "ctr-runc-root%d" % i), "bench%d" % i)
                    probe = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
                    if probe.returncode != 0:
                        errors[row] = "exit %d: %s" % (probe.returncode, last_line(probe.stderr))
                        ctr.forget("bench%d" % i)
                    else:
                        rows[row] = argv
        print(json.dumps({"rows": rows, "errors": errors, "env": env}), flush=True)
        for line in sys.stdin:
            req = json.loads(line)
            start_bench.CPU_MS.clear()
            try:
                ms = start_bench.timed(req["argv"], req["env"], fail=False)
            except start_bench.CommandFailed as e:
                print(json.dumps({"error": str(e)}), flush=True)
                continue
            print(json.dumps({"ms": ms, "cpu": start_bench.CPU_MS[tuple(req["argv"])][-1]}), flush=True)
    finally:
        if ctr:
            ctr.cleanup()
        subprocess.run(["rm", "-rf", tmp])


class Containerd:
    """containerd on a socket, root and state dir of its own (test_oci_engines.py's way), the
    busybox image imported; ctr run --rm with io.containerd.runc.v2 and the runtime as runc."""

    def __init__(self, tmp, env):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
        import build_images  # noqa: E402
        self.top = os.path.join(tmp, "containerd")
        os.mkdir(self.top, 0o700)
        self.sock = os.path.join(self.top, "c.sock")
        self.env = env
        self.problem = None
        self.proc = None
        missing = [t for t in ("containerd", "ctr", "containerd-shim-runc-v2") if not shutil.which(t)]
        if missing:
            self.problem = "not installed: " + " ".join(missing)
            return
        config = os.path.join(self.top, "config.toml")
        with open(config, "w") as f:
            f.write('version = 2\nroot = "%s/root"\nstate = "%s/state"\n[grpc]\n  address = "%s"\n'
                    '[ttrpc]\n  address = "%s.ttrpc"\n' % (self.top, self.top, self.sock, self.sock))
        self.log = open(os.path.join(self.top, "containerd.log"), "w")
        self.proc = subprocess.Popen(["containerd", "--config", config], stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd="/", start_new_session=True, env=env)
        end = time.monotonic() + 30
        while self.ctr("version").returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > end:
                self.problem = "containerd did not come up"
                return
            time.sleep(0.2)
        archive = os.path.join(self.top, "busybox.tar")
        build_images.write_docker_archive(archive, [build_images.busybox_layer()], [IMAGE], cmd=["/bin/sh"])
        r = self.ctr("images", "import", archive)
        if r.returncode != 0:
            self.problem = "ctr images import: " + last_line(r.stderr)

    def ctr(self, *args):
        return subprocess.run(["ctr", "--address", self.sock, "--namespace", CTR_NS] + list(args), env=self.env,
                              capture_output=True, text=True, timeout=120)

    def run_argv(self, runtime, runc_root, cid):
        return ["ctr", "--address", self.sock, "--namespace", CTR_NS, "run", "--rm", "--runtime",
                "io.containerd.runc.v2", "--runc-binary", runtime, "--runc-root", runc_root, IMAGE, cid, "/bin/true"]

    def forget(self, cid):
        """ctr keeps the container record when its task failed to start."""
        self.ctr("task", "delete", "-f", cid)
        self.ctr("containers", "rm", cid)

    def cleanup(self):
        if self.proc is None:
            return
        for cid in self.ctr("containers", "ls", "-q").stdout.split():
            self.forget(cid)
        self.ctr("images", "rm", IMAGE)
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        with open("/proc/self/mountinfo") as f:
            mounts = [line.split()[4] for line in f]
        for m in sorted((m for m in mounts if m.startswith(self.top + "/")), key=len, reverse=True):
            subprocess.run(["umount", "-l", m], capture_output=True)


class Helper:
    """The client's end of a helper: rows {name: argv} it can time, errors {name: why not}. Its
    pipes may be handed across an exec (fds(), then Helper.from_fds in the new program)."""

    def __init__(self, wfd, rfd):
        self.w = os.fdopen(wfd, "w", buffering=1)
        self.r = os.fdopen(rfd, "r")
        self.hello = None

    def said(self):
        """What the helper said first (read when asked: the process that started it may hand it
        on across an exec unread)."""
        if self.hello is None:
            line = self.r.readline()
            self.hello = json.loads(line) if line else {"rows": {}, "errors": {"helper": "ended before it said what runs"}}
        return self.hello

    @property
    def rows(self):
        return self.said()["rows"]

    @property
    def errors(self):
        return self.said()["errors"]

    @property
    def env(self):
        return self.said().get("env", {})

    @classmethod
    def start(cls, a, cgroup2_ns=False, containerd=False):
        """The helper as root: on the host, or inside the --cgroup2-ns namespace."""
        me = [sys.executable, os.path.abspath(__file__), "--serve", "--kern", os.path.abspath(a.kern)]
        if getattr(a, "baseline", None):
            me += ["--baseline", os.path.abspath(a.baseline)]
        if containerd:
            me.append("--containerd")
        if cgroup2_ns:
            me.append("--cgroup2-ns")
            script = 'umount -R /sys/fs/cgroup && exec "$@"'
            me = OUTER + ["sh", "-c", script, "sh"] + INNER + me
        p = subprocess.Popen(me, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={"PATH": PATH}, cwd="/")
        h = cls(os.dup(p.stdin.fileno()), os.dup(p.stdout.fileno()))
        p.stdin.close()
        p.stdout.close()
        return h

    @classmethod
    def from_fds(cls, spec):
        wfd, rfd = (int(x) for x in spec.split(","))
        for fd in (wfd, rfd):  # the commands timed here must not hold them (the helper ends at EOF)
            os.set_inheritable(fd, False)
        return cls(wfd, rfd)

    def fds(self):
        """"W,R": the pipe ends, made inheritable across exec."""
        for f in (self.w, self.r):
            os.set_inheritable(f.fileno(), True)
        return "%d,%d" % (self.w.fileno(), self.r.fileno())

    def timed(self, argv):
        """Wall ms of argv run by the helper (its CPU ms go to start_bench.CPU_MS)."""
        self.w.write(json.dumps({"argv": argv, "env": self.env}) + "\n")
        line = self.r.readline()
        if not line:
            raise start_bench.CommandFailed("the helper ended: " + " ".join(argv))
        rep = json.loads(line)
        if "error" in rep:
            raise start_bench.CommandFailed(rep["error"])
        start_bench.CPU_MS.setdefault(tuple(argv), []).append(rep["cpu"])
        return rep["ms"]

    def commands(self):
        """{row: (argv, self)} for start_bench.interleaved."""
        return {k: (v, self) for k, v in self.rows.items()}


def podman_rows(kern, tmp):
    """Rootless podman as the caller (rootless_podman.PodmanHome: a private tree, cgroupfs, vfs),
    the busybox image loaded: ({row: (argv, env)} of `podman --runtime X run --rm IMAGE
    /bin/true` for each runtime that runs, {row: why not}, the home to clean up or None)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
    import build_images  # noqa: E402
    import rootless_podman  # noqa: E402
    if os.geteuid() == 0:
        return {}, {"podman run (rootless)": "run as root: start_bench.py drops to its user first"}, None
    missing = rootless_podman.missing_tools()
    if missing:
        return {}, {"podman run (rootless)": "not installed: " + " ".join(missing)}, None
    home = rootless_podman.PodmanHome(os.path.join(tmp, "podman"))
    archive = os.path.join(tmp, "podman-busybox.tar")
    build_images.write_docker_archive(archive, [build_images.busybox_layer()], [IMAGE], cmd=["/bin/sh"])
    r = home.podman("load", "-i", archive, timeout=120)
    if r.rc != 0:
        return {}, {"podman run (rootless)": "podman load: " + last_line(r.err)}, home
    cmds, errors = {}, {}
    for name, exe in runtimes(kern, None):
        row = name + "@podman"
        if not exe:
            errors[row] = "not installed"
            continue
        if name == "kern-oci":
            exe = link_kern_oci(exe, os.path.join(tmp, "podman-bin"))
        argv = home.argv("--runtime", exe, "run", "--rm", IMAGE, "/bin/true")
        probe = subprocess.run(argv, env=home.full_env(), capture_output=True, text=True, timeout=120)
        if probe.returncode != 0:
            errors[row] = "exit %d: %s" % (probe.returncode, last_line(probe.stderr))
        else:
            cmds[row] = (argv, home.full_env())
    return cmds, errors, home


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kern", default=os.environ.get("KERN_BIN", "build/cli/kern"))
    ap.add_argument("--baseline", help="another kern binary (an older build) timed in the same loop")
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--cgroup2-ns", action="store_true",
                    help="run the runtimes in a namespace where /sys/fs/cgroup is cgroup2 alone (see above)")
    ap.add_argument("--containerd", action="store_true", help="ctr run rows instead (with --serve)")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.serve:
        serve(a)
        return
    if os.geteuid() != 0:
        sys.exit("oci_bench.py: run it as root (the runtimes run containers as engines do)")
    h = Helper.start(a, cgroup2_ns=a.cgroup2_ns)
    cmds = h.commands()
    medians = start_bench.interleaved(cmds, a.n) if cmds else {}
    cpu = {k: statistics.median(start_bench.CPU_MS[tuple(c)]) for k, (c, _) in cmds.items()}
    peers = {k: v for k, v in medians.items() if not k.startswith("kern-oci")}
    fastest = min(peers, key=peers.get) if peers else None
    print(f"  RUNTIME run of a runc-spec bundle (/bin/true), {a.n} interleaved runs, medians"
          + (", in a cgroup2 namespace" if a.cgroup2_ns else ""))
    for k, v in medians.items():
        ratio = f"  {v / peers[fastest]:.2f}x {fastest}" if fastest else ""
        print(f"  {k:34s} {v:7.2f} ms wall  {cpu[k]:6.2f} ms CPU{ratio}")
    for k, why in h.errors.items():
        # crun 1.8 refuses a cgroup v1/v2 hybrid host ("cgroups in hybrid mode not supported").
        print(f"  {k}: not run here ({why})")


if __name__ == "__main__":
    main()
