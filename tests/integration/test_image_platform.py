"""What a user meets with an image made for another machine, and with an image named the way
`kern images` prints it: a 32-bit image of the host's compat ABI (arm on arm64, 386 on amd64) is
refused before a box starts, since the box's seccomp filter kills every call of that ABI; a
program the kernel has no loader for fails with both architectures named; an image id or digest
resolves in the local store instead of becoming a registry name to pull."""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_images import ImageTestCase  # noqa: E402

COMPAT = {"amd64": "386", "arm64": "arm"}

# An ELF header no kernel and no binfmt_misc handler takes: 64-bit, e_machine 0x7a7a.
FOREIGN_ELF = (b"\x7fELF\x02\x01\x01" + bytes(9) + (2).to_bytes(2, "little") + (0x7A7A).to_bytes(2, "little") +
               (1).to_bytes(4, "little") + bytes(48))


class ImagePlatformTest(ImageTestCase):

    def test_image_of_the_hosts_32bit_abi_is_refused_before_the_box(self):
        host = build_images.host_arch()
        self.require("compat-abi", host in COMPAT, "no 32-bit ABI known beside %s" % host)
        compat = COMPAT[host]
        path = os.path.join(self.work, "compat.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer()], ["compat:1"], arch=compat)
        self.assertExit(self.kern("load", "-i", path), 0)
        run = self.image_box("compat:1", ["/bin/true"])
        self.assertExit(run, 125)
        self.assertKernError(run, "linux/" + compat, host, "seccomp")
        self.assertIn("kern: hint: ", run.err, run.describe())
        # The positive control: the same layer, recorded for the host, runs.
        path = os.path.join(self.work, "native.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer()], ["native:1"])
        self.assertExit(self.kern("load", "-i", path), 0)
        self.assertExit(self.image_box("native:1", ["/bin/true"]), 0)

    def test_exec_format_error_names_both_architectures(self):
        layer = (build_images.Layer().dir("bin").dir("etc").dir("tmp", 0o1777)
                 .file("bin/sh", FOREIGN_ELF, 0o755).file("bin/tool", FOREIGN_ELF, 0o755).bytes())
        path = os.path.join(self.work, "foreign.tar")
        build_images.write_docker_archive(path, [layer], ["foreign:1"], arch="s390x")
        self.assertExit(self.kern("load", "-i", path), 0)
        run = self.image_box("foreign:1", ["/bin/tool"])
        self.assertExit(run, 126)
        self.assertIn("kern: error: execve", run.err, run.describe())
        self.assertIn("linux/s390x", run.err, run.describe())
        self.assertIn("linux/" + build_images.host_arch(), run.err, run.describe())

    def test_image_id_and_digests_resolve_locally(self):
        self.load_busybox()
        [img] = self.listing()
        listing = self.kern("images")
        self.assertExit(listing, 0)
        short = img["config_digest"][len("sha256:"):][:12]
        self.assertRegex(listing.out, r"\b%s\b" % re.escape(short))
        for name in (short, img["config_digest"], img["digest"]):
            # --pull missing (the default): a miss would be a pull from docker.io/library/<id>.
            run = self.image_box(name, ["/bin/sh", "-c", "echo ran"])
            self.assertExit(run, 0, name)
            self.assertEqual(run.out, "ran\n", name)
        # An id no image has is reported as such, and nothing is pulled or left behind.
        run = self.image_box("sha256:" + "0" * 64, ["/bin/true"])
        self.assertExit(run, 125)
        self.assertKernError(run, "no image with id")


if __name__ == "__main__":
    kerntest.main()
