"""kern exec: a new process inside a running box gets exactly the lockdown of the box's workload
(ids, capability sets, no_new_privs, seccomp, clean environment, no kern fd, the box's
namespaces), its exit code is kern exec's, and nothing of it outlives the box or kern exec.
Each property is read with kern-probe both through kern exec and in the box's own workload (run
as a second box of the same flags, or through the box's own command), and, where the claim is a
refusal, against the same probe outside the box (the discriminant)."""

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from test_box_tty import TerminalRun  # noqa: E402

PROBE = "/bin/kern-probe"


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return None


class ExecTestCase(kerntest.KernTestCase):

    def sleeping_box(self, flags=(), name=None, seconds=60):
        """A box whose workload sleeps; returns (Spawned, name) once it runs."""
        sp = self.spawn_box(["/bin/sleep", str(seconds)], flags=flags, name=name)
        self.assertEqual(sp.wait_started()[:1], b"\x01", "the box did not start")
        return sp, sp.name

    def exec_(self, name, *cmd, flags=(), env=None, timeout=30):
        return self.kern("exec", *flags, name, "--", *cmd, env=env, timeout=timeout)

    def wait_exec_started(self, ex, marker):
        """Waits for the exec'd shell (kern exec's own argv carries the marker too, and so does
        its joiner's and the process's until its execve: they are kern until then)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if [p for p in kerntest.pids_with_marker(marker) if p != ex.pid and comm(p) not in ("kern", None)]:
                return
            time.sleep(0.05)
        self.fail("the exec'd process did not start")

    def lockdown_dir(self):
        return os.path.join(self.runtime_kern_dir(), "lockdown")

    def lockdown_records(self):
        try:
            return sorted(os.listdir(self.lockdown_dir()))
        except FileNotFoundError:
            return []


class ExecLockdownTest(ExecTestCase):

    def compare(self, what, flags=(), keys=None):
        """The probe's answer to `what` through kern exec equals the workload's own."""
        self.need_probe()
        sp, name = self.sleeping_box(flags=flags)
        via_exec = self.exec_(name, PROBE, what)
        self.assertExit(via_exec, 0)
        workload = self.probe_box(what, flags=flags)
        self.assertExit(workload, 0)
        a, b = via_exec.kv(), workload.kv()
        if keys is not None:
            a = {k: a.get(k) for k in keys}
            b = {k: b.get(k) for k in keys}
        self.assertEqual(a, b, "%s through exec differs from the workload's\n%s\n%s"
                         % (what, via_exec.describe(), workload.describe()))
        sp.popen.send_signal(signal.SIGTERM)
        sp.finish(20)
        return a

    def test_ids_match_the_workload(self):
        got = self.compare("ids")
        self.assertEqual(got.get("uid"), "0", "root in the box, as the workload")

    def test_capability_sets_match_the_workload(self):
        got = self.compare("caps")
        outside = self.probe_outside("caps", wrap=("unshare", "-Ur"))
        self.assertNotEqual(outside.kv().get("CapBnd"), got.get("CapBnd"),
                            "discriminant: root of a plain user namespace keeps the full bounding set")

    def test_cap_drop_all_is_kept_through_exec(self):
        got = self.compare("caps", flags=["--cap-drop", "ALL"])
        for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            self.assertEqual(int(got[k], 16), 0, "%s through exec of a --cap-drop ALL box" % k)

    def test_seccomp_filter_and_no_new_privs(self):
        got = self.compare("seccomp")
        self.assertEqual(got.get("Seccomp"), "2", "a filter is loaded in the exec'd process")
        nnp = self.compare("nnp")
        self.assertEqual(nnp.get("NoNewPrivs"), "1")
        outside = self.probe_outside("nnp")
        self.assertEqual(outside.kv().get("NoNewPrivs"), "0", "discriminant: the caller has no no_new_privs")

    def test_same_hostname_and_mounts_as_the_workload(self):
        self.need_probe()
        sp, name = self.sleeping_box()
        host = self.exec_(name, PROBE, "hostname")
        self.assertEqual(host.kv().get("hostname"), name, host.describe())
        mounts = self.exec_(name, PROBE, "mounts")
        self.assertExit(mounts, 0)
        # The workload's own view of the same box's mount table: /proc/1/mountinfo is box init's,
        # which the workload shares (same mount namespace), read through exec as well as in the
        # box's own first command below.
        init_view = self.exec_(name, "/bin/cat", "/proc/1/mountinfo")
        own = [l.split(" ", 4)[4] for l in mounts.kv_all("mountinfo")]
        init = [l.split(" ", 4)[4] for l in init_view.out.splitlines()]
        self.assertEqual(own, init, "exec's mount table is not the box's\n%s\n%s" % (mounts.describe(), init_view.describe()))
        outside = self.probe_outside("mounts")
        self.assertNotEqual([l.split(" ", 4)[4] for l in outside.kv_all("mountinfo")], own,
                            "discriminant: the host's mount table differs")

    def test_exec_runs_in_the_boxs_cgroup(self):
        self.require("cgroup", self.s.host.cgroup, "no delegated cgroup v2: " + self.s.host.cgroup.detail)
        sp, name = self.sleeping_box()
        boxes = json.loads(self.kern("ps", "--json").out)
        cgroup = [b["cgroup"] for b in boxes if b["name"] == name][0]
        self.assertTrue(cgroup, "the box has a cgroup here")
        marker = kerntest.unique_marker("exec-cg")
        ex = self._popen([self.s.kern, "exec", name, "--", "/bin/sh", "-c", "sleep 30; echo " + marker],
                         None, subprocess.DEVNULL, (), False, None)
        self.wait_exec_started(ex, marker)
        shell = [p for p in kerntest.pids_with_marker(marker) if p != ex.pid][0]
        with open(os.path.join(cgroup, "cgroup.procs")) as f:
            procs = [int(x) for x in f.read().split()]
        self.assertIn(shell, procs, "the exec'd process is in the box's cgroup")
        with open("/proc/%d/cgroup" % ex.pid) as f:
            self.assertNotIn(os.path.basename(cgroup), f.read(), "discriminant: kern exec itself is not")
        ex.popen.kill()
        ex.popen.communicate()

    def test_proc_1_is_box_init(self):
        sp, name = self.sleeping_box()
        run = self.exec_(name, "/bin/sh", "-c", "cat /proc/1/status; tr '\\0' ' ' </proc/1/cmdline; echo; echo self=$$")
        self.assertExit(run, 0)
        # Box init: PID 1 of the box's pid namespace, with no parent in it, its title kern-init.
        self.assertIn("\nPid:\t1\n", run.out, run.describe())
        self.assertIn("\nPPid:\t0\n", run.out, run.describe())
        self.assertIn("\nkern-init", run.out, run.describe())
        # In the box's pid namespace: a small pid, not the host's.
        pid = int(run.out.rsplit("self=", 1)[1].strip())
        self.assertLess(pid, 100, run.describe())

    def test_no_kern_fd_and_no_host_env(self):
        self.need_probe()
        sp, name = self.sleeping_box()
        marker = kerntest.unique_marker("execenv")
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        self.addCleanup(os.close, w)
        env = {"KERN_ITEST_HOST_VAR": marker}
        fds = self.kern("exec", name, "--", PROBE, "fds", env=env, pass_fds=(w,))
        self.assertExit(fds, 0)
        listed = sorted(int(v.split(" ")[0]) for v in fds.kv_all("fd"))
        self.assertEqual(listed, [0, 1, 2], "fds beyond stdio through exec\n" + fds.describe())
        envrun = self.kern("exec", "-e", "EXEC_ADDED=1", name, "--", PROBE, "env", env=env)
        self.assertExit(envrun, 0)
        self.assertNotIn(marker, envrun.out, "a host variable reached the exec'd process")
        seen = dict(l.split("=", 1) for l in envrun.out.splitlines() if "=" in l)
        self.assertEqual(seen.get("EXEC_ADDED"), "1", "exec's -e")
        self.assertEqual(seen.get("HOSTNAME"), name, "the box's environment")
        # Discriminant: outside, the same probe with the same fd and environment sees both.
        outside = self.host_run([self.s.probe, "fds"], pass_fds=(w,), env=env)
        self.assertIn(w, sorted(int(v.split(" ")[0]) for v in outside.kv_all("fd")))
        self.assertIn(marker, self.host_run([self.s.probe, "env"], env=env).out)

    def test_security_probes_answer_as_in_the_workload(self):
        self.need_probe()
        tries = ["mount", "unshare", "setns", "bpf", "ptrace", "keyctl", "clone3", "tiocsti", "vsock",
                 "userfaultfd"]
        sp, name = self.sleeping_box()
        via_exec = self.exec_(name, PROBE, "try-each", *tries)
        self.assertExit(via_exec, 0)
        workload = self.probe_box("try-each", *tries)
        self.assertExit(workload, 0)
        for t in tries:
            self.assertEqual(via_exec.kv().get(t), workload.kv().get(t),
                             "%s: exec %r, workload %r" % (t, via_exec.kv().get(t), workload.kv().get(t)))
        # The discriminant, as the seccomp tests do: outside, the kernel answers these calls.
        outside = self.probe_outside("try-each", "keyctl", "clone3", "vsock")
        for t in ("keyctl", "clone3", "vsock"):
            self.assertNotEqual(outside.kv().get(t), via_exec.kv().get(t), "%s answers the same outside" % t)


class ExecBehaviourTest(ExecTestCase):

    def test_exit_code_passthrough(self):
        sp, name = self.sleeping_box()
        self.assertExit(self.exec_(name, "/bin/sh", "-c", "exit 7"), 7)
        self.assertExit(self.exec_(name, "/bin/sh", "-c", "kill -TERM $$"), 143)
        # Without "--", as docker exec: the words after the name are the command.
        self.assertExit(self.kern("exec", name, "/bin/sh", "-c", "exit 3"), 3)

    def test_missing_command_is_127_and_not_executable_is_126(self):
        sp, name = self.sleeping_box()
        run = self.exec_(name, "/no/such/command")
        self.assertExit(run, 127)
        self.assertIn("kern: error: ", run.err)
        run = self.exec_(name, "/etc/passwd")
        self.assertExit(run, 126)

    def test_box_not_running_is_125(self):
        run = self.exec_("it-no-such-box", "/bin/true")
        self.assertKernError(run, "no running box named \"it-no-such-box\"")
        sp, name = self.sleeping_box(seconds=0)
        sp.finish(20)
        run = self.exec_(name, "/bin/true")
        self.assertKernError(run, "no running box named")

    def test_workdir_user_and_env(self):
        sp, name = self.sleeping_box(flags=["-e", "BOXVAR=box", "-w", "/tmp"])
        run = self.exec_(name, "/bin/sh", "-c", "pwd; echo $BOXVAR $EXECVAR; id -u")
        self.assertEqual(run.out.split(), ["/tmp", "box", "0"], run.describe())
        run = self.exec_(name, "/bin/sh", "-c", "pwd; echo $BOXVAR $EXECVAR", flags=["-w", "/etc", "-e", "EXECVAR=x",
                                                                                   "-e", "BOXVAR=over"])
        self.assertEqual(run.out.split(), ["/etc", "over", "x"], run.describe())

    def test_user_flag(self):
        self.need_probe()
        self.require("uid-range", self.s.host.uid_range, self.s.host.uid_range.detail)
        sp, name = self.sleeping_box(flags=["--uid-range"])
        run = self.exec_(name, PROBE, "ids", flags=["-u", "1000:1001"])
        self.assertExit(run, 0)
        kv = run.kv()
        self.assertEqual((kv.get("uid"), kv.get("gid"), kv.get("groups", "")), ("1000", "1001", ""), run.describe())
        caps = self.exec_(name, PROBE, "caps", flags=["-u", "1000"])
        self.assertEqual(int(caps.kv()["CapEff"], 16), 0, "a non-zero uid runs without capabilities\n" + caps.describe())
        root = self.exec_(name, PROBE, "caps")
        self.assertNotEqual(int(root.kv()["CapEff"], 16), 0, "positive control: the box's root keeps its set")
        # A name is the box's own /etc/passwd entry, as kern box -u NAME reads its image's.
        named = self.exec_(name, PROBE, "ids", flags=["-u", "nobody"])
        self.assertExit(named, 0)
        self.assertEqual((named.kv().get("uid"), named.kv().get("gid")), ("65534", "65534"), named.describe())
        bad = self.exec_(name, "/bin/true", flags=["-u", "nosuchuser"])
        self.assertKernError(bad, 'no user "nosuchuser"')

    def test_it_under_a_pty(self):
        sp, name = self.sleeping_box()
        env = self.base_env()
        env["TERM"] = "xterm-256color"
        t = TerminalRun([self.s.kern, "exec", "-it", name, "--", "/bin/sh"], env)
        t.type("tty; echo $((6*7))-typed\n")
        self.assertTrue(t.read_until("42-typed"), t.text())
        t.type("exit 5\n")
        rc = t.finish()
        self.assertEqual(rc, 5, t.text())
        self.assertIn("/dev/pts/", t.text())
        self.assertNotIn("not a tty", t.text())
        self.assertEqual(t.modes_after, t.modes_before, "the caller's terminal modes were not restored")

    def test_it_refused_without_a_terminal(self):
        sp, name = self.sleeping_box()
        run = self.exec_(name, "/bin/true", flags=["-it"])
        self.assertKernError(run, "not a terminal")

    def test_on_a_foreground_box(self):
        """`kern box web ...` in one terminal, `kern exec web -- ...` in another."""
        sp, name = self.sleeping_box()
        run = self.exec_(name, "/bin/sh", "-c", "echo hello-from-exec")
        self.assertExit(run, 0)
        self.assertEqual(run.out, "hello-from-exec\n")
        self.assertIsNone(sp.popen.poll(), "the foreground box still runs")

    def test_on_a_host_network_box(self):
        """A --net host box has no network namespace of its own: exec joins the others only."""
        self.need_probe()
        sp, name = self.sleeping_box(flags=["--net", "host"])
        via_exec = self.exec_(name, PROBE, "netifs")
        self.assertExit(via_exec, 0)
        workload = self.probe_box("netifs", flags=["--net", "host"])
        self.assertEqual(sorted(via_exec.kv_all("netif")), sorted(workload.kv_all("netif")), via_exec.describe())

    def test_sigkill_of_kern_exec_kills_what_it_started(self):
        sp, name = self.sleeping_box()
        marker = kerntest.unique_marker("exec-kill")
        ex = self._popen([self.s.kern, "exec", name, "--", "/bin/sh", "-c", "sleep 300; echo " + marker],
                         None, subprocess.DEVNULL, (), False, None)
        self.wait_exec_started(ex, marker)
        ex.popen.kill()
        # Not communicate(): the shell's own child (sleep) is not the exec'd process, and it lives
        # on under box init with the pipes (man kern: what the command leaves behind stays until
        # the box ends), so the pipes do not reach end-of-file.
        ex.popen.wait()
        deadline = time.monotonic() + 5
        while kerntest.pids_with_marker(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(kerntest.pids_with_marker(marker), [], "the exec'd process outlived kern exec")
        self.assertIsNone(sp.popen.poll(), "the box itself still runs")

    def test_orphans_are_reaped_by_box_init(self):
        sp, name = self.sleeping_box()
        run = self.exec_(name, "/bin/sh", "-c", "sleep 1 & echo started")
        self.assertExit(run, 0)
        time.sleep(1.5)
        check = self.exec_(name, "/bin/sh", "-c", "cat /proc/[0-9]*/stat")
        zombies = [l for l in check.out.splitlines() if l.split(") ", 1)[-1].startswith("Z")]
        self.assertEqual(zombies, [], "an orphan of exec was left a zombie\n" + check.describe())

    def test_record_of_a_sigkilled_launcher_is_reaped(self):
        self.use_private_runtime_dir()
        sp, name = self.sleeping_box()
        sp.popen.kill()
        sp.finish(20)
        self.assertIn(name, self.lockdown_records(), "a SIGKILLed launcher cannot remove its record")
        run = self.exec_(name, "/bin/true")
        self.assertKernError(run, "no running box named")
        # Another box's end leaves it (no box's end reads other boxes' records: issue 13);
        # kern ps sweeps it, as it does the registry's stale entries.
        self.assertExit(self.box(["/bin/true"]), 0)
        self.assertIn(name, self.lockdown_records(), "the end of another box read the stale record")
        # The box's init dies of the launcher's death asynchronously (its namespaces' teardown
        # can take a while on a loaded host): kern ps reaps the record once it is gone.
        deadline = time.monotonic() + 10
        while True:
            self.assertExit(self.kern("ps"), 0)
            if self.lockdown_records() == [] or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(self.lockdown_records(), [], "kern ps did not reap the stale record")

    def test_nothing_left_once_the_box_ends(self):
        self.use_private_runtime_dir()
        sp, name = self.sleeping_box()
        self.assertIn(name, self.lockdown_records(), "the box's lockdown record exists while it runs")
        marker = kerntest.unique_marker("exec-left")
        ex = self._popen([self.s.kern, "exec", name, "--", "/bin/sh", "-c", "sleep 300; echo " + marker],
                         None, subprocess.DEVNULL, (), False, None)
        self.wait_exec_started(ex, marker)
        sp.popen.send_signal(signal.SIGTERM)
        run = sp.finish(20)
        self.assertExit(run, 143)
        out = ex.finish(20)
        self.assertEqual(out.rc, 137, "the exec'd process dies with the box\n" + out.describe())
        self.assertNothingLeft(marker)
        self.assertEqual(self.lockdown_records(), [], "lockdown records left behind")


if __name__ == "__main__":
    kerntest.main()
