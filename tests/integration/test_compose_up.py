"""kern compose up and down on a stack (kern-compose(1)), as the unprivileged user: the stack of
tests/integration/compose/busybox_shop comes up as one pod (services reach each other by their
service name, the pod's /etc/hosts), depends_on service_healthy is waited for, a secret is a
0400 file and nowhere in the environment, a named volume's data survives down and up, up again
keeps unchanged services and recreates a changed one, and down leaves no box, pod, holder or
volume (-v). Two services on one port are refused before anything starts."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402

STACK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compose", "busybox_shop")


class ComposeUpTest(kerntest.KernTestCase):

    def setUp(self):
        super().setUp()
        self.use_private_runtime_dir()
        self.work = tempfile.mkdtemp(prefix="compose-", dir=self.s.tmp)
        os.chmod(self.work, 0o755)
        path = os.path.join(self.work, "busybox.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer()], ["busybox:latest"])
        os.chmod(path, 0o644)
        self.assertExit(self.kern("load", "-i", path), 0)
        self.dir = os.path.join(self.work, "shop")
        shutil.copytree(STACK, self.dir)
        for base, dirs, files in os.walk(self.dir):
            os.chmod(base, 0o755)
            for f in files:
                os.chmod(os.path.join(base, f), 0o644)
        self.addCleanup(self.compose, "down", "-v")

    def compose(self, *args, **kw):
        return self.kern("compose", "--project-directory", self.dir, *args, timeout=kw.pop("timeout", 120), **kw)

    def pod_dir(self):
        return os.path.join(self.runtime_kern_dir(), "pods", "shop")

    def user_processes(self, needle):
        """Processes whose command line holds `needle` (the pod's holder is kern's own)."""
        out = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if needle.encode() in f.read():
                        out.append(pid)
            except OSError:
                pass
        return out

    def wait_for(self, fn, what, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            v = fn()
            if v:
                return v
            time.sleep(0.2)
        self.fail("timed out waiting for " + what)

    def last_fetch(self):
        run = self.compose("exec", "web", "cat", "/tmp/last")
        return run.out.strip() if run.rc == 0 else ""

    def test_up_reaches_by_name_keeps_volume_and_leaves_nothing(self):
        up = self.compose("up", "-d")
        self.assertExit(up, 0)
        for svc in ("store", "web", "job"):
            self.assertIn("Box shop-%s-1  Started" % svc, up.err, up.describe())
        # web waited for store to be healthy: store started first.
        self.assertLess(up.err.index("shop-store-1"), up.err.index("shop-web-1"))
        # A request across services by name (web -> store:6379 on the pod's loopback).
        self.assertEqual(self.wait_for(self.last_fetch, "web's fetch from store"), "stored-none")
        # The control: a box outside the pod does not resolve the service's name.
        outside = self.kern("box", "--image", "busybox:latest", "--", "sh", "-c", "wget -q -O- http://store:6379/")
        self.assertNotEqual(outside.rc, 0, outside.describe())
        # The secret: a 0400 file, not in the environment.
        logs = self.wait_for(lambda: (lambda r: r.out if "not-in-env" in r.out else "")(self.compose("logs", "job")),
                             "the job's output")
        self.assertIn("job  | 400", logs)
        self.assertIn("job  | not-in-env-s3cret", logs)
        env = self.compose("exec", "web", "env")
        self.assertNotIn("s3cret", env.out)
        self.assertTrue(os.path.isdir(self.pod_dir()))
        ps = self.compose("ps")
        self.assertIn("shop-web-1", ps.out)

        # up again, the file named as the anchor's `kern compose FILE up` takes it: the same
        # project (named after the file's directory), nothing changed, nothing recreated.
        again = self.kern("compose", os.path.join(self.dir, "compose.yaml"), "up", "-d", timeout=120)
        self.assertExit(again, 0)
        self.assertIn("Box shop-web-1  Running", again.err, again.describe())

        # down keeps the named volume; the next up's store serves what the job wrote there.
        self.assertExit(self.compose("down"), 0)
        self.assertFalse(os.path.exists(self.pod_dir()), "the pod's directory is gone")
        self.assertEqual(self.registered_boxes(), [])
        self.assertExit(self.compose("up", "-d"), 0)
        self.assertEqual(self.wait_for(lambda: (lambda v: v if v == "stored-42" else "")(self.last_fetch()),
                                       "the kept volume's data"), "stored-42")

        # A changed service is recreated, the others stay.
        with open(os.path.join(self.dir, "compose.yaml")) as f:
            text = f.read()
        with open(os.path.join(self.dir, "compose.yaml"), "w") as f:
            f.write(text.replace("sleep 0.3", "sleep 0.4"))
        changed = self.compose("up", "-d")
        self.assertExit(changed, 0)
        self.assertIn("Box shop-web-1  Recreate", changed.err, changed.describe())
        self.assertIn("Box shop-store-1  Running", changed.err, changed.describe())

        down = self.compose("down", "-v")
        self.assertExit(down, 0)
        self.assertFalse(os.path.exists(self.pod_dir()))
        self.assertEqual(self.registered_boxes(), [])
        vols = self.kern("volume", "ls", "-q")
        self.assertNotIn("shop_data", vols.out)
        self.assertEqual(self.user_processes(self.pod_dir()), [])

    def test_two_services_on_one_port_are_refused_before_anything_starts(self):
        with open(os.path.join(self.dir, "compose.yaml"), "a") as f:
            pass
        bad = os.path.join(self.work, "bad")
        os.makedirs(bad)
        os.chmod(bad, 0o755)
        with open(os.path.join(bad, "compose.yaml"), "w") as f:
            f.write("services:\n  a:\n    image: busybox:latest\n    command: httpd -f -p 80\n    expose: ['80']\n"
                    "  b:\n    image: busybox:latest\n    ports: ['8080:80']\n    bogus_key: 1\n")
        os.chmod(os.path.join(bad, "compose.yaml"), 0o644)
        run = self.kern("compose", "--project-directory", bad, "up", "-d")
        self.assertEqual(run.rc, 125, run.describe())
        self.assertIn("kern: error: ", run.err)
        self.assertIn("both listen on container port 80/tcp", run.err)
        self.assertIn("kern: warning: services.b.bogus_key", run.err)
        self.assertFalse(os.path.exists(os.path.join(self.runtime_kern_dir(), "pods", "bad")))
        self.assertEqual(self.registered_boxes(), [])
        # The control: without b, the stack comes up.
        with open(os.path.join(bad, "compose.yaml"), "w") as f:
            f.write("services:\n  a:\n    image: busybox:latest\n    command: httpd -f -p 80\n    expose: ['80']\n")
        run = self.kern("compose", "--project-directory", bad, "up", "-d")
        self.assertExit(run, 0)
        self.assertExit(self.kern("compose", "--project-directory", bad, "down"), 0)


if __name__ == "__main__":
    kerntest.main()
