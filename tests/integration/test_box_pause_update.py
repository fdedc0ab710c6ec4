"""kern pause, unpause and update as the unprivileged user on a host that delegates no cgroup v2
subtree to it (this one): each is refused with a hint and changes nothing (the box keeps running,
its clock keeps going); a name that is not running is refused too. Where a subtree is delegated,
the VM lane (tests/vm/in_vm_tests.sh) pauses a counting box, sees its clock stop and go on, and
reads back update -m."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402


class PauseUpdateTest(DetachedCase):
    def test_without_a_cgroup_each_is_refused_and_nothing_changes(self):
        run = self.box(["sh", "-c", "i=0; while :; do i=$((i+1)); echo $i; sleep 0.1; done"], flags=["-d"], name=False)
        self.assertExit(run, 0)
        name = run.out.strip()
        self.addCleanup(self.kern, "rm", "-f", name, timeout=30)
        info = json.loads(self.kern("inspect", name).out)
        info = info[0] if isinstance(info, list) else info
        if info["cgroup"] is not None:
            self.skipTest("this host gave the box a cgroup: the refusals do not apply (the VM lane checks pause there)")
        for argv in (["pause", name], ["unpause", name], ["update", "-m", "64m", name]):
            r = self.kern(*argv)
            self.assertEqual(r.rc, 1, r.describe())
            self.assertIn("has no cgroup of its own", r.err, r.describe())
            self.assertIn("kern: hint:", r.err)
        before = self.kern("logs", name).out.count("\n")
        time.sleep(1)
        self.assertGreater(self.kern("logs", name).out.count("\n"), before + 3, "the box stopped")
        r = self.kern("update", name)
        self.assertEqual(r.rc, 2, r.describe())
        self.assertIn("nothing to change", r.err)

    def test_a_box_that_is_not_running(self):
        r = self.kern("pause", "nobody-runs-this")
        self.assertEqual(r.rc, 1, r.describe())
        self.assertIn("kern: error:", r.err)


if __name__ == "__main__":
    kerntest.main()
