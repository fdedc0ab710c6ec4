"""A small file system for tests of what kern does when its runtime dir is full.

The test user cannot mount, so a test file that needs one sets, at module level, the tmpfs's
options (its size, and its number of inodes where the test runs out of those):

    KERNTEST_SMALL_TMPFS = "size=2m"
    KERNTEST_SMALL_TMPFS = "size=64m,nr_inodes=3000"

and kerntest.drop_root(), still root, calls mount_for_test_user() before it drops: the process
gets a mount namespace of its own (every mount in it private, nothing reaches the host's), a
tmpfs with those options owned by the test user is mounted at MOUNT_POINT there, and its path is
passed on in KERN_TEST_SMALL_FS (or why it could not be made, in KERN_TEST_SMALL_FS_PROBLEM).
The namespace, and the tmpfs with it, ends with the test process. A test that runs without it
(started as the test user) skips as "small-fs".
"""

import ctypes
import os
import subprocess

ENV = "KERN_TEST_SMALL_FS"
PROBLEM_ENV = "KERN_TEST_SMALL_FS_PROBLEM"
MOUNT_POINT = "/run/kerntest-small-fs"
CLONE_NEWNS = 0x00020000


def mount_for_test_user(options, pw):
    """As root: the private tmpfs with `options` (mount's tmpfs options: size=, nr_inodes=), owned
    by pw's user. Returns a reason when it could not be made (also passed on in PROBLEM_ENV: the
    tests that need it then skip with it)."""
    problem = _mount(options, pw)
    if problem:
        os.environ[PROBLEM_ENV] = problem
    return problem


def _mount(options, pw):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        return "unshare(CLONE_NEWNS): " + os.strerror(ctypes.get_errno())
    try:
        subprocess.run(["mount", "--make-rprivate", "/"], check=True, capture_output=True)
        os.makedirs(MOUNT_POINT, exist_ok=True)
        opts = "%s,mode=0700,uid=%d,gid=%d" % (options, pw.pw_uid, pw.pw_gid)
        subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "kerntest-small", MOUNT_POINT], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        return "mount a tmpfs (%s) at %s: %s" % (options, MOUNT_POINT, getattr(e, "stderr", b"") or e)
    os.environ[ENV] = MOUNT_POINT
    return None


def fill(path):
    """Writes into `path` until the file system is full; returns the bytes written."""
    total = 0
    chunk = b"\0" * 65536
    with open(path, "wb", buffering=0) as f:
        while True:
            try:
                n = f.write(chunk)
            except OSError:
                break
            if not n:
                break
            total += n
        # The last few bytes a page could still take.
        for size in (4096, 512, 1):
            while True:
                try:
                    if not f.write(b"\0" * size):
                        break
                    total += size
                except OSError:
                    break
    return total
