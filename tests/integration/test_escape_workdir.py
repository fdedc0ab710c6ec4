"""A working directory outside the box's root (issue 21 item 1, the runc CVE-2024-21626 pattern).

A working directory of /proc/self/fd/N (or a symlink in the box's tree to one) used to land the
workload in a directory kern had open: a -v bind's source (the O_PATH fd kern mounts it from), a
caller's fd passed to kern exec. From there `ls ..` lists the host. Now:
  - /proc/self/..., /proc/thread-self/..., /proc/<pid>/... are refused up front as a working
    directory, from -w, an image's WorkingDir, kern exec -w and OCI process.cwd (125 for kern box);
  - every fd that is not passed is closed before the chdir (a symlink in the tree to
    /proc/self/fd/N then names nothing), and getcwd after it must be under the root.
Each attack is tried for every fd number from 3 to 12; the discriminant is the host's listing of
the bind source's parent, which holds a marker no box may see. On 41adc44, -w /proc/self/fd/5
with a -v bind listed that parent, and so did a symlink /esc-5 -> /proc/self/fd/5."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
from busybox_rootfs import build_rootfs  # noqa: E402
import kerntest  # noqa: E402
from test_oci_runtime import OciBundleCase  # noqa: E402

FDS = range(3, 13)
OUTSIDE_MARK = "outside-the-box-marker"
INSIDE_MARK = "bind-source-marker"
LIST = "ls -a . .. ../.. 2>&1; pwd"


class WorkdirCase(kerntest.KernTestCase):

    def host_tree(self):
        """PARENT/{OUTSIDE_MARK, src/INSIDE_MARK}: src is bound read-only into the box; no box
        may list PARENT. Returns src."""
        parent = os.path.join(self.s.work, "wd-%s" % self.id().rsplit(".", 1)[-1])
        src = os.path.join(parent, "src")
        os.makedirs(src)
        for p in (os.path.join(parent, OUTSIDE_MARK), os.path.join(src, INSIDE_MARK)):
            with open(p, "w") as f:
                f.write("x\n")
        # The positive control: the host itself lists the marker there.
        self.assertIn(OUTSIDE_MARK, os.listdir(parent))
        return src

    def assert_stayed_inside(self, run, what):
        for mark in (OUTSIDE_MARK, INSIDE_MARK):
            self.assertNotIn(mark, run.out, "%s: the workload's working directory was outside the root\n%s"
                             % (what, run.describe()))

    def symlinks_to_fds(self):
        """/esc-N -> /proc/self/fd/N in the box's tree, for every N tried."""
        for n in FDS:
            link = os.path.join(self.s.rootfs, "esc-%d" % n)
            if not os.path.islink(link):
                os.symlink("/proc/self/fd/%d" % n, link)


class BoxWorkdirTest(WorkdirCase):

    def test_w_proc_self_fd_is_refused(self):
        src = self.host_tree()
        runs = [(n, self.box(["/bin/sh", "-c", LIST], flags=["-v", src + ":/mnt:ro", "-w", "/proc/self/fd/%d" % n]))
                for n in FDS]
        for n, run in runs:
            self.assert_stayed_inside(run, "-w /proc/self/fd/%d" % n)
        for n, run in runs:
            self.assertKernError(run, "refusing the working directory", "/proc/self/fd/%d" % n)
        for w in ("/proc/thread-self/fd/3", "/proc/1/cwd", "/proc//self/./fd/4", "/proc/self/cwd"):
            run = self.box(["/bin/true"], flags=["-w", w])
            self.assertKernError(run, "refusing the working directory")
        # A directory merely named like one is not refused.
        run = self.box(["/bin/sh", "-c", "pwd"], flags=["-w", "/procfs/self/fd/3"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), "/procfs/self/fd/3")

    def test_symlink_in_the_tree_to_a_proc_fd_finds_nothing_open(self):
        src = self.host_tree()
        self.symlinks_to_fds()
        for n in FDS:
            run = self.box(["/bin/sh", "-c", LIST], flags=["-v", src + ":/mnt:ro", "-w", "/esc-%d" % n])
            self.assert_stayed_inside(run, "-w /esc-%d -> /proc/self/fd/%d" % (n, n))
            self.assertKernError(run, "chdir", "/esc-%d" % n)

    def test_image_workingdir_in_proc_is_refused(self):
        src = self.host_tree()
        work = os.path.join(self.s.work, "wd-image")
        os.makedirs(work, exist_ok=True)
        layer = build_images.busybox_layer()
        runs = []
        for n in FDS:
            tag = "wd-escape:fd%d" % n
            path = os.path.join(work, "fd%d.tar" % n)
            build_images.write_docker_archive(path, [layer], [tag], workdir="/proc/self/fd/%d" % n,
                                              cmd=["/bin/sh", "-c", LIST])
            self.assertExit(self.kern("load", "-i", path), 0)
            runs.append((n, self.box(None, flags=["--image", tag, "-v", src + ":/mnt:ro"], rootfs=False)))
        for n, run in runs:
            self.assert_stayed_inside(run, "WorkingDir /proc/self/fd/%d" % n)
        for n, run in runs:
            self.assertKernError(run, "the image's WorkingDir", "refusing the working directory")


class ExecWorkdirTest(WorkdirCase):

    def test_exec_w_into_a_callers_directory_fd(self):
        src = self.host_tree()
        self.symlinks_to_fds()
        sp = self.spawn_box(["/bin/sleep", "60"], flags=["-v", src + ":/mnt:ro"])
        self.assertEqual(sp.wait_started()[:1], b"\x01", "the box did not start")
        # The caller holds a directory of the host open (not close-on-exec), as a shell or an
        # SDK may: kern exec must not carry it into the box.
        fd = os.open(os.path.dirname(src), os.O_RDONLY | os.O_DIRECTORY)
        os.set_inheritable(fd, True)
        self.addCleanup(os.close, fd)
        try:
            runs = []
            for n in sorted(set(FDS) | {fd}):
                runs.append(("/proc/self/fd/%d" % n, self.kern("exec", "-w", "/proc/self/fd/%d" % n, sp.name, "--",
                                                               "/bin/sh", "-c", LIST, pass_fds=(fd,))))
                if n in FDS:
                    runs.append(("/esc-%d" % n, self.kern("exec", "-w", "/esc-%d" % n, sp.name, "--",
                                                          "/bin/sh", "-c", LIST, pass_fds=(fd,))))
            for w, run in runs:
                self.assert_stayed_inside(run, "kern exec -w %s" % w)
            for w, run in runs:
                self.assertNotEqual(run.rc, 0, run.describe())
                if w.startswith("/proc"):
                    self.assertIn("refusing the working directory", run.err, run.describe())
            # The control: the same exec with a working directory of the box works.
            run = self.kern("exec", "-w", "/mnt", sp.name, "--", "/bin/sh", "-c", LIST, pass_fds=(fd,))
            self.assertExit(run, 0)
            self.assertIn(INSIDE_MARK, run.out)
        finally:
            sp.popen.terminate()
            sp.finish(20)


class OciWorkdirTest(OciBundleCase, WorkdirCase):

    def host_tree(self):
        # kern-oci's own state directory (--root) is a directory it holds open too: its parent
        # gets the marker as well.
        with open(os.path.join(self.dir, OUTSIDE_MARK), "w") as f:
            f.write("x\n")
        return super().host_tree()

    def bind(self, src):
        self.cfg["mounts"].append({"destination": "/mnt", "type": "bind", "source": src,
                                   "options": ["rbind", "ro"]})

    def test_process_cwd_in_proc_is_refused(self):
        src = self.host_tree()
        self.bind(src)
        runs = []
        for n in FDS:
            self.write_cfg(args=["/bin/sh", "-c", LIST], cwd="/proc/self/fd/%d" % n)
            runs.append((n, self.oci("run", "--bundle", self.bundle, "wd%d" % n)))
        for n, run in runs:
            self.assert_stayed_inside(run, "process.cwd /proc/self/fd/%d" % n)
        for n, run in runs:
            self.assertExit(run, 1)
            self.assertIn("process.cwd: refusing the working directory", run.err, run.describe())

    def test_process_cwd_symlink_to_a_proc_fd_finds_nothing_open(self):
        src = self.host_tree()
        self.bind(src)
        self.symlinks_to_fds()
        for n in FDS:
            self.write_cfg(args=["/bin/sh", "-c", LIST], cwd="/esc-%d" % n)
            run = self.oci("run", "--bundle", self.bundle, "ws%d" % n)
            self.assert_stayed_inside(run, "process.cwd /esc-%d" % n)
            self.assertNotEqual(run.rc, 0, run.describe())
            self.oci("delete", "--force", "ws%d" % n)

    def test_exec_cwd_in_proc_is_refused(self):
        src = self.host_tree()
        self.bind(src)
        self.write_cfg(args=["/bin/sleep", "60"])
        self.create("wx")
        self.assertExit(self.oci("start", "wx"), 0)
        runs = [(n, self.oci("exec", "--cwd", "/proc/self/fd/%d" % n, "wx", "/bin/sh", "-c", LIST)) for n in FDS]
        for n, run in runs:
            self.assert_stayed_inside(run, "kern oci exec --cwd /proc/self/fd/%d" % n)
        for n, run in runs:
            self.assertIn("process.cwd: refusing the working directory", run.err, run.describe())
        run = self.oci("exec", "--cwd", "/mnt", "wx", "/bin/sh", "-c", LIST)
        self.assertExit(run, 0)
        self.assertIn(INSIDE_MARK, run.out)


class RootfulOciWorkdirTest(unittest.TestCase):
    """kern-oci as root (as containerd and rootful podman run it): its fds are the container's
    cgroup directory and its state directory, both the host's. On 41adc44 process.cwd
    /proc/self/fd/3 listed /sys/fs/cgroup and /proc/self/fd/4 kern-oci's --root. Runs in the
    root phase of this file (before kerntest drops to the test user); run as another user, it is
    skipped by name ("root")."""

    def setUp(self):
        kerntest.require(self, "root", os.geteuid() == 0, "kern-oci as root: run this file as root (ctest does)")
        self.kern = os.environ.get("KERN_BIN", "")
        self.dir = tempfile.mkdtemp(prefix="kern-escape-rootful-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.rootfs = os.path.join(self.dir, "rootfs")
        build_rootfs(self.rootfs, None, self.dir)
        for n in FDS:
            os.symlink("/proc/self/fd/%d" % n, os.path.join(self.rootfs, "esc-%d" % n))
        self.bundle = os.path.join(self.dir, "bundle")
        os.mkdir(self.bundle)
        self.state = os.path.join(self.dir, "state")
        os.mkdir(os.path.join(self.dir, "run"), 0o700)
        self.assertEqual(self.oci("spec", "--bundle", self.bundle).returncode, 0)
        with open(os.path.join(self.bundle, "config.json")) as f:
            self.cfg = json.load(f)
        self.cfg["root"]["path"] = self.rootfs
        self.cfg["process"]["terminal"] = False
        with open(os.path.join(self.dir, OUTSIDE_MARK), "w") as f:
            f.write("x\n")

    def oci(self, *args):
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "XDG_RUNTIME_DIR": os.path.join(self.dir, "run")}
        argv = [self.kern, "oci"] + (["--root", self.state] if args[0] != "spec" else []) + list(args)
        return subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)

    def run_with_cwd(self, cwd, cid):
        self.cfg["process"]["args"] = ["/bin/sh", "-c", "echo RAN; " + LIST]
        self.cfg["process"]["cwd"] = cwd
        with open(os.path.join(self.bundle, "config.json"), "w") as f:
            json.dump(self.cfg, f)
        p = self.oci("run", "--bundle", self.bundle, cid)
        self.oci("delete", "--force", cid)
        return p

    def test_process_cwd_never_reaches_the_hosts_directories(self):
        runs = [(w, self.run_with_cwd(w, "rf%d" % i))
                for i, w in enumerate(["/proc/self/fd/%d" % n for n in FDS] + ["/esc-%d" % n for n in FDS])]
        for w, p in runs:
            self.assertNotIn("RAN", p.stdout, "process.cwd %s: the program ran, in %r\n%s" % (w, p.stdout, p.stderr))
            self.assertNotEqual(p.returncode, 0, w)
        for w, p in runs:
            if w.startswith("/proc"):
                self.assertIn("process.cwd: refusing the working directory", p.stderr)
        # The control: a working directory of the container runs.
        p = self.run_with_cwd("/tmp", "rf-ok")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("RAN", p.stdout)


def run_rootful_phase():
    """As root, before kerntest drops: the rootful class alone. Its failure fails the file."""
    print("=== test_escape_workdir.py: the rootful phase, uid 0", flush=True)
    suite = unittest.TestLoader().loadTestsFromTestCase(RootfulOciWorkdirTest)
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    if not result.wasSuccessful():
        print("KERNTEST test_escape_workdir.py: FAILED in the rootful phase", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    if os.geteuid() == 0 and not os.environ.get(kerntest.REEXEC_MARK):
        run_rootful_phase()
    elif os.environ.get(kerntest.REEXEC_MARK):
        del RootfulOciWorkdirTest  # it ran as root before the drop
    kerntest.main()
