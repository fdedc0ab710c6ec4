"""kern oci verbs on a running container: ps (its processes as host pids, by its pid namespace
or its cgroup), pause/resume (the cgroup v2 freezer; a clear refusal without a cgroup), update
and events --stats (its cgroup's files; refused without one). Rootless, as test_oci_runtime."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from test_oci_runtime import OciBundleCase, wait_pid  # noqa: E402


class OciVerbsTest(OciBundleCase):

    def running(self, cid, script):
        """A started container running `script`; returns (box init's pid, its output file)."""
        self.write_cfg(args=["sh", "-c", script])
        out = self.create(cid)
        pid = self.state(cid)["pid"]
        self.assertExit(self.oci("start", cid), 0)
        self.wait_for(out, "up")
        return pid, out

    def wait_for(self, path, text, timeout=5):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(path) as f:
                if text in f.read():
                    return
            time.sleep(0.02)
        self.fail("%r never appeared in %s" % (text, path))

    def cgroup_of(self, cid):
        with open(os.path.join(self.root, cid, "state.json")) as f:
            return json.load(f).get("cgroup", "")

    def test_ps_lists_the_containers_processes_and_only_those(self):
        pid, _ = self.running("p1", "sleep 30 & sleep 31 & echo up; wait")
        run = self.oci("ps", "--format", "json", "p1")
        self.assertExit(run, 0)
        pids = json.loads(run.out)
        # The state's pid is the container's sh itself, pid 1 of its namespace.
        ns = os.readlink("/proc/%d/ns/pid" % pid)
        self.assertIn(pid, pids)
        # sh and the two sleeps, each in the container's pid namespace.
        self.assertEqual(len(pids), 3, pids)
        for p in pids:
            self.assertEqual(os.readlink("/proc/%d/ns/pid" % p), ns)
        self.assertNotIn(os.getpid(), pids)  # control: a process outside is not listed
        table = self.oci("ps", "p1", "-o", "pid,comm")
        self.assertExit(table, 0)
        lines = table.out.splitlines()
        self.assertEqual(lines[0].split(), ["PID", "COMMAND"])
        self.assertEqual(sorted(int(l.split()[0]) for l in lines[1:]), sorted(pids))
        self.assertEqual(sorted(l.split()[1] for l in lines[1:] if "sleep" in l), ["sleep", "sleep"])
        self.assertExit(self.oci("kill", "p1", "KILL"), 0)
        wait_pid(pid)
        self.assertEqual(json.loads(self.oci("ps", "--format", "json", "p1").out), [])  # stopped: none

    def test_pause_and_resume_freeze_the_container(self):
        pid, out = self.running("f1", "echo up; i=0; while :; do i=$((i+1)); echo $i > /tmp/n; sleep 0.01; done")
        cgroup = self.cgroup_of("f1")
        if not cgroup:
            run = self.oci("pause", "f1")
            self.assertExit(run, 1)
            self.assertIn('container "f1" has no cgroup', run.err)
            for verb in (["update", "--pids-limit", "10", "f1"], ["events", "--stats", "f1"]):
                refused = self.oci(*verb)
                self.assertExit(refused, 1)
                self.assertIn("has no cgroup", refused.err)
            self.assertEqual(self.state("f1")["status"], "running")
        self.require("cgroup", bool(cgroup), "the container got no cgroup v2 directory on this host")
        counter = "/proc/%d/root/tmp/n" % pid

        def count():
            with open(counter) as f:
                return int(f.read() or 0)

        self.assertExit(self.oci("pause", "f1"), 0)
        self.assertEqual(self.state("f1")["status"], "paused")
        with open(os.path.join(cgroup, "cgroup.events")) as f:
            self.assertIn("frozen 1", f.read())
        before = count()
        time.sleep(0.3)
        self.assertEqual(count(), before, "the counter moved while paused")
        again = self.oci("pause", "f1")
        self.assertExit(again, 1)
        self.assertIn("it is paused", again.err)
        self.assertExit(self.oci("resume", "f1"), 0)
        self.assertEqual(self.state("f1")["status"], "running")
        time.sleep(0.3)
        self.assertGreater(count(), before, "the counter did not move after resume")
        stats = self.oci("events", "--stats", "f1")
        self.assertExit(stats, 0)
        doc = json.loads(stats.out)
        self.assertEqual((doc["type"], doc["id"]), ("stats", "f1"))
        self.assertGreater(doc["data"]["cpu"]["usage"]["total"], 0)
        # A paused container is deleted with --force.
        self.assertExit(self.oci("pause", "f1"), 0)
        self.assertExit(self.oci("delete", "--force", "f1"), 0)
        self.ids.remove("f1")
        wait_pid(pid)

    def test_a_created_container_paused_cannot_start_until_resumed(self):
        self.write_cfg(args=["sh", "-c", "echo ran"])
        out = self.create("h1")
        pid = self.state("h1")["pid"]
        self.require("cgroup", bool(self.cgroup_of("h1")), "the container got no cgroup v2 directory on this host")
        self.assertExit(self.oci("pause", "h1"), 0)
        refused = self.oci("start", "h1")
        self.assertExit(refused, 1)
        self.assertIn('cannot start container "h1": it is paused', refused.err)
        self.assertExit(self.oci("resume", "h1"), 0)
        self.assertExit(self.oci("start", "h1"), 0)
        self.assertEqual(wait_pid(pid), 0)
        with open(out) as f:
            self.assertEqual(f.read(), "ran\n")

    def test_events_without_a_cgroup_and_resume_of_a_running_container_refuse(self):
        pid, _ = self.running("e1", "echo up; sleep 30")
        # The stream itself is test_oci_runc_parity's (as root, where a cgroup is made).
        if not self.cgroup_of("e1"):
            run = self.oci("events", "--interval", "100ms", "e1")
            self.assertExit(run, 1)
            self.assertIn('container "e1" has no cgroup', run.err)
        run = self.oci("resume", "e1")
        self.assertExit(run, 1)
        self.assertIn('cannot resume container "e1": it is running', run.err)


if __name__ == "__main__":
    kerntest.main()
