#!/bin/bash
# Builds a small root file system with the host's Debian interpreters for the warm-kernel tests
# and benchmark: python3 (its standard library, and matplotlib with its dependencies when the
# host has Debian's python3-matplotlib), bash, node (when the host has Debian's nodejs) and
# busybox-static when present. Each ELF file's shared libraries are copied along (ldd closure).
#
#   make_lang_rootfs.sh DEST
#
# Copying the host's packaged interpreters takes seconds and needs no network, which is what a
# fresh CI machine can do reliably; DEST is reused when its stamp matches the interpreters.
# As root with KERN_TEST_INSTALL=1 (CI), missing Debian packages (python3, python3-matplotlib)
# are installed first with apt-get; a failure there only drops what depends on them.
# Prints DEST's features on stdout as "feature NAME" lines.
set -euo pipefail

dest=${1:?usage: make_lang_rootfs.sh DEST}

if [[ ${KERN_TEST_INSTALL:-} == 1 && $(id -u) == 0 ]]; then
  want=()
  [[ -x /usr/bin/python3 ]] || want+=(python3)
  /usr/bin/python3 -c 'import matplotlib' 2>/dev/null || want+=(python3-matplotlib)
  command -v bash >/dev/null || want+=(bash)
  if ((${#want[@]})); then
    timeout 600 apt-get install -y --no-install-recommends "${want[@]}" >&2 ||
      { timeout 300 apt-get update >&2 && timeout 600 apt-get install -y --no-install-recommends "${want[@]}" >&2; } ||
      echo "make_lang_rootfs: could not install ${want[*]}" >&2
  fi
fi

py=$(readlink -f /usr/bin/python3 2>/dev/null || true)
node=$(readlink -f "$(command -v node 2>/dev/null || echo /nonexistent)" 2>/dev/null || true)
bb=$(type -P busybox || true)
stamp="v5 py=$py node=$node bb=$bb mpl=$(/usr/bin/python3 -c 'import matplotlib;print(matplotlib.__version__)' 2>/dev/null || echo none)"
if [[ -f $dest/.kern-rootfs-stamp && $(cat "$dest/.kern-rootfs-stamp") == "$stamp" ]]; then
  sed -n 's/^feature /feature /p' "$dest/.kern-features"
  exit 0
fi

rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
root=$dest.tmp
mkdir -p "$root"/{usr/bin,usr/lib,usr/lib64,etc,tmp,root,proc,dev,sys,work}
ln -s usr/bin "$root/bin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
ln -s usr/bin "$root/usr/sbin"
ln -s usr/bin "$root/sbin"
chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
features=()

copy_file() {  # copy host path $1 (resolving symlinks) to the same path in the root
  local src=$1 real
  real=$(readlink -f "$src")
  mkdir -p "$root$(dirname "$real")"
  [[ -e $root$real ]] || cp -p "$real" "$root$real"
  if [[ $src != "$real" && ! -e $root$src && ! -L $root$src ]]; then
    mkdir -p "$root$(dirname "$src")"
    ln -s "$real" "$root$src"
  fi
}

declare -A seen=()
copy_libs() {  # the ldd closure of the ELF files given
  local f lib
  for f in "$@"; do
    while read -r lib; do
      [[ -n $lib && -z ${seen[$lib]:-} ]] || continue
      seen[$lib]=1
      copy_file "$lib"
    done < <(ldd "$f" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
  done
}

if [[ -n $py && -x $py ]]; then
  ver=$(basename "$py")  # python3.11
  copy_file "$py"
  ln -sf "$ver" "$root/usr/bin/python3"
  cp -a "/usr/lib/$ver" "$root/usr/lib/"
  rm -rf "$root/usr/lib/$ver"/{test,idlelib,tkinter,turtledemo,ensurepip,lib2to3/tests}
  copy_libs "$py" "$root/usr/lib/$ver"/lib-dynload/*.so
  features+=(python)
  if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    # matplotlib and what it imports: copied from dist-packages by the modules Python loaded.
    mods=$(/usr/bin/python3 - <<'EOF'
import sys, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2]); import io; plt.savefig(io.BytesIO(), format="png")
roots = set()
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None) or ""
    if "/dist-packages/" in f:
        top = f.split("/dist-packages/")[0] + "/dist-packages/" + f.split("/dist-packages/")[1].split("/")[0]
        roots.add(top)
print("\n".join(sorted(roots)))
EOF
)
    while read -r m; do
      [[ -n $m ]] || continue
      mkdir -p "$root$(dirname "$m")"
      cp -a "$m" "$root$m"
    done <<<"$mods"
    # matplotlib finds its data files and fonts through paths under /usr/share
    for d in /usr/share/matplotlib /usr/share/fonts/truetype/dejavu /etc/matplotlibrc; do
      [[ -e $d ]] && { mkdir -p "$root$(dirname "$d")"; cp -aL "$d" "$root$d"; }
    done
    mapfile -t sos < <(find "$root/usr/lib/python3" -name '*.so*' -type f)
    [[ ${#sos[@]} -gt 0 ]] && copy_libs "${sos[@]}"
    features+=(matplotlib)
  fi
fi

for b in bash cat sleep ls true mkdir rm env id head; do
  p=$(type -P "$b" || true)
  [[ -n $p ]] && { copy_file "$p"; copy_libs "$p"; }
done
ln -sf bash "$root/usr/bin/sh"
features+=(bash)

if [[ -n $node && -x $node ]]; then
  copy_file "$node"
  copy_libs "$node"
  [[ $(basename "$node") == node ]] || ln -sf "$(basename "$node")" "$root/usr/bin/node"
  features+=(node)
fi

if [[ -n $bb ]]; then
  cp "$(readlink -f "$bb")" "$root/usr/bin/busybox"
  copy_libs "$root/usr/bin/busybox"
  features+=(busybox)
fi

for f in "${features[@]}"; do echo "feature $f"; done >"$root/.kern-features"
echo "$stamp" >"$root/.kern-rootfs-stamp"
chmod -R a+rX "$root"
rm -rf "$dest"
mv "$root" "$dest"
cat "$dest/.kern-features"
