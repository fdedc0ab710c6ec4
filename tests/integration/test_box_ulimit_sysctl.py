"""--ulimit and --sysctl, as docker run spells them, as the unprivileged user. A --ulimit is the
workload's limit and every kern exec process's too (a new way into the box gives the box's
answer); a hard limit above kern's own is refused before anything starts. A --sysctl is written
in the box's own namespaces (the box reads its value, the host keeps its own) before /proc/sys is
made read-only; a knob that is not a namespace's of the box, or a net.* knob with --net host, is
refused."""

import os
import resource
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402

LIMITS = "ulimit -Sn; ulimit -Hn; ulimit -c"
PORT_START = "/proc/sys/net/ipv4/ip_unprivileged_port_start"
RMID = "/proc/sys/kernel/shm_rmid_forced"


def host_value(path):
    with open(path) as f:
        return f.read().strip()


class UlimitTest(DetachedCase):

    def test_the_workload_and_kern_exec_get_the_limit(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.assertGreater(hard, 128, "the test needs a hard nofile limit above 128")
        # The positive control: without --ulimit the box runs under kern's own limits.
        plain = self.box(["sh", "-c", LIMITS])
        self.assertExit(plain, 0)
        self.assertNotEqual(plain.out.split()[:2], ["64", "128"], plain.describe())
        run = self.box(["sh", "-c", LIMITS], flags=["--ulimit", "nofile=64:128", "--ulimit", "core=0"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.split(), ["64", "128", "0"], run.describe())
        name = self.started(["sleep", "60"], ["--ulimit", "nofile=64:128", "--ulimit", "core=0"])
        ex = self.kern("exec", name, "--", "sh", "-c", LIMITS)
        self.assertExit(ex, 0)
        self.assertEqual(ex.out.split(), ["64", "128", "0"], "kern exec must get the box's limits\n" + ex.describe())

    def test_a_raise_above_the_hard_limit_is_refused_before_the_start(self):
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY:
            self.skipTest("the hard nofile limit is unlimited here: nothing is above it")
        run = self.box(["true"], flags=["--ulimit", "nofile=%d" % (hard + 1)])
        self.assertKernError(run, "--ulimit: the hard RLIMIT_NOFILE here is %d" % hard)
        self.assertEqual(self.registered_boxes(), [])
        for bad, said in (("nofile", "not NAME=SOFT[:HARD]"), ("nofiles=1", "is not a resource limit"),
                          ("nofile=2:1", "the soft limit is above the hard one"), ("nofile=x", "not a number")):
            self.assertKernError(self.box(["true"], flags=["--ulimit", bad]), said)


class SysctlTest(DetachedCase):

    def test_knobs_are_the_boxs_own(self):
        host_port, host_rmid = host_value(PORT_START), host_value(RMID)
        want_port = "80" if host_port != "80" else "81"
        want_rmid = "1" if host_rmid != "1" else "0"
        run = self.box(["sh", "-c", "cat %s %s; echo 7 > %s || echo read-only" % (PORT_START, RMID, RMID)],
                       flags=["--sysctl", "net.ipv4.ip_unprivileged_port_start=" + want_port,
                              "--sysctl", "kernel.shm_rmid_forced=" + want_rmid])
        self.assertExit(run, 0)
        self.assertEqual(run.out.split()[:2], [want_port, want_rmid], run.describe())
        self.assertIn("read-only", run.out, "/proc/sys must be read-only once the box runs\n" + run.describe())
        # The host keeps its own values: the writes went to the box's namespaces.
        self.assertEqual(host_value(PORT_START), host_port)
        self.assertEqual(host_value(RMID), host_rmid)
        # The control: without --sysctl the box reads the kernel's default for a new network
        # namespace (1024), whatever the host set.
        plain = self.box(["cat", PORT_START])
        self.assertExit(plain, 0)
        self.assertEqual(plain.out.strip(), "1024", plain.describe())

    def test_knobs_that_would_be_the_hosts_are_refused(self):
        for flags, said in ((["--sysctl", "kernel.pid_max=100"], "not a knob of the box's own namespaces"),
                            (["--sysctl", "vm.swappiness=1"], "not a knob of the box's own namespaces"),
                            (["--net", "host", "--sysctl", "net.ipv4.ip_forward=1"], "shares the host's network"),
                            (["--sysctl", "kernel.hostname=x"], "--hostname"),
                            (["--sysctl", "net/../../kernel/pid_max=1"], "not a knob's name"),
                            (["--sysctl", "=1"], "not KEY=VALUE")):
            run = self.box(["true"], flags=flags)
            self.assertKernError(run, said)
        self.assertEqual(self.registered_boxes(), [])
        # A namespaced name the kernel does not have fails the box's start, naming the file.
        run = self.box(["true"], flags=["--sysctl", "net.ipv4.no_such_knob=1"])
        self.assertKernError(run, "/proc/sys/net/ipv4/no_such_knob", "ENOENT")
        self.assertEqual(self.registered_boxes(), [])


if __name__ == "__main__":
    kerntest.main()
