"""The image store on a full file system (kern(1) IMAGES, issue 21 items 21 and 25): a load
that runs out of inodes at any step, the tree already committed included, takes away all it
added (nothing `kern images` does not show is left), its error names store paths (never an
internal file name such as "blob-0" or "recipes"), and rmi, image prune and gc still work once
no inode is left, when they are needed most.

The store is on a tmpfs of its own with few inodes (nr_inodes), mounted by kerntest before it
drops to the test user (tests/support/small_fs.py); run as that user directly, the tests are
skipped by name (small-fs)."""

import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
from test_images import ImageTestCase  # noqa: E402

INODES = 3000
KERNTEST_SMALL_TMPFS = "size=64m,nr_inodes=%d" % INODES


def many_files_layer(n=150):
    layer = build_images.Layer().dir("data")
    for i in range(n):
        layer.file("data/f%03d" % i, "file %d\n" % i)
    return layer.bytes()


class FullDiskTest(ImageTestCase):

    def setUp(self):
        super().setUp()
        root = os.environ.get("KERN_TEST_SMALL_FS", "")
        self.require("small-fs", bool(root),
                     os.environ.get("KERN_TEST_SMALL_FS_PROBLEM") or
                     "run as root: the file mounts a small tmpfs for the test user's store")
        # The store on the small file system; the archives stay on the roomy one.
        self.cache = os.path.join(root, self.id().rsplit(".", 1)[-1])
        os.makedirs(self.cache)
        self.store = os.path.join(self.cache, "kern")
        self.filler = os.path.join(root, "filler")
        self.addCleanup(shutil.rmtree, self.cache, True)
        self.addCleanup(shutil.rmtree, self.filler, True)

    def free_inodes(self):
        return os.statvfs(self.cache).f_ffree

    def fill(self, leave=0):
        """Takes inodes with empty files until `leave` are free."""
        os.makedirs(self.filler, exist_ok=True)
        i = len(os.listdir(self.filler))
        while self.free_inodes() > leave:
            try:
                open(os.path.join(self.filler, "f%d" % i), "w").close()
            except OSError:
                break
            i += 1

    def unfill(self):
        shutil.rmtree(self.filler, True)

    def store_content(self):
        out = []
        for sub in ("trees", "blobs/sha256", "images", "refs", "staging"):
            d = os.path.join(self.store, sub)
            if os.path.isdir(d):
                out += [sub + "/" + n for n in os.listdir(d) if not n.endswith(".lock")]
        return sorted(out)

    def archive(self, name="a.tar", tags=("full/disk:1",), layers=None):
        path = os.path.join(self.work, name)
        build_images.write_docker_archive(path, layers or [many_files_layer()], list(tags))
        return path

    def test_a_load_that_runs_out_of_inodes_at_any_step_leaves_nothing(self):
        path = self.archive()
        before = self.free_inodes()
        self.assertExit(self.kern("load", "-q", "-i", path), 0)
        used = before - self.free_inodes()
        failed = 0
        # Budgets from one inode short of the whole load down to the tree not fitting: the first
        # few run out after the tree was committed (blobs, records), the others while unpacking.
        for short in range(1, 12):
            shutil.rmtree(self.store)
            self.fill(leave=used - short)
            run = self.kern("load", "-q", "-i", path)
            self.unfill()
            if run.rc == 0:
                continue
            failed += 1
            left = self.store_content()
            self.assertEqual(left, [], "a load failing %d inode(s) short left %s\n%s" % (short, left, run.describe()))
            self.assertEqual(self.listing(), [])
            self.assertIn(self.store + "/", run.err, run.describe())
            for internal in ('"blob-', '"recipes"', '"layer-', '"entry-', '"owners.jsonl"', '"stdin.tar"'):
                self.assertNotIn(internal, run.err, run.describe())
        self.assertGreaterEqual(failed, 8, "the budgets did not make the load fail")

    def test_rmi_prune_and_gc_work_with_no_inode_left(self):
        a = self.archive("a.tar", ["full/a:1"])
        b = self.archive("b.tar", ["full/b:1"], [many_files_layer(120)])
        c = self.archive("c.tar", ["full/c:1"], [many_files_layer(90)])
        for p in (a, b, c):
            self.assertExit(self.kern("load", "-q", "-i", p), 0)
        # c loses its name by hand: only gc takes an unnamed image.
        os.unlink(os.path.join(self.store, "refs", "docker.io%2Ffull%2Fc%3A1.json"))
        self.fill()
        self.assertEqual(self.free_inodes(), 0)
        rmi = self.kern("rmi", "full/a:1")
        self.assertExit(rmi, 0)
        self.assertEqual(sorted(i.get("ref") or "" for i in self.listing()), ["", "docker.io/full/b:1"])
        self.fill()
        gc = self.kern("gc")
        self.assertExit(gc, 0)
        self.assertIn("removed 1 image(s), 1 tree(s)", gc.out)
        self.fill()
        prune = self.kern("image", "prune", "-a")
        self.assertExit(prune, 0)
        self.assertEqual(self.listing(), [])
        self.assertEqual([n for n in self.store_content() if n.startswith(("trees/", "images/"))], [])


if __name__ == "__main__":
    kerntest.main()
