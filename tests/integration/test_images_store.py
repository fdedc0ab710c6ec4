"""The image store's disk use and listings (kern(1) IMAGES; issue 12 section 3, issue 13's load
row): a layer stack is unpacked once whatever transport brought it (docker-archive, OCI
archive), rmi of one image keeps what another still uses, a docker-archive load keeps no second
copy of its layers, `kern images` IDs, -q, --format and filters, `kern save` of several images,
`kern image prune` and `kern system df`."""

import io
import json
import os
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
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
        out = os.path.join(self.work, "saved.tar")
        self.assertExit(self.kern("save", "disk/use:1", "-o", out), 0)
        manifest, saved = archive_members(out)
        self.assertEqual([saved[n] == l for n, l in zip(manifest[0]["Layers"], layers)], [True, True])
        self.assertExit(self.kern("rmi", "disk/use:1"), 0)
        self.assertExit(self.kern("load", "-i", out), 0)
        run = self.image_box("disk/use:1", ["/bin/sh", "-c", "ls /payload | wc -l"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), "8")

    def test_a_layer_whose_file_a_later_layer_replaces_keeps_its_blob(self):
        lower = build_images.Layer().file("etc/motd", "lower\n").file("etc/keep", "keep\n").bytes()
        upper = build_images.Layer().file("etc/motd", "upper\n").bytes()
        layers = [build_images.busybox_layer(), lower, upper]
        self.load_docker(layers, ["over/write:1"])
        diff_ids = [build_images.sha256(l)[7:] for l in layers]
        # The tree has only the upper motd: the lower layer cannot be re-created from it.
        self.assertEqual([b for b in self.blobs() if b in diff_ids], [diff_ids[1]])
        out = os.path.join(self.work, "saved.tar")
        self.assertExit(self.kern("save", "over/write:1", "-o", out), 0)
        manifest, saved = archive_members(out)
        self.assertEqual([saved[n] == l for n, l in zip(manifest[0]["Layers"], layers)], [True, True, True])

    def test_save_of_an_image_loaded_second_through_another_transport(self):
        # The OCI archive's image finds the tree there and stores no layer blob of its own: its
        # layers come back from the tree the docker-archive load left.
        layers = two_layers()
        self.load_docker(layers, ["first/docker:1"])
        self.load_oci(layers, "docker.io/then/oci:1")
        self.assertExit(self.kern("rmi", "first/docker:1"), 0)
        out = os.path.join(self.work, "saved.tar")
        self.assertExit(self.kern("save", "then/oci:1", "-o", out), 0)
        manifest, saved = archive_members(out)
        self.assertEqual([saved[n] == l for n, l in zip(manifest[0]["Layers"], layers)], [True, True])
        self.assertEqual(manifest[0]["RepoTags"], ["docker.io/then/oci:1"])


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


if __name__ == "__main__":
    kerntest.main()
