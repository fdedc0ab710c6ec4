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

    def test_sdk_argv_keeps_its_meaning(self):
        name = self.s.new_name()
        run = self.kern("box", name, "--rootfs", self.s.rootfs, "--", "/bin/sh", "-c", "hostname")
        self.assertEqual(run.rc, 0, run.describe())
        self.assertEqual(run.out.strip(), name, "the bare word after box is the name\n" + run.describe())
        # A name and then another bare word before any flag is still refused with the hint.
        run = self.kern("box", name, "date", "--rootfs", self.s.rootfs)
        self.assertKernError(run, "after the box name")


if __name__ == "__main__":
    kerntest.main()
