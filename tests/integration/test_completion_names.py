"""The completion scripts offer the names of the caller's boxes for the lifecycle verbs (what
`kern completion --list boxes` prints, warm kernels apart), as the unprivileged user: bash's
completion function driven through COMP_WORDS/COMP_CWORD as on TAB."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

BASH_DRIVER = r'''
source "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_kern
printf '%s\n' "${COMPREPLY[@]}"
'''


class CompletionNamesTest(kerntest.KernTestCase):

    def setUp(self):
        super().setUp()
        self.use_private_runtime_dir()
        script = os.path.join(self.s.work, "kern-completion-%d.bash" % os.getpid())
        run = self.kern("completion", "bash")
        self.assertExit(run, 0)
        with open(script, "w") as f:
            f.write(run.out)
        self.script = script
        self.addCleanup(os.unlink, script)

    def complete(self, *words):
        env = self.base_env()
        env["PATH"] = os.path.dirname(self.s.kern) + ":" + env["PATH"]
        run = subprocess.run(["bash", "-c", BASH_DRIVER, "drive", self.script] + list(words), env=env,
                             capture_output=True, text=True, timeout=60)
        self.assertEqual((run.returncode, run.stderr), (0, ""))
        return [w for w in run.stdout.splitlines() if w]

    def test_box_names_for_the_lifecycle_verbs(self):
        name = self.s.new_name("compl")
        run = self.box(["sleep", "60"], flags=["-d"], name=name, timeout=30)
        self.assertExit(run, 0)
        self.addCleanup(self.kern, "rm", "-f", name, timeout=30)
        listed = self.kern("completion", "--list", "boxes")
        self.assertExit(listed, 0)
        self.assertEqual(listed.out.splitlines(), [name])
        for verb in ("stop", "exec", "logs", "inspect", "rm"):
            self.assertEqual(self.complete("kern", verb, name[:6]), [name], verb)
        self.assertEqual(self.complete("kern", "kernel", "stop", ""), [], "a box is not a warm kernel")
        self.assertEqual(self.kern("completion", "--list", "kernels").out, "")
        bad = self.kern("completion", "--list", "bogus")
        self.assertExit(bad, 2)
        self.assertTrue(bad.err.startswith("kern: error: kern completion --list: \"bogus\" is not images, boxes,"
                                           " kernels or volumes\n"), bad.describe())

    def test_volume_names_for_volume_rm_and_inspect(self):
        vol = self.s.new_name("vol")
        self.assertExit(self.kern("volume", "create", vol), 0)
        self.addCleanup(self.kern, "volume", "rm", "-f", vol)
        listed = self.kern("completion", "--list", "volumes")
        self.assertExit(listed, 0)
        self.assertIn(vol, listed.out.splitlines())
        for verb in ("rm", "inspect"):
            self.assertEqual(self.complete("kern", "volume", verb, vol[:9]), [vol], verb)
        # The control: kern rm completes boxes, not volumes.
        self.assertEqual(self.complete("kern", "rm", vol[:9]), [], "a volume is not a box")


if __name__ == "__main__":
    kerntest.main()
