"""The container's process is pid 1 of its pid namespace, with kern-oci as with runc: both
runtimes on the same `runc spec` bundles, in the same run (runc is the control).

- Who pid 1 is: the state's pid is the process itself (its host command line is the config's
  args), /proc/1 inside is that program with the config's umask (runc's umask.bats), and it
  leads a session of its own, not its creator's process group (where conmon's --timeout kill
  of the group reached conmon itself).
- Signals arrive as sent: each of eleven signals a shell traps reaches it through `kill`.
- A pid 1 without a handler ignores SIGTERM (the kernel's rule for a namespace's init): it is
  still running after `kill TERM`, and SIGKILL ends it; an engine's stop waits its grace period
  and kills (docker stop: exit 137), as with runc.
- In a pid namespace shared with another container (Kubernetes' shareProcessNamespace), SIGKILL
  of the second container ends its program; where kern's init stood between, the program lived
  on under the first container's pid 1.
- exec into a created container: runc joins it; kern-oci refuses, on purpose (its process is
  still kern until start: kern-oci(1), DIFFERENCES FROM RUNC), and joins once it is started.

Runs as root (CTest does) and drops to the test user for the rootless half. Skip names: runc
(not installed), root, user (no test user)."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from test_oci_foreign_bundles import gone, run, tearDownModule  # noqa: E402,F401
from test_oci_engines import main  # noqa: E402
from test_oci_runc_parity import ParityCase  # noqa: E402

SIGNALS = ["HUP", "INT", "QUIT", "USR1", "USR2", "PIPE", "ALRM", "TERM", "WINCH", "URG", "CONT"]


def stat_fields(pid):
    """/proc/PID/stat after the command's parentheses: field 3 (state) is index 0."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def pids_with_cmdline(want):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and cmdline(int(name)) == want:
            out.append(int(name))
    return out


class Pid1Test(ParityCase):

    def state_pid(self, argv, cid, user=None):
        got = run(argv + ["state", cid], user=user)
        self.assertExit(got, 0)
        return json.loads(got.out)["pid"]

    def check_pid_1(self, rootless):
        def change(cfg):
            cfg["process"]["user"]["umask"] = 63  # 077
        b, user = self.setup_bundle(rootless, ["sleep", "600"], change)
        for name, argv in self.runtimes(rootless):
            cid = self.detach(argv, b, user)
            pid = self.state_pid(argv, cid, user)
            self.assertEqual(cmdline(pid), b"sleep\x00600\x00", "%s: the state's pid is not the process" % name)
            fields = stat_fields(pid)
            # pgrp (field 5) and session (field 6) are the process's own.
            self.assertEqual((int(fields[2]), int(fields[3])), (pid, pid), "%s: not a session leader" % name)
            got = run(argv + ["exec", cid, "sh", "-c", "tr '\\0' ' ' < /proc/1/cmdline; echo; grep ^Umask: /proc/1/status"],
                      user=user)
            self.assertExit(got, 0, name)
            lines = got.out.splitlines()
            self.assertEqual(lines[0].strip(), "sleep 600", "%s: pid 1 inside" % name)
            self.assertEqual(lines[1].split(), ["Umask:", "0077"], name)

    def test_the_process_is_pid_1_as_root(self):
        self.require("root", os.geteuid() == 0, "root containers")
        self.check_pid_1(False)

    def test_the_process_is_pid_1_rootless(self):
        self.check_pid_1(True)

    def test_every_signal_reaches_the_process(self):
        traps = "; ".join("trap 'echo got-%s' %s" % (s, s) for s in SIGNALS)
        b, user = self.setup_bundle(False, ["sh", "-c", traps + "; echo ready; while :; do sleep 0.05; done"])
        for name, argv in self.runtimes():
            cid = self.detach(argv, b, user)
            out = os.path.join(self.dir, cid + ".out")
            self.wait_for(out, ["ready"], name)
            for s in SIGNALS:
                self.assertExit(run(argv + ["kill", cid, s]), 0, "%s: kill %s" % (name, s))
                self.wait_for(out, ["got-" + s], name)
            self.assertEqual(self.status(argv, cid), "running", name)

    def wait_for(self, path, words, name, seconds=10):
        deadline = time.monotonic() + seconds
        while True:
            with open(path) as f:
                lines = f.read().split()
            if all(w in lines for w in words):
                return
            if time.monotonic() > deadline:
                self.fail("%s: %s never showed %s (it has %s)" % (name, path, words, lines))
            time.sleep(0.05)

    def test_a_pid_1_without_handler_ignores_term_until_killed(self):
        b, user = self.setup_bundle(False, ["sleep", "600"])
        for name, argv in self.runtimes():
            cid = self.detach(argv, b, user)
            pid = self.state_pid(argv, cid)
            self.assertExit(run(argv + ["kill", cid, "TERM"]), 0, name)
            time.sleep(0.5)
            self.assertEqual(self.status(argv, cid), "running", "%s: SIGTERM ended a pid 1 without a handler" % name)
            self.assertExit(run(argv + ["kill", cid, "KILL"]), 0, name)
            self.wait_status(argv, cid, "stopped")
            self.assertTrue(gone(pid, 5), name)

    def test_kill_in_a_shared_pid_namespace_ends_the_program(self):
        self.require("root", os.geteuid() == 0, "joining another container's pid namespace by path")
        first, user = self.setup_bundle(False, ["sleep", "600"])
        os.rename(first, first + "-pod")  # each bundle of setup_bundle is made at the same path
        first += "-pod"
        for name, argv in self.runtimes():
            pod = self.detach(argv, first, user)
            pod_pid = self.state_pid(argv, pod)
            marker = "6%02d" % (len(self.live) % 100)  # this runtime's own: "sleep 6NN"

            def join(cfg):
                for ns in cfg["linux"]["namespaces"]:
                    if ns["type"] == "pid":
                        ns["path"] = "/proc/%d/ns/pid" % pod_pid
            second, _ = self.setup_bundle(False, ["sleep", marker], join)
            cid = self.detach(argv, second, user)
            want = ("sleep\x00%s\x00" % marker).encode()
            self.assertEqual(len(pids_with_cmdline(want)), 1, name)
            self.assertExit(run(argv + ["kill", cid, "KILL"]), 0, name)
            deadline = time.monotonic() + 5
            while pids_with_cmdline(want) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(pids_with_cmdline(want), [], "%s: the program outlived SIGKILL of its container" % name)
            self.assertFalse(gone(pod_pid, 0.2), "%s: the first container died with the second" % name)
            os.rename(second, second + "-" + cid)

    def test_exec_into_a_created_container(self):
        b, user = self.setup_bundle(False, ["sleep", "600"])
        for name, argv in self.runtimes():
            cid = self.detach(argv, b, user, verb="create")
            got = run(argv + ["exec", cid, "true"])
            if name == "runc":
                self.assertExit(got, 0, "runc joins a created container")
            else:
                self.assertExit(got, 255, name)
                self.assertIn("created", got.err)
                self.assertIn("start it first", got.err)
            self.assertExit(run(argv + ["start", cid]), 0, name)
            self.assertExit(run(argv + ["exec", cid, "true"]), 0, "%s: exec once started" % name)


if __name__ == "__main__":
    main()
