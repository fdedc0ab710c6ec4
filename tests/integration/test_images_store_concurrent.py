"""Concurrent loads share their work (kern(1) IMAGES, issue 21 item 24): loads of one image at
once end with one tree and a correct store, and images on a base that another load is unpacking
at that moment link the base's files instead of unpacking them again (10 loads took 767 MB where
one after the other took 426 MB). Checked by disk use and content, not by time."""

import glob
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
from test_images import ImageTestCase  # noqa: E402
from test_images_store import du_bytes, archive_members  # noqa: E402


def data_layer(tag, mb):
    layer = build_images.Layer().dir(tag)
    for i in range(mb):
        layer.file("%s/blob%02d" % (tag, i), os.urandom(1 << 20))
    return layer.bytes()


class ConcurrentLoadTest(ImageTestCase):

    def spawn_load(self, path, quiet=True):
        env = self.base_env()
        return subprocess.Popen([self.s.kern, "load"] + (["-q"] if quiet else []) + ["-i", path], env=env, cwd="/",
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)

    def finish(self, procs):
        errs = []
        for p in procs:
            out, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 0, "a concurrent load failed: %s %s" % (out, err))
            errs.append(err.decode(errors="replace"))
        return errs

    def trees(self):
        return sorted(n for n in os.listdir(os.path.join(self.store, "trees")) if "." not in n)

    def test_loads_of_one_image_at_once_end_with_one_correct_copy(self):
        layers = [data_layer("base", 16)]
        path = os.path.join(self.work, "one.tar")
        build_images.write_docker_archive(path, layers, ["same/image:1"])
        errs = self.finish([self.spawn_load(path, quiet=False) for _ in range(4)])
        # The layer was unpacked by one load; the others waited for it and took its tree.
        unpacked = [e for e in errs if " unpacked " in e]
        self.assertEqual(len(unpacked), 1,
                         "4 loads at once unpacked the layer %d times:\n%s" % (len(unpacked), "".join(errs)))
        self.assertEqual(len(self.trees()), 1, self.trees())
        self.assertEqual([i["ref"] for i in self.listing()], ["docker.io/same/image:1"])
        self.assertLessEqual(du_bytes(self.store), 1.2 * os.path.getsize(path))
        self.assertEqual(os.listdir(os.path.join(self.store, "staging")), [])
        out = os.path.join(self.work, "saved.tar")
        self.assertExit(self.kern("save", "same/image:1", "-o", out), 0)
        manifest, saved = archive_members(out)
        self.assertEqual(saved[manifest[0]["Layers"][0]], layers[0])

    def test_images_on_a_base_being_unpacked_link_its_files(self):
        base = data_layer("base", 48)
        paths = {}
        for name, layers in (("base", [base]), ("top1", [base, data_layer("top1", 1)]),
                             ("top2", [base, data_layer("top2", 1)])):
            paths[name] = os.path.join(self.work, name + ".tar")
            build_images.write_docker_archive(paths[name], layers, ["shared/%s:1" % name])
        first = self.spawn_load(paths["base"])
        # The others start while the base's tree is being unpacked in staging.
        end = time.monotonic() + 60
        while not glob.glob(os.path.join(self.store, "staging", "s-*", "tree")) and first.poll() is None:
            self.assertLess(time.monotonic(), end, "the base load never started unpacking")
            time.sleep(0.005)
        others = [self.spawn_load(paths["top1"]), self.spawn_load(paths["top2"])]
        self.finish([first] + others)
        self.assertEqual(sorted(i["ref"] for i in self.listing()),
                         ["docker.io/shared/base:1", "docker.io/shared/top1:1", "docker.io/shared/top2:1"])
        self.assertEqual(len(self.trees()), 3)
        # One copy of the base's 48 MB (linked into each tree), not three.
        used = du_bytes(self.store)
        self.assertLess(used, 70 << 20, "three images on one 48 MB base take %d MB" % (used >> 20))
        for name in ("top1", "top2"):
            run = self.kern("save", "shared/%s:1" % name, "-o", os.path.join(self.work, name + ".out"))
            self.assertExit(run, 0)


if __name__ == "__main__":
    kerntest.main()
