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


if __name__ == "__main__":
    kerntest.main()
