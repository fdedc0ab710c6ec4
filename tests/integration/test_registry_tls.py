"""Registries over TLS with a private CA, mirrors and logout (kern(1) pull, login, logout;
issue 12): a docker-registry started here with a certificate signed by a CA made here with the
openssl command; a pull is refused without the CA (a worded certificate error with the ways out,
nothing left in the store) and succeeds with the CA in the user's containers certs.d, with
--cert-dir, with SSL_CERT_FILE, and with --tls-verify=false; a client certificate from the cert
dir; login over TLS and logout; a mirror from registries.conf serving the pull while the
registry itself is down."""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from test_registry import RegistryTestCase, free_port  # noqa: E402


def openssl(*args, cwd):
    subprocess.run([shutil.which("openssl")] + list(args), cwd=cwd, check=True, capture_output=True, timeout=60)


class Pki:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by it."""

    def __init__(self, d):
        os.makedirs(d, exist_ok=True)
        self.dir = d
        self.ca = os.path.join(d, "ca.crt")
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
                "-subj", "/CN=kern test CA", cwd=d)
        with open(os.path.join(d, "san.ext"), "w") as f:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        for name, ext in (("server", ["-extfile", "san.ext"]), ("client", [])):
            openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                    "-subj", "/CN=kern test " + name, cwd=d)
            openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                    "-out", name + ".crt", "-days", "2", *ext, cwd=d)
        self.server = (os.path.join(d, "server.crt"), os.path.join(d, "server.key"))

    def cert_dir(self, d, client=False):
        """A containers-style certificate directory: ca.crt, and client.cert/client.key."""
        os.makedirs(d, exist_ok=True)
        shutil.copy(self.ca, os.path.join(d, "ca.crt"))
        if client:
            shutil.copy(os.path.join(self.dir, "client.crt"), os.path.join(d, "client.cert"))
            shutil.copy(os.path.join(self.dir, "client.key"), os.path.join(d, "client.key"))
        return d


class TlsTestCase(RegistryTestCase):

    def setUp(self):
        super().setUp()
        self.require("openssl", shutil.which("openssl"), "openssl is not installed (apt-get install openssl)")
        # A config home of this test's own: certs.d, registries.conf and auth.json live there.
        self.home = os.path.join(self.work, "home")
        self.config_home = os.path.join(self.home, ".config")
        os.makedirs(self.config_home, exist_ok=True)
        self.pki = Pki(os.path.join(self.work, "pki"))

    def base_env(self):
        env = super().base_env()
        env["HOME"] = self.home
        env["XDG_CONFIG_HOME"] = self.config_home
        return env

    def tls_registry(self, client_ca=None):
        push_dir = self.pki.cert_dir(os.path.join(self.work, "push-certs"), client=True) if client_ca else None
        reg = self.start_registry(tls=self.pki.server, client_ca=client_ca, cert_dir=push_dir)
        reg.push(self.busybox_layout(), "kern/tls:1")
        return reg, reg.host + "/kern/tls:1"

    def assertStoreEmpty(self):
        for sub in ("refs", "images", "trees"):
            d = os.path.join(self.store, sub)
            self.assertEqual(os.listdir(d) if os.path.isdir(d) else [], [], sub)
        blobs = os.path.join(self.store, "blobs", "sha256")
        self.assertEqual(os.listdir(blobs) if os.path.isdir(blobs) else [], [])

    def write_registries_conf(self, text):
        """The user's registries.conf (under this test's XDG_CONFIG_HOME)."""
        d = os.path.join(self.config_home, "containers")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "registries.conf"), "w") as f:
            f.write(text)

    def assertRuns(self, ref):
        box = self.image_box(ref, ["/bin/sh", "-c", "echo tls-ok"], flags=["--pull", "never"])
        self.assertExit(box, 0)
        self.assertEqual(box.out, "tls-ok\n")


class TlsPullTest(TlsTestCase):

    def test_unknown_ca_is_refused_in_words_and_leaves_nothing(self):
        reg, ref = self.tls_registry()
        run = self.kern("pull", ref)
        self.assertVerbError(run, "certificate", "could not be verified", "unable to get local issuer certificate")
        hint = [l for l in run.err.splitlines() if l.startswith("kern: hint: ")]
        self.assertEqual(len(hint), 1, run.describe())
        for way in ("--tls-verify=false", "certs.d/" + reg.host, "--cert-dir"):
            self.assertIn(way, hint[0])
        self.assertStoreEmpty()
        self.assertExit(self.image_box(ref, ["/bin/true"], flags=["--pull", "never"]), 125)

    def test_ca_in_the_users_containers_certs_d(self):
        reg, ref = self.tls_registry()
        self.pki.cert_dir(os.path.join(self.config_home, "containers", "certs.d", reg.host))
        run = self.kern("pull", ref)
        self.assertExit(run, 0)
        self.assertRuns(ref)

    def test_ca_in_home_config_when_xdg_config_home_is_unset(self):
        reg, ref = self.tls_registry()
        self.pki.cert_dir(os.path.join(self.home, ".config", "containers", "certs.d", reg.host))
        env = self.base_env()
        del env["XDG_CONFIG_HOME"]
        p = subprocess.run([self.s.kern, "pull", ref], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_cert_dir_flag(self):
        reg, ref = self.tls_registry()
        d = self.pki.cert_dir(os.path.join(self.work, "mine"))
        self.assertExit(self.kern("pull", "--cert-dir", d, ref), 0)
        self.assertRuns(ref)
        missing = self.kern("pull", "--cert-dir", os.path.join(self.work, "absent"), ref)
        self.assertExit(missing, 2)
        self.assertIn("--cert-dir", missing.err)

    def test_ssl_cert_file(self):
        reg, ref = self.tls_registry()
        self.assertExit(self.kern("pull", ref, env={"SSL_CERT_FILE": self.pki.ca}), 0)
        self.assertRuns(ref)

    def test_ssl_cert_dir(self):
        reg, ref = self.tls_registry()
        d = os.path.join(self.work, "hashed")
        os.makedirs(d)
        h = subprocess.run([shutil.which("openssl"), "x509", "-hash", "-noout", "-in", self.pki.ca], check=True,
                           capture_output=True, text=True).stdout.strip()
        shutil.copy(self.pki.ca, os.path.join(d, h + ".0"))
        self.assertExit(self.kern("pull", ref, env={"SSL_CERT_DIR": d}), 0)
        self.assertRuns(ref)

    def test_tls_verify_false(self):
        reg, ref = self.tls_registry()
        self.assertExit(self.kern("pull", "--tls-verify=false", ref), 0)
        self.assertRuns(ref)
        bad = self.kern("pull", "--tls-verify=maybe", ref)
        self.assertExit(bad, 2)

    def test_insecure_in_registries_conf(self):
        reg, ref = self.tls_registry()
        self.write_registries_conf('[[registry]]\nlocation = "%s"\ninsecure = true\n' % reg.host)
        self.assertExit(self.kern("pull", ref), 0)
        # An explicit flag wins over the file.
        self.assertExit(self.kern("rmi", ref), 0)
        self.assertVerbError(self.kern("pull", "--tls-verify=true", ref), "could not be verified")

    def test_client_certificate_from_the_cert_dir(self):
        reg, ref = self.tls_registry(client_ca=self.pki.ca)
        without = self.pki.cert_dir(os.path.join(self.work, "ca-only"))
        run = self.kern("pull", "--cert-dir", without, ref)
        self.assertVerbError(run, "TLS connection with %s failed" % reg.host, "alert",
                             "a client certificate")
        with_client = self.pki.cert_dir(os.path.join(self.work, "with-client"), client=True)
        self.assertExit(self.kern("pull", "--cert-dir", with_client, ref), 0)
        self.assertRuns(ref)
        os.unlink(os.path.join(with_client, "client.key"))
        run = self.kern("pull", "--cert-dir", with_client, ref)
        self.assertVerbError(run, "client.key")


class TlsLoginTest(TlsTestCase):

    def test_login_over_tls_then_logout(self):
        self.require("htpasswd", shutil.which("htpasswd"), "htpasswd is not installed (apt-get install apache2-utils)")
        push_dir = self.pki.cert_dir(os.path.join(self.work, "push-certs"))
        reg = self.start_registry(user="kern", password="s3cret", tls=self.pki.server, cert_dir=push_dir)
        reg.push(self.busybox_layout(), "private/bb:1")
        ref = reg.host + "/private/bb:1"
        login = ["login", "-u", "kern", "--password-stdin"]
        refused = self.kern(*login, reg.host, stdin=self.stdin_text("s3cret\n"))
        self.assertVerbError(refused, "could not be verified")
        ok = self.kern(*login, "--tls-verify=false", reg.host, stdin=self.stdin_text("s3cret\n"))
        self.assertExit(ok, 0)
        auth = os.path.join(self.config_home, "kern", "auth.json")
        self.assertIn(reg.host, json.load(open(auth))["auths"])
        self.assertExit(self.kern("pull", "--tls-verify=false", ref), 0)
        self.assertExit(self.kern("rmi", ref), 0)
        out = self.kern("logout", reg.host)
        self.assertExit(out, 0)
        self.assertIn(reg.host, out.out)
        self.assertNotIn(reg.host, json.load(open(auth))["auths"])
        again = self.kern("pull", "--tls-verify=false", ref)
        self.assertVerbError(again, "kern login")
        self.assertVerbError(self.kern("logout", reg.host), "not logged in")

    def test_logout_all(self):
        auth = os.path.join(self.config_home, "kern", "auth.json")
        os.makedirs(os.path.dirname(auth))
        fd = os.open(auth, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, json.dumps({"auths": {"a.example:5000": {"auth": "dTpw"}, "quay.io": {"auth": "dTpw"}}}).encode())
        os.close(fd)
        run = self.kern("logout", "--all")
        self.assertExit(run, 0)
        self.assertIn("a.example:5000", run.out)
        self.assertIn("quay.io", run.out)
        self.assertEqual(json.load(open(auth))["auths"], {})
        self.assertExit(self.kern("logout", "--all", "quay.io"), 2)


class InsecureOutsideTest(TlsTestCase):
    """Plain HTTP to a host that is not loopback only for a registry the user marked insecure:
    tests/support/netns_registry.py's listener on 10.254.0.1:8080, in a network namespace of the
    test's own, answers /v2/ with 200 over plain HTTP."""

    def netns_login(self, *flags):
        self.require("unshare", self.s.host.unshare, self.s.host.unshare.detail)
        self.require("ip", shutil.which("ip"), "ip(8) is not installed (apt-get install iproute2)")
        support = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support")
        argv = ["unshare", "-rn", sys.executable, os.path.join(support, "netns_registry.py"), "plain-outside",
                self.s.kern, "login", "-u", "alice", "--password-stdin"] + list(flags) + ["10.254.0.1:8080"]
        stdin = os.path.join(self.work, "stdin")
        with open(stdin, "w") as f:
            f.write("pw\n")
        with open(stdin) as f:
            run = self.host_run(argv, timeout=90, stdin=f, env=self.base_env())
        self.assertExit(run, 0)
        return json.loads(run.out)

    def test_plain_http_elsewhere_only_with_tls_verify_false(self):
        refused = self.netns_login()
        self.assertEqual(refused["rc"], 1, refused)
        self.assertIn("kern: error: ", refused["err"])
        self.assertIn("TLS handshake with 10.254.0.1:8080 failed", refused["err"])
        self.assertIn("serves plain HTTP, --tls-verify=false", refused["err"])
        self.assertEqual([e for e in refused["other"] if "path" in e], [], "a plain-HTTP request was sent")
        allowed = self.netns_login("--tls-verify=false")
        self.assertEqual(allowed["rc"], 0, allowed)
        self.assertIn("Login Succeeded", allowed["out"])
        self.assertIn("/v2/", [e.get("path") for e in allowed["other"]])


class MirrorTest(TlsTestCase):

    def test_mirror_serves_while_the_registry_is_down(self):
        mirror = self.start_registry()
        mirror.push(self.busybox_layout(), "cache/kern/bb:1")
        down = "127.0.0.1:%d" % free_port()  # nothing listens there
        dead_mirror = "127.0.0.1:%d" % free_port()
        self.write_registries_conf('unqualified-search-registries = ["docker.io"]\n'
                  '[[registry]]\nprefix = "%s"\nlocation = "%s"\n'
                  '[[registry.mirror]]\nlocation = "%s"\n'
                  '[[registry.mirror]]\nlocation = "%s/cache"\n'
                  '[aliases]\n"x" = "docker.io/library/x"\n' % (down, down, dead_mirror, mirror.host))
        ref = down + "/kern/bb:1"
        run = self.kern("pull", "--json", ref, env={"CONTAINERS_REGISTRIES_CONF": "/dev/null"}, timeout=120)
        self.assertVerbError(run)  # the control: without the mirrors the registry is down
        run = self.kern("pull", "--json", ref, timeout=120)
        self.assertExit(run, 0)
        j = json.loads(run.out)
        self.assertEqual(j["reference"], ref)
        self.assertEqual(j["source"], mirror.host + "/cache/kern/bb")
        self.assertTrue(j["mirror"])
        self.assertIn("mirror " + dead_mirror + "/kern/bb failed", run.err)
        self.assertIn("served by mirror " + mirror.host + "/cache/kern/bb", run.err)
        self.assertRuns(ref)
        # kern box pulling a missing image goes through the same mirrors.
        self.assertExit(self.kern("rmi", ref), 0)
        box = self.image_box(ref, ["/bin/sh", "-c", "echo via-mirror"], timeout=120)
        self.assertExit(box, 0)
        self.assertEqual(box.out, "via-mirror\n")
        self.assertIn("served by mirror " + mirror.host, box.err)

    def test_blocked_registry_is_refused(self):
        reg = self.start_registry()
        reg.push(self.busybox_layout(), "kern/bb:1")
        self.write_registries_conf('[[registry]]\nlocation = "%s"\nblocked = true\n' % reg.host)
        self.assertVerbError(self.kern("pull", reg.host + "/kern/bb:1"), "blocked", "registries.conf")

    def test_bad_registries_conf_names_the_line(self):
        self.write_registries_conf('[[registry]]\nlocation = "a.example"\ninsecure = "yes"\n')
        run = self.kern("pull", "a.example/x:1")
        self.assertVerbError(run, "registries.conf:3:", "insecure")


if __name__ == "__main__":
    kerntest.main()
