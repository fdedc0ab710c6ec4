"""--format templates of the listing verbs, as the unprivileged user: kern ps, stats, inspect,
events and image inspect print Docker's fields for each box (a field that differs between two
boxes lands on each box's own line: the positive control), "table" adds Docker's headers, {{json
.}} one object a line; an unknown field is a usage error naming it and listing the verb's fields
(the same exit code as another usage error of the verb, the discriminant). kern ps shows PORTS
when a box publishes some, and `kern rm -f $(kern ps -aq)` works with no box, one, and several."""

import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


class ListingFormatTest(DetachedCase):
    def two_boxes(self):
        a = self.started(["sleep", "1000"], ["--label", "tier=front", "--label", "app=shop"])
        b = self.started(["sh", "-c", "sleep 1001 & sleep 1002 & wait"], ["--label", "tier=back"])
        return a, b

    def lines_by_name(self, out):
        return {l.split()[0]: l.split()[1:] for l in out.splitlines() if l.strip()}

    def test_ps_fields_per_box(self):
        a, b = self.two_boxes()
        run = self.kern("ps", "--format", '{{.Names}} {{index .Labels "tier"}} {{.State}} {{.ID}}')
        self.assertExit(run, 0)
        got = self.lines_by_name(run.out)
        self.assertEqual(got, {a: ["front", "running", a], b: ["back", "running", b]}, run.out)
        # The whole object, one a line, with Docker's keys; Status as docker ps says it.
        run = self.kern("ps", "--format", "{{json .}}")
        self.assertExit(run, 0)
        rows = {j["Names"]: j for j in map(json.loads, run.out.splitlines())}
        self.assertEqual(set(rows), {a, b})
        self.assertEqual(rows[a]["Labels"], {"tier": "front", "app": "shop"})
        self.assertRegex(rows[a]["Status"], r"^Up ")
        self.assertRegex(rows[b]["Command"], r"sleep 1001")
        self.assertNotEqual(rows[a]["Command"], rows[b]["Command"])
        self.assertRegex(rows[a]["CreatedAt"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$")
        # table: Docker's headers, aligned columns.
        run = self.kern("ps", "--format", "table {{.Names}}\\t{{.Status}}\\t{{.Labels}}")
        self.assertExit(run, 0)
        lines = run.out.splitlines()
        self.assertRegex(lines[0], r"^NAMES +STATUS +LABELS$")
        self.assertEqual(len(lines), 3, run.out)
        col = lines[0].index("STATUS")
        for l in lines[1:]:
            self.assertEqual(l[col:col + 3], "Up ", run.out)
        self.assertIn("tier=front,app=shop", run.out)
        # "table" alone and "json" keep kern's own forms.
        self.assertRegex(self.kern("ps", "--format", "table").out, r"^NAME +KIND +PID")
        self.assertIsInstance(json.loads(self.kern("ps", "--format", "json").out), list)

    def test_unknown_fields_are_usage_errors(self):
        other = self.kern("ps", "--no-such-flag")
        self.assertNotEqual(other.rc, 0, other.describe())
        for argv, field, known in ((["ps", "--format", "{{.Nope}}"], ".Nope", ".Names"),
                                   (["ps", "--format", "table {{.ID}}\\t{{.Mounts}}"], ".Mounts", ".RunningFor"),
                                   (["stats", "--no-stream", "--format", "{{.CPU}}"], ".CPU", ".CPUPerc"),
                                   (["events", "--format", "{{.When}}"], ".When", ".Action"),
                                   (["images", "--format", "{{.Tags}}"], ".Tags", ".Repository")):
            run = self.kern(*argv, timeout=30)
            self.assertEqual(run.rc, other.rc, run.describe())
            self.assertIn("kern: error:", run.err)
            self.assertIn(field, run.err)
            self.assertIn(known, run.err, "the hint lists the verb's fields")
            self.assertEqual(run.out, "")
        # A well-formed template of the same verbs passes (the control).
        self.assertExit(self.kern("ps", "--format", "{{.Names}}"), 0)

    def test_stats_fields_per_box(self):
        a, b = self.two_boxes()
        end = time.monotonic() + 10
        while time.monotonic() < end:  # the second box's sleeps have started
            run = self.kern("stats", "--no-stream", "--format", "{{.Name}} {{.PIDs}} {{.CPUPerc}} {{.MemPerc}}",
                            timeout=30)
            self.assertExit(run, 0)
            got = self.lines_by_name(run.out)
            if a in got and b in got and int(got[b][0]) >= int(got[a][0]) + 2:
                break
        self.assertEqual(set(got), {a, b}, run.out)
        # Two more sleeps in b than in a: each line has its own box's count.
        self.assertGreaterEqual(int(got[b][0]), int(got[a][0]) + 2, run.out)
        for name in (a, b):
            self.assertRegex(got[name][1], r"^\d+\.\d\d%$")
            self.assertRegex(got[name][2], r"^\d+\.\d\d%$")
        run = self.kern("stats", "--no-stream", "--format", "table {{.Name}}\\t{{.MemUsage}}\\t{{.NetIO}}", a,
                        timeout=30)
        self.assertExit(run, 0)
        lines = run.out.splitlines()
        self.assertRegex(lines[0], r"^NAME +MEM USAGE / LIMIT +NET I/O$")
        self.assertRegex(lines[1], r"^%s +\S+B / \S+B +\S+B / \S+B$" % a)

    def test_inspect_nested_fields(self):
        a, b = self.two_boxes()
        run = self.kern("inspect", "-f", "{{.Name}} {{.State.Pid}} {{.State.Status}} {{.Config.Labels.tier}}", a, b)
        self.assertExit(run, 0)
        got = self.lines_by_name(run.out)
        for name, tier in ((a, "front"), (b, "back")):
            self.assertEqual(got[name][0], str(self.inspect(name)["pids"]["init"]), run.out)
            self.assertEqual(got[name][1:], ["running", tier])
        self.assertNotEqual(got[a][0], got[b][0])
        # kern's own keys too, and the whole object as JSON.
        self.assertEqual(self.kern("inspect", "--format", "{{.pids.init}}", a).out.strip(), got[a][0])
        whole = json.loads(self.kern("inspect", "--format", "{{json .}}", a).out)
        self.assertEqual(whole["State"]["Pid"], int(got[a][0]))
        bad = self.kern("inspect", "--format", "{{.State.Nope}}", a)
        self.assertEqual(bad.rc, self.kern("inspect", "--no-such-flag", a).rc, bad.describe())
        self.assertIn(".State.Nope", bad.err)
        self.assertIn(".Pid", bad.err)

    def test_events_template(self):
        sp = subprocess.Popen([self.s.kern, "events", "--format", "{{.Action}} {{.Actor.ID}} {{.Type}}"],
                              env=self.base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: sp.poll() is None and sp.kill())
        time.sleep(0.3)
        name = self.started(["true"])
        self.wait_for(name, lambda r: r["state"] == "exited")
        time.sleep(0.4)
        sp.terminate()
        out, err = sp.communicate(timeout=10)
        self.assertIn("start %s box\n" % name, out, err)
        self.assertIn("die %s box\n" % name, out, err)

    def test_image_inspect_template(self):
        path = os.path.join(self.s.tmp, "fmt.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer()], ["fmt-me:3"],
                                          cmd=["/bin/sh", "-c", "sleep 2"], env=["PATH=/bin"], workdir="/srv")
        self.assertExit(self.kern("load", "-i", path), 0)
        run = self.kern("image", "inspect", "-f", "{{.Config.WorkingDir}}|{{json .Config.Cmd}}|{{.Id}}", "fmt-me:3")
        self.assertExit(run, 0)
        wd, cmd, ident = run.out.strip().split("|")
        self.assertEqual((wd, json.loads(cmd)), ("/srv", ["/bin/sh", "-c", "sleep 2"]))
        self.assertRegex(ident, r"^sha256:[0-9a-f]{64}$")

    def test_ps_ports_column(self):
        self.require("pasta", shutil.which("pasta") is not None, "pasta is not installed (--net private)")
        plain = self.started(["sleep", "1000"])
        run = self.kern("ps")
        self.assertNotIn("PORTS", run.out.splitlines()[0], "no box publishes a port yet")
        pub = self.started(["sleep", "1000"], ["--net", "private", "-p", "127.0.0.1:18097:80"])
        run = self.kern("ps")
        self.assertExit(run, 0)
        self.assertIn("PORTS", run.out.splitlines()[0])
        rows = {l.split()[0]: l for l in run.out.splitlines()[1:]}
        self.assertIn("127.0.0.1:18097->80/tcp", rows[pub])
        self.assertNotIn("->", rows[plain])
        self.assertEqual(self.kern("ps", "--format", "{{.Names}} {{.Ports}}", "--filter", "name=" + pub).out,
                         "%s 127.0.0.1:18097->80/tcp\n" % pub)

    def test_rm_f_of_ps_aq_with_none_one_and_several(self):
        for count in (0, 1, 3):
            names = [self.started(["sleep", "1000"]) for _ in range(count)]
            if count > 1:  # an exited one among them
                self.assertExit(self.kern("stop", "-t", "1", names[0], timeout=30), 0)
            listed = self.kern("ps", "-aq").out.split()
            self.assertEqual(sorted(listed), sorted(names))
            run = self.kern("rm", "-f", *listed, timeout=60)
            self.assertExit(run, 0)
            self.assertEqual(self.kern("ps", "-aq").out, "", "after %d box(es)" % count)
        # Without -f, no name is still a usage error.
        self.assertNotEqual(self.kern("rm").rc, 0)


if __name__ == "__main__":
    kerntest.main()
