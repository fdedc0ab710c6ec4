"""What tests/bench/start_bench.py measures with, made offline from the host's own files:
the in-process floor program (start_floor.c, built with cc), a python tree (the host's python3
and its shared libraries, by tests/support/make_lang_rootfs.sh), a docker-archive of about 150 MB,
and what a process's memory and an ELF file's dependencies are read from."""
import io, json, os, hashlib, shutil, subprocess, tarfile

HERE = os.path.dirname(os.path.abspath(__file__))


def build_floor(tmp, name="start_floor"):
    """NAME.c (start_floor.c, relay_floor.c) compiled into tmp (static when the host's libc allows
    it); None without cc."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    out = os.path.join(tmp, name)
    src = os.path.join(HERE, name + ".c")
    for extra in (["-static"], []):
        if subprocess.run([cc, "-O2", "-o", out, src] + extra, capture_output=True).returncode == 0:
            return out
    return None


def size_floor(tmp):
    """The stripped sizes of size_floor.cc built three ways (its comment says which), linked as kern
    is (libstdc++ and libgcc static, libc dynamic, sections collected, -Os); {} without a C++
    compiler or strip."""
    cxx = shutil.which("c++") or shutil.which("g++")
    if not cxx or not shutil.which("strip"):
        return {}
    src = os.path.join(HERE, "size_floor.cc")
    flags = ["-std=c++20", "-Os", "-ffunction-sections", "-fdata-sections", "-static-libstdc++",
             "-static-libgcc", "-Wl,-z,now", "-Wl,--gc-sections"]
    sizes = {}
    for name, defs in (("C++ base", []), ("+ string streams", ["-DSTREAMS"]),
                       ("+ dlopen, getaddrinfo", ["-DSTREAMS", "-DDL"])):
        out = os.path.join(tmp, "size_floor")
        if subprocess.run([cxx] + flags + defs + ["-o", out, src], capture_output=True).returncode or \
                subprocess.run(["strip", out]).returncode:
            break
        sizes[name] = os.path.getsize(out)
    return sizes


def cache_dir():
    """A directory kept between runs for the made inputs (they take seconds to make)."""
    d = os.environ.get("KERN_BENCH_CACHE") or f"/var/tmp/kern-bench-{os.getuid()}"
    os.makedirs(d, exist_ok=True)
    return d


def python_rootfs():
    """The host's python3 with its standard library and shared libraries (ldd closure), made once
    by make_lang_rootfs.sh. Returns its path, or None when the host has no python3 to copy."""
    dest = os.path.join(cache_dir(), "lang-rootfs")
    r = subprocess.run(["bash", os.path.join(HERE, "..", "support", "make_lang_rootfs.sh"), dest],
                       capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(os.path.join(dest, "usr", "bin", "python3")):
        return None
    return dest


def _add_tree(t, top, prefix, budget):
    """Adds regular files, directories and symlinks of host directory `top` under `prefix` into
    tar t, until `budget` bytes of file data are in. Returns the bytes added."""
    added = 0
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        rel = os.path.relpath(dirpath, top)
        base = prefix if rel == "." else os.path.join(prefix, rel)
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
                if not (os.path.isfile(path) or os.path.islink(path)):
                    continue
                ti = t.gettarinfo(path, arcname=os.path.join(base, name))
                ti.uid = ti.gid = 0
                ti.uname = ti.gname = ""
                if ti.isreg():
                    with open(path, "rb") as f:
                        t.addfile(ti, f)
                    added += st.st_size
                else:
                    t.addfile(ti)
            except OSError:
                continue  # unreadable to this user: left out
            if added >= budget:
                return added
    return added


def docker_archive(root, mb=150):
    """A `docker save` style archive of about `mb` MB: layer 0 the python tree `root`, layer 1
    host files (/usr/share, /usr/lib) up to the size. Made once into the cache directory."""
    # Two thirds from the python tree (the rest of it left out when it is bigger), the rest from
    # the host's /usr: two layers of many small files and some large ones, as images have.
    out = os.path.join(cache_dir(), f"archive-{mb}mb.tar")
    if os.path.exists(out):
        return out
    work = out + ".tmp"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    plan = [[(root, ".")], [("/usr/share", "usr/share"), ("/usr/lib", "usr/lib")]]
    layers, diff_ids, total = [], [], 0
    for i, srcs in enumerate(plan):
        path = os.path.join(work, f"layer{i}.tar")
        with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
            for top, prefix in srcs:
                goal = mb * 1e6 * (2 / 3 if i == 0 else 1)
                if total < goal:
                    total += _add_tree(t, top, prefix, goal - total)
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        diff_ids.append("sha256:" + h.hexdigest())
        layers.append(path)
    cfg = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Cmd": ["/usr/bin/python3"]},
                      "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
    with tarfile.open(out + ".part", "w") as t:
        names = []
        for i, p in enumerate(layers):
            names.append(f"l{i}/layer.tar")
            t.add(p, arcname=names[-1])
        for name, data in (("config.json", cfg), ("manifest.json", json.dumps(
                [{"Config": "config.json", "RepoTags": ["bench:latest"], "Layers": names}]).encode())):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
    os.rename(out + ".part", out)
    shutil.rmtree(work, ignore_errors=True)
    return out


def _proc_field_kb(path, field):
    """The kB figure of `field:` in a /proc file, or None when it cannot be read."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def memory_kb(pid):
    """(VmRSS, Pss) in kB of a process; Pss is None when smaps_rollup cannot be read (a process
    that is not dumpable, for one)."""
    return (_proc_field_kb(f"/proc/{pid}/status", "VmRSS") or 0,
            _proc_field_kb(f"/proc/{pid}/smaps_rollup", "Pss"))


def elf_deps(path):
    """'PT_INTERP x; DT_NEEDED a, b' of an ELF file, from readelf."""
    if not shutil.which("readelf"):
        return "readelf not installed"
    r = subprocess.run(["readelf", "-lW", "-d", path], capture_output=True, text=True).stdout
    interp = [l.split(":", 1)[1].strip(" ]") for l in r.splitlines() if "Requesting program interpreter" in l]
    needed = [l.split("[", 1)[1].rstrip("]") for l in r.splitlines() if "(NEEDED)" in l]
    return (f"PT_INTERP {interp[0] if interp else 'none'}; "
            f"DT_NEEDED {', '.join(needed) if needed else 'none'}")
