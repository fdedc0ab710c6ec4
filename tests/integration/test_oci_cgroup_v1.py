"""kern-oci's limits on a host whose controllers are on cgroup v1 (a v1 or "hybrid" boot, as this
host kind and many distributions still boot), beside Debian's runc on the same bundles in the
same run. Engines pass `--memory`, `--pids-limit` and Kubernetes limits through
linux.resources; kern used to write them into the empty cgroup2 beside the v1 hierarchies and
run the container uncapped, saying so only in an annotation.

- pids: a limit of 5 stops the container's eighth fork on both runtimes; without it (the
  control) all eight run.
- memory: 32 MiB of memory plus swap kills a shell that holds 100 MB (137 on both); without the
  limit it survives.
- The container's process and every exec'd one are in the container's directory of each v1
  hierarchy (or the sub cgroup `exec --cgroup CONTROLLER:PATH` names); `events --stats` reads them; `update` writes the v1 files (a lower memory+swap than the memory in force is
  ordered as the kernel needs); `delete` removes every directory; a create that fails on a
  resource leaves none.
- A cgroup someone froze is refused; one that already has processes is said; exec into a
  paused container is refused unless --ignore-paused, and list shows the paused one's pid.
- events reports the OOM killer's kill in the container ({"type":"oom"}).
- A "cgroup" mount shows the container's own v1 hierarchies (its memory limit where a JVM
  reads it), with and without a cgroup namespace, read-only.
- A resource that cannot be put in force fails create (as runc's does), unless the container
  is annotated io.kern.allow-uncapped=true: rootless, with no delegated cgroup, a pids limit.

Runs as root (CTest does). Skip names: runc, root, user, cgroup-v1 (a host whose memory and pids
controllers are on cgroup v2: kern uses cgroup v2 there, other tests cover it)."""

import json
import os
import shutil
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from test_oci_foreign_bundles import run, tearDownModule  # noqa: E402,F401
from test_oci_engines import main  # noqa: E402
from test_oci_runc_parity import ParityCase  # noqa: E402


def v1_mounts():
    """controller -> mount point of the host's cgroup v1 hierarchies."""
    out = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            head, _, tail = line.partition(" - ")
            fields, rest = head.split(), tail.split()
            if len(rest) >= 3 and rest[0] == "cgroup":
                for opt in rest[2].split(","):
                    out[opt] = fields[4]
    return out


FORKS = "for i in 1 2 3 4 5 6 7 8; do sleep 1 & done; wait; echo all-forked"
HOLD = 'x=$(head -c 100000000 /dev/zero | tr "\\0" a); echo survived ${#x}'


class CgroupV1Case(ParityCase):

    def setUp(self):
        super().setUp()
        self.v1 = v1_mounts()
        self.require("cgroup-v1", "memory" in self.v1 and "pids" in self.v1,
                     "this host's memory and pids controllers are not on cgroup v1 (kern uses cgroup v2 there)")

    def tearDown(self):
        super().tearDown()
        for mount in set(self.v1.values()):
            try:
                os.rmdir(mount + "/kern-itest-v1")  # the parent both runtimes made; empty once they are gone
            except OSError:
                pass

    def with_resources(self, args, resources, cgroups_path=None):
        def change(cfg):
            res = cfg["linux"].setdefault("resources", {})
            res.update(resources)
            if cgroups_path:
                cfg["linux"]["cgroupsPath"] = cgroups_path
        return self.setup_bundle(False, args, change)[0]

    def foreground(self, argv, b):
        cid = "v-" + uuid.uuid4().hex[:8]
        got = run(argv + ["run", "--bundle", b, cid], timeout=120)
        run(argv + ["delete", "--force", cid])
        return got

    def leftovers(self, rel):
        return sorted(p for p in set(self.v1.values()) if os.path.exists(p + rel))


class LimitsTest(CgroupV1Case):

    def test_a_pids_limit_stops_the_fork(self):
        capped = self.with_resources(["sh", "-c", FORKS], {"pids": {"limit": 5}})
        for name, argv in self.runtimes():
            got = self.foreground(argv, capped)
            self.assertNotIn("all-forked", got.out, "%s: 8 forks under pids.max 5\n%s" % (name, got.describe()))
            self.assertIn("can't fork", got.err, "%s\n%s" % (name, got.describe()))

    def test_control_without_the_limit_all_forks_run(self):
        free = self.with_resources(["sh", "-c", FORKS], {})
        for name, argv in self.runtimes():
            got = self.foreground(argv, free)
            self.assertExit(got, 0, name)
            self.assertIn("all-forked", got.out, name)

    def test_a_memory_limit_kills_what_holds_more(self):
        capped = self.with_resources(["sh", "-c", HOLD], {"memory": {"limit": 32 << 20, "swap": 32 << 20}})
        for name, argv in self.runtimes():
            got = self.foreground(argv, capped)
            self.assertExit(got, 137, "%s: 100 MB held under 32 MiB of memory and swap" % name)
            self.assertNotIn("survived", got.out, name)

    def test_control_without_a_memory_limit_it_survives(self):
        free = self.with_resources(["sh", "-c", HOLD], {})
        for name, argv in self.runtimes():
            got = self.foreground(argv, free)
            self.assertExit(got, 0, name)
            self.assertIn("survived 100000000", got.out, name)


class DirectoriesTest(CgroupV1Case):

    def test_process_exec_update_delete(self):
        rel = "/kern-itest-v1/" + uuid.uuid4().hex[:8]
        b = self.with_resources(["sleep", "60"], {"memory": {"limit": 64 << 20, "swap": 128 << 20},
                                                  "pids": {"limit": 40}}, cgroups_path=rel)
        argv = self.runtimes()[0][1]
        cid = self.detach(argv, b, None)
        pid = json.loads(run(argv + ["state", cid]).out)["pid"]
        with open("/proc/%d/cgroup" % pid) as f:
            lines = f.read().splitlines()
        for ctl in ("memory", "pids", "cpuset", "freezer"):
            if ctl in self.v1:
                self.assertTrue(any(l.split(":")[1].split(",").count(ctl) and l.endswith(":" + rel) for l in lines),
                                "%s not in %s: %s" % (ctl, rel, lines))
        ex = run(argv + ["exec", cid, "cat", "/proc/self/cgroup"])
        self.assertExit(ex, 0)
        self.assertTrue(any(":memory:" + rel in l for l in ex.out.splitlines()), ex.describe())
        self.assertTrue(any(":pids:" + rel in l for l in ex.out.splitlines()), ex.describe())
        # events --stats reads the v1 files (docker and crictl stats read the same directories).
        st = json.loads(run(argv + ["events", "--stats", cid]).out)["data"]
        self.assertEqual(st["memory"]["usage"]["limit"], 64 << 20, st)
        self.assertGreater(st["memory"]["usage"]["usage"], 0, st)
        self.assertEqual(st["pids"]["limit"], 40, st)
        self.assertGreaterEqual(st["pids"]["current"], 1, st)
        mem = self.v1["memory"] + rel
        with open(mem + "/memory.memsw.limit_in_bytes") as f:
            self.assertEqual(int(f.read()), 128 << 20)
        # Down to 16 MiB of memory plus swap: below the memory limit in force, so the kernel
        # takes the memory limit first; then up again, swap first.
        for limit, swap in ((16 << 20, 16 << 20), (256 << 20, 512 << 20)):
            doc = os.path.join(self.dir, "res.json")
            with open(doc, "w") as f:
                json.dump({"memory": {"limit": limit, "swap": swap}, "pids": {"limit": 9}}, f)
            self.assertExit(run(argv + ["update", "-r", doc, cid]), 0)
            for file, want in (("memory.limit_in_bytes", limit), ("memory.memsw.limit_in_bytes", swap)):
                with open(mem + "/" + file) as f:
                    self.assertEqual(int(f.read()), want, file)
            with open(self.v1["pids"] + rel + "/pids.max") as f:
                self.assertEqual(f.read().strip(), "9")
        self.assertExit(run(argv + ["delete", "--force", cid]), 0)
        self.assertEqual(self.leftovers(rel), [])

    def test_exec_into_a_sub_cgroup(self):
        # runc's exec.bats "--cgroup sub-cgroups [v1]": CONTROLLER:PATH below the container's.
        b = self.with_resources(["sleep", "60"], {})
        for name, argv in self.runtimes():
            rel = "/kern-itest-v1/" + uuid.uuid4().hex[:8]
            with open(os.path.join(b, "config.json")) as f:
                cfg = json.load(f)
            cfg["linux"]["cgroupsPath"] = rel
            with open(os.path.join(b, "config.json"), "w") as f:
                json.dump(cfg, f)
            cid = self.detach(argv, b, None)
            os.mkdir(self.v1["memory"] + rel + "/submem")
            try:
                got = run(argv + ["exec", "--cgroup", "memory:submem", cid, "cat", "/proc/self/cgroup"])
                self.assertExit(got, 0, name)
                self.assertIn(":memory:%s/submem" % rel, got.out, name)
                self.assertIn(":pids:%s\n" % rel, got.out, name)
                for bad in ("..", "whaaat:/", "memory:nonexistent"):
                    self.assertNotEqual(run(argv + ["exec", "--cgroup", bad, cid, "true"]).rc, 0, "%s: %s" % (name, bad))
            finally:
                run(argv + ["delete", "--force", cid])
                os.rmdir(self.v1["memory"] + rel + "/submem") if os.path.isdir(self.v1["memory"] + rel + "/submem") else None
            self.assertEqual(self.leftovers(rel), [], name)

    def test_a_create_that_fails_on_a_resource_leaves_no_directory(self):
        rel = "/kern-itest-v1/" + uuid.uuid4().hex[:8]
        b = self.with_resources(["true"], {"cpu": {"cpus": "4095"}}, cgroups_path=rel)
        for name, argv in self.runtimes():
            got = run(argv + ["create", "--bundle", b, "v-" + uuid.uuid4().hex[:8]])
            self.assertNotEqual(got.rc, 0, "%s: cpuset.cpus 4095\n%s" % (name, got.describe()))
            if name == "kern-oci":
                self.assertIn("cpuset.cpus", got.err)
                self.assertEqual(self.leftovers(rel), [])


class SharedAndFrozenTest(CgroupV1Case):

    def set_path(self, b, rel):
        with open(os.path.join(b, "config.json")) as f:
            cfg = json.load(f)
        cfg["linux"]["cgroupsPath"] = rel
        with open(os.path.join(b, "config.json"), "w") as f:
            json.dump(cfg, f)

    def test_a_frozen_cgroup_is_refused(self):
        # runc's cgroups.bats: a container must not start frozen in a cgroup someone froze.
        b = self.with_resources(["true"], {})
        for name, argv in self.runtimes():
            rel = "/kern-itest-v1/" + uuid.uuid4().hex[:8]
            self.set_path(b, rel)
            freezer = self.v1["freezer"] + rel
            os.makedirs(freezer)
            try:
                with open(freezer + "/freezer.state", "w") as f:
                    f.write("FROZEN")
                got = run(argv + ["create", "--bundle", b, "f-" + uuid.uuid4().hex[:8]])
                self.assertExit(got, 1, name)
                self.assertIn("unexpectedly frozen", got.err, name)
            finally:
                with open(freezer + "/freezer.state", "w") as f:
                    f.write("THAWED")
                os.rmdir(freezer)

    def test_a_shared_cgroup_is_said(self):
        b = self.with_resources(["sleep", "30"], {})
        for name, argv in self.runtimes():
            self.set_path(b, "/kern-itest-v1/" + uuid.uuid4().hex[:8])
            self.detach(argv, b, None)
            cid = "s-" + uuid.uuid4().hex[:8]
            err = os.path.join(self.dir, cid + ".err")
            # stdio on files, as an engine's: the container keeps what create hands it open.
            with open(err, "wb") as e:
                rc = subprocess.run(argv + ["--debug", "create", "--bundle", b, cid], stdin=subprocess.DEVNULL,
                                    stdout=e, stderr=e, timeout=60).returncode
            self.live.append((argv, cid, None))
            with open(err, errors="replace") as e:
                text = e.read()
            self.assertEqual(rc, 0, "%s: %s" % (name, text))
            self.assertIn("cgroup is not empty", text, name)


class PausedTest(CgroupV1Case):

    def test_exec_into_a_paused_container(self):
        # runc's cgroups.bats: refused in runc's words; with --ignore-paused the process runs
        # once the container is resumed; list still shows the paused container's pid.
        b = self.with_resources(["sleep", "60"], {})
        for name, argv in self.runtimes():
            cid = self.detach(argv, b, None)
            self.assertExit(run(argv + ["pause", cid]), 0, name)
            got = run(argv + ["exec", cid, "echo", "ok"])
            self.assertExit(got, 255, name)
            self.assertIn("cannot exec in a paused container", got.err, name)
            listed = json.loads(run(argv + ["list", "--format", "json"]).out)
            mine = [c for c in listed if c["id"] == cid]
            self.assertEqual(mine[0]["status"], "paused", name)
            self.assertGreater(mine[0]["pid"], 0, name)
            resume = subprocess.Popen(["sh", "-c", "sleep 1; exec \"$@\"", "sh"] + argv + ["resume", cid])
            got = run(argv + ["exec", "--ignore-paused", cid, "echo", "ok"])
            resume.wait(timeout=30)
            self.assertExit(got, 0, name)
            self.assertEqual(got.out.strip(), "ok", name)


class OomEventTest(CgroupV1Case):

    def test_events_report_the_oom_kill(self):
        b = self.with_resources(["sleep", "60"], {"memory": {"limit": 32 << 20, "swap": 32 << 20}})
        for name, argv in self.runtimes():
            cid = self.detach(argv, b, None)
            log = os.path.join(self.dir, cid + ".events")
            with open(log, "wb") as out:
                events = subprocess.Popen(argv + ["events", "--interval", "1s", cid], stdout=out, stderr=subprocess.DEVNULL)
            try:
                time.sleep(0.5)
                self.assertExit(run(argv + ["exec", "-d", cid, "sh", "-c", HOLD]), 0, name)
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline:
                    with open(log) as f:
                        if '{"type":"oom","id":"%s"}' % cid in f.read():
                            break
                    time.sleep(0.2)
                with open(log) as f:
                    self.assertIn('{"type":"oom","id":"%s"}' % cid, f.read(), name)
            finally:
                run(argv + ["delete", "--force", cid])
                events.wait(timeout=20)


class MountTest(CgroupV1Case):

    def check(self, cgroupns):
        # What a JVM or a Go runtime in the container reads to size itself: its own memory
        # limit under /sys/fs/cgroup/memory; the mount read-only as the config asks.
        script = "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max; " \
                 "ls /sys/fs/cgroup; touch /sys/fs/cgroup/memory/x 2>/dev/null && echo WRITABLE; true"

        def change(cfg):
            cfg["linux"].setdefault("resources", {}).update(memory={"limit": 48 << 20}, pids={"limit": 33})
            if cgroupns:
                cfg["linux"]["namespaces"].append({"type": "cgroup"})
        b = self.setup_bundle(False, ["sh", "-c", script], change)[0]
        for name, argv in self.runtimes():
            got = self.foreground(argv, b)
            self.assertExit(got, 0, name)
            lines = got.out.split()
            self.assertEqual(lines[:2], [str(48 << 20), "33"], "%s\n%s" % (name, got.describe()))
            self.assertIn("memory", lines, name)
            self.assertIn("pids", lines, name)
            self.assertNotIn("WRITABLE", lines, name)

    def test_a_cgroup_mount_shows_the_containers_hierarchies(self):
        self.check(False)

    def test_the_same_with_a_cgroup_namespace(self):
        self.check(True)


class UncappedTest(CgroupV1Case):

    def test_rootless_limits_without_a_cgroup_are_refused_unless_allowed(self):
        b, user = self.setup_bundle(True, ["true"], lambda c: c["linux"].update(resources={"pids": {"limit": 5}}))
        argv = self.runtimes(True)[0][1]
        got = run(argv + ["run", "--bundle", b, "v-" + uuid.uuid4().hex[:8]], user=user)
        self.assertExit(got, 1, "pids.max asked, no cgroup for this user")
        self.assertIn("io.kern.allow-uncapped", got.err)
        runc = run(self.runtimes(True)[1][1] + ["run", "--bundle", b, "r-" + uuid.uuid4().hex[:8]], user=user)
        self.assertNotEqual(runc.rc, 0, "runc refuses it too\n" + runc.describe())
        with open(os.path.join(b, "config.json")) as f:
            cfg = json.load(f)
        cfg.setdefault("annotations", {})["io.kern.allow-uncapped"] = "true"
        with open(os.path.join(b, "config.json"), "w") as f:
            json.dump(cfg, f)
        cid = self.detach(argv, b, user, verb="create")
        enforcement = json.loads(json.loads(run(argv + ["state", cid], user=user).out)["annotations"]["io.kern.enforcement"])
        self.assertTrue(enforcement["pids.max"].startswith("not enforced"), enforcement)


if __name__ == "__main__":
    main()
