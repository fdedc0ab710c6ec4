"""The image store's disk use and listings (kern(1) IMAGES; issue 12 section 3, issue 13's load
row): a layer stack is unpacked once whatever transport brought it (docker-archive, OCI
archive), rmi of one image keeps what another still uses, a docker-archive load keeps no second
copy of its layers, `kern images` IDs, -q, --format and filters, `kern save` of several images,
`kern image prune` and `kern system df`; the store on a FUSE file system (bindfs)."""

import errno
import io
import json
import os
import subprocess
import sys
import tarfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import fuse_fs  # noqa: E402
import kerntest  # noqa: E402
from test_images import ImageTestCase  # noqa: E402


def tar_dir(src, out_path):
    """An OCI archive: the layout directory as a tar (what `skopeo copy oci-archive:` writes)."""
    with tarfile.open(out_path, "w") as tar:
        for name in sorted(os.listdir(src)):
            tar.add(os.path.join(src, name), arcname=name)


def du_bytes(path):
    """Disk use as du counts it (allocated blocks, each inode once)."""
    out = subprocess.run(["du", "-s", "-B1", path], check=True, capture_output=True, text=True).stdout
    return int(out.split()[0])


def two_layers():
    return [build_images.busybox_layer(),
            build_images.Layer().dir("data").file("data/hello", "hello from the top layer\n").bytes()]


class StoreTestCase(ImageTestCase):

    def trees(self):
        d = os.path.join(self.store, "trees")
        return sorted(n for n in os.listdir(d) if "." not in n)

    def assertSavesLayers(self, ref, layers, out=None):
        """kern save of ref into out (else saved.tar in the work dir) holds exactly `layers`, byte
        for byte; returns the archive's path and its manifest."""
        out = out or os.path.join(self.work, "saved.tar")
        self.assertExit(self.kern("save", ref, "-o", out), 0)
        manifest, saved = archive_members(out)
        self.assertEqual([saved[n] == l for n, l in zip(manifest[0]["Layers"], layers)], [True] * len(layers))
        return out, manifest

    def load_docker(self, layers, tags, name="d.tar", **cfg):
        path = os.path.join(self.work, name)
        build_images.write_docker_archive(path, layers, tags, **cfg)
        run = self.kern("load", "-i", path)
        self.assertExit(run, 0)
        return path

    def load_oci(self, layers, tag, name="o.tar", **cfg):
        d = os.path.join(self.work, name + ".d")
        lay = build_images.Layout(d)
        lay.tag(lay.image(layers, **cfg), tag)
        lay.save()
        path = os.path.join(self.work, name)
        tar_dir(d, path)
        run = self.kern("load", "-i", path)
        self.assertExit(run, 0)
        return path


class DedupeTest(StoreTestCase):

    def test_docker_and_oci_archive_of_the_same_layers_share_one_tree(self):
        layers = two_layers()
        self.load_docker(layers, ["dedupe/docker:1"])
        self.assertEqual(len(self.trees()), 1, self.trees())
        tree = os.path.join(self.store, "trees", self.trees()[0])
        ino = os.stat(os.path.join(tree, "bin", "busybox")).st_ino
        # The same layers again, gzip-compressed in an OCI archive: other blob digests, another
        # manifest, the same diff_ids.
        self.load_oci(layers, "docker.io/dedupe/oci:1")
        images = self.listing()
        self.assertEqual(sorted(i["ref"] for i in images), ["docker.io/dedupe/docker:1", "docker.io/dedupe/oci:1"])
        self.assertNotEqual(images[0]["digest"], images[1]["digest"], images)
        self.assertEqual(len(self.trees()), 1, "the same layers were unpacked twice: %s" % self.trees())
        self.assertEqual(os.stat(os.path.join(tree, "bin", "busybox")).st_ino, ino)
        for ref in ("dedupe/docker:1", "dedupe/oci:1"):
            run = self.image_box(ref, ["/bin/cat", "/data/hello"])
            self.assertExit(run, 0)
            self.assertEqual(run.out, "hello from the top layer\n")
        # rmi of one keeps the other's tree, and it still runs; gc too keeps it.
        self.assertExit(self.kern("rmi", "dedupe/docker:1"), 0)
        self.assertEqual(len(self.trees()), 1)
        self.assertExit(self.kern("gc"), 0)
        self.assertEqual(len(self.trees()), 1)
        self.assertEqual(os.stat(os.path.join(tree, "bin", "busybox")).st_ino, ino)
        run = self.image_box("dedupe/oci:1", ["/bin/cat", "/data/hello"])
        self.assertExit(run, 0)
        self.assertEqual(run.out, "hello from the top layer\n")
        # The last user gone, the tree goes.
        self.assertExit(self.kern("rmi", "dedupe/oci:1"), 0)
        self.assertEqual(self.trees(), [])

    def test_an_image_on_top_of_a_stored_one_links_its_files(self):
        base = build_images.busybox_layer()
        self.load_docker([base], ["base:1"], name="base.tar")
        base_tree = os.path.join(self.store, "trees", self.trees()[0])
        ino = os.stat(os.path.join(base_tree, "bin", "busybox")).st_ino
        before = du_bytes(self.store)
        top = build_images.Layer().file("app/run", "run\n").bytes()
        self.load_docker([base, top], ["app:1"], name="app.tar")
        self.assertEqual(len(self.trees()), 2)
        app_tree = [os.path.join(self.store, "trees", t) for t in self.trees()
                    if os.path.join(self.store, "trees", t) != base_tree][0]
        self.assertEqual(os.stat(os.path.join(app_tree, "bin", "busybox")).st_ino, ino)
        # The second image costs its own layer and directories, not the base's files again.
        self.assertLess(du_bytes(self.store) - before, (before // 4))
        self.assertExit(self.kern("rmi", "base:1"), 0)
        run = self.image_box("app:1", ["/bin/sh", "-c", "cat /app/run; ls /bin/busybox"])
        self.assertExit(run, 0)
        self.assertEqual(run.out, "run\n/bin/busybox\n")
        self.assertSavesLayers("app:1", [base, top])

    def test_an_upper_layer_replacing_a_base_file_still_saves(self):
        base = build_images.busybox_layer()
        self.load_docker([base], ["base:1"], name="base.tar")
        top = build_images.Layer().file("bin/busybox", "replaced\n").bytes()
        self.load_docker([base, top], ["app:1"], name="app.tar")
        self.assertExit(self.kern("rmi", "base:1"), 0)
        self.assertSavesLayers("app:1", [base, top])


def data_layer(mb=8):
    """busybox plus `mb` MiB of incompressible file data in 1 MiB files, with long names (pax)."""
    layer = build_images.Layer()
    layer.dir("payload")
    for i in range(mb):
        layer.file("payload/" + "long-name-" * 12 + "%02d.bin" % i, os.urandom(1 << 20))
    return layer.bytes()


def archive_members(path):
    with tarfile.open(path) as t:
        manifest = json.load(t.extractfile("manifest.json"))
        layers = {m.name: t.extractfile(m).read() for m in t.getmembers() if m.name.endswith("/layer.tar")}
    return manifest, layers


class DiskUseTest(StoreTestCase):

    def blobs(self):
        return sorted(os.listdir(os.path.join(self.store, "blobs", "sha256")))

    def test_docker_archive_load_keeps_one_copy_and_saves_the_same_bytes(self):
        layers = [build_images.busybox_layer(), data_layer()]
        path = self.load_docker(layers, ["disk/use:1"])
        archive = os.path.getsize(path)
        used = du_bytes(self.store)
        self.assertLessEqual(used, 1.2 * archive,
                             "the store takes %d bytes for a %d-byte docker-archive (%.2fx)" %
                             (used, archive, used / archive))
        # No layer blob was kept (config and manifest only): the tree re-creates them.
        diff_ids = [build_images.sha256(l)[7:] for l in layers]
        self.assertEqual([b for b in self.blobs() if b in diff_ids], [])
        out, _ = self.assertSavesLayers("disk/use:1", layers)
        self.assertExit(self.kern("rmi", "disk/use:1"), 0)
        self.assertExit(self.kern("load", "-i", out), 0)
        run = self.image_box("disk/use:1", ["/bin/sh", "-c", "ls /payload | wc -l"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), "8")

    def test_a_store_on_a_fuse_file_system(self):
        # The store on bindfs (FUSE 2), what a home on sshfs or gocryptfs gives kern: renameat2
        # refuses RENAME_EXCHANGE there (the discriminant: it swaps in the test's own directory)
        # and nothing is reflinked. Load, a box on the image that writes to its root, save, rmi
        # and a load of the saved archive work there, and rmi leaves no tree and no blob.
        mnt = fuse_fs.bindfs(self, os.path.join(self.work, "fuse-src"), os.path.join(self.work, "fuse"))
        self.assertEqual(fuse_fs.exchange_errno(mnt), errno.EINVAL)
        self.assertEqual(fuse_fs.exchange_errno(self.work), 0)
        self.cache, self.store = mnt, os.path.join(mnt, "kern")
        layers = two_layers()
        self.load_docker(layers, ["on/fuse:1"])
        self.assertTrue(self.trees())
        run = self.image_box("on/fuse:1", ["/bin/sh", "-c", "cat /data/hello; echo new > /data/new; cat /data/new"])
        self.assertExit(run, 0)
        self.assertEqual(run.out, "hello from the top layer\nnew\n")
        out, _ = self.assertSavesLayers("on/fuse:1", layers)
        self.assertExit(self.kern("rmi", "on/fuse:1"), 0)
        self.assertEqual(self.trees(), [])
        self.assertEqual(self.blobs(), [])
        self.assertExit(self.kern("load", "-i", out), 0)
        run = self.image_box("on/fuse:1", ["/bin/cat", "/data/hello"])
        self.assertExit(run, 0)
        self.assertEqual(run.out, "hello from the top layer\n")

    def test_a_layer_whose_file_a_later_layer_replaces_keeps_its_blob(self):
        lower = build_images.Layer().file("etc/motd", "lower\n").file("etc/keep", "keep\n").bytes()
        upper = build_images.Layer().file("etc/motd", "upper\n").bytes()
        layers = [build_images.busybox_layer(), lower, upper]
        self.load_docker(layers, ["over/write:1"])
        diff_ids = [build_images.sha256(l)[7:] for l in layers]
        # The tree has only the upper motd: the lower layer cannot be re-created from it.
        self.assertEqual([b for b in self.blobs() if b in diff_ids], [diff_ids[1]])
        self.assertSavesLayers("over/write:1", layers)

    def test_save_of_an_image_loaded_second_through_another_transport(self):
        # The OCI archive's image finds the tree there and stores no layer blob of its own: its
        # layers come back from the tree the docker-archive load left.
        layers = two_layers()
        self.load_docker(layers, ["first/docker:1"])
        self.load_oci(layers, "docker.io/then/oci:1")
        self.assertExit(self.kern("rmi", "first/docker:1"), 0)
        _, manifest = self.assertSavesLayers("then/oci:1", layers)
        self.assertEqual(manifest[0]["RepoTags"], ["docker.io/then/oci:1"])

    def test_save_of_a_pulled_image_loaded_again_from_a_docker_archive(self):
        # The first import (an OCI archive, whose gzip blobs the store keeps as a pull keeps a
        # registry's) kept the compressed layer blobs; its tree cannot re-create the middle
        # layer (the upper one replaces its file). The docker-archive load of the same layers
        # finds that tree and must keep what its image needs to be saved, under the same name
        # and under another.
        layers = [build_images.busybox_layer(),
                  build_images.Layer().file("etc/motd", "lower\n").file("etc/keep", "keep\n").bytes(),
                  build_images.Layer().file("etc/motd", "upper\n").bytes()]
        self.load_oci(layers, "docker.io/pulled/first:1")
        for tags in (["docker.io/pulled/first:1"], ["docker.io/loaded/again:1"]):
            self.load_docker(layers, tags, name=tags[0].replace("/", "_") + ".tar")
            out = os.path.join(self.work, "saved.tar")
            run = self.kern("save", tags[0], "-o", out)
            self.assertExit(run, 0, tags[0])
            manifest, saved = archive_members(out)
            self.assertEqual([saved[n] == l for n, l in zip(manifest[0]["Layers"], layers)], [True] * 3)
        # A store left as the kern before this fix left it (the blob was never kept): the
        # error's hint, loading the same archive again, repairs it.
        middle = build_images.sha256(layers[1])[7:]
        os.unlink(os.path.join(self.store, "blobs", "sha256", middle))
        broken = self.kern("save", "docker.io/loaded/again:1", "-o", out)
        self.assertVerbError(broken, "is not in the store")
        self.assertIn("load the image again", broken.err)
        self.load_docker(layers, ["docker.io/loaded/again:1"], name="again.tar")
        # Nothing of it is lost to gc.
        self.assertExit(self.kern("rmi", "docker.io/pulled/first:1"), 0)
        self.assertExit(self.kern("gc"), 0)
        self.assertSavesLayers("docker.io/loaded/again:1", layers, out=out)


class SaveSeveralTest(StoreTestCase):

    def test_save_two_images_into_one_archive_and_load_both_back(self):
        base = build_images.busybox_layer()
        self.load_docker([base], ["one/image:a"], name="a.tar", cmd=["/bin/echo", "a"])
        self.load_docker([base, build_images.Layer().file("b", "b\n").bytes()], ["two/image:b"], name="b.tar")
        out = os.path.join(self.work, "both.tar")
        self.assertExit(self.kern("save", "one/image:a", "two/image:b", "-o", out), 0)
        manifest, saved = archive_members(out)
        self.assertEqual([m["RepoTags"] for m in manifest], [["docker.io/one/image:a"], ["docker.io/two/image:b"]])
        # The shared base layer is in the archive once.
        self.assertEqual(len(saved), 2, sorted(saved))
        self.assertExit(self.kern("rmi", "one/image:a", "two/image:b"), 0)
        self.assertEqual(self.listing(), [])
        run = self.kern("load", "-i", out)
        self.assertExit(run, 0)
        self.assertIn("Loaded image: docker.io/one/image:a", run.out)
        self.assertIn("Loaded image: docker.io/two/image:b", run.out)
        self.assertEqual(self.image_box("one/image:a", None).out, "a\n")
        self.assertEqual(self.image_box("two/image:b", ["/bin/cat", "/b"]).out, "b\n")


def write_archive_created(out_path, layers, tags, created):
    """A docker-archive whose config says `created` (an RFC 3339 time)."""
    diff_ids = [build_images.sha256(l) for l in layers]
    cfg = json.loads(build_images.image_config(diff_ids))
    cfg["created"] = created
    cfg = json.dumps(cfg, sort_keys=True).encode()
    with tarfile.open(out_path, "w") as tar:
        def add(name, data):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tar.addfile(ti, io.BytesIO(data))
        names = []
        for l in layers:
            names.append(build_images.sha256(l)[7:] + "/layer.tar")
            add(names[-1], l)
        add("config.json", cfg)
        add("manifest.json", json.dumps([{"Config": "config.json", "RepoTags": tags, "Layers": names}]).encode())
    return build_images.sha256(cfg)


class ListingTest(StoreTestCase):

    def setUp(self):
        super().setUp()
        three_days = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3 * 86400 - 60))
        self.cfg_a = write_archive_created(os.path.join(self.work, "a.tar"), [build_images.busybox_layer()],
                                           ["busybox:latest", "localhost:5000/team/box:v1"], three_days)
        self.cfg_b = write_archive_created(
            os.path.join(self.work, "b.tar"), [build_images.busybox_layer(), build_images.Layer().file("x", "x").bytes()],
            ["other:2"], "2020-01-02T03:04:05.123456789Z")
        for n in ("a.tar", "b.tar"):
            self.assertExit(self.kern("load", "-i", os.path.join(self.work, n)), 0)

    def test_image_id_is_the_config_digest_and_created_is_relative(self):
        run = self.kern("images")
        self.assertExit(run, 0)
        lines = run.out.splitlines()
        self.assertEqual(lines[0].split(), ["REPOSITORY", "TAG", "IMAGE", "ID", "CREATED", "SIZE"])
        rows = {l.split()[0] + ":" + l.split()[1]: l for l in lines[1:]}
        self.assertEqual(sorted(rows), ["docker.io/library/busybox:latest", "docker.io/library/other:2",
                                        "localhost:5000/team/box:v1"])
        self.assertEqual(rows["docker.io/library/busybox:latest"].split()[2], self.cfg_a[7:19])
        self.assertEqual(rows["docker.io/library/other:2"].split()[2], self.cfg_b[7:19])
        self.assertIn("3 days ago", rows["docker.io/library/busybox:latest"])
        self.assertRegex(rows["docker.io/library/other:2"], r" \d+ years ago ")
        # The id works where a name does.
        self.assertExit(self.kern("save", self.cfg_b[7:19], "-o", os.path.join(self.work, "by-id.tar")), 0)

    def test_quiet_lists_each_image_once(self):
        run = self.kern("images", "-q")
        self.assertExit(run, 0)
        self.assertEqual(sorted(run.out.split()), sorted([self.cfg_a[7:19], self.cfg_b[7:19]]))

    def test_format_template_table_and_json(self):
        run = self.kern("images", "--format", "{{.Repository}}:{{.Tag}} {{.ID}}")
        self.assertExit(run, 0)
        self.assertEqual(sorted(run.out.splitlines()), [
            "docker.io/library/busybox:latest " + self.cfg_a[7:19],
            "docker.io/library/other:2 " + self.cfg_b[7:19],
            "localhost:5000/team/box:v1 " + self.cfg_a[7:19]])
        run = self.kern("images", "--format", "table {{.Tag}}\\t{{.CreatedAt}}")
        self.assertExit(run, 0)
        lines = run.out.splitlines()
        self.assertEqual(lines[0].split(), ["TAG", "CREATED", "AT"])
        self.assertIn("2   ", run.out)
        self.assertIn("2020-01-02 03:04:05 +0000 UTC", run.out)
        run = self.kern("images", "--format", "json")
        self.assertExit(run, 0)
        docs = [json.loads(l) for l in run.out.splitlines()]
        self.assertEqual(sorted(d["ID"] for d in docs), sorted([self.cfg_a[7:19]] * 2 + [self.cfg_b[7:19]]))
        self.assertTrue(all(d["Size"].endswith("B") and d["CreatedSince"].endswith(" ago") for d in docs), docs)
        bad = self.kern("images", "--format", "{{.Nope}}")
        self.assertExit(bad, 2)
        self.assertIn("kern: error: kern images --format: no field .Nope", bad.err)
        self.assertIn("kern: hint: kern images has .Repository .Tag", bad.err)

    def test_reference_filter(self):
        def refs(*args):
            run = self.kern("images", "--format", "{{.Repository}}:{{.Tag}}", *args)
            self.assertExit(run, 0)
            return sorted(run.out.split())
        self.assertEqual(refs("busybox"), ["docker.io/library/busybox:latest"])
        self.assertEqual(refs("other:2"), ["docker.io/library/other:2"])
        self.assertEqual(refs("other:3"), [])
        self.assertEqual(refs("--filter", "reference=*/team/*"), ["localhost:5000/team/box:v1"])
        self.assertEqual(refs("--filter", "reference=b*"), ["docker.io/library/busybox:latest"])
        self.assertEqual(refs("--filter", "reference=*:2", "--filter", "reference=busybox"),
                         ["docker.io/library/busybox:latest", "docker.io/library/other:2"])
        self.assertExit(self.kern("images", "--filter", "label=x"), 2)


class PruneDfTest(StoreTestCase):

    def df(self):
        run = self.kern("system", "df", "--json")
        self.assertExit(run, 0)
        return json.loads(run.out)

    def test_prune_dangling_then_all_and_df_agrees(self):
        base = build_images.busybox_layer()
        self.load_docker([base, build_images.Layer().file("v", "1").bytes()], ["app:1"], name="v1.tar")
        # The name moves to a new image: the old one is dangling.
        self.load_docker([base, build_images.Layer().file("v", "2").bytes()], ["app:1"], name="v2.tar")
        self.load_docker([base], ["base:1"], name="base.tar")
        df = self.df()
        self.assertEqual((df["images"]["total"], df["layers"]["total"]), (3, 3), df)
        self.assertEqual(df["images"]["size"], df["layers"]["size"] + df["blobs"]["size"])
        before = du_bytes(self.store)
        run = self.kern("image", "prune", "--json")
        self.assertExit(run, 0)
        pruned = json.loads(run.out)
        self.assertEqual((len(pruned["deleted"]), pruned["untagged"], pruned["trees"]), (1, [], 1), pruned)
        self.assertGreater(pruned["reclaimed_bytes"], 0)
        self.assertEqual(len(self.listing()), 2)
        df = self.df()
        self.assertEqual(df["images"]["total"], 2)
        # -a: every image no box uses. What df said could be reclaimed is what prune frees.
        reclaimable = df["images"]["reclaimable"]
        self.assertEqual(reclaimable, df["images"]["size"])
        mid = du_bytes(self.store)
        self.assertLess(mid, before)
        run = self.kern("image", "prune", "-a")
        self.assertExit(run, 0)
        self.assertIn("untagged: docker.io/library/app:1", run.out)
        self.assertIn("Total reclaimed space: ", run.out)
        self.assertEqual(self.listing(), [])
        self.assertEqual(self.trees(), [])
        df = self.df()
        self.assertEqual((df["images"]["total"], df["images"]["size"], df["images"]["reclaimable"]), (0, 0, 0), df)
        self.assertLessEqual(mid - du_bytes(self.store), reclaimable + 64 * 1024)
        self.assertGreaterEqual(mid - du_bytes(self.store), reclaimable - 64 * 1024)
        gc = self.kern("gc", "--json")
        self.assertExit(gc, 0)
        self.assertEqual(json.loads(gc.out)["trees"], 0)

    def test_prune_all_keeps_the_image_a_box_uses(self):
        self.load_busybox()
        self.load_docker([build_images.busybox_layer(), build_images.Layer().file("o", "o").bytes()], ["other:1"])
        argv = self._argv_box(["/bin/sh", "-c", "sleep 3; cat /etc/hostname"], ["--image", "busybox"],
                              self.s.new_name(), False)
        sp = self._popen(argv, None, subprocess.DEVNULL, (), True, None)
        self.addCleanup(self._reap_spawned, sp)
        sp.wait_started(15)
        df = self.df()
        self.assertEqual((df["images"]["active"], df["layers"]["active"]), (1, 1), df)
        self.assertLess(df["images"]["reclaimable"], df["images"]["size"])
        run = self.kern("image", "prune", "-a", "--json")
        self.assertExit(run, 0)
        self.assertEqual(json.loads(run.out)["untagged"], ["docker.io/library/other:1"])
        self.assertEqual([i["ref"] for i in self.listing()], ["docker.io/library/busybox:latest"])
        done = sp.finish(30)
        self.assertEqual(done.rc, 0, done.describe())
        self.assertEqual(done.out, "busybox\n")


if __name__ == "__main__":
    kerntest.main()
