"""The kern-sandbox SDK's upstream kern.toml schema on the real binary (kern.toml(5), issue 12):
tests/fixtures/sdk-upstream-kern.toml (every key of that schema) validates with a note per key
that has no effect here, and its profiles apply to a box (nice in /proc/self/stat, persistent and
fresh vdisks, io.max and cpuset where the host delegates them); typos refused with file:line:col
and did-you-mean; extends inherits and refuses cycles; sizes "256 MB", "1 GB", "512m" alike;
`kern validate --json`; the uncapped warning kept for a cap asked for and quietened for the
default caps by [kern] warn_uncapped = false."""

import json
import os
import re
import sys
import subprocess
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "sdk-upstream-kern.toml")


def nice_of(stat_line):
    """Field 19 of /proc/PID/stat (the comm field may hold spaces: split after its ')')."""
    return int(stat_line.rsplit(")", 1)[1].split()[16])


class UpstreamProfilesTest(kerntest.KernTestCase):

    def dir(self):
        d = tempfile.mkdtemp(prefix="up-", dir=self.s.tmp)
        os.chmod(d, 0o755)
        return d

    def config(self, text):
        path = os.path.join(self.dir(), "kern.toml")
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        return path

    def upstream(self):
        """The fixture with its [[disk]] paths replaced by directories of this test."""
        with open(FIXTURE) as f:
            text = f.read()
        self.fast, self.slow = self.dir(), self.dir()
        for d in (self.fast, self.slow):
            os.chmod(d, 0o777)
        text = text.replace("/var/tmp/kern-disks", self.fast).replace("/var/tmp/kern-slow", self.slow)
        return self.config(text)

    def kern_lines(self, run):
        return [l for l in run.err.splitlines() if l.startswith("kern:")]

    # ---- kern validate

    def test_the_sdk_example_validates_and_notes_each_key_without_effect(self):
        cfg = self.upstream()
        run = self.kern("validate", cfg)
        self.assertExit(run, 0)
        self.assertIn(": ok (3 vcpu, 3 vdisk, 1 vgpio)", run.out)
        for l in run.err.splitlines():
            self.assertTrue(l.startswith(("kern: note: ", "kern: warning: ")), "stray line: " + l)
        notes = [l for l in run.err.splitlines() if l.startswith("kern: note: ")]
        for key in ("[kern] log_level", "[kern] crash_recovery", "[[disk]] model", "[[vgpio]] pins", "[[vgpio]] pwm",
                    "[[vgpio]] onewire", "[[vgpio]] leds", "[[vgpio]] can", "[[vgpio]] net", "[[vgpio]] usb_ports",
                    "[[vgpio]] bluetooth"):
            hit = [n for n in notes if re.match(r"kern: note: %s:\d+:\d+: %s" % (re.escape(cfg), re.escape(key)), n)]
            self.assertTrue(hit, "no note with file:line:col for %s\n%s" % (key, run.err))
            self.assertIn("no effect here: ", hit[0])
        # Missing nodes are warnings naming them, not errors.
        self.assertIn("/dev/video9", run.err)

    def test_the_upstream_starter_loads_with_a_note_per_skipped_table(self):
        """Issue 21 item 9: bare backend ids (id = "0", name = "pool") and tables kern does not
        read, as upstream's CONFIG.md starter writes them, load unchanged; what is skipped is
        named in a note by validate and by every box that reads the file."""
        pool = self.dir()
        os.chmod(pool, 0o777)
        cfg = self.config(
            "[kern]\nconfig_version = 1\n\n"
            "[[cpu]]\nid = \"0\"\ncores = 2.0\nmemory = \"4 GB\"\n\n"
            "[[disk]]\nname = \"pool\"\npath = \"%s\"\ndefault = true\n\n"
            "[[vcpu]]\nname = \"small\"\nbackend = \"cpu:0\"\ncpus = 1.0\nmemory = \"256 MB\"\n\n"
            "[[vdisk]]\nname = \"data\"\nbackend = \"disk:pool\"\nsize = \"64m\"\n\n"
            "[[gpu]]\nid = \"0\"\n\n[box.api]\nimage = \"alpine:3.19\"\n\n[telemetry]\nenabled = false\n" % pool)
        run = self.kern("validate", cfg)
        self.assertExit(run, 0)
        for table, line in (("[[gpu]]", 25), ("[box]", 28), ("[telemetry]", 31)):
            self.assertIn("kern: note: %s:%d:" % (cfg, line), run.err, run.describe())
            self.assertIn(table + ": not a table kern reads; skipped", run.err, run.describe())
        self.assertIn("[[cpu]] memory: no effect here", run.err, run.describe())
        run = self.box(["/bin/sh", "-c", "ls -d /vdisk/*"], flags=["vcpu:small", "vdisk:data", "--config", cfg,
                                                                  "--allow-uncapped"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.split(), ["/vdisk/data"], run.describe())
        notes = [l for l in run.err.splitlines() if l.startswith("kern: note: ")]
        self.assertEqual(len(notes), 3, run.describe())
        # A near miss of one of kern's tables is still a typo, not a skipped table.
        bad = self.config("[[vcpus]]\nname = \"a\"\n")
        run = self.kern("validate", bad)
        self.assertExit(run, 1)
        self.assertIn('did you mean "vcpu"?', run.err, run.describe())

    def test_a_key_nested_80000_deep_is_an_error_not_a_crash(self):
        """Issue 21 item 19: a dotted key of 80,000 parts used to overflow the stack of every verb
        that read the file; the depth is bounded before toml++ reads it, with the line named."""
        for text in ("[kern]\nwarn_uncapped = true\n" + ".".join(["a"] * 80000) + " = 1\n",
                     "# x\n[" + ".".join(["t"] * 80000) + "]\n",
                     "x = { " + ".".join(["b"] * 80000) + " = 1 }\n"):
            cfg = self.config(text)
            run = self.kern("validate", cfg, timeout=30)
            self.assertExit(run, 1)
            self.assertIn("tables deep (at most 64", run.err, run.describe())
            self.assertRegex(run.err, re.escape(cfg) + r":[0-9]+:[0-9]+: a key nested")
            box = self.box(["/bin/true"], flags=["vcpu:x", "--config", cfg], timeout=30)
            self.assertKernError(box, "tables deep")
        # The control: the same file with a key of two parts is read.
        run = self.kern("validate", self.config("[kern]\nwarn_uncapped = true\n\n[[vgpio]]\nname = \"v\"\n"
                                                "backend = \"host\"\nusb_ports = [{ bus = 1, port = \"1\" }]\n"))
        self.assertNotIn("tables deep", run.err, run.describe())

    def test_validate_json_is_one_object(self):
        cfg = self.upstream()
        run = self.kern("validate", "--json", cfg)
        self.assertExit(run, 0)
        self.assertEqual(run.out.count("\n"), 1, run.out)
        doc = json.loads(run.out)
        self.assertTrue(doc["ok"])
        self.assertEqual(doc["errors"], 0)
        self.assertEqual(doc["file"], cfg)
        self.assertEqual(doc["kern"]["log_level"], "info")
        worker = [p for p in doc["profiles"] if p["token"] == "vcpu:worker"][0]
        self.assertEqual(worker["inherited"], ["cpus", "nice"])
        self.assertEqual(worker["nice"], 5)
        self.assertEqual(worker["memory"], 1 << 30)
        data = [p for p in doc["profiles"] if p["token"] == "vdisk:data"][0]
        self.assertEqual(data["backend"], "disk:fast")
        self.assertEqual((data["iops"], data["bandwidth"]), (1000, 100 << 20))
        self.assertTrue(doc["notes"])
        for n in doc["notes"]:
            self.assertEqual(n["severity"], "note")
            self.assertGreater(n["line"], 0)
            self.assertGreater(n["column"], 0)
        self.assertTrue([d for d in doc["diagnostics"] if d["severity"] == "warning"])
        self.assertEqual(self.kern_lines(run), [], "--json keeps the file's problems off stderr")
        bad = self.kern("validate", "--json", self.config("[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nnicee = 1\n"))
        self.assertExit(bad, 1)
        doc = json.loads(bad.out)
        self.assertFalse(doc["ok"])
        self.assertEqual([(d["line"], d["column"], d["severity"]) for d in doc["diagnostics"]], [(4, 1, "error")])
        self.assertIn('did you mean "nice"?', doc["diagnostics"][0]["message"])
        missing = self.kern("validate", "--json", os.path.join(self.dir(), "none.toml"))
        self.assertExit(missing, 1)
        doc = json.loads(missing.out)
        self.assertFalse(doc["ok"])
        self.assertIn("ENOENT", doc["diagnostics"][0]["message"])
        self.assertEqual(missing.err, "")

    # ---- applied to a box

    def test_its_profiles_apply_to_a_box(self):
        cfg = self.upstream()
        run = self.box(["/bin/sh", "-c", "cat /proc/self/stat; ls -d /vdisk/*; echo kept > /vdisk/cache/f; "
                                         "echo gone > /vdisk/data/f"],
                       flags=["vcpu:worker", "vdisk:scratch", "vdisk:data", "vdisk:cache", "vgpio:sensors",
                              "--config", cfg])
        self.assertExit(run, 0)
        lines = run.out.splitlines()
        self.assertEqual(nice_of(lines[0]), 5, "nice of vcpu:worker (inherited from vcpu:base)\n" + run.describe())
        self.assertEqual(lines[1:], ["/vdisk/cache", "/vdisk/data", "/vdisk/scratch"], run.describe())
        # Every missing node of vgpio:sensors is skipped with a warning; hci0 grants nothing.
        self.assertIn("/dev/kern-test-sensor", run.err)
        for l in run.err.splitlines():
            self.assertTrue(l.startswith(("kern: note: ", "kern: warning: ")), "stray line: " + l)
        # persistent = true: the next box sees the file; the fresh data directory is gone.
        kept = [n for n in os.listdir(self.fast) if "persistent" in n]
        self.assertEqual(len(kept), 1, os.listdir(self.fast))
        again = self.box(["/bin/cat", "/vdisk/cache/f"], flags=["vdisk:cache", "--config", cfg])
        self.assertExit(again, 0)
        self.assertEqual(again.out, "kept\n")
        self.assertEqual(os.listdir(self.fast), kept, "the non-persistent vdisk:data directory must be removed")
        # The positive control: without the profile the workload runs at the caller's nice.
        plain = self.box(["/bin/cat", "/proc/self/stat"], flags=["--allow-uncapped"])
        self.assertExit(plain, 0)
        self.assertEqual(nice_of(plain.out), os.nice(0))

    def test_a_persistent_vdisk_planted_as_a_symlink_is_refused(self):
        # The persistent directory sits in the disk's directory, which others may write to: a
        # symlink planted under its name must not be followed into the box (125, nothing run,
        # the target untouched); the same profile with the name free works (the control).
        cfg = self.upstream()
        target = self.dir()
        planted = os.path.join(self.fast, "kern-%d-persistent-cache" % os.getuid())
        os.symlink(target, planted)
        run = self.box(["/bin/sh", "-c", "echo ran > /vdisk/cache/f"], flags=["vdisk:cache", "--config", cfg])
        self.assertExit(run, 125)
        self.assertIn("is not a directory of this user", run.err, run.describe())
        self.assertEqual(os.listdir(target), [], "the planted symlink's target was written to")
        self.assertTrue(os.path.islink(planted))
        os.unlink(planted)
        ok = self.box(["/bin/sh", "-c", "echo ran > /vdisk/cache/f"], flags=["vdisk:cache", "--config", cfg])
        self.assertExit(ok, 0)
        self.assertFalse(os.path.islink(planted))
        self.assertTrue(os.path.isdir(planted), os.listdir(self.fast))

    def test_a_persistent_vdisk_swapped_after_its_check_is_not_bound(self):
        # The disk's directory is world-writable and not sticky: another user (a subordinate
        # uid of the test user, through unshare --map-auto) swaps the persistent directory with
        # a directory of its own, over and over (renameat2 RENAME_EXCHANGE). A box must bind
        # the directory whose owner was checked, never the other user's: nothing a box writes
        # may land in the other user's directory.
        shutil = __import__("shutil")
        self.require("uid-range", bool(self.s.host.uid_range) and shutil.which("unshare") is not None,
                     "no subordinate uids for the test user: " + self.s.host.uid_range.detail)
        disk = tempfile.mkdtemp(prefix="kern-vdisk-race-", dir="/tmp")
        self.addCleanup(shutil.rmtree, disk, True)
        os.chmod(disk, 0o777)
        cfg = self.config('[[disk]]\nname = "disk:shared"\npath = "%s"\n\n'
                          '[[vdisk]]\nname = "cache"\nbackend = "disk:shared"\nsize = "1g"\npersistent = true\n' % disk)
        first = self.box(["/bin/sh", "-c", "echo first > /vdisk/cache/first"], flags=["vdisk:cache", "--config", cfg])
        self.assertExit(first, 0)
        mine = "kern-%d-persistent-cache" % os.getuid()
        self.assertTrue(os.path.isfile(os.path.join(disk, mine, "first")))
        attacker = (
            "import ctypes, os, sys, time\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "os.chdir(sys.argv[1])\n"
            "os.mkdir('theirs', 0o777); os.chmod('theirs', 0o777)\n"
            "print(os.stat('theirs').st_uid, os.stat('theirs').st_ino, flush=True)\n"
            "end = time.monotonic() + float(sys.argv[3])\n"
            "while time.monotonic() < end:\n"
            "    libc.renameat2(-100, sys.argv[2].encode(), -100, b'theirs', 2)\n"
            "    libc.renameat2(-100, sys.argv[2].encode(), -100, b'theirs', 2)\n")
        cleanup = "import os,shutil,sys; os.chdir(sys.argv[1]); shutil.rmtree('theirs', True)"
        ns = ["unshare", "--user", "--map-auto", "--setuid", "0", "--setgid", "0", "/usr/bin/python3", "-c"]
        self.addCleanup(subprocess.run, ns + [cleanup, disk])
        proc = subprocess.Popen(ns + [attacker, disk, mine, "40"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        self.addCleanup(proc.kill)
        owner, ino = (int(x) for x in (proc.stdout.readline() or b"-1 -1").split())
        self.assertNotIn(owner, (-1, os.getuid()), "the other user's directory is not another user's")

        def landed():
            # The other user's directory by its inode: the two names swap all the time.
            for n in ("theirs", mine):
                try:
                    fd = os.open(os.path.join(disk, n), os.O_RDONLY | os.O_DIRECTORY)
                except OSError:
                    continue
                try:
                    if os.fstat(fd).st_ino == ino:
                        return sorted(f for f in os.listdir(fd) if f.startswith("box-"))
                finally:
                    os.close(fd)
            return []

        started = refused = 0
        end = time.monotonic() + 30
        i = 0
        while time.monotonic() < end and i < 400 and not landed():
            i += 1
            run = self.box(["/bin/sh", "-c", "echo %d > /vdisk/cache/box-%d" % (i, i)],
                           flags=["vdisk:cache", "--config", cfg])
            if run.rc == 0:
                started += 1
            else:
                refused += 1
        proc.kill()
        proc.wait()
        print("vdisk race: %d boxes started, %d refused" % (started, refused))
        self.assertEqual(landed(), [], "boxes wrote into the other user's directory "
                         "(%d of %d boxes started)" % (started, started + refused))
        self.assertGreater(started, 0, "no box started while the name was swapped: the test shows nothing")

    def test_nice_is_the_workloads_own(self):
        cfg = self.config("[[vcpu]]\nname = \"n\"\nbackend = \"host\"\nnice = 5\n")
        run = self.box(["/bin/sh", "-c", "cat /proc/self/stat; cat /proc/1/stat"],
                       flags=["vcpu:n", "--config", cfg, "--allow-uncapped"])
        self.assertExit(run, 0)
        workload, init = run.out.splitlines()
        self.assertEqual(nice_of(workload), 5, run.describe())
        self.assertEqual(nice_of(init), os.nice(0), "box init keeps the caller's nice")

    def test_a_negative_nice_is_said_to_be_out_of_reach(self):
        import resource
        self.require("no-rlimit-nice", resource.getrlimit(resource.RLIMIT_NICE)[0] < 20 - (-5),
                     "RLIMIT_NICE lets this user lower its nice value")
        cfg = self.config("[[vcpu]]\nname = \"n\"\nbackend = \"host\"\nnice = -5\n")
        val = self.kern("validate", cfg)
        self.assertExit(val, 0)
        self.assertIn("kern: note: %s:4:1: [[vcpu]] nice -5: partly in effect" % cfg, val.err)
        run = self.box(["/bin/cat", "/proc/self/stat"], flags=["vcpu:n", "--config", cfg, "--allow-uncapped"])
        self.assertExit(run, 0)
        self.assertEqual(nice_of(run.out), os.nice(0))
        self.assertIn("kern: warning: vcpu:n: nice -5: the processes keep nice %d" % os.nice(0), run.err)

    def test_caps_of_the_profiles_in_the_cgroup(self):
        self.require("cgroup", self.s.host.cgroup, "no delegated cgroup v2: memory.max and cpuset.cpus cannot be read back")
        self.require("cgroup", "cpuset" in self.s.host.cgroup_controllers, "the cpuset controller is not delegated")
        cfg = self.upstream()
        run = self.box(["/bin/sh", "-c", "cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/cpuset.cpus"],
                       flags=["vcpu:worker", "--config", cfg])
        self.assertExit(run, 0)
        self.assertEqual(run.out.split(), [str(1 << 30), "0"], run.describe())

    def test_vdisk_iops_and_bandwidth_become_io_max_in_the_plan(self):
        cfg = self.upstream()
        st = os.stat(self.fast)
        self.require("block-disk", os.major(st.st_dev) != 0,
                     "the test directory is on a file system without a block device: no io.max to plan")
        show = self.box(["/bin/true"], flags=["vdisk:data", "--config", cfg, "--show-config"])
        self.assertExit(show, 0)
        io = [l for l in show.out.splitlines() if l.startswith("io_max: ")]
        self.assertEqual(len(io), 1, show.describe())
        for part in ("rbps=%d" % (100 << 20), "wbps=%d" % (100 << 20), "riops=1000", "wiops=1000"):
            self.assertIn(part, io[0])
        # A flag for the same device wins over the profile.
        disk = io[0].split()[1]
        dev = "/dev/block/" + disk
        if os.path.exists(dev):
            flag = self.box(["/bin/true"], flags=["vdisk:data", "--config", cfg, "--show-config",
                                                  "--device-read-iops", dev + ":7"])
            self.assertExit(flag, 0)
            self.assertIn("riops=7", [l for l in flag.out.splitlines() if l.startswith("io_max: ")][0])

    def test_vdisk_io_max_in_the_cgroup(self):
        self.require("cgroup", self.s.host.cgroup and "io" in self.s.host.cgroup_controllers,
                     "the io controller is not delegated: io.max cannot be read back")
        cfg = self.upstream()
        self.require("block-disk", os.major(os.stat(self.fast).st_dev) != 0,
                     "the test directory is on a file system without a block device")
        run = self.box(["/bin/cat", "/sys/fs/cgroup/io.max"], flags=["vdisk:data", "--config", cfg])
        self.assertExit(run, 0)
        self.assertIn("riops=1000", run.out)

    # ---- refusals

    def test_typos_are_125_with_file_line_column_and_did_you_mean(self):
        cfg = self.config("[kern]\nlog_levl = \"info\"\n\n[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nexetnds = \"b\"\n")
        run = self.box(["/bin/true"], flags=["vcpu:a", "--config", cfg])
        self.assertKernError(run, '%s:2:1: [kern]: unknown key "log_levl" (did you mean "log_level"?)' % cfg)
        self.assertIn("and 1 more", run.err)
        val = self.kern("validate", cfg)
        self.assertExit(val, 1)
        self.assertIn('kern: error: %s:7:1: [[vcpu]]: unknown key "exetnds" (did you mean "extends"?)' % cfg, val.err)

    def test_extends_inherits_and_cycles_are_refused(self):
        cfg = self.config("[[vcpu]]\nname = \"base\"\nbackend = \"host\"\nnice = 7\nmemory = \"1 GB\"\n\n"
                          "[[vcpu]]\nname = \"child\"\nbackend = \"host\"\nextends = \"base\"\n")
        show = dict(l.split(": ", 1) for l in self.box(["/bin/true"], flags=["vcpu:child", "--config", cfg,
                                                                            "--show-config"]).out.splitlines()
                    if ": " in l)
        self.assertEqual((show.get("nice"), show.get("memory_max")), ("7", str(1 << 30)), show)
        cyc = self.config("[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nextends = \"b\"\n\n"
                          "[[vcpu]]\nname = \"b\"\nbackend = \"host\"\nextends = \"a\"\n")
        run = self.box(["/bin/true"], flags=["vcpu:a", "--config", cyc])
        self.assertKernError(run, "%s:9:1: [[vcpu]] extends: a cycle: a -> b -> a" % cyc)
        unknown = self.config("[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nextends = \"bsae\"\n\n"
                              "[[vcpu]]\nname = \"base\"\nbackend = \"host\"\n")
        run = self.box(["/bin/true"], flags=["vcpu:a", "--config", unknown])
        self.assertKernError(run, '%s:4:1: [[vcpu]] extends: no [[vcpu]] named "bsae" (did you mean "base"?)' % unknown)

    def test_size_spellings(self):
        cfg = self.config("".join("[[vcpu]]\nname = \"%s\"\nbackend = \"host\"\nmemory = \"%s\"\n\n" % (n, v)
                                  for n, v in (("a", "256 MB"), ("b", "256MB"), ("c", "256m"), ("d", "1 GB"))))
        seen = {}
        for n in "abcd":
            run = self.box(["/bin/true"], flags=["vcpu:" + n, "--config", cfg, "--show-config"])
            self.assertExit(run, 0)
            seen[n] = [l for l in run.out.splitlines() if l.startswith("memory_max: ")][0]
        self.assertEqual(seen, {"a": "memory_max: %d" % (256 << 20), "b": "memory_max: %d" % (256 << 20),
                                "c": "memory_max: %d" % (256 << 20), "d": "memory_max: %d" % (1 << 30)})
        flag = self.box(["/bin/true"], flags=["-m", "256 MB", "--show-config"])
        self.assertExit(flag, 0)
        self.assertIn("memory_max: %d" % (256 << 20), flag.out)

    # ---- the uncapped warning

    def test_warn_uncapped_false_quietens_only_the_default_caps(self):
        self.require("no-cgroup", not self.s.host.cgroup,
                     "this host gives boxes a cgroup: there is no uncapped warning to quieten")
        quiet = self.config("[kern]\nwarn_uncapped = false\n\n[[vcpu]]\nname = \"m\"\nbackend = \"host\"\nmemory = \"64m\"\n")

        def warnings(run):
            return [l for l in run.err.splitlines() if l.startswith("kern: warning: ") and "cgroup" in l]

        control = self.box(["/bin/true"])
        self.assertExit(control, 0)
        self.assertEqual(len(warnings(control)), 1, "no kern.toml: the default warning\n" + control.describe())
        for how, flags, env in (("KERN_CONFIG", [], {"KERN_CONFIG": quiet}), ("--config", ["--config", quiet], {})):
            run = self.box(["/bin/true"], flags=flags, env=env)
            self.assertExit(run, 0)
            self.assertEqual(run.err, "", "%s with warn_uncapped = false, default caps\n%s" % (how, run.describe()))
            asked = self.box(["/bin/true"], flags=flags + ["-m", "64m"], env=env)
            self.assertExit(asked, 0)
            self.assertEqual(len(warnings(asked)), 1, "a flag asked for a cap\n" + asked.describe())
            self.assertIn("memory.max 64 MiB", warnings(asked)[0])
            prof = self.box(["/bin/true"], flags=flags + ["vcpu:m"] + ([] if flags else ["--config", quiet]), env=env)
            self.assertExit(prof, 0)
            self.assertEqual(len(warnings(prof)), 1, "a profile asked for a cap\n" + prof.describe())
            self.assertIn("memory.max 64 MiB", warnings(prof)[0])
        # warn_uncapped = true (or absent) keeps it.
        loud = self.config("[kern]\nwarn_uncapped = true\n")
        run = self.box(["/bin/true"], env={"KERN_CONFIG": loud})
        self.assertEqual(len(warnings(run)), 1, run.describe())


if __name__ == "__main__":
    kerntest.main()
