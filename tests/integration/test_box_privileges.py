"""Privileges (kern-box(1)): capability sets (all zero under --cap-drop ALL, the default set
without it, never the always-dropped ones), no_new_privs, a setuid binary that cannot gain
privileges, and -u UID[:GID]."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

CAP_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
CAP_CHOWN = 0
CAP_NET_ADMIN = 12
CAP_SYS_MODULE = 16
CAP_SYS_PTRACE = 19
CAP_SYS_ADMIN = 21
# A few of the always-dropped set (runtime/caps.cc) whose presence would matter in a box.
ALWAYS_DROPPED = (CAP_NET_ADMIN, CAP_SYS_MODULE, CAP_SYS_PTRACE, CAP_SYS_ADMIN)


def caps_of(run):
    kv = run.kv()
    return {k: int(kv[k], 16) for k in CAP_SETS if k in kv}


class CapabilitiesTest(kerntest.KernTestCase):

    def probe_caps(self, flags=()):
        run = self.probe_box("caps", flags=flags)
        self.assertExit(run, 0)
        caps = caps_of(run)
        self.assertEqual(sorted(caps), sorted(CAP_SETS), run.describe())
        return caps

    def test_cap_drop_all_zeroes_every_set(self):
        caps = self.probe_caps(["--cap-drop", "ALL"])
        self.assertEqual(caps, {k: 0 for k in CAP_SETS}, "every capability set must be empty")
        # Discriminant: root of a fresh user namespace outside has a full set.
        outside = caps_of(self.probe_outside("caps", wrap=("unshare", "-Ur")))
        self.assertNotEqual(outside.get("CapEff", 0), 0, "unshare -Ur gives no capabilities here?")
        # Positive control in the same run: without the flag the default set is there.
        default = self.probe_caps()
        self.assertNotEqual(default["CapEff"], 0, "the default set is empty")

    def test_default_set_lacks_the_always_dropped(self):
        caps = self.probe_caps()
        self.assertEqual(caps["CapAmb"], 0)
        self.assertEqual(caps["CapEff"], caps["CapPrm"])
        for cap in ALWAYS_DROPPED:
            for k in ("CapEff", "CapPrm", "CapBnd", "CapInh"):
                self.assertFalse(caps[k] & (1 << cap), "capability %d in %s of the default box" % (cap, k))

    def test_cap_add_all_still_lacks_the_always_dropped(self):
        caps = self.probe_caps(["--cap-add", "ALL"])
        self.assertNotEqual(caps["CapEff"], 0)
        for cap in ALWAYS_DROPPED:
            self.assertFalse(caps["CapBnd"] & (1 << cap), "capability %d in the bounding set" % cap)
            self.assertFalse(caps["CapEff"] & (1 << cap), "capability %d effective" % cap)

    def test_cap_add_always_dropped_is_an_error(self):
        run = self.box(["/bin/true"], flags=["--cap-add", "SYS_ADMIN"], started=True)
        self.assertKernError(run, "SYS_ADMIN")
        self.assertEqual(run.started, b"")

    def test_drop_all_add_one(self):
        caps = self.probe_caps(["--cap-drop", "ALL", "--cap-add", "CHOWN"])
        self.assertEqual(caps["CapEff"], 1 << CAP_CHOWN)
        self.assertEqual(caps["CapAmb"], 0)

    def test_cap_drop_one_with_or_without_prefix(self):
        default = self.probe_caps()
        self.assertTrue(default["CapEff"] & (1 << CAP_CHOWN), "CHOWN is not in the default set")
        for spelling in ("CAP_CHOWN", "CHOWN"):
            caps = self.probe_caps(["--cap-drop", spelling])
            self.assertEqual(caps["CapEff"], default["CapEff"] & ~(1 << CAP_CHOWN), "--cap-drop " + spelling)
            self.assertFalse(caps["CapBnd"] & (1 << CAP_CHOWN), "--cap-drop " + spelling)

    def test_no_new_privs(self):
        run = self.probe_box("nnp")
        self.assertEqual(run.kv().get("NoNewPrivs"), "1", run.describe())
        outside = self.probe_outside("nnp")
        self.assertEqual(outside.kv().get("NoNewPrivs"), "0", "discriminant: the caller has no_new_privs itself")


class SecurityProfileTest(kerntest.KernTestCase):

    def test_untrusted(self):
        caps = self.probe_box("caps", flags=["--security-profile", "untrusted"])
        self.assertExit(caps, 0)
        self.assertEqual(caps_of(caps), {k: 0 for k in CAP_SETS}, caps.describe())
        lines = [l for l in caps.err.splitlines() if l.startswith("kern: security-profile=untrusted: ")]
        self.assertEqual(len(lines), 1, "one line naming what the profile set\n" + caps.describe())
        write = self.probe_box("try", "write", "/new-file", flags=["--security-profile", "untrusted"])
        self.assertTry(write, "write", "EROFS")
        tmp = self.probe_box("try", "write", "/tmp/f", flags=["--security-profile", "untrusted"])
        self.assertTry(tmp, "write", "ok", "positive control: /tmp stays writable")
        killed = self.probe_box("try", "mount", flags=["--security-profile", "untrusted"])
        self.assertExit(killed, 159)

    def test_unknown_profile(self):
        run = self.box(["/bin/true"], flags=["--security-profile", "bogus"], started=True)
        self.assertKernError(run, "bogus")
        self.assertEqual(run.started, b"")


class SetuidTest(kerntest.KernTestCase):
    """kern-probe-suid in the root file system is owned by the caller, who is root in the box:
    a setuid-root binary as the box sees it. Run by uid 1000 of a --uid-range box, it must not
    make the process root; run the same way in an equivalent user namespace without kern
    (unshare with the same map, setpriv to uid 1000) it does."""

    def setUp(self):
        super().setUp()
        self.need_probe()
        self.require("uid-range", self.s.host.uid_range, self.s.host.uid_range.detail)

    def subid_start(self, path):
        for line in open(path):
            parts = line.strip().split(":")
            if len(parts) == 3 and parts[0] in (self.s.host.user, str(self.s.host.uid)):
                return int(parts[1]), int(parts[2])
        self.fail("no %s entry" % path)

    def test_setuid_binary_cannot_gain_root(self):
        run = self.box(["/bin/kern-probe-suid", "setuid-check"], flags=["--uid-range", "-u", "1000:1000"])
        self.assertExit(run, 0)
        kv = run.kv()
        self.assertEqual(kv.get("uid"), "1000", run.describe())
        self.assertEqual(kv.get("euid"), "1000", "exec of a setuid-root file raised the euid\n" + run.describe())
        self.assertEqual(int(kv.get("CapEff", "1"), 16), 0, "capabilities gained\n" + run.describe())
        self.assertEqual(int(kv.get("CapPrm", "1"), 16), 0, "capabilities gained\n" + run.describe())
        self.assertEqual(kv.get("NoNewPrivs"), "1")
        self.assertEqual(kv.get("setuid0"), "EPERM", run.describe())
        self.assertEqual(kv.get("euid-after"), "1000")
        # Same file, as the box's root: the positive control that it runs at all.
        root = self.box(["/bin/kern-probe-suid", "setuid-check"], flags=["--uid-range"])
        self.assertExit(root, 0)
        self.assertEqual(root.kv().get("euid"), "0")

        # Discriminant: the same exec in the same id map, without kern, does make root.
        self.require("unshare", self.s.host.unshare, self.s.host.unshare.detail)
        self.require("setpriv", os.path.exists("/usr/bin/setpriv"), "setpriv(1) not installed")
        suid = os.path.join(self.s.work, "kern-probe-suid")
        with open(self.s.probe, "rb") as src, open(suid, "wb") as dst:
            dst.write(src.read())
        os.chmod(suid, 0o4755)
        su, su_n = self.subid_start("/etc/subuid")
        sg, sg_n = self.subid_start("/etc/subgid")
        outside = self.host_run(["unshare", "--map-root-user", "--map-users=%d,1,%d" % (su, su_n),
                                 "--map-groups=%d,1,%d" % (sg, sg_n), "/usr/bin/setpriv", "--reuid=1000",
                                 "--regid=1000", "--clear-groups", suid, "setuid-check"])
        self.require("outside-setuid", outside.rc == 0 and outside.kv().get("uid") == "1000",
                     "cannot build the equivalent namespace outside: " + outside.describe())
        self.assertEqual(outside.kv().get("euid"), "0",
                         "outside the box the setuid exec did not raise the euid either, so the test "
                         "shows nothing\n" + outside.describe())


class UserTest(kerntest.KernTestCase):

    def test_user_0_0(self):
        run = self.probe_box("ids", flags=["-u", "0:0"])
        self.assertExit(run, 0)
        kv = run.kv()
        self.assertEqual((kv.get("uid"), kv.get("euid"), kv.get("gid"), kv.get("egid")), ("0", "0", "0", "0"))

    def test_default_is_root_in_the_box(self):
        run = self.box(["id", "-u"])
        self.assertExit(run, 0)
        self.assertEqual(run.out.strip(), "0")

    def test_user_with_uid_range(self):
        self.require("uid-range", self.s.host.uid_range, self.s.host.uid_range.detail)
        run = self.probe_box("ids", flags=["--uid-range", "-u", "1000:1001"])
        self.assertExit(run, 0)
        kv = run.kv()
        self.assertEqual((kv.get("uid"), kv.get("euid"), kv.get("gid"), kv.get("egid")),
                         ("1000", "1000", "1001", "1001"), run.describe())
        self.assertEqual(kv.get("groups", ""), "", "supplementary groups should be empty")
        # The box's view of the map: 0 is the caller, the rest the subordinate range.
        m = self.box(["/bin/cat", "/proc/self/uid_map"], flags=["--uid-range"])
        self.assertExit(m, 0)
        rows = [line.split() for line in m.out.splitlines()]
        self.assertIn(["0", str(self.s.host.uid), "1"], rows, m.describe())
        self.assertGreaterEqual(len(rows), 2, m.describe())

    def test_user_without_gid(self):
        self.require("uid-range", self.s.host.uid_range, self.s.host.uid_range.detail)
        run = self.probe_box("ids", flags=["--uid-range", "-u", "1000"])
        self.assertExit(run, 0)
        self.assertEqual(run.kv().get("uid"), "1000")


if __name__ == "__main__":
    kerntest.main()
