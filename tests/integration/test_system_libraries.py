"""kern and the system's libraries (issue 21 item 5): a user that /etc/passwd does not know (one
of LDAP, sssd or systemd's userdb, here a uid of a user namespace of the test's own) with HOME
unset, as under cron or a service. kern asks NSS for the home directory; with passwd: files
systemd (Debian's default) glibc then opens libnss_systemd.so.2. A static kern brings a second
libc into the process with that dlopen, and `kern images` and `kern box` die of SIGSEGV (rc 139).
The pulls of registries by name (curl's resolver, the same second libc) are in
test_registry_by_name.py."""

import os
import pwd
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

STRANGER = 4242  # no line in /etc/passwd


class UnknownUserTest(kerntest.KernTestCase):

    def setUp(self):
        super().setUp()
        self.require("unshare", self.s.host.unshare, self.s.host.unshare.detail)
        try:
            pwd.getpwuid(STRANGER)
            known = True
        except KeyError:
            known = False
        self.require("stranger", not known, "uid %d has a passwd entry on this host" % STRANGER)
        self.runtime = self.use_private_runtime_dir()

    def as_stranger(self, *args):
        """kern ARGS as uid STRANGER of a new user namespace, with only PATH and the runtime dir."""
        argv = [shutil.which("unshare"), "--user", "--map-user=%d" % STRANGER, "--map-group=%d" % STRANGER,
                "env", "-i", "PATH=/usr/bin:/bin", "XDG_RUNTIME_DIR=" + self.runtime, self.s.kern] + list(args)
        return self.host_run(argv, timeout=60)

    def assertNotCrashed(self, run):
        self.assertNotIn(run.rc, (-11, 139), "kern died of SIGSEGV\n" + run.describe())

    def test_images_without_home(self):
        run = self.as_stranger("images")
        self.assertNotCrashed(run)
        self.assertExit(run, 0)
        self.assertIn("REPOSITORY", run.out)

    def test_box_without_home(self):
        run = self.as_stranger("box", "--allow-uncapped", "--rootfs", self.s.rootfs, "--", "/bin/sh", "-c",
                               "echo in-box")
        self.assertNotCrashed(run)
        self.assertExit(run, 0)
        self.assertEqual(run.out, "in-box\n")


if __name__ == "__main__":
    kerntest.main()
