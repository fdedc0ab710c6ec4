"""Pulling from a real registry on loopback (kern(1), issue 3): Debian's docker-registry,
started and stopped by the tests, images pushed with Debian's skopeo from layouts built here
(single-layer busybox, three layers with whiteouts and an opaque directory, an index with two
platforms); digest pinning; basic auth with htpasswd and `kern login`; `--pull always`; and a
registry that goes away in the middle of a blob, which must leave the store clean."""

import ctypes
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
from test_images import ImageTestCase  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with(parent):
    """A preexec_fn: the child is killed when `parent` (the test process) dies, SIGKILL included,
    so that nothing the tests start outlives them and nobody has to stop registries by name."""
    def arm():
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)
    return arm


class Registry:
    """docker-registry serving plain HTTP on 127.0.0.1 on a free port of its own (never the
    system registry's :5000), optionally behind htpasswd basic auth, optionally over TLS
    (tls=(cert, key), and client_ca=PATH to require client certificates it signed;
    cert_dir=DIR is what skopeo then pushes with)."""

    def __init__(self, workdir, user=None, password=None, tls=None, client_ca=None, cert_dir=None):
        self.port = free_port()
        self.host = "127.0.0.1:%d" % self.port
        self.dir = os.path.join(workdir, "registry-%d" % self.port)
        os.makedirs(os.path.join(self.dir, "data"))
        self.creds = None
        auth = ""
        if user:
            htpasswd = shutil.which("htpasswd")
            line = subprocess.run([htpasswd, "-Bbn", user, password], check=True, capture_output=True,
                                  text=True).stdout.strip()
            with open(os.path.join(self.dir, "htpasswd"), "w") as f:
                f.write(line + "\n")
            auth = "auth:\n  htpasswd:\n    realm: kern-test\n    path: %s/htpasswd\n" % self.dir
            self.creds = "%s:%s" % (user, password)
        self.tls = tls
        self.cert_dir = cert_dir
        http_tls = ""
        if tls:
            http_tls = "  tls:\n    certificate: %s\n    key: %s\n" % tls
            if client_ca:
                http_tls += "    clientcas:\n      - %s\n" % client_ca
        config = os.path.join(self.dir, "config.yml")
        with open(config, "w") as f:
            f.write("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s/data\n"
                    "  delete:\n    enabled: true\nhttp:\n  addr: %s\n%s%s" % (self.dir, self.host, http_tls, auth))
        # skopeo looks for credentials under $XDG_RUNTIME_DIR (else /run/containers/UID): give it
        # a private one.
        self.env = dict(os.environ, HOME=self.dir, XDG_RUNTIME_DIR=self.dir)
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.proc = subprocess.Popen([shutil.which("docker-registry"), "serve", config], stdout=self.log,
                                     stderr=subprocess.STDOUT, preexec_fn=die_with(os.getpid()))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if tls:
                    # Up once it accepts connections (a client-certificate handshake needs skopeo).
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    return
                urllib.request.urlopen("http://%s/v2/" % self.host, timeout=1)
                return
            except urllib.error.HTTPError:
                return  # 401: up, with auth
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("docker-registry did not come up:\n" + open(os.path.join(self.dir, "log")).read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def push(self, layout_ref, name, all_platforms=False):
        argv = [shutil.which("skopeo"), "copy", "--dest-tls-verify=false"]
        if self.cert_dir:
            argv.append("--dest-cert-dir=" + self.cert_dir)
        if all_platforms:
            argv.append("--all")
        if self.creds:
            argv += ["--dest-creds", self.creds]
        argv += [layout_ref, "docker://%s/%s" % (self.host, name)]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=self.env)
        if run.returncode != 0:
            raise RuntimeError("skopeo copy failed: %s\n%s" % (" ".join(argv), run.stderr))

    def digest(self, name):
        argv = [shutil.which("skopeo"), "inspect", "--tls-verify=false", "docker://%s/%s" % (self.host, name)]
        if self.creds:
            argv[2:2] = ["--creds", self.creds]
        return json.loads(subprocess.run(argv, check=True, capture_output=True, timeout=60, env=self.env).stdout)["Digest"]


class RegistryTestCase(ImageTestCase):

    def setUp(self):
        super().setUp()
        for tool in ("docker-registry", "skopeo"):
            self.require("registry", shutil.which(tool), "%s is not installed (apt-get install %s)" % (tool, tool))

    def start_registry(self, **kw):
        reg = Registry(self.work, **kw)
        self.addCleanup(reg.stop)
        return reg

    def stdin_text(self, s):
        """A pipe's read end holding `s`, for a kern run's stdin."""
        r, w = os.pipe()
        os.write(w, s.encode())
        os.close(w)
        f = os.fdopen(r, "rb")
        self.addCleanup(f.close)
        return f

    def busybox_layout(self, tag="latest"):
        d = os.path.join(self.work, "bb-layout")
        lay = build_images.Layout(d)
        lay.tag(lay.image([build_images.busybox_layer()]), tag)
        lay.save()
        return "oci:%s:%s" % (d, tag)


class RegistryLifetimeTest(RegistryTestCase):

    def test_a_registry_dies_with_the_test_process_that_started_it(self):
        here = os.path.dirname(os.path.abspath(__file__))
        code = ("import sys, time; sys.path.insert(0, %r); import test_registry; "
                "r = test_registry.Registry(%r); print(r.proc.pid, r.port, flush=True); time.sleep(120)"
                % (here, self.work))
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        pid, port = (int(x) for x in p.stdout.readline().split())
        self.assertNotEqual(port, 5000, "the tests' registry took the system registry's port")
        self.assertTrue(os.path.exists("/proc/%d" % pid))
        p.kill()
        p.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not kerntest.is_zombie(pid):
            time.sleep(0.05)
        alive = not kerntest.is_zombie(pid)
        if alive:
            os.kill(pid, signal.SIGKILL)
        self.assertFalse(alive, "the registry outlived the test process that started it")


class PullTest(RegistryTestCase):

    def test_pull_single_layer_and_run(self):
        reg = self.start_registry()
        reg.push(self.busybox_layout(), "kern/bb:1")
        ref = reg.host + "/kern/bb:1"
        run = self.kern("pull", ref)
        self.assertExit(run, 0)
        self.assertEqual(run.out.split()[0], ref)
        self.assertTrue(run.out.split()[1].startswith("sha256:"))
        box = self.image_box(ref, ["/bin/sh", "-c", "echo pulled"], flags=["--pull", "never"])
        self.assertExit(box, 0)
        self.assertEqual(box.out, "pulled\n")

    def test_box_pulls_missing_image(self):
        reg = self.start_registry()
        reg.push(self.busybox_layout(), "kern/auto:1")
        box = self.image_box(reg.host + "/kern/auto:1", ["/bin/true"])
        self.assertExit(box, 0)

    def test_three_layers_with_whiteouts(self):
        reg = self.start_registry()
        d = os.path.join(self.work, "layered")
        lay = build_images.Layout(d)
        lay.tag(lay.image(build_images.layered_layers()), "v3")
        lay.save()
        reg.push("oci:%s:v3" % d, "kern/layered:v3")
        run = self.image_box(reg.host + "/kern/layered:v3", ["/bin/sh", "-c", "ls /data /data/opaque; cat /etc/motd"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.split(), ["/data:", "keep", "opaque", "/data/opaque:", "new", "layer3"])

    def test_index_resolves_to_host_platform(self):
        reg = self.start_registry()
        d = os.path.join(self.work, "multi")
        subprocess.run([sys.executable, os.path.join(os.path.dirname(build_images.__file__), "build_images.py"),
                        "multiarch-layout", d], check=True)
        reg.push("oci:%s:latest" % d, "kern/multi:1", all_platforms=True)
        run = self.image_box(reg.host + "/kern/multi:1", ["/bin/cat", "/etc/arch"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), build_images.host_arch())

    def test_digest_pinned(self):
        reg = self.start_registry()
        reg.push(self.busybox_layout(), "kern/pin:1")
        digest = reg.digest("kern/pin:1")
        self.assertExit(self.kern("pull", "%s/kern/pin@%s" % (reg.host, digest)), 0)
        wrong = "sha256:" + "0" * 64
        run = self.kern("pull", "%s/kern/pin@%s" % (reg.host, wrong))
        self.assertVerbError(run)

    def test_missing_image_and_pull_never(self):
        reg = self.start_registry()
        run = self.kern("pull", reg.host + "/kern/absent:1")
        self.assertVerbError(run, "not in the registry")
        # Issue 21 item 15: an HTTP 404 is said as one, without a stray "(ENOENT)".
        self.assertIn("(HTTP 404)", run.err, run.describe())
        self.assertNotIn("ENOENT", run.err, run.describe())
        box = self.image_box(reg.host + "/kern/absent:1", ["/bin/true"])
        self.assertExit(box, 125)
        box = self.image_box(reg.host + "/kern/absent:1", ["/bin/true"], flags=["--pull", "never"])
        self.assertExit(box, 125)

    def test_pull_always_refetches(self):
        reg = self.start_registry()
        base = build_images.busybox_layer()

        def push(text):
            d = os.path.join(self.work, "v-" + text)
            lay = build_images.Layout(d)
            lay.tag(lay.image([base, build_images.Layer().file("v", text + "\n").bytes()]), "t")
            lay.save()
            reg.push("oci:%s:t" % d, "kern/moving:t")

        ref = reg.host + "/kern/moving:t"
        push("one")
        self.assertEqual(self.image_box(ref, ["/bin/cat", "/v"]).out, "one\n")
        push("two")
        self.assertEqual(self.image_box(ref, ["/bin/cat", "/v"]).out, "one\n")  # missing: cached
        run = self.image_box(ref, ["/bin/cat", "/v"], flags=["--pull", "always"])
        self.assertEqual(run.out, "two\n", run.describe())


class AuthTest(RegistryTestCase):

    def test_basic_auth_with_login(self):
        self.require("htpasswd", shutil.which("htpasswd"), "htpasswd is not installed (apt-get install apache2-utils)")
        reg = self.start_registry(user="kern", password="s3cret")
        reg.push(self.busybox_layout(), "private/bb:1")
        ref = reg.host + "/private/bb:1"
        run = self.kern("pull", ref)
        self.assertExit(run, 1)
        self.assertIn("kern login", run.err)
        bad = self.kern("login", "-u", "kern", "--password-stdin", reg.host, stdin=self.stdin_text("wrong\n"))
        self.assertExit(bad, 1)
        good = self.kern("login", "-u", "kern", "--password-stdin", reg.host, stdin=self.stdin_text("s3cret\n"))
        self.assertExit(good, 0)
        auth = os.path.join(self.s.config, "kern", "auth.json")
        self.assertEqual(os.stat(auth).st_mode & 0o777, 0o600)
        self.assertNotIn("s3cret", open(auth).read())
        self.assertExit(self.kern("pull", ref), 0)
        self.assertExit(self.kern("login", "--logout", reg.host), 0)


class Vanishing(http.server.BaseHTTPRequestHandler):
    """A registry that serves a layout's manifest, then dies halfway through every blob."""
    layout = None

    def log_message(self, *a):
        pass

    def do_GET(self):
        path = self.path
        if path == "/v2/":
            return self._send(200, b"{}", "application/json")
        parts = path.split("/")
        if "manifests" in parts:
            index = json.load(open(os.path.join(self.layout, "index.json")))
            desc = index["manifests"][0]
            body = open(os.path.join(self.layout, "blobs", "sha256", desc["digest"][7:]), "rb").read()
            return self._send(200, body, desc["mediaType"])
        if "blobs" in parts:
            body = open(os.path.join(self.layout, "blobs", "sha256", parts[-1][7:]), "rb").read()
            if len(body) < 4096:
                return self._send(200, body, "application/octet-stream")
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self._send(404, b"{}", "application/json")

    def _send(self, code, body, ctype):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class VanishTest(RegistryTestCase):

    def test_registry_gone_mid_pull_leaves_store_clean(self):
        d = os.path.join(self.work, "vanish")
        lay = build_images.Layout(d)
        lay.tag(lay.image([build_images.busybox_layer()]), "latest")
        lay.save()
        handler = type("H", (Vanishing,), {"layout": d})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        t = threading.Thread(target=server.serve_forever, daemon=True)
        t.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        ref = "127.0.0.1:%d/kern/vanish:1" % server.server_address[1]
        run = self.kern("pull", ref, timeout=120)
        self.assertVerbError(run)
        for sub in ("refs", "images", "trees", "staging"):
            self.assertEqual(os.listdir(os.path.join(self.store, sub)), [], sub)
        self.assertEqual(os.listdir(os.path.join(self.store, "blobs", "sha256")), [])
        box = self.image_box(ref, ["/bin/true"], flags=["--pull", "never"])
        self.assertExit(box, 125)


class TokenRegistry(http.server.BaseHTTPRequestHandler):
    """A registry that needs a bearer token from its own token service (the WWW-Authenticate
    challenge flow), answers the first manifest request with a transient 503, and redirects
    blob downloads to a storage path, as registries backed by object storage do."""
    layout = None
    seen = None  # shared dict: scopes asked for, 503s sent, storage hits

    def log_message(self, *a):
        pass

    def do_GET(self):
        host = "127.0.0.1:%d" % self.server.server_address[1]
        url = urllib.parse.urlparse(self.path)
        if url.path == "/token":
            q = urllib.parse.parse_qs(url.query)
            self.seen.setdefault("scopes", []).append(q.get("scope", [""])[0])
            return self._send(200, json.dumps({"token": "T0K3N"}).encode(), "application/json")
        if url.path.startswith("/storage/"):
            self.seen["storage"] = self.seen.get("storage", 0) + 1
            if self.headers.get("Authorization"):
                self.seen["leaked"] = self.headers.get("Authorization")
            body = open(os.path.join(self.layout, "blobs", "sha256", url.path.rsplit("/", 1)[-1]), "rb").read()
            return self._send(200, body, "application/octet-stream")
        if self.headers.get("Authorization") != "Bearer T0K3N":
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Bearer realm="http://%s/token",service="stub"' % host)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        parts = url.path.split("/")
        if "manifests" in parts:
            if not self.seen.get("503"):
                self.seen["503"] = 1
                return self._send(503, b"{}", "application/json")
            index = json.load(open(os.path.join(self.layout, "index.json")))
            desc = index["manifests"][0]
            body = open(os.path.join(self.layout, "blobs", "sha256", desc["digest"][7:]), "rb").read()
            return self._send(200, body, desc["mediaType"])
        if "blobs" in parts:
            self.send_response(307)
            self.send_header("Location", "http://127.0.0.1:%d/storage/%s" % (self.seen["storage_port"], parts[-1][7:]))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if url.path == "/v2/":
            return self._send(200, b"{}", "application/json")
        self._send(404, b"{}", "application/json")

    def _send(self, code, body, ctype):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class TokenFlowTest(ImageTestCase):

    def test_bearer_token_retry_and_redirect(self):
        d = os.path.join(self.work, "tok")
        lay = build_images.Layout(d)
        lay.tag(lay.image([build_images.busybox_layer()]), "latest")
        lay.save()
        seen = {}
        handler = type("H", (TokenRegistry,), {"layout": d, "seen": seen})
        # Blob storage is another server (another port): the registry token must not follow
        # the redirect there.
        servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
        for srv in servers:
            threading.Thread(target=srv.serve_forever, daemon=True).start()
            self.addCleanup(srv.server_close)
            self.addCleanup(srv.shutdown)
        server = servers[0]
        seen["storage_port"] = servers[1].server_address[1]
        ref = "127.0.0.1:%d/kern/tok:1" % server.server_address[1]
        run = self.kern("pull", ref, timeout=120)
        self.assertExit(run, 0)
        self.assertIn("repository:kern/tok:pull", seen.get("scopes", []))
        self.assertEqual(seen.get("503"), 1)
        self.assertGreaterEqual(seen.get("storage", 0), 2)  # config and layer came from storage
        self.assertNotIn("leaked", seen, "the registry token was sent to blob storage")
        self.assertExit(self.image_box(ref, ["/bin/true"], flags=["--pull", "never"]), 0)


if __name__ == "__main__":
    kerntest.main()
