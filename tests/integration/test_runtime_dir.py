"""Where a user's live boxes are registered: one place however the user arrived. A login
session has XDG_RUNTIME_DIR=/run/user/UID; `sudo -iu`, `su -` and cron set none. kern finds
/run/user/UID itself when it is the user's (0700), as podman does, so a box started one way is
listed by `kern ps` run the other way. The test makes /run/user/UID for the test user as root
(pam_systemd's part) when the host has none, and removes it afterwards."""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402


def make_session_dir(pw):
    """As root: /run/user/UID of the test user, 0700, theirs, as a login session has it."""
    path = "/run/user/%d" % pw.pw_uid
    made = not os.path.exists(path)
    if made:
        os.makedirs("/run/user", 0o755, exist_ok=True)
        os.mkdir(path, 0o700)
        os.chown(path, pw.pw_uid, pw.pw_gid)
    undo = (lambda: shutil.rmtree(path, ignore_errors=True)) if made else (lambda: None)
    return {"session_dir": path}, undo


class RuntimeDir(kerntest.KernTestCase):

    def setUp(self):
        super().setUp()
        info = kerntest.root_part()
        self.require("root", info is not None, "/run/user/UID is made as root (pam_systemd's part): run this test "
                     "as root (it drops to the test user itself)")
        self.session_dir = info["session_dir"]
        st = os.lstat(self.session_dir)
        self.require("root", st.st_uid == os.getuid() and st.st_mode & 0o777 == 0o700,
                     "%s is not the test user's private directory" % self.session_dir)

    def env(self, with_xdg):
        return {"XDG_RUNTIME_DIR": self.session_dir if with_xdg else None}

    def test_a_box_started_without_xdg_runtime_dir_is_seen_from_a_login_session_and_back(self):
        for started_with, listed_with in ((False, True), (True, False)):
            with self.subTest(started_with_xdg=started_with):
                name = self.s.new_name("rt")
                start = self.kern("box", name, "-d", "--allow-uncapped", "--rootfs", self.s.rootfs, "--",
                                  "/bin/sleep", "60", env=self.env(started_with))
                self.assertExit(start, 0)
                try:
                    ps = self.kern("ps", env=self.env(listed_with))
                    self.assertExit(ps, 0)
                    self.assertIn(name, ps.out, "the box is not listed by kern ps run %s XDG_RUNTIME_DIR:\n%s"
                                  % ("with" if listed_with else "without", ps.describe()))
                    self.assertIn(name, os.listdir(os.path.join(self.session_dir, "kern", "boxes")),
                                    "the box is not registered under %s/kern" % self.session_dir)
                finally:
                    self.kern("stop", name, env=self.env(listed_with))
                    self.kern("rm", "-f", name, env=self.env(started_with))


if __name__ == "__main__":
    kerntest.main(make_session_dir)
