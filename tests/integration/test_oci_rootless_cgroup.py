"""A rootless container whose config names a linux.cgroupsPath the user cannot make: create
fails, with kern-oci as with runc (runc's cgroups.bats), and leaves nothing; the same bundle
without cgroupsPath runs on both (the control), and kern-oci runs the named one too when the
config is annotated io.kern.allow-uncapped=true (its enforcement then says "not enforced").

On a cgroup v1 or hybrid host, the "cgroup" mount of `runc spec --rootless` shows the same
hierarchies under kern-oci as under runc, each the creator's own directory: never the host's
whole tree (the control: the host's /sys/fs/cgroup lists more than the container does, and
under kern-oci before this the container saw all of it, other cgroups' names included).

Needs a test user whom this host delegates no cgroup (CI's host: a cgroup v2 tree owned by
root, or none). Runs as root (CTest does) and drops to the user. Skip names: runc, user,
delegated (the user may write the cgroup tree: there the path would be made)."""

import json
import os
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from test_oci_foreign_bundles import run, tearDownModule  # noqa: E402,F401
from test_oci_engines import main  # noqa: E402
from test_oci_runc_parity import ParityCase  # noqa: E402


def user_may_write_cgroups(user):
    got = run(["sh", "-c", "for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do "
                           "[ -w $d ] && [ -f $d/cgroup.procs ] && echo writable; done; true"], user=user)
    return "writable" in got.out


class RootlessCgroupsPathTest(ParityCase):

    def write(self, b, cfg):
        with open(os.path.join(b, "config.json"), "w") as f:
            json.dump(cfg, f)

    def test_a_cgroups_path_the_user_cannot_make_fails_create(self):
        b, cfg, user = self.bundle("runc", True, ["true"])
        self.require("delegated", not user_may_write_cgroups(user), "the test user may write a cgroup tree here")
        path = "/kern-itest-" + uuid.uuid4().hex[:8]
        for name, argv in self.runtimes(rootless=True):
            state = argv[2]
            # The control: without cgroupsPath the container runs.
            cfg["linux"].pop("cgroupsPath", None)
            cfg["annotations"] = {}
            self.write(b, cfg)
            cid = "c-" + uuid.uuid4().hex[:8]
            self.assertExit(run(argv + ["run", "--bundle", b, cid], user=user), 0, "%s: without cgroupsPath" % name)
            run(argv + ["delete", "--force", cid], user=user)
            cfg["linux"]["cgroupsPath"] = path
            self.write(b, cfg)
            cid = "c-" + uuid.uuid4().hex[:8]
            got = run(argv + ["run", "--bundle", b, cid], user=user)
            self.assertExit(got, 1, "%s: a cgroupsPath the user cannot make" % name)
            self.assertIn("unable to apply cgroup configuration", got.err, name)
            self.assertIn("permission denied", got.err, name)
            self.assertFalse(os.path.exists(os.path.join(state, cid)), "%s left its state entry" % name)
            if name == "kern-oci":
                cfg["annotations"] = {"io.kern.allow-uncapped": "true"}
                self.write(b, cfg)
                self.assertExit(run(argv + ["run", "--bundle", b, cid], user=user), 0, "kern-oci, allow-uncapped")
                run(argv + ["delete", "--force", cid], user=user)
        for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
            self.assertFalse(os.path.exists(root + path), "a cgroup was left at " + root + path)

    def test_the_cgroup_mount_shows_the_creators_own_directories(self):
        host = sorted(os.listdir("/sys/fs/cgroup"))
        self.require("v1", any(os.path.isfile(os.path.join("/sys/fs/cgroup", h, "tasks")) for h in host),
                     "no cgroup v1 hierarchy on this host")
        probe = "ls /sys/fs/cgroup; echo --; find /sys/fs/cgroup/memory/ -mindepth 1 -maxdepth 1 -type d | wc -l"
        b, cfg, user = self.bundle("runc", True, ["sh", "-c", probe])
        seen = {}
        for name, argv in self.runtimes(rootless=True):
            got = run(argv + ["run", "--bundle", b, "c-" + uuid.uuid4().hex[:8]], user=user)
            self.assertExit(got, 0, name)
            listing, subdirs = got.out.split("--\n")
            seen[name] = (sorted(listing.split()), subdirs.strip())
        self.assertEqual(seen["kern-oci"], seen["runc"])
        self.assertNotEqual(seen["kern-oci"][0], host, "the container lists the host's whole /sys/fs/cgroup")


if __name__ == "__main__":
    main()
