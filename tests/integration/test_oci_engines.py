"""kern-oci driven by real container engines from Debian's packages, as users run it.

Rootless podman (as the unprivileged test user, with the runtime called inside podman's own user
namespace): `podman --runtime kern-oci run --rm` of a busybox image, exit codes, -it under a pty,
exec, stop of a box that traps SIGTERM, kill, logs, and the runtime named in containers.conf.
containerd as root (a containerd this test starts on a private socket, root and state dir):
`ctr run --runtime io.containerd.runc.v2` with kern-oci as the runc binary, `ctr task exec`, kill
and delete. After each container is gone nothing of it is left: no process, no state under
kern-oci's root, no cgroup directory.

This file runs as root (CTest runs the suite as root) and drops to the test user only for
podman; run by an unprivileged user, podman runs as that user and containerd is skipped. The
image is made here from Debian's busybox-static (build_images.py), nothing is downloaded.
Skip names: podman, containerd, root (kerntest.is_required: CI requires them).
The harness itself is checked by running it with KERN_BIN=/usr/sbin/runc (runc under the name
kern-oci): every test passes there."""

import os
import pty
import pwd
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
import rootless_podman  # noqa: E402
from rootless_podman import PATH, run  # noqa: E402
from proc_runs import is_zombie, pids_with_marker  # noqa: E402

IMAGE = "localhost/kern-itest-busybox:latest"
NS = "kern-itest"  # the containerd namespace of this test


class Shared:
    """Made once: a world-readable temp dir, kern-oci (a link to KERN_BIN) and the image."""

    def __init__(self):
        self.kern = os.path.abspath(os.environ.get("KERN_BIN", ""))
        self.tmp = tempfile.mkdtemp(prefix="kern-itest-engines-")
        os.chmod(self.tmp, 0o755)
        bindir = os.path.join(self.tmp, "bin")
        os.mkdir(bindir, 0o755)
        self.kern_oci = os.path.join(bindir, "kern-oci")
        os.symlink(self.kern, self.kern_oci)
        self.archive = os.path.join(self.tmp, "busybox.tar")
        build_images.write_docker_archive(self.archive, [build_images.busybox_layer()], [IMAGE],
                                          cmd=["/bin/sh"])
        os.chmod(self.archive, 0o644)


_shared = None


def shared():
    global _shared
    if _shared is None:
        _shared = Shared()
    return _shared


def run_in_pty(argv, env, timeout=60):
    """argv with stdin, stdout and stderr on a fresh pty that is its controlling terminal (as a
    shell runs a command); returns (exit code, what it wrote to the terminal)."""
    pid, master = pty.fork()
    if pid == 0:
        try:
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    out = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the last holder of the slave side is gone
                break
            if not chunk:
                break
            out += chunk
    else:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    os.close(master)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace").replace("\r", "")


def is_gone(pid):
    """No such process, or a zombie (an orphan the host's init has not reaped yet)."""
    return not os.path.exists("/proc/%d" % pid) or is_zombie(pid)


def marker():
    return "kern-itest-eng-" + uuid.uuid4().hex[:10]


class EngineCase(unittest.TestCase):
    maxDiff = None

    def require(self, name, condition, reason):
        kerntest.require(self, name, condition, reason)

    def assertExit(self, r, code, msg=""):
        if r.rc != code:
            self.fail("expected exit code %s, got %s%s\n%s" % (code, r.rc, (": " + msg) if msg else "", r.describe()))

    def assertNoProcesses(self, mark):
        self.assertEqual(kerntest.pids_left(mark, 3), [], "processes of the container are left (%s)" % mark)

    def setUp(self):
        kern = os.environ.get("KERN_BIN", "")
        if not kern or not os.access(kern, os.X_OK):
            self.fail("KERN_BIN is not set or not executable: %r" % kern)
        self.s = shared()


# --------------------------------------------------------------------------------------------
# Rootless podman


class Podman(rootless_podman.PodmanHome):
    """A podman of its own for the test user (rootless_podman.PodmanHome), with kern among the
    runtimes by name; the image loaded once."""

    def __init__(self, s, user):
        super().__init__(os.path.join(s.tmp, "podman"), user, runtimes={"kern": s.kern_oci})
        self.kern_oci = s.kern_oci
        r = self.podman("load", "-i", s.archive, timeout=120)
        self.load_problem = None if r.rc == 0 else "podman load failed\n" + r.describe()


_podman = None


class PodmanTest(EngineCase):

    def setUp(self):
        super().setUp()
        global _podman
        user = rootless_podman.test_user()
        missing = rootless_podman.missing_tools()
        self.require("podman", not missing, "not installed: %s (apt-get install podman conmon uidmap slirp4netns)"
                     % " ".join(missing))
        if os.geteuid() == 0:
            try:
                pwd.getpwnam(user)
            except KeyError:
                self.require("podman", False, "rootless podman needs the test user %r (useradd -m %s)" % (user, user))
        if _podman is None:
            _podman = Podman(self.s, user)
        self.p = _podman
        if self.p.load_problem:
            self.fail(self.p.load_problem)
        self.mark = marker()

    def tearDown(self):
        # What a failed test left in podman goes first (podman keeps a container whose create
        # failed); then kern-oci's own leftovers are looked for.
        self.p.podman("rm", "-af", "-t", "0")
        self.assertNoProcesses(self.mark)
        # podman gives no --root: kern-oci's own default in podman's user namespace. Neither
        # place may keep a container's state dir.
        for root in (os.path.join(self.p.xdg_run, "kern-oci"), "/run/kern-oci"):
            try:
                left = [n for n in os.listdir(root) if len(n) == 64]
            except OSError:
                left = []
            self.assertEqual(left, [], "state left under %s" % root)

    def krun(self, *args, timeout=60):
        return self.p.podman("--runtime", self.p.kern_oci, "run", *args, timeout=timeout)

    def sh(self, script):
        return ["sh", "-c", script, self.mark]

    def wait_logs(self, name, needle, timeout=15):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            r = self.p.podman("logs", name)
            if needle in r.out:
                return r
            time.sleep(0.2)
        self.fail("%r never appeared in podman logs %s\n%s" % (needle, name, r.describe()))

    def test_run_rm_exit_codes(self):
        r = self.krun("--rm", IMAGE, *self.sh("echo hello-from-kern; exit 0"))
        self.assertExit(r, 0)
        self.assertEqual(r.out, "hello-from-kern\n")
        self.assertExit(self.krun("--rm", IMAGE, *self.sh("exit 3")), 3)
        # podman turns the runtime's "not found" into 127 (the command's own exit code).
        r = self.krun("--rm", IMAGE, "/bin/no-such-command-" + self.mark)
        self.assertExit(r, 127, "a command that is not in the image")
        r = self.p.podman("ps", "-aq")
        self.assertEqual(r.out.strip(), "", "podman run --rm left containers\n" + r.describe())

    def test_run_under_a_terminal(self):
        rc, out = run_in_pty(self.p.argv("--runtime", self.p.kern_oci, "run", "--rm", "-it", IMAGE,
                                         *self.sh("tty; echo term=$TERM; exit 5")), {"PATH": PATH})
        self.assertEqual(rc, 5, out)
        self.assertRegex(out, r"/dev/pts/\d+\n", "the container's stdin is not a terminal")
        self.assertNotIn("not a tty", out)
        self.assertIn("term=xterm", out)

    def test_exec_into_a_running_container(self):
        name = "ex-" + self.mark
        r = self.krun("-d", "--name", name, IMAGE,
                      *self.sh("echo inside > /tmp/flag; echo ready; while :; do sleep 0.1; done"))
        self.assertExit(r, 0)
        self.wait_logs(name, "ready")
        r = self.p.podman("exec", name, "sh", "-c", "cat /tmp/flag; exit 4")
        self.assertExit(r, 4)
        self.assertEqual(r.out, "inside\n", "exec did not run in the container's file system")
        r = self.p.podman("kill", name)
        self.assertExit(r, 0)
        r = self.p.podman("wait", name)
        self.assertEqual(r.out.strip(), "137", "SIGKILL's exit code\n" + r.describe())
        self.assertExit(self.p.podman("rm", name), 0)

    def test_stop_of_a_box_that_traps_sigterm_is_prompt(self):
        name = "st-" + self.mark
        r = self.krun("-d", "--name", name, IMAGE,
                      *self.sh('trap "echo got-term; exit 0" TERM; echo ready; while :; do sleep 0.1; done'))
        self.assertExit(r, 0)
        self.wait_logs(name, "ready")
        t0 = time.monotonic()
        r = self.p.podman("stop", "-t", "10", name)
        took = time.monotonic() - t0
        self.assertExit(r, 0)
        self.assertLess(took, 5, "podman stop waited for its SIGKILL: SIGTERM did not reach the trap")
        r = self.p.podman("inspect", "--format", "{{.State.ExitCode}}", name)
        self.assertEqual(r.out.strip(), "0", "the trap's exit code\n" + r.describe())
        self.assertIn("got-term", self.p.podman("logs", name).out)
        self.assertExit(self.p.podman("rm", name), 0)

    def test_logs_of_a_finished_container(self):
        name = "lg-" + self.mark
        r = self.krun("--name", name, IMAGE, *self.sh("echo out-line; echo err-line >&2; exit 2"))
        self.assertExit(r, 2)
        r = self.p.podman("logs", name)
        self.assertExit(r, 0)
        self.assertIn("out-line", r.out)
        self.assertIn("err-line", r.out + r.err)
        self.assertExit(self.p.podman("rm", name), 0)

    def test_engine_killed_between_create_and_start_leaves_nothing(self):
        name = "kl-" + self.mark
        r = self.p.podman("--runtime", self.p.kern_oci, "create", "--name", name, IMAGE, *self.sh("sleep 100"))
        self.assertExit(r, 0)
        self.assertExit(self.p.podman("--runtime", self.p.kern_oci, "init", name), 0)  # create, not start
        r = self.p.podman("inspect", "--format", "{{.Id}} {{.State.ConmonPid}} {{.State.Pid}} {{.State.Status}}", name)
        cid, conmon, pid, status = r.out.split()
        self.assertEqual(status, "initialized", r.describe())
        self.assertFalse(is_gone(int(pid)), "no created container process to begin with")
        os.kill(int(conmon), signal.SIGKILL)  # the engine's monitor, killed between create and start
        self.assertExit(self.p.podman("rm", "-f", name), 0)
        end = time.monotonic() + 3
        while not is_gone(int(pid)) and time.monotonic() < end:
            time.sleep(0.05)
        self.assertTrue(is_gone(int(pid)), "the created container's process outlived podman rm -f")
        self.assertFalse(os.path.exists(os.path.join(self.p.xdg_run, "kern-oci", cid)), "kern-oci state left")
        self.assertEqual(self.p.podman("ps", "-aq").out.strip(), "")

    def test_runtime_named_in_containers_conf(self):
        r = self.p.podman("--runtime", "kern", "run", "--rm", IMAGE, *self.sh("echo by-name; exit 6"))
        self.assertExit(r, 6)
        self.assertEqual(r.out, "by-name\n")

    def test_tmpfs_and_the_runtime_version(self):
        # podman adds tmpcopyup to every tmpfs (--tmpfs, --read-only's, --mount type=tmpfs);
        # runc, where podman runs it here, is the control.
        script = "cat /etc/hostname >/dev/null; ls /etc/passwd /x && echo tmpfs-ok"
        runc = shutil.which("runc")
        theirs = self.p.podman("--runtime", runc, "run", "--rm", "--tmpfs", "/x", IMAGE, *self.sh(script)) \
            if runc else None
        r = self.krun("--rm", "--tmpfs", "/x", IMAGE, *self.sh(script))
        self.assertExit(r, 0, "podman --tmpfs" + ("" if theirs is None else " (runc: exit %s)" % theirs.rc))
        self.assertIn("tmpfs-ok", r.out)
        r = self.krun("--rm", "--read-only", IMAGE, *self.sh("touch /tmp/w && echo tmp-writable"))
        self.assertExit(r, 0, "podman --read-only (its /tmp, /var/tmp, /run are tmpfs with tmpcopyup)")
        self.assertIn("tmp-writable", r.out)
        # podman info reads the runtime's --version: its first line is the version shown.
        info = self.p.podman("--runtime", self.p.kern_oci, "info", "--format", "{{.Host.OCIRuntime.Version}}")
        self.assertExit(info, 0)
        self.assertTrue(info.out.startswith("kern-oci version "), info.describe())


# --------------------------------------------------------------------------------------------
# containerd as root


class Containerd:
    """containerd on a socket, root and state dir of its own, the image imported once."""

    def __init__(self, s):
        self.top = os.path.join(s.tmp, "containerd")
        os.mkdir(self.top, 0o700)
        self.sock = os.path.join(self.top, "c.sock")
        self.kern_root = os.path.join(self.top, "kern-oci-root")  # made by kern-oci (as runc does)
        self.kern_oci = s.kern_oci
        self.config = os.path.join(self.top, "config.toml")
        with open(self.config, "w") as f:
            f.write('version = 2\nroot = "%s/root"\nstate = "%s/state"\n'
                    '[grpc]\n  address = "%s"\n[ttrpc]\n  address = "%s.ttrpc"\n'
                    # The man page's CRI runtime entry (what kubelet's RuntimeClass handler names).
                    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kern]\n'
                    '  runtime_type = "io.containerd.runc.v2"\n'
                    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kern.options]\n'
                    '  BinaryName = "%s"\n'
                    % (self.top, self.top, self.sock, self.sock, self.kern_oci))
        self.log = open(os.path.join(self.top, "containerd.log"), "w")
        self.proc = subprocess.Popen(["containerd", "--config", self.config], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd="/",
                                     start_new_session=True, env={"PATH": PATH})
        self.problem = None
        end = time.monotonic() + 30
        while True:
            r = self.ctr("version", timeout=10)
            if r.rc == 0:
                break
            if self.proc.poll() is not None or time.monotonic() > end:
                self.problem = "containerd did not come up\n%s\n%s" % (r.describe(), self.log_text())
                return
            time.sleep(0.2)
        r = self.ctr("images", "import", s.archive, timeout=120)
        if r.rc != 0:
            self.problem = "ctr images import failed\n" + r.describe()

    def log_text(self):
        with open(os.path.join(self.top, "containerd.log")) as f:
            return f.read()[-4000:]

    def ctr(self, *args, timeout=60):
        return run(["ctr", "--address", self.sock, "--namespace", NS] + list(args), timeout=timeout)

    def run_args(self):
        return ["run", "--runtime", "io.containerd.runc.v2", "--runc-binary", self.kern_oci,
                "--runc-root", self.kern_root]

    def argv(self, *args):
        return ["ctr", "--address", self.sock, "--namespace", NS] + list(args)

    def cleanup(self):
        for cid in self.ctr("containers", "ls", "-q").out.split():
            self.ctr("task", "kill", "-s", "SIGKILL", cid)
            self.ctr("task", "delete", "-f", cid)
            self.ctr("containers", "rm", cid)
        self.ctr("images", "rm", IMAGE)
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        # Shims of this containerd (they name its address) that outlived it.
        for pid in pids_with_marker(self.sock):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        with open("/proc/self/mountinfo") as f:
            mounts = [line.split()[4] for line in f]
        for m in sorted((m for m in mounts if m.startswith(self.top + "/")), key=len, reverse=True):
            subprocess.run(["umount", "-l", m], capture_output=True)
        shutil.rmtree(self.top, ignore_errors=True)


_containerd = None


def cgroup_mounts():
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f if " - cgroup" in line]


class ContainerdTest(EngineCase):

    def setUp(self):
        super().setUp()
        global _containerd
        self.require("root", os.geteuid() == 0, "containerd runs the runtime as root: run this test as root")
        missing = [t for t in ("containerd", "ctr", "containerd-shim-runc-v2") if not shutil.which(t)]
        self.require("containerd", not missing, "not installed: %s (apt-get install containerd)" % " ".join(missing))
        if _containerd is None:
            _containerd = Containerd(self.s)
        self.c = _containerd
        if self.c.problem:
            self.fail(self.c.problem)
        self.mark = marker()
        self.cid = "c-" + self.mark

    def tearDown(self):
        # ctr keeps the container record when its task failed to start: removed first, then
        # kern-oci's own leftovers are looked for.
        if self.cid in self.c.ctr("containers", "ls", "-q").out.split():
            self.c.ctr("task", "kill", "-s", "SIGKILL", self.cid)
            self.c.ctr("task", "delete", "-f", self.cid)
            self.c.ctr("containers", "rm", self.cid)
        self.assertNoProcesses(self.mark)
        # The shim calls kern-oci with --root <runc root>/<namespace>.
        self.assertFalse(os.path.exists(os.path.join(self.c.kern_root, NS, self.cid)),
                         "kern-oci's state of the container is left")
        left = [os.path.join(m, NS, self.cid) for m in cgroup_mounts()
                if os.path.exists(os.path.join(m, NS, self.cid))]
        self.assertEqual(left, [], "cgroup directories of the container are left")

    def sh(self, script):
        return ["sh", "-c", script, self.mark]

    def test_config_has_the_cri_runtime_entry(self):
        r = run(["containerd", "--config", self.c.config, "config", "dump"])
        self.assertExit(r, 0)
        self.assertIn('BinaryName = "%s"' % self.c.kern_oci, r.out)
        self.assertIn('[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kern]', r.out)

    def test_run_rm_exit_codes(self):
        r = self.c.ctr(*self.c.run_args(), "--rm", IMAGE, self.cid, *self.sh("echo hello-from-kern; exit 3"))
        self.assertExit(r, 3)
        self.assertEqual(r.out, "hello-from-kern\n")
        r = self.c.ctr(*self.c.run_args(), "--rm", IMAGE, self.cid, *self.sh("exit 0"))
        self.assertExit(r, 0)
        self.assertNotIn(self.cid, self.c.ctr("containers", "ls", "-q").out.split(), "ctr run --rm left it")

    def test_missing_command_is_refused_and_nothing_is_left(self):
        r = self.c.ctr(*self.c.run_args(), "--rm", IMAGE, self.cid, "/bin/no-such-command-" + self.mark)
        self.assertNotEqual(r.rc, 0, r.describe())
        self.assertIn("no-such-command-" + self.mark, r.err)
        self.c.ctr("containers", "rm", self.cid)  # ctr leaves the container record when the task fails

    def test_run_under_a_terminal(self):
        rc, out = run_in_pty(self.c.argv(*self.c.run_args(), "--rm", "-t", IMAGE, self.cid,
                                          *self.sh("tty; exit 4")), {"PATH": PATH, "TERM": "xterm"}, timeout=30)
        self.assertEqual(rc, 4, out)
        self.assertRegex(out, r"/dev/pts/\d+\n")

    def test_task_exec_kill_delete(self):
        r = self.c.ctr(*self.c.run_args(), "-d", IMAGE, self.cid,
                       *self.sh('trap "exit 7" TERM; echo inside > /tmp/flag; while :; do sleep 0.1; done'))
        self.assertExit(r, 0)
        end = time.monotonic() + 15
        while True:
            r = self.c.ctr("task", "exec", "--exec-id", "e1-" + self.mark[-6:], self.cid, "cat", "/tmp/flag")
            if r.rc == 0 or time.monotonic() > end:
                break
            time.sleep(0.3)
        self.assertExit(r, 0)
        self.assertEqual(r.out, "inside\n", "exec did not run in the container's file system")
        r = self.c.ctr("task", "exec", "--exec-id", "e2-" + self.mark[-6:], self.cid, "sh", "-c", "exit 9")
        self.assertExit(r, 9, "the exec'd process's exit code")
        self.assertExit(self.c.ctr("task", "kill", self.cid), 0)  # SIGTERM, trapped: exit 7
        end = time.monotonic() + 10
        while "STOPPED" not in self.task_status() and time.monotonic() < end:
            time.sleep(0.1)
        self.assertIn("STOPPED", self.task_status(), "SIGTERM did not end the task")
        r = self.c.ctr("task", "delete", self.cid)
        self.assertExit(r, 0)
        self.assertIn("exit code 7", r.err, "the trap's exit code\n" + r.describe())
        self.assertExit(self.c.ctr("containers", "rm", self.cid), 0)

    def test_sigkill_then_delete(self):
        r = self.c.ctr(*self.c.run_args(), "-d", IMAGE, self.cid, *self.sh("while :; do sleep 0.1; done"))
        self.assertExit(r, 0)
        self.assertExit(self.c.ctr("task", "kill", "-s", "SIGKILL", self.cid), 0)
        end = time.monotonic() + 10
        while "STOPPED" not in self.task_status() and time.monotonic() < end:
            time.sleep(0.1)
        r = self.c.ctr("task", "delete", self.cid)
        self.assertExit(r, 0)
        self.assertIn("exit code 137", r.err, r.describe())
        self.assertExit(self.c.ctr("containers", "rm", self.cid), 0)

    def task_status(self):
        for line in self.c.ctr("task", "ls").out.splitlines():
            f = line.split()
            if f and f[0] == self.cid:
                return f[-1]
        return ""


def tearDownModule():
    if _podman is not None:
        _podman.cleanup()
    if _containerd is not None:
        _containerd.cleanup()
    if _shared is not None:
        shutil.rmtree(_shared.tmp, ignore_errors=True)


def main():
    """Like kerntest.main's summary, without dropping root (the containerd part needs it)."""
    script = os.path.basename(sys.argv[0])
    print("=== kerntest %s: pid %d, uid %d, required=%s" % (
        script, os.getpid(), os.getuid(), ",".join(sorted(kerntest.required_names())) or "(none)"), flush=True)
    names = [a for a in sys.argv[1:] if not a.startswith("-")]
    mod = sys.modules["__main__"]
    loader = unittest.TestLoader()
    suite = loader.loadTestsFromNames(names, mod) if names else loader.loadTestsFromModule(mod)
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    for test, reason in result.skipped:
        print("SKIPPED %s: %s" % (test.id(), reason))
    ok = result.wasSuccessful()
    bad = len(result.failures) + len(result.errors)
    print("KERNTEST %s: %s ran=%d failed=%d skipped=%d" % (script, "OK" if ok else "FAILED", result.testsRun,
                                                          bad, len(result.skipped)), flush=True)
    if not ok:
        sys.exit(1)
    sys.exit(77 if result.testsRun and len(result.skipped) == result.testsRun else 0)


if __name__ == "__main__":
    main()
