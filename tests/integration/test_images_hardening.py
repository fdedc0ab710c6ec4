"""Image hardening (issue 8): every applet of the built-in busybox image runs; credentials and
plain HTTP go to loopback only, judged per URL; gc keeps everything while a store record cannot
be read; special files in an image source are refused instead of hanging kern."""

import base64
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
import test_images  # noqa: E402

SUPPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support")


class HardeningCase(test_images.ImageTestCase):
    """A store of its own per test (XDG_CACHE_HOME), as in test_images."""


# Inside the box: every applet `busybox --list-full` names must be at its place, resolve to
# /bin/busybox, and run when exec'd by its path with --help (126/127: the link does not lead to a
# runnable busybox); those installed in a PATH directory must also be found along PATH, looked up
# by hand so that the shell's own applet shortcuts cannot hide a missing file.
APPLET_CHECK = r'''
n=0; bad=0
for p in $(/bin/busybox --list-full); do
  n=$((n+1)); p=/${p#/}; a=${p##*/}
  if [ ! -e "$p" ]; then echo "BAD $a: $p is missing or dangling"; bad=$((bad+1)); continue; fi
  real=$(/bin/busybox readlink -f "$p")
  if [ "$real" != /bin/busybox ]; then echo "BAD $a: $p -> $real"; bad=$((bad+1)); continue; fi
  "$p" --help </dev/null >/dev/null 2>&1; rc=$?
  if [ $rc -eq 126 ] || [ $rc -eq 127 ]; then echo "BAD $a: $p exits $rc"; bad=$((bad+1)); continue; fi
  case ":$PATH:" in *":${p%/*}:"*) ;; *) continue ;; esac
  found=""
  for d in $(echo "$PATH" | /bin/busybox tr : ' '); do
    if [ -e "$d/$a" ]; then found="$d/$a"; break; fi
  done
  if [ -z "$found" ]; then echo "BAD $a: not found along PATH"; bad=$((bad+1)); fi
done
echo "applets=$n bad=$bad"
'''


class BuiltinBusyboxTest(HardeningCase):

    def test_every_applet_of_the_builtin_image_runs(self):
        # The image the README's demo uses, made the way setup.sh makes it.
        run = self.host_run(["/bin/sh", os.path.join(SUPPORT, "make_busybox_image.sh"), self.s.kern,
                             os.path.join(self.work, "bb.tar")], timeout=120)
        self.assertExit(run, 0)
        listed = subprocess.run([build_images.BUSYBOX, "--list-full"], capture_output=True, text=True,
                                check=True).stdout.split()
        self.assertGreater(len(listed), 100)
        box = self.image_box("busybox", ["/bin/sh", "-c", APPLET_CHECK], timeout=300)
        self.assertExit(box, 0)
        self.assertEqual([l for l in box.out.splitlines() if l.startswith("BAD ")], [], box.describe())
        self.assertIn("applets=%d bad=0" % len(listed), box.out, box.describe())
        # The ones a newcomer meets first, exec'd by kern itself through the image's PATH.
        for argv in (["env"], ["id"], ["wc", "-c", "/etc/passwd"], ["head", "-n1", "/etc/passwd"],
                     ["find", "/etc", "-name", "passwd"], ["awk", "BEGIN{print 1}"]):
            r = self.image_box("busybox", argv)
            self.assertExit(r, 0, " ".join(argv))


class RegistryTransportTest(HardeningCase):
    """Plain HTTP only to loopback, judged per URL. The registry is on 127.0.0.1 and the other
    host, 10.254.0.1, is an address in a network namespace the test makes (nothing leaves the
    machine); the loopback modes are the positive controls that show the listener does see
    what kern sends."""

    def netns(self, mode, *args, stdin_text="", env=None):
        self.require("unshare", self.s.host.unshare, self.s.host.unshare.detail)
        self.require("ip", shutil.which("ip"), "ip(8) is not installed (apt-get install iproute2)")
        argv = ["unshare", "-rn", sys.executable, os.path.join(SUPPORT, "netns_registry.py"), mode,
                self.s.kern] + list(args)
        stdin = os.path.join(self.work, "stdin")
        with open(stdin, "w") as f:
            f.write(stdin_text)
        with open(stdin) as f:
            run = self.host_run(argv, timeout=90, stdin=f, env=env)
        self.assertExit(run, 0)
        return json.loads(run.out)

    def assertNothingReached(self, res):
        self.assertEqual(res["other"], [], "kern sent something to %s\n%s" % (res["other_host"], res))

    def assertRefused(self, res, *needles):
        self.assertEqual(res["rc"], 1, res)
        errors = [l for l in res["err"].splitlines() if l.startswith("kern: error: ")]
        self.assertTrue(errors, res)
        for n in needles:
            self.assertIn(n, res["err"], res)

    def login(self, mode):
        return self.netns(mode, "login", "-u", "alice", "--password-stdin", "127.0.0.1:5000",
                          stdin_text="s3cret\n")

    def test_login_refuses_plain_http_realm_elsewhere(self):
        res = self.login("realm-outside")
        self.assertRefused(res, "refusing plain HTTP", "http://10.254.0.1:8080/token", "token realm")
        self.assertNothingReached(res)
        self.assertFalse(os.path.exists(os.path.join(self.s.config, "kern", "auth.json")), res)

    def test_login_control_loopback_realm_gets_the_password(self):
        res = self.login("realm-loopback")
        self.assertEqual(res["rc"], 0, res)
        basic = "Basic " + base64.b64encode(b"alice:s3cret").decode()
        self.assertIn(basic, [r.get("authorization") for r in res["other"]], res)
        os.unlink(os.path.join(self.s.config, "kern", "auth.json"))

    def store_credentials(self):
        d = os.path.join(self.s.config, "kern")
        os.makedirs(d, 0o700, exist_ok=True)
        path = os.path.join(d, "auth.json")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        auth = base64.b64encode(b"alice:s3cret").decode()
        os.write(fd, json.dumps({"auths": {"127.0.0.1:5000": {"auth": auth}}}).encode())
        os.close(fd)
        self.addCleanup(os.unlink, path)
        return path

    def test_pull_with_stored_credentials_refuses_plain_http_realm_elsewhere(self):
        self.store_credentials()
        res = self.netns("realm-outside", "pull", "127.0.0.1:5000/x:1")
        self.assertRefused(res, "refusing plain HTTP", "http://10.254.0.1:8080/token")
        self.assertNothingReached(res)

    def test_redirect_to_plain_http_elsewhere_is_refused(self):
        res = self.netns("redirect-outside", "pull", "127.0.0.1:5000/x:1")
        self.assertRefused(res, "refusing plain HTTP", "redirect", "http://10.254.0.1:8080/v2/")
        self.assertNothingReached(res)
        self.assertTrue(res["registry"], res)

    def test_plain_http_to_loopback_never_goes_through_a_proxy(self):
        # libcurl takes http_proxy from the environment: the request to the loopback registry,
        # password included, would go in clear text to the proxy's host.
        res = self.login_env("proxy-outside", {"http_proxy": "http://10.254.0.1:8080"})
        self.assertEqual(res["rc"], 0, res)
        self.assertNothingReached(res)
        basic = "Basic " + base64.b64encode(b"alice:s3cret").decode()
        self.assertIn(basic, [r.get("authorization") for r in res["registry"]], res)

    def login_env(self, mode, env):
        return self.netns(mode, "login", "-u", "alice", "--password-stdin", "127.0.0.1:5000",
                          stdin_text="s3cret\n", env=env)

    def test_redirect_control_loopback_is_followed(self):
        res = self.netns("redirect-loopback", "pull", "127.0.0.1:5000/x:1")
        paths = [r.get("path") for r in res["other"]]
        self.assertIn("/v2/x/manifests/1", paths, res)


class GcFailsClosedTest(HardeningCase):
    """A store record kern cannot read might name any tree or blob: gc and rmi remove nothing
    while one exists and say which; the listing says which records it left out."""

    def load(self, tag, extra=None):
        layers = [build_images.busybox_layer()]
        if extra:
            layers.append(build_images.Layer().file("extra", extra).bytes())
        path = os.path.join(self.work, tag.replace(":", "_") + ".tar")
        build_images.write_docker_archive(path, layers, [tag])
        self.assertExit(self.kern("load", "-i", path), 0)

    def ref_file(self, ref):
        d = os.path.join(self.store, "refs")
        for name in os.listdir(d):
            with open(os.path.join(d, name)) as f:
                if json.load(f).get("ref") == ref:
                    return os.path.join(d, name)
        self.fail("no record for %s in %s" % (ref, os.listdir(d)))

    def contents(self):
        out = set()
        for sub in ("blobs/sha256", "trees", "images", "refs"):
            out |= {sub + "/" + n for n in os.listdir(os.path.join(self.store, sub))}
        return out

    def test_gc_removes_nothing_while_a_record_cannot_be_read(self):
        self.load("keep:1")
        self.load("other:1", extra="other\n")
        corrupt = self.ref_file("docker.io/library/other:1")
        locked = self.ref_file("docker.io/library/keep:1")
        with open(corrupt, "w") as f:
            f.write('{"ref": "docker.io/library/oth')
        os.chmod(locked, 0)
        self.addCleanup(os.chmod, locked, 0o600)
        before = self.contents()
        gc = self.kern("gc")
        self.assertVerbError(gc, "gc removes nothing", os.path.basename(corrupt), os.path.basename(locked),
                             "EACCES")
        self.assertEqual(gc.out, "", gc.describe())
        self.assertEqual(self.contents(), before)
        rmi = self.kern("rmi", "keep:1")
        self.assertVerbError(rmi, "rmi removes nothing", os.path.basename(corrupt))
        self.assertEqual(self.contents(), before)

        # The listing still shows what it can read and names what it cannot, one warning each.
        os.chmod(locked, 0o600)
        images = self.kern("images")
        self.assertExit(images, 0)
        warnings = [l for l in images.err.splitlines() if l.startswith("kern: warning: ")]
        self.assertEqual(len(warnings), 1, images.describe())
        self.assertIn(os.path.basename(corrupt), warnings[0])
        self.assertIn("keep", images.out)
        self.assertNotIn("other", images.out)

        # Once the record is gone, gc runs, and the image that lost its only name goes with it.
        os.unlink(corrupt)
        gc = self.kern("gc")
        self.assertExit(gc, 0)
        self.assertIn("removed 1 image(s)", gc.out)
        self.assertExit(self.image_box("keep:1", ["/bin/true"]), 0)


class SpecialFilesTest(HardeningCase):
    """A FIFO where an image source has a file: refused at once, naming the path (before, open
    waited for a writer forever). Each run has a timeout, so a hang is a failure."""

    TIMEOUT = 20

    def layout(self, name):
        d = os.path.join(self.work, name)
        lay = build_images.Layout(d)
        desc = lay.image([build_images.busybox_layer()], gzip_layers=False)
        lay.tag(desc, "latest")
        lay.save()
        with open(os.path.join(d, "blobs", "sha256", desc["digest"][7:])) as f:
            manifest = json.load(f)
        return d, manifest

    def fifo_in_place(self, path):
        os.unlink(path)
        os.mkfifo(path, 0o644)
        return path

    def assertRefusedNaming(self, run, path):
        self.assertKernError(run, path, "is a FIFO, not a regular file")

    def run_layout_with_fifo(self, which):
        d, manifest = self.layout(which)
        blob = lambda digest: os.path.join(d, "blobs", "sha256", digest[7:])  # noqa: E731
        target = {
            "oci-layout": os.path.join(d, "oci-layout"),
            "index": os.path.join(d, "index.json"),
            "config": blob(manifest["config"]["digest"]),
            "layer": blob(manifest["layers"][0]["digest"]),
        }[which]
        self.fifo_in_place(target)
        run = self.image_box("oci:" + d, ["/bin/true"], timeout=self.TIMEOUT)
        self.assertRefusedNaming(run, target)
        for sub in ("refs", "images", "trees"):
            p = os.path.join(self.store, sub)
            self.assertEqual(os.listdir(p) if os.path.isdir(p) else [], [], sub)

    def test_fifo_as_oci_layout_file(self):
        self.run_layout_with_fifo("oci-layout")

    def test_fifo_as_index_json(self):
        self.run_layout_with_fifo("index")

    def test_fifo_as_config_blob(self):
        self.run_layout_with_fifo("config")

    def test_fifo_as_layer_blob(self):
        self.run_layout_with_fifo("layer")

    def test_fifo_as_docker_archive(self):
        path = os.path.join(self.work, "bb.tar")
        os.mkfifo(path, 0o644)
        run = self.image_box("docker-archive:" + path, ["/bin/true"], timeout=self.TIMEOUT)
        self.assertRefusedNaming(run, path)
        load = self.kern("load", "-i", path, timeout=self.TIMEOUT)
        self.assertVerbError(load, path, "is a FIFO", "kern load <")

    def test_control_the_same_layout_as_files_runs(self):
        d, _ = self.layout("control")
        self.assertExit(self.image_box("oci:" + d, ["/bin/true"], timeout=60), 0)
        # And an archive through a pipe on stdin still loads.
        path = os.path.join(self.work, "bb.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer()], ["piped:1"])
        with open(path, "rb") as f:
            feeder = subprocess.Popen(["cat"], stdin=f, stdout=subprocess.PIPE)
            run = self.kern("load", stdin=feeder.stdout, timeout=60)
            feeder.stdout.close()
            feeder.wait()
        self.assertExit(run, 0)


if __name__ == "__main__":
    kerntest.main()
