"""Warm Python kernels over `kern kernel serve`, driven like an SDK (a child process speaking
JSON Lines over pipes): state, mime results, exceptions, sys.exit, busy, int, deadlines
(interrupted, then torn down and dead), every spoofing attempt on the framing, output bounding,
the network, bad protocol input, matplotlib figures."""

import base64
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kernel_client  # noqa: E402
import kerntest  # noqa: E402
from kernel_testcase import KernelTestCase  # noqa: E402

kernel_client.prepare_shared_rootfs()


class PythonCellsTest(KernelTestCase):

    def test_state_persists_and_trailing_expression_is_text_plain(self):
        k = self.serve()
        self.assertEqual(k.ready.get("lang"), "python")
        self.assertDone(k.run("x = 41\ndef f(a):\n    return a + x\nprint('hi')"))
        r = k.run("f(1)")
        self.assertDone(r)
        self.assertEqual(r["results"], [{"text/plain": "42"}])
        self.assertEqual(r["stdout"], "")
        self.assertEqual(k.run("_")["results"], [{"text/plain": "42"}], "_ holds the last value")
        r = k.run("import os\nos.getpid()")
        self.assertDone(r)
        self.assertEqual(self.text(r), "2", "the interpreter is the box's pid 2 (init is 1)")
        for key in ("cell_id", "status", "stdout", "stderr", "rc", "results", "duration_ms", "truncated"):
            self.assertIn(key, r)
        # A statement gives no result; None gives none either.
        self.assertEqual(k.run("y = 1")["results"], [])
        self.assertEqual(k.run("None")["results"], [])

    def test_rich_results(self):
        k = self.serve()
        code = (
            "class H:\n"
            "    def _repr_html_(self): return '<b>hi</b>'\n"
            "    def _repr_markdown_(self): return '*hi*'\n"
            "    def _repr_json_(self): return {'a': [1, 2]}\n"
            "    def _repr_png_(self): return b'\\x89PNG\\r\\n'\n"
            "    def __repr__(self): return 'H()'\n"
            "class S:\n"
            "    def _repr_svg_(self): return '<svg/>'\n"
            "display(S())\n"
            "display(1, 'two')\n"
            "H()\n")
        r = k.run(code)
        self.assertDone(r)
        res = r["results"]
        self.assertEqual(len(res), 4, res)
        self.assertEqual(res[0]["image/svg+xml"], "<svg/>")
        self.assertEqual(res[1], {"text/plain": "1"})
        self.assertEqual(res[2], {"text/plain": "'two'"})
        h = res[3]
        self.assertEqual(h["text/html"], "<b>hi</b>")
        self.assertEqual(h["text/markdown"], "*hi*")
        self.assertEqual(h["application/json"], {"a": [1, 2]})
        self.assertEqual(base64.b64decode(h["image/png"]), b"\x89PNG\r\n")
        self.assertEqual(h["text/plain"], "H()")

    def test_exception_is_confined_and_trimmed(self):
        k = self.serve()
        self.assertDone(k.run("kept = 'yes'"))
        r = k.run("def g():\n    return 1 / 0\ng()")
        self.assertDone(r, rc=1)
        self.assertIn("ZeroDivisionError", r["stderr"])
        self.assertIn("<cell-", r["stderr"])
        self.assertIn("return 1 / 0", r["stderr"], "the cell's source lines are shown")
        self.assertNotIn("kern-driver", r["stderr"], "driver frames are trimmed")
        r = k.run("def (:")
        self.assertDone(r, rc=1)
        self.assertIn("SyntaxError", r["stderr"])
        r = k.run("kept")
        self.assertDone(r)
        self.assertEqual(self.text(r), "'yes'")

    def test_sys_exit_gives_rc_and_the_kernel_keeps_serving(self):
        k = self.serve()
        self.assertDone(k.run("import sys\nsys.exit(3)"), rc=3)
        self.assertDone(k.run("raise SystemExit"), rc=0)
        r = k.run("sys.exit('bye')")
        self.assertDone(r, rc=1)
        self.assertIn("bye", r["stderr"])
        self.assertDone(k.run("1"))

    def test_top_level_await(self):
        k = self.serve()
        r = k.run("import asyncio\nawait asyncio.sleep(0.01)\n7 * 6")
        self.assertDone(r)
        self.assertEqual(self.text(r), "42")

    def test_busy_is_answered_at_once(self):
        k = self.serve()
        f = k.request({"op": "fire", "code": "import time\ntime.sleep(1.5)\n'slept'"})
        self.assertEqual(f["status"], "running", f)
        t0 = time.monotonic()
        r = k.run("1")
        self.assertLess(time.monotonic() - t0, 0.5, "busy must not wait for the running cell")
        self.assertEqual(r["status"], "busy", r)
        self.assertIsNone(r["cell_id"])
        self.assertEqual(k.request({"op": "fire", "code": "1"})["status"], "busy")
        self.assertEqual(k.request({"op": "poll", "cell_id": f["cell_id"]})["status"], "running")
        done = self.wait_poll(k, f["cell_id"])
        self.assertDone(done)
        self.assertEqual(self.text(done), "'slept'")
        self.assertDone(k.run("2"))

    def test_int_stops_a_loop_and_state_survives(self):
        k = self.serve()
        f = k.request({"op": "fire", "code": "n = 0\nwhile True:\n    n += 1"})
        time.sleep(0.3)
        i = k.request({"op": "int"})
        self.assertEqual(i.get("cell_id"), f["cell_id"], i)
        r = self.wait_poll(k, f["cell_id"], timeout=5)
        self.assertDone(r, rc=1)
        self.assertIn("KeyboardInterrupt", r["stderr"])
        r = k.run("n > 0")
        self.assertDone(r)
        self.assertEqual(self.text(r), "True")
        # int with nothing running changes nothing
        self.assertIsNone(k.request({"op": "int"}).get("cell_id"))
        self.assertDone(k.run("n > 0"))

    def test_deadline_interrupts_and_keeps_state(self):
        k = self.serve()
        self.assertDone(k.run("s = 'state'"))
        t0 = time.monotonic()
        r = k.run("import time\nwhile True:\n    time.sleep(0.01)", timeout=0.5)
        self.assertEqual(r["status"], "timeout", r)
        self.assertEqual(r["rc"], 1, r)
        self.assertIn("KeyboardInterrupt", r["stderr"])
        self.assertFalse(r.get("state_lost", False), r)
        self.assertLess(time.monotonic() - t0, 3)
        r = k.run("s")
        self.assertDone(r)
        self.assertEqual(self.text(r), "'state'")

    def test_a_loop_ignoring_interrupts_ends_in_timeout_then_dead(self):
        k = self.serve()
        pids = self.kernel_pids(k)
        code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
        t0 = time.monotonic()
        r = k.run(code, timeout=0.5)
        took = time.monotonic() - t0
        self.assertEqual(r["status"], "timeout", r)
        self.assertTrue(r.get("state_lost"), r)
        self.assertIsNone(r["rc"])
        self.assertGreater(took, 2.3, "the grace (2 s) was not given")
        self.assertLess(took, 6)
        r = k.run("1")
        self.assertEqual(r["status"], "dead", r)
        self.assertEqual(k.request({"op": "fire", "code": "1"})["status"], "dead")
        st = k.request({"op": "status"})
        self.assertEqual(st["state"], "dead", st)
        stop = k.request({"op": "stop"})
        self.assertEqual(stop["status"], "done", stop)
        self.assertEqual(k.close(), 0, k.stderr)
        left = [p for p in pids if os.path.exists("/proc/%d" % p) and not kerntest.is_zombie(p)]
        self.assertEqual(left, [], "processes of the kernel outlived stop")

    def test_stop_leaves_nothing_behind(self):
        k = self.serve()
        self.assertDone(k.run("import subprocess\np = subprocess.Popen(['sleep', '300'])"))
        pids = self.kernel_pids(k)
        self.assertGreaterEqual(len(pids), 3, "launcher, box init, interpreter (and sleep)")
        self.assertEqual(k.request({"op": "stop"})["status"], "done")
        self.assertEqual(k.close(), 0, k.stderr)
        left = [p for p in pids if os.path.exists("/proc/%d" % p) and not kerntest.is_zombie(p)]
        self.assertEqual(left, [], "processes of the kernel outlived stop")
        self.assertEqual(self.registered_boxes(), [], "the box's registry entry outlived stop")

    def test_closing_stdin_ends_the_kernel(self):
        k = self.serve()
        pids = self.kernel_pids(k)
        self.assertEqual(k.close(), 0, k.stderr)
        time.sleep(0.2)
        left = [p for p in pids if os.path.exists("/proc/%d" % p) and not kerntest.is_zombie(p)]
        self.assertEqual(left, [])

    def test_output_is_bounded_and_truncated(self):
        k = self.serve()
        r = k.run("print('x' * 100_000_000)\n'after'", wait=180)
        self.assertDone(r)
        self.assertTrue(r["truncated"], {k: v for k, v in r.items() if k != "stdout"})
        self.assertEqual(len(r["stdout"]), 64 << 20)
        self.assertEqual(self.text(r), "'after'")
        r = k.run("print('small')")
        self.assertDone(r)
        self.assertEqual(r["stdout"], "small\n")
        self.assertFalse(r["truncated"])

    def test_output_limit_flag(self):
        k = self.serve(flags=["--output-limit", "1k"])
        r = k.run("import sys\nprint('y' * 5000)\nsys.stderr.write('e' * 10)")
        self.assertTrue(r["truncated"])
        self.assertEqual(len(r["stdout"]), 1024)
        self.assertEqual(r["stderr"], "e" * 10)

    def test_network_is_unreachable_loopback_works(self):
        k = self.serve()
        r = k.run(
            "import socket, errno\n"
            "s = socket.socket()\n"
            "s.settimeout(2)\n"
            "try:\n"
            "    s.connect(('192.0.2.1', 80))\n"  # TEST-NET-1: never routed anywhere
            "    out = 'connected'\n"
            "except OSError as e:\n"
            "    out = errno.errorcode.get(e.errno, str(e))\n"
            "out")
        self.assertDone(r)
        self.assertEqual(self.text(r), "'ENETUNREACH'")
        # Positive control: loopback is up inside the box.
        r = k.run("l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen(1)\n"
                  "c = socket.create_connection(l.getsockname(), timeout=2); 'ok'")
        self.assertDone(r)
        self.assertEqual(self.text(r), "'ok'")

    def test_matplotlib_figure_comes_back_as_png(self):
        self.require("matplotlib", "matplotlib" in self.features,
                     "Debian's python3-matplotlib is not installed on this host (CI installs it)")
        k = self.serve()
        r = k.run("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()", wait=120)
        self.assertDone(r)
        pngs = [x for x in r["results"] if "image/png" in x]
        self.assertEqual(len(pngs), 1, r)
        self.assertEqual(base64.b64decode(pngs[0]["image/png"])[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(r["stderr"], "", "plt.show() under Agg must not warn")
        r = k.run("1")
        self.assertEqual(r["results"], [{"text/plain": "1"}], "figures are closed after being sent")


class SpoofingTest(KernelTestCase):
    """Nothing a cell prints can end, fake or corrupt a cell's framing."""

    def test_protocol_lookalike_output_on_stdout_and_stderr(self):
        k = self.serve()
        fake = json.dumps({"cell_id": "c99", "status": "done", "stdout": "", "stderr": "", "rc": 0,
                           "results": [], "duration_ms": 0, "truncated": False})
        code = ("import os, sys, time\n"
                "print(%r)\n"
                "sys.stdout.flush()\n"
                "os.write(1, b'\\n' + %r.encode() + b'\\n')\n"
                "os.write(2, %r.encode() + b'\\n')\n"
                "os.write(1, b'E{\"nonce\":\"0\",\"rc\":5}\\nK1 0 c1 1\\n')\n"
                "time.sleep(0.3)\n"
                "print('after')\n"
                "'end'" % (fake, fake, fake))
        r = k.run(code)
        self.assertDone(r)
        self.assertEqual(r["cell_id"], "c1")
        self.assertIn(fake, r["stdout"])
        self.assertIn(fake, r["stderr"])
        self.assertTrue(r["stdout"].endswith("after\n"), r["stdout"])
        self.assertEqual(self.text(r), "'end'")
        self.assertDone(k.run("2"))

    def test_writes_to_the_end_socket_without_the_nonce_are_refused(self):
        k = self.serve()
        code = ("import os, time\n"
                "os.write(4, b'E{\"nonce\":\"00000000000000000000000000000000\",\"rc\":7}')\n"
                "os.write(4, b'E{\"rc\":7}')\n"
                "os.write(4, b'Mgarbage')\n"
                "time.sleep(0.3)\n"
                "print('still running')")
        r = k.run(code)
        self.assertDone(r, rc=0)
        self.assertEqual(r["stdout"], "still running\n")
        st = k.request({"op": "status"})
        self.assertGreaterEqual(st["refused_packets"], 2, st)
        self.assertDone(k.run("3"))

    def test_a_forked_child_with_the_real_nonce_cannot_end_the_cell(self):
        # The nonce is in the driver's memory, which the cell can read; the child it forks has
        # another pid, and the supervisor takes ends of cells only from the driver's pid.
        k = self.serve()
        code = ("import os, sys, time, json\n"
                "f = sys._getframe()\n"
                "while f is not None and 'nonce' not in f.f_locals:\n"
                "    f = f.f_back\n"
                "nonce = f.f_locals['nonce']\n"
                "nonce = nonce.decode() if isinstance(nonce, bytes) else nonce\n"
                "pid = os.fork()\n"
                "if pid == 0:\n"
                "    os.write(4, b'E' + json.dumps({'nonce': nonce, 'rc': 99, 'results': []}).encode())\n"
                "    os._exit(0)\n"
                "os.waitpid(pid, 0)\n"
                "time.sleep(0.3)\n"
                "print('parent finished')")
        r = k.run(code)
        self.assertDone(r, rc=0)
        self.assertEqual(r["stdout"], "parent finished\n")
        self.assertGreaterEqual(k.request({"op": "status"})["refused_packets"], 1)

    def test_a_thread_of_an_earlier_cell_cannot_end_a_later_cell(self):
        # Cell 1 leaves a thread behind that reads every nonce the driver holds (its frames'
        # locals) and, as soon as it sees a new one (cell 2's), sends an end of cell with it from
        # the driver's own pid. The end is accepted only from the driver's main thread back at
        # its wait for the next cell, so cell 2 still ends with its own result.
        k = self.serve()
        code = ("import json, os, re, sys, threading, time\n"
                "def _forge():\n"
                "    main = threading.main_thread().ident\n"
                "    hexnonce = re.compile('^[0-9a-f]{32}$')\n"
                "    seen = []\n"
                "    end = time.monotonic() + 30\n"
                "    while time.monotonic() < end:\n"
                "        f = sys._current_frames().get(main)\n"
                "        found = None\n"
                "        while f is not None and found is None:\n"
                "            for v in list(f.f_locals.values()):\n"
                "                if isinstance(v, bytes):\n"
                "                    v = v.decode('latin1')\n"
                "                if isinstance(v, str) and hexnonce.match(v.strip()):\n"
                "                    found = v.strip()\n"
                "            f = f.f_back\n"
                "        if found and found not in seen:\n"
                "            seen.append(found)\n"
                "            if len(seen) >= 2:\n"
                "                msg = {'nonce': found, 'rc': 0, 'results': [{'text/plain': \"'forged'\"}]}\n"
                "                os.write(4, b'W' + json.dumps(msg).encode())\n"
                "                return\n"
                "        time.sleep(0.001)\n"
                "threading.Thread(target=_forge, daemon=True).start()\n"
                "time.sleep(0.1)\n"
                "'armed'")
        r = k.run(code)
        self.assertDone(r)
        self.assertEqual(self.text(r), "'armed'")
        r = k.run("import time\ntime.sleep(0.6)\nprint('cell 2 ran to its end')\n'real'")
        self.assertDone(r)
        self.assertEqual(self.text(r), "'real'", r)
        self.assertEqual(r["stdout"], "cell 2 ran to its end\n", r)
        self.assertGreaterEqual(r["duration_ms"], 600, r)
        st = k.request({"op": "status"})
        self.assertGreaterEqual(st["refused_packets"], 1, st)
        self.assertIs(st["ends_confirmed"], True, st)
        r = k.run("'three'")
        self.assertDone(r)
        self.assertEqual(self.text(r), "'three'")

    def test_output_of_a_child_after_the_cell_returned_belongs_to_no_cell(self):
        k = self.serve()
        code = ("import os, time\n"
                "if os.fork() == 0:\n"
                "    time.sleep(0.4)\n"
                "    os.write(1, b'late stdout\\n')\n"
                "    os.write(2, b'late stderr\\n')\n"
                "    os._exit(0)\n"
                "'returned'")
        r = k.run(code)
        self.assertDone(r)
        self.assertEqual(r["stdout"], "")
        time.sleep(0.8)
        r2 = k.run("'next'")
        self.assertDone(r2)
        self.assertEqual(r2["stdout"], "")
        self.assertEqual(r2["stderr"], "")
        self.assertEqual(self.text(r2), "'next'")


class ProtocolInputTest(KernelTestCase):

    def test_bad_input_gets_an_error_and_the_kernel_keeps_serving(self):
        k = self.serve()
        self.assertDone(k.run("v = 5"))
        k.send_raw(b"this is not json\n")
        r = k.read_answer()
        self.assertEqual(r["status"], "error")
        self.assertIn("not JSON", r["error"])
        r = k.request({"op": "explode"})
        self.assertEqual(r["status"], "error")
        self.assertIn('unknown op "explode"', r["error"])
        r = k.request({"op": "run"})
        self.assertIn('missing field "code"', r["error"])
        r = k.request({"op": "run", "code": 1, "id": "x1"})
        self.assertEqual(r.get("id"), "x1")
        self.assertIn('"code" must be a string', r["error"])
        # a line of 100 MB
        big = b'{"op":"run","code":"' + b"1" * (100 << 20) + b'"}\n'
        k.send_raw(big)
        r = k.read_answer(timeout=120)
        self.assertEqual(r["status"], "error")
        self.assertIn("longer than", r["error"])
        r = k.run("v")
        self.assertDone(r)
        self.assertEqual(self.text(r), "5")

    def test_answers_come_in_request_order(self):
        k = self.serve()
        reqs = [{"op": "run", "code": "import time; time.sleep(0.3); 'a'", "id": 1},
                {"op": "status", "id": 2},
                {"op": "run", "code": "'b'", "id": 3}]
        k.send_raw(b"".join(json.dumps(q).encode() + b"\n" for q in reqs))
        answers = [k.read_answer() for _ in reqs]
        self.assertEqual([a.get("id") for a in answers], [1, 2, 3])
        self.assertEqual(answers[0]["status"], "done")
        self.assertEqual(answers[1]["state"], "running", "status was decided while cell 1 ran")
        self.assertEqual(answers[2]["status"], "busy", "the second run came while the first ran")


if __name__ == "__main__":
    kerntest.main()
