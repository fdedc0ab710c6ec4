"""-t, -i and -it: kern run under a terminal of its own (a pty the test opens, standing in for the
caller's terminal). The workload gets a terminal of the box's own devpts as its controlling tty
(`tty` names it, the window size is the caller's), -it relays what is typed, the exit code
comes through, and the caller's terminal modes are restored when the box ends."""

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


class TerminalRun:
    """kern with stdin, stdout and stderr on the slave side of a fresh pty (as a shell would run
    it), in a session of its own with that pty as its controlling terminal."""

    def __init__(self, argv, env, rows=33, cols=101):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.modes_before = termios.tcgetattr(slave)
        self.slave_name = os.ttyname(slave)

        def own_terminal():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.p = subprocess.Popen(argv, env=env, stdin=slave, stdout=slave, stderr=slave, cwd="/",
                                  preexec_fn=own_terminal)
        self.slave = slave
        self.out = b""

    def type(self, text):
        os.write(self.master, text.encode())

    def read_until(self, needle, timeout=10):
        end = time.monotonic() + timeout
        while needle.encode() not in self.out and time.monotonic() < end:
            r, _, _ = select.select([self.master], [], [], 0.1)
            if r:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                self.out += chunk
        return needle.encode() in self.out

    def finish(self, timeout=20):
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        self.read_until("\0never\0", timeout=0.3)
        self.modes_after = termios.tcgetattr(self.slave)
        os.close(self.slave)
        os.close(self.master)
        return rc

    def text(self):
        # Both the box's terminal and the test's own turn "\n" into "\r\n".
        return self.out.decode("utf-8", "replace").replace("\r", "")


class TtyTest(kerntest.KernTestCase):

    def run_in_terminal(self, flags, cmd):
        argv = self._argv_box(cmd, list(flags), None, None)
        env = self.base_env()
        env["TERM"] = "xterm-256color"
        return TerminalRun(argv, env)

    def test_t_gives_a_terminal_of_the_box_with_the_callers_size(self):
        t = self.run_in_terminal(["-t"], ["/bin/sh", "-c", "tty; stty size; echo term=$TERM; exit 7"])
        rc = t.finish()
        out = t.text()
        self.assertEqual(rc, 7, out)
        # The name resolves inside the box: the pty comes from the box's own devpts instance,
        # not from the caller's (whose /dev/pts is not mounted in the box).
        self.assertIn("/dev/pts/0\n", out, "tty did not name a terminal of the box")
        self.assertNotIn("not a tty", out)
        self.assertIn("33 101\n", out, "the window size of the caller's terminal")
        # As docker run -t does: TERM=xterm, whatever the caller's terminal is.
        self.assertIn("term=xterm\n", out)

    def test_without_t_there_is_no_terminal(self):
        t = self.run_in_terminal([], ["/bin/sh", "-c", "tty"])
        rc = t.finish()
        out = t.text()
        self.assertEqual(rc, 1, out)  # tty exits 1 on "not a tty"
        self.assertIn("not a tty", out)

    def test_it_relays_what_is_typed_and_the_exit_code(self):
        t = self.run_in_terminal(["-it"], ["/bin/sh"])
        t.type("echo $((6*7))-typed\n")
        self.assertTrue(t.read_until("42-typed"), t.text())
        t.type("exit 5\n")
        rc = t.finish()
        self.assertEqual(rc, 5, t.text())
        # Raw mode for the relay while the box ran, the caller's modes back afterwards.
        self.assertEqual(t.modes_after, t.modes_before, "the caller's terminal modes were not restored")

    def test_ctrl_c_reaches_the_box_through_the_terminal(self):
        t = self.run_in_terminal(["-it"], ["/bin/sh", "-c", "trap 'echo got-int; exit 9' INT; "
                                           "echo ready; while :; do sleep 0.1; done"])
        self.assertTrue(t.read_until("ready"), t.text())
        t.type("\x03")
        self.assertTrue(t.read_until("got-int"), t.text())
        rc = t.finish()
        self.assertEqual(rc, 9, t.text())


if __name__ == "__main__":
    kerntest.main()
