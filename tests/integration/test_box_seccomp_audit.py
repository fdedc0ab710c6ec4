"""KERN_SECCOMP=allowlist-audit (issue 12, section 1), as the unprivileged user: a call on no
list of the allowlist (sethostname) answers ENOSYS under the allowlist, runs under the audit mode
(the kernel's own answer, EPERM without CAP_SYS_ADMIN, as on the host) and is named on the report
fd with its count and first caller; the box says it is not locked down; the escape class is still
killed; a detached box is audited as the foreground box is; the mode is refused where kern does
not carry it out (warm kernels)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

AUDIT = {"KERN_SECCOMP": "allowlist-audit"}
SETHOSTNAME = ["/bin/sh", "-c", "hostname kern-audit-x; hostname kern-audit-x; echo done"]
NOT_LOCKED = ("kern: warning: KERN_SECCOMP=allowlist-audit: this box is NOT locked down: system calls "
              "outside the allowlist run and are recorded instead of refused")


class AuditModeTest(kerntest.KernTestCase):

    def test_a_refused_call_runs_and_the_report_names_it(self):
        # Outside: the host answers the call itself (EPERM for this user).
        outside = self.host_run(["/bin/busybox", "hostname", "kern-audit-x"]) if os.path.exists("/bin/busybox") \
            else self.host_run(["hostname", "kern-audit-x"])
        self.assertNotEqual(outside.rc, 0, outside.describe())
        self.assertIn("Operation not permitted", outside.err, outside.describe())
        # The allowlist refuses it before the kernel sees it (the discriminant).
        plain = self.box(SETHOSTNAME, report="flag")
        self.assertExit(plain, 0)
        self.assertIn("Function not implemented", plain.err, plain.describe())
        self.assertNotIn("allowlist-audit", plain.err, plain.describe())
        self.assertEqual([r for r in plain.report_records() if r["event"] == "seccomp_audit"], [])
        # The audit mode lets the kernel answer and records the call.
        run = self.box(SETHOSTNAME, env=AUDIT, report="flag")
        self.assertExit(run, 0)
        self.assertIn("Operation not permitted", run.err, run.describe())
        self.assertNotIn("Function not implemented", run.err, run.describe())
        self.assertIn(NOT_LOCKED, run.err, run.describe())
        self.assertIn("kern: warning: KERN_SECCOMP=allowlist-audit: 1 system call outside the allowlist ran "
                      "(the allowlist would answer ENOSYS): sethostname x2 (first by hostname)", run.err, run.describe())
        recs = run.report_records()
        started = [r for r in recs if r["event"] == "started"]
        self.assertEqual(started[0]["seccomp"], "allowlist-audit")
        audit = [r for r in recs if r["event"] == "seccomp_audit"]
        self.assertEqual(len(audit), 1, recs)
        self.assertEqual(audit[0]["syscall"], "sethostname")
        self.assertEqual(audit[0]["count"], 2)
        self.assertEqual(audit[0]["first_command"], "hostname")
        self.assertEqual(audit[0]["name"], run.name)
        self.assertEqual(recs[-1]["event"], "exited", "the audit records come before the exited record")
        # The control: a box that makes no such call is told so, with nothing recorded.
        quiet = self.box(["/bin/true"], env=AUDIT, report="flag")
        self.assertExit(quiet, 0)
        self.assertIn("kern: note: KERN_SECCOMP=allowlist-audit: no system call outside the allowlist was made",
                      quiet.err, quiet.describe())
        self.assertEqual([r for r in quiet.report_records() if r["event"] == "seccomp_audit"], [])

    def test_the_named_rules_still_apply(self):
        for name in ("unshare", "mount"):
            run = self.probe_box("try", name, env=AUDIT)
            self.assertExit(run, 159, "%s must still be killed under allowlist-audit" % name)
        run = self.probe_box("try", "keyctl", env=AUDIT)
        self.assertTry(run, "keyctl", "ENOSYS")
        run = self.probe_box("try", "vsock", env=AUDIT)
        self.assertTry(run, "vsock", "EAFNOSUPPORT")

    def test_a_detached_box_is_audited_by_the_same_session(self):
        # kern box -d runs its box through the same session as the foreground box: the call is
        # recorded on the report fd, and the tally is in the box's log (its supervisor has no
        # caller's stderr). The discriminant: the same detached box under the allowlist.
        for env, ran in ((AUDIT, True), ({}, False)):
            run = self.box(SETHOSTNAME, flags=["-d"], env=env, report="flag")
            self.assertExit(run, 0)
            self.addCleanup(self.kern, "rm", "-f", run.name, timeout=30)
            recs = run.report_records()
            self.assertEqual(recs[-1]["event"], "exited", recs)
            audit = [r for r in recs if r["event"] == "seccomp_audit"]
            logs = self.kern("logs", run.name)
            self.assertExit(logs, 0)
            if ran:
                self.assertEqual([(a["syscall"], a["count"]) for a in audit], [("sethostname", 2)], recs)
                self.assertIn("Operation not permitted", logs.out + logs.err, logs.describe())
                self.assertIn("kern: warning: KERN_SECCOMP=allowlist-audit: 1 system call outside the allowlist ran "
                              "(the allowlist would answer ENOSYS): sethostname x2 (first by hostname)",
                              logs.out + logs.err, logs.describe())
            else:
                self.assertEqual(audit, [], recs)
                self.assertIn("Function not implemented", logs.out + logs.err, logs.describe())
                self.assertNotIn("allowlist-audit", logs.out + logs.err, logs.describe())

    def test_refused_where_not_carried_out(self):
        run = self.kern("kernel", "start", self.s.new_name(), "--rootfs", self.s.rootfs, "--lang", "bash", env=AUDIT)
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn("KERN_SECCOMP=allowlist-audit: not implemented yet for kern kernel start", run.err)
        run = self.box(["/bin/true"], env={"KERN_SECCOMP": "allowlist-audits"})
        self.assertKernError(run, "allowed values: allowlist, denylist, allowlist-audit")


if __name__ == "__main__":
    kerntest.main()
