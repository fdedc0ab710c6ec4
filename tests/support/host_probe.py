"""What this host lets an unprivileged user do, decided once per test process.

Integration tests ask `host()` instead of trying things themselves, so that every skip names
the same reason and the summary printed at the top of a run says why a test could not run.
Every check runs as the current user (the harness has already dropped root by then) and
answers with a Check: a yes/no and the evidence for it.

Run directly (`python3 tests/support/host_probe.py`) to print the summary.
"""

import dataclasses
import os
import pwd
import shutil
import subprocess
import sys
import tempfile


@dataclasses.dataclass
class Check:
    ok: bool
    detail: str

    def __bool__(self):
        return self.ok


@dataclasses.dataclass
class HostCaps:
    user: str
    uid: int
    userns: Check
    overlay_userns: Check
    cgroup: Check
    cgroup_controllers: list
    uid_range: Check
    bwrap: Check
    unshare: Check
    sysctls: dict

    def summary_lines(self):
        def mark(c):
            return "yes" if c.ok else "NO "
        lines = [
            "host: user %s (uid %d), kernel %s" % (self.user, self.uid, os.uname().release),
            "host: unprivileged userns  %s  %s" % (mark(self.userns), self.userns.detail),
            "host: overlay in userns    %s  %s" % (mark(self.overlay_userns), self.overlay_userns.detail),
            "host: delegated cgroup v2  %s  %s" % (mark(self.cgroup), self.cgroup.detail),
            "host: newuidmap + subuid   %s  %s" % (mark(self.uid_range), self.uid_range.detail),
            "host: bwrap                %s  %s" % (mark(self.bwrap), self.bwrap.detail),
            "host: unshare(1)           %s  %s" % (mark(self.unshare), self.unshare.detail),
        ]
        if self.sysctls:
            lines.append("host: sysctl " + " ".join("%s=%s" % kv for kv in sorted(self.sysctls.items())))
        return lines


# Sysctls that decide whether a call is possible outside a box (the discriminant of a test).
SYSCTLS = {
    "unprivileged_userns_clone": "/proc/sys/kernel/unprivileged_userns_clone",
    "max_user_namespaces": "/proc/sys/user/max_user_namespaces",
    "apparmor_restrict_unprivileged_userns": "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "unprivileged_bpf_disabled": "/proc/sys/kernel/unprivileged_bpf_disabled",
    "yama.ptrace_scope": "/proc/sys/kernel/yama/ptrace_scope",
    "perf_event_paranoid": "/proc/sys/kernel/perf_event_paranoid",
    "unprivileged_userfaultfd": "/proc/sys/vm/unprivileged_userfaultfd",
    "legacy_tiocsti": "/proc/sys/dev/tty/legacy_tiocsti",
    "io_uring_disabled": "/proc/sys/kernel/io_uring_disabled",
}


def read_text(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def read_sysctls():
    out = {}
    for name, path in SYSCTLS.items():
        text = read_text(path)
        if text is not None:
            out[name] = text.strip()
    return out


def _run(argv, timeout=10):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "", str(e)


def _first_line(text):
    text = text.strip()
    return text.splitlines()[-1] if text else ""


def check_unshare_tool():
    path = shutil.which("unshare")
    if not path:
        return Check(False, "util-linux unshare(1) not installed")
    return Check(True, path)


def check_userns(unshare):
    if not unshare:
        return Check(False, "cannot test: " + unshare.detail)
    rc, _, err = _run(["unshare", "-Ur", "true"])
    if rc == 0:
        return Check(True, "unshare -Ur works")
    sys_hint = []
    for key in ("unprivileged_userns_clone", "max_user_namespaces", "apparmor_restrict_unprivileged_userns"):
        text = read_text(SYSCTLS[key])
        if text is not None:
            sys_hint.append("%s=%s" % (key, text.strip()))
    return Check(False, "unshare -Ur failed: %s (%s)" % (_first_line(err), ", ".join(sys_hint)))


def check_overlay(userns):
    if not userns:
        return Check(False, "needs an unprivileged user namespace")
    with tempfile.TemporaryDirectory(prefix="kern-hostprobe-") as d:
        for sub in ("lower", "upper", "work", "merged"):
            os.mkdir(os.path.join(d, sub))
        with open(os.path.join(d, "lower", "f"), "w") as f:
            f.write("x")
        script = ('mount -t overlay overlay -o lowerdir="$1/lower",upperdir="$1/upper",workdir="$1/work" '
                  '"$1/merged" && test -e "$1/merged/f"')
        rc, _, err = _run(["unshare", "-Urm", "sh", "-c", script, "sh", d])
        if rc == 0:
            return Check(True, "mount -t overlay in unshare -Urm works")
        return Check(False, "overlay mount in a user namespace failed: %s" % _first_line(err))


def _cgroup2_mount():
    text = read_text("/proc/self/mountinfo", "")
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        if right.split(" ")[:1] == ["cgroup2"]:
            fields = left.split(" ")
            return fields[4], fields[3]  # mount point, root of the mount inside the hierarchy
    return None, None


def check_cgroup():
    """Mirrors where kern looks (runtime/cgroup/subtree.h): the own cgroup or the closest writable
    ancestor whose cgroup.procs is ours to write and that offers memory and pids."""
    mount, root = _cgroup2_mount()
    if mount is None:
        return Check(False, "no cgroup2 mount"), []
    own = None
    for line in read_text("/proc/self/cgroup", "").splitlines():
        if line.startswith("0::"):
            own = line[3:]
    if own is None:
        return Check(False, "cgroup2 at %s, but no 0:: line in /proc/self/cgroup" % mount), []
    if root not in ("/", "") and own.startswith(root):
        own = own[len(root):] or "/"
    rel = own
    while True:
        path = os.path.normpath(mount + "/" + rel)
        controllers = (read_text(os.path.join(path, "cgroup.controllers"), "") or "").split()
        if (os.access(path, os.W_OK) and os.access(os.path.join(path, "cgroup.procs"), os.W_OK)
                and "memory" in controllers and "pids" in controllers):
            return Check(True, "%s writable, controllers: %s" % (path, " ".join(controllers))), controllers
        if rel in ("/", ""):
            break
        rel = os.path.dirname(rel)
    top = (read_text(os.path.join(mount, "cgroup.controllers"), "") or "").split()
    return (Check(False, "cgroup2 at %s (own cgroup %s), no writable ancestor with memory+pids; "
                         "root controllers: %s" % (mount, own, " ".join(top) or "none")), [])


def _subid_entry(path, user, uid):
    text = read_text(path)
    if text is None:
        return None
    for line in text.splitlines():
        parts = line.strip().split(":")
        if len(parts) == 3 and parts[0] in (user, str(uid)) and parts[2].isdigit() and int(parts[2]) > 0:
            return line.strip()
    return None


def check_uid_range(user, uid):
    missing = [t for t in ("newuidmap", "newgidmap") if not shutil.which(t)]
    if missing:
        return Check(False, "%s not installed (apt-get install uidmap)" % " and ".join(missing))
    su = _subid_entry("/etc/subuid", user, uid)
    sg = _subid_entry("/etc/subgid", user, uid)
    if not su or not sg:
        return Check(False, "no /etc/subuid or /etc/subgid range for %s (usermod --add-subuids ...)" % user)
    return Check(True, "subuid %s, subgid %s" % (su, sg))


def check_bwrap():
    path = shutil.which("bwrap")
    return Check(bool(path), path or "bubblewrap not installed")


_cached = None


def host():
    global _cached
    if _cached is None:
        uid = os.getuid()
        try:
            user = pwd.getpwuid(uid).pw_name
        except KeyError:
            user = str(uid)
        unshare = check_unshare_tool()
        userns = check_userns(unshare)
        cgroup, controllers = check_cgroup()
        _cached = HostCaps(
            user=user, uid=uid, userns=userns, overlay_userns=check_overlay(userns), cgroup=cgroup,
            cgroup_controllers=controllers, uid_range=check_uid_range(user, uid), bwrap=check_bwrap(),
            unshare=unshare, sysctls=read_sysctls())
    return _cached


if __name__ == "__main__":
    for line in host().summary_lines():
        print(line)
