"""No kern process is open to the box it runs beside (issue 21 items 2 and 3: the runc
CVE-2019-5736 pattern and the joining process of kern exec).

Inside the box, `kern-probe watch-procs` plays the attacker: it scans the box's /proc over and
over and, for every other process, opens /proc/P/exe (O_PATH, kept), /proc/P/mem, cwd, root and
every fd; at the end it reopens each exe it kept for writing through /proc/self/fd, the step that
overwrote runc's binary. Meanwhile the host runs `kern exec` into the box many times from a copy
of kern the user owns, with a long $PATH of missing directories so that each exec'd process
lives a while before its execve (the window an attacker races).

Claims, each with its positive control in the same run: a process of the box with the box's own
uid, whose executable is a host file the user owns (bind-mounted, a dumpable control), is opened
and reopened for writing by the same watcher; kern's processes (kern exec's joining process until
its execve, box init) never are. On 41adc44 the watcher opened kern's copy as /proc/P/exe, read
/proc/P/mem, opened 11 of its fds, and reopened the copy for writing."""

import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from test_oci_runtime import OciBundleCase  # noqa: E402

ALL_CAPS = ["CAP_" + n for n in (
    "CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE "
    "NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO "
    "SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME "
    "SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG "
    "WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE").split()]
COPY_NAME = "kern-escape-copy"
CONTROL = "/ctl/busybox"


def watch_lines(text, key):
    return [l[len(key) + 2:] for l in text.splitlines() if l.startswith(key + ": ")]


def fields(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


class EscapeCase(kerntest.KernTestCase):

    def control_dir(self):
        """A directory the user owns with a copy of busybox: the dumpable control's executable."""
        d = os.path.join(self.s.work, "ctl-%d-%s" % (os.getpid(), self.id().rsplit(".", 1)[-1]))
        os.mkdir(d)
        shutil.copy2("/bin/busybox", os.path.join(d, "busybox"))
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def kern_copy(self):
        """kern as a user installs it: a file the user owns and may write."""
        d = os.path.join(self.s.work, "bin-%d" % os.getpid())
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, COPY_NAME)
        if not os.path.exists(path):
            shutil.copy2(self.s.kern, path)
        self.assertTrue(os.access(path, os.W_OK), "the user's kern copy is not writable by the user")
        return path

    def assert_no_kern_opened(self, out, kern_path, init_is_kern=True):
        watched = [fields(l) for l in watch_lines(out, "watch")]
        self.assertTrue(watched, "the watcher saw no process at all\n" + out)
        name = "/" + os.path.basename(kern_path)
        leaked = [w for w in watched if w.get("exe", "") == kern_path or w.get("exe", "").endswith(name)]
        self.assertEqual(leaked, [], "a box process opened kern's binary as /proc/PID/exe\n" + out)
        reopened = [r for r in watch_lines(out, "reopen") if fields(r).get("exe", "").endswith(name)]
        self.assertEqual(reopened, [], "kern's binary was reopened from the box\n" + out)
        init = [w for w in watched if w.get("pid") == "1"]
        if not init_is_kern:  # the OCI mode: pid 1 is the container's process, the watcher itself
            self.assertEqual(init, [], "the watcher met a pid 1 other than itself\n" + out)
            return
        self.assertTrue(init, "the watcher never saw box init\n" + out)
        for w in init:
            for k in ("exe", "mem", "cwd", "root", "fd"):
                self.assertTrue(w.get(k, "").startswith("E"), "/proc/1/%s of box init opened\n%s" % (k, out))

    def assert_control_reopened(self, out):
        """The positive control: the same watcher got the dumpable control's executable and
        reopened it for writing."""
        ctl = [fields(l) for l in watch_lines(out, "watch") if CONTROL in l]
        self.assertTrue(ctl, "the watcher never opened the control's /proc/PID/exe\n" + out)
        self.assertIn("exe=%s write=ok" % CONTROL, watch_lines(out, "reopen"),
                      "the control's executable was not reopened for writing: the watcher proves nothing\n" + out)


class ExecJoinTest(EscapeCase):

    def test_exec_joining_process_and_box_init_are_closed_to_the_box(self):
        self.need_probe()
        ctl = self.control_dir()
        kern = self.kern_copy()
        watcher = "%s sleep 2 & exec /bin/kern-probe watch-procs 8" % CONTROL
        sp = self.spawn_box(["/bin/sh", "-c", watcher], flags=["-v", ctl + ":/ctl"])
        self.assertEqual(sp.wait_started()[:1], b"\x01", "the box did not start")
        slow_path = ":".join("/nowhere%d" % i for i in range(3000))
        execs = 0
        for _ in range(15):
            slow = self.host_run([kern, "exec", "-e", "PATH=" + slow_path, sp.name, "--", "not-there"])
            self.assertExit(slow, 127, "a command missing along $PATH")
            plain = self.host_run([kern, "exec", sp.name, "--", "/bin/true"])
            self.assertExit(plain, 0)
            execs += 2
        run = sp.finish(40)
        self.assertExit(run, 0)
        self.assert_control_reopened(run.out)
        self.assert_no_kern_opened(run.out, kern)
        # The watcher did meet kern exec's processes (pid 1 and the control aside): each is
        # either closed (non-dumpable) or already the box's own program.
        others = [fields(l) for l in watch_lines(run.out, "watch")
                  if fields(l).get("pid") != "1" and CONTROL not in l]
        self.assertTrue(others, "none of %d exec'd processes was seen\n%s" % (execs, run.out))


class OciExecJoinTest(OciBundleCase, EscapeCase):
    """The same watcher as the container's process, given every capability (as a privileged
    container is). On 41adc44 it opened /proc/1/exe (kern's binary) and /proc/1/mem of box init,
    and kern oci exec's process like kern exec's. Box init has since become the container's
    process at start: the watcher is pid 1, and no kern process is left in the container but
    kern oci exec's, until its execve."""

    def test_oci_exec_process_and_box_init_are_closed_to_a_privileged_container(self):
        self.need_probe()
        ctl = self.control_dir()
        kern = self.kern_copy()
        self.cfg["mounts"].append({"destination": "/ctl", "type": "bind", "source": ctl, "options": ["rbind", "rw"]})
        caps = {k: ALL_CAPS for k in ("bounding", "effective", "permitted")}
        self.write_cfg(args=["/bin/sh", "-c", "%s sleep 2 & exec /bin/kern-probe watch-procs 8" % CONTROL],
                       capabilities=caps)
        out = self.create("wj")
        self.assertExit(self.oci("start", "wj"), 0)
        pid = self.state("wj")["pid"]
        slow_path = ":".join("/nowhere%d" % i for i in range(3000))
        for _ in range(15):
            self.host_run([kern, "oci", "--root", self.root, "exec", "--env", "PATH=" + slow_path, "wj", "not-there"])
            self.assertExit(self.host_run([kern, "oci", "--root", self.root, "exec", "wj", "/bin/true"]), 0)
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            self.assertTrue(f.read().startswith(b"/bin/kern-probe\x00watch-procs"), "pid 1 is not the watcher")
        deadline = time.monotonic() + 30
        while self.state("wj")["status"] != "stopped" and time.monotonic() < deadline:
            time.sleep(0.2)
        with open(out) as f:
            text = f.read()
        self.assert_control_reopened(text)
        self.assert_no_kern_opened(text, kern, init_is_kern=False)
        self.assert_no_kern_opened(text, self.s.kern, init_is_kern=False)


if __name__ == "__main__":
    kerntest.main()
