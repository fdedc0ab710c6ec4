"""kern top without a NAME, as the unprivileged user: on a terminal (a real pty) a full screen of
every running box, refreshed, that `q` leaves with the terminal as it was (main screen back, the
last thing written; echo and line mode back) and exit 0; SIGWINCH redraws, SIGTERM leaves the same
way (exit 143), and so does Ctrl-C on its controlling terminal (exit 0). Off a terminal (the
discriminant), one plain table with no escape sequence, the busy box above the idle one (sorted by
CPU)."""

import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402

ENTER = b"\x1b[?1049h"
LEAVE = b"\x1b[?1049l"


class TopScreenTest(DetachedCase):
    def top_in_pty(self, *flags, controlling=False):
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 140, 0, 0))

        def own_terminal():  # the pty as kern's controlling terminal: Ctrl-C is its SIGINT
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        p = subprocess.Popen([self.s.kern, "top"] + list(flags), stdin=slave, stdout=slave, stderr=slave,
                             env=self.base_env(), start_new_session=True,
                             preexec_fn=own_terminal if controlling else None)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        self.addCleanup(os.close, master)
        self.addCleanup(os.close, slave)
        return p, master, slave

    @staticmethod
    def read_until(master, pred, timeout, seen=b""):
        end = time.monotonic() + timeout
        while not pred(seen) and time.monotonic() < end:
            r, _, _ = select.select([master], [], [], 0.1)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every copy of the slave is closed
                    break
                if not chunk:
                    break
                seen += chunk
        return seen

    def finish(self, p, master, seen):
        rc = p.wait(timeout=15)
        return rc, self.read_until(master, lambda s: s.endswith(LEAVE), 3, seen)

    def test_q_leaves_the_screen_as_it_was(self):
        a = self.started(["sleep", "1000"])
        b = self.started(["sleep", "1001"])
        p, master, slave = self.top_in_pty("--interval", "0.3")
        want = lambda s: ENTER in s and a.encode() in s.split(ENTER)[-1] and b.encode() in s.split(ENTER)[-1]
        seen = self.read_until(master, want, 20)
        self.assertTrue(want(seen), "both boxes in a frame: %r" % seen[-2000:])
        self.assertRegex(seen, rb"NAME +STATE +CPU % +MEM / LIMIT +PIDS +NET RX / TX +UP")
        self.assertIn(b"\x1b[?25l", seen, "the cursor is hidden")
        attrs = termios.tcgetattr(slave)
        self.assertFalse(attrs[3] & termios.ECHO, "raw keys while it runs")
        os.write(master, b"q")
        rc, seen = self.finish(p, master, seen)
        self.assertEqual(rc, 0, seen[-500:])
        self.assertTrue(seen.endswith(LEAVE), "ends by leaving the alternate screen: %r" % seen[-200:])
        self.assertIn(b"\x1b[?25h", seen.split(ENTER)[-1], "the cursor is shown again")
        attrs = termios.tcgetattr(slave)
        self.assertTrue(attrs[3] & termios.ECHO and attrs[3] & termios.ICANON, "echo and line mode back")

    def test_ctrl_c_on_its_controlling_terminal(self):
        a = self.started(["sleep", "1000"])
        p, master, slave = self.top_in_pty(controlling=True)
        seen = self.read_until(master, lambda s: a.encode() in s, 20)
        self.assertIn(a.encode(), seen)
        os.write(master, b"\x03")
        rc, seen = self.finish(p, master, seen)
        self.assertEqual(rc, 0, seen[-300:])
        self.assertTrue(seen.endswith(LEAVE), "%r" % seen[-200:])

    def test_resize_then_sigterm(self):
        a = self.started(["sleep", "1000"])
        p, master, slave = self.top_in_pty()
        seen = self.read_until(master, lambda s: a.encode() in s, 20)
        self.assertIn(a.encode(), seen)
        # A narrower terminal: the next frames are cut to its 20 columns.
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 10, 20, 0, 0))
        p.send_signal(signal.SIGWINCH)
        mark = len(seen)
        seen = self.read_until(master, lambda s: b"\x1b[H" in s[mark:] and b"\x1b[J" in s[mark:], 10, seen)
        redraw = seen[mark:]
        self.assertIn(b"\x1b[H", redraw, "redrawn after SIGWINCH")
        for line in redraw.split(b"\x1b[H")[-1].split(b"\r\n"):
            text = line.replace(b"\x1b[K", b"").replace(b"\x1b[J", b"").replace(b"\r", b"")
            self.assertLessEqual(len(text.decode(errors="replace")), 20, redraw)
        self.assertIsNone(p.poll(), "still running after the resize")
        p.send_signal(signal.SIGTERM)
        rc, seen = self.finish(p, master, seen)
        self.assertEqual(rc, 128 + signal.SIGTERM)
        self.assertTrue(seen.endswith(LEAVE), "%r" % seen[-200:])
        attrs = termios.tcgetattr(slave)
        self.assertTrue(attrs[3] & termios.ECHO and attrs[3] & termios.ICANON, "echo and line mode back")

    def test_off_a_terminal_one_plain_table_busiest_first(self):
        idle = self.started(["sleep", "1000"])
        busy = self.started(["sh", "-c", "while :; do :; done"])
        time.sleep(0.5)
        run = self.kern("top", timeout=30)
        self.assertExit(run, 0)
        self.assertNotIn("\x1b", run.out)
        lines = run.out.splitlines()
        self.assertRegex(lines[0], r"^NAME +STATE +CPU %")
        names = [l.split()[0] for l in lines[1:]]
        self.assertEqual(names, [busy, idle], run.out)
        self.assertEqual(self.kern("top", "--once", timeout=30).rc, 0)
        bad = self.kern("top", "--interval", "0")
        self.assertNotEqual(bad.rc, 0)
        self.assertIn("kern: error: kern top --interval", bad.err)


if __name__ == "__main__":
    kerntest.main()
