"""kern cp as the unprivileged user: files and directories into and out of a running box (read
back with kern exec, and on the host: owned by the caller), tar streams both ways, symlinks that
resolve in the box (the box's /etc/hostname, not the host's), a ".." above the box's "/" refused,
an unknown box, a read-only box, and nothing left behind by a copy that failed half-way (neither
in the box nor on the host, nor a process). Each claim is read against a control in the same
run: the file absent before the copy, the host's own /etc/hostname, the same copy that succeeds."""

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402

BOX_HOSTNAME = "kern-cp-box-own-hostname"
# The box's workload makes what the tests copy out, then sleeps.
SETUP = ("echo %s > /etc/hostname && ln -s /etc/hostname /tmp/hlink && mkdir -p /tmp/d/sub && "
         "echo one > /tmp/d/a && echo two > /tmp/d/sub/b && ln -s a /tmp/d/alink && touch /tmp/ready && "
         "exec sleep 1000" % BOX_HOSTNAME)


class CpTest(DetachedCase):
    def setUp(self):
        super().setUp()
        self.host = tempfile.mkdtemp(prefix="cp-", dir=self.s.work)
        self.addCleanup(shutil.rmtree, self.host, True)

    def ready_box(self, flags=(), cmd=("sh", "-c", SETUP)):
        name = self.started(list(cmd), flags)
        self.wait_for(name, lambda r: self.kern("exec", name, "test", "-e", "/tmp/ready").rc == 0,
                      what="the box's setup")
        return name

    def cat(self, name, path):
        return self.kern("exec", name, "cat", path)

    def cp(self, *args, **kw):
        return self.kern("cp", *args, **kw)

    def host_file(self, rel, text):
        p = os.path.join(self.host, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        return p

    def assertCpError(self, run, code, *needles):
        self.assertExit(run, code)
        self.assertTrue([l for l in run.err.splitlines() if l.startswith("kern: error: ")], run.describe())
        self.assertIn("kern: hint: ", run.err, run.describe())
        for n in needles:
            self.assertIn(n, run.err, run.describe())

    def test_host_to_box_file_and_directory(self):
        name = self.ready_box()
        f = self.host_file("f.txt", "from the host\n")
        self.assertNotEqual(self.cat(name, "/tmp/f.txt").rc, 0, "control: not in the box before the copy")
        self.assertExit(self.cp(f, name + ":/tmp/"), 0)
        self.assertEqual(self.cat(name, "/tmp/f.txt").out, "from the host\n")
        # Owned by the box's root, whoever the caller is on the host.
        self.assertEqual(self.kern("exec", name, "stat", "-c", "%u:%g", "/tmp/f.txt").out.strip(), "0:0")
        # A file onto a new name, and over an existing file.
        self.assertExit(self.cp(f, name + ":/tmp/renamed"), 0)
        self.assertEqual(self.cat(name, "/tmp/renamed").out, "from the host\n")
        self.host_file("g.txt", "second\n")
        self.assertExit(self.cp(os.path.join(self.host, "g.txt"), name + ":/tmp/renamed"), 0)
        self.assertEqual(self.cat(name, "/tmp/renamed").out, "second\n")

        self.host_file("tree/x", "x\n")
        self.host_file("tree/deep/y", "y\n")
        tree = os.path.join(self.host, "tree")
        self.assertExit(self.cp(tree, name + ":/tmp/"), 0)          # into an existing directory
        self.assertEqual(self.cat(name, "/tmp/tree/deep/y").out, "y\n")
        self.assertExit(self.cp(tree, name + ":/tmp/newtree"), 0)   # as a new directory
        self.assertEqual(self.cat(name, "/tmp/newtree/x").out, "x\n")
        self.assertExit(self.cp(tree + "/.", name + ":/tmp/d"), 0)  # its contents only
        self.assertEqual(self.cat(name, "/tmp/d/deep/y").out, "y\n")
        self.assertEqual(self.cat(name, "/tmp/d/a").out, "one\n", "what the directory had stays")
        # Docker's table: a directory onto a file, a file into a missing "dir/", a missing parent.
        self.assertCpError(self.cp(tree, name + ":/tmp/f.txt"), 1, "cannot copy a directory onto the file")
        self.assertCpError(self.cp(f, name + ":/tmp/nodir/"), 1, "does not exist")
        self.assertCpError(self.cp(f, name + ":/tmp/no/such/f"), 1, "chdir", "/tmp/no/such", "ENOENT")

    def test_box_to_host_file_and_directory(self):
        name = self.ready_box()
        out = os.path.join(self.host, "a.txt")
        self.assertExit(self.cp(name + ":/tmp/d/a", out), 0)
        with open(out) as fh:
            self.assertEqual(fh.read(), "one\n")
        self.assertEqual(os.stat(out).st_uid, os.getuid(), "the caller's own on the host")
        self.assertExit(self.cp(name + ":/tmp/d", os.path.join(self.host, "dcopy")), 0)
        with open(os.path.join(self.host, "dcopy", "sub", "b")) as fh:
            self.assertEqual(fh.read(), "two\n")
        st = os.lstat(os.path.join(self.host, "dcopy", "sub", "b"))
        self.assertEqual((st.st_uid, st.st_gid), (os.getuid(), os.getgid()))
        # A symlink below SRC stays a symlink.
        self.assertEqual(os.readlink(os.path.join(self.host, "dcopy", "alink")), "a")
        self.assertExit(self.cp(name + ":/tmp/d", self.host + "/"), 0)  # into an existing directory
        self.assertTrue(os.path.isfile(os.path.join(self.host, "d", "sub", "b")))
        # A missing source: named, with the errno, and nothing made on the host.
        before = sorted(os.listdir(self.host))
        run = self.cp(name + ":/tmp/nothing-here", os.path.join(self.host, "n"))
        self.assertCpError(run, 1, "lstat", "/tmp/nothing-here", "ENOENT", "kern exec " + name)
        self.assertEqual(sorted(os.listdir(self.host)), before)

    def test_streams_both_ways(self):
        name = self.ready_box()
        run = self.cp(name + ":/tmp/d", "-")
        self.assertExit(run, 0)
        with tarfile.open(fileobj=io.BytesIO(run.out_b)) as t:
            names = sorted(m.name.rstrip("/") for m in t.getmembers())
            self.assertEqual(names, ["d", "d/a", "d/alink", "d/sub", "d/sub/b"])
            self.assertEqual(t.extractfile("d/sub/b").read(), b"two\n")
            self.assertEqual(t.getmember("d/alink").linkname, "a")
        src = os.path.join(self.host, "in.tar")
        with tarfile.open(src, "w", format=tarfile.PAX_FORMAT) as t:
            data = b"streamed in\n"
            info = tarfile.TarInfo("t/in.txt")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        self.assertNotEqual(self.cat(name, "/tmp/t/in.txt").rc, 0, "control")
        with open(src, "rb") as fh:
            self.assertExit(self.cp("-", name + ":/tmp", stdin=fh), 0)
        self.assertEqual(self.cat(name, "/tmp/t/in.txt").out, "streamed in\n")
        with open(src, "rb") as fh:
            self.assertCpError(self.cp("-", name + ":/tmp/d/a", stdin=fh), 1, "existing directory")
        # A tar whose entries climb out of DST or are absolute: refused in the box, nothing written.
        for bad in ("../escaped.txt", "/tmp/absolute.txt", "x/../../escaped.txt"):
            evil = os.path.join(self.host, "evil.tar")
            with tarfile.open(evil, "w") as t:
                info = tarfile.TarInfo(bad)
                info.size = 1
                t.addfile(info, io.BytesIO(b"!"))
            with open(evil, "rb") as fh:
                run = self.cp("-", name + ":/tmp/d/sub", stdin=fh)
            self.assertCpError(run, 1, "in the box")
            for p in ("/tmp/d/escaped.txt", "/tmp/escaped.txt", "/tmp/absolute.txt", "/tmp/d/sub/tmp"):
                self.assertNotEqual(self.kern("exec", name, "test", "-e", p).rc, 0, "%s from %s" % (p, bad))

    def test_symlinks_resolve_in_the_box(self):
        name = self.ready_box()
        with open("/etc/hostname") as fh:
            host_own = fh.read()
        self.assertNotEqual(host_own.strip(), BOX_HOSTNAME, "control: the host's file differs from the box's")
        out = os.path.join(self.host, "h")
        self.assertExit(self.cp("-L", name + ":/tmp/hlink", out), 0)
        with open(out) as fh:
            self.assertEqual(fh.read(), BOX_HOSTNAME + "\n", "the box's /etc/hostname")
        # Without -L, the link itself.
        self.assertExit(self.cp(name + ":/tmp/hlink", os.path.join(self.host, "l")), 0)
        self.assertEqual(os.readlink(os.path.join(self.host, "l")), "/etc/hostname")
        # A symlinked directory on the way to DST resolves in the box too.
        self.assertExit(self.kern("exec", name, "ln", "-s", "/tmp/d", "/tmp/dlink"), 0)
        f = self.host_file("via.txt", "via\n")
        self.assertExit(self.cp(f, name + ":/tmp/dlink/sub/"), 0)
        self.assertEqual(self.cat(name, "/tmp/d/sub/via.txt").out, "via\n")
        # A symlink in the box to a directory of the host's names nothing in the box: the copy
        # fails there, and the host's directory (which exists: the control) gets nothing.
        hostdir = tempfile.mkdtemp(prefix="target-", dir=self.s.work)
        self.addCleanup(shutil.rmtree, hostdir, True)
        self.assertTrue(os.path.isdir(hostdir))
        self.assertExit(self.kern("exec", name, "ln", "-s", hostdir, "/tmp/tohost"), 0)
        self.assertCpError(self.cp(f, name + ":/tmp/tohost/"), 1, "in the box")
        self.assertCpError(self.cp(f, name + ":/tmp/tohost/x"), 1, "chdir", "ENOENT")
        self.assertEqual(os.listdir(hostdir), [])

    def test_dotdot_above_the_root_is_refused(self):
        name = self.ready_box()
        self.assertExit(self.cp(name + ":/tmp/../etc/hostname", os.path.join(self.host, "ok")), 0)  # control
        for path in ("/../../etc/passwd", "../../etc/passwd", "/a/../../x"):
            dst = os.path.join(self.host, "refused")
            run = self.cp(name + ":" + path, dst)
            self.assertCpError(run, 2, "climbs above the box's")
            self.assertFalse(os.path.exists(dst))
            f = self.host_file("x", "x\n")
            self.assertCpError(self.cp(f, name + ":" + path), 2, "climbs above the box's")

    def test_unknown_box_and_bad_words(self):
        f = self.host_file("f", "f\n")
        run = self.cp(f, "no-such-box:/tmp/")
        self.assertCpError(run, 1, 'no box named "no-such-box"', "kern ps")
        self.assertCpError(self.cp(f, os.path.join(self.host, "g")), 2, "neither SRC nor DST")
        self.assertCpError(self.cp("a:/x", "b:/y"), 2, "both SRC and DST")
        name = self.started(["true"])
        self.wait_for(name, lambda r: r["state"] == "exited")
        self.assertCpError(self.cp(f, name + ":/tmp/"), 1, "is not running")

    def test_read_only_box_refuses_and_keeps_nothing(self):
        name = self.ready_box(flags=["--read-only", "--tmpfs", "/tmp"],
                              cmd=("sh", "-c", "touch /tmp/ready && exec sleep 1000"))
        f = self.host_file("f", "f\n")
        self.assertExit(self.cp(f, name + ":/tmp/"), 0)  # control: its tmpfs takes it
        run = self.cp(f, name + ":/etc/")
        self.assertCpError(run, 1, "/etc", "EROFS", "read-only")
        self.assertNotEqual(self.cat(name, "/etc/f").rc, 0)

    def test_a_failed_copy_leaves_nothing(self):
        name = self.ready_box()
        marker = kerntest.unique_marker("cp")
        # Into the box: the host side fails half-way (an unreadable file after a readable one).
        self.host_file("half/1-ok", "ok\n")
        bad = self.host_file("half/2-unreadable", "no\n")
        os.chmod(bad, 0)
        self.addCleanup(os.chmod, bad, 0o600)
        before = self.kern("exec", name, "ls", "-a", "/tmp").out
        run = self.cp(os.path.join(self.host, "half"), name + ":/tmp/" + marker)
        self.assertCpError(run, 1, "2-unreadable")
        self.assertEqual(self.kern("exec", name, "ls", "-a", "/tmp").out, before, "left in the box's /tmp")
        self.assertEqual(kerntest.pids_left(marker, 1.0), [], "a process left behind")
        os.chmod(bad, 0o600)
        self.assertExit(self.cp(os.path.join(self.host, "half"), name + ":/tmp/" + marker), 0)  # control
        self.assertEqual(self.cat(name, "/tmp/%s/2-unreadable" % marker).out, "no\n")
        # Out of the box: the host side fails half-way. The box's /dev holds the host's device
        # nodes, which the caller may not make on the host (mknod: EPERM), after its own directory.
        dst = os.path.join(self.host, marker)
        run = self.cp(name + ":/dev", dst)
        self.assertCpError(run, 1, "mknod", marker + "/", "EPERM")
        self.assertFalse(os.path.lexists(dst), "left on the host")
        self.assertFalse([n for n in os.listdir(self.host) if marker in n])
        self.assertEqual(kerntest.pids_left(marker, 1.0), [], "a process left behind")
        self.assertExit(self.cp(name + ":/tmp/d", dst), 0)  # control: the same copy of a plain tree
        self.assertTrue(os.path.isfile(os.path.join(dst, "a")))

    def test_kern_cp_killed_half_way_leaves_nothing_in_the_box(self):
        name = self.ready_box()
        marker = kerntest.unique_marker("cpkill")
        big = os.path.join(self.host, "big")
        with open(big, "wb") as fh:
            fh.truncate(8 << 30)  # sparse: 8 GiB of zeros to read, none to store on the host
        sp = self._popen([self.s.kern, "cp", big, name + ":/tmp/" + marker], None, subprocess.DEVNULL, (), False, None)
        end = time.monotonic() + 10
        seen = False
        while time.monotonic() < end and not seen:
            seen = self.kern("exec", name, "test", "-e", "/tmp/" + marker).rc == 0
            time.sleep(0.02)
        still_running = sp.popen.poll() is None
        sp.popen.kill()
        sp.popen.communicate()
        self.assertTrue(seen, "the copy never started writing in the box")
        self.require("slow-copy", still_running, "the copy ended before it could be killed")
        self.assertEqual(kerntest.pids_left(marker, 12.0), [], "kern cp's child outlived it")
        self.assertNotEqual(self.kern("exec", name, "test", "-e", "/tmp/" + marker).rc, 0,
                            "the half-written file stayed in the box")
        # Control: the check above sees a file that is there.
        self.assertExit(self.kern("exec", name, "touch", "/tmp/" + marker), 0)
        self.assertEqual(self.kern("exec", name, "test", "-e", "/tmp/" + marker).rc, 0)

    def test_a_foreground_box(self):
        sp = self.spawn_box(["sh", "-c", "echo fg > /tmp/fg && exec sleep 1000"])
        self.assertEqual(sp.wait_started()[:1], b"\x01", "the box did not start")
        end = time.monotonic() + 10
        while self.kern("exec", sp.name, "test", "-e", "/tmp/fg").rc != 0 and time.monotonic() < end:
            time.sleep(0.05)
        out = os.path.join(self.host, "fg")
        self.assertExit(self.cp(sp.name + ":/tmp/fg", out), 0)
        with open(out) as fh:
            self.assertEqual(fh.read(), "fg\n")
        self.assertExit(self.cp(out, sp.name + ":/tmp/back"), 0)
        self.assertEqual(self.cat(sp.name, "/tmp/back").out, "fg\n")

    def test_archive_keeps_ids_through_the_map(self):
        name = self.ready_box()
        self.assertExit(self.kern("exec", name, "sh", "-c", "echo x > /tmp/mine && chown 0:0 /tmp/mine"), 0)
        out = os.path.join(self.host, "mine")
        self.assertExit(self.cp("-a", name + ":/tmp/mine", out), 0)
        st = os.stat(out)
        self.assertEqual((st.st_uid, st.st_gid), (os.getuid(), os.getgid()), "box root is the caller")
        f = self.host_file("a.txt", "a\n")
        self.assertExit(self.cp("-a", f, name + ":/tmp/a.txt"), 0)
        self.assertEqual(self.kern("exec", name, "stat", "-c", "%u:%g", "/tmp/a.txt").out.strip(), "0:0")


if __name__ == "__main__":
    kerntest.main()
