"""kern push (kern(1) push; issue 26): a test world in a user + network + mount namespace of the
test's own (tests/support/netns_world.py) with a registry by DNS name, registry.push.test, and its
token service auth.push.test, both HTTPS with a certificate of a test CA that is the world's only
system CA bundle. The registry is Debian's docker-registry behind a front of the test's own that
asks for a Bearer token per repository and action: the token service gives pull to anyone and
push only to the account pusher, and a mount needs pull on the repository it comes from. The
front logs every request (method, path, Content-Range), so the tests see what was sent: HEADs,
mounts, PATCHes, the manifest's PUT. The image is the busybox test image, loaded with kern load."""

import base64
import http.server
import json
import os
import re
import secrets
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
import netns_world  # noqa: E402

REGISTRY, AUTH = "registry.push.test", "auth.push.test"
ADDRESSES = {REGISTRY: "11.0.0.20", AUTH: "11.0.0.21"}
SERVICE = "push.test"
BACKEND = "127.0.0.1:5000"
USER, PASSWORD = "pusher", "s3cret-" + "x" * 8
CMD = ["/bin/sh", "-c", "echo pushed-image"]


class World:
    def __init__(self, d):
        self.tokens = {}  # token -> {repository: set of actions}
        self.log_path = os.path.join(d, "requests.jsonl")
        self.lock = threading.Lock()

    def log(self, **entry):
        with self.lock, open(self.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")


def parse_scope(text):
    """"repository:NAME:pull,push" -> (NAME, {actions})."""
    parts = text.split(":")
    if len(parts) < 3 or parts[0] != "repository":
        return None, set()
    return ":".join(parts[1:-1]), set(parts[-1].split(","))


def make_handler(world, role):
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, code, body=b"", headers=()):
            self.send_response(code)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def handle_any(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            world.log(host=role, method=self.command, path=self.path, authorization=self.headers.get("Authorization"),
                      content_range=self.headers.get("Content-Range"), length=len(body))
            if role == AUTH:
                return self.token()
            return self.registry(body)

        do_GET = do_HEAD = do_POST = do_PATCH = do_PUT = handle_any

        def token(self):
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            if q.get("service") != [SERVICE]:
                return self.reply(400, b'{"details":"bad service"}')
            auth = self.headers.get("Authorization", "")
            pusher = False
            if auth.startswith("Basic "):
                if base64.b64decode(auth[6:]).decode() != "%s:%s" % (USER, PASSWORD):
                    return self.reply(401, b'{"details":"bad credentials"}')
                pusher = True
            granted = {}
            for scope in q.get("scope", []):
                name, actions = parse_scope(scope)
                if name is not None:
                    granted.setdefault(name, set()).update(actions if pusher else actions & {"pull"})
            tok = secrets.token_hex(16)
            world.tokens[tok] = granted
            self.reply(200, json.dumps({"token": tok, "expires_in": 300}).encode(),
                       [("Content-Type", "application/json")])

        def needed(self):
            """[(repository, action)] this request needs; None for the API root."""
            u = urllib.parse.urlsplit(self.path)
            m = re.match(r"^/v2/(.+?)/(manifests|blobs)/", u.path)
            if m is None:
                return None
            name = m.group(1)
            if self.command in ("GET", "HEAD"):
                return [(name, "pull")]
            need = [(name, "pull"), (name, "push")]
            q = urllib.parse.parse_qs(u.query)
            if self.command == "POST" and q.get("mount") and q.get("from"):
                need.append((q["from"][0], "pull"))
            return need

        def registry(self, body):
            if urllib.parse.urlsplit(self.path).path not in ("/v2/", "/v2") and \
                    not self.path.startswith("/v2/"):
                return self.reply(404)
            need = self.needed()
            auth = self.headers.get("Authorization", "")
            granted = world.tokens.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
            ok = granted is not None and all(a in granted.get(n, set()) for n, a in (need or []))
            if not ok:
                challenge = 'Bearer realm="https://%s/token",service="%s"' % (AUTH, SERVICE)
                if need:
                    first = need[0][0]
                    acts = sorted({a for n, a in need if n == first})
                    challenge += ',scope="repository:%s:%s"' % (first, ",".join(acts))
                    if granted is not None:
                        challenge += ',error="insufficient_scope"'
                err = b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}'
                return self.reply(401, err, [("WWW-Authenticate", challenge), ("Content-Type", "application/json")])
            if need is None:
                return self.reply(200, b"{}", [("Content-Type", "application/json")])
            fwd = [(k, self.headers[k]) for k in ("Accept", "Content-Type", "Content-Range") if self.headers.get(k)]
            status, hdrs, out = netns_world.registry_request(BACKEND, self.command, self.path, fwd,
                                                             body if self.command in ("POST", "PATCH", "PUT") else None)
            keep = []
            for k in ("Content-Type", "Docker-Content-Digest", "Range", "Docker-Upload-UUID", "Location"):
                v = hdrs.get(k)
                if not v:
                    continue
                if k == "Location" and v.startswith("http://" + BACKEND):
                    v = v[len("http://" + BACKEND):]  # relative, as registries may send it
                keep.append((k, v))
            self.reply(status, out, keep)
    return H


def world_main(d):
    dns = netns_world.name_world(d, ADDRESSES.values(), ADDRESSES)
    ca, sc, sk = netns_world.make_pki(d, list(ADDRESSES))
    netns_world.trust_only(d, ca)
    cadir = os.path.join(d, "cadir")
    os.mkdir(cadir)
    with open(ca) as src, open(os.path.join(cadir, "ca.crt"), "w") as dst:
        dst.write(src.read())
    procs = [dns, netns_world.start_docker_registry(d, BACKEND)]
    world = World(d)
    for name, addr in ADDRESSES.items():
        netns_world.serve_https(addr, make_handler(world, name), sc, sk)
    os.chmod(d, 0o755)
    with open(os.path.join(d, "ready"), "w") as f:
        f.write("%d\n" % os.getpid())
    sys.stdin.read()
    for p in procs:
        p.kill()
        p.wait()


class PushWorld(netns_world.WorldTestCase):
    test_file = __file__
    world_name = "registry-push-world"
    world_tools = ("unshare", "ip", "dnsmasq", "openssl", "docker-registry", "skopeo")

    def setUp(self):
        super().setUp()
        self.require("busybox", os.access(build_images.BUSYBOX, os.X_OK),
                     build_images.BUSYBOX + " is missing (apt-get install busybox-static)")
        name = self.id().rsplit(".", 1)[-1]
        self.cache = os.path.join(self.s.tmp, "cache-" + name)
        self.config = os.path.join(self.s.tmp, "config-" + name)
        for d in (self.cache, self.config):
            os.makedirs(d, exist_ok=True)
        self.mark()

    def base_env(self):
        env = super().base_env()
        env["XDG_CACHE_HOME"] = self.cache
        env["XDG_CONFIG_HOME"] = self.config
        return env

    def log_path(self):
        return os.path.join(self.dir, "requests.jsonl")

    def mark(self):
        self.since = os.path.getsize(self.log_path()) if os.path.exists(self.log_path()) else 0

    def requests(self):
        if not os.path.exists(self.log_path()):
            return []
        with open(self.log_path()) as f:
            f.seek(self.since)
            return [json.loads(line) for line in f if line.strip()]

    def world_kern(self, *args, env=None, timeout=120):
        return self.host_run(self.in_world([self.s.kern] + list(args)), timeout=timeout, env=env)

    def load_busybox(self):
        path = os.path.join(self.s.work, "push-busybox-%s.tar" % secrets.token_hex(4))
        build_images.write_docker_archive(path, [build_images.busybox_layer()], ["busybox:latest"], cmd=CMD)
        self.assertExit(self.kern("load", "-i", path), 0)
        os.unlink(path)

    def login(self):
        pw = os.path.join(self.s.work, "pw-" + secrets.token_hex(4))
        with open(pw, "w") as f:
            f.write(PASSWORD + "\n")
        with open(pw) as f:
            run = self.host_run(self.in_world([self.s.kern, "login", "-u", USER, "--password-stdin", REGISTRY]),
                                stdin=f, timeout=60)
        os.unlink(pw)
        self.assertExit(run, 0)

    def push(self, *args, env=None):
        self.mark()
        run = self.world_kern("push", *args, env=env)
        self.assertExit(run, 0)
        m = re.match(r"^(\S+): digest: (sha256:[0-9a-f]{64}) size: (\d+)\n$", run.out)
        self.assertTrue(m, "docker's last line\n" + run.describe())
        return m.group(2), run

    def pull_digest(self, ref):
        """The manifest digest of `ref` pulled into a store of its own."""
        fresh = os.path.join(self.s.tmp, "fresh-" + secrets.token_hex(4))
        os.mkdir(fresh)
        run = self.world_kern("pull", "-q", ref, env={"XDG_CACHE_HOME": fresh})
        self.assertExit(run, 0)
        return run.out.split()[1], fresh

    def blob_uploads(self, seen):
        return [r for r in seen if r["host"] == REGISTRY and r["method"] in ("PATCH", "PUT") and "/blobs/" in r["path"]]

    def test_push_then_pull_back_the_same_image(self):
        self.load_busybox()
        self.login()
        ref = "%s/kern/busybox:1" % REGISTRY
        digest, run = self.push("busybox:latest", ref)
        self.assertTrue(run.out.startswith("1: digest: "), run.describe())
        seen = self.requests()
        scopes = [urllib.parse.parse_qs(urllib.parse.urlsplit(r["path"]).query).get("scope") for r in seen
                  if r["host"] == AUTH]
        self.assertIn(["repository:kern/busybox:pull,push"], scopes, seen)
        self.assertTrue(self.blob_uploads(seen), "the layer and the config were uploaded: %s" % seen)
        puts = [r for r in seen if r["method"] == "PUT" and r["path"] == "/v2/kern/busybox/manifests/1"]
        self.assertEqual(len(puts), 1, seen)
        # Pulled into another store, the registry serves the manifest kern printed.
        pulled, fresh = self.pull_digest(ref)
        self.assertEqual(pulled, digest)
        # Pushed again from that store, the exact stored manifest goes: the same digest.
        again = self.world_kern("push", ref, "%s/kern/busybox-copy:1" % REGISTRY, env={"XDG_CACHE_HOME": fresh})
        self.assertExit(again, 0)
        self.assertIn("digest: " + digest, again.out)
        # Nothing of the push stays in the store's staging.
        staging = os.path.join(self.cache, "kern", "staging")
        left = [n for n in os.listdir(staging) if not n.startswith("build-")] if os.path.isdir(staging) else []
        self.assertEqual(left, [])
        # Another client reads the image's config from the registry.
        inspect = self.host_run(self.in_world(["skopeo", "inspect", "--cert-dir", os.path.join(self.dir, "cadir"),
                                               "--config", "docker://" + ref]),
                                env={"HOME": self.config}, timeout=60)
        self.assertExit(inspect, 0)
        cfg = json.loads(inspect.out)
        self.assertEqual(cfg["config"]["Cmd"], CMD)
        self.assertEqual(cfg["architecture"], build_images.host_arch())

    def test_a_second_repository_gets_the_blobs_by_mount(self):
        self.load_busybox()
        self.login()
        first = "%s/kern/first:1" % REGISTRY
        self.assertExit(self.kern("tag", "busybox:latest", first), 0)
        self.push(first)
        digest, run = self.push(first, "%s/kern/second:1" % REGISTRY)
        seen = self.requests()
        # (A request the front answered 401 is sent again with a token: paths, not requests.)
        mounts = [r for r in seen if r["method"] == "POST" and "mount=" in r["path"]]
        self.assertEqual(len({r["path"] for r in mounts}), 2, "the layer and the config: %s" % seen)
        self.assertTrue(all("from=kern/first" in urllib.parse.unquote(r["path"]) for r in mounts), mounts)
        self.assertEqual(self.blob_uploads(seen), [], "no blob was uploaded again")
        self.assertIn("mounted", run.err)
        scopes = [s for r in seen if r["host"] == AUTH
                  for s in urllib.parse.parse_qs(urllib.parse.urlsplit(r["path"]).query).get("scope", [])]
        self.assertIn("repository:kern/first:pull", scopes)
        self.assertEqual(self.pull_digest("%s/kern/second:1" % REGISTRY)[0], digest)

    def test_small_chunks_go_in_several_patches(self):
        self.load_busybox()
        self.login()
        chunk = 64 * 1024
        ref = "%s/kern/chunked:1" % REGISTRY
        digest, _ = self.push("busybox:latest", ref, env={"KERN_PUSH_CHUNK": str(chunk)})
        patches = [r for r in self.requests() if r["method"] == "PATCH"]
        layer = len(build_images.busybox_layer())
        self.assertGreater(layer, 2 * chunk)
        self.assertGreaterEqual(len(patches), (layer + chunk - 1) // chunk, patches[:3])
        self.assertTrue(all(r["length"] <= chunk for r in patches))
        # One blob's ranges follow each other from 0.
        ends = {}
        for r in patches:
            start, end = (int(x) for x in r["content_range"].split("-"))
            blob = r["path"].split("?")[0]
            self.assertEqual(start, ends.get(blob, -1) + 1, r)
            self.assertEqual(end - start + 1, r["length"], r)
            ends[blob] = end
        self.assertEqual(self.pull_digest(ref)[0], digest)

    def test_an_unchanged_image_is_not_uploaded_again(self):
        self.load_busybox()
        self.login()
        ref = "%s/kern/again:1" % REGISTRY
        first, _ = self.push("busybox:latest", ref)
        second, run = self.push("busybox:latest", ref)
        self.assertEqual(first, second)
        seen = self.requests()
        self.assertEqual([r for r in seen if r["method"] in ("POST", "PATCH")], [], seen)
        self.assertEqual(self.blob_uploads(seen), [])
        self.assertEqual(len({r["path"] for r in seen if r["method"] == "HEAD" and "/blobs/" in r["path"]}), 2, seen)
        self.assertIn("Layer already exists", run.err)

    def test_without_credentials_the_push_fails_in_words(self):
        self.load_busybox()
        self.mark()
        run = self.world_kern("push", "busybox:latest", "%s/kern/denied:1" % REGISTRY)
        self.assertExit(run, 1)
        self.assertIn("kern: error: ", run.err)
        self.assertIn("https://%s/v2/kern/denied/" % REGISTRY, run.err)
        self.assertIn("HTTP 401", run.err)
        self.assertIn("kern login %s" % REGISTRY, run.err)
        self.assertEqual(run.out, "")
        self.assertEqual([r for r in self.requests() if r["method"] in ("PATCH", "PUT")], [])

    def test_an_image_not_in_the_store(self):
        run = self.world_kern("push", "%s/kern/nothing:1" % REGISTRY)
        self.assertExit(run, 1)
        self.assertIn("kern: error: ", run.err)
        self.assertIn("kern images", run.err)
        self.assertIn("kern pull", run.err)
        self.assertEqual(self.requests(), [])

    def test_quiet_prints_the_digest_only(self):
        self.load_busybox()
        self.login()
        run = self.world_kern("push", "-q", "busybox:latest", "%s/kern/quiet:1" % REGISTRY)
        self.assertExit(run, 0)
        self.assertRegex(run.out, r"^sha256:[0-9a-f]{64}\n$")
        self.assertEqual(run.err, "")


if __name__ == "__main__":
    netns_world.main(world_main, kerntest.main)
