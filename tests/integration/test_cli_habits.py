"""The command line as a Docker or Podman user types it (issue 12): a bare word after a flag
starts the command, unknown verbs and flags get a suggestion, kern help and kern version."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


class CommandWordsTest(kerntest.KernTestCase):
    """Item 1: `kern box --image busybox date` runs date, as `docker run` would."""

    def test_bare_word_after_a_flag_runs_as_the_command(self):
        run = self.kern("box", "--rootfs", self.s.rootfs, "echo", "hello", "-n", "--", "x")
        self.assertEqual(run.rc, 0, run.describe())
        # echo got every word after its own, the flag-like ones and "--" included.
        self.assertEqual(run.out, "hello -n -- x\n", run.describe())
        run = self.kern("box", "-q", "--rootfs", self.s.rootfs, "/bin/sh", "-c", "exit 7")
        self.assertExit(run, 7)

    def test_a_name_after_a_flag_with_a_separator_is_named_as_such(self):
        """Issue 21 item 10: with "--" given, `web` after -d is not the command."""
        name = self.s.new_name()
        run = self.kern("box", "-d", name, "--rootfs", self.s.rootfs, "--", "/bin/sleep", "30")
        self.assertKernError(run, '"%s" after "-d" is not the command' % name,
                             "the box name goes right after box", "kern box %s -d --rootfs" % name)
        self.assertNotIn("give exactly one of", run.err, run.describe())
        self.assertNotIn(name, self.registered_boxes())

    def test_sdk_argv_keeps_its_meaning(self):
        name = self.s.new_name()
        run = self.kern("box", name, "--rootfs", self.s.rootfs, "--", "/bin/sh", "-c", "hostname")
        self.assertEqual(run.rc, 0, run.describe())
        self.assertEqual(run.out.strip(), name, "the bare word after box is the name\n" + run.describe())
        # A name and then another bare word before any flag is still refused with the hint.
        run = self.kern("box", name, "date", "--rootfs", self.s.rootfs)
        self.assertKernError(run, "after the box name")


class VerbsAndFlagsTest(kerntest.KernTestCase):
    """Item 2: unknown verbs and flags are named with a suggestion; help and version."""

    def error_lines(self, run):
        lines = run.err.splitlines()
        self.assertTrue(lines and lines[0].startswith("kern: error: "), run.describe())
        self.assertTrue(all(l.startswith(("kern: error: ", "kern: hint: ")) for l in lines), run.describe())
        self.assertEqual(run.out, "", run.describe())
        return lines

    def test_unknown_verb_is_named_with_a_suggestion(self):
        run = self.kern("imags")
        self.assertExit(run, 2)
        self.assertEqual(self.error_lines(run), ['kern: error: unknown command "imags"',
                                                 'kern: hint: did you mean "images"?'])
        run = self.kern("frobnicate", "--image", "x")
        self.assertExit(run, 2)
        self.assertEqual(self.error_lines(run), ['kern: error: unknown command "frobnicate"',
                                                 'kern: hint: kern help lists the commands'])

    def test_unknown_flag_gets_did_you_mean(self):
        run = self.kern("box", "--rootfs", self.s.rootfs, "--imagee", "busybox", "--", "/bin/true")
        self.assertKernError(run, 'unknown flag "--imagee" for kern box')
        self.assertIn('kern: hint: did you mean "--image"?', run.err, run.describe())
        run = self.kern("validate", "--quiett")
        self.assertExit(run, 2)
        self.assertEqual(self.error_lines(run), ['kern: error: unknown flag "--quiett" for kern validate',
                                                 'kern: hint: did you mean "--quiet"?'])

    def test_docker_words_say_what_kern_has_instead(self):
        """Issue 21 item 15: no unrelated did-you-mean, no "A subcommand is required"."""
        run = self.kern("run", "--rm", "-it", "busybox", "sh")
        self.assertKernError(run, 'unknown flag "--rm" for kern run')
        self.assertIn("docker's run is kern box here: kern box -it --image busybox -- sh", run.err, run.describe())
        for argv, code, hint in ((["compose"], 2, "kern compose --help"), (["image", "push", "x"], 2, "kern push sends"),
                                 (["image", "ls"], 2, "kern images lists the images"),
                                 (["-v"], 2, "kern --version"), (["system", "prune"], 2, "kern gc"),
                                 (["image"], 2, "prune")):
            run = self.kern(*argv)
            self.assertExit(run, code)
            lines = self.error_lines(run)
            self.assertIn(hint, run.err, run.describe())
            for wrong in ("A subcommand is required", "did you mean"):
                self.assertNotIn(wrong, run.err, run.describe())
            self.assertEqual(len(lines), 2, run.describe())

    def test_help_and_no_verb(self):
        run = self.kern("help")
        self.assertExit(run, 0)
        for verb in ("box", "images", "version"):
            self.assertIn(verb, run.out, run.describe())
        run = self.kern("help", "box")
        self.assertExit(run, 0)
        self.assertIn("--rootfs", run.out, run.describe())
        # The help of a command that does not exist is refused, not the parent's help.
        run = self.kern("image", "foo", "--help")
        self.assertExit(run, 2)
        self.assertEqual(self.error_lines(run), ["kern: error: unknown command \"image foo\"",
                                                 "kern: hint: kern image has: prune, inspect, verify"])
        run = self.kern()
        self.assertExit(run, 2)
        self.assertEqual(self.error_lines(run), ["kern: error: no command given",
                                                 "kern: hint: kern help lists the commands"])

    def test_version_text_json_and_flag(self):
        run = self.kern("version")
        self.assertExit(run, 0)
        lines = run.out.splitlines()
        self.assertRegex(lines[0], r"^kern \d+\.\d+\.\d+$", run.describe())
        keys = dict(l.split(": ", 1) for l in lines[1:])
        self.assertEqual(sorted(keys), ["build", "commit", "features", "libseccomp"], run.describe())
        self.assertRegex(keys["libseccomp"], r"^\d+\.\d+\.\d+ ", run.describe())
        self.assertRegex(keys["commit"], r"^([0-9a-f]{7,}(-dirty)?|unknown)$", run.describe())
        self.assertIn("seccomp-allowlist", keys["features"].split())
        flag = self.kern("--version")
        self.assertExit(flag, 0)
        self.assertEqual(flag.out, run.out, "kern --version says what kern version says")
        js = self.kern("version", "--json")
        self.assertExit(js, 0)
        doc = json.loads(js.out)
        self.assertEqual(doc["commit"], keys["commit"])
        self.assertEqual(doc["build_type"], keys["build"])
        self.assertEqual(doc["libseccomp"], keys["libseccomp"].split()[0])
        self.assertEqual(doc["features"], keys["features"].split())
        self.assertEqual(lines[0], "kern " + doc["version"])


class ScriptWithoutShebangTest(kerntest.KernTestCase):
    """Item 3: an executable file without "#!" runs with /bin/sh, as execvp runs it (was 126)."""

    def test_script_without_shebang_runs_with_sh(self):
        d = os.path.join(self.s.work, kerntest.unique_marker("script"))
        os.mkdir(d)
        os.chmod(d, 0o755)
        script = os.path.join(d, "hello")
        with open(script, "w") as f:
            f.write('echo "script $0 $1 $2"\nexit 3\n')
        os.chmod(script, 0o755)
        run = self.box(["/s/hello", "a", "b c"], flags=["-v", d + ":/s:ro"])
        self.assertExit(run, 3)
        self.assertEqual(run.out, "script /s/hello a b c\n", run.describe())
        # Found along $PATH, too.
        run = self.box(["hello", "x"], flags=["-v", d + ":/s:ro", "-e", "PATH=/s:/bin"])
        self.assertExit(run, 3)
        self.assertEqual(run.out, "script /s/hello x \n", run.describe())
        # The control: a file that is not executable is still 126 (EACCES), not run by sh.
        os.chmod(script, 0o644)
        run = self.box(["/s/hello"], flags=["-v", d + ":/s:ro"])
        self.assertExit(run, 126)
        self.assertEqual(run.out, "", run.describe())


class TimeoutUnitsTest(kerntest.KernTestCase):
    """Item 4: --timeout takes 500ms, 2s, 1m (a bare number stays seconds), and says when it fired."""

    def test_milliseconds_and_the_note(self):
        run = self.box(["/bin/sleep", "30"], flags=["--timeout", "300ms"], timeout=20)
        self.assertExit(run, 143)
        self.assertLess(run.seconds, 1.5, "300ms is not 300 s\n" + run.describe())
        notes = [l for l in run.err.splitlines() if "timeout" in l]
        self.assertEqual(notes, ["kern: note: --timeout 300ms reached: sent SIGTERM to the box"], run.describe())
        # A box that ignores SIGTERM: the note says SIGKILL followed.
        run = self.box(["/bin/sh", "-c", 'trap "" TERM; while :; do sleep 0.1; done'],
                       flags=["--timeout", "0.2s"], timeout=20)
        self.assertExit(run, 137)
        self.assertIn("kern: note: --timeout 200ms reached: sent SIGTERM to the box, and SIGKILL 2 s later",
                      run.err, run.describe())
        # The control: a box that ends in time prints nothing of the timeout.
        run = self.box(["/bin/true"], flags=["--timeout", "1m"])
        self.assertExit(run, 0)
        self.assertNotIn("timeout", run.err, run.describe())

    def test_spellings_show_and_refuse(self):
        for given, shown in (("2", "2s"), ("2s", "2s"), ("500ms", "500ms"), ("1m", "60s"), ("0", "0")):
            run = self.box(["/bin/true"], flags=["--timeout", given, "--show-config"])
            self.assertExit(run, 0)
            self.assertIn("timeout: %s\n" % shown, run.out, run.describe())
        run = self.box(["/bin/true"], flags=["--timeout", "2x"])
        self.assertKernError(run, '--timeout: bad duration "2x"')


class DockerSpellingsTest(kerntest.KernTestCase):
    """Item 5 (part): --name, --entrypoint and --init as docker run has them; --privileged refused
    with its reason."""

    def test_name_entrypoint_init(self):
        name = self.s.new_name()
        run = self.kern("box", "--name", name, "--init", "--rootfs", self.s.rootfs, "hostname")
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), name, run.describe())
        run = self.kern("box", "--rootfs", self.s.rootfs, "--entrypoint", "/bin/echo", "hi", "there")
        self.assertExit(run, 0)
        self.assertEqual(run.out, "hi there\n", run.describe())
        run = self.kern("box", "--rootfs", self.s.rootfs, "--entrypoint", "", "/bin/echo", "plain")
        self.assertExit(run, 0)
        self.assertEqual(run.out, "plain\n", run.describe())

    def test_refusals(self):
        name = self.s.new_name()
        run = self.kern("box", name, "--name", "other", "--rootfs", self.s.rootfs, "--", "/bin/true")
        self.assertKernError(run, "two box names")
        run = self.kern("box", "--name", ".bad", "--rootfs", self.s.rootfs, "--", "/bin/true")
        self.assertKernError(run, 'invalid box name ".bad"')
        run = self.kern("box", "--privileged", "--rootfs", self.s.rootfs, "--", "/bin/true", started=True)
        self.assertKernError(run, "--privileged is refused")
        self.assertEqual(run.started, b"")


class VerbHintsTest(kerntest.KernTestCase):
    """Item 9 (part): a usage error's hint names the verb it was given to, not kern-box(1)."""

    def test_hint_fits_the_verb(self):
        run = self.kern("validate", "a", "b")
        self.assertExit(run, 2)
        self.assertIn("kern: hint: kern validate --help ", run.err, run.describe())
        self.assertNotIn("kern-box", run.err, run.describe())
        run = self.kern("kernel", "run")
        self.assertExit(run, 2)
        self.assertIn("kern: hint: kern kernel run --help lists its flags", run.err, run.describe())
        run = self.kern("box", "--rootfs", self.s.rootfs, "--pull", "sometimes", "--", "/bin/true")
        self.assertKernError(run)
        self.assertNotIn("man kern-box", run.err, run.describe())


class ApparmorTest(kerntest.KernTestCase):
    """Item 7 (refusal only): --apparmor and --security-opt apparmor= fail closed, nothing started."""

    def test_refused_closed(self):
        enabled = ""
        try:
            with open("/sys/module/apparmor/parameters/enabled") as f:
                enabled = f.read().strip()
        except OSError:
            pass
        for flags in (["--apparmor", "kern-test-profile"], ["--security-opt", "apparmor=kern-test-profile"]):
            marker = kerntest.unique_marker("aa")
            run = self.box(["/bin/echo", marker], flags=flags, started=True)
            self.assertKernError(run, "--apparmor kern-test-profile")
            self.assertIn("not enabled" if enabled != "Y" else "no such AppArmor profile", run.err, run.describe())
            self.assertEqual(run.started, b"")
            self.assertNothingLeft(marker)
        # The control: the same box without the flag runs.
        run = self.box(["/bin/echo", "ok"])
        self.assertEqual(run.out, "ok\n", run.describe())


if __name__ == "__main__":
    kerntest.main()
