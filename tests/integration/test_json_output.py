"""--json on kern doctor, kern bench, kern box --plan / --show-config and kern version: one JSON
object on stdout carrying the facts of the text form (which stays as it was), as the
unprivileged user."""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


class JsonOutputTest(kerntest.KernTestCase):

    def json_of(self, run):
        self.assertEqual(run.out.count("\n"), 1, "one line of JSON:\n" + run.describe())
        return json.loads(run.out)

    def test_doctor_json_has_the_text_checks_and_verdict(self):
        text = self.kern("doctor")
        js = self.kern("doctor", "--json")
        self.assertEqual(js.rc, text.rc, js.describe())
        doc = self.json_of(js)
        seen = []
        for line in text.out.splitlines():
            m = re.match(r"(ok|MISSING|limited) +([^:]+): (.*)$", line)
            if m:
                seen.append((m.group(1).lower(), m.group(2), m.group(3)))
        self.assertGreater(len(seen), 5, text.describe())
        self.assertEqual([(c["status"], c["name"], c["detail"]) for c in doc["checks"]], seen)
        for c in doc["checks"]:
            self.assertEqual(c["ok"], c["status"] == "ok", c)
            self.assertEqual(c["fix"] is None, c["ok"], c)
            if c["fix"] is not None:
                self.assertIn("        fix: " + c["fix"] + "\n", text.out)
        self.assertEqual(doc["boxes_will_run"], "boxes will run on this host\n" in text.out)
        self.assertEqual(doc["boxes_will_run"], js.rc == 0)
        self.assertIn("unprivileged user namespaces", [c["name"] for c in doc["checks"]])

    def test_bench_json_has_the_runs(self):
        run = self.kern("bench", "--rootfs", self.s.rootfs, "-n", "3", "--json", timeout=120)
        self.assertExit(run, 0)
        doc = self.json_of(run)
        self.assertEqual(doc["runs"], 3)
        self.assertEqual(doc["rootfs"], self.s.rootfs)
        self.assertEqual(len(doc["runs_ms"]), 3)
        ms = sorted(doc["runs_ms"])
        self.assertEqual((doc["min_ms"], doc["median_ms"], doc["max_ms"]), (ms[0], ms[1], ms[2]))
        self.assertGreater(doc["min_ms"], 0)
        text = self.kern("bench", "--rootfs", self.s.rootfs, "-n", "1", timeout=60)
        self.assertExit(text, 0)
        self.assertRegex(text.out, r"^kern box /bin/true, 1 runs: min [0-9.]+ ms, median [0-9.]+ ms, max [0-9.]+ ms\n$")

    def box_flags(self):
        return ["web", "--rootfs", self.s.rootfs, "-m", "64m", "-e", "A=1", "--tmpfs", "/scratch:1m",
                "--cap-drop", "ALL", "--cap-add", "KILL"]

    def test_show_config_json_has_every_key_of_the_text(self):
        text = self.kern("box", *self.box_flags(), "--show-config", "--", "sh", "-c", "echo hi")
        self.assertExit(text, 0)
        js = self.kern("box", *self.box_flags(), "--show-config", "--json", "--", "sh", "-c", "echo hi")
        self.assertExit(js, 0)
        doc = self.json_of(js)
        for line in text.out.splitlines():
            key = line.split(": ", 1)[0]
            self.assertIn("timeout_ms" if key == "timeout" else key, doc, line)
        self.assertEqual(doc["name"], "web")
        self.assertEqual(doc["command"], ["sh", "-c", "echo hi"])
        self.assertIn("A=1", doc["env"])
        self.assertEqual(doc["memory_max"], 64 << 20)
        self.assertEqual(doc["capabilities"], ["CAP_KILL"])
        self.assertIn("capabilities: CAP_KILL\n", text.out)
        self.assertEqual(doc["tmpfs"], [{"dest": "/scratch", "size_bytes": 1 << 20, "origin": "--tmpfs"}])
        self.assertEqual(doc["lower_dirs"], [self.s.rootfs])

    def test_plan_json_has_every_step_of_the_text(self):
        text = self.kern("box", *self.box_flags(), "--plan", "--", "true")
        self.assertExit(text, 0)
        js = self.kern("box", *self.box_flags(), "--plan", "--json", "--", "true")
        self.assertExit(js, 0)
        doc = self.json_of(js)
        mounts = [m.group(1) for m in re.finditer(r"^4\.\d+ mount: (.*)$", text.out, re.M)]
        self.assertGreater(len(mounts), 5, text.describe())
        self.assertEqual(doc["mounts"], mounts)
        ns = re.search(r"^2\. clone3: namespaces (.*)$", text.out, re.M).group(1)
        self.assertEqual(",".join(doc["namespaces"]), ns)
        self.assertEqual(doc["cgroup"]["memory_max"], 64 << 20)
        self.assertIn("memory.max=%d" % (64 << 20), text.out)
        self.assertEqual(doc["workload"]["argv"], ["true"])
        self.assertEqual(doc["workload"]["capabilities"], ["CAP_KILL"])
        self.assertEqual(doc["hostname"], "web")
        uid = re.search(r"^3\. id map: uid (.*), gid (.*)$", text.out, re.M)
        self.assertEqual((doc["id_map"]["uid"], doc["id_map"]["gid"]), (uid.group(1), uid.group(2)))

    def test_box_json_alone_is_refused_and_listed_by_help(self):
        run = self.box(["true"], flags=["--json"])
        self.assertExit(run, 125)
        self.assertKernError(run, "--json goes with --plan or --show-config")
        self.assertEqual(run.out, "")
        helped = self.kern("box", "--help")
        self.assertRegex(helped.out, r"\n +--json +with --plan or --show-config")

    def test_version_json_names_commit_and_libseccomp_of_the_text(self):
        text = self.kern("version")
        doc = self.json_of(self.kern("version", "--json"))
        self.assertIn("commit: %s\n" % doc["commit"], text.out)
        self.assertRegex(doc["libseccomp"], r"^\d+\.\d+\.\d+$")
        self.assertIn("libseccomp: %s " % doc["libseccomp"], text.out)
        self.assertIn("build: %s\n" % doc["build_type"], text.out)


if __name__ == "__main__":
    kerntest.main()
