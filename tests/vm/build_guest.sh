#!/usr/bin/env bash
# Builds the guest of kern's VM lane: Debian's 6.12 kernel and an initramfs holding busybox,
# the kernel modules the lane needs and guest_init.sh as /init.
#
# KERN_VM_ARCH picks the guest's architecture: amd64 (default) or arm64. An arm64 guest runs
# Debian's arm64 kernel; the host's / it mounts holds x86 programs, so the initramfs also
# carries an arm64 user space of Debian packages (busybox, bash, python3, procps, setpriv,
# mkfs.ext4, apparmor_parser) that guest_init.sh lays over the host's /usr/bin and /usr/sbin.
# kern itself finds its :arm64 libraries in the host's /usr/lib/aarch64-linux-gnu (the cross
# build's packages install them).
#
# Modules the lane needs that Debian's kernel lacks (gpio-sim and the irq simulator on both
# architectures, i2c-stub on arm64) are compiled here out of tree from Debian's own
# linux-source package against the matching headers (the irq simulator is normally built-in
# code: one call it makes, irq_to_desc(), is not exported to modules, so it is replaced by
# generic_handle_irq(), which does the same for a simulated irq). For arm64 they are cross
# compiled: the headers package's host programs (fixdep, modpost) come from the amd64
# linux-kbuild package of the same version.
# Packages are fetched with `apt-get download` and unpacked into the cache, never installed.
#
# Output in $KERN_VM_CACHE (default ~/.cache/kern-vm, ~/.cache/kern-vm-arm64 for arm64): vmlinuz,
# initramfs.gz, kernel-release.
# Everything is reused when present; the initramfs is repacked when guest_init.sh, this file or
# one of the lane's own modules (modules/) is newer. Needs root the first time (apt-get for qemu
# and the compiler).
# Exit 77 when the lane cannot be built on this machine (the test is then skipped).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
arch=${KERN_VM_ARCH:-amd64}
say() { echo "kern-vm: $*" >&2; }
case $arch in
  amd64)
    cache=${KERN_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kern-vm}
    tools=(qemu-system-x86 kmod cpio xz-utils gcc-12 make busybox-static)
    make_args=()
    triplet=x86_64-linux-gnu
    ;;
  arm64)
    cache=${KERN_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kern-vm-arm64}
    tools=(qemu-system-arm kmod cpio xz-utils gcc-12-aarch64-linux-gnu binutils-aarch64-linux-gnu make)
    make_args=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
    triplet=aarch64-linux-gnu
    ;;
  *) say "KERN_VM_ARCH: amd64 or arm64, not $arch"; exit 2 ;;
esac
meta=${KERN_VM_KERNEL_PACKAGE:-linux-image-6.12-$arch}
mkdir -p "$cache/debs"

# --- host tools ---------------------------------------------------------------------------------
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
# A foreign guest's packages come from apt's lists for that architecture.
if [[ $arch != $(dpkg --print-architecture) ]] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
  if [[ $(id -u) != 0 ]]; then say "apt knows no $arch packages (run once as root)"; exit 77; fi
  say "adding the $arch architecture to apt"
  dpkg --add-architecture "$arch"
  apt-get -o DPkg::Lock::Timeout=600 update -qq >>"$cache/apt.log" 2>&1 || { say "apt-get update failed: see $cache/apt.log"; exit 77; }
fi

# --- which kernel -------------------------------------------------------------------------------
if [[ ! -s $cache/kernel-package ]]; then
  pkg=$(apt-cache depends "$meta:$arch" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\).*$/\1/p' | head -n1)
  [[ -n $pkg ]] || { say "apt-cache knows no $meta"; exit 77; }
  echo "$pkg" > "$cache/kernel-package"
fi
pkg=$(cat "$cache/kernel-package")
krel=${pkg#linux-image-}      # 6.12.117+deb12-amd64
kabi=${krel%-"$arch"}         # 6.12.117+deb12
kseries=${krel%%.*}.$(echo "$krel" | cut -d. -f2)
src=linux-source-$kseries
echo "$krel" > "$cache/kernel-release"

# fetch PACKAGE[:ARCH]...: each package's .deb into the cache (the caches are per architecture,
# so the name alone finds it again).
fetch() {
  local p
  for p in "$@"; do
    ls "$cache/debs/${p%%:*}_"*.deb >/dev/null 2>&1 && continue
    say "downloading $p"
    (cd "$cache/debs" && apt-get download -q "$p" >&2) || { say "apt-get download $p failed"; exit 77; }
  done
}
# linux-kbuild is the host's: its programs (fixdep, modpost) run here while modules are built.
fetch "$pkg:$arch" "linux-headers-$krel:$arch" "linux-headers-$kabi-common" "linux-kbuild-$kabi" "$src"

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

# --- modules Debian's kernel lacks and the lane's own, out of tree -------------------------------
# need CONFIG_X FILE: FILE of the kernel source is built as a module unless the kernel has
# CONFIG_X built in or as a module. The module's name is the file's (irq_sim.c: kern_irq_sim).
oot=()
need() { grep -qE "^$1=[ym]$" "$kroot/boot/config-$krel" || oot+=("$2"); }
need CONFIG_IRQ_SIM kernel/irq/irq_sim.c
need CONFIG_GPIO_SIM drivers/gpio/gpio-sim.c
need CONFIG_I2C_STUB drivers/i2c/i2c-stub.c
# The lane's own: modules/kern_spi_loop.c, a software SPI controller (two spidev devices).
own=(kern_spi_loop)
for m in "${own[@]}"; do oot+=("$here/modules/$m.c"); done

# build_modules DIR FILE...: compiles FILEs as modules in DIR against the headers in $kroot, for
# the guest's architecture; a relative FILE is extracted from linux-source (once for a given
# list of them), an absolute one (a module of the lane's own) copied when it changed. make runs only when
# a module is older than its source or the Makefile. The modules' names in $built.
build_modules() {
  local dir=$1 f m stale= from_src=()
  shift
  for f in "$@"; do [[ $f == /* ]] || from_src+=("$src/$f"); done
  if [[ ! -f $dir/sources || $(cat "$dir/sources") != "${from_src[*]}" ]]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    if ((${#from_src[@]})); then
      say "extracting ${from_src[*]} (the whole source archive is decompressed)"
      dpkg-deb --fsys-tarfile "$cache/debs/${src}_"*.deb | tar -xO "./usr/src/$src.tar.xz" | xz -dc \
        | tar -x -C "$dir" --transform='s|.*/||' "${from_src[@]}"
    fi
    if [[ -f $dir/irq_sim.c ]]; then
      mv "$dir/irq_sim.c" "$dir/kern_irq_sim.c"
      grep -q 'handle_simple_irq(irq_to_desc(' "$dir/kern_irq_sim.c" || { say "irq_sim.c changed: review the patch"; exit 1; }
      sed -i 's/handle_simple_irq(irq_to_desc(\([a-z_]*\)));/generic_handle_irq(\1);/' "$dir/kern_irq_sim.c"
      printf '\nMODULE_LICENSE("GPL");\n' >> "$dir/kern_irq_sim.c"
    fi
    echo "${from_src[*]}" > "$dir/sources"
  fi
  built=()
  for f in "$@"; do
    [[ $f != /* ]] || cmp -s "$f" "$dir/${f##*/}" || cp "$f" "$dir/"
    m=${f##*/}
    m=${m%.c}
    [[ $m == irq_sim ]] && m=kern_irq_sim
    built+=("$m")
  done
  echo "obj-m := ${built[*]/%/.o}" > "$dir/Makefile.new"
  cmp -s "$dir/Makefile.new" "$dir/Makefile" || mv "$dir/Makefile.new" "$dir/Makefile"
  for m in "${built[@]}"; do [[ $dir/$m.ko -nt $dir/$m.c && $dir/$m.ko -nt $dir/Makefile ]] || stale=$m; done
  # BTF for modules would need a pahole matching the kernel's: not needed here.
  [[ -z $stale ]] || make -s -C "$kroot/usr/src/linux-headers-$krel" M="$dir" "${make_args[@]}" \
    CONFIG_DEBUG_INFO_BTF_MODULES= modules >&2
}
mods=$cache/modules-$krel
build_modules "$mods" "${oot[@]}"
mkdir -p "$moddir/extra"
# With their times, so that the initramfs is not repacked at every run.
for m in "${built[@]}"; do cp -pf "$mods/$m.ko" "$moddir/extra/"; done
depmod -b "$kroot" "$krel"

# --- the guest's own user space, where the host's programs are of another architecture ---------
# What guest_init.sh and in_vm_tests.sh run besides kern: busybox, bash, python3 (the checks'
# JSON), pgrep, setpriv, mkfs.ext4 and apparmor_parser, with the libraries they need that the
# host's :arm64 multiarch set lacks. Unpacked once into $cache/userland.
userland=
if [[ $arch != $(dpkg --print-architecture) ]]; then
  ul_pkgs=(busybox-static bash libtinfo6 python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libexpat1
    zlib1g procps libproc2-0 libsystemd0 libgcrypt20 libgpg-error0 util-linux libcap-ng0 e2fsprogs libext2fs2 libcom-err2 libblkid1 libuuid1 libss2 apparmor)
  # The programs taken from them (busybox provides the rest), as the packages place them.
  ul_progs=(bin/busybox bin/bash usr/bin/python3.11 usr/bin/pgrep usr/bin/setpriv sbin/mke2fs sbin/mkfs.ext4
    sbin/apparmor_parser)
  userland=$cache/userland
  if [[ ! -f $userland/packages || $(cat "$userland/packages") != "${ul_pkgs[*]}" ]]; then
    fetch "${ul_pkgs[@]/%/:$arch}"
    rm -rf "$userland"
    mkdir -p "$userland"
    for d in "${ul_pkgs[@]}"; do dpkg-deb -x "$(ls "$cache/debs/${d}_"*"_$arch.deb" | head -n1)" "$userland"; done
    echo "${ul_pkgs[*]}" > "$userland/packages"
  fi
fi
# On arm64, a static 32-bit ARM (AArch32) busybox from Debian's armhf busybox-static: it runs on
# the guest's kernel outside a box and must be killed by the seccomp filter in one. apt fetches
# it through package lists of its own under the cache (signed and checked as apt's always are),
# so the host's dpkg is not given an armhf architecture for one file.
armhf=
if [[ $arch == arm64 ]]; then
  armhf=$cache/armhf/busybox
  if [[ ! -x $armhf ]]; then
    ah=$cache/armhf
    rm -rf "$ah/lists" "$ah/debs"
    mkdir -p "$ah/lists/partial" "$ah/debs"
    apt_armhf=(-o "APT::Architectures::=armhf" -o "Dir::State::Lists=$ah/lists" -o "Dir::Cache::pkgcache="
      -o "Dir::Cache::srcpkgcache=" -o "DPkg::Lock::Timeout=600")
    say "fetching busybox-static:armhf (package lists for armhf alone, in $ah/lists)"
    apt-get "${apt_armhf[@]}" update -qq >>"$cache/apt.log" 2>&1 || { say "apt-get update (armhf lists) failed: see $cache/apt.log"; exit 77; }
    (cd "$ah/debs" && apt-get "${apt_armhf[@]}" download -q busybox-static:armhf >>"$cache/apt.log" 2>&1) ||
      { say "apt-get download busybox-static:armhf failed: see $cache/apt.log"; exit 77; }
    dpkg-deb --fsys-tarfile "$ah/debs/"busybox-static_*_armhf.deb | tar -xO ./bin/busybox > "$armhf.tmp"
    chmod 0755 "$armhf.tmp" && mv "$armhf.tmp" "$armhf"
    rm -rf "$ah/lists"
  fi
fi

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
if [[ -z $userland ]]; then
  cp /bin/busybox "$stage/bin/busybox"
else
  cp "$userland/bin/busybox" "$stage/bin/busybox"
  # /usr merged: guest_init.sh lays usr/bin and usr/sbin over the host's and adds usr/lib to its.
  u=$stage/userland
  mkdir -p "$u/usr/bin" "$u/usr/sbin" "$u/usr/lib"
  for f in "${ul_progs[@]}"; do cp -a "$userland/$f" "$u/usr/${f#usr/}"; done
  ln -sf python3.11 "$u/usr/bin/python3"
  [[ -d $userland/lib ]] && cp -a "$userland/lib/." "$u/usr/lib/"
  cp -a "$userland/usr/lib/." "$u/usr/lib/"
  if [[ -n $armhf ]]; then
    mkdir -p "$u/usr/lib/kern-vm"
    cp "$armhf" "$u/usr/lib/kern-vm/busybox-armhf"
  fi
  # Every library a program or library needs must be in the user space or the host's multiarch
  # directories.
  libdirs=("$u/usr/lib/$triplet" "/usr/lib/$triplet" "/lib/$triplet")
  for f in "$u"/usr/bin/* "$u"/usr/sbin/* "$u/usr/lib/$triplet"/*.so*; do
    [[ -f $f && ! -L $f ]] || continue
    for lib in $("$triplet-readelf" -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      found=
      for l in "${libdirs[@]}"; do [[ -e $l/$lib ]] && found=1 && break; done
      [[ -n $found ]] || { say "$f needs $lib, which neither the guest's user space nor the host has"; exit 1; }
    done
  done
fi
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
