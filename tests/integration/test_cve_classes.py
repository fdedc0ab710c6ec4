"""The public CVE classes of runc, crun and youki since 2019, tried against `kern box` and
`kern exec` (rootless, the only way they run); test_cve_oci.py and test_cve_oci_root.py try them
against kern-oci. Each attack has its control in the same run: the same read or write outside the
box (or the same path resolved on the host) succeeds. SECURITY.md ("Known runtime vulnerability
classes") has the table. The binary-overwrite (CVE-2019-5736) and leaked working directory
(CVE-2024-21626) classes have files of their own: test_escape_exec_join.py and
test_escape_workdir.py."""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


class BoxCveTest(kerntest.KernTestCase):

    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="cve-", dir=self.s.work)
        self.rootfs = os.path.join(self.dir, "rootfs")
        subprocess.run(["cp", "-a", self.s.rootfs, self.rootfs], check=True)

    def in_box_and_exec(self, script, flags=()):
        """(the box workload's Run, kern exec's Run) of `sh -c script` in a box of self.rootfs."""
        run = self.box(["sh", "-c", script], flags=flags, rootfs=self.rootfs)
        sp = self.spawn_box(["sleep", "60"], flags=list(flags) + ["--rootfs", self.rootfs], name=None)
        self.assertEqual(sp.wait_started()[:1], b"\x01", "the box did not start")
        ex = self.kern("exec", sp.name, "--", "sh", "-c", script)
        self.kern("kill", sp.name)
        return run, ex

    # spawn_box adds --rootfs of the session's root; this file's boxes use a private copy.
    def _argv_box(self, cmd, flags, name, rootfs):
        flags = list(flags)
        if "--rootfs" in flags:
            i = flags.index("--rootfs")
            rootfs = flags[i + 1]
            del flags[i:i + 2]
        return super()._argv_box(cmd, flags, name, rootfs)

    # ---- runc CVE-2025-31133, youki CVE-2025-62161: masked files and the null device

    def test_masked_files_read_empty_whatever_the_image_has_at_dev_null(self):
        victim = os.path.join(self.rootfs, "victim")
        with open(victim, "w") as f:
            f.write("victim\n")
        null = os.path.join(self.rootfs, "dev", "null")
        if os.path.lexists(null):
            os.unlink(null)
        os.symlink("/victim", null)
        with open("/proc/kallsyms", "rb") as f:
            self.assertGreater(len(f.read(16)), 0, "discriminant: the host's /proc/kallsyms has content")
        for run in self.in_box_and_exec("head -c 16 /proc/kallsyms | wc -c; stat -c %t:%T /dev/null"):
            self.assertExit(run, 0)
            self.assertEqual(run.out.split(), ["0", "1:3"], run.describe())
        with open(victim) as f:
            self.assertEqual(f.read(), "victim\n")

    # ---- runc CVE-2025-52565, crun CVE-2026-88264: /dev/console

    def test_image_dev_console_symlink_is_never_seen_or_followed(self):
        victim = os.path.join(self.rootfs, "victim")
        with open(victim, "w") as f:
            f.write("victim\n")
        os.symlink("../victim", os.path.join(self.rootfs, "dev", "console"))
        self.assertEqual(os.path.realpath(os.path.join(self.rootfs, "dev", "console")), victim,
                         "control: on the host the image's /dev/console leads to the victim")
        for run in self.in_box_and_exec("[ -L /dev/console ] && echo link; stat -c %F /victim"):
            self.assertExit(run, 0)
            self.assertEqual(run.out.strip(), "regular file", run.describe())

    # ---- runc CVE-2025-52881, CVE-2019-16884, CVE-2023-27561/28642, youki CVE-2025-62596:
    # /proc covered, symlinked, or a procfs write redirected

    def test_proc_cannot_be_covered_by_a_bind(self):
        fake = os.path.join(self.dir, "fake")
        os.mkdir(fake)
        run = self.box(["true"], flags=["-v", fake + ":/proc"], rootfs=self.rootfs)
        self.assertKernError(run, "/proc")
        ok = self.box(["true"], flags=["-v", fake + ":/mnt"], rootfs=self.rootfs)
        self.assertExit(ok, 0, "control: the same bind elsewhere works")

    def test_symlinked_proc_in_the_image_still_gives_procfs(self):
        os.rmdir(os.path.join(self.rootfs, "proc"))
        os.makedirs(os.path.join(self.rootfs, "fake", "self", "attr"))
        os.symlink("/fake", os.path.join(self.rootfs, "proc"))
        for run in self.in_box_and_exec("stat -f -c %T /proc/ /proc/self/attr /proc/sys/kernel"):
            self.assertExit(run, 0)
            self.assertEqual(run.out.split(), ["proc", "proc", "proc"], run.describe())

    # What a plain user namespace of the same user may cover in procfs, first choice first: a
    # 6.18 kernel refuses a bind over anything under /proc/sys there (EINVAL) but not over a
    # file such as /proc/uptime.
    PROCFS_TARGETS = ("/proc/sys/kernel", "/proc/uptime")

    def test_box_cannot_mount_over_a_procfs_file(self):
        self.require("unshare", self.s.host.unshare, self.s.host.unshare.detail)

        def script(target):
            # A source of the same type that exists in every box as on the host.
            source = "/tmp" if target.endswith("kernel") else "/proc/version"
            return "mount --bind %s %s 2>/dev/null; echo rc=$?" % (source, target)

        # Control: a plain user namespace of the same user can (so the box's refusal is kern's).
        tried = []
        for target in self.PROCFS_TARGETS:
            outside = self.host_run(["unshare", "-Urm", "sh", "-c", script(target)])
            tried.append("%s: %s" % (target, outside.out.strip()))
            if "rc=0" in outside.out:
                break
        else:
            self.require("outside-procfs-mount", False,
                         "no procfs target can be covered by a plain user namespace here (%s)" % "; ".join(tried))
        for run in self.in_box_and_exec("(%s); stat -f -c %%T %s" % (script(target), target)):
            self.assertNotIn("rc=0", run.out, run.describe())
            self.assertTrue(run.out.strip().endswith("proc"), run.describe())

    # ---- runc CVE-2021-30465, CVE-2019-19921, CVE-2024-45310, crun CVE-2019-18837: mount
    # targets through an image's symlinks

    def test_bind_targets_through_image_symlinks_stay_inside(self):
        host = os.path.join(self.dir, "host-side")
        os.mkdir(host)
        os.symlink(host, os.path.join(self.rootfs, "link"))
        src = os.path.join(self.dir, "src")
        os.mkdir(src)
        with open(os.path.join(src, "f"), "w") as f:
            f.write("bound\n")
        self.assertEqual(os.path.realpath(os.path.join(self.rootfs, "link", "made")),
                         os.path.join(host, "made"), "control: on the host the path leads out")
        run = self.box(["sh", "-c", "cat /link/made/f"], flags=["-v", src + ":/link/made"], rootfs=self.rootfs)
        self.assertEqual(os.listdir(host), [], "a mount point was made on the host")
        if run.rc == 0:
            self.assertEqual(run.out, "bound\n")

    # ---- runc CVE-2022-29162, crun CVE-2022-27650: the inheritable set

    def test_inheritable_set_is_empty(self):
        for run in self.in_box_and_exec("grep -E '^Cap(Inh|Eff)' /proc/self/status"):
            self.assertExit(run, 0)
            caps = dict(line.split(":") for line in run.out.splitlines())
            self.assertEqual(int(caps["CapInh"], 16), 0, run.describe())
            self.assertNotEqual(int(caps["CapEff"], 16), 0, "control: the box's root holds capabilities")

    # ---- runc CVE-2023-25809: /sys/fs/cgroup writable

    def test_cgroup_tree_is_not_writable(self):
        script = "mkdir /sys/fs/cgroup/kern-cve 2>/dev/null && echo made; mkdir /tmp/kern-cve && echo control"
        for run in self.in_box_and_exec(script):
            self.assertEqual(run.out.split(), ["control"], run.describe())

    # ---- runc CVE-2021-43784: a long value overflowing the setup message

    def test_long_values_arrive_whole(self):
        big = "A" * 70000
        for run in self.in_box_and_exec('echo ${#BIG}', flags=["-e", "BIG=" + big]):
            self.assertExit(run, 0)
            self.assertEqual(run.out.strip(), "70000", run.describe())


if __name__ == "__main__":
    kerntest.main()
