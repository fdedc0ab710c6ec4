"""kern as an OCI runtime, running containers: create holds the process before its exec, start
releases it, state follows (created, running, stopped), delete leaves nothing; config.json is
the policy (capabilities, seccomp, noNewPrivileges, rlimits, hooks, terminal over
--console-socket), checked inside the container with a control outside or in a second config.
Rootless: the tests run as the unprivileged user, with `kern oci spec --rootless` bundles."""

import ctypes
import errno
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import fuse_fs  # noqa: E402
import kerntest  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Containers outlive `kern oci create`, as with an engine: the test reaps them, as conmon
    or a containerd shim would."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl PR_SET_CHILD_SUBREAPER")


def wait_pid(pid, timeout=10):
    """The exit code of a re-parented container process (128+N for a signal N)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            got, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if got == pid:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
        time.sleep(0.01)
    raise AssertionError("container process %d did not exit within %ss" % (pid, timeout))


def read_terminal(master, enough=lambda data: False, timeout=10):
    """What the container writes on its terminal: until enough(data), its end, or timeout."""
    data = b""
    deadline = time.monotonic() + timeout
    while not enough(data) and time.monotonic() < deadline:
        try:
            chunk = os.read(master, 1024)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


def cap_bits(names):
    numbers = {"CAP_CHOWN": 0, "CAP_KILL": 5, "CAP_NET_BIND_SERVICE": 10, "CAP_SYS_CHROOT": 18}
    v = 0
    for n in names:
        v |= 1 << numbers[n]
    return v


class OciBundleCase(kerntest.KernTestCase):
    """A rootless bundle of the test rootfs and the verbs around it (test_oci_verbs and
    test_cve_oci use it too; spec_args () makes test_cve_oci_root's bundles rootful)."""

    spec_args = ("--rootless",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        become_subreaper()

    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="oci-", dir=self.s.work)
        self.root = os.path.join(self.dir, "state")
        self.bundle = os.path.join(self.dir, "bundle")
        os.mkdir(self.bundle)
        self.assertExit(self.kern("oci", "spec", *self.spec_args, "--bundle", self.bundle), 0)
        with open(os.path.join(self.bundle, "config.json")) as f:
            self.cfg = json.load(f)
        self.cfg["root"]["path"] = self.s.rootfs
        self.cfg["process"]["terminal"] = False
        self.ids = []

    def tearDown(self):
        for cid in self.ids:
            self.oci("delete", "--force", cid)
        # Every container gone: no state under --root. The compiled seccomp programs stay, by
        # design (kern-oci(1), SECCOMP): a directory of the caller's, 0700, of 0600 files only.
        if os.path.isdir(self.root):
            left = sorted(os.listdir(self.root))
            cache = os.path.join(self.root, "@seccomp-cache")
            if "@seccomp-cache" in left:
                left.remove("@seccomp-cache")
                st = os.lstat(cache)
                self.assertTrue(stat.S_ISDIR(st.st_mode) and st.st_mode & 0o777 == 0o700, oct(st.st_mode))
                for n in os.listdir(cache):
                    e = os.lstat(os.path.join(cache, n))
                    self.assertTrue(stat.S_ISREG(e.st_mode) and e.st_mode & 0o777 == 0o600, (n, oct(e.st_mode)))
            self.assertEqual(left, [], "state left under --root")

    def oci(self, *args, **kw):
        return self.kern("oci", "--root", self.root, *args, **kw)

    def write_cfg(self, **process):
        self.cfg["process"].update(process)
        with open(os.path.join(self.bundle, "config.json"), "w") as f:
            json.dump(self.cfg, f)

    def create(self, cid, *extra, stdout=None):
        """create with the container's stdout on a file (the engine's pipe); returns its path."""
        self.ids.append(cid)
        out = os.path.join(self.dir, cid + ".out")
        # Files, not pipes: the container's process keeps create's stdio (an engine's pipes),
        # so a pipe would not see its end when create exits.
        with open(out, "wb") as f, tempfile.TemporaryFile() as err:
            argv = [self.s.kern, "oci", "--root", self.root, "create", "--bundle", self.bundle] + list(extra) + [cid]
            p = subprocess.run(argv, env=self.base_env(), stdin=subprocess.DEVNULL, stdout=f, stderr=err, timeout=30)
            err.seek(0)
            self.assertEqual(p.returncode, 0, "create failed: %s" % err.read().decode())
        return out

    def state(self, cid):
        run = self.oci("state", cid)
        self.assertExit(run, 0)
        return json.loads(run.out)

    def run_container(self, cid, args, **process):
        self.write_cfg(args=args, **process)
        out = self.create(cid)
        pid = self.state(cid)["pid"]
        self.assertExit(self.oci("start", cid), 0)
        code = wait_pid(pid)
        with open(out) as f:
            text = f.read()
        self.assertExit(self.oci("delete", cid), 0)
        self.ids.remove(cid)
        return code, text

    def running(self, cid, **process):
        self.write_cfg(args=["sh", "-c", "echo up; exec sleep 60"], **process)
        self.create(cid)
        self.assertExit(self.oci("start", cid), 0)
        return self.state(cid)["pid"]

    def status_line(self, text, key):
        for line in text.splitlines():
            if line.startswith(key + ":"):
                return line.split(":", 1)[1].strip()
        self.fail("no %s line in %r" % (key, text))


class OciRuntimeTest(OciBundleCase):

    # ---- lifecycle

    def test_create_holds_the_process_until_start(self):
        self.write_cfg(args=["sh", "-c", "echo ran; exit 3"])
        out = self.create("c1")
        st = self.state("c1")
        self.assertEqual(st["status"], "created")
        pid = st["pid"]
        # The pid is the container's, in namespaces of its own, and the process has not run.
        self.assertNotEqual(os.readlink("/proc/%d/ns/pid" % pid), os.readlink("/proc/self/ns/pid"))
        self.assertNotEqual(os.readlink("/proc/%d/ns/mnt" % pid), os.readlink("/proc/self/ns/mnt"))
        time.sleep(0.2)
        with open(out) as f:
            self.assertEqual(f.read(), "", "the process ran before start")
        self.assertExit(self.oci("start", "c1"), 0)
        self.assertEqual(wait_pid(pid), 3)
        with open(out) as f:
            self.assertEqual(f.read(), "ran\n")
        self.assertEqual(self.state("c1")["status"], "stopped")
        again = self.oci("start", "c1")
        self.assertExit(again, 1)
        self.assertIn("stopped", again.err)
        self.assertExit(self.oci("delete", "c1"), 0)
        self.ids.remove("c1")
        self.assertExit(self.oci("state", "c1"), 1)

    def test_running_state_kill_delivers_the_signal_then_delete(self):
        self.write_cfg(args=["sh", "-c", "trap 'echo got-term; exit 7' TERM; echo up; while :; do sleep 0.05; done"])
        out = self.create("c2")
        pid = self.state("c2")["pid"]
        self.assertExit(self.oci("start", "c2"), 0)
        self.assertEqual(self.state("c2")["status"], "running")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with open(out) as f:
                if "up" in f.read():
                    break
            time.sleep(0.02)
        refused = self.oci("delete", "c2")
        self.assertExit(refused, 1)  # a running container is not deleted without --force
        self.assertExit(self.oci("kill", "c2", "TERM"), 0)
        self.assertEqual(wait_pid(pid), 7)
        with open(out) as f:
            self.assertIn("got-term", f.read())
        self.assertExit(self.oci("delete", "c2"), 0)
        self.ids.remove("c2")

    def test_a_missing_or_unexecutable_program_fails_create_in_the_words_engines_read(self):
        for cid, args, words in (("c3", ["/no/such/program"], "no such file or directory"),
                                 ("c3b", ["nosuchcommand"], "executable file not found in $PATH"),
                                 ("c3c", ["/bin/not-executable"], "permission denied")):
            self.write_cfg(args=args)
            run = self.oci("create", "--bundle", self.bundle, cid)
            self.assertExit(run, 1)
            self.assertIn("kern: error: exec: \"%s\": %s" % (args[0], words), run.err)
            self.assertFalse(os.path.exists(os.path.join(self.root, cid)))

    def test_execve_failure_after_create_is_starts_error(self):
        # Found at create, gone by start: start reports the execve's failure.
        self.cfg["root"]["readonly"] = False
        tree = os.path.join(self.dir, "tree")
        subprocess.run(["cp", "-a", self.s.rootfs, tree], check=True)
        self.cfg["root"]["path"] = tree
        with open(os.path.join(tree, "bin/vanishing"), "w") as f:
            f.write("#!/bin/sh\necho ran\n")
        os.chmod(os.path.join(tree, "bin/vanishing"), 0o755)
        self.write_cfg(args=["/bin/vanishing"])
        self.create("c3d")
        pid = self.state("c3d")["pid"]
        os.unlink(os.path.join(tree, "bin/vanishing"))
        run = self.oci("start", "c3d")
        self.assertExit(run, 1)
        self.assertIn("kern: error: execve", run.err)
        self.assertIn("/bin/vanishing", run.err)
        self.assertEqual(wait_pid(pid), 127)

    def test_engine_killed_between_create_and_start_delete_force_leaves_nothing(self):
        self.write_cfg(args=["sh", "-c", "echo never"])
        self.create("c4", "--pid-file", os.path.join(self.dir, "c4.pid"))
        with open(os.path.join(self.dir, "c4.pid")) as f:
            text = f.read()
        self.assertEqual(text, str(self.state("c4")["pid"]), "pid file: the decimal pid, no newline")
        pid = int(text)
        # The engine is gone (nobody will start it): delete --force kills the held process.
        self.assertExit(self.oci("delete", "--force", "c4"), 0)
        self.ids.remove("c4")
        self.assertIsNotNone(wait_pid(pid))
        self.assertFalse(os.path.exists("/proc/%d" % pid))
        self.assertFalse(os.path.exists(os.path.join(self.root, "c4")))

    def test_run_waits_and_gives_the_exit_code(self):
        self.write_cfg(args=["sh", "-c", "exit 42"])
        run = self.oci("run", "--bundle", self.bundle, "c5")
        self.assertExit(run, 42)
        self.assertFalse(os.path.exists(os.path.join(self.root, "c5")))

    def test_bad_bundle_is_an_error_and_leaves_nothing(self):
        self.cfg["root"]["path"] = os.path.join(self.dir, "missing")
        self.write_cfg(args=["true"])
        run = self.oci("create", "--bundle", self.bundle, "c6")
        self.assertExit(run, 1)
        self.assertIn("kern: error: ", run.err)
        self.assertIn("root.path", run.err)
        self.assertFalse(os.path.exists(os.path.join(self.root, "c6")))

    def test_preserve_fds_passes_exactly_those(self):
        r, w = os.pipe()
        self.write_cfg(args=["sh", "-c", "echo through-fd3 >&3; ls /proc/self/fd | sort -n | tr '\\n' ' '"])
        self.ids.append("c7")
        out = os.path.join(self.dir, "c7.out")
        with open(out, "wb") as f, tempfile.TemporaryFile() as err:
            # The engine's fd 3 is the pipe; the pipe's own number is passed to create too, and
            # must not reach the process.
            p = subprocess.run(["sh", "-c", 'exec "$0" "$@" 3>&%d' % w, self.s.kern, "oci", "--root", self.root,
                                "create", "--bundle", self.bundle, "--preserve-fds", "1", "c7"],
                               env=self.base_env(), stdout=f, stderr=err, pass_fds=(w,), timeout=30)
            err.seek(0)
            self.assertEqual(p.returncode, 0, err.read().decode())
        os.close(w)
        pid = self.state("c7")["pid"]
        self.assertExit(self.oci("start", "c7"), 0)
        wait_pid(pid)
        self.assertEqual(os.read(r, 100), b"through-fd3\n")
        os.close(r)
        with open(out) as f:
            fds = f.read().split()
        # stdio, fd 3, and the one ls opens for /proc/self/fd.
        self.assertEqual(fds[:4], ["0", "1", "2", "3"])
        self.assertLessEqual(len(fds), 5)

    def test_report_fd_annotation_gets_the_created_record(self):
        r, w = os.pipe()
        self.cfg["annotations"] = {"io.kern.report-fd": str(w)}
        self.write_cfg(args=["true"])
        self.ids.append("c15")
        with tempfile.TemporaryFile() as out:
            p = subprocess.run([self.s.kern, "oci", "--root", self.root, "create", "--bundle", self.bundle, "c15"],
                               env=self.base_env(), stdout=out, stderr=out, pass_fds=(w,), timeout=30)
            out.seek(0)
            self.assertEqual(p.returncode, 0, out.read().decode())
        os.close(w)
        rec = json.loads(os.read(r, 65536).decode().splitlines()[0])
        os.close(r)
        self.assertEqual(rec["event"], "created")
        self.assertEqual(rec["pid"], self.state("c15")["pid"])
        # This host kind has no delegated cgroup v2 for the test user: the record says so.
        self.assertIn("cgroup", rec["enforcement"])
        self.assertEqual(json.loads(self.state("c15")["annotations"]["io.kern.enforcement"]), rec["enforcement"])

    # ---- exec: a new process with the container's answers

    def test_exec_gives_the_containers_answers(self):
        self.cfg["hostname"] = "exec-host"
        self.cfg["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW",
                                        "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO",
                                                      "errnoRet": 1}]}
        caps = {k: ["CAP_KILL", "CAP_CHOWN"] for k in ("bounding", "effective", "permitted")}
        init = self.running("x1", capabilities=caps)
        probe = "hostname; grep -E '^(CapBnd|CapEff|Seccomp):' /proc/self/status; " \
                "mkdir /dev/shm/d && echo made || echo refused; readlink /proc/self/ns/pid; exit 6"
        run = self.oci("exec", "x1", "sh", "-c", probe)
        self.assertExit(run, 6)
        lines = run.out.splitlines()
        self.assertEqual(lines[0], "exec-host")
        self.assertEqual(int(self.status_line(run.out, "CapBnd"), 16), cap_bits(caps["bounding"]))
        self.assertEqual(int(self.status_line(run.out, "CapEff"), 16), cap_bits(caps["effective"]))
        self.assertEqual(self.status_line(run.out, "Seccomp"), "2")
        self.assertIn("refused", lines)
        # The state's pid is the container's program itself (pid 1 of its namespace, as runc's).
        self.assertEqual(lines[-1], os.readlink("/proc/%d/ns/pid" % init), "not in the container's pid namespace")
        # Control: outside the container this user may mkdir, and its pid namespace differs.
        os.mkdir(os.path.join(self.dir, "d"))
        self.assertNotEqual(os.readlink("/proc/self/ns/pid"), lines[-1])

    def test_exec_process_document_detach_and_pid_file(self):
        self.running("x2")
        doc = dict(self.cfg["process"], args=["sh", "-c", "sleep 0.5; exit 9"], terminal=False)
        path = os.path.join(self.dir, "process.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        pid_file = os.path.join(self.dir, "x2.exec.pid")
        run = self.oci("exec", "--process", path, "--detach", "--pid-file", pid_file, "x2")
        self.assertExit(run, 0)
        with open(pid_file) as f:
            pid = int(f.read())
        # It outlived the verb and is this subreaper's to reap, as conmon's or a shim's would be.
        self.assertEqual(wait_pid(pid), 9)

    def test_exec_into_a_stopped_container_is_refused(self):
        self.write_cfg(args=["true"])
        self.create("x3")
        pid = self.state("x3")["pid"]
        self.assertExit(self.oci("start", "x3"), 0)
        wait_pid(pid)
        run = self.oci("exec", "x3", "true")
        self.assertExit(run, 255)  # exec's own failure, as runc's
        self.assertIn("stopped", run.err)

    # ---- config.json is the policy: the same answers as the config asks

    def test_capability_sets_are_the_configs(self):
        # As runtime-tools checks them: every set as given (the process is uid 0 of its user
        # namespace, so its execve keeps what the bounding set allows). Two different configs,
        # so the sets cannot be kern's defaults.
        for cid, names in (("c8", ["CAP_KILL", "CAP_CHOWN"]), ("c8b", ["CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT"])):
            caps = {k: names for k in ("bounding", "effective", "permitted", "inheritable", "ambient")}
            code, text = self.run_container(cid, ["cat", "/proc/self/status"], capabilities=caps)
            self.assertEqual(code, 0, text)
            for line in ("CapBnd", "CapEff", "CapPrm", "CapInh", "CapAmb"):
                self.assertEqual(int(self.status_line(text, line), 16), cap_bits(names), "%s %s" % (cid, line))
        # An effective set beyond the permitted one cannot be had: start says so (the kernel's
        # capset refuses it), the process never runs.
        caps = {"bounding": ["CAP_KILL", "CAP_CHOWN"], "effective": ["CAP_KILL", "CAP_CHOWN"],
                "permitted": ["CAP_KILL"], "inheritable": [], "ambient": []}
        self.write_cfg(args=["echo", "ran"], capabilities=caps)
        out = self.create("c8c")
        pid = self.state("c8c")["pid"]
        run = self.oci("start", "c8c")
        self.assertExit(run, 1)
        self.assertIn("set ids and capabilities", run.err)
        wait_pid(pid)
        with open(out) as f:
            self.assertEqual(f.read(), "")

    def test_seccomp_from_the_config_refuses_what_it_lists(self):
        self.cfg["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
                                        "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO",
                                                      "errnoRet": 1}]}
        code, text = self.run_container(
            "c9", ["sh", "-c", "grep ^Seccomp: /proc/self/status; mkdir /dev/shm/x && echo made || echo refused"])
        self.assertEqual(code, 0)
        self.assertIn("refused", text)
        self.assertIn("Seccomp:\t2", text)
        # Control: the same container without the filter may mkdir.
        del self.cfg["linux"]["seccomp"]
        code, text = self.run_container("c9b", ["sh", "-c", "mkdir /dev/shm/x && echo made || echo refused"])
        self.assertIn("made", text)

    def test_no_new_privileges_follows_the_config(self):
        code, text = self.run_container("c10", ["cat", "/proc/self/status"], noNewPrivileges=True)
        self.assertEqual(self.status_line(text, "NoNewPrivs"), "1")
        code, text = self.run_container("c10b", ["cat", "/proc/self/status"], noNewPrivileges=False)
        self.assertEqual(self.status_line(text, "NoNewPrivs"), "0")

    def test_rlimits_user_and_hostname(self):
        self.cfg["hostname"] = "oci-host"
        code, text = self.run_container(
            "c11", ["sh", "-c", "ulimit -n; hostname; id -u; id -g; cat /proc/self/status"],
            rlimits=[{"type": "RLIMIT_NOFILE", "soft": 77, "hard": 88}])
        lines = text.splitlines()
        self.assertEqual(lines[0], "77")
        self.assertEqual(lines[1], "oci-host")
        self.assertEqual(lines[2:4], ["0", "0"])

    def test_hooks_get_the_state_on_stdin(self):
        hook_out = os.path.join(self.dir, "hooks.log")
        hook = {"path": "/bin/sh", "args": ["sh", "-c", "cat >> %s; echo >> %s" % (hook_out, hook_out)]}
        self.cfg["hooks"] = {"prestart": [hook], "poststart": [hook], "poststop": [hook]}
        self.cfg["annotations"] = {"org.example": "hook stdin"}
        code, text = self.run_container("c12", ["true"])
        with open(hook_out) as f:
            states = [json.loads(l) for l in f.read().splitlines() if l.strip()]
        self.assertEqual([s["status"] for s in states], ["created", "running", "stopped"])
        self.assertTrue(all(s["id"] == "c12" and s["annotations"]["org.example"] == "hook stdin" for s in states))
        self.assertGreater(states[0]["pid"], 0)

    def test_the_containers_network_namespace_is_there_for_its_hooks_sysfs_and_start(self):
        # kern-oci makes a new network namespace beside the root while the first mounts are made
        # and joins it before the first step that needs it: a createRuntime hook, which looks at
        # /proc/PID/ns/net as network hooks do, the sysfs mount and the held process all see the
        # container's own namespace, never the creator's.
        if not any(n["type"] == "network" and not n.get("path") for n in self.cfg["linux"]["namespaces"]):
            self.cfg["linux"]["namespaces"].append({"type": "network"})
        for m in self.cfg["mounts"]:
            if m["destination"] == "/sys":
                m.update(type="sysfs", source="sysfs", options=["nosuid", "noexec", "nodev", "ro"])
        seen = os.path.join(self.dir, "hook-netns")
        script = ("import json, os, sys; s = json.load(sys.stdin); "
                  "open(%r, 'w').write(os.readlink('/proc/%%d/ns/net' %% s['pid']))" % seen)
        self.cfg["hooks"] = {"createRuntime": [{"path": sys.executable, "args": ["python3", "-c", script]}]}
        self.write_cfg(args=["sh", "-c", "readlink /proc/self/ns/net; ls /sys/class/net"])
        out = self.create("c14")
        pid = self.state("c14")["pid"]
        held = os.readlink("/proc/%d/ns/net" % pid)
        self.assertExit(self.oci("start", "c14"), 0)
        wait_pid(pid)
        with open(out) as f:
            lines = f.read().split()
        with open(seen) as f:
            at_hook = f.read()
        host = os.readlink("/proc/self/ns/net")
        self.assertNotEqual(held, host)  # the control: the namespace is not the creator's
        self.assertEqual(at_hook, held)
        self.assertEqual(lines[0], held)
        self.assertEqual(lines[1:], ["lo"], "sysfs shows the container's interfaces only")
        self.assertTrue(any(n != "lo" for n in os.listdir("/sys/class/net")), "the host has interfaces other than lo")

    def test_a_net_sysctl_is_written_in_the_containers_network_namespace(self):
        # With no sysfs or cgroup mount (types that need it) and no hook, the sysctl is the first
        # step that needs the container's own network namespace: the value is the container's,
        # the host's stays.
        if not any(n["type"] == "network" and not n.get("path") for n in self.cfg["linux"]["namespaces"]):
            self.cfg["linux"]["namespaces"].append({"type": "network"})
        self.cfg["mounts"] = [m for m in self.cfg["mounts"] if m.get("type") in ("proc", "tmpfs", "devpts", "mqueue")]
        self.cfg.pop("hooks", None)
        knob = "/proc/sys/net/ipv4/ip_unprivileged_port_start"
        with open(knob) as f:
            host_before = f.read().strip()
        value = "1023" if host_before != "1023" else "1022"
        self.cfg["linux"]["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": value}
        code, text = self.run_container("c15", ["sh", "-c", "readlink /proc/self/ns/net; cat " + knob])
        self.assertEqual(code, 0, text)
        ns, inside = text.split()
        with open(knob) as f:
            host_after = f.read().strip()
        self.assertNotEqual(ns, os.readlink("/proc/self/ns/net"))
        self.assertEqual(inside, value)
        self.assertEqual(host_after, host_before, "the host's value is untouched")

    def test_delete_runs_the_config_create_parsed_not_a_later_edit_of_the_bundle(self):
        # A createRuntime hook rewrites the bundle's config.json while create runs, giving it
        # another poststop hook: delete runs the poststop hook of the document create parsed.
        marker = os.path.join(self.dir, "poststop")
        cfg_path = os.path.join(self.bundle, "config.json")
        edit = ("import json; p = %r; c = json.load(open(p)); "
                "c['hooks']['poststop'] = [{'path': '/bin/sh', 'args': ['sh', '-c', 'echo edited >> %s']}]; "
                "json.dump(c, open(p, 'w'))" % (cfg_path, marker))
        self.cfg["hooks"] = {
            "createRuntime": [{"path": sys.executable, "args": ["python3", "-c", edit]}],
            "poststop": [{"path": "/bin/sh", "args": ["sh", "-c", "echo original >> %s" % marker]}],
        }
        code, _ = self.run_container("c16", ["true"])
        self.assertEqual(code, 0)
        with open(cfg_path) as f:
            self.assertIn("edited", f.read(), "the hook did edit the bundle (the control)")
        with open(marker) as f:
            self.assertEqual(f.read(), "original\n")

    def test_start_and_delete_read_the_kept_config_only_for_hooks(self):
        # Without startContainer, poststart or poststop hooks, start and delete as processes of
        # their own (the engines' way) leave the kept config.json unread: a broken copy does not
        # stop them. With a poststart hook (the control), start reads it and refuses the copy.
        def break_kept(cid):
            with open(os.path.join(self.root, cid, "config.json"), "w") as f:
                f.write("{not json")

        self.cfg.pop("hooks", None)
        self.write_cfg(args=["true"])
        self.create("c17")
        pid = self.state("c17")["pid"]
        break_kept("c17")
        self.assertExit(self.oci("start", "c17"), 0)
        wait_pid(pid)
        self.assertExit(self.oci("delete", "c17"), 0)
        self.ids.remove("c17")
        self.cfg["hooks"] = {"poststart": [{"path": "/bin/true"}]}
        self.write_cfg(args=["true"])
        self.create("c18")
        break_kept("c18")
        run = self.oci("start", "c18")
        self.assertNotEqual(run.rc, 0)
        self.assertIn("config.json", run.err)
        # The delete half's control: with a poststop hook delete reads the copy; a broken one
        # still lets the container go, with a warning that its poststop hooks did not run.
        marker = os.path.join(self.dir, "poststop-c19")
        self.cfg["hooks"] = {"poststop": [{"path": "/bin/sh", "args": ["sh", "-c", "echo ran > %s" % marker]}]}
        self.write_cfg(args=["true"])
        self.create("c19")
        pid = self.state("c19")["pid"]
        self.assertExit(self.oci("start", "c19"), 0)
        wait_pid(pid)
        break_kept("c19")
        run = self.oci("delete", "c19")
        self.assertExit(run, 0)
        self.ids.remove("c19")
        self.assertIn("kern: warning: the poststop hooks of \"c19\" do not run", run.err)
        self.assertIn("config.json", run.err)
        self.assertFalse(os.path.exists(marker))
        self.assertFalse(os.path.exists(os.path.join(self.root, "c19")))

    def test_state_on_a_fuse_file_system_without_rename_exchange(self):
        # A --root on bindfs (FUSE 2), a real file system whose renameat2 refuses RENAME_EXCHANGE
        # (EINVAL): the record is rewritten by a rename there, and create, start, state and
        # delete work and leave nothing. The discriminant: the flag fails there and no
        # state.json.tmp is left; the control: in the test's own directory the flag works and
        # the swapped-out record stays as state.json.tmp.
        mnt = fuse_fs.bindfs(self, os.path.join(self.dir, "fuse-src"), os.path.join(self.dir, "fuse"))
        self.assertEqual(fuse_fs.exchange_errno(mnt), errno.EINVAL)
        self.assertEqual(fuse_fs.exchange_errno(self.dir), 0)
        self.write_cfg(args=["sh", "-c", "echo on-fuse"])
        home = self.root
        for cid, root, swapped in (("c20", os.path.join(mnt, "state"), False), ("c21", home, True)):
            self.root = root  # tearDown deletes what is left where it ran
            out = self.create(cid)
            pid = self.state(cid)["pid"]
            self.assertExit(self.oci("start", cid), 0)
            self.assertEqual(wait_pid(pid), 0)
            self.assertEqual(self.state(cid)["status"], "stopped")
            self.assertEqual(os.path.exists(os.path.join(root, cid, "state.json.tmp")), swapped, root)
            with open(out) as f:
                self.assertEqual(f.read(), "on-fuse\n")
            self.assertExit(self.oci("delete", cid), 0)
            self.ids.remove(cid)
            self.assertFalse(os.path.exists(os.path.join(root, cid)))

    def test_a_failing_prestart_hook_fails_create_and_leaves_nothing(self):
        self.cfg["hooks"] = {"prestart": [{"path": "/bin/false"}]}
        self.write_cfg(args=["true"])
        run = self.oci("create", "--bundle", self.bundle, "c13")
        self.assertExit(run, 1)
        self.assertIn("hooks.prestart[0]", run.err)
        self.assertFalse(os.path.exists(os.path.join(self.root, "c13")))

    def test_terminal_goes_over_the_console_socket(self):
        self.write_cfg(args=["sh", "-c", "tty; echo cols=$(stty size)"], terminal=True,
                       consoleSize={"height": 24, "width": 100})
        path = os.path.join(self.dir, "console.sock")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        srv.settimeout(20)
        self.ids.append("c14")
        err = tempfile.TemporaryFile()
        p = subprocess.Popen([self.s.kern, "oci", "--root", self.root, "create", "--bundle", self.bundle,
                              "--console-socket", path, "c14"], env=self.base_env(), stderr=err,
                             stdout=subprocess.DEVNULL)
        conn, _ = srv.accept()
        _, fds, _, _ = socket.recv_fds(conn, 16, 1)
        rc = p.wait(30)
        err.seek(0)
        self.assertEqual(rc, 0, err.read().decode())
        self.assertEqual(len(fds), 1)
        master = fds[0]
        pid = self.state("c14")["pid"]
        self.assertExit(self.oci("start", "c14"), 0)
        data = read_terminal(master, lambda d: b"cols=" in d and d.endswith(b"\n"))
        wait_pid(pid)
        os.close(master)
        text = data.decode(errors="replace")
        self.assertIn("/dev/pts/", text)
        self.assertIn("cols=24 100", text)


if __name__ == "__main__":
    kerntest.main()
