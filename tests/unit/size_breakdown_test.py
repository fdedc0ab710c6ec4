#!/usr/bin/env python3
"""tests/bench/size_breakdown.py on a linker map of GNU ld's shape (python3 stdlib unittest)."""
import os, sys, tempfile, unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import size_breakdown  # noqa: E402

CLI = "_ZN3CLI3App5parseEv"
JSON = "_ZN8nlohmann16json_abi_v3_11_210basic_jsonIvE4dumpEv"
MAP = f"""Archive member included to satisfy reference by file (symbol)

Discarded input sections

 .text._ZN4kern6unusedEv
                0x0000000000000000      0x999 CMakeFiles/kern_cli.dir/app.cc.o

Memory Configuration

Linker script and memory map

LOAD CMakeFiles/kern.dir/main.cc.o

.dynsym         0x0000000000000400      0x300
 .dynsym        0x0000000000000400      0x300 /usr/lib/x86_64-linux-gnu/Scrt1.o
.text           0x0000000000001000     0x1a00
 *(.text.unlikely .text.*_unlikely .text.unlikely.*)
 .text._ZN4kern3runEv
                0x0000000000001000      0x100 CMakeFiles/kern_cli.dir/app.cc.o
                0x0000000000001000                kern::run()
 .text.{CLI}
                0x0000000000001100      0x200 CMakeFiles/kern_cli.dir/app.cc.o
 .text.{JSON}
                0x0000000000001300      0x100 CMakeFiles/kern_cli.dir/app.cc.o
 *fill*         0x0000000000001400       0x10 
 .text          0x0000000000001410      0x800 /usr/lib/gcc/x86_64-linux-gnu/12/libstdc++.a(locale-inst.o)
 .text.memcpy   0x0000000000001c10      0x400 /usr/lib/x86_64-linux-gnu/libc.a(memcpy.o)
 .text          0x0000000000002010      0x100 /usr/lib/gcc/x86_64-linux-gnu/12/libgcc_eh.a(unwind-dw2.o)
 .text          0x0000000000002110       0xf0 /usr/lib/x86_64-linux-gnu/rcrt1.o

.rodata         0x0000000000003000      0x300
 .rodata.str1.1
                0x0000000000003000      0x400 CMakeFiles/kern_cli.dir/app.cc.o
 .rodata        0x0000000000003400      0x100 /usr/lib/x86_64-linux-gnu/libc.a(vfprintf.o)

.eh_frame       0x0000000000004000      0x400
 .eh_frame      0x0000000000004000      0x400 CMakeFiles/kern_cli.dir/app.cc.o

.bss            0x0000000000005000     0x9000
 .bss           0x0000000000005000     0x9000 /usr/lib/x86_64-linux-gnu/libc.a(malloc.o)

.debug_info     0x0000000000000000   0x100000
 .debug_info    0x0000000000000000   0x100000 CMakeFiles/kern_cli.dir/app.cc.o
"""


class SizeBreakdownTest(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".map")
        with os.fdopen(fd, "w") as f:
            f.write(MAP)

    def tearDown(self):
        os.unlink(self.path)

    def test_each_part_gets_its_sections(self):
        total, estimated, members = size_breakdown.breakdown(self.path)
        # app.cc.o's named sections: kern 0x100, CLI11 0x200, nlohmann 0x100 (1:2:1). Its unnamed
        # ones (strings merged down to 0x200 to fit .rodata's 0x300, and 0x400 of .eh_frame) are
        # split in that proportion.
        self.assertEqual(total["CLI11"], 0x200 + 0x600 // 2)
        self.assertEqual(total["nlohmann"], 0x100 + 0x600 // 4)
        self.assertEqual(total["kern"], 0x100 + 0x600 - 0x600 // 2 - 0x600 // 4)
        self.assertEqual(estimated["CLI11"], 0x300)
        self.assertEqual(total["libstdc++"], 0x800)
        self.assertEqual(total["glibc"], 0x400 + 0xf0 + 0x100)
        self.assertEqual(total["libgcc"], 0x100)
        # The dynamic symbol table is the linker's, not the start file's the map names.
        self.assertEqual(total["linker"], 0x10 + 0x300)
        self.assertEqual(members[("libstdc++", "locale-inst.o")], 0x800)

    def test_discarded_bss_and_debug_sections_are_not_counted(self):
        total, _, members = size_breakdown.breakdown(self.path)
        # The loaded file-backed image: .dynsym 0x300, .text 0x1200 of inputs, .rodata 0x300,
        # .eh_frame 0x400.
        self.assertEqual(sum(total.values()), 0x300 + 0x1200 + 0x300 + 0x400)
        self.assertNotIn(("glibc", "malloc.o"), members)

    def test_summary_names_every_part(self):
        line = size_breakdown.summary(self.path)
        for part in ("kern", "CLI11", "nlohmann", "libstdc++", "glibc", "libgcc"):
            self.assertIn(part + " ", line)

    def test_a_file_that_is_no_map_is_refused(self):
        with open(self.path, "w") as f:
            f.write("not a map\n")
        with self.assertRaises(SystemExit):
            size_breakdown.breakdown(self.path)


if __name__ == "__main__":
    unittest.main()
