#!/usr/bin/env python3
"""Writes the unpacker fuzzer's seed layers into a directory (made at build time: no binary
archives are committed). Each seed is one attack shape or ordinary layer the fuzzer mutates."""
import gzip
import io
import os
import sys
import tarfile


def tar(entries):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as t:
        for kind, name, extra in entries:
            ti = tarfile.TarInfo(name)
            if kind == "dir":
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                t.addfile(ti)
            elif kind == "file":
                ti.size, ti.mode = len(extra), 0o4755
                t.addfile(ti, io.BytesIO(extra))
            elif kind == "sym":
                ti.type, ti.linkname = tarfile.SYMTYPE, extra
                t.addfile(ti)
            elif kind == "hard":
                ti.type, ti.linkname = tarfile.LNKTYPE, extra
                t.addfile(ti)
            elif kind == "chr":
                ti.type, ti.devmajor, ti.devminor = tarfile.CHRTYPE, 1, 3
                t.addfile(ti)
    return b.getvalue()


SEEDS = {
    "plain": [("dir", "a", None), ("file", "a/f", b"x"), ("sym", "a/l", "f"), ("hard", "a/h", "a/f")],
    "whiteouts": [("file", "d/.wh.x", b""), ("file", "d/.wh..wh..opq", b""), ("file", "d/y", b"y")],
    "escape": [("sym", "e", "../outside"), ("file", "e/victim", b"p"), ("hard", "h", "../outside/victim"),
               ("file", "../outside/x", b"p"), ("sym", "abs", "/tmp"), ("file", "abs/x", b"p")],
    "replace": [("dir", "r", None), ("file", "r/f", b"1"), ("file", "r", b"2"), ("dir", "r", None),
                ("chr", "dev/null", None)],
}


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, entries in SEEDS.items():
        with open(os.path.join(out, name + ".tar"), "wb") as f:
            f.write(tar(entries))
    with open(os.path.join(out, "plain.tar.gz"), "wb") as f:
        f.write(gzip.compress(tar(SEEDS["plain"]), mtime=0))


if __name__ == "__main__":
    main(sys.argv[1])
