"""Health checks of detached boxes, as the unprivileged user: the status goes starting ->
healthy -> unhealthy as the check's command says, in kern inspect (with the last results) and kern
ps; the check runs as kern exec does, under the workload's own lockdown; an unhealthy box is
stopped, killed or given a new box as --health-on-failure says; an image's own Healthcheck is used
and --no-healthcheck turns it off; flags without a check, or without -d, are refused."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402

FAST = ["--health-interval", "200ms", "--health-timeout", "2s", "--health-retries", "2"]


class HealthTest(DetachedCase):
    @staticmethod
    def status(rec):
        return (rec.get("health") or {}).get("status")

    def test_starting_then_healthy_then_unhealthy(self):
        name = self.started(["sh", "-c", "sleep 0.6; touch /ready; sleep 1.5; rm /ready; sleep 1000"],
                            ["--health-cmd", "test -e /ready"] + FAST)
        self.assertEqual(self.status(self.inspect(name)), "starting")
        rec = self.wait_for(name, lambda r: self.status(r) == "healthy", what="healthy")
        self.assertRegex(self.kern("ps", "-a").out, name + r" .*running \(healthy\)")
        rec = self.wait_for(name, lambda r: self.status(r) == "unhealthy", what="unhealthy")
        log = rec["health"]["log"]
        self.assertGreaterEqual(rec["health"]["failing_streak"], 2)
        self.assertEqual([r["exit_code"] for r in log[-2:]], [1, 1], json.dumps(log))
        self.assertEqual(rec["state"], "running", "--health-on-failure none must leave the box alone")

    def test_the_check_runs_under_the_workloads_lockdown(self):
        # What /proc/self/status says inside the check is what the workload gets: the seccomp
        # filter and no_new_privs (kern exec's answers are the box's own).
        name = self.started(["sleep", "1000"], ["--health-cmd", "grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status"] + FAST)
        rec = self.wait_for(name, lambda r: self.status(r) == "healthy", what="healthy")
        out = rec["health"]["log"][-1]["output"]
        self.assertRegex(out, r"Seccomp:\s+2", out)
        self.assertRegex(out, r"NoNewPrivs:\s+1", out)
        host = open("/proc/self/status").read()
        self.assertRegex(host, r"Seccomp:\s+0", "positive control: this test itself runs unfiltered")

    def test_on_failure_stop_ends_the_box_and_its_restart_policy(self):
        name = self.started(["sleep", "1000"], ["--health-cmd", "exit 3", "--health-on-failure", "stop",
                                                "--restart", "always"] + FAST)
        rec = self.wait_for(name, lambda r: r["state"] == "exited", what="stopped by its health check")
        self.assertEqual(rec["exit_code"], 137)
        self.assertEqual(rec["restart_count"], 0)
        self.assertEqual(self.status(rec), "unhealthy")

    def test_on_failure_restart_gives_a_new_box_without_a_restart_policy(self):
        name = self.started(["sh", "-c", "echo up; sleep 1000"], ["--health-cmd", "false", "--health-on-failure", "restart"] + FAST)
        rec = self.wait_for(name, lambda r: r["restart_count"] >= 1 and r["state"] == "running",
                            what="a new box after unhealthy")
        self.assertEqual(rec["last_exit_code"], 137)
        self.assertExit(self.kern("stop", name), 0)
        self.wait_for(name, lambda r: r["state"] == "exited", what="kern stop")

    def test_the_images_healthcheck_is_used_and_no_healthcheck_turns_it_off(self):
        path = os.path.join(self.s.tmp, "hc.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer()], ["hc:1"],
                                          cmd=["/bin/sh", "-c", "touch /ok; sleep 1000"],
                                          healthcheck={"Test": ["CMD-SHELL", "test -e /ok"],
                                                       "Interval": 200000000, "Retries": 2})
        self.assertExit(self.kern("load", "-i", path), 0)
        name = self.started(None, ["--image", "hc:1"], rootfs=False)
        self.wait_for(name, lambda r: self.status(r) == "healthy", what="the image's check")
        off = self.started(None, ["--image", "hc:1", "--no-healthcheck"], rootfs=False)
        time.sleep(0.6)
        self.assertIsNone(self.inspect(off)["health"])

    def test_flags_without_a_check_or_without_d_are_refused(self):
        cases = [
            (["--health-cmd", "true"], "only a detached box"),
            (["-d", "--health-interval", "1s"], "no health check"),
            (["-d", "--health-cmd", "true", "--health-on-failure", "explode"], "not an action"),
            (["-d", "--health-cmd", "true", "--no-healthcheck"], "--no-healthcheck"),
            (["-d", "--health-cmd", "true", "--health-retries", "0"], "above 0"),
        ]
        for flags, said in cases:
            run = self.box(["true"], flags=flags, name=False)
            self.assertExit(run, 125, " ".join(flags))
            self.assertIn(said, run.err, " ".join(flags))
            self.assertIn("hint", run.err, " ".join(flags))
        self.assertEqual(self.registered_boxes(), [])


if __name__ == "__main__":
    kerntest.main()
