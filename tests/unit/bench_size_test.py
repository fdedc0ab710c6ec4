#!/usr/bin/env python3
"""The stripped-size rows of tests/bench/start_bench.py (python3 stdlib unittest): each binary is
stripped by the strip of its own ELF machine (the host's strip reads no arm64 file), and an arm64
kern given with --arm64-kern gets a row of its own beside x86_64's. The strips are stand-ins that
say which file they were given and write a file of a known size."""
import os, shutil, subprocess, sys, tempfile, unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import start_bench  # noqa: E402

FAKE_STRIP = """#!/bin/sh
# strip -o OUT IN: records its name and input, writes SIZE bytes.
echo "$(basename "$0") $3" >> "%(log)s"
head -c %(size)d /dev/zero > "$2"
"""


def elf_header(machine):
    """The first 64 bytes of a little-endian ELF64 file of that e_machine."""
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    head[18:20] = machine.to_bytes(2, "little")
    return bytes(head)


class SizeRowsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kern-size-test-")
        self.bin = os.path.join(self.tmp, "bin")
        os.mkdir(self.bin)
        self.log = os.path.join(self.tmp, "strip.log")
        for name, size in (("x86_64-linux-gnu-strip", 4_000_000), ("aarch64-linux-gnu-strip", 4_500_000)):
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write(FAKE_STRIP % {"log": self.log, "size": size})
            os.chmod(path, 0o755)
        self.saved_path = os.environ["PATH"]
        os.environ["PATH"] = self.bin + ":" + self.saved_path
        self.files = {}
        for name, machine in (("kern-x86", 0x3E), ("kern-arm64", 0xB7), ("kern-riscv", 0xF3)):
            self.files[name] = os.path.join(self.tmp, name)
            with open(self.files[name], "wb") as f:
                f.write(elf_header(machine))

    def tearDown(self):
        os.environ["PATH"] = self.saved_path
        shutil.rmtree(self.tmp)

    def strips(self):
        with open(self.log) as f:
            return [l.split() for l in f.read().splitlines()]

    def test_the_machine_is_read_from_the_header(self):
        self.assertEqual(start_bench.elf_machine(self.files["kern-x86"]), 0x3E)
        self.assertEqual(start_bench.elf_machine(self.files["kern-arm64"]), 0xB7)
        self.assertIsNone(start_bench.elf_machine(__file__))  # not an ELF file

    def test_an_arm64_kern_is_stripped_by_aarch64s_strip_and_has_its_row(self):
        rows, notes = start_bench.size_rows(self.files["kern-x86"], self.tmp, arm64=self.files["kern-arm64"])
        self.assertEqual(notes, [])
        self.assertEqual(self.strips(), [["x86_64-linux-gnu-strip", self.files["kern-x86"]],
                                         ["aarch64-linux-gnu-strip", self.files["kern-arm64"]]])
        self.assertEqual([r[0] for r in rows], ["stripped binary (x86_64)", "stripped binary (arm64)"])
        self.assertEqual(rows[0][1], "4.00 MB")
        self.assertEqual(rows[1][1:5], ("4.50 MB", "", "x86_64 4.00", "1.12x x86_64"))

    def test_without_arm64_kern_one_row(self):
        rows, notes = start_bench.size_rows(self.files["kern-x86"], self.tmp)
        self.assertEqual([r[0] for r in rows], ["stripped binary (x86_64)"])

    def test_a_file_of_another_machine_is_named_not_measured(self):
        rows, notes = start_bench.size_rows(self.files["kern-x86"], self.tmp, arm64=self.files["kern-riscv"])
        self.assertEqual(len(rows), 1)
        self.assertEqual(notes, ["--arm64-kern %s: not an aarch64 ELF file" % self.files["kern-riscv"]])

    def test_size_only_prints_the_rows_and_runs_nothing(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "start_bench.py")
        run = subprocess.run([sys.executable, script, "--kern", self.files["kern-x86"], "--arm64-kern",
                              self.files["kern-arm64"], "--size-only"], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("stripped binary (arm64)", run.stdout)
        self.assertEqual(len(self.strips()), 2)


if __name__ == "__main__":
    unittest.main()
