#!/usr/bin/env bash
# Builds the guest of kern's VM lane: Debian's 6.12 kernel and an initramfs holding busybox,
# the kernel modules the lane needs and guest_init.sh as /init.
#
# Debian's kernels ship neither gpio-sim nor the irq simulator it needs, so both are compiled
# here out of tree from Debian's own linux-source package against the matching headers (the
# irq simulator is normally built-in code: one call it makes, irq_to_desc(), is not exported to
# modules, so it is replaced by generic_handle_irq(), which does the same for a simulated irq).
# Packages are fetched with `apt-get download` and unpacked into the cache, never installed.
#
# Output in $KERN_VM_CACHE (default ~/.cache/kern-vm): vmlinuz, initramfs.gz, kernel-release.
# Everything is reused when present; the initramfs is repacked when guest_init.sh, this file or
# one of the lane's own modules (modules/) is newer. Needs root the first time (apt-get for qemu
# and the compiler).
# Exit 77 when the lane cannot be built on this machine (the test is then skipped).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KERN_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kern-vm}
meta=${KERN_VM_KERNEL_PACKAGE:-linux-image-6.12-amd64}
say() { echo "kern-vm: $*" >&2; }
mkdir -p "$cache/debs"

# --- host tools ---------------------------------------------------------------------------------
tools=(qemu-system-x86 kmod cpio xz-utils gcc-12 make busybox-static)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) != 0 ]]; then say "missing packages ${missing[*]} (run once as root)"; exit 77; fi
  say "installing ${missing[*]}"
  apt-get -o DPkg::Lock::Timeout=600 update -qq >"$cache/apt.log" 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
    "${missing[@]}" >>"$cache/apt.log" 2>&1 || { say "apt-get install failed: see $cache/apt.log"; exit 77; }
fi

# --- which kernel -------------------------------------------------------------------------------
if [[ ! -s $cache/kernel-package ]]; then
  pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1)
  [[ -n $pkg ]] || { say "apt-cache knows no $meta"; exit 77; }
  echo "$pkg" > "$cache/kernel-package"
fi
pkg=$(cat "$cache/kernel-package")
krel=${pkg#linux-image-}      # 6.12.117+deb12-amd64
kabi=${krel%-amd64}           # 6.12.117+deb12
kseries=${krel%%.*}.$(echo "$krel" | cut -d. -f2)
src=linux-source-$kseries
echo "$krel" > "$cache/kernel-release"

fetch() {
  local p
  for p in "$@"; do
    ls "$cache/debs/${p}_"*.deb >/dev/null 2>&1 && continue
    say "downloading $p"
    (cd "$cache/debs" && apt-get download -q "$p" >&2) || { say "apt-get download $p failed"; exit 77; }
  done
}
fetch "$pkg" "linux-headers-$krel" "linux-headers-$kabi-common" "linux-kbuild-$kabi" "$src"

# --- kernel tree (image, modules, headers) ------------------------------------------------------
kroot=$cache/kroot-$krel
if [[ ! -e $kroot/.unpacked ]]; then
  rm -rf "$kroot"
  mkdir -p "$kroot"
  for d in "$pkg" "linux-headers-$krel" "linux-headers-$kabi-common" "linux-kbuild-$kabi"; do
    dpkg-deb -x "$cache/debs/${d}_"*.deb "$kroot"
  done
  # The arch headers include the common ones by absolute path: make that path point here.
  sed -i "s|^include /usr/src/|include $kroot/usr/src/|" "$kroot/usr/src/linux-headers-$krel/Makefile"
  touch "$kroot/.unpacked"
fi
cp -f "$kroot/boot/vmlinuz-$krel" "$cache/vmlinuz"
moddir=$kroot/lib/modules/$krel

# --- gpio-sim, the irq simulator and the lane's own modules, out of tree ------------------------
# The lane's own: modules/kern_spi_loop.c, a software SPI controller (two spidev devices).
own=(kern_spi_loop)
mods=$cache/gpio-sim-$krel
if [[ ! -f $mods/gpio-sim.c || ! -f $mods/kern_irq_sim.c ]]; then
  rm -rf "$mods"
  mkdir -p "$mods"
  say "extracting gpio-sim.c and irq_sim.c from $src (the whole source archive is decompressed)"
  dpkg-deb --fsys-tarfile "$cache/debs/${src}_"*.deb | tar -xO "./usr/src/$src.tar.xz" | xz -dc \
    | tar -x -C "$mods" --strip-components=3 "$src/drivers/gpio/gpio-sim.c" "$src/kernel/irq/irq_sim.c"
  mv "$mods/irq_sim.c" "$mods/kern_irq_sim.c"
  grep -q 'handle_simple_irq(irq_to_desc(' "$mods/kern_irq_sim.c" || { say "irq_sim.c changed: review the patch"; exit 1; }
  sed -i 's/handle_simple_irq(irq_to_desc(\([a-z_]*\)));/generic_handle_irq(\1);/' "$mods/kern_irq_sim.c"
  printf '\nMODULE_LICENSE("GPL");\n' >> "$mods/kern_irq_sim.c"
fi
for m in "${own[@]}"; do cmp -s "$here/modules/$m.c" "$mods/$m.c" || cp "$here/modules/$m.c" "$mods/$m.c"; done
built=(kern_irq_sim gpio-sim "${own[@]}")
echo "obj-m := ${built[*]/%/.o}" > "$mods/Makefile.new"
cmp -s "$mods/Makefile.new" "$mods/Makefile" || mv "$mods/Makefile.new" "$mods/Makefile"
stale=
for m in "${built[@]}"; do [[ $mods/$m.ko -nt $mods/$m.c && $mods/$m.ko -nt $mods/Makefile ]] || stale=$m; done
# BTF for modules would need a pahole matching the kernel's: not needed here.
[[ -z $stale ]] || make -s -C "$kroot/usr/src/linux-headers-$krel" M="$mods" CONFIG_DEBUG_INFO_BTF_MODULES= modules >&2
mkdir -p "$moddir/extra"
for m in "${built[@]}"; do cp -pf "$mods/$m.ko" "$moddir/extra/"; done
depmod -b "$kroot" "$krel"

# --- initramfs ----------------------------------------------------------------------------------
out=$cache/initramfs.gz
rebuilt=
for m in "${own[@]}"; do [[ $moddir/extra/$m.ko -nt $out ]] && rebuilt=$m; done
if [[ -f $out && $out -nt $here/guest_init.sh && $out -nt ${BASH_SOURCE[0]} && -z $rebuilt ]]; then
  exit 0
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,run,tmp,etc,lib/modules,newroot}
cp /bin/busybox "$stage/bin/busybox"
# Load order from modprobe itself: dependencies first, built-in ones skipped.
: > "$stage/etc/modules"
for m in virtio_pci 9pnet_virtio 9p overlay configfs i2c-dev i2c-stub kern_irq_sim gpio-sim brd ext4 spidev "${own[@]}"; do
  modprobe -d "$kroot" -S "$krel" --show-depends "$m" | while read -r kind path _; do
    [[ $kind == insmod ]] || continue
    name=$(basename "$path")
    name=${name%.xz}
    name=${name%.zst}
    grep -qx "${name%.ko}" "$stage/etc/modules" && continue
    case $path in
      *.xz) xz -dc "$path" > "$stage/lib/modules/$name" ;;
      *.zst) zstd -qdc "$path" > "$stage/lib/modules/$name" ;;
      *) cp "$path" "$stage/lib/modules/$name" ;;
    esac
    echo "${name%.ko}" >> "$stage/etc/modules"
  done
done
for m in gpio-sim "${own[@]}"; do
  grep -q "^$m\$" "$stage/etc/modules" || { say "$m did not make it into the initramfs"; exit 1; }
done
install -m 0755 "$here/guest_init.sh" "$stage/init"
(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
say "guest ready: kernel $krel, modules: $(tr '\n' ' ' < "$stage/etc/modules")"
