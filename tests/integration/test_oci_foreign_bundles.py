"""kern-oci on bundles written by other runtimes' `spec` (Debian's runc and crun), as root and
rootless (the unprivileged test user writes and runs its own), and the die-with-parent rule of
`kern oci exec` across a credential change.

- Each bundle of `runc spec`, `runc spec --rootless`, `crun spec`, `crun spec --rootless` (the
  busybox root file system the suite builds, the command `cat /proc/self/status`) runs under
  kern-oci, and the capability sets read back inside are the configuration's: bounding,
  effective, permitted and inheritable as given; ambient only what is also permitted and
  inheritable (the kernel's rule; the inheritable set is never filled for it: CVE-2022-29162).
  runc runs the same bundle in the same run where it can here, and its five lines are kern's.
- `kern oci exec -u 1000:1000` (not detached) into a root container: SIGKILL of the verb ends
  the exec'd process (the credential change cleared its parent-death signal before); the control
  with uid 0 (no id change) shows the same kill ends it there.
- In the same root container: `exec --cap` leaves the inheritable set empty (CVE-2022-29162), and
  a junk entry recording the container's cgroup (its own pid gone) is deleted without emptying
  that cgroup; the container's own delete -f, the control, ends it.

Runs as root (CTest does) and drops to the test user itself for the rootless half. Skip names:
runc, crun (not installed), root, user (no test user), cgroup (root got no cgroup v2 here)."""

import functools
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from busybox_rootfs import build_rootfs  # noqa: E402
from proc_runs import Run  # noqa: E402
from test_oci_engines import EngineCase, is_gone, main  # noqa: E402

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CAPS = {"CAP_CHOWN": 0, "CAP_DAC_OVERRIDE": 1, "CAP_FOWNER": 3, "CAP_FSETID": 4, "CAP_KILL": 5, "CAP_SETGID": 6,
        "CAP_SETUID": 7, "CAP_SETPCAP": 8, "CAP_NET_BIND_SERVICE": 10, "CAP_NET_RAW": 13, "CAP_SYS_CHROOT": 18,
        "CAP_MKNOD": 27, "CAP_AUDIT_WRITE": 29, "CAP_SETFCAP": 31}
STATUS_LINES = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
_world = None


def bits(names):
    v = 0
    for n in names or []:
        v |= 1 << CAPS[n]
    return v


def run(argv, user=None, timeout=60, cwd="/"):
    env = {"PATH": PATH, "LANG": "C.UTF-8"}
    if user is not None:
        pw = pwd.getpwnam(user)
        env.update(HOME=pw.pw_dir, XDG_RUNTIME_DIR=os.path.join(_world.tmp, "xdg-" + user))
        argv = ["runuser", "-u", user, "--", "env", "-i"] + ["%s=%s" % kv for kv in env.items()] + list(argv)
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return Run(argv, "timeout after %ss" % timeout, e.stdout or b"", e.stderr or b"", timeout)
    return Run(argv, p.returncode, p.stdout, p.stderr, time.monotonic() - t0)


class World:
    """A world-readable temp dir with the busybox root file system, made once."""

    def __init__(self):
        self.kern = os.path.abspath(os.environ.get("KERN_BIN", ""))
        self.user = os.environ.get("KERN_TEST_USER") or kerntest.DEFAULT_TEST_USER
        self.tmp = tempfile.mkdtemp(prefix="kern-itest-foreign-")
        os.chmod(self.tmp, 0o755)
        self.rootfs = os.path.join(self.tmp, "rootfs")
        outside = tempfile.mkdtemp(prefix="outside-", dir=self.tmp)
        build_rootfs(self.rootfs, None, outside)
        subprocess.run(["chmod", "-R", "a+rX", self.tmp], check=True)
        try:
            pw = pwd.getpwnam(self.user)
            xdg = os.path.join(self.tmp, "xdg-" + self.user)
            os.mkdir(xdg, 0o700)
            os.chown(xdg, pw.pw_uid, pw.pw_gid)
            self.user_ok = True
        except KeyError:
            self.user_ok = False


@functools.lru_cache(maxsize=None)
def world():
    global _world
    _world = World()
    return _world


class ForeignCase(EngineCase):
    """EngineCase's skips and exit checks; its own world instead of the engines' image."""

    def setUp(self):
        w = world()
        if not w.kern or not os.access(w.kern, os.X_OK):
            self.fail("KERN_BIN is not set or not executable: %r" % w.kern)
        self.w = w
        self.require("root", os.geteuid() == 0, "runs as root (CTest runs it so) to test both halves")
        self.dir = tempfile.mkdtemp(prefix="case-", dir=w.tmp)
        os.chmod(self.dir, 0o755)

    def bundle(self, tool, rootless, args):
        """`TOOL spec [--rootless]` written by the user who runs it, with the suite's root."""
        user = self.w.user if rootless else None
        if rootless:
            self.require("user", self.w.user_ok, "no test user %r" % self.w.user)
            shutil.chown(self.dir, self.w.user)
        b = os.path.join(self.dir, "%s%s" % (tool, "-rootless" if rootless else ""))
        os.mkdir(b, 0o755)
        if rootless:
            shutil.chown(b, self.w.user)
        self.assertExit(run([shutil.which(tool), "spec"] + (["--rootless"] if rootless else []), user=user, cwd=b), 0)
        path = os.path.join(b, "config.json")
        with open(path) as f:
            cfg = json.load(f)
        cfg["root"]["path"] = self.w.rootfs
        cfg["process"]["terminal"] = False
        cfg["process"]["args"] = args
        with open(path, "w") as f:
            json.dump(cfg, f)
        return b, cfg, user


def status_caps(text):
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k in STATUS_LINES:
            out[k] = int(v.strip(), 16)
    return out


class SpecBundlesTest(ForeignCase):

    def check(self, tool, rootless):
        self.require(tool, shutil.which(tool) is not None, "%s is not installed (setup.sh's test packages)" % tool)
        b, cfg, user = self.bundle(tool, rootless, ["cat", "/proc/self/status"])
        caps = cfg["process"]["capabilities"]
        state = os.path.join(self.dir, "kern-state")
        got = run([self.w.kern, "oci", "--root", state, "run", "--bundle", b, "c-" + uuid.uuid4().hex[:8]], user=user)
        self.assertExit(got, 0, "%s spec%s under kern-oci" % (tool, " --rootless" if rootless else ""))
        mine = status_caps(got.out)
        want = {"CapBnd": bits(caps.get("bounding")), "CapEff": bits(caps.get("effective")),
                "CapPrm": bits(caps.get("permitted")), "CapInh": bits(caps.get("inheritable")),
                "CapAmb": bits(caps.get("ambient")) & bits(caps.get("permitted")) & bits(caps.get("inheritable"))}
        self.assertEqual(mine, want, got.describe())
        if caps.get("ambient") and not (bits(caps.get("ambient")) & bits(caps.get("inheritable"))):
            self.assertIn("not raised", got.err)  # what is left out is said
        # runc, on the same bundle in the same run, where it runs here (a crun --rootless bundle
        # has no uidMappings, which runc needs; crun itself needs a cgroup v2-only host).
        theirs = run([shutil.which("runc"), "--root", os.path.join(self.dir, "runc-state"), "run", "--bundle", b,
                      "r-" + uuid.uuid4().hex[:8]], user=user) if shutil.which("runc") else None
        if theirs is not None and theirs.rc == 0:
            self.assertEqual(mine, status_caps(theirs.out), "kern and runc differ\n%s" % theirs.describe())

    def test_runc_spec_as_root(self):
        self.check("runc", False)

    def test_runc_spec_rootless(self):
        self.check("runc", True)

    def test_crun_spec_as_root(self):
        self.check("crun", False)

    def test_crun_spec_rootless(self):
        self.check("crun", True)


def gone(pid, seconds):
    deadline = time.monotonic() + seconds
    while not is_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


class ExecDiesWithVerbTest(ForeignCase):

    def setUp(self):
        super().setUp()
        self.require("runc", shutil.which("runc") is not None, "runc is not installed (its spec writes the bundle)")
        self.b, cfg, _ = self.bundle("runc", False, ["sleep", "600"])
        # Without the ambient set SpecBundlesTest is about, so this rule is seen on its own.
        cfg["process"]["capabilities"].pop("ambient", None)
        with open(os.path.join(self.b, "config.json"), "w") as f:
            json.dump(cfg, f)
        self.state = os.path.join(self.dir, "state")
        self.cid = "x-" + uuid.uuid4().hex[:8]
        # Files, not pipes: the container keeps the verb's stdio.
        with open(os.path.join(self.dir, "out"), "wb") as out, tempfile.TemporaryFile() as err:
            p = subprocess.run([self.w.kern, "oci", "--root", self.state, "run", "--detach", "--bundle", self.b,
                                self.cid], stdin=subprocess.DEVNULL, stdout=out, stderr=err, timeout=30)
            err.seek(0)
            self.assertEqual(p.returncode, 0, err.read().decode())

    def tearDown(self):
        run([self.w.kern, "oci", "--root", self.state, "delete", "--force", self.cid])

    def exec_then_kill_verb(self, user):
        mark = str(700000 + uuid.uuid4().int % 99999)
        verb = subprocess.Popen([self.w.kern, "oci", "--root", self.state, "exec", "--user", user, self.cid,
                                 "sleep", mark], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        pids = []
        while not pids and time.monotonic() < deadline:
            pids = [p for p in kerntest.pids_with_marker(mark) if p != verb.pid]
            time.sleep(0.05)
        if not pids:
            verb.kill()
            self.fail("the exec'd process never appeared: %s" % verb.communicate(timeout=10)[1].decode())
        verb.send_signal(signal.SIGKILL)
        verb.wait(10)
        verb.stderr.close()
        return [p for p in pids if not gone(p, 3)]

    def test_exec_as_another_user_dies_with_the_verb(self):
        left = self.exec_then_kill_verb("1000:1000")
        for p in left:
            os.kill(p, signal.SIGKILL)
        self.assertEqual(left, [], "kern oci exec -u 1000 outlived its SIGKILLed verb")

    def test_control_exec_as_root_dies_with_the_verb(self):
        self.assertEqual(self.exec_then_kill_verb("0:0"), [])

    def test_junk_entry_with_the_containers_cgroup_leaves_it_alone(self):
        # A junk entry recording this container's cgroup and a pid that is gone: delete -f of
        # the junk must not empty that cgroup (which SIGKILLs what is in it). The control: the
        # container's own delete -f does end it.
        with open(os.path.join(self.state, self.cid, "state.json")) as f:
            rec = json.load(f)
        self.require("cgroup", rec.get("cgroup"), "the container got no cgroup on this host (no cgroup v2 for root)")
        init = rec["pid"]
        rec.update(id="junk", pid_start_time=rec["pid_start_time"] + 1)  # its process "gone"
        # As copied, the record names the container's directory (its inode), not the junk's; as
        # a record of its own (as written by hand, or by a kern before that stamp), it records
        # the same cgroup as the container. Each layer refuses on its own.
        for stamped, says in ((True, "written in another directory"), (False, "records the same cgroup")):
            if not stamped:
                del rec["entry_ino"]
            os.mkdir(os.path.join(self.state, "junk"), 0o700)
            with open(os.path.join(self.state, "junk", "state.json"), "w") as f:
                json.dump(rec, f)
            got = run([self.w.kern, "oci", "--root", self.state, "delete", "--force", "junk"])
            self.assertExit(got, 0)
            self.assertFalse(gone(init, 1), "delete -f of a junk entry killed the container through its cgroup\n"
                             + got.describe())
            self.assertIn(says, got.err)
            self.assertFalse(os.path.exists(os.path.join(self.state, "junk")))
        self.assertExit(run([self.w.kern, "oci", "--root", self.state, "delete", "--force", self.cid]), 0)
        self.assertTrue(gone(init, 5))

    def test_exec_cap_leaves_the_inheritable_set_alone(self):
        # CVE-2022-29162: exec --cap must not put the capability in the inheritable set (a later
        # execve of a file with inheritable file capabilities would gain it). The control: the
        # same capability is in the permitted set, so --cap was applied.
        got = run([self.w.kern, "oci", "--root", self.state, "exec", "--cap", "CAP_CHOWN", "--cwd", "/", self.cid,
                   "cat", "/proc/self/status"])
        self.assertExit(got, 0)
        caps = status_caps(got.out)
        self.assertTrue(caps["CapPrm"] & bits(["CAP_CHOWN"]), got.describe())
        self.assertEqual(caps["CapInh"], 0, got.describe())
        # As runc parses it: one value per --cap, the id and the command right after it.
        self.assertExit(run([self.w.kern, "oci", "--root", self.state, "exec", "--cap", "CAP_CHOWN", self.cid, "true"]), 0)


def tearDownModule():
    if _world is not None:
        shutil.rmtree(_world.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
