"""process.rlimits with kern-oci as with runc, side by side on `runc spec` bundles:

- limits at or below the caller's own are the process's (/proc/self/limits read inside), root
  and rootless;
- a hard limit above the caller's: both runtimes answer alike, at create. Where the caller has
  no CAP_SYS_RESOURCE (rootless always; root on this project's CI machines) both refuse, and
  kern-oci's error names the limit and leaves no entry; where it has it, both give the raise,
  also to a container with a user namespace of its own (kern-oci sets the limits from the
  create process, as runc does from its parent, not from inside that namespace where a raise
  is never allowed).

Runs as root (CTest does) and drops to the test user for the rootless half. Skip names: runc,
user."""

import os
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from test_oci_foreign_bundles import run, tearDownModule  # noqa: E402,F401
from test_oci_engines import main  # noqa: E402
from test_oci_runc_parity import ParityCase  # noqa: E402

PROBE = ["sh", "-c", "grep 'Max open files' /proc/self/limits"]


def nofile(user):
    """The soft and hard RLIMIT_NOFILE a runtime run as `user` (None: this process) starts with."""
    got = run(["sh", "-c", "ulimit -Sn; ulimit -Hn"], user=user)
    soft, hard = got.out.split()
    return int(soft), int(hard)


def has_sys_resource(user):
    got = run(["sh", "-c", "grep CapEff /proc/self/status"], user=user)
    return bool(int(got.out.split()[1], 16) >> 24 & 1)


class RlimitsTest(ParityCase):

    def outcome(self, rootless, soft, hard, userns=False):
        def change(cfg):
            cfg["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": soft, "hard": hard}]
            if userns and not rootless:
                cfg["linux"]["namespaces"].append({"type": "user"})
                cfg["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 100000, "size": 65536}]
                cfg["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 100000, "size": 65536}]
        b, user = self.setup_bundle(rootless, PROBE, change)
        got = {}
        for name, argv in self.runtimes(rootless):
            cid = "r-" + uuid.uuid4().hex[:8]
            r = run(argv + ["run", "--bundle", b, cid], user=user)
            run(argv + ["delete", "--force", cid], user=user)
            got[name] = r
            if name == "kern-oci" and r.rc != 0:
                self.assertIn("RLIMIT_NOFILE", r.err, r.describe())
                self.assertFalse(os.path.exists(os.path.join(argv[2], cid)), "kern-oci left its entry")
        os.rename(b, b + "-" + uuid.uuid4().hex[:6])  # the next bundle is made at the same path
        return got, user

    def limits(self, run_):
        words = run_.out.split()
        return int(words[3]), int(words[4])

    def check_within(self, rootless):
        soft, hard = nofile(self.w.user if rootless else None)
        want = (min(soft, 1000), min(hard, 2000))
        got, _ = self.outcome(rootless, want[0], want[1])
        for name, r in got.items():
            self.assertExit(r, 0, name)
            self.assertEqual(self.limits(r), want, name)

    def test_limits_within_the_callers_as_root(self):
        self.require("root", os.geteuid() == 0, "root containers")
        self.check_within(False)

    def test_limits_within_the_callers_rootless(self):
        self.check_within(True)

    def check_raise(self, rootless, userns=False):
        soft, hard = nofile(self.w.user if rootless else None)
        got, user = self.outcome(rootless, hard + 1024, hard + 1024, userns)
        ok = {name: r.rc == 0 for name, r in got.items()}
        self.assertEqual(ok["kern-oci"], ok["runc"], "\n".join(r.describe() for r in got.values()))
        if ok["runc"]:
            for name, r in got.items():
                self.assertEqual(self.limits(r), (hard + 1024, hard + 1024), name)
        else:
            self.assertFalse(has_sys_resource(user) and not rootless, "refused though the caller may raise")

    def test_a_raise_as_root(self):
        self.require("root", os.geteuid() == 0, "root containers")
        self.check_raise(False)

    def test_a_raise_as_root_with_a_user_namespace(self):
        self.require("root", os.geteuid() == 0, "root containers")
        self.check_raise(False, userns=True)

    def test_a_raise_rootless(self):
        self.check_raise(True)


if __name__ == "__main__":
    main()
