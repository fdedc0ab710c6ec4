"""The busybox root file system the integration tests run boxes in, built once per test process
from Debian's busybox-static (see kerntest.Session)."""

import os
import shutil
import struct
import subprocess

BUSYBOX = "/bin/busybox"


def elf_is_static(path):
    """True when the ELF file has no PT_INTERP program header (needs no dynamic loader)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            return False
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, = struct.unpack("<I", f.read(4))
            if p_type == 3:  # PT_INTERP
                return False
    return True


def build_rootfs(root, probe, outside_dir):
    """busybox-static with a relative symlink per applet, /etc/passwd and /etc/group, the probe as
    /bin/kern-probe plus a setuid copy, a non-executable file, and the symlinks the -v tests use."""
    if not os.path.exists(BUSYBOX):
        raise OSError("%s not found (apt-get install busybox-static)" % BUSYBOX)
    os.mkdir(root, 0o755)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "etc", "dev", "proc", "sys", "root", "home",
              "var/tmp", "run", "mnt", "srv"):
        os.makedirs(os.path.join(root, d), 0o755, exist_ok=True)
    os.mkdir(os.path.join(root, "tmp"))
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    shutil.copy2(BUSYBOX, os.path.join(root, "bin/busybox"))
    os.chmod(os.path.join(root, "bin/busybox"), 0o755)
    listing = subprocess.run([BUSYBOX, "--list-full"], capture_output=True, check=True, timeout=10)
    applets = listing.stdout.decode().split()
    if not applets:
        raise OSError("busybox --list-full printed nothing")
    for rel in applets:
        rel = rel.lstrip("/")
        link = os.path.join(root, rel)
        if os.path.lexists(link) or rel == "bin/busybox":
            continue
        os.makedirs(os.path.dirname(link), 0o755, exist_ok=True)
        os.symlink(os.path.relpath(os.path.join(root, "bin/busybox"), os.path.dirname(link)), link)
    with open(os.path.join(root, "etc/passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
    with open(os.path.join(root, "etc/group"), "w") as f:
        f.write("root:x:0:\nnobody:x:65534:\n")
    # 126: exists, but no execute bit.
    with open(os.path.join(root, "bin/not-executable"), "w") as f:
        f.write("#!/bin/sh\necho should-not-run\n")
    os.chmod(os.path.join(root, "bin/not-executable"), 0o644)
    if probe:
        shutil.copy(probe, os.path.join(root, "bin/kern-probe"))
        os.chmod(os.path.join(root, "bin/kern-probe"), 0o755)
        # Owned by the caller, who is root in the box: a setuid-root binary as the box sees it.
        shutil.copy(probe, os.path.join(root, "bin/kern-probe-suid"))
        os.chmod(os.path.join(root, "bin/kern-probe-suid"), 0o4755)
    # -v destinations through symlinks that point out of the root: resolved inside the root they
    # name <root><outside_dir>, which exists, as does outside_dir on the host.
    os.makedirs(root + outside_dir, 0o755, exist_ok=True)
    os.symlink(outside_dir, os.path.join(root, "escape-abs"))
    os.symlink("../" * 12 + outside_dir.lstrip("/"), os.path.join(root, "srv/escape-rel"))
