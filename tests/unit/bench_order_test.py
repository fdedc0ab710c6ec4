#!/usr/bin/env python3
"""The order tests/bench/start_bench.py runs its commands in (python3 stdlib unittest): each round
starts one command further on, so no command holds a round's first place every time."""
import os, sys, unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import start_bench  # noqa: E402


class InTurnTest(unittest.TestCase):
    def test_every_command_takes_every_place_once_per_cycle(self):
        names = ["kern", "bwrap", "floor", "floor -o"]
        rounds = [start_bench.in_turn(names, r) for r in range(8)]
        self.assertEqual(rounds[0], names)
        for r in rounds:
            self.assertEqual(sorted(r), sorted(names))
        for place in range(len(names)):
            self.assertEqual(sorted(r[place] for r in rounds[:4]), sorted(names), place)
        self.assertEqual(rounds[4], rounds[0])

    def test_interleaved_runs_in_turn_and_counts_each_command_n_times(self):
        seen = []
        saved = start_bench.timed
        start_bench.timed = lambda cmd, env: seen.append(cmd[0]) or float(len(seen))
        try:
            cmds = {k: ([k], {}) for k in ("a", "b", "c")}
            med = start_bench.interleaved(cmds, 6)
        finally:
            start_bench.timed = saved
        self.assertEqual(seen[:3], ["a", "b", "c"])  # the warm-up, not counted
        firsts = [seen[3 + 3 * r] for r in range(6)]
        self.assertEqual(firsts, ["a", "b", "c", "a", "b", "c"])
        self.assertEqual(sorted(med), ["a", "b", "c"])
        self.assertEqual(len(seen), 3 + 18)


if __name__ == "__main__":
    unittest.main()
