"""Exit codes and stderr (kern-box(1)): the workload's own code, 127, 126, 128+N for a signal,
and 125 with a `kern: error: ` line, no started byte and nothing left behind (no registry dir,
no process) when kern fails before the workload runs."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


class WorkloadExitCodesTest(kerntest.KernTestCase):

    def test_zero(self):
        run = self.box(["/bin/true"], started=True)
        self.assertExit(run, 0)
        self.assertEqual(run.started[:1], b"\x01", run.describe())

    def test_own_code(self):
        for code in (1, 3, 42, 255):
            run = self.box(["/bin/sh", "-c", "exit %d" % code])
            self.assertExit(run, code)

    def test_output_passes_through_untouched(self):
        run = self.box(["/bin/sh", "-c", "printf 'out\\n'; printf 'err\\n' >&2"])
        self.assertExit(run, 0)
        self.assertEqual(run.out, "out\n")
        self.assertIn("err\n", run.err)

    def test_127_missing_command(self):
        for cmd in (["/bin/no-such-command"], ["no-such-command"], ["/no-such-dir/cmd"]):
            run = self.box(cmd, started=True)
            self.assertExit(run, 127, "command %s does not exist in the box" % cmd)
            self.assertEqual(run.started, b"", "a started byte for a box whose exec failed\n" + run.describe())
        # Positive control: a command found through the default PATH.
        ok = self.box(["true"])
        self.assertExit(ok, 0)

    def test_126_not_executable(self):
        for cmd in (["/bin/not-executable"], ["/bin"]):
            run = self.box(cmd, started=True)
            self.assertExit(run, 126, "%s exists but cannot be executed" % cmd)
            self.assertNotIn("should-not-run", run.out)
            self.assertEqual(run.started, b"", "a started byte for a box whose exec failed\n" + run.describe())

    def test_137_sigkill(self):
        run = self.box(["/bin/sh", "-c", "kill -KILL $$"])
        self.assertExit(run, 137)

    def test_143_sigterm(self):
        run = self.box(["/bin/sh", "-c", "kill -TERM $$"])
        self.assertExit(run, 143)

    def test_159_seccomp_kill(self):
        # busybox mount calls mount(2): the escape class is killed with SIGSYS.
        run = self.box(["/bin/mount", "-t", "tmpfs", "none", "/mnt"])
        self.assertExit(run, 159)
        # Positive control: the same binary doing harmless work is not killed.
        ok = self.box(["/bin/sh", "-c", "cat /proc/self/mounts >/dev/null"])
        self.assertExit(ok, 0)


class StartFailureTest(kerntest.KernTestCase):
    """Each case: exit 125, a `kern: error: ` line, no started byte, stdout empty, and no process
    and no registry directory left behind."""

    def start_failure(self, flags=(), env=None, rootfs=None, needles=()):
        marker = kerntest.unique_marker("fail")
        run = self.box(["/bin/sh", "-c", "sleep 30", marker], flags=flags, env=env, rootfs=rootfs,
                       started=True)
        self.assertKernError(run, *needles)
        self.assertEqual(run.started, b"", "started byte for a box that never started\n" + run.describe())
        self.assertNothingLeft(marker, "after " + " ".join(run.argv))
        return run

    def test_positive_control_same_command_starts(self):
        run = self.box(["/bin/sh", "-c", "exit 0", "x"], started=True)
        self.assertExit(run, 0)
        self.assertEqual(len(run.started), 2)
        self.assertEqual(self.registered_boxes(), [])

    def test_bad_flag(self):
        self.start_failure(flags=["--no-such-flag"], needles=["--no-such-flag"])

    def test_bad_flag_value(self):
        self.start_failure(flags=["--net", "bogus"])
        self.start_failure(flags=["--cap-drop", "CAP_NO_SUCH_THING"])

    def test_missing_rootfs(self):
        missing = os.path.join(self.s.work, "no-such-rootfs")
        self.start_failure(rootfs=missing, needles=[missing])

    def test_unknown_seccomp_value(self):
        self.start_failure(env={"KERN_SECCOMP": "bogus"}, needles=["KERN_SECCOMP"])

    def test_refused_volume_root(self):
        self.start_failure(flags=["-v", "/:/host"])

    def test_refused_volume_etc(self):
        self.start_failure(flags=["-v", "/etc:/hostetc:ro"], needles=["/etc"])

    def test_refused_volume_home(self):
        self.start_failure(flags=["-v", "%s:/home/me" % self.s.home], needles=[self.s.home])

    def test_unmapped_user(self):
        # Without --uid-range only the caller's own id (root in the box) is mapped.
        self.start_failure(flags=["-u", "1000:1000"])

    def test_second_bare_token(self):
        name = self.s.new_name()
        marker = kerntest.unique_marker("fail")
        # Before any flag, a second bare word is refused (after a flag it would start the command,
        # as in docker run: see test_cli_habits.py).
        run = self.kern("box", name, "echo", "--rootfs", self.s.rootfs, marker, started=True)
        self.assertKernError(run)
        self.assertIn("--", run.err, "the error should suggest the missing `--`\n" + run.describe())
        self.assertEqual(run.started, b"")
        self.assertNothingLeft(marker)


if __name__ == "__main__":
    kerntest.main()
