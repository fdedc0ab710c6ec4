"""`kern ps`: one line per live box or kernel, each ending in a newline however long its
command; a warm kernel is listed as KIND kernel with a short command (not its driver's
source); --json carries the same kind."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kernel_client  # noqa: E402
import kerntest  # noqa: E402
from kernel_testcase import KernelTestCase  # noqa: E402

kernel_client.prepare_shared_rootfs()

ELLIPSIS = "\u2026"


def rows(out):
    """The lines of a table, asserting it ends in a newline; header first."""
    assert out.endswith("\n"), repr(out[-80:])
    return out[:-1].split("\n")


class PsRowsTest(kerntest.KernTestCase):

    def test_long_commands_are_cut_with_an_ellipsis_one_row_each(self):
        self.use_private_runtime_dir()
        long_word = "x" * 700
        boxes = []
        for tag in ("long1", "long2"):
            sp = self.spawn_box(["/bin/sh", "-c", "sleep 60", long_word + tag])
            self.assertEqual(len(sp.wait_started()), 2, "a box did not start")
            boxes.append(sp)
        short = self.spawn_box(["/bin/sleep", "61"])
        self.assertEqual(len(short.wait_started()), 2)
        ps = self.kern("ps")
        self.assertExit(ps, 0)
        lines = rows(ps.out)
        self.assertEqual(len(lines), 4, "header plus one row per box:\n" + ps.out[:2000])
        self.assertEqual(lines[0].split(), ["NAME", "KIND", "PID", "AGE", "IMAGE", "COMMAND"])
        by_name = {l.split()[0]: l for l in lines[1:]}
        self.assertEqual(sorted(by_name), sorted(sp.name for sp in boxes + [short]))
        for sp in boxes:
            line = by_name[sp.name]
            self.assertEqual(line.split()[1], "box")
            self.assertTrue(line.endswith(ELLIPSIS), line)
            self.assertLess(len(line), 200, line)
            self.assertIn("/bin/sh -c sleep 60 xxx", line)
        self.assertTrue(by_name[short.name].endswith("/bin/sleep 61"), by_name[short.name])
        # --no-trunc prints every command whole, still one line each; --json has it whole too.
        whole = self.kern("ps", "--no-trunc")
        lines = rows(whole.out)
        self.assertEqual(len(lines), 4)
        for sp in boxes:
            tag = "long1" if sp is boxes[0] else "long2"
            self.assertTrue(any(l.endswith(long_word + tag) for l in lines), whole.out[:200])
        js = json.loads(self.kern("ps", "--json").out)
        self.assertEqual(sorted(e["command"] for e in js),
                         sorted(["/bin/sh -c sleep 60 " + long_word + "long1", "/bin/sh -c sleep 60 " + long_word + "long2",
                                 "/bin/sleep 61"]))
        self.assertEqual({e["kind"] for e in js}, {"box"})


class PsKernelTest(KernelTestCase):

    def test_a_warm_kernel_is_listed_as_a_kernel(self):
        self.use_private_runtime_dir()
        name = self.s.new_name("k")
        run = self.kern("kernel", "start", name, "--rootfs", self.root, timeout=90)
        self.assertExit(run, 0)
        self.addCleanup(self.kern, "kernel", "stop", name)
        ps = self.kern("ps")
        self.assertExit(ps, 0)
        lines = rows(ps.out)
        self.assertEqual(len(lines), 2, ps.out[:2000])
        cells = lines[1].split(None, 5)
        self.assertEqual(cells[0], name)
        self.assertEqual(cells[1], "kernel", lines[1])
        self.assertEqual(cells[5], "python kernel: python3", lines[1])
        js = json.loads(self.kern("ps", "--json").out)
        self.assertEqual([(e["name"], e["kind"], e["command"]) for e in js],
                         [(name, "kernel", "python kernel: python3")])


if __name__ == "__main__":
    kerntest.main()
