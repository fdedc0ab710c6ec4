#!/bin/bash
# The arm64 cross build on a Debian x86_64 machine, and its unit tests under qemu-user.
#
#   tests/cross/build_arm64.sh [BUILD_DIR]      (default: build-arm64 in the source tree)
#
# 1. Installs what is missing (as root): crossbuild-essential-arm64, qemu-user-static and the
#    :arm64 -dev libraries kern links; each package is checked to be installed afterwards.
# 2. Configures with tests/cross/aarch64.cmake and builds, as many jobs as memory allows
#    (KERN_BUILD_JOBS overrides). kern-seccomp-gen and the completion step run under qemu.
# 3. Checks that a seccomp program made for another architecture fails the build: the generated
#    file, its architecture changed to x86_64's, must not compile for arm64.
# 4. Runs the unit tests (ctest -L unit) under qemu-aarch64-static. What qemu-user cannot do is
#    skipped by name with the reason (tests/unit/test_require.h): seccomp-filter-load, bpf-syscall,
#    openat2, userns; setup.sh test runs this on amd64 hosts and, on CI, allows only those.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build-arm64}
. "$here/tests/support/build_jobs.sh"
say() { echo "build_arm64: $*" >&2; }

packages=(crossbuild-essential-arm64 qemu-user-static cmake pkg-config libseccomp-dev:arm64 libcap-dev:arm64
  libstdc++6:arm64
  libgtest-dev:arm64 libgmock-dev:arm64 nlohmann-json3-dev libcli11-dev libtomlplusplus-dev
  # Headers only (kern opens these libraries with dlopen), but Debian keeps some per architecture.
  libssl-dev:arm64 libcurl4-openssl-dev:arm64 libarchive-dev:arm64 file)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { say "missing packages (run as root to install them): ${missing[*]}"; exit 1; }
  export DEBIAN_FRONTEND=noninteractive
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
  for p in "${missing[@]}"; do
    dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q "ok installed" || { say "package $p did not install"; exit 1; }
  done
fi

# libyaml-cpp-dev is not Multi-Arch: same (its :arm64 package would remove the host's): its
# arm64 archive is unpacked under the build directory instead and found there.
yaml="$build/libyaml-cpp-arm64"
if [ ! -f "$yaml/usr/lib/aarch64-linux-gnu/libyaml-cpp.a" ]; then
  mkdir -p "$build" && rm -rf "$yaml" "$build"/libyaml-cpp-dev_*.deb
  (cd "$build" && apt-get download -qq -o APT::Sandbox::User=root libyaml-cpp-dev:arm64 >/dev/null) || { say "apt-get download libyaml-cpp-dev:arm64 failed"; exit 1; }
  dpkg-deb -x "$build"/libyaml-cpp-dev_*_arm64.deb "$yaml"
  rm -f "$build"/libyaml-cpp-dev_*.deb
fi

jobs=${KERN_BUILD_JOBS:-$(build_jobs)}
start=$(date +%s)
cmake -S "$here" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$here/tests/cross/aarch64.cmake" \
  -DCMAKE_PREFIX_PATH="$yaml/usr" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${KERN_CROSS_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$jobs"
built=$(date +%s)
say "built in $((built - start)) s with $jobs jobs"

file "$build/cli/kern" | grep -q "ARM aarch64" || { say "$build/cli/kern is not an aarch64 binary"; exit 1; }
gen="$build/runtime/seccomp/seccomp_programs.cc"
grep -q "static_assert(kTargetAuditArch == 0xc00000b7U" "$gen" || { say "$gen is not aarch64's"; exit 1; }
wrong=$(mktemp --suffix=.cc)
trap 'rm -f "$wrong"' EXIT
sed 's/kTargetAuditArch == 0xc00000b7U/kTargetAuditArch == 0xc000003eU/' "$gen" >"$wrong"
if aarch64-linux-gnu-g++ -std=c++20 -fsyntax-only -I"$here" "$wrong" 2>"$wrong.err"; then
  say "a seccomp program for x86_64 compiled for arm64: the architecture check is missing"
  exit 1
fi
grep -q "generated for another architecture" "$wrong.err" || { cat "$wrong.err" >&2; exit 1; }
rm -f "$wrong.err"
say "a seccomp program for another architecture fails the build (checked)"

# A per-test timeout, so that a test that waits for what qemu-user never delivers fails in
# minutes instead of ctest's default 1500 s (KernelJsonLine.DurationsAreWrittenAsNlohmannWritesThem
# alone takes 26 s under qemu-user here, over 60 beside another test on a busy host).
# Bounds on time in the unit tests are widened tenfold: qemu-user runs the code about that much slower.
KERN_TEST_TIME_SCALE=${KERN_TEST_TIME_SCALE:-10} ctest --test-dir "$build" -L unit --output-on-failure --timeout "${KERN_CROSS_TEST_TIMEOUT:-180}" -j"$jobs" \
  ${KERN_CROSS_CTEST_ARGS:-}
say "unit tests under qemu-aarch64-static: done in $(( $(date +%s) - built )) s"
