#!/usr/bin/env bash
# The VM lane: run.sh KERN HELPER -- boots Debian's kernel under qemu with cgroup v2 as the only
# hierarchy, simulated GPIO chips, an I2C stub and a looping SPI controller (build_guest.sh,
# guest_init.sh), and runs in_vm_tests.sh there as an unprivileged user against the real kern
# binary. Exits with the tests' status; 77 when the lane cannot run on this machine (CTest
# counts it as skipped).
#
# The guest's architecture is KERN's (amd64 or arm64, read with file(1); KERN_VM_ARCH overrides):
# an arm64 guest is qemu-system-aarch64's virt machine with a Cortex-A72 (a Raspberry Pi 4's core).
#
# Knobs: KERN_VM_CACHE (guest cache, default ~/.cache/kern-vm, ~/.cache/kern-vm-arm64 for arm64),
# KERN_VM_UID (default 1000),
# KERN_VM_ACCEL=auto|kvm|tcg, KERN_VM_ICOUNT (qemu -icount under tcg, default shift=3; off = the
# host's clock), KERN_VM_MEM (MiB, default 1536), KERN_VM_TIMEOUT (s, default 1800),
# KERN_VM_KEEP=1 (keep the run directory and print its path), KERN_VM_TESTS (another script to
# run in the guest instead of in_vm_tests.sh, for investigations).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
say() { echo "kern-vm: $*" >&2; }
# A skip is a result, unless KERN_TEST_REQUIRE names this lane ("vm" or "all", and not "-vm"):
# then "cannot run here" is a failure (CI sets it).
skip_code=77
case ",${KERN_TEST_REQUIRE:-}," in
  *,-vm,*) ;;
  *,vm,*|*,all,*) skip_code=1 ;;
esac
(($# >= 2)) || { echo "usage: run.sh KERN HELPER [PROBE]" >&2; exit 2; }
kern=$(readlink -f "$1")
helper=$(readlink -f "$2")
# kern-probe (tests/probe), for the seccomp checks; without it they are left out, said so.
probe=${3:+$(readlink -f "$3")}
[[ -x $kern && -x $helper ]] || { say "not executable: $kern or $helper"; exit 2; }
[[ -z $probe || -x $probe ]] || { say "not executable: $probe"; exit 2; }
arch=${KERN_VM_ARCH:-}
if [[ -z $arch ]]; then
  case $(file -bL "$kern") in
    *x86-64*) arch=amd64 ;;
    *"ARM aarch64"*) arch=arm64 ;;
    *) say "cannot tell the architecture of $kern: $(file -bL "$kern") (set KERN_VM_ARCH)"; exit 2 ;;
  esac
fi
case $arch in
  amd64)
    cache=${KERN_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kern-vm}
    qemu=qemu-system-x86_64 machine=(-M pc) console=ttyS0 kvm_arch=x86_64
    ;;
  arm64)
    cache=${KERN_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kern-vm-arm64}
    qemu=qemu-system-aarch64 machine=(-M virt) console=ttyAMA0 kvm_arch=aarch64
    ;;
  *) say "KERN_VM_ARCH: amd64 or arm64, not $arch"; exit 2 ;;
esac
export KERN_VM_CACHE=$cache KERN_VM_ARCH=$arch

"$here/build_guest.sh"
rc=$?
((rc == 0)) || { ((rc == 77)) && { say "SKIP: the guest cannot be built here"; exit "$skip_code"; }; exit "$rc"; }
command -v "$qemu" >/dev/null || { say "SKIP: no $qemu"; exit "$skip_code"; }

# The guest user reaches the binaries through the host's / shared read-only: every directory on
# the way must be searchable and the files readable by others.
tests=$(readlink -f "${KERN_VM_TESTS:-$here/in_vm_tests.sh}")
for f in "$kern" "$helper" "$tests"; do
  (( 8#$(stat -c %a "$f") & 4 )) || { say "SKIP: $f is not readable by other users"; exit "$skip_code"; }
  d=$(dirname "$f")
  while [[ $d != / ]]; do
    (( 8#$(stat -c %a "$d") & 1 )) || { say "SKIP: $d is not searchable by other users"; exit "$skip_code"; }
    d=$(dirname "$d")
  done
done

accel=${KERN_VM_ACCEL:-auto}
if [[ $accel == auto ]]; then
  # A KVM that opens may still be unable to boot a stock kernel (nested PVM): use it only when
  # it is a plain KVM, and for a guest of the host's own architecture.
  if [[ $(uname -m) == "$kvm_arch" && -c /dev/kvm && ! -d /sys/module/kvm_pvm ]] && (exec 3<>/dev/kvm) 2>/dev/null; then
    accel=kvm
  else
    accel=tcg
  fi
fi
case $accel in
  kvm) accel_args=(-accel kvm -cpu host) ;;
  # One host thread for both vCPUs: with multi-threaded TCG the kernel's live code patching
  # (int3-based, e.g. when cpu.max first switches CFS bandwidth on) can be seen half-done by
  # the other vCPU, which then dies on a stray int3 in the scheduler.
  # The guest's clock counts emulated instructions (-icount, 8 ns each at shift=3), not the
  # host's time: this host is shared and its slow spells would otherwise decide the lane's one
  # speed comparison (a capped start against KERN_NO_SCOPE). Waits still take real time.
  # The arm64 guest emulates a Cortex-A72 there too, the CPU of the boards kern is for.
  tcg)
    accel_args=(-accel tcg,thread=single)
    if [[ $arch == arm64 ]]; then accel_args+=(-cpu cortex-a72); else accel_args+=(-cpu max); fi
    icount=${KERN_VM_ICOUNT:-shift=3}
    [[ $icount == off ]] || accel_args+=(-icount "$icount")
    ;;
  *) say "KERN_VM_ACCEL: auto, kvm or tcg"; exit 2 ;;
esac

run=$(mktemp -d "${TMPDIR:-/tmp}/kern-vm-run.XXXXXX")
chmod 0777 "$run"
[[ ${KERN_VM_KEEP:-0} == 1 ]] || trap 'rm -rf "$run"' EXIT
# The guest sees the host's / read-only but with a /tmp of its own, so a checkout or build under
# /tmp would be invisible there: the files travel in the shared run directory instead (the
# image builder too: the checks build a busybox image in the guest and load it).
mkdir -p "$run/bin"
cp "$kern" "$run/bin/kern" && cp "$helper" "$run/bin/kern-vm-helper" && cp "$tests" "$run/bin/in_vm_tests.sh"
cp "$here/../support/build_images.py" "$run/bin/build_images.py"
[[ -z $probe ]] || cp "$probe" "$run/bin/kern-probe"
chmod -R a+rX "$run/bin"
kern=/run/kern-vm/bin/kern helper=/run/kern-vm/bin/kern-vm-helper tests=/run/kern-vm/bin/in_vm_tests.sh
{
  echo "export KERN_VM_KERN=$(printf %q "$kern") KERN_VM_HELPER=$(printf %q "$helper")"
  echo "export KERN_VM_IMAGES=/run/kern-vm/bin/build_images.py"
  [[ -z $probe ]] || echo "export KERN_VM_PROBE=/run/kern-vm/bin/kern-probe"
  echo "export KERN_VM_RUN=/run/kern-vm"
  echo "exec /bin/bash $(printf %q "$tests")"
} > "$run/job.sh"

uid=${KERN_VM_UID:-1000}
# mitigations=off: under software emulation every kernel entry with page-table isolation flushes
# the emulated TLB, which makes one system call cost about a millisecond, a thousand times a real
# one; start-time comparisons in the guest would then measure the emulator, not kern.
start=$(date +%s)
say "booting ($accel, $(cat "$cache/kernel-release")); the tests run as uid $uid"
timeout --kill-after=10 "${KERN_VM_TIMEOUT:-1800}" "$qemu" "${accel_args[@]}" \
  "${machine[@]}" -smp 2 -m "${KERN_VM_MEM:-1536}" -nodefaults -display none -no-reboot -monitor none \
  -serial "file:$run/console.log" \
  -kernel "$cache/vmlinuz" -initrd "$cache/initramfs.gz" \
  -append "console=$console,115200 quiet loglevel=3 panic=-1 mitigations=off cgroup_no_v1=all kernvm.uid=$uid" \
  -virtfs "local,path=/,mount_tag=kvm_root,security_model=none,readonly=on,multidevs=remap" \
  -virtfs "local,path=$run,mount_tag=kvm_run,security_model=none,multidevs=remap" \
  -device virtio-rng-pci </dev/null >"$run/qemu.log" 2>&1
qrc=$?
# The console carries the tests' output: hand it on without the kernel's own noise.
grep -av -e '^\[ *[0-9.]*\]' "$run/console.log" | tr -d '\r'
result=$(tr -dc 0-9 < "$run/result" 2>/dev/null)
[[ -n $result ]] || result=$(grep -ao 'KERN_VM_RESULT=[0-9]*' "$run/console.log" | tail -n1 | cut -d= -f2)
if [[ -z $result ]]; then
  say "no result from the guest (qemu exit $qrc; 124 = timeout):"
  cat "$run/qemu.log" >&2
  result=1
fi
say "result $result after $(( $(date +%s) - start ))s"
[[ ${KERN_VM_KEEP:-0} == 1 ]] && say "run directory: $run"
exit "$result"
