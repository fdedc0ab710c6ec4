"""The public CVE classes of runc, crun and youki, tried against kern-oci (`kern oci`) with
rootless bundles; test_cve_oci_root.py runs the same attacks as root, test_cve_classes.py against
`kern box` and `kern exec`. Each attack has its control in the same run: the same configuration
without the attack's one change works and shows what the attack aims at (a masked file, a sysctl,
/proc, a capability set), or the same path resolved on the host leads where the attack wanted to
go. SECURITY.md ("Known runtime vulnerability classes") has the table of classes and tests.

The configurations here are what a shared volume or a racing container produces in the real
attacks (a /dev/null that is another device, a file bound over a procfs file, a symlinked /proc):
the tests make that state directly instead of winning a race, so each run is deterministic."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from test_oci_runtime import OciBundleCase, read_terminal, wait_pid  # noqa: E402


class OciCveTest(OciBundleCase):
    """Rootless: `kern oci spec --rootless` bundles run by the unprivileged test user."""

    def setUp(self):
        super().setUp()
        os.chmod(self.dir, 0o755)
        # A private copy of the root: the attacks plant symlinks in it.
        self.rootfs = os.path.join(self.dir, "rootfs")
        subprocess.run(["cp", "-a", self.s.rootfs, self.rootfs], check=True)
        self.cfg["root"] = {"path": self.rootfs, "readonly": False}
        self.n = 0

    def tearDown(self):
        super().tearDown()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- running

    def write_copy(self, cfg):
        with open(os.path.join(self.bundle, "config.json"), "w") as f:
            json.dump(cfg, f)

    def run_cfg(self, args, change=None):
        """`kern oci run` of the bundle with args, after change(cfg) on a copy; the Run."""
        cfg = json.loads(json.dumps(self.cfg))
        cfg["process"]["args"] = ["sh", "-c", args]
        if change is not None:
            change(cfg)
        self.write_copy(cfg)
        self.n += 1
        self.ids.append("cve%d" % self.n)
        return self.oci("run", "--bundle", self.bundle, "cve%d" % self.n)

    def run_terminal(self, args, change=None):
        """create over a console socket, start, read the terminal to the end: (create rc, create
        stderr, what the container wrote on its terminal)."""
        cfg = json.loads(json.dumps(self.cfg))
        cfg["process"]["args"] = ["sh", "-c", args]
        cfg["process"]["terminal"] = True
        if change is not None:
            change(cfg)
        self.write_copy(cfg)
        self.n += 1
        cid = "cvet%d" % self.n
        self.ids.append(cid)
        path = os.path.join(self.dir, "console%d.sock" % self.n)
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        srv.settimeout(20)
        with tempfile.TemporaryFile() as err:
            p = subprocess.Popen([self.s.kern, "oci", "--root", self.root, "create", "--bundle", self.bundle,
                                  "--console-socket", path, cid], env=self.base_env(), stderr=err,
                                 stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            master = None
            try:
                conn, _ = srv.accept()
                _, fds, _, _ = socket.recv_fds(conn, 16, 1)
                conn.close()
                master = fds[0] if fds else None
            except socket.timeout:
                pass
            rc = p.wait(30)
            err.seek(0)
            err_text = err.read().decode(errors="replace")
        srv.close()
        if rc != 0:
            if master is not None:
                os.close(master)
            return rc, err_text, ""
        pid = self.state(cid)["pid"]
        self.assertExit(self.oci("start", cid), 0)
        data = read_terminal(master)
        wait_pid(pid)
        os.close(master)
        return 0, err_text, data.decode(errors="replace")

    def assertRefused(self, run, *needles):
        self.assertNotEqual(run.rc, 0, "the attack's configuration was run\n" + run.describe())
        for n in needles:
            self.assertIn(n, run.err, run.describe())

    def host_file(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o666)
        return path

    # ---- runc CVE-2025-31133, youki CVE-2025-62161: the mask's /dev/null is not the null device

    def test_masked_file_is_covered_only_by_the_null_device(self):
        self.cfg["linux"]["maskedPaths"] = ["/proc/cmdline"]
        probe = "head -c 16 /proc/cmdline | wc -c"
        # Control: the mask works (0 bytes), while the host's /proc/cmdline has content.
        ok = self.run_cfg(probe)
        self.assertExit(ok, 0)
        self.assertEqual(ok.out.strip(), "0", "the masked file reads empty")
        with open("/proc/cmdline", "rb") as f:
            self.assertGreater(len(f.read(16)), 0, "discriminant: the host's /proc/cmdline has content")
        # The attack: what the container's /dev/null names at masking time is another device
        # (what a container sharing /dev swaps in during the race). It must not be bound.
        swapped = self.run_cfg(probe, lambda c: c["mounts"].append(
            {"destination": "/dev/null", "type": "bind", "source": "/dev/zero", "options": ["bind"]}))
        self.assertNotEqual(swapped.out.strip(), "16", "the masked file was covered with /dev/zero")
        self.assertRefused(swapped, "1:3")

    # ---- runc CVE-2025-52565, crun CVE-2026-88264: the /dev/console bind redirected by a symlink

    def test_console_bind_never_follows_a_symlink(self):
        def no_dev_tmpfs(c):
            c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/dev"]
        victim = os.path.join(self.rootfs, "victim")
        with open(victim, "w") as f:
            f.write("victim\n")
        console = os.path.join(self.rootfs, "dev", "console")
        probe = "stat -c %F /dev/console /victim"
        # Control: a /dev/console file in the image gets the terminal bound over it.
        with open(console, "w"):
            pass
        rc, err, out = self.run_terminal(probe, no_dev_tmpfs)
        self.assertEqual(rc, 0, err)
        self.assertIn("character special file", out.splitlines()[0] if out else "", out)
        # The attack: /dev/console is a symlink to another file of the root.
        os.unlink(console)
        os.symlink("/victim", console)
        rc, err, out = self.run_terminal(probe, no_dev_tmpfs)
        lines = out.splitlines()
        self.assertFalse(len(lines) > 1 and "character special file" in lines[1],
                         "the terminal was bound over the symlink's target: " + out)
        self.assertNotEqual(rc, 0, "a symlinked /dev/console was accepted: " + out)
        self.assertIn("/dev/console", err)
        with open(victim) as f:
            self.assertEqual(f.read(), "victim\n")

    # ---- runc CVE-2025-52881, youki CVE-2025-62596: a procfs write redirected by a mount

    def test_sysctl_write_is_not_redirected_by_a_mount(self):
        target = self.host_file("port_start", "untouched\n")
        sysctl = "/proc/sys/net/ipv4/ip_unprivileged_port_start"
        self.cfg["linux"]["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": "777"}
        # Control: the sysctl reaches the container's own network namespace.
        ok = self.run_cfg("cat " + sysctl)
        self.assertExit(ok, 0)
        self.assertEqual(ok.out.strip(), "777")
        # The attack: a host file bound over the sysctl's file before the write.
        bound = self.run_cfg("cat " + sysctl, lambda c: c["mounts"].append(
            {"destination": sysctl, "type": "bind", "source": target, "options": ["bind"]}))
        with open(target) as f:
            self.assertEqual(f.read(), "untouched\n", "the sysctl write went into the host file")
        self.assertRefused(bound, "procfs")

    def test_procfs_write_through_an_allowed_bind_is_refused(self):
        # A bind over one of the /proc files lxcfs covers is allowed, so the write itself must
        # see that its target is not procfs's own file.
        target = self.host_file("ns_last_pid", "untouched\n")
        self.cfg["linux"]["sysctl"] = {"kernel.ns_last_pid": "4242"}
        bound = self.run_cfg("true", lambda c: c["mounts"].append(
            {"destination": "/proc/sys/kernel/ns_last_pid", "type": "bind", "source": target,
             "options": ["bind"]}))
        with open(target) as f:
            self.assertEqual(f.read(), "untouched\n", "the sysctl write went into the host file")
        self.assertRefused(bound, "/proc/sys/kernel/ns_last_pid")
        # Control: the same bind without the sysctl runs (the bind itself is allowed).
        self.cfg["linux"].pop("sysctl")
        ok = self.run_cfg("cat /proc/sys/kernel/ns_last_pid", lambda c: c["mounts"].append(
            {"destination": "/proc/sys/kernel/ns_last_pid", "type": "bind", "source": target,
             "options": ["bind"]}))
        self.assertExit(ok, 0)
        self.assertEqual(ok.out.strip(), "untouched")

    # ---- runc CVE-2019-16884, CVE-2023-27561, CVE-2023-28642: /proc covered or symlinked

    def test_nothing_is_mounted_over_proc(self):
        fake = os.path.join(self.dir, "fakeproc")
        os.makedirs(os.path.join(fake, "self", "attr"))
        # Without masks, whose binds go through /proc/self/fd and so would trip over the fake.
        self.cfg["linux"]["maskedPaths"] = []
        self.cfg["linux"]["readonlyPaths"] = []
        probe = "stat -f -c %T /proc"
        ok = self.run_cfg(probe)
        self.assertExit(ok, 0)
        self.assertEqual(ok.out.strip(), "proc")
        covered = self.run_cfg(probe, lambda c: c["mounts"].append(
            {"destination": "/proc", "type": "bind", "source": fake, "options": ["rbind"]}))
        if covered.rc == 0:
            self.assertEqual(covered.out.strip(), "proc", "a bind covers the container's /proc")
        self.assertRefused(covered, "procfs")

    def test_proc_mounted_through_a_symlink_is_refused(self):
        os.rmdir(os.path.join(self.rootfs, "proc"))
        os.mkdir(os.path.join(self.rootfs, "elsewhere"))
        os.symlink("/elsewhere", os.path.join(self.rootfs, "proc"))
        run = self.run_cfg("stat -f -c %T /proc")
        self.assertRefused(run, "symlink")
        # Control: the same root with /proc a directory again runs.
        os.unlink(os.path.join(self.rootfs, "proc"))
        os.mkdir(os.path.join(self.rootfs, "proc"))
        ok = self.run_cfg("stat -f -c %T /proc")
        self.assertExit(ok, 0)
        self.assertEqual(ok.out.strip(), "proc")

    # ---- runc CVE-2021-30465, CVE-2019-19921, CVE-2024-45310, crun CVE-2019-18837: mount
    # targets through symlinks, made on the host

    def symlinked_root(self):
        """A root whose /link names a host directory by its absolute path; returns that dir."""
        host = os.path.join(self.dir, "host-side")
        os.mkdir(host)
        os.chmod(host, 0o777)
        os.symlink(host, os.path.join(self.rootfs, "link"))
        return host

    def test_mount_targets_stay_inside_the_root(self):
        host = self.symlinked_root()
        src = self.host_file("source-file", "bound\n")
        # Control: resolved on the host, the same path is the host directory.
        self.assertEqual(os.path.realpath(os.path.join(self.rootfs, "link", "made-dir")),
                         os.path.join(host, "made-dir"))

        def mounts(c):
            c["mounts"].append({"destination": "/link/made-dir", "type": "tmpfs", "source": "tmpfs",
                                "options": ["size=64k"]})
            c["mounts"].append({"destination": "/link/made-file", "type": "bind", "source": src,
                                "options": ["bind"]})
        run = self.run_cfg("cat /link/made-file; stat -f -c %T /link/made-dir", mounts)
        self.assertEqual(os.listdir(host), [], "a mount point was made on the host")
        if run.rc == 0:
            self.assertEqual(run.out.split(), ["bound", "tmpfs"], run.describe())

    def test_swapped_mount_target_never_lands_on_the_host(self):
        host = os.path.join(self.dir, "host-side")
        os.mkdir(host)
        os.chmod(host, 0o777)
        vol = os.path.join(self.rootfs, "vol")
        os.mkdir(vol)
        a = os.path.join(vol, "a")
        os.mkdir(a)
        # The host path also exists inside the root, so a run that meets the symlink succeeds
        # too (its mount lands there, inside): every run is a try, none is wasted on ENOENT.
        os.makedirs(self.rootfs + host)
        stop = threading.Event()

        def swap():
            # Another container sharing the volume: a is a directory, then a symlink to the host.
            while not stop.is_set():
                try:
                    os.rename(a, a + ".d")
                    os.symlink(host, a)
                    time.sleep(0.0005)
                    os.unlink(a)
                    os.rename(a + ".d", a)
                    time.sleep(0.0005)
                except OSError:
                    pass
        t = threading.Thread(target=swap)
        t.start()
        ran = 0
        try:
            for _ in range(12):
                run = self.run_cfg("true", lambda c: c["mounts"].append(
                    {"destination": "/vol/a/x", "type": "tmpfs", "source": "tmpfs", "options": ["size=64k"]}))
                ran += run.rc == 0
                last = run
        finally:
            stop.set()
            t.join()
        self.assertEqual(os.listdir(host), [], "a mount point was made on the host")
        self.assertGreater(ran, 0, "no run got through the race at all\n" + last.describe())

    # ---- runc CVE-2022-29162, crun CVE-2022-27650: inheritable capabilities

    def test_inheritable_set_is_what_the_config_says(self):
        probe = "grep CapInh /proc/self/status"
        run = self.run_cfg(probe)
        self.assertExit(run, 0)
        self.assertEqual(int(run.out.split()[1], 16), 0, run.out)
        # Control: a configuration that asks for one gets it (the reading is right).
        asked = self.run_cfg(probe, lambda c: c["process"]["capabilities"].update(inheritable=["CAP_KILL"]))
        self.assertExit(asked, 0)
        self.assertEqual(int(asked.out.split()[1], 16), 1 << 5, asked.out)

    # ---- runc CVE-2023-25809: rootless /sys/fs/cgroup writable

    def cgroup_mounts(self, change=None):
        """The mount options of every mount at or under /sys/fs/cgroup in the container."""
        run = self.run_cfg("grep ' /sys/fs/cgroup' /proc/self/mountinfo", change)
        self.assertExit(run, 0)
        found = [line.split()[5].split(",") for line in run.out.splitlines()]
        self.assertTrue(found, run.describe())
        return found, run

    def test_host_cgroup_tree_is_never_writable(self):
        # Control: the host's own /sys/fs/cgroup is writable (by its owner).
        with open("/proc/self/mountinfo") as f:
            host = [line.split()[5] for line in f if line.split()[4] == "/sys/fs/cgroup"]
        self.assertIn("rw", host[0].split(","), "discriminant: the host's cgroup tree is mounted rw")
        # The /sys bind of the rootless specification ("rbind", "ro") carries the host's cgroup
        # tree under it: read-only all the way down.
        options, run = self.cgroup_mounts()
        for o in options:
            self.assertIn("ro", o, run.out)

        # Without a cgroup namespace the container cannot mount its own cgroup tree and gets
        # the host's bound: read-only even when the configuration does not say "ro".
        def no_cgroupns_rw(c):
            c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "cgroup"]
            for m in c["mounts"]:
                if m["destination"] == "/sys/fs/cgroup":
                    m["options"] = [o for o in m["options"] if o != "ro"]
        options, run = self.cgroup_mounts(no_cgroupns_rw)
        for o in options:
            self.assertIn("ro", o, run.out)

    def test_readonly_paths_and_masked_directories_hold(self):
        # What the masks and read-only paths above must still be, mounted by descriptors.
        run = self.run_cfg("grep -E ' /proc/(sys|bus) ' /proc/self/mountinfo | cut -d' ' -f5,6; "
                           "ls -A /sys/firmware | wc -l; echo x > /proc/sys/kernel/hostname || echo refused")
        self.assertExit(run, 0)
        lines = run.out.split()
        self.assertEqual(lines[0::2][:2], ["/proc/bus", "/proc/sys"], run.describe())
        for options in lines[1:4:2]:
            self.assertTrue(set(options.split(",")) >= {"ro", "nosuid", "nodev", "noexec"}, run.describe())
        self.assertEqual(lines[4:], ["0", "refused"], run.describe())
        self.assertTrue(os.listdir("/sys/firmware"), "discriminant: the host's /sys/firmware has entries")

    # ---- the same classes through `kern oci exec` (podman exec, ctr task exec)

    def test_exec_meets_the_masks_procfs_and_capability_sets(self):
        self.cfg["linux"]["maskedPaths"] = ["/proc/cmdline"]
        self.running("cvex")
        probe = ("head -c 16 /proc/cmdline | wc -c; stat -f -c %T /proc /proc/self/attr; "
                 "grep -E '^Cap(Inh|Bnd)' /proc/self/status")
        run = self.oci("exec", "cvex", "sh", "-c", probe)
        self.assertExit(run, 0)
        lines = run.out.split()
        self.assertEqual(lines[:3], ["0", "proc", "proc"], run.describe())
        caps = dict(zip(lines[3::2], lines[4::2]))
        self.assertEqual(int(caps["CapInh:"], 16), 0, run.describe())
        self.assertNotEqual(int(caps["CapBnd:"], 16), 0, "control: the exec'd process holds a bounding set")
        with open("/proc/cmdline", "rb") as f:
            self.assertGreater(len(f.read(16)), 0, "discriminant: the host's /proc/cmdline has content")

    # ---- runc CVE-2021-43784: a long value overflowing the setup message

    def test_long_values_reach_the_process_whole_and_change_nothing_else(self):
        big = "A" * 70000
        run = self.run_cfg('echo ${#BIG}; grep CapBnd /proc/self/status',
                           lambda c: c["process"]["env"].append("BIG=" + big))
        self.assertExit(run, 0)
        lines = run.out.split("\n")
        self.assertEqual(lines[0], "70000")
        ok = self.run_cfg("grep CapBnd /proc/self/status")
        self.assertEqual(lines[1], ok.out.strip(), "the capability set changed with the value's length")


if __name__ == "__main__":
    kerntest.main()
