"""kern port and kern image inspect, as the unprivileged user: a --net private box's published
ports as `docker port` prints them (all, or one box port; one it does not publish is refused), also
in kern inspect; an image's layers and the config a box starts from (its Healthcheck included),
and a name the store does not have refused."""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


class PortImageInspectTest(DetachedCase):
    def test_kern_port(self):
        self.require("pasta", shutil.which("pasta") is not None, "pasta is not installed (--net private)")
        name = self.started(["sleep", "1000"], ["--net", "private", "-p", "127.0.0.1:18099:80", "-p", "18098:53/udp"])
        run = self.kern("port", name)
        self.assertExit(run, 0)
        self.assertEqual(run.out, "80/tcp -> 127.0.0.1:18099\n53/udp -> 0.0.0.0:18098\n")
        self.assertEqual(self.kern("port", name, "80").out, "80/tcp -> 127.0.0.1:18099\n")
        self.assertEqual(self.kern("port", name, "53/udp").out, "53/udp -> 0.0.0.0:18098\n")
        bad = self.kern("port", name, "81")
        self.assertEqual(bad.rc, 1, bad.describe())
        self.assertIn("publishes no port 81/tcp", bad.err)
        self.assertEqual(self.inspect(name)["ports"], ["127.0.0.1:18099->80/tcp", "0.0.0.0:18098->53/udp"])

    def test_image_inspect(self):
        path = os.path.join(self.s.tmp, "inspect.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer()], ["inspect-me:2"],
                                          cmd=["/bin/sh", "-c", "sleep 1"], env=["PATH=/bin", "A=b"], workdir="/tmp",
                                          healthcheck={"Test": ["CMD", "true"], "Interval": 5000000000, "Retries": 4})
        self.assertExit(self.kern("load", "-i", path), 0)
        run = self.kern("image", "inspect", "inspect-me:2")
        self.assertExit(run, 0)
        [img] = json.loads(run.out)
        self.assertTrue(img["reference"].endswith("inspect-me:2"), img["reference"])
        self.assertRegex(img["digest"], r"^sha256:[0-9a-f]{64}$")
        self.assertEqual(len(img["layers"]), 1)
        cfg = img["config"]
        self.assertEqual(cfg["cmd"], ["/bin/sh", "-c", "sleep 1"])
        self.assertEqual(cfg["env"], ["PATH=/bin", "A=b"])
        self.assertEqual(cfg["working_dir"], "/tmp")
        self.assertEqual(cfg["healthcheck"]["test"], ["CMD", "true"])
        self.assertEqual(cfg["healthcheck"]["interval_ns"], 5000000000)
        self.assertEqual(cfg["healthcheck"]["retries"], 4)
        missing = self.kern("image", "inspect", "never-loaded:1")
        self.assertNotEqual(missing.rc, 0, missing.describe())
        self.assertIn("kern: error:", missing.err)


if __name__ == "__main__":
    kerntest.main()
