"""Box names (kern-box(1): a live box of the same name is refused): after a launcher was
SIGKILLed and left its record behind, many `kern box NAME` started at once must end with exactly
one box running and every other start refused, round after round."""

import os
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

ROUNDS = int(os.environ.get("KERN_NAME_RACE_ROUNDS", "40"))
RACERS = int(os.environ.get("KERN_NAME_RACE_RACERS", "40"))


class StaleNameRaceTest(kerntest.KernTestCase):

    def start(self, name, gate=None):
        """`kern box NAME -- sleep 120` with a started fd; with `gate` (a pipe's read end) a
        shell waits for the pipe's end-of-file and then execs kern, so that racers start at the
        same moment rather than one fork apart."""
        argv = self._argv_box(["/bin/sleep", "120"], (), name, None)
        fds = ()
        if gate is not None:
            argv = ["/bin/sh", "-c", 'read -r _ <&%d; exec "$@" %d<&-' % (gate, gate), "gate"] + argv
            fds = (gate,)
        sp = self._popen(argv, None, subprocess.DEVNULL, fds, True, None)
        self.addCleanup(self._reap_spawned, sp)
        return sp

    def settle(self, racers, timeout=90):
        """Waits until every racer has either started its box (two started bytes) or exited;
        returns (started, exited)."""
        deadline = time.monotonic() + timeout
        pending = {sp.started_r: sp for sp in racers}
        started = []
        while pending and time.monotonic() < deadline:
            ready, _, _ = select.select(list(pending), [], [], 0.2)
            for fd in ready:
                sp = pending[fd]
                b = os.read(fd, 2 - len(sp.started_bytes))
                sp.started_bytes += b
                if len(sp.started_bytes) == 2:
                    started.append(sp)
                if not b or len(sp.started_bytes) == 2:
                    del pending[fd]
        exited = [sp for sp in racers if sp not in started]
        for sp in exited:
            sp.popen.wait(timeout=max(1, deadline - time.monotonic()))
        return started, exited

    def test_exactly_one_of_many_racers_wins_a_stale_name(self):
        self.use_private_runtime_dir()
        name = self.s.new_name("race")
        first = self.start(name)
        self.assertEqual(len(first.wait_started()), 2, "the first box did not start")
        holder = first
        for rnd in range(ROUNDS):
            # The holder's launcher dies without releasing: its record is left, stale.
            holder.kill(signal.SIGKILL)
            holder.popen.wait(timeout=10)
            self.assertEqual(self.registered_boxes(), [name], "round %d: no stale record was left" % rnd)
            gate_r, gate_w = os.pipe()
            racers = [self.start(name, gate_r) for _ in range(RACERS)]
            os.close(gate_r)
            os.close(gate_w)  # all at once
            started, exited = self.settle(racers)
            for sp in exited:
                run = sp.finish(timeout=10)
                self.assertExit(run, 125, "round %d: a refused racer" % rnd)
                self.assertIn("already running", run.err, run.describe())
            self.assertEqual(len(started), 1,
                             "round %d: %d of %d racers started a box named %s (exactly one must)"
                             % (rnd, len(started), RACERS, name))
            holder = started[0]
            self.assertIsNone(holder.popen.poll(), "round %d: the winner died" % rnd)
            # The winner's record is the live one: `kern ps` lists it, once.
            ps = self.kern("ps")
            self.assertExit(ps, 0)
            self.assertEqual([l.split()[0] for l in ps.out.splitlines()[1:]], [name], ps.describe())
        holder.kill(signal.SIGTERM)
        self.assertExit(holder.finish(timeout=10), 143)
        self.assertEqual(self.registered_boxes(), [], "the last winner left its record")


if __name__ == "__main__":
    kerntest.main()
