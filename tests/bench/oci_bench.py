#!/usr/bin/env python3
"""kern-oci against runc and crun (issue 23's row): `RUNTIME run` of one bundle, the way engines
drive an OCI runtime, side by side in one interleaved loop (start_bench.py's: each round starts
one command further on; medians printed, with the CPU each run took).

The bundle is `runc spec`'s document, as it comes but for process.terminal false, process.args
["/bin/true"] and a busybox root file system; each runtime gets its own --root. `run` creates,
starts, waits for the process and deletes the container, for all three alike.

  tests/bench/oci_bench.py --kern build/cli/kern [-n 50]

Run it as root (the engines' case; runc and crun then need nothing else). A benchmark, not a
test: read the medians and the ratio against the fastest peer."""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import start_bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kern", default=os.environ.get("KERN_BIN", "build/cli/kern"))
    ap.add_argument("--baseline", help="another kern binary (an older build) timed in the same loop")
    ap.add_argument("-n", type=int, default=50)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("oci_bench.py: run it as root (the runtimes run containers as engines do)")
    tmp = tempfile.mkdtemp(prefix="kern-oci-bench-")
    try:
        bundle = os.path.join(tmp, "bundle")
        os.mkdir(bundle)
        start_bench.make_rootfs(os.path.join(bundle, "rootfs"))
        subprocess.run(["runc", "spec"], cwd=bundle, check=True)
        with open(os.path.join(bundle, "config.json")) as f:
            cfg = json.load(f)
        cfg["process"]["terminal"] = False
        cfg["process"]["args"] = ["/bin/true"]
        with open(os.path.join(bundle, "config.json"), "w") as f:
            json.dump(cfg, f)
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
        notes = []
        runtimes = {}
        for name, exe in (("kern-oci", a.kern), ("kern-oci (baseline)", a.baseline),
                          ("crun", shutil.which("crun")), ("runc", shutil.which("runc"))):
            if not exe:
                continue
            if name.startswith("kern-oci"):
                link = os.path.join(tmp, name.replace(" ", "_").replace("(", "").replace(")", ""))
                os.mkdir(link)
                link = os.path.join(link, "kern-oci")
                os.symlink(os.path.abspath(exe), link)
                exe = link
            state = os.path.join(tmp, "state-" + name.split()[0] + str(len(runtimes)))
            argv = [exe, "--root", state, "run", "--bundle", bundle, "bench"]
            probe = subprocess.run(argv, env=env, capture_output=True, text=True)
            if probe.returncode != 0:
                # crun 1.8 refuses a cgroup v1/v2 hybrid host ("cgroups in hybrid mode not supported").
                notes.append(f"{name} left out: it does not run here ({probe.stderr.strip().splitlines()[-1]})")
                continue
            runtimes[name] = (argv, env)
        medians = start_bench.interleaved(runtimes, a.n)
        cpu = {k: statistics.median(start_bench.CPU_MS[tuple(c)]) for k, (c, _) in runtimes.items()}
        peers = {k: v for k, v in medians.items() if not k.startswith("kern-oci")}
        fastest = min(peers, key=peers.get) if peers else None
        print(f"  RUNTIME run of a runc-spec bundle (/bin/true), {a.n} interleaved runs, medians")
        for k, v in medians.items():
            ratio = f"  {v / peers[fastest]:.2f}x {fastest}" if fastest else ""
            print(f"  {k:22s} {v:7.2f} ms wall  {cpu[k]:6.2f} ms CPU{ratio}")
        for n in notes:
            print("  " + n)
    finally:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
