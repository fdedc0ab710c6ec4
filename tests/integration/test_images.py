"""Images from local sources (kern(1), issue 3): kern load of a docker-archive (ours and
skopeo's), oci:DIR[:TAG] layouts (layered with whiteouts, an index with two platforms, one made
by umoci), the image config applied to the box, images/tag/rmi/save/gc, and --pull never on a
missing image (125, nothing created)."""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kernel_client  # noqa: E402
import kerntest  # noqa: E402


class ImageTestCase(kerntest.KernTestCase):
    """Each test gets a store of its own (XDG_CACHE_HOME) so tests do not see each other."""

    def setUp(self):
        super().setUp()
        self.cache = os.path.join(self.s.tmp, "cache-" + self.id().rsplit(".", 1)[-1])
        os.makedirs(self.cache, exist_ok=True)
        self.store = os.path.join(self.cache, "kern")
        self.work = os.path.join(self.s.work, self.id().rsplit(".", 1)[-1])
        os.makedirs(self.work, exist_ok=True)
        self.require("busybox", os.access(build_images.BUSYBOX, os.X_OK),
                     build_images.BUSYBOX + " is missing (apt-get install busybox-static)")

    def base_env(self):
        env = super().base_env()
        env["XDG_CACHE_HOME"] = self.cache
        return env

    def image_box(self, image, cmd, flags=(), **kw):
        return self.box(cmd, flags=["--image", image] + list(flags), rootfs=False, **kw)

    def load_busybox(self, tag="busybox:latest"):
        path = os.path.join(self.work, "busybox.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer()], [tag])
        run = self.kern("load", "-i", path)
        self.assertExit(run, 0)
        return run

    def assertVerbError(self, run, *needles):
        """A verb other than box failed: exit 1, a `kern: error: ` line naming each needle."""
        self.assertExit(run, 1)
        self.assertTrue([l for l in run.err.splitlines() if l.startswith("kern: error: ")], run.describe())
        for n in needles:
            self.assertIn(n, run.err, run.describe())

    def listing(self):
        run = self.kern("images", "--json")
        self.assertExit(run, 0)
        return json.loads(run.out)


class LoadTest(ImageTestCase):

    def test_load_docker_archive_and_run(self):
        run = self.load_busybox()
        self.assertIn("Loaded image: docker.io/library/busybox:latest", run.out)
        box = self.image_box("busybox", ["/bin/sh", "-c", "echo hi; cat /etc/hostname"])
        self.assertExit(box, 0)
        self.assertEqual(box.out, "hi\nbusybox\n")
        refs = [i["ref"] for i in self.listing()]
        self.assertEqual(refs, ["docker.io/library/busybox:latest"])

    def test_load_from_stdin(self):
        path = os.path.join(self.work, "bb.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer()], ["from/stdin:v1"])
        with open(path, "rb") as f:
            run = self.kern("load", stdin=f)
        self.assertExit(run, 0)
        self.assertIn("Loaded image: docker.io/from/stdin:v1", run.out)
        self.assertExit(self.image_box("from/stdin:v1", ["/bin/true"]), 0)

    def test_image_config_applies(self):
        layer = build_images.busybox_layer()
        path = os.path.join(self.work, "cfg.tar")
        build_images.write_docker_archive(
            path, [layer], ["cfg:1"], entrypoint=["/bin/sh", "-c"], cmd=['echo "$GREETING from $(pwd)"'],
            env=["PATH=/bin", "GREETING=hello"], workdir="/etc")
        self.assertExit(self.kern("load", "-i", path), 0)
        run = self.image_box("cfg:1", None)
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), "hello from /etc")
        # -e wins over the image's Env; an explicit command replaces Cmd and keeps the Entrypoint
        # (docker run), so it is the script given to `sh -c`.
        run = self.image_box("cfg:1", ["echo $GREETING"], flags=["-e", "GREETING=override"])
        self.assertEqual(run.out.strip(), "override", run.describe())

    def test_pull_never_missing_exits_125_and_creates_nothing(self):
        run = self.image_box("nothere:1", ["/bin/true"], flags=["--pull", "never"])
        self.assertExit(run, 125)
        self.assertKernError(run, "not in the local store")
        self.assertFalse(os.path.exists(self.store), os.listdir(self.cache))

    def test_corrupt_archive_leaves_store_clean(self):
        path = os.path.join(self.work, "bb.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer()], ["broken:1"])
        data = bytearray(open(path, "rb").read())
        data[len(data) // 2] ^= 0xFF  # inside the layer: its diff_id no longer matches
        open(path, "wb").write(bytes(data))
        run = self.kern("load", "-i", path)
        self.assertVerbError(run, "digest mismatch")
        for sub in ("refs", "images", "trees", "staging"):
            self.assertEqual(os.listdir(os.path.join(self.store, sub)), [], sub)


class LayoutTest(ImageTestCase):

    def test_layered_layout_whiteouts_and_opaque(self):
        d = os.path.join(self.work, "layered")
        lay = build_images.Layout(d)
        lay.tag(lay.image(build_images.layered_layers()), "v3")
        lay.save()
        run = self.image_box("oci:%s:v3" % d, ["/bin/sh", "-c", "ls /data /data/opaque; cat /etc/motd"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.split(), ["/data:", "keep", "opaque", "/data/opaque:", "new", "layer3"])

    def test_index_with_two_platforms_picks_host(self):
        d = os.path.join(self.work, "multi")
        subprocess.run([sys.executable, os.path.join(os.path.dirname(build_images.__file__), "build_images.py"),
                        "multiarch-layout", d], check=True)
        run = self.image_box("oci:" + d, ["/bin/cat", "/etc/arch"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), build_images.host_arch())

    def test_umoci_layout_runs(self):
        umoci = shutil.which("umoci")
        self.require("umoci", umoci, "umoci is not installed (apt-get install umoci)")
        d = os.path.join(self.work, "umoci")
        rootfs_bundle = os.path.join(self.work, "bundle")
        self.assertExit(self.host_run([umoci, "init", "--layout", d]), 0)
        self.assertExit(self.host_run([umoci, "new", "--image", d + ":base"]), 0)
        self.assertExit(self.host_run([umoci, "unpack", "--rootless", "--image", d + ":base", rootfs_bundle]), 0)
        rootfs = os.path.join(rootfs_bundle, "rootfs")
        os.makedirs(os.path.join(rootfs, "bin"), exist_ok=True)
        shutil.copy(build_images.BUSYBOX, os.path.join(rootfs, "bin", "busybox"))
        os.symlink("busybox", os.path.join(rootfs, "bin", "sh"))
        self.assertExit(self.host_run([umoci, "repack", "--image", d + ":bb", rootfs_bundle]), 0)
        run = self.image_box("oci:%s:bb" % d, ["/bin/sh", "-c", "echo from-umoci"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), "from-umoci")

    def test_changed_layout_is_reimported(self):
        d = os.path.join(self.work, "changing")
        lay = build_images.Layout(d)
        base = build_images.busybox_layer()
        lay.tag(lay.image([base, build_images.Layer().file("v", "one\n").bytes()]), "t")
        lay.save()
        self.assertEqual(self.image_box("oci:%s:t" % d, ["/bin/cat", "/v"]).out, "one\n")
        lay = build_images.Layout(d)
        lay.tag(lay.image([base, build_images.Layer().file("v", "two\n").bytes()]), "t")
        lay.save()
        self.assertEqual(self.image_box("oci:%s:t" % d, ["/bin/cat", "/v"]).out, "two\n")


class ManageTest(ImageTestCase):

    def test_tag_rmi_gc(self):
        self.load_busybox()
        self.assertExit(self.kern("tag", "busybox", "localhost:5000/mine:v2"), 0)
        refs = sorted(i["ref"] for i in self.listing())
        self.assertEqual(refs, ["docker.io/library/busybox:latest", "localhost:5000/mine:v2"])
        self.assertExit(self.kern("rmi", "busybox"), 0)
        # The other name keeps the image and its tree.
        self.assertExit(self.image_box("localhost:5000/mine:v2", ["/bin/true"]), 0)
        run = self.kern("rmi", "localhost:5000/mine:v2")
        self.assertExit(run, 0)
        self.assertIn("Deleted: sha256:", run.out)
        self.assertEqual(self.listing(), [])
        self.assertEqual([n for n in os.listdir(os.path.join(self.store, "trees"))], [])
        self.assertEqual(os.listdir(os.path.join(self.store, "blobs", "sha256")), [])
        self.assertExit(self.kern("gc"), 0)
        self.assertExit(self.kern("rmi", "busybox"), 1)
        self.assertExit(self.kern("tag", "nothere", "x:1"), 1)
        self.assertExit(self.kern("rmi"), 2)

    def test_rmi_while_box_runs_keeps_its_root(self):
        self.load_busybox()
        argv = self._argv_box(["/bin/sh", "-c", "sleep 2; cat /etc/hostname"], ["--image", "busybox"],
                              self.s.new_name(), False)
        sp = self._popen(argv, None, subprocess.DEVNULL, (), True, None)
        self.addCleanup(self._reap_spawned, sp)
        sp.wait_started(15)
        rm = self.kern("rmi", "busybox")
        self.assertExit(rm, 0)
        run = sp.finish(30)
        self.assertEqual(run.rc, 0, run.describe())
        self.assertEqual(run.out, "busybox\n")
        gc = self.kern("gc")
        self.assertExit(gc, 0)
        self.assertEqual(os.listdir(os.path.join(self.store, "trees")), [])

    def test_save_round_trip_and_skopeo(self):
        self.load_busybox()
        out = os.path.join(self.work, "saved.tar")
        self.assertExit(self.kern("save", "busybox", "-o", out), 0)
        self.assertExit(self.kern("rmi", "busybox"), 0)
        run = self.kern("load", "-i", out)
        self.assertExit(run, 0)
        self.assertIn("docker.io/library/busybox:latest", run.out)
        self.assertExit(self.image_box("busybox", ["/bin/true"]), 0)
        skopeo = shutil.which("skopeo")
        self.require("skopeo", skopeo, "skopeo is not installed (apt-get install skopeo)")
        insp = self.host_run([skopeo, "inspect", "docker-archive:" + out])
        self.assertExit(insp, 0)
        info = json.loads(insp.out)
        self.assertEqual(info["Os"], "linux")
        self.assertEqual(len(info["Layers"]), 1)
        # An archive written by skopeo loads too.
        theirs = os.path.join(self.work, "skopeo.tar")
        self.assertExit(self.host_run([skopeo, "copy", "docker-archive:" + out,
                                       "docker-archive:%s:skopeo/made:v1" % theirs], timeout=120), 0)
        run = self.kern("load", "-i", theirs)
        self.assertExit(run, 0)
        self.assertIn("docker.io/skopeo/made:v1", run.out)
        self.assertExit(self.image_box("skopeo/made:v1", ["/bin/true"]), 0)
        # And an OCI archive (a tar of an OCI layout) named by its ref.name annotation.
        oci_tar = os.path.join(self.work, "oci.tar")
        self.assertExit(self.host_run([skopeo, "copy", "docker-archive:" + out,
                                       "oci-archive:%s:docker.io/acme/thing:v9" % oci_tar], timeout=120), 0)
        run = self.kern("load", "-i", oci_tar)
        self.assertExit(run, 0)
        self.assertIn("Loaded image: docker.io/acme/thing:v9", run.out)
        self.assertExit(self.image_box("acme/thing:v9", ["/bin/true"]), 0)


class KernelFromImageTest(ImageTestCase):
    """A warm kernel on an image from the store (issue 5 with issue 3): busybox sh as a REPL."""

    def test_serve_from_an_image_keeps_state_and_sees_the_image(self):
        self.load_busybox()
        argv = [self.s.kern, "kernel", "serve", "--image", "busybox", "--pull", "never", "--", "/bin/sh"]
        k = kernel_client.ServeKernel(argv, self.base_env())
        try:
            self.assertEqual(k.ready.get("status"), "ready", k.ready)
            self.assertEqual(k.ready.get("lang"), "repl", k.ready)
            r = k.run("x=41; echo $((x+1))")
            self.assertEqual((r.get("status"), r.get("stdout")), ("done", "42\n"), r)
            r = k.run("echo $x; cat /etc/hostname")
            # The state of the first cell, and a file of the image (not of the host).
            self.assertEqual((r.get("status"), r.get("stdout")), ("done", "41\nbusybox\n"), r)
            # Discriminant for the check after close: while it serves, its box is registered.
            self.assertEqual(len(self.registered_boxes()), 1, self.registered_boxes())
        finally:
            rc = k.close()
        self.assertEqual(rc, 0, getattr(k, "stderr", ""))
        self.assertEqual(self.registered_boxes(), [], "the kernel's box outlived serve")

    def test_serve_from_a_missing_image_with_pull_never_starts_nothing(self):
        argv = [self.s.kern, "kernel", "serve", "--image", "not-here:1", "--pull", "never", "--", "/bin/sh"]
        p = subprocess.run(argv, env=self.base_env(), stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=60, cwd="/")
        self.assertNotEqual(p.returncode, 0, p)
        self.assertIn("kern: error: ", p.stderr)
        self.assertIn("not-here", p.stderr)
        self.assertEqual(self.registered_boxes(), [])
        self.assertFalse(os.path.isdir(os.path.join(self.store, "trees")) and
                         os.listdir(os.path.join(self.store, "trees")), "a tree was created")


if __name__ == "__main__":
    kerntest.main()
