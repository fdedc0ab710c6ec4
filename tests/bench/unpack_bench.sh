#!/bin/bash
# Image unpack and start-up benchmark (issue 3): a Debian bookworm minbase root file system with
# python3 (~8,000 files, ~170 MB), built with debootstrap and packed as two gzip layers in an OCI
# layout. Side by side, in one run, as one unprivileged user:
#   kern pull oci:LAYOUT        (verify, decompress, unpack, store; fresh store every run)
#   tar -xzf of the same layers (into a fresh directory every run)
#   umoci unpack --rootless     (same layout)
#   kern load -i image.tar      (the same layers uncompressed, docker save style) vs tar -xf
# then the start of `kern box` from the cached image against `--rootfs` of the same tree.
# Prints medians and ratios. Targets: kern pull <= 1.0x tar; box from image <= 1.1x --rootfs.
#
# Usage: tests/bench/unpack_bench.sh [KERN_BINARY]   (as root: debootstrap needs it; the timed
# commands run as $KERN_BENCH_USER, default kerntest). The root file system is cached in
# $KERN_BENCH_CACHE (default /var/tmp/kern-bench) between runs; the timed work happens under
# $KERN_BENCH_WORKDIR (default /var/tmp; /dev/shm takes the disk out of the figures). Needs debootstrap, hyperfine,
# umoci, python3 and Debian's apt archive reachable.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kern=$(readlink -f "${1:-$here/../../build/cli/kern}")
cache=${KERN_BENCH_CACHE:-/var/tmp/kern-bench}
user=${KERN_BENCH_USER:-kerntest}
runs=${KERN_BENCH_RUNS:-5}
suite=${KERN_BENCH_SUITE:-bookworm}

for tool in debootstrap hyperfine umoci python3 setpriv; do
  command -v "$tool" >/dev/null || { echo "unpack_bench: $tool is missing (apt-get install $tool)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "unpack_bench: run as root (debootstrap)" >&2; exit 2; }
id "$user" >/dev/null 2>&1 || { echo "unpack_bench: no user $user (set KERN_BENCH_USER)" >&2; exit 2; }
uid=$(id -u "$user"); gid=$(id -g "$user")

mkdir -p "$cache"
if [ ! -f "$cache/rootfs.tar" ]; then
  mirror=$(grep -hE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
           grep -oE 'https?://[^ ]+' | grep -m1 debian || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  echo "unpack_bench: debootstrap --variant=minbase --include=python3 $suite from $mirror (once)" >&2
  rm -rf "$cache/rootfs"
  debootstrap --variant=minbase --include=python3 "$suite" "$cache/rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1
  tar -C "$cache/rootfs" --numeric-owner -cf "$cache/rootfs.tar" .
  rm -rf "$cache/rootfs"
fi

work=$(mktemp -d "${KERN_BENCH_WORKDIR:-/var/tmp}/kern-bench-run-XXXXXX")
trap 'rm -rf "$work"' EXIT
chown "$uid:$gid" "$work"
# Two layers: python3's standard library on top of the rest, each a gzip'ed tar, in an OCI layout.
python3 - "$cache/rootfs.tar" "$work" <<'PY'
import gzip, hashlib, io, json, os, sys, tarfile, time
src, work = sys.argv[1], sys.argv[2]
layers = [io.BytesIO(), io.BytesIO()]
outs = [tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) for b in layers]
files = 0
with tarfile.open(src) as t:
    for ti in t:
        if ti.isdev() or ti.isfifo():
            continue
        top = 1 if ti.name.startswith("./usr/lib/python3") else 0
        outs[top].addfile(ti, t.extractfile(ti) if ti.isfile() else None)
        files += 1
for o in outs:
    o.close()
lay = os.path.join(work, "layout")
os.makedirs(os.path.join(lay, "blobs", "sha256"))
def blob(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(lay, "blobs", "sha256", d), "wb").write(data)
    return {"digest": "sha256:" + d, "size": len(data)}
descs, diff_ids = [], []
for i, b in enumerate(layers):
    raw = b.getvalue()
    gz = gzip.compress(raw, compresslevel=6, mtime=0)
    open(os.path.join(work, "layer%d.tar.gz" % i), "wb").write(gz)
    open(os.path.join(work, "layer%d.tar" % i), "wb").write(raw)
    diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
    descs.append(dict(mediaType="application/vnd.oci.image.layer.v1.tar+gzip", **blob(gz)))
cfg = {"architecture": "amd64", "os": "linux", "config": {"Cmd": ["/usr/bin/python3"]},
       "rootfs": {"type": "layers", "diff_ids": diff_ids}}
c = dict(mediaType="application/vnd.oci.image.config.v1+json", **blob(json.dumps(cfg).encode()))
m = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": c, "layers": descs}
md = dict(mediaType="application/vnd.oci.image.manifest.v1+json", **blob(json.dumps(m).encode()))
md["annotations"] = {"org.opencontainers.image.ref.name": "bench"}
json.dump({"schemaVersion": 2, "manifests": [md]}, open(os.path.join(lay, "index.json"), "w"))
json.dump({"imageLayoutVersion": "1.0.0"}, open(os.path.join(lay, "oci-layout"), "w"))
# The same layers uncompressed, as `docker save` writes them.
cfg_bytes = json.dumps(cfg).encode()
with tarfile.open(os.path.join(work, "image.tar"), "w") as t:
    def add(name, path=None, data=None):
        ti = tarfile.TarInfo(name)
        ti.size = os.path.getsize(path) if path else len(data)
        t.addfile(ti, open(path, "rb") if path else io.BytesIO(data))
    for i in range(2):
        add("l%d/layer.tar" % i, path=os.path.join(work, "layer%d.tar" % i))
    add("config.json", data=cfg_bytes)
    add("manifest.json", data=json.dumps([{"Config": "config.json", "RepoTags": ["bench:latest"],
                                           "Layers": ["l0/layer.tar", "l1/layer.tar"]}]).encode())
size = sum(len(b.getvalue()) for b in layers)
print("unpack_bench: %d entries, %.0f MB uncompressed, %.0f MB gzip" % (files, size / 1e6,
      sum(os.path.getsize(os.path.join(work, "layer%d.tar.gz" % i)) for i in range(2)) / 1e6), file=sys.stderr)
PY
chown -R "$uid:$gid" "$work"

as_user() { setpriv --reuid="$uid" --regid="$gid" --clear-groups env HOME="$work" XDG_RUNTIME_DIR="$work/run" "$@"; }
mkdir -p "$work/run" && chown "$uid:$gid" "$work/run" && chmod 700 "$work/run"

rm_cmd="chmod -R u+rwx $work/out $work/store $work/bundle 2>/dev/null; rm -rf $work/out $work/store $work/bundle"
as_user hyperfine --runs "$runs" --warmup 1 --export-json "$work/unpack.json" \
  --prepare "$rm_cmd; mkdir -p $work/out" \
  -n "kern pull" "XDG_CACHE_HOME=$work/store $kern pull -q oci:$work/layout:bench" \
  -n "tar -xzf" "tar -xzf $work/layer0.tar.gz -C $work/out && tar -xzf $work/layer1.tar.gz -C $work/out" \
  -n "umoci unpack" "umoci unpack --rootless --image $work/layout:bench $work/bundle"
# Uncompressed (docker save) layers: kern load against tar -xf.
as_user hyperfine --runs "$runs" --warmup 1 --export-json "$work/load.json" \
  --prepare "$rm_cmd; mkdir -p $work/out" \
  -n "kern load" "XDG_CACHE_HOME=$work/store $kern load -i $work/image.tar" \
  -n "tar -xf" "tar -xf $work/layer0.tar -C $work/out && tar -xf $work/layer1.tar -C $work/out"

# Start-up: the cached image against the same tree given as --rootfs.
as_user env XDG_CACHE_HOME="$work/store" "$kern" pull -q "oci:$work/layout:bench" >/dev/null
tree=$(ls -d "$work"/store/kern/trees/*/ | head -1)
as_user env XDG_CACHE_HOME="$work/store" hyperfine --runs $((runs * 4)) --warmup 2 -N --export-json "$work/start.json" \
  -n "box --image" "$kern box -q --allow-uncapped --image oci:$work/layout:bench -- /bin/true" \
  -n "box --rootfs" "$kern box -q --allow-uncapped --rootfs $tree -- /bin/true"

python3 - "$work/unpack.json" "$work/start.json" "$work/load.json" <<'PY'
import json, sys
def medians(path):
    return {r["command"]: r["median"] for r in json.load(open(path))["results"]}
u, s, l = medians(sys.argv[1]), medians(sys.argv[2]), medians(sys.argv[3])
print()
for name, m in list(u.items()) + list(l.items()) + list(s.items()):
    print("%-14s median %8.1f ms" % (name, m * 1000))
print("kern pull / tar -xzf      = %.2fx (target <= 1.0x)" % (u["kern pull"] / u["tar -xzf"]))
print("kern load / tar -xf       = %.2fx (target <= 1.0x)" % (l["kern load"] / l["tar -xf"]))
print("kern pull / umoci unpack  = %.2fx" % (u["kern pull"] / u["umoci unpack"]))
print("box --image / box --rootfs = %.2fx (target <= 1.1x)" % (s["box --image"] / s["box --rootfs"]))
PY
