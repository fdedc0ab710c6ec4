"""What kern box does with the input a user or an image hands it (issue 8 items 1, 5, 6, 8, 16,
17, 18 and 21): -v options, kern's own directories, control characters in kern's output, big
environments, -it without a terminal, caps under --allow-uncapped, -q, and kern run's limit
flags checked as kern box's are."""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


class VolumeOptionsTest(kerntest.KernTestCase):
    """Item 1: the option field of -v is a comma list; it never becomes part of the path."""

    def source(self):
        d = os.path.join(self.s.work, kerntest.unique_marker("vol"))
        os.mkdir(d)
        return d

    def test_ro_with_relabel_option_is_read_only(self):
        self.require("no-selinux", not os.path.exists("/sys/fs/selinux/enforce"),
                     "SELinux is enabled: z/Z are refused here (see test_bad_options)")
        src = self.source()
        run = self.box(["/bin/sh", "-c", "test -d /srv && echo dir; touch /srv/x 2>/dev/null && echo wrote; "
                        "ls -d /srv:ro,z 2>/dev/null; echo end"], flags=["-v", src + ":/srv:ro,z"])
        self.assertEqual(run.rc, 0, run.describe())
        self.assertEqual(run.out.split(), ["dir", "end"], "a read-only bind at /srv\n" + run.describe())
        self.assertFalse(os.path.exists(os.path.join(src, "x")))
        # The positive control: rw (with Z) writes through to the host.
        run = self.box(["/bin/sh", "-c", "touch /srv/x && echo wrote"], flags=["-v", src + ":/srv:Z,rw"])
        self.assertEqual(run.out.split(), ["wrote"], run.describe())
        self.assertTrue(os.path.exists(os.path.join(src, "x")))

    def test_bad_options_are_refused_by_name(self):
        src = self.source()
        for opt, needle in (("RO", '"RO"'), ("rx", '"rx"'), ("ro,noexec", '"noexec"'), ("ro,", 'option ""'),
                            ("ro,rw", "not both")):
            run = self.box(["/bin/true"], flags=["-v", "%s:/srv:%s" % (src, opt)], started=True)
            self.assertKernError(run, needle)
            self.assertEqual(run.started, b"", "the box must not start for -v ...:%s" % opt)
        run = self.box(["/bin/true"], flags=["-v", src + ":/a:b:ro"])
        self.assertKernError(run, "containing ':'")
        if os.path.exists("/sys/fs/selinux/enforce"):
            self.assertKernError(self.box(["/bin/true"], flags=["-v", src + ":/srv:z"]), "SELinux")


class KernOwnDirectoriesTest(kerntest.KernTestCase):
    """Item 5: kern's config directory (registry credentials), store and state are never handed to a
    box, as a -v source or as --rootfs, whatever KERN_CONFIG and the XDG variables say."""

    def setUp(self):
        super().setUp()
        base = os.path.join(self.s.work, kerntest.unique_marker("dirs"))
        self.home = os.path.join(base, "home")
        self.default_cfg = os.path.join(self.home, ".config", "kern")
        self.xdg_cfg = os.path.join(self.s.config, "kern")
        self.elsewhere = os.path.join(base, "elsewhere")
        self.ok = os.path.join(base, "ok")
        for d in (self.default_cfg, self.xdg_cfg, self.elsewhere, self.ok):
            os.makedirs(d, exist_ok=True)
        for d in (self.default_cfg, self.xdg_cfg):
            with open(os.path.join(d, "auth.json"), "w") as f:
                f.write('{"auths":{}}')
        os.symlink(self.xdg_cfg, os.path.join(base, "alias"))
        self.alias = os.path.join(base, "alias")
        self.env = {"KERN_CONFIG": os.path.join(self.elsewhere, "kern.toml"), "HOME": self.home}

    def test_bind_of_config_directory_refused(self):
        for src in (self.xdg_cfg, os.path.join(self.xdg_cfg, "auth.json"), self.alias, self.default_cfg,
                    os.path.join(self.default_cfg, "auth.json"), self.s.config):
            run = self.box(["/bin/true"], flags=["-v", src + ":/c", "--show-config"], env=self.env)
            self.assertKernError(run, "kern's own directory")
        # The positive control: a directory of the user's own beside them.
        run = self.box(["/bin/true"], flags=["-v", self.ok + ":/c", "--show-config"], env=self.env)
        self.assertEqual(run.rc, 0, run.describe())
        self.assertIn("bind: %s:/c:rw" % self.ok, run.out)

    def test_rootfs_at_inside_or_containing_kern_dirs_refused(self):
        cache = os.path.join(self.s.cache, "kern")
        os.makedirs(cache, exist_ok=True)
        for root in (self.xdg_cfg, self.alias, self.default_cfg, self.s.config, cache, self.home):
            run = self.box(None, rootfs=root, flags=["--show-config"], env=self.env)
            self.assertKernError(run, "--rootfs", "kern's own directory")
        run = self.box(None, flags=["--show-config"], env=self.env)
        self.assertEqual(run.rc, 0, run.describe())


class ControlCharactersTest(kerntest.KernTestCase):
    """Item 6: C0, C1 and bytes that are not UTF-8 never reach the terminal from kern's own output."""

    RAW = (b"\x1b", b"\x07", b"\x9b", b"\xc2\x9b", b"\xff")

    def assertNoRaw(self, data, what, run):
        for raw in self.RAW:
            self.assertNotIn(raw, data, "%s carries %r raw\n%s" % (what, raw, run.describe()))

    def test_show_config_and_plan_escape_hostname_and_workdir(self):
        host = os.fsdecode(b"a\x1b]0;x\x07b\xc2\x9b31mc")
        for mode in ("--show-config", "--plan"):
            run = self.box(["/bin/true", os.fsdecode(b"\x9bJ")], flags=["-w", os.fsdecode(b"/w\xc2\x9b\xff"), mode])
            self.assertEqual(run.rc, 0, run.describe())
            self.assertNoRaw(run.out_b, mode, run)
            self.assertIn(b"/w\\xc2\\x9b\\xff", run.out_b, run.describe())
            # Such a hostname is refused (issue 21), and the refusal escapes it too.
            run = self.box(["/bin/true"], flags=["--hostname", host, mode])
            self.assertKernError(run, "--hostname")
            self.assertNoRaw(run.err_b, "stderr", run)
            self.assertIn(b"a\\x1b]0;x\\x07b\\xc2\\x9b31mc", run.err_b, run.describe())

    def test_error_lines_escape_c1_and_invalid_utf8(self):
        run = self.box(["/bin/true"], flags=["--net", os.fsdecode(b"x\xc2\x9b2J\x9b\xff")])
        self.assertKernError(run, "--net")
        self.assertNoRaw(run.err_b, "stderr", run)
        self.assertIn(b"x\\xc2\\x9b2J\\x9b\\xff", run.err_b, run.describe())

    def test_profile_token_value_from_kern_toml(self):
        cfg = os.path.join(self.s.work, kerntest.unique_marker("cfg") + ".toml")
        with open(cfg, "wb") as f:
            f.write(b'[[vcpu]]\nname = "p"\nbackend = "host"\ncpuset = "0\xc2\x9b2J"\n')
        run = self.box(["/bin/true"], flags=["vcpu:p", "--config", cfg])
        self.assertKernError(run)
        self.assertNoRaw(run.err_b, "stderr", run)


class EnvironmentSizeTest(kerntest.KernTestCase):
    """Item 8: the environment merge is linear and bounded (65536 variables, 1 MiB)."""

    def env_file(self, lines):
        path = os.path.join(self.s.work, kerntest.unique_marker("env"))
        with open(path, "w") as f:
            for i in range(lines):
                f.write("VARIABLE_%d=%d\n" % (i, i))
        return path

    def test_200k_line_env_file_refused_at_once(self):
        path = self.env_file(200000)
        t0 = time.monotonic()
        run = self.box(["/bin/true"], flags=["--env-file", path], timeout=180, started=True)
        took = time.monotonic() - t0
        self.assertKernError(run, "--env-file", "65536")
        self.assertEqual(run.started, b"")
        self.assertLess(took, 5.0, "200k env-file lines took %.1f s\n%s" % (took, run.describe()))

    def test_50k_variables_run_quickly(self):
        path = self.env_file(50000)
        t0 = time.monotonic()
        # (busybox sh itself takes about a second to start with 50k variables; kern's part is
        # a fraction of that.)
        run = self.box(["/bin/sh", "-c", 'echo "$VARIABLE_0 $VARIABLE_1 $VARIABLE_49999"'],
                       flags=["--env-file", path, "-e", "VARIABLE_0=last"], timeout=180)
        took = time.monotonic() - t0
        self.assertEqual(run.rc, 0, run.describe())
        self.assertEqual(run.out.split(), ["last", "1", "49999"], run.describe())
        self.assertLess(took, 10.0, "50k variables took %.1f s\n%s" % (took, run.describe()))


class TerminalInputTest(kerntest.KernTestCase):
    """Item 16: -it with an input that is not a terminal is refused at once, as docker run -it."""

    def test_it_with_a_pipe_is_refused_at_once(self):
        r, w = os.pipe()
        os.write(w, b"x\n")
        os.close(w)
        try:
            t0 = time.monotonic()
            run = self.box(["/bin/cat"], flags=["-it"], stdin=r, timeout=20, started=True)
        finally:
            os.close(r)
        self.assertKernError(run, "the input is not a terminal")
        self.assertEqual(run.started, b"")
        self.assertLess(time.monotonic() - t0, 5.0)
        self.assertEqual(self.registered_boxes(), [])
        run = self.box(["/bin/cat"], flags=["-i", "-t"], timeout=20)  # stdin is /dev/null
        self.assertKernError(run, "the input is not a terminal")

    def test_t_without_i_and_i_without_t_still_run(self):
        run = self.box(["/bin/echo", "hi"], flags=["-t"], timeout=20)
        self.assertEqual(run.rc, 0, run.describe())
        self.assertIn("hi", run.out)
        run = self.box(["/bin/cat"], flags=["-i"], stdin=subprocess.DEVNULL, timeout=20)
        self.assertEqual(run.rc, 0, run.describe())


class AllowUncappedTest(kerntest.KernTestCase):
    """Item 17: an explicit cap that cannot be enforced is named on stderr even under
    KERN_ALLOW_UNCAPPED; the default caps go silently."""

    def test_explicit_caps_named_or_enforced(self):
        run = self.box(["/bin/true"], flags=["-m", "64m", "--pids-limit", "10"],
                       env={"KERN_ALLOW_UNCAPPED": "1"}, report="flag")
        self.assertEqual(run.rc, 0, run.describe())
        started = [r for r in run.report_records() if r.get("event") == "started"][0]
        enforcement = started["enforcement"]
        warnings = [l for l in run.err.splitlines() if l.startswith("kern: warning: ")]
        for res, knob in (("memory", "memory.max"), ("pids", "pids.max")):
            if enforcement[res] != "enforced":
                self.assertTrue([w for w in warnings if knob in w],
                                "%s is %s and no warning names %s\n%s"
                                % (res, enforcement[res], knob, run.describe()))

    def test_default_caps_silent_where_there_is_no_cgroup(self):
        run = self.box(["/bin/true"], env={"KERN_ALLOW_UNCAPPED": "1"}, report="flag")
        self.assertEqual(run.rc, 0, run.describe())
        started = [r for r in run.report_records() if r.get("event") == "started"][0]
        self.require("no-cgroup", started["enforcement"]["memory"] != "enforced",
                     "this host gives boxes a cgroup; the uncapped path cannot be reached")
        self.assertEqual([l for l in run.err.splitlines() if l.startswith("kern:")], [], run.describe())
        # The same box asked for a cap: now it is named.
        run = self.box(["/bin/true"], flags=["-m", "64m"], env={"KERN_ALLOW_UNCAPPED": "1"})
        self.assertIn("memory.max", run.err, run.describe())


class QuietTest(kerntest.KernTestCase):
    """Item 18: -q is KERN_QUIET for one run (no notes, no warnings); the security-profile line is
    printed either way (kern's documented contract (its man pages): KERN_QUIET changes nothing but notes and warnings)."""

    def test_q_silences_notes(self):
        loud = self.box(["/bin/true"], flags=["--cpus", "4096", "--show-config"])
        self.assertEqual(loud.rc, 0, loud.describe())
        self.assertIn("kern: note: ", loud.err, "the positive control: the clamp note\n" + loud.describe())
        quiet = self.box(["/bin/true"], flags=["-q", "--cpus", "4096", "--show-config"])
        self.assertEqual(quiet.rc, 0, quiet.describe())
        self.assertNotIn("kern: note: ", quiet.err, quiet.describe())

    def test_security_profile_line_stays(self):
        line = "kern: security-profile=untrusted: seccomp=allowlist cap-drop=ALL read-only"
        for flags, env in ((["-q"], {}), ([], {"KERN_QUIET": "1"})):
            run = self.box(["/bin/true"], flags=flags + ["--security-profile", "untrusted", "--show-config"], env=env)
            self.assertEqual(run.rc, 0, run.describe())
            self.assertIn(line, run.err.splitlines(), run.describe())


class RunLimitFlagsTest(kerntest.KernTestCase):
    """Item 21: kern run checks its limits with kern box's builder: the variables count too."""

    def test_require_and_uncapped_conflict_through_variables(self):
        for args, env in ((["--allow-uncapped"], {"KERN_REQUIRE_LIMITS": "1"}),
                          (["--require-limits"], {"KERN_ALLOW_UNCAPPED": "1"}),
                          ([], {"KERN_REQUIRE_LIMITS": "1", "KERN_ALLOW_UNCAPPED": "1"})):
            marker = kerntest.unique_marker("run")
            run = self.kern("run", *args, "--", "/bin/echo", marker, env=env)
            self.assertKernError(run, "exclude each other")
            self.assertNotIn(marker, run.out)
            box = self.box(["/bin/echo", marker], flags=args, env=env)
            self.assertKernError(box, "exclude each other")

    def test_run_clamps_cpus_as_box_does(self):
        run = self.kern("run", "--cpus", "4096", "--", "/bin/true", env={"KERN_ALLOW_UNCAPPED": "1"})
        self.assertEqual(run.rc, 0, run.describe())
        self.assertIn("clamped", run.err, run.describe())


class BytesAndBoundsTest(kerntest.KernTestCase):
    """Issue 21 items 18 and 25: bytes that are not UTF-8 in -e, --env-file and -w are carried to
    the workload exactly (kern's records encode them; nlohmann used to abort kern with 134 and
    leave a record), a hostname is RFC 1123 characters, an empty -m/-w/-u is refused, a 128 KiB
    argument is not echoed back whole, --env-file of a FIFO is refused at once, and a quote in a
    --mount field cannot swallow ,ro."""

    def test_non_utf8_environment_and_workdir_reach_the_workload(self):
        env_file = os.path.join(self.s.work, kerntest.unique_marker("env") + ".env")
        with open(env_file, "wb") as f:
            f.write(b"B=\xfe\xc0x\n")
        os.chmod(env_file, 0o644)
        wd = b"/tmp/w\xff\xc2\x9b"
        run = self.box(["/bin/sh", "-c", 'printf "%s|%s|" "$A" "$B"; pwd'],
                       flags=["-e", os.fsdecode(b"A=\xff\xfe1"), "--env-file", env_file, "-w", os.fsdecode(wd)])
        self.assertExit(run, 0)
        self.assertEqual(run.out_b, b"\xff\xfe1|\xfe\xc0x|" + wd + b"\n", run.describe())
        self.assertEqual(self.registered_boxes(), [], "a box record was left behind")
        # A detached box's lockdown record carries them to kern exec, byte for byte.
        name = self.s.new_name()
        run = self.kern("box", name, "-d", "--rootfs", self.s.rootfs, "-e", os.fsdecode(b"A=\xff\xfe1"),
                        "-w", os.fsdecode(wd), "--", "/bin/sleep", "30")
        self.assertExit(run, 0)
        self.addCleanup(self.kern, "rm", "-f", name)
        run = self.kern("exec", name, "--", "/bin/sh", "-c", 'printf "%s|" "$A"; pwd')
        self.assertExit(run, 0)
        self.assertEqual(run.out_b, b"\xff\xfe1|" + wd + b"\n", run.describe())

    def test_hostname_is_rfc1123_characters(self):
        name = self.s.new_name()
        run = self.box(["/bin/hostname"], flags=["--hostname", "web-1.example"], name=name)
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), "web-1.example", "the positive control\n" + run.describe())
        for bad in ("a\tb", "a\x1b[2Jb", "x\ny", os.fsdecode(b"h\xff"), "a_b", "-lead", "a..b"):
            run = self.box(["/bin/true"], flags=["--hostname", bad])
            self.assertKernError(run, "--hostname", "RFC 1123")
        self.assertEqual(self.registered_boxes(), [])

    def test_empty_memory_workdir_and_user_are_refused(self):
        for flag in ("-m", "-w", "-u", "--memory", "--workdir", "--user"):
            run = self.box(["/bin/true"], flags=[flag, ""])
            self.assertKernError(run, "the value is empty")
        run = self.box(["/bin/true"], flags=["-m", "64m", "-w", "/tmp", "-u", "0"])
        self.assertExit(run, 0)

    def test_a_128k_argument_is_not_echoed_back_whole(self):
        for flags in (["-m", "a" * 131000], ["--hostname", "b" * 131000], ["-e", "=" + "c" * 131000],
                      ["--mount", "type=bind,src=/x,dst=/" + "d" * 131000 + "\"x"]):
            run = self.box(["/bin/true"], flags=flags)
            self.assertExit(run, 125)
            self.assertLess(len(run.err), 6000, "stderr of %d bytes for %s" % (len(run.err), flags[0]))
            self.assertIn("bytes)", run.err, run.describe())
        run = self.box(["/bin/true"], name="e" * 131000)
        self.assertKernError(run, "invalid box name", "(131000 bytes)")
        self.assertLess(len(run.err), 1000, run.describe())

    def test_env_file_fifo_is_refused_at_once(self):
        fifo = os.path.join(self.s.work, kerntest.unique_marker("fifo"))
        os.mkfifo(fifo, 0o644)
        run = self.box(["/bin/true"], flags=["--env-file", fifo], timeout=20)
        self.assertKernError(run, "--env-file", "a FIFO, not a regular file")
        self.assertLess(run.seconds, 10, run.describe())

    def test_a_quote_inside_a_mount_field_is_refused(self):
        src = os.path.join(self.s.work, kerntest.unique_marker("src"))
        os.mkdir(src)
        os.chmod(src, 0o777)
        run = self.box(["/bin/sh", "-c", "touch /x/f && echo wrote"],
                       flags=["--mount", 'type=bind,src=%s,dst=/x"y,ro"' % src])
        self.assertKernError(run, "a quote inside a field")
        self.assertFalse(os.path.exists(os.path.join(src, "f")))
        # docker's quoting of a whole field keeps working, and its ,ro stays its own field.
        run = self.box(["/bin/sh", "-c", "touch /x/f 2>/dev/null || echo refused"],
                       flags=["--mount", 'type=bind,"src=%s",dst=/x,ro' % src])
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), "refused", run.describe())


class UnlockedSeccompSaysSoTest(kerntest.KernTestCase):
    """Issue 21 item 25: a box under KERN_SECCOMP=denylist or allowlist-audit says it is not
    locked down on stderr even under -q or KERN_QUIET; the allowlist (the control) stays silent."""

    def test_denylist_and_audit_warn_under_quiet(self):
        for mode, needle in (("denylist", "KERN_SECCOMP=denylist"), ("allowlist-audit", "NOT locked down")):
            for flags, env in ((["-q"], {}), ([], {"KERN_QUIET": "1"})):
                env = dict(env, KERN_SECCOMP=mode, KERN_ALLOW_UNCAPPED="1")
                run = self.box(["/bin/true"], flags=flags, env=env)
                self.assertExit(run, 0)
                lines = [l for l in run.err.splitlines() if l.startswith("kern: warning: ") and needle in l]
                self.assertEqual(len(lines), 1, "%s %s\n%s" % (mode, flags or env, run.describe()))
        run = self.box(["/bin/true"], flags=["-q"], env={"KERN_ALLOW_UNCAPPED": "1"})
        self.assertExit(run, 0)
        self.assertEqual(run.err, "", run.describe())


class DockerHabitsTest(kerntest.KernTestCase):
    """Issue 21 item 15: -e VAR and a bare VAR in --env-file copy the caller's value (left out
    when the caller has none), -v NAME:/dst with a NAME docker refuses says why, and the
    no-cgroup warning is one short line with sizes for people and how to silence it."""

    def test_bare_env_names_copy_the_callers_value(self):
        env_file = os.path.join(self.s.work, kerntest.unique_marker("env") + ".env")
        with open(env_file, "w") as f:
            f.write("FROM_FILE\nNOT_IN_CALLER_2\n")
        os.chmod(env_file, 0o644)
        run = self.box(["/bin/sh", "-c", "env | sort"],
                       flags=["-e", "FROM_FLAG", "-e", "NOT_IN_CALLER", "-e", "EMPTY", "--env-file", env_file],
                       env={"FROM_FLAG": "one two", "FROM_FILE": "3", "EMPTY": ""})
        self.assertExit(run, 0)
        lines = run.out.splitlines()
        for want in ("FROM_FLAG=one two", "FROM_FILE=3", "EMPTY="):
            self.assertIn(want, lines, run.describe())
        self.assertFalse([l for l in lines if l.startswith("NOT_IN_CALLER")], run.describe())
        # Nothing else of the caller's environment comes in.
        self.assertFalse([l for l in lines if l.startswith("XDG_")], run.describe())

    def test_bad_volume_name_is_named_not_enoent(self):
        run = self.box(["/bin/true"], flags=["-v", "my@vol:/data"])
        self.assertKernError(run, "invalid volume name")
        self.assertNotIn("ENOENT", run.err, run.describe())

    def test_no_cgroup_warning_is_one_short_line(self):
        self.require("no-cgroup", not self.s.host.cgroup,
                     "this host gives boxes a cgroup: there is no uncapped warning to read")
        run = self.box(["/bin/true"])
        self.assertExit(run, 0)
        lines = [l for l in run.err.splitlines() if l.startswith("kern: warning: ")]
        self.assertEqual(len(lines), 1, run.describe())
        self.assertLessEqual(len(lines[0]), 170, lines[0])
        self.assertIn("warn_uncapped = false", lines[0])
        run = self.box(["/bin/true"], flags=["-m", "64m", "--pids-limit", "100"])
        self.assertIn("memory.max 64 MiB, pids.max 100 not in force", run.err, run.describe())


if __name__ == "__main__":
    kerntest.main()
