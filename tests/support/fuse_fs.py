"""A FUSE file system the test user mounts: bindfs (FUSE 2) over a directory of the test's.

What a home on sshfs, gocryptfs or another FUSE file system gives kern: no RENAME_EXCHANGE
(renameat2 answers EINVAL), no reflinks, permissions checked by the kernel from what the daemon
reports. bindfs mounts through the setuid fusermount, so the unprivileged test user can; the
test unmounts it at its end (fusermount -u -z).

    mnt = fuse_fs.bindfs(case, src_dir, mount_point)

skips by the name "fuse" (a failure where KERN_TEST_REQUIRE names it) when bindfs or fusermount
is missing, /dev/fuse is not usable (a host without udev: ./setup.sh tun makes it 0666) or the
mount fails.
"""

import ctypes
import os
import shutil
import subprocess

import kerntest

AT_FDCWD = -100
RENAME_EXCHANGE = 2


def exchange_errno(directory):
    """0 when renameat2 with RENAME_EXCHANGE swaps two files in directory, else its errno."""
    libc = ctypes.CDLL(None, use_errno=True)
    a, b = os.path.join(directory, "xchg-a"), os.path.join(directory, "xchg-b")
    for path in (a, b):
        with open(path, "w") as f:
            f.write(path)
    rc = libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE)
    err = 0 if rc == 0 else ctypes.get_errno()
    os.unlink(a)
    os.unlink(b)
    return err


def bindfs(case, src, mnt):
    """src (made if missing) mounted at mnt (made) with bindfs; unmounted when `case` ends.
    Returns mnt."""
    tool = shutil.which("bindfs")
    fusermount = shutil.which("fusermount") or shutil.which("fusermount3")
    kerntest.require(case, "fuse", bool(tool and fusermount), "bindfs or fusermount is not installed (Debian: bindfs)")
    kerntest.require(case, "fuse", os.access("/dev/fuse", os.R_OK | os.W_OK),
                     "/dev/fuse is not usable by this user (./setup.sh tun makes it 0666)")
    os.makedirs(src, exist_ok=True)
    os.makedirs(mnt)
    m = subprocess.run([tool, "--no-allow-other", src, mnt], capture_output=True, text=True, timeout=30)
    kerntest.require(case, "fuse", m.returncode == 0, "bindfs could not mount: " + m.stderr.strip())
    case.addCleanup(subprocess.run, [fusermount, "-u", "-z", mnt], timeout=30)
    return mnt
