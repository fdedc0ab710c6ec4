"""`kern oci plan`: what create would do with a bundle, printed from the plan create makes, and
nothing created. On bundles of `runc spec` (root) and `runc spec --rootless`:

- the mount lines follow config.json's mounts in document order, the root steps around them
  (propagation, the root bound, pivot_root, then readonlyPaths and maskedPaths), and a user
  namespace's id maps as the config gives them;
- pid 1 is said to be the workload; the workload line names the config's ids and capabilities;
- --json carries the same mount lines; a bad bundle is an error (exit 1) naming config.json;
- the control: the plan leaves --root, the cgroup tree and the bundle as they were, and create
  of the same bundle then runs the process the plan named.

Skip names: runc (its spec writes the bundles), user (no test user)."""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from test_oci_foreign_bundles import ForeignCase, run, tearDownModule  # noqa: E402,F401
from test_oci_engines import main  # noqa: E402


class OciPlanTest(ForeignCase):

    def setUp(self):
        super().setUp()
        self.require("runc", shutil.which("runc") is not None, "runc is not installed (its spec writes the bundles)")

    def plan(self, b, user, *extra):
        state = os.path.join(self.dir, "state")
        return run([self.w.kern, "oci", "--root", state, "plan", "--bundle", b] + list(extra) + ["c1"], user=user), state

    def check(self, rootless):
        b, cfg, user = self.bundle("runc", rootless, ["sh", "-c", "echo planned"])
        before = sorted(os.listdir(b))
        got, state = self.plan(b, user)
        self.assertExit(got, 0)
        lines = got.out.splitlines()
        mounts = [l.split(": ", 1)[1] for l in lines if l.startswith("4.")]
        dests = [m.split(" ", 1)[0] for m in mounts if m.startswith("/")]
        self.assertEqual(dests, [m["destination"] for m in cfg["mounts"]], got.out)
        self.assertEqual(mounts[:2], ["root-propagation / rprivate", "bind-root " + self.w.rootfs], got.out)
        after_pivot = mounts[mounts.index("pivot-root /") + 1:]
        self.assertEqual([m for m in after_pivot if m.startswith("readonly ")],
                         ["readonly " + p for p in cfg["linux"]["readonlyPaths"]])
        self.assertEqual([m for m in after_pivot if m.startswith("mask ")],
                         ["mask " + p for p in cfg["linux"]["maskedPaths"]])
        self.assertIn("6. init: waits for start, then becomes the workload (its execve): the workload is PID 1", lines)
        work = [l for l in lines if l.startswith("7. workload:")][0]
        self.assertIn("ids %d:%d" % (cfg["process"]["user"]["uid"], cfg["process"]["user"]["gid"]), work)
        self.assertIn("CAP_KILL", work)
        self.assertTrue(work.endswith("execve sh -c echo planned"), work)
        idmap = [l for l in lines if l.startswith("3. id map:")][0]
        if rootless:
            m = cfg["linux"]["uidMappings"][0]
            self.assertIn("uid %d:%d:%d" % (m["containerID"], m["hostID"], m["size"]), idmap)
        else:
            self.assertIn("no user namespace", idmap)
        js, _ = self.plan(b, user, "--json")
        self.assertExit(js, 0)
        self.assertEqual(json.loads(js.out)["mounts"], mounts)
        # Nothing made: no state under --root, the bundle as it was.
        self.assertFalse(os.path.exists(state) and os.listdir(state), "plan left state under --root")
        self.assertEqual(sorted(os.listdir(b)), before)
        # The control: create and start of the same bundle run the process the plan named.
        out = run([self.w.kern, "oci", "--root", state, "run", "--bundle", b, "c1"], user=user)
        self.assertExit(out, 0)
        self.assertEqual(out.out.strip(), "planned")

    def test_plan_of_a_root_bundle(self):
        self.require("root", os.geteuid() == 0, "a root bundle")
        self.check(False)

    def test_plan_of_a_rootless_bundle(self):
        self.check(True)

    def test_a_bad_bundle_is_an_error(self):
        b, cfg, user = self.bundle("runc", False, ["true"])
        with open(os.path.join(b, "config.json"), "w") as f:
            f.write("{not json")
        got, state = self.plan(b, user)
        self.assertExit(got, 1)
        self.assertIn("config.json", got.err)
        self.assertEqual(got.out, "")


if __name__ == "__main__":
    main()
