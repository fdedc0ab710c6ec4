"""New ways into a box give the same answers as the box itself (issue 21 items 15, 18, 25 carried
over to kern exec): every input of the table goes once through `kern box` (a foreground box of
the busybox root) and once through `kern exec` into a detached box of the same root, and both
must end in the same class of exit code and, when the command ran, show it the same environment,
working directory and ids; when kern refused, the same `kern: error:` line. kern kernel start
(kern box's flags) and kern run (its limit flags) refuse what kern box refuses with the same
line."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

# What the process sees, one field a line; the environment sorted. HOSTNAME is the box's name,
# which differs between the two boxes by construction, so it is left out.
SHOW = ['/bin/sh', '-c', 'env | sort | grep -v "^HOSTNAME="; printf "cwd=%s\\n" "$(pwd)"; '
        'printf "ids=%s:%s\\n" "$(id -u)" "$(id -g)"']

CALLER = {"FROM_CALLER": "one two", "EMPTY": ""}


def b(s):
    return os.fsdecode(s) if isinstance(s, bytes) else s


def exit_class(rc):
    if rc == 0:
        return "ran"
    if rc == 125:
        return "kern refused"
    if rc in (126, 127):
        return "could not execute"
    return "exit %d" % rc


class ExecParityTest(kerntest.KernTestCase):

    def setUp(self):
        super().setUp()
        work = os.path.join(self.s.work, kerntest.unique_marker("parity"))
        os.mkdir(work)
        os.chmod(work, 0o755)
        self.files = {}

        def file(key, data):
            path = os.path.join(work, key)
            with open(path, "wb") as f:
                f.write(data)
            os.chmod(path, 0o644)
            self.files[key] = path

        file("good.env", b"# a comment\n\nK=1\nFROM_CALLER\nNOT_IN_CALLER\n  SPACED=x y\nB=\xfe\xc0x\n")
        file("bad.env", b"OK=1\n=x\n")
        file("blank.env", b"A B=1\n")
        fifo = os.path.join(work, "fifo.env")
        os.mkfifo(fifo, 0o644)
        self.files["fifo.env"] = fifo
        self.files["missing.env"] = os.path.join(work, "missing.env")
        # The detached box every exec goes into, of the same root as the foreground boxes.
        self.target = self.s.new_name()
        run = self.kern("box", self.target, "-d", "--rootfs", self.s.rootfs, "--", "/bin/sleep", "600")
        self.assertExit(run, 0)
        self.addCleanup(self.kern, "rm", "-f", self.target)

    def flags_of(self, flags):
        return [self.files.get(f, f) if isinstance(f, str) else b(f) for f in flags]

    def through_box(self, flags, env):
        return self.box(SHOW, flags=self.flags_of(flags), env=env)

    def through_exec(self, flags, env):
        return self.kern("exec", *self.flags_of(flags), self.target, "--", *SHOW, env=env)

    def answer(self, run):
        cls = exit_class(run.rc)
        if run.rc == 0:
            return cls, run.out_b
        errors = [l for l in run.err.splitlines() if l.startswith("kern: error: ")]
        return cls, errors[:1]

    # (flags, caller's environment): file keys above stand for their paths; bytes are carried as
    # such through os.fsdecode.
    TABLE = [
        (["-e", "FROM_CALLER"], CALLER),
        (["-e", "NOT_IN_CALLER"], CALLER),
        (["-e", "EMPTY"], CALLER),
        (["-e", "A=1", "-e", "A=2"], {}),
        (["-e", b"A=\xff\xfe1"], {}),
        (["-e", b"\xffKEY=v"], {}),
        (["-e", ""], {}),
        (["-e", "=x"], {}),
        (["-e", "A B=1"], {}),
        (["-e", "=" + "c" * 131000], {}),
        (["--env-file", "good.env"], CALLER),
        (["--env-file", "good.env", "-e", "K=from-flag"], CALLER),
        (["--env-file", "bad.env"], {}),
        (["--env-file", "blank.env"], {}),
        (["--env-file", "fifo.env"], {}),
        (["--env-file", "missing.env"], {}),
        (["-w", "/tmp//"], {}),
        (["-w", b"/tmp/w\xff\xc2\x9b"], {}),
        (["-w", ""], {}),
        (["-w", "tmp"], {}),
        (["-w", "/tmp/../etc"], {}),
        (["--workdir", ""], {}),
        (["-u", "0"], {}),
        (["-u", "0:0"], {}),
        (["-u", ""], {}),
        (["--user", ""], {}),
        (["-u", "0:"], {}),
        (["-u", ":0"], {}),
        (["-u", "0:x"], {}),
        (["-u", "-1"], {}),
        (["-u", "1234567890"], {}),
        (["-u", "root"], {}),
        (["-u", "root:0"], {}),
        (["-u", "nosuchuser"], {}),
        (["-u", "1000"], {}),
    ]

    def test_box_and_exec_answer_alike(self):
        differ = []
        for flags, env in self.TABLE:
            by_box = self.answer(self.through_box(flags, env))
            by_exec_run = self.through_exec(flags, env)
            by_exec = self.answer(by_exec_run)
            shown = [f if len(f) < 60 else f[:20] + "...(%d)" % len(f) for f in self.flags_of(flags)]
            if by_box != by_exec:
                differ.append("%r:\n  kern box:  %r\n  kern exec: %r" % (shown, by_box, by_exec))
            elif by_box[0] == "kern refused":
                # A refusal says what was wrong, on one line and before anything was started.
                self.assertEqual(by_exec_run.out, "", by_exec_run.describe())
                self.assertTrue(by_box[1], "%r: no kern: error: line\n%s" % (shown, by_exec_run.describe()))
        self.assertFalse(differ, "kern box and kern exec answer differently:\n" + "\n".join(differ))

    def test_kernel_start_and_run_refuse_as_box_does(self):
        # kern kernel start builds its box as kern box does: every input kern box refuses is
        # refused with the same line before any interpreter starts. (The inputs kern box takes
        # would start a python kernel, which the busybox root has not.)
        refused = 0
        for flags, env in self.TABLE:
            by_box = self.answer(self.through_box(flags, env))
            if by_box[0] != "kern refused":
                continue
            refused += 1
            run = self.kern("kernel", "start", self.s.new_name(), "--rootfs", self.s.rootfs,
                            *self.flags_of(flags), env=env)
            self.assertEqual(self.answer(run), by_box, run.describe())
        self.assertGreater(refused, 15)
        # kern run has kern box's limit flags only: an empty -m is the same refusal.
        by_box = self.answer(self.through_box(["-m", ""], {}))
        run = self.kern("run", "-m", "", "--", "/bin/true")
        self.assertEqual(by_box[0], "kern refused")
        self.assertEqual(self.answer(run), by_box, run.describe())

    def test_the_table_has_both_outcomes(self):
        # The comparison above could hold with both verbs refusing everything: the effects are
        # checked here once, by value.
        run = self.through_exec(["--env-file", "good.env", "-e", b"A=\xff\xfe1", "-w", b"/tmp/w\xff\xc2\x9b"],
                                CALLER)
        self.assertExit(run, 0)
        lines = run.out_b.splitlines()
        for want in (b"K=1", b"FROM_CALLER=one two", b"SPACED=x y", b"B=\xfe\xc0x", b"A=\xff\xfe1",
                     b"cwd=/tmp/w\xff\xc2\x9b", b"ids=0:0"):
            self.assertIn(want, lines, run.describe())
        self.assertFalse([l for l in lines if l.startswith(b"NOT_IN_CALLER")], run.describe())
        run = self.through_exec(["-e", "=x"], {})
        self.assertKernError(run, "-e", "has an empty name")


if __name__ == "__main__":
    kerntest.main()
