"""kern as an OCI runtime (kern oci / kern-oci): runc's command line. What runs today: spec,
features, state, list, kill and delete of recorded containers, and errors on --log in runc's JSON
format. Running containers is test_oci_runtime.py's."""

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


def start_time(pid):
    with open("/proc/%d/stat" % pid) as f:
        text = f.read()
    return int(text[text.rindex(")") + 2:].split()[19])


class OciCliTest(kerntest.KernTestCase):

    def setUp(self):
        super().setUp()
        self.dir = os.path.join(self.s.work, self.s.new_name("oci"))
        os.mkdir(self.dir)
        self.root = os.path.join(self.dir, "state")
        self.log = os.path.join(self.dir, "log.json")
        self.bundle = os.path.join(self.dir, "bundle")
        os.mkdir(self.bundle)
        os.mkdir(os.path.join(self.bundle, "rootfs"))
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()

    def oci(self, *args):
        return self.kern("oci", "--root", self.root, "--log", self.log, "--log-format", "json", *args)

    def record(self, cid, pid, started=True, start=None):
        d = os.path.join(self.root, cid)
        os.makedirs(d, mode=0o700)
        os.chmod(self.root, 0o700)
        rec = {"id": cid, "bundle": self.bundle, "pid": pid,
               "pid_start_time": start if start is not None else start_time(pid), "started": started,
               "created": "2026-12-01T00:00:00Z", "annotations": {"io.kern.test": "1"}}
        with open(os.path.join(d, "state.json"), "w") as f:
            json.dump(rec, f)

    def sleeper(self, cid="c1"):
        """A host process that stands for container cid's box init: its command line is the
        title kern gives one (kern-init oci:ID), else kern would not take it for the container's
        own. cat with no arguments, waiting on a pipe nobody writes."""
        p = subprocess.Popen(["kern-init oci:" + cid], executable="/bin/cat", stdin=subprocess.PIPE,
                             start_new_session=True)
        # Popen returns at the execve's point of no return (vfork), before the kernel has set
        # the new command line: /proc/PID/cmdline reads empty for a moment.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with open("/proc/%d/cmdline" % p.pid, "rb") as f:
                if f.read():
                    break
            time.sleep(0.005)
        self.procs.append(p)
        return p

    def state(self, cid):
        run = self.oci("state", cid)
        self.assertExit(run, 0)
        return json.loads(run.out)

    def test_spec_is_a_bundle_kern_accepts_and_errors_go_to_the_json_log(self):
        self.assertExit(self.kern("oci", "spec", "--rootless", "--bundle", self.bundle), 0)
        with open(os.path.join(self.bundle, "config.json")) as f:
            spec = json.load(f)
        self.assertEqual(spec["root"]["path"], "rootfs")
        self.assertIn({"type": "user"}, spec["linux"]["namespaces"])
        self.assertEqual(spec["linux"]["uidMappings"][0]["hostID"], os.getuid())
        # A second spec does not overwrite the first.
        again = self.kern("oci", "spec", "--bundle", self.bundle)
        self.assertExit(again, 2)
        os.rmdir(os.path.join(self.bundle, "rootfs"))
        run = self.oci("create", "--bundle", self.bundle, "c1")
        self.assertExit(run, 1)
        self.assertIn("kern: error: ", run.err)
        self.assertIn("root.path", run.err)
        with open(self.log) as f:
            line = json.loads(f.read().splitlines()[-1])
        self.assertEqual(line["level"], "error")
        self.assertIn("root.path", line["msg"])
        self.assertFalse(os.path.exists(os.path.join(self.root, "c1")))
        self.assertEqual(os.listdir(self.root), [], "create left state behind")

    def test_bad_config_is_refused_with_its_json_path(self):
        with open(os.path.join(self.bundle, "config.json"), "w") as f:
            json.dump({"ociVersion": "1.2.0", "root": {"path": "rootfs"},
                       "process": {"cwd": "/", "args": ["sh", 5]}}, f)
        run = self.oci("create", "--bundle", self.bundle, "c1")
        self.assertExit(run, 1)
        self.assertIn("process.args[1]: expected a string", run.err)
        with open(self.log) as f:
            self.assertIn("process.args[1]: expected a string", json.loads(f.read().splitlines()[-1])["msg"])

    def test_selinux_label_refused_not_dropped(self):
        with open(os.path.join(self.bundle, "config.json"), "w") as f:
            json.dump({"ociVersion": "1.2.0", "root": {"path": "rootfs"},
                       "process": {"cwd": "/", "args": ["sh"], "selinuxLabel": "system_u:system_r:container_t:s0"}}, f)
        run = self.oci("create", "--bundle", self.bundle, "c1")
        self.assertExit(run, 1)
        self.assertIn("process.selinuxLabel:", run.err)

    def test_kern_oci_name_dispatches(self):
        link = os.path.join(self.dir, "kern-oci")
        os.symlink(self.s.kern, link)
        run = self.host_run([link, "features"])
        self.assertExit(run, 0)
        doc = json.loads(run.out)
        self.assertEqual(doc["ociVersionMax"], "1.2.0")
        self.assertTrue(doc["linux"]["seccomp"]["enabled"])
        self.assertIn("SCMP_ACT_NOTIFY", doc["linux"]["seccomp"]["actions"])
        self.assertIn("user", doc["linux"]["namespaces"])
        self.assertIn("create", doc["annotations"]["io.kern.oci.verbs"].split())

    def test_state_kill_delete_follow_the_process(self):
        p = self.sleeper()
        self.record("c1", p.pid)
        st = self.state("c1")
        self.assertEqual((st["status"], st["pid"], st["bundle"]), ("running", p.pid, self.bundle))
        self.assertEqual(st["annotations"], {"io.kern.test": "1"})
        listed = self.oci("list", "--format", "json")
        self.assertExit(listed, 0)
        self.assertEqual([c["id"] for c in json.loads(listed.out)], ["c1"])
        refused = self.oci("delete", "c1")
        self.assertExit(refused, 1)
        self.assertIn("it is running", refused.err)
        self.assertIsNone(p.poll(), "a refused delete must not touch the process")
        self.assertExit(self.oci("kill", "c1", "KILL"), 0)
        self.assertEqual(p.wait(timeout=10), -signal.SIGKILL)
        self.assertEqual(self.state("c1")["status"], "stopped")
        self.assertNotIn("pid", self.state("c1"))
        self.assertExit(self.oci("kill", "c1"), 1)  # a stopped container takes no signal
        self.assertExit(self.oci("delete", "c1"), 0)
        self.assertFalse(os.path.exists(os.path.join(self.root, "c1")))
        self.assertExit(self.oci("state", "c1"), 1)

    def test_recycled_pid_is_never_signalled(self):
        p = self.sleeper()
        self.record("c1", p.pid, start=start_time(p.pid) + 1)  # as if the pid was reused since
        self.assertEqual(self.state("c1")["status"], "stopped")
        run = self.oci("kill", "c1", "KILL")
        self.assertExit(run, 1)
        time.sleep(0.1)
        self.assertIsNone(p.poll(), "kern signalled a process that is not the container's")
        self.assertExit(self.oci("delete", "--force", "c1"), 0)
        self.assertIsNone(p.poll())

    def test_created_then_delete_force(self):
        p = self.sleeper()
        self.record("c1", p.pid, started=False)
        self.assertEqual(self.state("c1")["status"], "created")
        self.assertExit(self.oci("delete", "--force", "c1"), 0)
        self.assertEqual(p.wait(timeout=10), -signal.SIGKILL)
        self.assertEqual(os.listdir(self.root), [])
        self.assertExit(self.oci("delete", "--force", "c1"), 0)  # gone already: not an error

    def test_events_of_a_missing_container_is_an_error(self):
        # The stream itself: test_oci_runc_parity (it was a refusal, "not implemented yet").
        for verb in (["events", "c1"], ["events", "--stats", "c1"]):
            run = self.oci(*verb)
            self.assertExit(run, 1)
            self.assertIn('"c1"', run.err)

    def test_bad_ids_and_signals(self):
        self.assertExit(self.oci("state", "../x"), 2)
        p = self.sleeper()
        self.record("c1", p.pid)
        run = self.oci("kill", "c1", "SIGNOPE")
        self.assertExit(run, 2)
        self.assertIn('unknown signal "SIGNOPE"', run.err)
        self.assertIsNone(p.poll())


if __name__ == "__main__":
    kerntest.main()
