#!/usr/bin/env python3
"""Where the bytes of the kern binary come from, read from the linker's map (issue 13).

The build writes the map beside the binary (cli/kern.map, -Wl,-Map). Every input section the
linker kept in an allocated, file-backed output section (.text, .rodata, .eh_frame, .data, ...;
not .bss, not debug info) is counted once, under the part it came from:
  kern       kern's own objects (with the std:: templates they instantiate)
  CLI11      sections of kern's objects whose symbol is in namespace CLI (header-only library)
  nlohmann   sections of kern's objects whose symbol is in namespace nlohmann (header-only)
  libstdc++  members of libstdc++.a / libsupc++.a
  glibc      members of libc.a, libm.a, libdl.a, ... and the C start files (kern links libc
             dynamically: then only the start files and libc_nonshared.a; libc.so.6 is not in
             the file)
  libgcc     libgcc.a, libgcc_eh.a, crtbegin/crtend
  linker     what the linker made itself (PLT, GOT, padding between sections, the unwind index,
             the dynamic linking tables), whichever file the map names
Sections of one object that carry no symbol name (.eh_frame, merged strings .rodata.str*) are
split among kern, CLI11 and nlohmann in proportion to that object's named sections: an estimate,
marked as one. The sum is the size of the loaded image; the stripped file adds its headers.

  tests/bench/size_breakdown.py build/cli/kern.map [--top N]
"""
import argparse, collections, os, re, sys

PARTS = ("kern", "CLI11", "nlohmann", "libstdc++", "glibc", "libgcc", "linker")
NOBITS = (".bss", ".tbss", "__libc_freeres_ptrs")
_INPUT = re.compile(r"^ (\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
_INPUT_NAME = re.compile(r"^ (\S+)$")
_INPUT_REST = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
_OUTPUT = re.compile(r"^(\.\S+|__\S+)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+))?\s*$")
# Sections the linker makes itself: the dynamic loader's tables (and every .rela* input merged
# into them), PLT, GOT, the unwind index. The map lists them under the first input file.
LINKER_MADE = {".interp", ".gnu.hash", ".hash", ".dynsym", ".dynstr", ".gnu.version", ".gnu.version_r",
               ".gnu.version_d", ".rela.dyn", ".rela.plt", ".relr.dyn", ".dynamic", ".eh_frame_hdr", ".plt",
               ".plt.got", ".plt.sec", ".got", ".got.plt", ".note.gnu.build-id"}
_FILL = re.compile(r"^ \*fill\*\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)")


def library_of(path):
    """The part a linked file belongs to, or None for kern's own objects."""
    base = os.path.basename(path)
    if "libstdc++" in base or "libsupc++" in base:
        return "libstdc++"
    if base.startswith(("libgcc", "crtbegin", "crtend")):
        return "libgcc"
    if re.match(r"(libc|libm|libdl|libpthread|libmvec|librt|libc_nonshared|libresolv)[-.\d]*\.a", base) or \
            re.match(r"(rcrt1|crt1|Scrt1|crti|crtn|grcrt1)\.o$", base):
        return "glibc"
    if base.startswith(("<internal>", "linker stubs")) or path.startswith("*"):
        return "linker"
    return None


def symbol_part(section):
    """kern, CLI11 or nlohmann for a section of kern's objects, from its (mangled) name."""
    if "8nlohmann" in section:
        return "nlohmann"
    if "3CLI" in section:
        return "CLI11"
    return "kern"


def _named(section, out):
    """Whether an input section of kern's objects names its function or object."""
    prefix = out + "."
    return section.startswith(prefix) and len(section) > len(prefix) and not section.startswith(
        (".rodata.str", ".rodata.cst"))


def _raw_sections(map_path):
    """(output section, its size, input section, size, file) for every kept input section."""
    with open(map_path, errors="replace") as f:
        lines = f.read().split("\n")
    try:
        start = lines.index("Linker script and memory map")
    except ValueError:
        raise SystemExit(f"{map_path}: not a GNU ld map (no memory map)")
    out, out_size, alloc, pending, pending_out = None, 0, False, None, False
    for line in lines[start + 1:]:
        if pending_out:
            # An output section whose name filled the line: its address and size on the next.
            pending_out = False
            m = _INPUT_REST.match(line) or re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s*$", line)
            if m:
                alloc = alloc and int(m.group(1), 16) != 0
                out_size = int(m.group(2), 16)
                continue
        if pending is not None:
            m = _INPUT_REST.match(line)
            if m and alloc:
                yield out, out_size, pending, int(m.group(2), 16), m.group(3).strip()
            pending = None
            if m:
                continue
        m = _OUTPUT.match(line)
        if m:
            out = m.group(1)
            # Output sections at address 0 are not loaded (debug info, .comment); .bss takes no file.
            alloc = out not in NOBITS and not out.startswith((".debug", ".comment", ".stab"))
            if m.group(2) is None:
                pending_out, out_size = True, 0
            else:
                alloc = alloc and int(m.group(2), 16) != 0
                out_size = int(m.group(3), 16)
            continue
        if out is None:
            continue
        m = _FILL.match(line)
        if m:
            if alloc:
                yield out, out_size, "*fill*", int(m.group(2), 16), "*fill*"
            continue
        m = _INPUT.match(line)
        if m:
            if alloc and int(m.group(3), 16):
                yield out, out_size, m.group(1), int(m.group(3), 16), m.group(4).strip()
            continue
        m = _INPUT_NAME.match(line)
        if m and not line.startswith(" *"):
            pending = m.group(1)


def _merged(section):
    return section.startswith((".rodata.str", ".rodata.cst", ".str", ".cst"))


def sections(map_path):
    """(output section, input section, size, file) for every kept, file-backed input section.

    The map gives mergeable sections (strings, constants) at their size before the linker merged
    duplicates; they are scaled down together until the output section's inputs add up to its size.
    """
    groups = collections.OrderedDict()
    for out, out_size, sec, size, path in _raw_sections(map_path):
        groups.setdefault(out, [out_size, []])[1].append((sec, size, path))
    for out, (out_size, items) in groups.items():
        excess = sum(n for _, n, _ in items) - out_size
        mergeable = sum(n for s, n, _ in items if _merged(s))
        for sec, size, path in items:
            if excess > 0 and mergeable and _merged(sec):
                size -= size * min(excess, mergeable) // mergeable
            yield out, sec, size, path


def breakdown(map_path):
    """{part: bytes}, {part: bytes estimated by proportion}, {(part, member): bytes}."""
    total = collections.Counter()
    estimated = collections.Counter()
    members = collections.Counter()
    named = collections.defaultdict(collections.Counter)  # object -> part -> bytes of named sections
    unnamed = collections.Counter()  # object -> bytes of sections without a symbol name
    for out, sec, size, path in sections(map_path):
        lib = "linker" if sec in LINKER_MADE or sec.startswith(".rela") else library_of(path)
        if lib:
            total[lib] += size
            m = re.search(r"\(([^)]+)\)$", path)
            members[(lib, m.group(1) if m else os.path.basename(path))] += size
        elif _named(sec, out):
            part = symbol_part(sec)
            total[part] += size
            named[path][part] += size
        else:
            unnamed[path] += size
    for path, size in unnamed.items():
        shares = named.get(path)
        whole = sum(shares.values()) if shares else 0
        if not whole:
            total["kern"] += size
            continue
        given = 0
        for part, n in shares.items():
            if part != "kern":
                share = size * n // whole
                total[part] += share
                estimated[part] += share
                given += share
        total["kern"] += size - given
        estimated["kern"] += size - given
    return total, estimated, members


def summary(map_path):
    """One line: each part's share of the loaded image, for the benchmark's notes."""
    total, estimated, _ = breakdown(map_path)
    whole = sum(total.values())
    parts = [f"{p} {total[p] / 1e6:.2f}" + ("~" if estimated[p] else "") for p in PARTS if total[p]]
    return f"{whole / 1e6:.2f} MB loaded: " + ", ".join(parts) + \
        " (MB; ~ includes unwind tables and strings split by the object's share)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("map")
    ap.add_argument("--top", type=int, default=12, help="largest archive members listed per library")
    args = ap.parse_args()
    total, estimated, members = breakdown(args.map)
    whole = sum(total.values())
    print(f"{'part':<10} {'bytes':>9}  {'share':>6}")
    for p in PARTS:
        if total[p]:
            print(f"{p:<10} {total[p]:>9}  {100 * total[p] / whole:5.1f}%" +
                  (f"  ({estimated[p]} of it estimated)" if estimated[p] else ""))
    print(f"{'total':<10} {whole:>9}")
    for lib in ("libstdc++", "glibc", "libgcc"):
        top = sorted(((n, m) for (l, m), n in members.items() if l == lib), reverse=True)[:args.top]
        if top:
            print(f"\nlargest {lib} members: " + ", ".join(f"{m} {n // 1024} KB" for n, m in top))


if __name__ == "__main__":
    sys.exit(main())
