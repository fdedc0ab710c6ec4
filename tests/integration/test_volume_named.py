"""Named volumes (kern volume, kern box -v NAME:DST), as the unprivileged user: create, ls,
inspect and rm as docker volume's verbs; a volume's data outlives the box that wrote it and is
seen by the next; a new, empty volume takes what the box's root has at its destination (and one
that holds data is left as it is); :ro refuses writes inside while the host still writes; rm is
refused while a box (running, or exited and kept) mounts it; prune removes the unused ones only;
kern system df counts them; a start that fails takes away the empty volume it made; volumes in a
store on a FUSE file system."""

import io
import json
import os
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import fuse_fs  # noqa: E402
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


class VolumeTest(DetachedCase):

    def vol(self, tag):
        """A fresh volume name, removed (if still there) at the end."""
        name = kerntest.unique_marker(tag).replace("/", "-")
        self.addCleanup(self.kern, "volume", "rm", "-f", name)
        return name

    def names(self):
        run = self.kern("volume", "ls", "-q")
        self.assertExit(run, 0)
        return run.out.split()

    def inspect_volume(self, name):
        run = self.kern("volume", "inspect", name)
        self.assertExit(run, 0)
        return json.loads(run.out)[0]

    def assertVerbError(self, run, code, *needles):
        self.assertExit(run, code)
        self.assertTrue([l for l in run.err.splitlines() if l.startswith("kern: error: ")], run.describe())
        for n in needles:
            self.assertIn(n, run.err, run.describe())

    def test_create_ls_inspect_rm(self):
        name = self.vol("v")
        run = self.kern("volume", "create", name, "--label", "team=db", "--label", "tier")
        self.assertExit(run, 0)
        self.assertEqual(self.kern("volume", "ls", "-q", "-f", "label=team=db").out.split(), [name])
        self.assertEqual(self.kern("volume", "ls", "-q", "-f", "label=team=web").out.split(), [])
        self.assertEqual(run.out, name + "\n")
        self.assertIn(name, self.names())
        table = self.kern("volume", "ls")
        self.assertEqual(table.out.splitlines()[0].split(), ["DRIVER", "VOLUME", "NAME"], table.describe())
        self.assertIn("local", [l.split()[0] for l in table.out.splitlines() if name in l])
        fmt = self.kern("volume", "ls", "--format", "{{.Name}} {{.Driver}} {{.Labels}}")
        self.assertIn("%s local team=db,tier=" % name, fmt.out.splitlines(), fmt.describe())
        j = self.inspect_volume(name)
        self.assertEqual(j["Name"], name)
        self.assertEqual(j["Driver"], "local")
        self.assertEqual(j["Scope"], "local")
        self.assertEqual(j["Labels"], {"team": "db", "tier": ""})
        self.assertRegex(j["CreatedAt"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        mp = j["Mountpoint"]
        self.assertTrue(mp.startswith(os.path.join(self.s.cache, "kern", "volumes", name)), mp)
        st = os.stat(mp)
        self.assertEqual(st.st_uid, os.getuid(), "the caller's")
        # No NAME: 64 hex digits, printed.
        anon = self.kern("volume", "create")
        self.assertExit(anon, 0)
        self.assertRegex(anon.out, r"^[0-9a-f]{64}\n$")
        self.addCleanup(self.kern, "volume", "rm", "-f", anon.out.strip())
        # Bad names and unknown volumes: a kern: error: line, the verbs' exit codes.
        self.assertVerbError(self.kern("volume", "create", "_bad"), 2, "invalid volume name")
        self.assertVerbError(self.kern("volume", "create", "a/b"), 2, "invalid volume name")
        self.assertVerbError(self.kern("volume", "inspect", name + "-none"), 1, "no volume named")
        self.assertVerbError(self.kern("volume", "rm", name + "-none"), 1, "no volume named")
        self.assertExit(self.kern("volume", "rm", "-f", name + "-none"), 0)
        rm = self.kern("volume", "rm", name)
        self.assertExit(rm, 0)
        self.assertEqual(rm.out, name + "\n")
        self.assertNotIn(name, self.names())
        self.assertFalse(os.path.exists(mp))

    def test_data_outlives_the_box(self):
        name = self.vol("keep")
        self.assertNotIn(name, self.names())
        mark = kerntest.unique_marker("data")
        box = self.started(["sh", "-c", "echo %s > /data/f" % mark], ["-v", name + ":/data"])
        ins = self.wait_for(box, lambda r: r["state"] == "exited")
        self.assertEqual(ins["volumes"], [name])
        self.assertIn(name, self.names(), "made at the first use")
        mounts = self.kern("inspect", "-f", "{{json .Mounts}}", box)
        self.assertExit(mounts, 0)
        m = json.loads(mounts.out)
        self.assertEqual(m, [{"Type": "volume", "Name": name, "Source": self.inspect_volume(name)["Mountpoint"],
                              "Destination": "/data", "Driver": "local", "RW": True}])
        self.assertExit(self.kern("rm", box), 0)
        self.assertIn(name, self.names(), "kern rm of the box leaves its volume")
        run = self.box(["cat", "/data/f"], flags=["-v", name + ":/data"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), mark)
        # The control: a box without the volume has no such file.
        self.assertNotEqual(self.box(["cat", "/data/f"]).rc, 0)
        # --mount type=volume mounts the same volume.
        m = self.box(["cat", "/d/f"], flags=["--mount", "type=volume,source=%s,target=/d" % name])
        self.assertExit(m, 0)
        self.assertEqual(m.out.strip(), mark)

    def test_a_new_volume_takes_the_image_files_an_old_one_keeps_its_own(self):
        fresh = self.vol("fresh")
        run = self.box(["sh", "-c", "ls /etc; readlink /etc/../bin/sh"], flags=["-v", fresh + ":/etc"])
        self.assertExit(run, 0)
        self.assertIn("passwd", run.out.split())
        mp = self.inspect_volume(fresh)["Mountpoint"]
        with open(os.path.join(mp, "passwd")) as f, open(os.path.join(self.s.rootfs, "etc/passwd")) as g:
            self.assertEqual(f.read(), g.read(), "the root's file, copied into the volume")
        self.assertEqual(os.stat(mp).st_mode & 0o7777, os.stat(os.path.join(self.s.rootfs, "etc")).st_mode & 0o7777)
        # Modes and owners as the box sees them: the same as the root's own files (the control).
        probe = "stat -c '%a %u %g %F' /etc /etc/passwd /etc/group"
        inside = self.box(["sh", "-c", probe], flags=["-v", fresh + ":/etc"])
        plain = self.box(["sh", "-c", probe])
        self.assertExit(inside, 0)
        self.assertEqual(inside.out, plain.out)
        self.assertIn("0 0 regular file", inside.out)
        # Symlinks stay symlinks.
        bins = self.vol("bins")
        self.assertExit(self.box(["true"], flags=["-v", bins + ":/usr/bin"]), 0)
        bmp = self.inspect_volume(bins)["Mountpoint"]
        links = [n for n in os.listdir(bmp) if os.path.islink(os.path.join(bmp, n))]
        self.assertTrue(links, os.listdir(bmp))
        self.assertEqual(sorted(os.listdir(bmp)), sorted(os.listdir(os.path.join(self.s.rootfs, "usr/bin"))))
        # The control: a volume that holds data is not overwritten.
        old = self.vol("old")
        self.assertExit(self.kern("volume", "create", old), 0)
        omp = self.inspect_volume(old)["Mountpoint"]
        with open(os.path.join(omp, "mine"), "w") as f:
            f.write("kept\n")
        run = self.box(["ls", "/etc"], flags=["-v", old + ":/etc"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.split(), ["mine"])
        self.assertFalse(os.path.exists(os.path.join(omp, "passwd")))

    def test_a_restarted_box_finds_what_the_first_wrote(self):
        """The copy-up is for an empty volume only: the next box of a --restart policy is not
        given the root's files again over what the first box changed."""
        name = self.vol("restart")
        script = "grep -q changed /etc/passwd && exit 0; echo changed > /etc/passwd; exit 3"
        box = self.started(["sh", "-c", script], ["--restart", "on-failure:2", "-v", name + ":/etc"])
        rec = self.wait_for(box, lambda r: r["state"] == "exited", timeout=60)
        # The control: the first box did fail (it found the root's passwd, copied up).
        self.assertEqual(rec["restart_count"], 1, json.dumps(rec))
        self.assertEqual(rec["exit_code"], 0, json.dumps(rec))

    def owned_image(self):
        """A busybox image with /srv/app (0750) and /srv/app/conf (0640), of uid and gid 1000 in the layer."""
        extra = build_images.Layer()
        extra.dir("srv")
        for name, kind, mode, data in (("srv/app", tarfile.DIRTYPE, 0o750, None),
                                       ("srv/app/conf", tarfile.REGTYPE, 0o640, b"setting=1\n")):
            ti = extra._info(name, kind, mode)
            ti.uid = ti.gid = 1000
            ti.uname = ti.gname = "app"
            if data is not None:
                ti.size = len(data)
            extra.tar.addfile(ti, io.BytesIO(data) if data is not None else None)
        ref = "kern-itest-volume-owned:1"
        path = os.path.join(self.s.tmp, "volume-owned.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer(), extra.bytes()], [ref])
        self.assertExit(self.kern("load", "-i", path), 0)
        return ref

    def test_copy_up_from_an_image_keeps_what_the_box_sees(self):
        self.require("uid-range", self.s.host.uid_range, self.s.host.uid_range.detail)
        ref = self.owned_image()
        name = self.vol("owned")
        probe = ["stat", "-c", "%n %a %u %g", "/srv/app", "/srv/app/conf"]
        argv_flags = ["--uid-range", "-v", name + ":/srv/app"]
        run = self.kern("box", "--image", ref, *argv_flags, "--", *probe)
        plain = self.kern("box", "--image", ref, "--uid-range", "--", *probe)
        self.assertExit(run, 0)
        self.assertExit(plain, 0)
        # kern's store keeps an image's files as the box's root's: the modes are what tells.
        self.assertEqual(plain.out.split("\n")[0].split()[:2], ["/srv/app", "750"], plain.describe())
        self.assertEqual(run.out, plain.out, "the volume's copy as the box sees the image's files")
        cat = self.kern("box", "--image", ref, "--uid-range", "-v", name + ":/data", "--", "cat", "/data/conf")
        self.assertEqual(cat.out, "setting=1\n", cat.describe())
        mp = self.inspect_volume(name)["Mountpoint"]
        self.assertEqual(os.stat(mp).st_mode & 0o7777, 0o750, "_data takes the image directory's mode")

    def test_read_only_refuses_writes_inside_not_on_the_host(self):
        name = self.vol("ro")
        self.assertExit(self.kern("volume", "create", name), 0)
        mp = self.inspect_volume(name)["Mountpoint"]
        with open(os.path.join(mp, "host"), "w") as f:
            f.write("from-host\n")
        run = self.box(["sh", "-c", "cat /data/host; echo x > /data/new && echo wrote || echo refused"],
                       flags=["-v", name + ":/data:ro"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.split(), ["from-host", "refused"])
        self.assertFalse(os.path.exists(os.path.join(mp, "new")))
        # The host writes, and the positive control: without :ro the box writes too.
        with open(os.path.join(mp, "host2"), "w") as f:
            f.write("2\n")
        rw = self.box(["sh", "-c", "cat /data/host2; echo x > /data/new && echo wrote"],
                      flags=["-v", name + ":/data"])
        self.assertEqual(rw.out.split(), ["2", "wrote"], rw.describe())
        self.assertTrue(os.path.exists(os.path.join(mp, "new")))

    def test_rm_refused_while_a_box_uses_it_and_prune_keeps_it(self):
        used, idle = self.vol("used"), self.vol("idle")
        self.assertExit(self.kern("volume", "create", idle), 0)
        with open(os.path.join(self.inspect_volume(idle)["Mountpoint"], "blob"), "w") as f:
            f.write("x" * 4096)
        box = self.started(["sleep", "60"], ["-v", used + ":/data"])
        self.wait_for(box, lambda r: r["state"] == "running")
        self.assertVerbError(self.kern("volume", "rm", used), 1, "in use", box)
        self.assertVerbError(self.kern("volume", "rm", "-f", used), 1, "in use")
        # ls --filter dangling= splits them the same way (prune's view), label= and name= pick.
        dangling = self.kern("volume", "ls", "-q", "--filter", "dangling=true").out.split()
        self.assertIn(idle, dangling)
        self.assertNotIn(used, dangling)
        self.assertIn(used, self.kern("volume", "ls", "-q", "-f", "dangling=false").out.split())
        self.assertEqual(self.kern("volume", "ls", "-q", "-f", "name=" + used).out.split(), [used])
        self.assertVerbError(self.kern("volume", "ls", "-f", "bogus=1"), 2, "unknown filter")
        df = self.kern("system", "df", "--json")

        self.assertExit(df, 0)
        v = json.loads(df.out)["volumes"]
        self.assertGreaterEqual(v["total"], 2)
        self.assertGreaterEqual(v["active"], 1)
        self.assertGreaterEqual(v["reclaimable"], 4096)
        text = self.kern("system", "df")
        self.assertTrue([l for l in text.out.splitlines() if l.startswith("Local Volumes ")], text.describe())
        prune = self.kern("volume", "prune", "-f")
        self.assertExit(prune, 0)
        self.assertIn(idle, prune.out.split())
        self.assertNotIn(used, prune.out.split())
        self.assertIn("Total reclaimed space:", prune.out)
        self.assertIn(used, self.names())
        self.assertNotIn(idle, self.names())
        # Exited but not removed: still in use.
        self.assertExit(self.kern("stop", box), 0)
        self.wait_for(box, lambda r: r["state"] == "exited")
        self.assertVerbError(self.kern("volume", "rm", used), 1, "in use")
        self.assertExit(self.kern("rm", box), 0)
        rm = self.kern("volume", "rm", used)
        self.assertExit(rm, 0)
        self.assertNotIn(used, self.names())

    def test_a_failed_start_leaves_no_volume_it_made(self):
        name = self.vol("failed")
        run = self.box(["/no/such/command"], flags=["-v", name + ":/nothing-here"])
        # 127: the workload was not found, after the mounts (the volume made and bound) were done.
        self.assertExit(run, 127)
        self.assertIn("/no/such/command", run.err)
        self.assertNotIn(name, self.names(), run.describe())
        self.assertFalse(os.path.exists(os.path.join(self.s.cache, "kern", "volumes", name)))
        # A volume that existed before the failed start stays (and the same start that succeeds keeps its).
        had = self.vol("had")
        self.assertExit(self.kern("volume", "create", had), 0)
        self.assertNotEqual(self.box(["/no/such/command"], flags=["-v", had + ":/nothing-here"]).rc, 0)
        self.assertIn(had, self.names())
        ok = self.box(["true"], flags=["-v", name + ":/nothing-here"])
        self.assertExit(ok, 0)
        self.assertIn(name, self.names())



class VolumeOnFuseTest(DetachedCase):
    """Named volumes in a store on bindfs (FUSE 2), what a home on sshfs or gocryptfs gives: a box
    writes a volume, the next reads it, and rm removes it whole (it failed with ENOTEMPTY: the
    volume's record, held open for its lock while the files went, stayed as a .fuse_hidden file)."""

    def setUp(self):
        super().setUp()
        work = tempfile.mkdtemp(prefix="vol-fuse-", dir=self.s.tmp)
        self.cache = fuse_fs.bindfs(self, os.path.join(work, "src"), os.path.join(work, "fuse"))

    def base_env(self):
        env = super().base_env()
        env["XDG_CACHE_HOME"] = self.cache
        return env

    def test_a_volume_on_fuse_is_written_read_and_removed(self):
        name = kerntest.unique_marker("fz").replace("/", "-")
        self.assertExit(self.kern("volume", "create", name), 0)
        self.assertExit(self.box(["sh", "-c", "echo kept > /data/f"], flags=["-v", name + ":/data"]), 0)
        run = self.box(["cat", "/data/f"], flags=["-v", name + ":/data"])
        self.assertExit(run, 0)
        self.assertEqual(run.out, "kept\n")
        self.assertExit(self.kern("volume", "rm", name), 0)
        self.assertEqual(os.listdir(os.path.join(self.cache, "kern", "volumes")), [])


if __name__ == "__main__":
    kerntest.main()
