"""Progress of pull, load and save (kern(1), issue 12): with stderr on a terminal (a pty made
here) one line per layer with bytes done / total and a rate, redrawn in place; with stderr not a
terminal one line per layer when it is done; with -q nothing. And --json on pull and load: one
object on stdout naming the image, its config and its layers with their sizes."""

import http.server
import json
import os
import pty
import re
import select
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
from test_images import ImageTestCase  # noqa: E402
from test_registry import Vanishing  # noqa: E402

CURSOR_UP = re.compile(r"\x1b\[(\d+)A")
LINE_DONE = re.compile(r"^sha256:[0-9a-f]{12}  (downloaded, unpacked|unpacked|written)  [0-9.]+ (B|KiB|MiB) in [0-9.]+ s "
                       r"\([0-9.]+ (B|KiB|MiB|GiB)/s\)$")


class SlowRegistry(Vanishing):
    """Serves one OCI layout read-only (test_registry.Vanishing's manifests), sending blobs in
    small timed pieces so that a pull takes long enough for the display to redraw while a layer
    is in flight."""

    def do_GET(self):
        parts = self.path.split("/")
        if "blobs" not in parts:
            return super().do_GET()
        body = open(os.path.join(self.layout, "blobs", "sha256", parts[-1][7:]), "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for at in range(0, len(body), 64 << 10):
            self.wfile.write(body[at:at + (64 << 10)])
            self.wfile.flush()
            time.sleep(0.02)


class ProgressTestCase(ImageTestCase):

    def setUp(self):
        super().setUp()
        d = os.path.join(self.work, "layout")
        lay = build_images.Layout(d)
        # Two layers: busybox and 3 MiB that gzip cannot shrink.
        big = build_images.Layer().file("big.bin", os.urandom(3 << 20)).bytes()
        lay.tag(lay.image([build_images.busybox_layer(), big]), "latest")
        lay.save()
        self.layout = d
        handler = type("H", (SlowRegistry,), {"layout": d})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.ref = "127.0.0.1:%d/kern/slow:1" % server.server_address[1]
        index = json.load(open(os.path.join(d, "index.json")))
        manifest = json.load(open(os.path.join(d, "blobs", "sha256", index["manifests"][0]["digest"][7:])))
        self.manifest_digest = index["manifests"][0]["digest"]
        self.manifest = manifest

    def on_pty(self, *args, timeout=120):
        """Runs kern ARGS with stderr on a new pty (stdout a pipe); returns (rc, stdout, what the
        terminal got)."""
        master, slave = pty.openpty()
        p = subprocess.Popen([self.s.kern] + list(args), env=self.base_env(), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=slave, cwd="/", start_new_session=True)
        os.close(slave)
        got = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r, _, _ = select.select([master], [], [], 0.5)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer closed the pty
                    break
                if not chunk:
                    break
                got += chunk
            elif p.poll() is not None:
                break
        os.close(master)
        out = p.stdout.read().decode()
        p.stdout.close()
        p.wait(10)
        return p.returncode, out, got.decode(errors="replace")

    def layer_ids(self):
        return ["sha256:" + l["digest"][7:19] for l in self.manifest["layers"]]


class PullProgressTest(ProgressTestCase):

    def test_terminal_gets_per_layer_lines_redrawn_in_place(self):
        rc, out, tty = self.on_pty("pull", self.ref)
        self.assertEqual(rc, 0, tty)
        self.assertTrue(out.startswith(self.ref + " sha256:"), out)
        self.assertIsNotNone(CURSOR_UP.search(tty), "no in-place redraw (cursor up):\n%r" % tty)
        self.assertIn("\x1b[K", tty)
        big = self.layer_ids()[1]
        # While the big layer downloads: its bytes so far of its total, and a rate.
        inflight = re.findall(re.escape(big) + r"  downloading  ([0-9.]+ (?:B|KiB|MiB)) / 3\.0 MiB  (\S+ \S+/s|-)", tty)
        self.assertGreaterEqual(len(set(d for d, _ in inflight)), 3, "no byte counts in flight:\n%r" % tty)
        self.assertTrue([r for _, r in inflight if r != "-"], tty)
        # The last drawing (after the last cursor-up): one finished line per layer.
        final = tty[list(CURSOR_UP.finditer(tty))[-1].end():]
        for lid in self.layer_ids():
            self.assertRegex(final, re.escape(lid) + r"  downloaded, unpacked  ")
        self.assertNotIn("kern: error", tty)

    def test_not_a_terminal_one_line_per_layer(self):
        run = self.kern("pull", self.ref, timeout=120)
        self.assertExit(run, 0)
        self.assertNotIn("\x1b", run.err)
        self.assertNotIn("\r", run.err)
        lines = run.err.splitlines()
        self.assertEqual(len(lines), 2, run.describe())
        for lid, line in zip(self.layer_ids(), lines):
            self.assertTrue(line.startswith(lid + "  downloaded, unpacked  "), line)
            self.assertRegex(line, LINE_DONE)
        # The big layer's line counts its download: about 50 pieces sent 20 ms apart.
        self.assertGreaterEqual(float(re.search(r" in ([0-9.]+) s", lines[1]).group(1)), 0.5, lines[1])

    def test_quiet_prints_nothing(self):
        run = self.kern("pull", "-q", self.ref, timeout=120)
        self.assertExit(run, 0)
        self.assertEqual(run.err, "")
        rc, out, tty = self.on_pty("pull", "-q", "--json", self.ref)
        self.assertEqual(rc, 0, tty)
        self.assertEqual(tty, "")

    def test_json(self):
        rc, out, tty = self.on_pty("pull", "--json", self.ref)
        self.assertEqual(rc, 0, tty)
        j = json.loads(out)
        self.assertEqual(j["reference"], self.ref)
        self.assertEqual(j["digest"], self.manifest_digest)
        self.assertEqual(j["config_digest"], self.manifest["config"]["digest"])
        self.assertEqual([(l["digest"], l["size"]) for l in j["layers"]],
                         [(l["digest"], l["size"]) for l in self.manifest["layers"]])
        self.assertEqual(j["compressed_size"], sum(l["size"] for l in self.manifest["layers"]))
        self.assertGreater(j["unpacked_size"], 3 << 20)
        self.assertEqual(j["source"], self.ref.rsplit(":", 1)[0])
        self.assertFalse(j["mirror"])
        self.assertIn("downloading", tty)  # progress stays on stderr


class LoadSaveProgressTest(ProgressTestCase):

    def archive(self):
        path = os.path.join(self.work, "big.tar")
        big = build_images.Layer().file("big.bin", os.urandom(3 << 20)).bytes()
        build_images.write_docker_archive(path, [build_images.busybox_layer(), big], ["kern/big:1"])
        return path

    def test_load_progress_and_json(self):
        path = self.archive()
        rc, out, tty = self.on_pty("load", "-i", path)
        self.assertEqual(rc, 0, tty)
        self.assertIn("Loaded image: docker.io/kern/big:1", out)
        self.assertRegex(tty, r"sha256:[0-9a-f]{12}  unpacking  [0-9.]+ (B|KiB|MiB) / 3\.0 MiB")
        self.assertIsNotNone(CURSOR_UP.search(tty), repr(tty))
        self.assertEqual(len(re.findall(r"  unpacked  ", tty.rsplit("\x1b[2A", 1)[-1])), 2, repr(tty))
        self.assertExit(self.kern("rmi", "kern/big:1"), 0)
        self.assertExit(self.kern("gc"), 0)
        run = self.kern("load", "--json", "-i", path)
        self.assertExit(run, 0)
        lines = run.err.splitlines()
        self.assertEqual(len(lines), 2, run.describe())
        for line in lines:
            self.assertRegex(line, LINE_DONE)
        j = json.loads(run.out)
        self.assertEqual(len(j["images"]), 1)
        img = j["images"][0]
        self.assertEqual(img["names"], ["docker.io/kern/big:1"])
        self.assertEqual(img["reference"], "docker.io/kern/big:1")
        self.assertTrue(img["digest"].startswith("sha256:"))
        self.assertEqual(len(img["layers"]), 2)
        self.assertGreater(img["layers"][1]["size"], 3 << 20)
        quiet = self.kern("load", "-q", "-i", path)
        self.assertExit(quiet, 0)
        self.assertEqual(quiet.err, "")

    def test_save_progress(self):
        path = self.archive()
        self.assertExit(self.kern("load", "-q", "-i", path), 0)
        out = os.path.join(self.work, "saved.tar")
        rc, _, tty = self.on_pty("save", "-o", out, "kern/big:1")
        self.assertEqual(rc, 0, tty)
        self.assertRegex(tty, r"sha256:[0-9a-f]{12}  written  3\.0 MiB in ")
        self.assertIsNotNone(CURSOR_UP.search(tty), repr(tty))
        run = self.kern("save", "-o", out, "kern/big:1")
        self.assertExit(run, 0)
        self.assertEqual(len(run.err.splitlines()), 2, run.describe())
        quiet = self.kern("save", "-q", "-o", out, "kern/big:1")
        self.assertEqual(quiet.err, "")


if __name__ == "__main__":
    kerntest.main()
