"""The default seccomp filter (kern-box(1)): each call the box must refuse is tried inside with
kern-probe and gets the contract's answer (killed by SIGSYS, exit 159 / ENOSYS / an errno),
and the same call by the same user outside the box is answered by the kernel (the
discriminant: without it a refusal could be the host's, not the box's)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

KILLED = "killed"

# try name -> (answer in the box, wrapper outside, outside answers that show the discriminant,
#              the host setting that decides the outside answer)
CASES = {
    "mount": (KILLED, ("unshare", "-Urm"), {"ok"}, None),
    "umount": (KILLED, ("unshare", "-Urm"), {"ENOENT", "EINVAL"}, None),
    "unshare": (KILLED, (), {"ok"}, "max_user_namespaces"),
    "clone-ns": (KILLED, (), {"ok"}, "max_user_namespaces"),
    "setns": (KILLED, ("unshare", "-Urn"), {"ok"}, None),
    "bpf": (KILLED, (), {"ok"}, "unprivileged_bpf_disabled"),
    "ptrace": (KILLED, (), {"ok"}, "yama.ptrace_scope"),
    "int80": (KILLED, (), {"ok"}, None),
    "x32": (KILLED, (), {"ok"}, None),
    "keyctl": ("ENOSYS", (), {"ok"}, None),
    "io_uring_setup": ("ENOSYS", (), {"ok"}, "io_uring_disabled"),
    "perf_event_open": ("ENOSYS", (), {"ok"}, "perf_event_paranoid"),
    "userfaultfd": ("ENOSYS", (), {"ok"}, "unprivileged_userfaultfd"),
    "clone3": ("ENOSYS", (), {"ok"}, None),
    "tiocsti": ("EPERM", (), {"ok"}, "legacy_tiocsti"),
    "tioclinux": ("EPERM", (), {"ENOTTY"}, None),
    "vsock": ("EAFNOSUPPORT", (), {"ok"}, None),
}


class SeccompTest(kerntest.KernTestCase):

    def check_inside(self, name, want, flags=(), env=None):
        if want == KILLED:
            # The call is made by the probe process itself: the kill is the box's exit status.
            run = self.probe_box("try", name, flags=flags, env=env)
            self.assertExit(run, 159, "%s must be killed by SIGSYS in the box" % name)
            self.assertNotIn(name + ":", run.out, "the call returned in the box\n" + run.describe())
            each = self.probe_box("try-each", name, flags=flags, env=env)
            self.assertExit(each, 0)
            self.assertTry(each, name, "killed SIGSYS")
        else:
            run = self.probe_box("try", name, flags=flags, env=env)
            self.assertExit(run, 0)
            self.assertTry(run, name, want)

    def outside_answer(self, name, wrap):
        run = self.probe_outside("try-each", name, wrap=wrap)
        self.assertExit(run, 0, "the probe outside the box")
        got = run.kv().get(name)
        self.assertIsNotNone(got, "no answer outside\n" + run.describe())
        return got

    def check_differs_outside(self, name, want, wrap):
        """The discriminant: outside, the same call is answered by the kernel, not as in the box."""
        got = self.outside_answer(name, wrap)
        inside = "killed SIGSYS" if want == KILLED else want
        self.require("discriminant-" + name, got != inside,
                     "inside the box the call got %r as the contract says, and outside (%s) it got the "
                     "same answer, so this host cannot tell the box's refusal from its own"
                     % (inside, " ".join(wrap + ("kern-probe",))))

    def check_possible_outside(self, name, wrap, accepted, sysctl):
        got = self.outside_answer(name, wrap)
        setting = ""
        if sysctl:
            setting = "; host %s=%s" % (sysctl, self.s.host.sysctls.get(sysctl, "(absent)"))
        self.require("outside-" + name, got in accepted,
                     "outside a box (%s) the call got %r, not %s%s: this host does not allow it to "
                     "this user at all" % (" ".join(wrap + ("kern-probe",)), got, " or ".join(sorted(accepted)),
                                           setting))

    def require_i386(self):
        # Without i386 emulation the kernel faults int 0x80 before seccomp sees it.
        run = self.probe_outside("try-each", "int80")
        got = run.kv().get("int80")
        self.require("i386", got == "ok", "int 0x80 outside a box answers %r: no i386 emulation here" % got)

    def test_positive_control_probe_runs_under_the_filter(self):
        run = self.probe_box("seccomp")
        self.assertExit(run, 0)
        self.assertEqual(run.kv().get("Seccomp"), "2", "filter mode\n" + run.describe())
        nnp = self.probe_box("nnp")
        self.assertEqual(nnp.kv().get("NoNewPrivs"), "1", nnp.describe())
        # Ordinary work is allowed: a file write, fork+exec through the shell (clone3 is ENOSYS,
        # the fallback to clone without namespace flags works).
        w = self.probe_box("try", "write", "/tmp/ordinary")
        self.assertTry(w, "write", "ok")
        sh = self.box(["/bin/sh", "-c", "echo $( /bin/echo nested ) | /bin/cat"])
        self.assertExit(sh, 0)
        self.assertEqual(sh.out.strip(), "nested")

    def test_denylist_mode_keeps_the_escape_and_errno_rules(self):
        env = {"KERN_SECCOMP": "denylist"}
        for name in ("mount", "unshare", "setns", "ptrace"):
            self.check_inside(name, KILLED, env=env)
        self.check_inside("keyctl", "ENOSYS", env=env)
        self.check_inside("tiocsti", "EPERM", env=env)
        self.check_inside("vsock", "EAFNOSUPPORT", env=env)
        explicit = self.probe_box("try", "keyctl", env={"KERN_SECCOMP": "allowlist"})
        self.assertTry(explicit, "keyctl", "ENOSYS")


def _make_cases(name, want, wrap, accepted, sysctl):
    def refused_inside(self):
        if name == "int80":
            self.require_i386()
        self.check_inside(name, want)
        self.check_differs_outside(name, want, wrap)
    refused_inside.__doc__ = "%s: %s in the box, answered otherwise outside" % (name, want)

    def possible_outside(self):
        if name == "int80":
            self.require_i386()
        self.check_possible_outside(name, wrap, accepted, sysctl)
    possible_outside.__doc__ = "%s: possible outside a box (%s)" % (name, " or ".join(sorted(accepted)))
    return refused_inside, possible_outside


for _name, (_want, _wrap, _accepted, _sysctl) in CASES.items():
    _inside, _outside = _make_cases(_name, _want, _wrap, _accepted, _sysctl)
    setattr(SeccompTest, "test_%s_refused_in_box" % _name.replace("-", "_"), _inside)
    setattr(SeccompTest, "test_%s_possible_outside" % _name.replace("-", "_"), _outside)


if __name__ == "__main__":
    kerntest.main()
