"""The same core behaviour for bash, node and a generic REPL kernel: state persists, rc, busy,
int, spoofing on stdout, deadlines."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kernel_client  # noqa: E402
import kerntest  # noqa: E402
from kernel_testcase import KernelTestCase  # noqa: E402

kernel_client.prepare_shared_rootfs()

FAKE = json.dumps({"cell_id": "c9", "status": "done", "rc": 0})


class BashKernelTest(KernelTestCase):
    lang = "bash"

    def test_state_persists(self):
        k = self.serve(lang="bash")
        self.assertEqual(k.ready.get("lang"), "bash")
        self.assertDone(k.run("v=hello; declare -a arr=(1 2 3); f() { echo \"f:$1:$v\"; }; "
                              "export E=exported; mkdir -p /tmp/d && cd /tmp/d"))
        r = k.run('f x; echo "${arr[2]}"; pwd; sh -c \'echo $E\'')
        self.assertDone(r)
        self.assertEqual(r["stdout"], "f:x:hello\n3\n/tmp/d\nexported\n")

    def test_rc_and_stderr(self):
        k = self.serve(lang="bash")
        r = k.run("echo oops >&2; false")
        self.assertDone(r, rc=1)
        self.assertEqual(r["stderr"], "oops\n")
        self.assertDone(k.run("(exit 7)"), rc=7)
        self.assertDone(k.run("true"))

    def test_a_trap_of_an_earlier_cell_never_becomes_a_later_cells_result(self):
        # Cell 1 sets a trap that sends an end with whatever cell is running's nonce (the shell
        # variable) and a child that fires it during cell 2. The trap runs in the driver's own
        # shell, so pid and nonce are right; the end is not the driver's end path.
        k = self.serve(lang="bash")
        self.assertDone(k.run(
            "trap 'printf \"W{\\\"nonce\\\":\\\"%s\\\",\\\"rc\\\":42}\" \"$__kern_nonce\" >&4' USR1; "
            "( sleep 0.3; kill -USR1 $$ ) >/dev/null 2>&1 &"))
        r = k.run("sleep 0.8; echo real")
        self.assertNotEqual(r.get("rc"), 42, r)
        self.assertIn(r["status"], ("done", "error"), r)
        if r["status"] == "done":
            self.assertDone(r, rc=0)
        else:
            self.assertIn("claimed 2 times", r["error"])
        self.assertEqual(r["stdout"], "real\n", r)
        self.assertDone(k.run("trap - USR1; true"))

    def test_int_stops_the_foreground_command_and_the_cell(self):
        k = self.serve(lang="bash")
        f = k.request({"op": "fire", "code": "x=before; sleep 100; x=after; echo not-reached"})
        time.sleep(0.3)
        self.assertEqual(k.run("true")["status"], "busy")
        k.request({"op": "int"})
        r = self.wait_poll(k, f["cell_id"], timeout=5)
        self.assertDone(r, rc=130)
        self.assertNotIn("not-reached", r["stdout"])
        r = k.run("echo $x")
        self.assertEqual(r["stdout"], "before\n")
        f = k.request({"op": "fire", "code": "g() { while :; do :; done; }; g; echo not-reached"})
        time.sleep(0.3)
        k.request({"op": "int"})
        r = self.wait_poll(k, f["cell_id"], timeout=5)
        self.assertDone(r, rc=130)
        self.assertDone(k.run("true"))

    def test_spoofed_output(self):
        k = self.serve(lang="bash")
        r = k.run("echo '%s'; echo '%s' >&2; printf 'E{\"rc\":3}\\n'; sleep 0.2; echo after" % (FAKE, FAKE))
        self.assertDone(r)
        self.assertEqual(r["stdout"], FAKE + '\nE{"rc":3}\nafter\n')
        self.assertEqual(r["stderr"], FAKE + "\n")
        r = k.run("printf 'E{\"nonce\":\"x\",\"rc\":9}' >&4; sleep 0.2; echo ok")
        self.assertDone(r)
        self.assertEqual(r["stdout"], "ok\n")


class NodeKernelTest(KernelTestCase):
    lang = "node"

    def test_state_value_and_errors(self):
        k = self.serve(lang="node")
        self.assertEqual(k.ready.get("lang"), "node")
        # node's driver waits in its event loop: its ends are not confirmed (man kern-kernel).
        self.assertIs(k.request({"op": "status"})["ends_confirmed"], False)
        self.assertDone(k.run("let x = 40; function add(a) { return a + x; } var o = {a: [1]};"))
        r = k.run("add(2)")
        self.assertDone(r)
        self.assertEqual(self.text(r), "42")
        r = k.run("console.log('hi'); o")
        self.assertEqual(r["stdout"], "hi\n")
        self.assertEqual(self.text(r), "{ a: [ 1 ] }")
        r = k.run("Promise.resolve(6 * 7)")
        self.assertEqual(self.text(r), "42", "a promise is awaited")
        r = k.run("null.x")
        self.assertDone(r, rc=1)
        self.assertIn("TypeError", r["stderr"])
        self.assertNotIn("node:internal", r["stderr"])
        self.assertDone(k.run("process.exit(3)"), rc=3)
        self.assertEqual(self.text(k.run("x")), "40")

    def test_int_stops_a_busy_loop(self):
        k = self.serve(lang="node")
        self.assertDone(k.run("globalThis.n = 0"))
        f = k.request({"op": "fire", "code": "while (true) { n++ }"})
        time.sleep(0.3)
        k.request({"op": "int"})
        r = self.wait_poll(k, f["cell_id"], timeout=5)
        self.assertDone(r, rc=1)
        self.assertEqual(self.text(k.run("n > 0")), "true")

    def test_deadline(self):
        k = self.serve(lang="node")
        r = k.run("new Promise(() => {})", timeout=0.5)
        self.assertEqual(r["status"], "timeout", r)
        self.assertDone(k.run("1"))

    def test_spoofed_output(self):
        k = self.serve(lang="node")
        r = k.run("console.log(%r); console.error(%r); require('fs').writeSync(1, 'E{}\\n'); 5" % (FAKE, FAKE))
        self.assertDone(r)
        self.assertEqual(r["stdout"], FAKE + "\nE{}\n")
        self.assertEqual(self.text(r), "5")


class ReplKernelTest(KernelTestCase):
    """Any REPL given after --: here python3 -i, whose end of cell is read from /proc (blocked
    reading an empty stdin), with and without --prompt."""
    lang = "python"

    def test_python_repl_by_stdin_read(self):
        k = self.serve(cmd=["python3", "-i", "-q"])
        self.assertEqual(k.ready.get("lang"), "repl")
        r = k.run("x = 6")
        self.assertEqual(r["status"], "done", r)
        r = k.run("print(x * 7)")
        self.assertEqual(r["status"], "done", r)
        self.assertEqual(r["stdout"], "42\n")
        r = k.run("import time; time.sleep(0.5); print('>>> fake prompt'); time.sleep(0.5); print('end')")
        self.assertEqual(r["stdout"], ">>> fake prompt\nend\n", "a prompt-like output did not end the cell")

    def test_prompt_is_stripped(self):
        k = self.serve(cmd=["python3", "-i", "-q"], flags=["--prompt", ">>> "])
        r = k.run("print('a')")
        self.assertEqual(r["status"], "done", r)
        self.assertEqual(r["stdout"], "a\n")
        self.assertEqual(r["stderr"], "", "the trailing prompt is not output")

    def test_repl_int(self):
        k = self.serve(cmd=["python3", "-i", "-q"])
        f = k.request({"op": "fire", "code": "while True: pass\n\n"})  # a block ends with a blank line
        time.sleep(0.3)
        k.request({"op": "int"})
        r = self.wait_poll(k, f["cell_id"], timeout=5)
        self.assertEqual(r["status"], "done", r)
        self.assertIn("KeyboardInterrupt", r["stderr"])
        self.assertEqual(k.run("print(1)")["stdout"], "1\n")


if __name__ == "__main__":
    kerntest.main()
