"""Image hardening (issue 8): every applet of the built-in busybox image runs, gc keeps
everything while a store record cannot be read, and special files in an image source are
refused instead of hanging kern."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import kerntest  # noqa: E402

SUPPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support")


class HardeningCase(kerntest.KernTestCase):
    """A store of its own per test (XDG_CACHE_HOME)."""

    def setUp(self):
        super().setUp()
        name = self.id().rsplit(".", 1)[-1]
        self.cache = os.path.join(self.s.tmp, "cache-" + name)
        os.makedirs(self.cache, exist_ok=True)
        self.store = os.path.join(self.cache, "kern")
        self.work = os.path.join(self.s.work, name)
        os.makedirs(self.work, exist_ok=True)
        self.require("busybox", os.access(build_images.BUSYBOX, os.X_OK),
                     build_images.BUSYBOX + " is missing (apt-get install busybox-static)")

    def base_env(self):
        env = super().base_env()
        env["XDG_CACHE_HOME"] = self.cache
        return env

    def image_box(self, image, cmd, flags=(), **kw):
        return self.box(cmd, flags=["--image", image] + list(flags), rootfs=False, **kw)

    def assertVerbError(self, run, *needles):
        self.assertExit(run, 1)
        self.assertTrue([l for l in run.err.splitlines() if l.startswith("kern: error: ")], run.describe())
        for n in needles:
            self.assertIn(n, run.err, run.describe())


# Inside the box: every applet `busybox --list-full` names must be at its place, resolve to
# /bin/busybox, and run when exec'd by its path with --help (126/127: the link does not lead to a
# runnable busybox); those installed in a PATH directory must also be found along PATH, looked up
# by hand so that the shell's own applet shortcuts cannot hide a missing file.
APPLET_CHECK = r'''
n=0; bad=0
for p in $(/bin/busybox --list-full); do
  n=$((n+1)); p=/${p#/}; a=${p##*/}
  if [ ! -e "$p" ]; then echo "BAD $a: $p is missing or dangling"; bad=$((bad+1)); continue; fi
  real=$(/bin/busybox readlink -f "$p")
  if [ "$real" != /bin/busybox ]; then echo "BAD $a: $p -> $real"; bad=$((bad+1)); continue; fi
  "$p" --help </dev/null >/dev/null 2>&1; rc=$?
  if [ $rc -eq 126 ] || [ $rc -eq 127 ]; then echo "BAD $a: $p exits $rc"; bad=$((bad+1)); continue; fi
  case ":$PATH:" in *":${p%/*}:"*) ;; *) continue ;; esac
  found=""
  for d in $(echo "$PATH" | /bin/busybox tr : ' '); do
    if [ -e "$d/$a" ]; then found="$d/$a"; break; fi
  done
  if [ -z "$found" ]; then echo "BAD $a: not found along PATH"; bad=$((bad+1)); fi
done
echo "applets=$n bad=$bad"
'''


class BuiltinBusyboxTest(HardeningCase):

    def test_every_applet_of_the_builtin_image_runs(self):
        # The image the README's demo uses, made the way setup.sh makes it.
        run = self.host_run(["/bin/sh", os.path.join(SUPPORT, "make_busybox_image.sh"), self.s.kern,
                             os.path.join(self.work, "bb.tar")], timeout=120)
        self.assertExit(run, 0)
        listed = subprocess.run([build_images.BUSYBOX, "--list-full"], capture_output=True, text=True,
                                check=True).stdout.split()
        self.assertGreater(len(listed), 100)
        box = self.image_box("busybox", ["/bin/sh", "-c", APPLET_CHECK], timeout=300)
        self.assertExit(box, 0)
        self.assertEqual([l for l in box.out.splitlines() if l.startswith("BAD ")], [], box.describe())
        self.assertIn("applets=%d bad=0" % len(listed), box.out, box.describe())
        # The ones a newcomer meets first, exec'd by kern itself through the image's PATH.
        for argv in (["env"], ["id"], ["wc", "-c", "/etc/passwd"], ["head", "-n1", "/etc/passwd"],
                     ["find", "/etc", "-name", "passwd"], ["awk", "BEGIN{print 1}"]):
            r = self.image_box("busybox", argv)
            self.assertExit(r, 0, " ".join(argv))


if __name__ == "__main__":
    kerntest.main()
