"""Pulling by name, as from Docker Hub (kern(1) pull, kern-box(1) --image; issue 21 item 5): a test
world in a user + network + mount namespace of the test's own, where the names of Docker Hub
resolve through a dnsmasq the test starts (registry-1.docker.io, auth.docker.io, a blob host
production.cloudflare.docker.com) and one name only through /etc/hosts (registry.hosts.test), every
host answers HTTPS with a certificate of a test CA that is the world's only system CA bundle
(/etc/ssl/certs), the registry (Debian's docker-registry behind a front of the test's own) asks
for a Bearer token from the token service named in its WWW-Authenticate challenge, and
redirects every blob GET to the blob host with a signed URL, as Docker Hub does to its CDN. The
images are pushed with skopeo under the SDK's default reference (python:3.12-slim, the reference
of kern-kernel(1)'s example; an index over two platforms, as on Docker Hub) and alpine. Nothing leaves the machine: kern runs inside the world
(setns), where only loopback exists.

A kern that runs a second libc (a static binary that dlopens libcurl, whose threaded resolver
then calls that libc's pthread_create) dies of SIGSEGV on every pull here (rc 139)."""

import hashlib
import hmac
import http.server
import json
import os
import secrets
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
import netns_world  # noqa: E402

REGISTRY, AUTH, CDN, HOSTS_ONLY = ("registry-1.docker.io", "auth.docker.io", "production.cloudflare.docker.com",
                                   "registry.hosts.test")
ADDRESSES = {REGISTRY: "11.0.0.10", CDN: "11.0.0.11", AUTH: "11.0.0.12", HOSTS_ONLY: "11.0.0.13"}
SERVICE = "registry.docker.io"
BACKEND = "127.0.0.1:5000"  # docker-registry, plain HTTP, reachable only inside the world
SDK_IMAGE = "library/python:3.12-slim"
IMAGES = (SDK_IMAGE, "library/alpine:latest", "kern/by-hosts:1")


class World:
    """The servers' shared state: issued tokens, the signing key of blob URLs, the request log."""

    def __init__(self, d):
        self.tokens = {}  # token -> scope it grants
        self.key = secrets.token_bytes(16)
        self.log_path = os.path.join(d, "requests.jsonl")
        self.lock = threading.Lock()

    def log(self, **entry):
        with self.lock, open(self.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def sign(self, path):
        return hmac.new(self.key, path.encode(), hashlib.sha256).hexdigest()


def backend(method, path, headers=()):
    """(status, headers, body) of the docker-registry behind the front."""
    return netns_world.registry_request(BACKEND, method, path, headers)


def make_handler(world, role):
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, code, body=b"", headers=(), head=False):
            self.send_response(code)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def do_HEAD(self):
            self.do_GET(head=True)

        def do_GET(self, head=False):
            world.log(host=role, method=self.command, path=self.path, authorization=self.headers.get("Authorization"))
            if role == AUTH:
                return self.token()
            if role == CDN:
                return self.blob(head)
            return self.registry(head)

        def token(self):
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            if not self.path.startswith("/token") or q.get("service") != [SERVICE]:
                return self.reply(400, b'{"details":"bad service"}')
            tok = secrets.token_hex(16)
            world.tokens[tok] = q.get("scope", [""])[0]
            body = json.dumps({"token": tok, "access_token": tok, "expires_in": 300}).encode()
            self.reply(200, body, [("Content-Type", "application/json")])

        def registry(self, head):
            parts = self.path.split("?")[0].split("/")
            if self.path.split("?")[0] in ("/v2/", "/v2"):
                name, scope = None, None
            elif len(parts) >= 5 and parts[1] == "v2" and parts[-2] in ("manifests", "blobs"):
                name = "/".join(parts[2:-2])
                scope = "repository:%s:pull" % name
            else:
                return self.reply(404)
            auth = self.headers.get("Authorization", "")
            granted = world.tokens.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
            if granted is None or (scope is not None and granted != scope):
                challenge = 'Bearer realm="https://%s/token",service="%s"' % (AUTH, SERVICE)
                if scope:
                    challenge += ',scope="%s"' % scope
                body = b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}'
                return self.reply(401, body, [("WWW-Authenticate", challenge), ("Content-Type", "application/json")],
                                  head)
            if name is None:
                return self.reply(200, b"{}", [("Content-Type", "application/json")], head)
            if parts[-2] == "blobs" and not head:
                # Docker Hub sends blob GETs to its CDN with a signed, expiring URL.
                path = "/registry-v2/%s/blobs/%s/data" % (name, parts[-1])
                return self.reply(307, headers=[("Location", "https://%s%s?verify=%s" % (CDN, path, world.sign(path)))])
            status, hdrs, body = backend(self.command, self.path, [("Accept", self.headers.get("Accept", "*/*"))])
            keep = [(k, hdrs[k]) for k in ("Content-Type", "Docker-Content-Digest") if hdrs.get(k)]
            self.reply(status, body, keep, head)

        def blob(self, head):
            u = urllib.parse.urlsplit(self.path)
            if urllib.parse.parse_qs(u.query).get("verify") != [world.sign(u.path)]:
                return self.reply(403, b"bad signature", head=head)
            name, digest = u.path[len("/registry-v2/"):].rsplit("/blobs/", 1)
            status, hdrs, body = backend("GET", "/v2/%s/blobs/%s" % (name, digest.rsplit("/", 1)[0]))
            self.reply(status, body, [("Content-Type", "application/octet-stream")], head)
    return H


def tls_server(world, role, addr, cert, key):
    return netns_world.serve_https(addr, make_handler(world, role), cert, key)


def world_main(d):
    """Runs as root of a fresh user + network + mount namespace: builds the world, then waits."""
    dns = netns_world.name_world(d, ADDRESSES.values(),
                                 {n: a for n, a in ADDRESSES.items() if n != HOSTS_ONLY},
                                 hosts={HOSTS_ONLY: ADDRESSES[HOSTS_ONLY]})
    # The test CA is the world's whole system trust store.
    ca, sc, sk = netns_world.make_pki(d, list(ADDRESSES))
    netns_world.sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                   os.path.join(d, "other-ca.key"), "-out", os.path.join(d, "other-ca.pem"), "-days", "2",
                   "-subj", "/CN=another CA")
    netns_world.trust_only(d, ca)
    procs = [dns, netns_world.start_docker_registry(d, BACKEND)]
    # The SDK's image is an index over two platforms, as Docker Hub's are; the others one manifest.
    layout = os.path.join(d, "layout")
    lay = build_images.Layout(layout)
    base = build_images.busybox_layer()
    lay.tag(lay.image([base], cmd=["/bin/sh", "-c", "echo from-the-image"]), "single")
    here = build_images.host_arch()
    platforms = []
    for arch in ([here, "arm64"] if here != "arm64" else [here, "amd64"]):
        m = lay.image([base, build_images.Layer().file("etc/arch", arch + "\n").bytes()], arch=arch)
        m["platform"] = {"architecture": arch, "os": "linux"}
        platforms.append(m)
    index = {"schemaVersion": 2, "mediaType": build_images.OCI_INDEX, "manifests": platforms[::-1]}
    lay.tag(dict(mediaType=build_images.OCI_INDEX, **lay.blob(json.dumps(index).encode())), "index")
    lay.save()
    skopeo_env = dict(os.environ, HOME=d, XDG_RUNTIME_DIR=d)
    for name in IMAGES:
        tag = "index" if name == SDK_IMAGE else "single"
        netns_world.sh("skopeo", "copy", "--all", "--dest-tls-verify=false", "oci:%s:%s" % (layout, tag),
                       "docker://%s/%s" % (BACKEND, name), env=skopeo_env)

    world = World(d)
    for name, addr in ADDRESSES.items():
        tls_server(world, AUTH if name == AUTH else CDN if name == CDN else REGISTRY, addr, sc, sk)
    os.chmod(d, 0o755)
    with open(os.path.join(d, "ready"), "w") as f:
        f.write("%d\n" % os.getpid())
    sys.stdin.read()  # until the test closes our stdin (or kills us)
    for p in procs:
        p.kill()
        p.wait()  # reaped here, not left a zombie of the host's init


class ByNameWorld(netns_world.WorldTestCase):
    test_file = __file__
    world_name = "registry-by-name-world"
    world_tools = ("unshare", "ip", "dnsmasq", "openssl", "docker-registry", "skopeo")

    def setUp(self):
        super().setUp()
        self.require("busybox", os.access(build_images.BUSYBOX, os.X_OK),
                     build_images.BUSYBOX + " is missing (apt-get install busybox-static)")
        self.cache = os.path.join(self.s.tmp, "cache-" + self.id().rsplit(".", 1)[-1])
        os.makedirs(self.cache, exist_ok=True)
        self.mark = os.path.getsize(self.log_path()) if os.path.exists(self.log_path()) else 0

    def base_env(self):
        env = super().base_env()
        env["XDG_CACHE_HOME"] = self.cache
        return env

    def log_path(self):
        return os.path.join(self.dir, "requests.jsonl")

    def requests(self):
        """What the world's servers saw since this test began."""
        if not os.path.exists(self.log_path()):
            return []
        with open(self.log_path()) as f:
            f.seek(self.mark)
            return [json.loads(line) for line in f if line.strip()]

    def world_kern(self, *args, timeout=120):
        return self.host_run(self.in_world([self.s.kern] + list(args)), timeout=timeout)

    def assertNotCrashed(self, run):
        self.assertNotIn(run.rc, (-11, 139), "kern died of SIGSEGV\n" + run.describe())

    def assertPulledLikeDockerHub(self, repo):
        seen = self.requests()
        scopes = [urllib.parse.parse_qs(urllib.parse.urlsplit(r["path"]).query).get("scope") for r in seen
                  if r["host"] == AUTH]
        self.assertIn(["repository:%s:pull" % repo], scopes, "no token asked for %s: %s" % (repo, seen))
        manifests = [r for r in seen if r["host"] == REGISTRY and "/manifests/" in r["path"] and r["authorization"]]
        self.assertTrue(manifests and all(r["authorization"].startswith("Bearer ") for r in manifests), seen)
        blobs = [r for r in seen if r["host"] == CDN]
        self.assertGreaterEqual(len(blobs), 2, "the layer and the config come from the blob host: %s" % seen)
        self.assertEqual([r for r in blobs if r["authorization"]], [],
                         "the registry's token went to the blob host of another name")

    def test_pull_the_sdk_default_image_by_its_docker_hub_name(self):
        run = self.world_kern("pull", "python:3.12-slim")
        self.assertNotCrashed(run)
        self.assertExit(run, 0)
        self.assertEqual(run.out.split()[0], "docker.io/library/python:3.12-slim", run.describe())
        self.assertPulledLikeDockerHub("library/python")
        box = self.host_run(self.in_world(self._argv_box(["/bin/cat", "/etc/arch"],
                                                         ["--allow-uncapped", "--image", "python:3.12-slim",
                                                          "--pull", "never"], self.s.new_name(), False)))
        self.assertExit(box, 0)
        self.assertEqual(box.out, build_images.host_arch() + "\n", "the index's entry for this host")

    def test_box_with_a_missing_image_pulls_it_and_runs(self):
        box = self.host_run(self.in_world(self._argv_box(None, ["--allow-uncapped", "--image", "alpine"],
                                                         self.s.new_name(), False)), timeout=120)
        self.assertNotCrashed(box)
        self.assertExit(box, 0)
        self.assertEqual(box.out, "from-the-image\n")
        self.assertPulledLikeDockerHub("library/alpine")

    def test_a_name_from_etc_hosts(self):
        # Resolved by the hosts file (NSS files), not by the DNS server; the registry there asks
        # for the same token service by its DNS name.
        run = self.world_kern("pull", HOSTS_ONLY + "/kern/by-hosts:1")
        self.assertNotCrashed(run)
        self.assertExit(run, 0)
        self.assertTrue([r for r in self.requests() if r["host"] == REGISTRY and "/manifests/1" in r["path"]])

    def test_an_unknown_name_is_an_error_in_words(self):
        run = self.world_kern("pull", "foo.invalid/x")
        self.assertNotCrashed(run)
        self.assertExit(run, 1)
        self.assertIn("kern: error: ", run.err)
        self.assertIn("foo.invalid", run.err)
        self.assertIn("resolve", run.err)

    def test_a_certificate_of_another_ca_is_refused(self):
        # The control for the TLS above: a trust store without the test CA refuses the registry.
        run = self.host_run(self.in_world(["env", "SSL_CERT_FILE=" + os.path.join(self.dir, "other-ca.pem"),
                                           self.s.kern, "pull", "alpine"]), timeout=120)
        self.assertNotCrashed(run)
        self.assertExit(run, 1)
        self.assertIn("could not be verified", run.err)
        self.assertEqual([r for r in self.requests() if r["host"] == CDN], [])


if __name__ == "__main__":
    netns_world.main(world_main, kerntest.main)
