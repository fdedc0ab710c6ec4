#!/usr/bin/env python3
"""The order tests/bench/start_bench.py runs its commands in (python3 stdlib unittest): each round
a shuffle of its own, so no command holds a round's first place, or follows the same command,
every time. And what
--repeat and --goal print of the loop's repeats (each row's medians and their spread, each ratio
met only when every repeat meets it), the OCI rows (kern-oci against its fastest peer), the
bundle oci_bench.py gives the runtimes in its cgroup2 namespace, and commands timed by a helper."""
import os, sys, unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import start_bench  # noqa: E402
import oci_bench  # noqa: E402


class InTurnTest(unittest.TestCase):
    def test_every_round_is_a_shuffle_of_its_own_that_gives_every_command_every_neighbour(self):
        names = ["kern", "bwrap", "floor", "floor -o"]
        rounds = [start_bench.in_turn(names, r) for r in range(200)]
        for r in rounds:
            self.assertEqual(sorted(r), sorted(names))
        self.assertEqual(start_bench.in_turn(names, 7), rounds[7])  # the same order in every run
        for place in range(len(names)):
            for n in names:
                self.assertGreater(sum(1 for r in rounds if r[place] == n), 20, (place, n))
        # The loop runs round after round: what ran just before each command. Shifting one order
        # by one each round put the last command before the first every time.
        sequence = [n for r in rounds for n in r]
        before = {n: {} for n in names}
        for prev, cur in zip(sequence, sequence[1:]):
            before[cur][prev] = before[cur].get(prev, 0) + 1
        for n in names:
            for other in names:
                if other != n:
                    self.assertGreater(before[n].get(other, 0), 20, (other, n))

    def test_interleaved_runs_each_round_in_its_order_and_counts_each_command_n_times(self):
        seen = []
        saved = start_bench.timed
        start_bench.timed = lambda cmd, env: seen.append(cmd[0]) or float(len(seen))
        try:
            cmds = {k: ([k], {}) for k in ("a", "b", "c")}
            med = start_bench.interleaved(cmds, 6)
        finally:
            start_bench.timed = saved
        self.assertEqual(seen[:3], ["a", "b", "c"])  # the warm-up, not counted
        for r in range(6):
            self.assertEqual(seen[3 + 3 * r:6 + 3 * r], start_bench.in_turn(cmds, r))
        self.assertEqual(sorted(med), ["a", "b", "c"])
        self.assertEqual(len(seen), 3 + 18)


class RepeatTest(unittest.TestCase):
    RUNS = [{"kern-oci": 5.0, "crun": 10.0, "runc": 20.0},
            {"kern-oci": 6.0, "crun": 10.0, "runc": 20.0},
            {"kern-oci": 5.5, "crun": 11.0, "runc": 18.0},
            {"kern-oci": 7.0, "crun": 10.0, "runc": 21.0},
            {"kern-oci": 5.0, "crun": 10.0, "runc": 19.0}]

    def test_parse_goal(self):
        self.assertEqual(start_bench.parse_goal("kern-oci/crun=0.6"), ("kern-oci", "crun", 0.6))
        self.assertEqual(start_bench.parse_goal("kern-oci@podman/runc@podman=1"),
                         ("kern-oci@podman", "runc@podman", 1.0))
        for bad in ("kern-oci=0.6", "kern-oci/crun", "/crun=0.6", "kern-oci/=0.6", "a/b=x", "a/b=0", "a/b=-1"):
            with self.assertRaises(ValueError, msg=bad):
                start_bench.parse_goal(bad)

    def test_spread(self):
        self.assertEqual(start_bench.spread([5.0, 7.0, 5.5]), (5.0, 7.0, 1.4))
        self.assertEqual(start_bench.spread([3.0]), (3.0, 3.0, 1.0))

    def test_a_goal_is_met_only_when_every_repeat_meets_it(self):
        got = start_bench.ratio_runs(self.RUNS, "kern-oci", "crun", 0.6)
        self.assertEqual([round(x, 3) for x in got["ratios"]], [0.5, 0.6, 0.5, 0.7, 0.5])
        self.assertEqual((got["met"], got["verdict"]), (4, "not met"))
        got = start_bench.ratio_runs(self.RUNS, "kern-oci", "crun", 0.7)
        self.assertEqual((got["met"], got["verdict"]), (5, "met"))
        got = start_bench.ratio_runs(self.RUNS, "kern-oci", "runc")
        self.assertEqual((got["met"], got["verdict"]), (None, ""))
        self.assertIsNone(start_bench.ratio_runs(self.RUNS, "kern-oci", "bwrap", 1.0))
        self.assertIsNone(start_bench.ratio_runs(self.RUNS[:1] + [{"crun": 1.0}], "kern-oci", "crun", 1.0))

    def test_steadiness_lines(self):
        lines = start_bench.steadiness(self.RUNS, [("kern-oci", "crun", 0.6), ("kern-oci", "runc", None),
                                                  ("kern-oci", "bwrap", 1.0)])
        self.assertEqual(len(lines), 6)
        self.assertTrue(lines[0].split()[0] == "kern-oci", lines[0])
        self.assertIn("5.00..7.00 ms, max/min 1.40", lines[0])
        self.assertEqual(lines[0].split()[1:6], ["5.00", "6.00", "5.50", "7.00", "5.00"])
        self.assertIn("10.00..11.00 ms, max/min 1.10", lines[1])
        self.assertIn("kern-oci/crun  0.50 0.60 0.50 0.70 0.50", lines[3])
        self.assertTrue(lines[3].endswith("goal <= 0.60: 4 of 5 -> not met"), lines[3])
        self.assertNotIn("goal", lines[4])
        self.assertIn("kern-oci/bwrap: not in every repeat", lines[5])

    def test_oci_row_is_against_the_fastest_peer_that_ran(self):
        table = []
        med = {"kern-oci@ctr": 120.0, "runc@ctr": 150.0, "kern-oci": 6.0, "crun": 10.0, "runc": 20.0}
        self.assertTrue(start_bench.oci_row(table, "ctr", med, "@ctr", {}))
        self.assertEqual(table[-1][3:], ("runc@ctr 150.00", "0.80x runc@ctr", "", ""))
        self.assertTrue(start_bench.oci_row(table, "run", med, "", {("kern-oci", "crun"): 0.6}))
        self.assertEqual(table[-1][1], "6.00 ms")
        self.assertEqual(table[-1][3:], ("crun 10.00, runc 20.00", "0.60x crun", "<= 0.60x crun", "met"))
        self.assertFalse(start_bench.oci_row(table, "podman", med, "@podman", {}))
        self.assertEqual(len(table), 2)


class OciBundleTest(unittest.TestCase):
    SPEC = {"process": {"terminal": True, "args": ["sh"]},
            "mounts": [{"destination": "/dev/pts", "type": "devpts", "source": "devpts",
                        "options": ["nosuid", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]}],
            "linux": {"namespaces": [{"type": "pid"}, {"type": "mount"}]}}

    def test_the_host_bundle_runs_true_and_keeps_the_rest(self):
        cfg = oci_bench.bundle_config(self.SPEC, in_userns=False)
        self.assertEqual(cfg["process"], {"terminal": False, "args": ["/bin/true"]})
        self.assertEqual(cfg["mounts"], self.SPEC["mounts"])
        self.assertEqual(cfg["linux"], self.SPEC["linux"])
        self.assertTrue(self.SPEC["process"]["terminal"], "the document given is not changed")

    def test_the_namespace_bundle_maps_root_to_itself(self):
        cfg = oci_bench.bundle_config(self.SPEC, in_userns=True)
        one = [{"containerID": 0, "hostID": 0, "size": 1}]
        self.assertEqual(cfg["linux"]["uidMappings"], one)
        self.assertEqual(cfg["linux"]["gidMappings"], one)
        self.assertEqual([n["type"] for n in cfg["linux"]["namespaces"]], ["pid", "mount", "user"])
        self.assertNotIn("gid=5", cfg["mounts"][0]["options"])
        self.assertIn("newinstance", cfg["mounts"][0]["options"])
        again = oci_bench.bundle_config(cfg, in_userns=True)
        self.assertEqual([n["type"] for n in again["linux"]["namespaces"]], ["pid", "mount", "user"])


class HelperTest(unittest.TestCase):
    def test_a_helper_times_its_commands_in_the_same_loop(self):
        seen = []

        class FakeHelper:
            def timed(self, argv):
                seen.append(("helper", argv[0]))
                return 1.0

        saved = os.posix_spawn  # nothing is run by this process
        os.posix_spawn = lambda *a, **k: self.fail("spawned here")
        try:
            med = start_bench.interleaved({"crun": (["crun"], FakeHelper()), "runc": (["runc"], FakeHelper())}, 2)
        finally:
            os.posix_spawn = saved
        self.assertEqual(med, {"crun": 1.0, "runc": 1.0})
        self.assertEqual(seen, [("helper", "crun"), ("helper", "runc"), ("helper", "crun"), ("helper", "runc"),
                                ("helper", "runc"), ("helper", "crun")])

    def test_a_helper_failure_ends_the_benchmark_or_is_raised(self):
        class Failing:
            def timed(self, argv):
                raise start_bench.CommandFailed("exit 1: no")

        with self.assertRaises(SystemExit):
            start_bench.timed(["x"], Failing())
        with self.assertRaises(start_bench.CommandFailed):
            start_bench.timed(["x"], Failing(), fail=False)

    def test_the_helper_protocol_over_pipes(self):
        # A stand-in helper: says what runs, then answers one timing request.
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        with os.fdopen(from_w, "w") as out:
            out.write('{"rows": {"crun": ["crun", "run"]}, "errors": {"runc": "exit 1: no"}, "env": {"PATH": "/bin"}}\n')
            out.write('{"ms": 12.5, "cpu": 3.0}\n')
        h = oci_bench.Helper(to_w, from_r)
        self.assertEqual(h.commands(), {"crun": (["crun", "run"], h)})
        self.assertEqual(h.errors, {"runc": "exit 1: no"})
        start_bench.CPU_MS.clear()
        self.assertEqual(start_bench.timed(["crun", "run"], h), 12.5)
        self.assertEqual(start_bench.CPU_MS[("crun", "run")], [3.0])
        with os.fdopen(to_r) as sent:
            h.w.close()
            self.assertEqual(sent.read(), '{"argv": ["crun", "run"], "env": {"PATH": "/bin"}}\n')
        h.r.close()


if __name__ == "__main__":
    unittest.main()
