"""Docker's --mount, --device and --memory-swap on kern box (issue 12, section 2), and errors
in words with the errno in parentheses, as the unprivileged user: each maps onto what -v, --tmpfs, vgpio device grants and --memory-swap-max
already do, and each refusal is 125 with nothing started."""

import os
import stat
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


class MountFlagTest(kerntest.KernTestCase):

    def fresh_dir(self, tag):
        return tempfile.mkdtemp(prefix=tag + "-", dir=self.s.work)

    def test_bind_read_write_and_read_only(self):
        src = self.fresh_dir("mnt")
        with open(os.path.join(src, "hello"), "w") as f:
            f.write("from the host\n")
        run = self.box(["/bin/sh", "-c", "cat /data/hello && echo from-box > /data/new"],
                       flags=["--mount", "type=bind,source=%s,target=/data" % src])
        self.assertExit(run, 0)
        self.assertEqual(run.out, "from the host\n", run.describe())
        with open(os.path.join(src, "new")) as f:
            self.assertEqual(f.read(), "from-box\n")
        # readonly: the write is refused by the mount, the read (positive control) works.
        ro = self.probe_box("try", "write", "/data/other", flags=["--mount", "type=bind,src=%s,dst=/data,readonly" % src])
        self.assertTry(ro, "write", "EROFS")
        self.assertFalse(os.path.exists(os.path.join(src, "other")))
        read = self.probe_box("try", "read", "/data/hello", flags=["--mount", "type=bind,src=%s,dst=/data,ro=true" % src])
        self.assertTry(read, "read", "ok")

    def test_a_path_that_minus_v_cannot_carry(self):
        # ',' and ':' in the source and the destination: quoted as Docker's CSV quoting has it.
        parent = self.fresh_dir("odd")
        src = os.path.join(parent, "a,b:c")
        os.mkdir(src)
        with open(os.path.join(src, "f"), "w") as f:
            f.write("odd\n")
        run = self.box(["/bin/cat", "/x:y/f"], flags=["--mount", 'type=bind,"source=%s",target=/x:y' % src])
        self.assertExit(run, 0)
        self.assertEqual(run.out, "odd\n", run.describe())
        # The control: -v refuses the same source.
        run = self.box(["/bin/true"], flags=["-v", src + ":/x"])
        self.assertKernError(run, "too many ':'")

    def test_tmpfs_with_size(self):
        run = self.box(["/bin/sh", "-c", "grep ' /scratch ' /proc/self/mounts; dd if=/dev/zero of=/scratch/small "
                        "bs=1024 count=512 2>/dev/null && echo small-ok; dd if=/dev/zero of=/scratch/big bs=1024 "
                        "count=4096 2>/dev/null || echo big-failed"],
                       flags=["--mount", "type=tmpfs,destination=/scratch,tmpfs-size=1m"])
        self.assertExit(run, 0)
        fields = run.out.splitlines()[0].split()
        self.assertEqual(fields[2], "tmpfs", run.describe())
        self.assertIn("size=1024k", fields[3].split(","), run.describe())
        self.assertIn("small-ok", run.out, "positive control: a write below the size")
        self.assertIn("big-failed", run.out, "a 4 MiB write into a 1 MiB tmpfs succeeded")

    def test_refusals_start_nothing(self):
        src = self.fresh_dir("ref")
        cases = [
            ("type=volume,source=a/b,target=/data", "invalid volume name"),
            ("type=volume,source=data,target=/data,volume-nocopy", "is not supported"),
            ("type=bind,source=/etc,target=/e", '--mount: refusing to bind "/etc"'),
            ("type=bind,source=%s/missing,target=/m" % src, "--mount source"),
            ("type=bind,source=%s,target=/m,bind-propagation=shared" % src, "always rprivate"),
            ("type=bind,source=%s" % src, "destination= (or dst=, target=) is required"),
            ("type=tmpfs,target=/t,tmpfs-mode=0700", "mode 1777"),
            ("src=%s,dst=/m" % src, "type= is required"),
        ]
        for value, needle in cases:
            marker = kerntest.unique_marker("mount")
            run = self.box(["/bin/sh", "-c", "sleep 30", marker], flags=["--mount", value], started=True)
            self.assertKernError(run, needle)
            self.assertEqual(run.started, b"", value)
            self.assertNothingLeft(marker, value)

    def test_plan_names_the_flag(self):
        src = self.fresh_dir("plan")
        run = self.box(["/bin/true"], flags=["--plan", "--mount", "type=bind,src=%s,dst=/p" % src,
                                              "--mount", "type=tmpfs,dst=/t"])
        self.assertExit(run, 0)
        self.assertIn("--mount", run.out, run.describe())
        self.assertIn(src, run.out, run.describe())


TUN = "/dev/net/tun"


class DeviceFlagTest(kerntest.KernTestCase):
    """--device gives the box exactly the node asked for, by identity, and nothing else."""

    def need_tun(self):
        try:
            st = os.stat(TUN)
        except OSError as e:
            st = None
            why = str(e)
        ok = st is not None and stat.S_ISCHR(st.st_mode) and os.access(TUN, os.R_OK | os.W_OK)
        self.require("devices", ok, "%s is not a character device this user can open (%s)"
                     % (TUN, "mode" if st is not None else why))
        return st

    def devices(self, run):
        self.assertExit(run, 0)
        return sorted(l for l in run.out.splitlines() if l.startswith("dev: "))

    def test_exactly_the_node_asked_for(self):
        st = self.need_tun()
        # Outside: the node opens and its driver answers a write on an unattached tun with EBADFD.
        outside = self.probe_outside("try", "write", TUN)
        self.assertTry(outside, "write", "EBADFD")
        # Inside without --device: no such node (the discriminant).
        plain = self.probe_box("try", "write", TUN)
        self.assertTry(plain, "write", "ENOENT")
        # Inside with it: the same driver answers, so this is the host's node and not a copy.
        granted = self.probe_box("try", "write", TUN, flags=["--device", TUN])
        self.assertTry(granted, "write", "EBADFD")
        # Nothing else appears: /dev differs from a plain box's by the one node, at BOX, with the
        # host's major:minor.
        base = self.devices(self.probe_box("devices"))
        moved = self.devices(self.probe_box("devices", flags=["--device", TUN + ":/dev/mytun:rwm"]))
        self.assertEqual(sorted(set(moved) - set(base)),
                         ["dev: mytun c %d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))])
        self.assertEqual(set(base) - set(moved), set())
        nested = self.devices(self.probe_box("devices", flags=["--device", TUN]))
        self.assertEqual(sorted(set(nested) - set(base)), ["dev: net d"])
        run = self.box(["/bin/ls", "/dev/net"], flags=["--device", TUN])
        self.assertExit(run, 0)
        self.assertEqual(run.out, "tun\n", run.describe())

    def test_refused_by_identity_not_by_name(self):
        # Host-control nodes, also behind a symlink with an innocent name; each is refused before
        # anything starts (the positive control is test_exactly_the_node_asked_for).
        d = os.path.join(self.s.work, kerntest.unique_marker("devlink"))
        os.mkdir(d)
        targets = [p for p in ("/dev/kvm", "/dev/fuse", "/dev/mem", "/dev/console", "/dev/zero") if os.path.exists(p)]
        self.require("devices", targets, "none of the refused nodes exists here")
        for target in targets:
            link = os.path.join(d, "innocent-" + os.path.basename(target))
            os.symlink(target, link)
            for given in (target + ":/dev/x", link + ":/dev/innocent"):
                marker = kerntest.unique_marker("dev")
                run = self.box(["/bin/sh", "-c", "sleep 30", marker], flags=["--device", given], started=True)
                self.assertKernError(run, "is refused")
                self.assertEqual(run.started, b"", given)
                self.assertNothingLeft(marker, given)
        block = [p for p in ("/dev/loop0", "/dev/sda", "/dev/vda") if os.path.exists(p)]
        if block:
            self.assertKernError(self.box(["/bin/true"], flags=["--device", block[0]]), "a block device")

    def test_syntax_refusals(self):
        for value, needle in ((TUN + ":r", "cannot limit a granted node"),
                              (TUN + ":/srv/tun", "not under /dev/"),
                              (TUN + ":/dev/null", "the box's own /dev/null"),
                              ("/dev/net", "a directory"),
                              ("/dev/kern-no-such-node", "ENOENT"),
                              ("dev/net/tun", "not absolute")):
            run = self.box(["/bin/true"], flags=["--device", value], started=True)
            self.assertKernError(run, needle)
            self.assertEqual(run.started, b"", value)

    def test_plan_shows_the_grant(self):
        self.need_tun()
        run = self.box(["/bin/true"], flags=["--plan", "--device", TUN + ":/dev/mytun"])
        self.assertExit(run, 0)
        self.assertIn("/dev/net/tun -> /dev/mytun (--device)", run.out, run.describe())


class MemorySwapTest(kerntest.KernTestCase):
    """Docker's --memory-swap (memory plus swap) becomes memory.swap.max = TOTAL - memory."""

    def swap(self, *flags):
        run = self.box(["/bin/true"], flags=list(flags) + ["--show-config"])
        self.assertExit(run, 0)
        return dict(l.split(": ", 1) for l in run.out.splitlines() if ": " in l)["memory_swap_max"]

    def test_total_minus_memory(self):
        self.assertEqual(self.swap("-m", "64m", "--memory-swap", "96m"), str(32 << 20))
        self.assertEqual(self.swap("-m", "64m", "--memory-swap", "64m"), "0")
        self.assertEqual(self.swap("-m", "64m", "--memory-swap", "-1"), "max")
        # The control: kern's own flag is the swap alone.
        self.assertEqual(self.swap("-m", "64m", "--memory-swap-max", "96m"), str(96 << 20))
        self.assertEqual(self.swap("-m", "64m"), "default")

    def test_refusals(self):
        for flags, needle in ((["--memory-swap", "1g"], "needs -m/--memory"),
                              (["-m", "64m", "--memory-swap", "32m"], "is below -m 64m"),
                              (["-m", "64m", "--memory-swap", "1g", "--memory-swap-max", "1m"], "exclude each other")):
            run = self.box(["/bin/true"], flags=flags, started=True)
            self.assertKernError(run, needle)
            self.assertEqual(run.started, b"")


class ErrnoWordsTest(kerntest.KernTestCase):
    """Errors say what went wrong in words, with the errno's name in parentheses."""

    def test_words_then_the_name(self):
        missing = os.path.join(self.s.work, kerntest.unique_marker("nowhere"))
        run = self.box(["/bin/true"], rootfs=missing)
        self.assertKernError(run, '--rootfs "%s": no such file or directory (ENOENT)' % missing)
        run = self.box(["/bin/true"], flags=["--device", "/dev/kern-no-such-node"])
        self.assertKernError(run, '--device "/dev/kern-no-such-node": no such file or directory (ENOENT)')


if __name__ == "__main__":
    kerntest.main()
