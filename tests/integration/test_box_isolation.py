"""What the box sees of the host (kern-box(1)): no host environment variable (only the
defaults, --env-file and -e), no inherited fd, its own hostname, a network namespace with only
`lo` (up), and no way back to the old root. Each with the discriminant outside."""

import os
import time
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


def env_of(run):
    out = {}
    for line in run.out.splitlines():
        k, sep, v = line.partition("=")
        if sep:
            out[k] = v
    return out


class EnvironmentTest(kerntest.KernTestCase):

    def test_no_host_variable_visible(self):
        marker = kerntest.unique_marker("env")
        env = {"KERN_ITEST_HOST_VAR": marker, "LD_PRELOAD": "/%s.so" % marker, "BASH_ENV": "/" + marker,
               "PATH": "/%s:/usr/sbin:/usr/bin:/sbin:/bin" % marker, "KERN_QUIET": "1"}
        run = self.probe_box("env", env=env)
        self.assertExit(run, 0)
        self.assertNotIn(marker, run.out, "a host variable reached the box\n" + run.describe())
        seen = env_of(run)
        for key in ("KERN_ITEST_HOST_VAR", "LD_PRELOAD", "BASH_ENV", "KERN_QUIET", "XDG_RUNTIME_DIR",
                    "XDG_CACHE_HOME", "LANG"):
            self.assertNotIn(key, seen, "%s leaked into the box" % key)
        self.assertNotEqual(seen.get("HOME"), self.s.home, "the host's HOME leaked")
        self.assertIn("PATH", seen, "the box has no default PATH")
        # Discriminant: the same probe outside, given the same environment, shows the marker.
        outside = self.probe_outside("env", env=env)
        self.assertIn(marker, outside.out)
        # Positive control: -e does let a variable in.
        run = self.probe_box("env", flags=["-e", "KERN_ITEST_HOST_VAR=" + marker], env=env)
        self.assertEqual(env_of(run).get("KERN_ITEST_HOST_VAR"), marker, run.describe())

    def test_env_file_and_e_precedence(self):
        path = os.path.join(self.s.work, "box.env")
        with open(path, "w") as f:
            f.write("# a comment\n\nA=from-file\nB=from-file\nSPACED=two words\nEMPTY=\nEQ=a=b\n")
        run = self.probe_box("env", flags=["--env-file", path, "-e", "B=from-e", "-e", "C=1", "-e", "C=2"])
        self.assertExit(run, 0)
        seen = env_of(run)
        self.assertEqual(seen.get("A"), "from-file")
        self.assertEqual(seen.get("B"), "from-e", "-e must win over the env file")
        self.assertEqual(seen.get("C"), "2", "the later -e wins")
        self.assertEqual(seen.get("SPACED"), "two words")
        self.assertEqual(seen.get("EMPTY"), "")
        self.assertEqual(seen.get("EQ"), "a=b")
        self.assertNotIn("# a comment", run.out)

    def test_two_env_files_later_wins(self):
        first = os.path.join(self.s.work, "first.env")
        second = os.path.join(self.s.work, "second.env")
        with open(first, "w") as f:
            f.write("X=1\nY=1\n")
        with open(second, "w") as f:
            f.write("Y=2\n")
        run = self.probe_box("env", flags=["--env-file", first, "--env-file", second])
        seen = env_of(run)
        self.assertEqual((seen.get("X"), seen.get("Y")), ("1", "2"), run.describe())

    def test_env_file_bad_line_names_file_and_line(self):
        path = os.path.join(self.s.work, "bad.env")
        with open(path, "w") as f:
            f.write("# fine\nGOOD=1\nthis line has no equals sign\nLATER=1\n")
        marker = kerntest.unique_marker("envfile")
        run = self.box(["/bin/sh", "-c", "sleep 30", marker], flags=["--env-file", path], started=True)
        self.assertKernError(run, "%s:3" % path)
        self.assertEqual(run.started, b"")
        self.assertNothingLeft(marker)

    def test_env_file_missing(self):
        path = os.path.join(self.s.work, "no-such.env")
        run = self.box(["/bin/true"], flags=["--env-file", path])
        self.assertKernError(run, path)

    def test_path_from_e_is_used_for_lookup(self):
        run = self.box(["busybox", "true"], flags=["-e", "PATH=/bin"])
        self.assertExit(run, 0)
        run = self.box(["true"], flags=["-e", "PATH=/nonexistent"])
        self.assertExit(run, 127, "PATH=/nonexistent must not find true")


class FdTest(kerntest.KernTestCase):

    def extra_fd(self):
        f = open(os.path.join(self.s.work, "inherited"), "w")
        self.addCleanup(f.close)
        fd = os.dup2(f.fileno(), 9, inheritable=True)
        self.addCleanup(os.close, fd)
        return fd

    def fds(self, run):
        return sorted(int(v.split(" ")[0]) for v in run.kv_all("fd"))

    def test_no_inherited_fd_visible(self):
        fd = self.extra_fd()
        run = self.probe_box("fds", pass_fds=(fd,), started=True, report="flag")
        self.assertExit(run, 0)
        self.assertEqual(self.fds(run), [0, 1, 2], "fds beyond stdio in the box\n" + run.describe())
        self.assertEqual(len(run.started), 2, "the started fd was given and written")
        # Discriminant: the same probe outside with the same pass_fds sees fd 9.
        outside = self.host_run([self.s.probe, "fds"], pass_fds=(fd,))
        self.assertIn(fd, self.fds(outside), outside.describe())

    def test_box_init_holds_no_descriptor_the_box_can_reach(self):
        """PID 1 of the box is a copy of kern, cloned with kern's descriptors (the box's cgroup
        directory, the bind sources, the started and report fds); it closes them, and it is not
        dumpable from before its workload starts, so that nothing it holds is reachable through
        /proc/1: the box's own processes get EACCES for its fd directory and its exe, while their
        own are open to them (the control). Its owner outside gets the same answer: only
        CAP_SYS_PTRACE in the host's user namespace opens a non-dumpable process that never
        exec'd (SECURITY.md, kern's own processes)."""
        src = os.path.join(self.s.work, "init-fds")
        os.makedirs(src, exist_ok=True)
        script = ("ls /proc/1/fd >/dev/null 2>&1 && echo init-fd-open || echo init-fd-refused; "
                  "readlink /proc/1/exe >/dev/null 2>&1 && echo init-exe-open || echo init-exe-refused; "
                  "ls /proc/self/fd >/dev/null 2>&1 && echo self-fd-open || echo self-fd-refused; sleep 2")
        sp = self.spawn_box(["/bin/sh", "-c", script], flags=["-v", src + ":/mnt"], report="flag")
        self.assertEqual(sp.wait_started(), b"\x01" + sp.started_bytes[1:2], "the box started")
        init = int(open("/proc/%d/task/%d/children" % (sp.pid, sp.pid)).read().split()[0])
        with self.assertRaises(PermissionError):
            os.listdir("/proc/%d/fd" % init)
        # The control outside: the launcher, kern too and dumpable, is open to its owner.
        self.assertIn(0, [int(n) for n in os.listdir("/proc/%d/fd" % sp.pid)])
        run = sp.finish(30)
        self.assertExit(run, 0)
        self.assertEqual(run.out.split(), ["init-fd-refused", "init-exe-refused", "self-fd-open"], run.describe())

    def test_box_init_and_mounts_show_no_host_path(self):
        """Box init is a copy of kern: its /proc/1/cmdline and environ held kern's command line
        (with the host path of the root) and the caller's environment; the overlay's options in
        mountinfo named the layers' and the scratch dir's host paths."""
        root = self.s.rootfs
        env = dict(os.environ, KERN_ITEST_MARKER="host-secret-marker")
        sp = self.spawn_box(["/bin/sh", "-c", "sleep 1; tr '\\0' '\\n' </proc/1/cmdline; echo ==; "
                             "cat /proc/self/mountinfo; echo ==; cat /proc/1/environ 2>&1 | tr '\\0' '\\n'"],
                            env=env)
        self.assertEqual(sp.wait_started()[:1], b"\x01")
        # Discriminant: kern's own command line, outside, names the root's host path.
        self.assertIn(root, open("/proc/%d/cmdline" % sp.pid).read())
        run = sp.finish(30)
        self.assertExit(run, 0)
        cmdline, mountinfo, environ = run.out.split("==\n")
        self.assertEqual([w for w in cmdline.split("\n") if w], ["kern-init"], run.describe())
        self.assertNotIn(root, mountinfo, run.describe())
        self.assertNotIn("/tmp/", mountinfo, run.describe())
        self.assertIn("lowerdir=/proc/self/fd/", mountinfo, run.describe())
        self.assertNotIn("host-secret-marker", environ, run.describe())

    def test_stdio_passes_through(self):
        run = self.box(["/bin/sh", "-c", "read line; echo got:$line"], stdin=open(self._stdin_file(), "rb"))
        self.assertExit(run, 0)
        self.assertEqual(run.out, "got:hello\n")

    def _stdin_file(self):
        p = os.path.join(self.s.work, "stdin.txt")
        with open(p, "w") as f:
            f.write("hello\n")
        return p


class HostnameTest(kerntest.KernTestCase):

    def test_default_hostname_is_the_box_name(self):
        name = self.s.new_name("host")
        run = self.probe_box("hostname", name=name)
        self.assertExit(run, 0)
        self.assertEqual(run.kv().get("hostname"), name)
        outside = self.probe_outside("hostname")
        self.assertEqual(outside.kv().get("hostname"), socket.gethostname(), "discriminant: the host's own")
        self.assertNotEqual(socket.gethostname(), name)

    def test_hostname_flag(self):
        run = self.probe_box("hostname", flags=["--hostname", "kern-itest-host"])
        self.assertEqual(run.kv().get("hostname"), "kern-itest-host", run.describe())
        self.assertNotEqual(socket.gethostname(), "kern-itest-host", "the host's hostname changed")


class NetworkTest(kerntest.KernTestCase):

    def netifs(self, run):
        return dict(v.split(" ", 1) for v in run.kv_all("netif"))

    def test_only_loopback_and_up(self):
        run = self.probe_box("netifs")
        self.assertExit(run, 0)
        self.assertEqual(self.netifs(run), {"lo": "up"}, run.describe())
        # Discriminant: the host's interfaces, and --net host shows them in a box too.
        outside = self.netifs(self.probe_outside("netifs"))
        self.require("host-net", set(outside) - {"lo"}, "the host has no interface but lo, so "
                     "--net none cannot be told apart")
        host = self.probe_box("netifs", flags=["--net", "host"])
        self.assertExit(host, 0)
        self.assertEqual(set(self.netifs(host)), set(outside), host.describe())

    def test_loopback_works(self):
        run = self.box(["/bin/sh", "-c", "ping -c 1 -W 2 127.0.0.1 >/dev/null 2>&1; echo $?; "
                        "nc -l -p 7777 -w 3 > /tmp/got & sleep 0.3; echo hi | nc -w 2 127.0.0.1 7777; "
                        "wait; cat /tmp/got"])
        self.assertExit(run, 0)
        self.assertIn("hi", run.out.splitlines()[1:], "a TCP round trip over lo failed\n" + run.describe())

    def test_workload_and_sysfs_share_the_box_network(self):
        # The namespace is made beside the root and joined by box init before its sysfs mount
        # (which shows the namespace of whoever mounts it): the workload and /sys must both show
        # the box's own namespace, never the host's.
        run = self.box(["/bin/sh", "-c", "readlink /proc/self/ns/net; ls /sys/class/net"])
        self.assertExit(run, 0)
        lines = run.out.split()
        self.assertEqual(len(lines), 2, run.describe())
        self.assertNotEqual(lines[0], os.readlink("/proc/self/ns/net"),
                            "the box is in the host's network namespace\n" + run.describe())
        self.assertEqual(lines[1], "lo", "the box's /sys is not its own network namespace's\n" + run.describe())
        # Control: the host's /sys shows more than lo, so a sysfs of the host's namespace would
        # have been told apart.
        self.require("host-net", set(os.listdir("/sys/class/net")) - {"lo"},
                     "the host has no interface but lo, so its sysfs cannot be told apart")

    def test_bare_net_means_host(self):
        outside = self.netifs(self.probe_outside("netifs"))
        run = self.probe_box("netifs", flags=["--net"])
        self.assertExit(run, 0)
        self.assertEqual(set(self.netifs(run)), set(outside), run.describe())

    def test_net_none_explicit(self):
        run = self.probe_box("netifs", flags=["--net", "none"])
        self.assertEqual(self.netifs(run), {"lo": "up"}, run.describe())


class OldRootTest(kerntest.KernTestCase):

    def test_old_root_unreachable(self):
        marker = os.path.join(self.s.work, kerntest.unique_marker("oldroot"))
        with open(marker, "w") as f:
            f.write("host only\n")
        markers = [marker, self.s.kern, self.s.rootfs + "/bin/busybox", self.s.home]
        run = self.probe_box("oldroot", *markers)
        self.assertExit(run, 0)
        self.assertEqual(run.kv().get("oldroot"), "unreachable", run.describe())
        for m in markers:
            self.assertIn("%s absent" % m, run.kv_all("oldroot-marker"), run.describe())
        # Discriminant: outside, the same probe reaches every marker.
        outside = self.probe_outside("oldroot", *markers)
        self.assertEqual(outside.kv().get("oldroot"), "reachable", outside.describe())
        self.assertIn("%s present" % marker, outside.kv_all("oldroot-marker"))

    def test_no_host_mount_visible(self):
        run = self.probe_box("mounts")
        self.assertExit(run, 0)
        lines = run.kv_all("mountinfo")
        self.assertTrue(lines)
        for line in lines:
            mount_point = line.split(" ")[4]
            self.assertNotIn(self.s.tmp, mount_point, "a host path is a mount point in the box: " + line)
            self.assertFalse(mount_point.startswith(("/oldroot", "/.oldroot", "/old_root")), line)


class ProcAndDevTest(kerntest.KernTestCase):
    """The masked /proc entries and the fresh /dev (kern-box(1)), each against the host's view."""

    def test_kallsyms_is_masked(self):
        # /proc/kallsyms exists on every kernel; in the box it is /dev/null bound over it.
        run = self.probe_box("stat", "/proc/kallsyms")
        self.assertExit(run, 0)
        self.assertIn("rdev=1:3", run.kv().get("stat", ""), run.describe())
        self.assertTrue(run.kv()["stat"].startswith("type=c"), run.describe())
        # Discriminant: a pid namespace of the same user outside kern shows the real file.
        outside = self.probe_outside("stat", "/proc/kallsyms", wrap=("unshare", "-Urmpf", "--mount-proc"))
        self.assertTrue(outside.kv().get("stat", "").startswith("type=f"), outside.describe())

    def test_sensitive_proc_dirs_are_empty_read_only(self):
        run = self.box(["/bin/sh", "-c", "ls -A /proc/irq | wc -l; touch /proc/irq/x 2>&1; echo rc=$?"])
        self.assertExit(run, 0)
        lines = run.out.split()
        self.assertEqual(lines[0], "0", run.describe())
        self.assertIn("rc=1", run.out, run.describe())
        outside = self.host_run(["unshare", "-Urmpf", "--mount-proc", "/bin/sh", "-c", "ls -A /proc/irq | wc -l"])
        self.assertNotEqual(outside.out.strip(), "0", outside.describe())

    def test_every_masked_proc_dir_is_empty_read_only_and_inert(self):
        # The directory masks share one read-only tmpfs (the first mask's, bound at the others):
        # each of them, not only the first, must be empty, refuse a write, and carry the mount
        # flags of a mask (ro, nosuid, nodev, noexec) in the box's own mount table.
        dirs = ["/proc/acpi", "/proc/scsi", "/proc/firmware", "/proc/bus", "/proc/fs", "/proc/irq"]
        script = ('for d in %s; do [ -d "$d" ] || continue; n=$(ls -A "$d" | wc -l); '
                  'if touch "$d/x" 2>/dev/null; then w=ok; else w=refused; fi; '
                  'o=$(awk -v d="$d" \'$5 == d {print $6}\' /proc/self/mountinfo | tail -n 1); '
                  'echo "$d $n $w $o"; done') % " ".join(dirs)
        outside = self.host_run(["unshare", "-Urmpf", "--mount-proc", "/bin/sh", "-c", script])
        self.assertExit(outside, 0)
        seen_outside = {l.split()[0]: l.split() for l in outside.out.splitlines() if l.strip()}
        self.require("proc-mask-dirs", len(seen_outside) >= 2,
                     "fewer than two of %s exist on this kernel: the shared mask is not exercised" % dirs)
        # Discriminant: outside kern the same user sees them with entries and no mask mounted.
        self.assertTrue(any(int(f[1]) > 0 for f in seen_outside.values()), outside.describe())
        run = self.box(["/bin/sh", "-c", script])
        self.assertExit(run, 0)
        inside = {l.split()[0]: l.split() for l in run.out.splitlines() if l.strip()}
        self.assertEqual(sorted(inside), sorted(seen_outside), run.describe())
        for d, f in inside.items():
            self.assertEqual(f[1], "0", "%s has entries in the box: %s" % (d, run.describe()))
            self.assertEqual(f[2], "refused", "%s took a write in the box: %s" % (d, run.describe()))
            self.assertEqual(len(f), 4, "%s is no mount point in the box: %s" % (d, run.describe()))
            opts = f[3].split(",")
            for want in ("ro", "nosuid", "nodev", "noexec"):
                self.assertIn(want, opts, "%s mounted %s in the box" % (d, f[3]))

    def test_dev_holds_only_the_safe_nodes(self):
        run = self.probe_box("devices")
        self.assertExit(run, 0)
        chars = sorted(l.split()[0] for l in run.kv_all("dev") if l.split()[1] == "c")
        self.assertEqual(chars, ["full", "null", "random", "tty", "urandom", "zero"], run.describe())
        # Discriminant: the host's /dev, seen by the same user, has many more (and e.g. a console).
        outside = self.probe_outside("devices")
        host_chars = [l.split()[0] for l in outside.kv_all("dev") if l.split()[1] == "c"]
        self.assertGreater(len(host_chars), len(chars), outside.describe())


if __name__ == "__main__":
    kerntest.main()
