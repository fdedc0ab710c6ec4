#!/usr/bin/env python3
"""What kern runs before main (python3 stdlib unittest): no <iostream> initialiser but those of
yaml-cpp's archive members, and CLI11's validator objects in at most its two cli units
(cli/cli11.h, cli/CMakeLists.txt), read from the binary's symbols with nm; and the standard
streams still work where CLI11 prints (help, version).

  start_statics_test.py KERN CONTROL

CONTROL is a binary known to include <iostream> (a gtest unit binary): the same detector must
find its initialiser, so a pass cannot come from nm reading nothing."""
import os, re, subprocess, sys, unittest

KERN, CONTROL = sys.argv[1], sys.argv[2]
# A cross build's kern runs under the build's emulator (qemu-aarch64-static), as ctest runs its
# other programs; empty for a native build.
RUNNER = [os.environ["KERN_EMULATOR"]] if os.environ.get("KERN_EMULATOR") else []
del sys.argv[1:3]


def symbols(binary):
    out = subprocess.run(["nm", "-C", binary], capture_output=True, text=True, check=True).stdout
    return [line.split(None, 2)[-1] for line in out.splitlines() if line.strip()]


# A link-time optimised kern gives a file-local object of each unit a name of its own, which nm
# cannot demangle: std::__ioinit is then _ZStL8__ioinit.lto_priv.N, one per unit that had it.
IOINIT = re.compile(r"^(std::__ioinit|_ZStL8__ioinit)(\.lto_priv\.\d+)?$")
VALIDATOR = re.compile(r"^(CLI::ExistingFile|_ZN3CLIL12ExistingFileE)(\.lto_priv\.\d+)?$")


def iostream_inits(syms):
    return [s for s in syms if IOINIT.match(s)]


def yaml_cpp_iostream_inits(binary):
    """The initialisers that came with yaml-cpp (kern compose): its sources include <iostream>,
    and kern links its static archive. Counted from the linker map beside the binary (which
    archive members were linked) and nm of the archive (which of them carry one)."""
    try:
        with open(binary + ".map") as f:
            text = f.read()
    except OSError:
        return 0
    members = {}
    # The linker names the archive as its command line did: absolute (found on the system), or
    # relative to the directory it linked in, the binary's (the arm64 lane's unpacked archive).
    for archive, member in re.findall(r"(\S*libyaml-cpp\.a)\(([^)]+)\)", text):
        archive = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(binary)), archive))
        members.setdefault(archive, set()).add(member)
    count = 0
    for archive, linked in members.items():
        out = subprocess.run(["nm", "-A", "-C", archive], capture_output=True, text=True).stdout
        with_init = {line.split(":")[1] for line in out.splitlines() if line.endswith(" std::__ioinit")}
        count += len(with_init & linked)
    return count


class StartStatics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # binutils came with the compiler that built kern: without nm this fails, never skips
        cls.kern = symbols(KERN)

    def test_the_detector_sees_an_iostream_initialiser(self):
        self.assertTrue(iostream_inits(symbols(CONTROL)), "positive control: no std::__ioinit in " + CONTROL)

    def test_no_iostream_initialiser_in_kern(self):
        self.assertEqual(len(iostream_inits(self.kern)), yaml_cpp_iostream_inits(KERN),
                         "a unit of kern includes <iostream> (use cli/cli11.h)")

    def test_cli11_validators_in_at_most_two_units(self):
        copies = [s for s in self.kern if VALIDATOR.match(s)]
        self.assertGreaterEqual(len(copies), 1, "CLI11's validators not found: is the binary stripped?")
        self.assertLessEqual(len(copies), 2, f"{len(copies)} copies of CLI11's validators: a cli file is "
                             "compiled outside the two units")

    def test_help_and_version_print(self):
        for args in (["--help"], ["box", "--help"], ["--version"]):
            run = subprocess.run(RUNNER + [KERN] + args, capture_output=True, text=True, timeout=30)
            self.assertEqual(run.returncode, 0, (args, run.stderr))
            self.assertIn("kern", run.stdout, args)


if __name__ == "__main__":
    unittest.main()
