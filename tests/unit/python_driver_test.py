"""The warm kernel's Python driver (runtime/kernel/drivers/python_driver.py) on its own, without
kern: it is started exactly as the box starts it (python3 -c with the driver's source) with
fd 3 a pipe of cell frames and fd 4 a SOCK_SEQPACKET socket for its messages, and this test
plays the supervisor. Framing, results, display(), exceptions, sys.exit, interrupts, end of input.
Run: python3 tests/unit/python_driver_test.py (ctest: unit.python_driver)."""

import fcntl
import json
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "..", "..", "runtime", "kernel", "drivers", "python_driver.py")
BOOT = "import sys;exec(compile(sys.argv[1],'<kern-driver>','exec'))"  # as runtime/kernel/drivers.cc


def frame(nonce, cid, code):
    """The supervisor's frame (runtime/kernel/protocol.cc driver_frame): header, code, nonce."""
    data = code.encode("utf-8")
    return b"K2 %s %d\n" % (cid.encode(), len(data)) + data + nonce.encode() + b"\n"


class Driver:
    def __init__(self):
        with open(DRIVER, encoding="utf-8") as f:
            source = f.read()
        cell_r, self.cell_w = os.pipe()
        self.end_r, end_w = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Out of the way of 3 and 4 before they are put there in the child.
        hi_cell = fcntl.fcntl(cell_r, fcntl.F_DUPFD_CLOEXEC, 20)
        hi_end = fcntl.fcntl(end_w.fileno(), fcntl.F_DUPFD_CLOEXEC, 20)

        def place():
            os.dup2(hi_cell, 3)
            os.dup2(hi_end, 4)

        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        self.p = subprocess.Popen([sys.executable, "-c", BOOT, source], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=place,
                                  close_fds=False, env=env, start_new_session=True)
        for fd in (cell_r, hi_cell, hi_end):
            os.close(fd)
        end_w.close()
        for f in (self.p.stdout, self.p.stderr):
            os.set_blocking(f.fileno(), False)
        self.out = {self.p.stdout.fileno(): b"", self.p.stderr.fileno(): b""}
        self.cells = 0

    def message(self, timeout=20):
        """The next whole driver message (W, or S M... E packets), as parsed JSON."""
        parts = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no message from the driver in %ss; stderr: %r" % (timeout, self.stderr()))
            r, _, _ = select.select([self.end_r, self.p.stdout, self.p.stderr], [], [], left)
            self.drain()
            if self.end_r not in r:
                continue
            pkt = self.end_r.recv(1 << 20)
            if not pkt:
                raise AssertionError("the driver closed fd 4; stderr: %r" % self.stderr())
            flag, body = pkt[:1], pkt[1:]
            if flag == b"W":
                self.raw = body
                return json.loads(body)
            parts.append(body)
            if flag == b"E":
                self.raw = b"".join(parts)
                return json.loads(self.raw)

    def drain(self):
        for f in (self.p.stdout, self.p.stderr):
            try:
                data = os.read(f.fileno(), 1 << 20)
            except BlockingIOError:
                continue
            self.out[f.fileno()] += data

    def stdout(self):
        self.drain()
        return self.out[self.p.stdout.fileno()].decode()

    def stderr(self):
        self.drain()
        return self.out[self.p.stderr.fileno()].decode()

    def start(self, code):
        self.cells += 1
        nonce = secrets.token_hex(16)
        os.write(self.cell_w, frame(nonce, "c%d" % self.cells, code))
        return nonce

    def run(self, code):
        """Runs one cell: (its end message, its stdout, its stderr)."""
        o0, e0 = len(self.stdout()), len(self.stderr())
        nonce = self.start(code)
        m = self.message()
        if m.get("nonce") != nonce:
            raise AssertionError("end of cell with nonce %r, not %r" % (m.get("nonce"), nonce))
        time.sleep(0.01)
        return m, self.stdout()[o0:], self.stderr()[e0:]

    def close(self):
        os.close(self.cell_w)
        try:
            return self.p.wait(10)
        finally:
            self.end_r.close()
            self.p.stdout.close()
            self.p.stderr.close()


class PythonDriverTest(unittest.TestCase):

    def setUp(self):
        self.d = Driver()
        self.ready = self.d.message()

    def tearDown(self):
        if self.d.p.poll() is None:
            self.d.p.kill()
            self.d.p.wait()
        for f in (self.d.p.stdout, self.d.p.stderr):
            if not f.closed:
                f.close()

    def test_ready_first(self):
        self.assertEqual(self.ready["ready"], True)
        self.assertEqual(self.ready["lang"], "python")
        self.assertEqual(self.ready["pid"], self.d.p.pid)
        self.assertEqual(self.ready["version"], sys.version.split()[0])

    def test_trailing_expression_state_and_output(self):
        m, out, err = self.d.run("x = 40\nprint('hello')\nx + 2")
        self.assertEqual(m["rc"], 0)
        self.assertEqual(m["results"], [{"text/plain": "42"}])
        self.assertEqual(out, "hello\n")
        self.assertEqual(err, "")
        m, _, _ = self.d.run("_ + x")
        self.assertEqual(m["results"], [{"text/plain": "82"}], "state and _ persist")
        m, _, _ = self.d.run("y = 1")
        self.assertEqual(m["results"], [], "a statement gives no result")

    def test_code_length_is_in_bytes_and_protocol_lookalikes_are_code(self):
        code = "s = 'h\u00e9llo \u2603'\nt = 'K2 c9 5\\nabcde'\n(s, len(s.encode()))"
        m, _, _ = self.d.run(code)
        self.assertEqual(m["results"], [{"text/plain": repr(("h\u00e9llo \u2603", 10))}])
        m, out, _ = self.d.run("print('W{\"nonce\":\"0\",\"rc\":5}')\n7")
        self.assertEqual(m["rc"], 0)
        self.assertEqual(out, 'W{"nonce":"0","rc":5}\n')
        self.assertEqual(m["results"], [{"text/plain": "7"}])

    def test_display_and_rich_reprs(self):
        code = ("class H:\n"
                "    def _repr_html_(self): return '<b>hi</b>'\n"
                "    def _repr_png_(self): return b'\\x89PNG'\n"
                "    def __repr__(self): return 'H()'\n"
                "display(1, 'two')\n"
                "H()")
        m, _, _ = self.d.run(code)
        self.assertEqual(m["results"][:2], [{"text/plain": "1"}, {"text/plain": "'two'"}])
        h = m["results"][2]
        self.assertEqual(h["text/html"], "<b>hi</b>")
        self.assertEqual(h["image/png"], "iVBORw==")
        self.assertEqual(h["text/plain"], "H()")

    def test_end_messages_are_exact_json_with_each_bundles_keys_sorted(self):
        # The usual end (str: str bundles) is written by hand: exact JSON, no spaces, each
        # bundle's keys sorted (the supervisor takes that shape without a DOM).
        code = ("class H:\n"
                "    def _repr_html_(self): return '<i>\\u00e9\\n\"q\"\\\\ \\x01\\u2028</i>'\n"
                "    def _repr_svg_(self): return '<svg/>'\n"
                "    def __repr__(self): return 'H(\\U0001f600)'\n"
                "class S:\n"
                "    def __repr__(self): return 'x\\udc80'\n"
                "display('tab\\there', S())\n"
                "H()")
        m, _, _ = self.d.run(code)
        bundles = [{"text/plain": "'tab\\there'"}, {"text/plain": "x?"},
                   {"image/svg+xml": "<svg/>", "text/html": "<i>\u00e9\n\"q\"\\ \x01\u2028</i>",
                    "text/plain": "H(\U0001f600)"}]
        self.assertEqual(m["results"], bundles, "a lone surrogate is replaced, as the encoder did")
        want = ('{"nonce":%s,"rc":0,"results":[%s]}' % (
            json.dumps(m["nonce"]), ",".join(json.dumps(b, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
                                             for b in bundles))).encode()
        self.assertEqual(self.d.raw, want)
        # Anything else (a bundle value that is not a string) is the JSON encoder's, as before.
        m, _, _ = self.d.run("class J:\n    def _repr_json_(self): return {'a': [1, 2]}\nJ()")
        self.assertEqual(m["results"][0]["application/json"], {"a": [1, 2]})

    def test_the_usual_ends_built_from_bytes_are_the_encoders_bytes(self):
        # rc 0 with no result or with one text/plain string is put together from the frame's
        # nonce bytes; it must be byte for byte what json.dumps writes (no spaces, ensure_ascii
        # off, a lone surrogate replaced), and anything larger than a packet still splits.
        cases = [("x = 1", None), ("1+1", "2"), ("'q\"\\\\n\\t\\x01\u00e9\u2028'", None),
                 ("class S:\n    def __repr__(self): return 'x\\udc80\\u00e9\\x01\\n\"\\\\'\nS()", 'x?\u00e9\x01\n"\\'),
                 ("'\u00e9' * 29990", None), ("'\\x01' * 9000", None)]
        for code, plain in cases:
            m, _, _ = self.d.run(code)
            if code.startswith("x ="):
                results = []
            else:
                results = [{"text/plain": plain if plain is not None else repr(eval(code))}]
            self.assertEqual(m["results"], results, code)
            want = json.dumps({"nonce": m["nonce"], "rc": 0, "results": results}, ensure_ascii=False,
                              separators=(",", ":")).encode()
            self.assertEqual(self.d.raw, want, code)

    def test_a_frame_whose_nonce_or_cell_id_is_not_plain_ascii_ends_the_driver(self):
        # The nonce is echoed back as bytes: one that is not 32 letters and digits is a broken
        # protocol (exit 70), never a message with the frame's bytes spliced into its JSON.
        for nonce, cid in (('"' * 32, "c1"), ("a" * 31 + "\\", "c1"), ("a" * 32, "c\u00e9")):
            d = Driver()
            try:
                d.message()
                data = "1".encode()
                os.write(d.cell_w, b"K2 %s 1\n" % cid.encode() + data + nonce.encode() + b"\n")
                self.assertEqual(d.p.wait(10), 70, (nonce, cid))
            finally:
                d.close()

    def test_a_large_result_is_split_into_packets(self):
        m, _, _ = self.d.run("'z' * 200000")
        self.assertEqual(m["results"], [{"text/plain": repr("z" * 200000)}])

    def test_exception_is_rc_1_with_the_cells_frames_only(self):
        m, _, err = self.d.run("def g():\n    return 1 / 0\ng()")
        self.assertEqual(m["rc"], 1)
        self.assertIn("ZeroDivisionError", err)
        self.assertIn("return 1 / 0", err)
        self.assertIn("<cell-c1>", err)
        self.assertNotIn("kern-driver", err)
        m, _, err = self.d.run("def (:")
        self.assertEqual(m["rc"], 1)
        self.assertIn("SyntaxError", err)

    def test_sys_exit(self):
        self.assertEqual(self.d.run("import sys\nsys.exit(3)")[0]["rc"], 3)
        self.assertEqual(self.d.run("raise SystemExit")[0]["rc"], 0)
        m, _, err = self.d.run("sys.exit('bye')")
        self.assertEqual(m["rc"], 1)
        self.assertIn("bye", err)
        self.assertEqual(self.d.run("1")[0]["results"], [{"text/plain": "1"}], "the driver keeps serving")

    def test_sigint_interrupts_a_cell_and_is_dropped_between_cells(self):
        self.d.run("n = 0")
        os.killpg(self.d.p.pid, signal.SIGINT)  # between cells: dropped
        time.sleep(0.2)
        self.assertIsNone(self.d.p.poll(), "SIGINT between cells must not end the driver")
        nonce = self.d.start("while True:\n    n += 1")
        time.sleep(0.3)
        os.killpg(self.d.p.pid, signal.SIGINT)
        m = self.d.message()
        self.assertEqual(m["nonce"], nonce)
        self.assertEqual(m["rc"], 1)
        time.sleep(0.05)
        self.assertIn("KeyboardInterrupt", self.d.stderr())
        m, _, _ = self.d.run("n > 0")
        self.assertEqual(m["results"], [{"text/plain": "True"}], "the state survives the interrupt")

    def test_end_of_input_ends_the_driver(self):
        self.d.run("1")
        self.assertEqual(self.d.close(), 0)

    def test_a_bad_frame_ends_the_driver(self):
        os.write(self.d.cell_w, b"K1 nonce c1 1\nx")
        self.assertEqual(self.d.p.wait(10), 70)


if __name__ == "__main__":
    unittest.main()
