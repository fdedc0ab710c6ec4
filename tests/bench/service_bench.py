#!/usr/bin/env python3
"""A supervised service's costs (issue 24's rows), side by side in one run:

  - memory at rest: the PSS of what keeps a detached `sleep` box up (kern's supervisor and box
    init) against podman's conmon for the same `sleep` (podman run -d --rootfs), summed from
    /proc/PID/smaps_rollup; the workloads themselves are left out of both;
  - restart latency: from a workload's last line before its exit to the next box's first line,
    less the back-off kern waits on purpose (100, 200, 400 ... ms), from `kern logs --timestamps`
    (the supervisor stamps each line as it reads it), for `--restart on-failure:N`; against
    `kern box -- /bin/true` started cold, the same work without the supervisor's part.

  tests/bench/service_bench.py --kern build/cli/kern [--baseline OLD_KERN] [-n 8]

Run it as root on an idle machine (podman then needs nothing else). A benchmark, not a test."""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import start_bench  # noqa: E402


def pss_kb(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def run(argv, env, **kw):
    return subprocess.run(argv, env=env, capture_output=True, text=True, **kw)


def kern_at_rest(kern, root, env):
    r = run([kern, "box", "-d", "--rootfs", root, "--", "sleep", "1000"], env, check=True)
    name = r.stdout.strip()
    time.sleep(1)
    info = json.loads(run([kern, "inspect", name], env, check=True).stdout)
    info = info[0] if isinstance(info, list) else info
    sup, init = info["pids"]["supervisor"], info["pids"]["init"]
    kb = (pss_kb(sup) or 0) + (pss_kb(init) or 0)
    run([kern, "rm", "-f", name], env)
    return kb


def conmon_at_rest(root, tmp, user):
    """conmon's PSS for a rootless podman's `run -d --rootfs ROOT sleep 1000` as `user` (root's
    podman here trips over the host's rlimits; conmon is the same program either way)."""
    podman, runuser = shutil.which("podman"), shutil.which("runuser")
    if not podman or not runuser:
        return None, "podman or runuser is not installed"
    home = os.path.join(tmp, "pm-home")
    os.makedirs(home, exist_ok=True)
    shutil.chown(home, user)
    env = ["env", "-i", "HOME=" + home, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "XDG_RUNTIME_DIR=" + home]
    base = [runuser, "-u", user, "--"] + env + [podman, "--cgroup-manager", "cgroupfs", "--events-backend", "none", "--runtime", "runc"]
    # Its own copy of the root, which it may write (/etc/mtab).
    mine = os.path.join(tmp, "pm-rootfs")
    subprocess.run(["cp", "-a", root, mine], check=True)
    subprocess.run(["chown", "-R", user, mine], check=True)
    root = mine
    r = subprocess.run(base + ["run", "-d", "--net", "none", "--rootfs", root, "sleep", "1000"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        return None, "podman run failed: " + r.stderr.strip()[:200]
    cid = r.stdout.strip()
    try:
        time.sleep(1)
        pid = int(subprocess.run(base + ["inspect", "--format", "{{.State.ConmonPid}}", cid], capture_output=True,
                                 text=True).stdout.strip() or 0)
        return pss_kb(pid), None
    finally:
        subprocess.run(base + ["rm", "-f", "-t", "0", cid], capture_output=True)
        subprocess.run(base + ["system", "reset", "-f"], capture_output=True)


def restart_latencies(kern, root, env, n):
    script = "echo start; sleep 0.2; echo end; exit 1"
    r = run([kern, "box", "-d", "--restart", "on-failure:%d" % n, "--rootfs", root, "--", "sh", "-c", script], env)
    if r.returncode != 0:
        return []  # a kern without --restart
    name = r.stdout.strip()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        info = json.loads(run([kern, "inspect", name], env).stdout or "[]")
        info = info[0] if isinstance(info, list) and info else info
        if info and info.get("state") == "exited":
            break
        time.sleep(0.2)
    logs = run([kern, "logs", "--timestamps", name], env).stdout
    run([kern, "rm", "-f", name], env)
    stamps = []
    for line in logs.splitlines():
        m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{9})Z (start|end)$", line)
        if m:
            t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").timestamp() + int(m.group(2)) / 1e9
            stamps.append((m.group(3), t))
    out = []
    for i in range(len(stamps) - 1):
        if stamps[i][0] == "end" and stamps[i + 1][0] == "start":
            k = len(out) + 1
            backoff = min(0.1 * 2 ** (k - 1), 60.0)
            out.append((stamps[i + 1][1] - stamps[i][1] - backoff) * 1000)
    return out


def cold_start_ms(kern, root, env, n=20):
    ts = []
    for _ in range(n):
        t0 = time.monotonic()
        run([kern, "box", "--rootfs", root, "--", "/bin/true"], env)
        ts.append((time.monotonic() - t0) * 1000)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kern", default=os.environ.get("KERN_BIN", "build/cli/kern"))
    ap.add_argument("--baseline", help="another kern binary timed in the same run")
    ap.add_argument("-n", type=int, default=8, help="restarts per box (default 8)")
    ap.add_argument("--podman-user", default="kerntest", help="who runs podman (rootless; default kerntest)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("service_bench.py: run it as root")
    tmp = tempfile.mkdtemp(prefix="kern-service-bench-")
    try:
        os.chmod(tmp, 0o755)
        root = os.path.join(tmp, "rootfs")
        start_bench.make_rootfs(root)
        rt = os.path.join(tmp, "run")
        os.mkdir(rt, 0o700)
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "XDG_RUNTIME_DIR": rt, "HOME": tmp, "KERN_QUIET": "1"}
        kerns = [("kern", os.path.abspath(a.kern))] + ([("baseline", os.path.abspath(a.baseline))] if a.baseline else [])
        print("issue 24's rows, one run")
        con, why = conmon_at_rest(root, tmp, a.podman_user)
        for label, k in kerns:
            kb = statistics.median([kern_at_rest(k, root, env) for _ in range(3)])
            ratio = ("%.2fx conmon" % (kb / con)) if con else ("conmon: " + why)
            print("  memory at rest, %-8s supervisor + box init PSS %6.0f kB   %s" % (label, kb, ratio))
        if con:
            print("  memory at rest, podman   conmon PSS                     %6.0f kB" % con)
        for label, k in kerns:
            lat = restart_latencies(k, root, env, a.n)
            cold = cold_start_ms(k, root, env)
            if lat:
                med = statistics.median(lat)
                print("  restart latency, %-8s median %.2f ms over %d restarts (back-off left out); "
                      "kern box /bin/true cold %.2f ms: %.2fx" % (label, med, len(lat), cold, med / cold))
            else:
                print("  restart latency, %-8s no restart seen (a kern without --restart?)" % label)
    finally:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
