#!/usr/bin/env bash
# kern's one setup script, for a fresh Debian 12 machine.
#
#   sudo ./setup.sh demo   install, build, load the built-in busybox image, run a box in it
#   sudo ./setup.sh test   install, build, run the whole test suite (unit, integration as an
#                          unprivileged user, the VM lane); what CI runs (.ci/run)
#   sudo ./setup.sh deps   only install the Debian packages
#   ./setup.sh build       only configure and build (as any user)
#
# As root, the box itself is always run by an unprivileged user (KERN_USER, default: the user
# who ran sudo, else "kerntest", created if missing): a rootless runtime tested as root proves
# little.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${KERN_BUILD_DIR:-$here/build}
test_user=${KERN_TEST_USER:-kerntest}

say() { printf 'setup: %s\n' "$*" >&2; }

build_packages=(cmake g++ make pkg-config libseccomp-dev libcap-dev libtomlplusplus-dev libcli11-dev
  libarchive-dev nlohmann-json3-dev libcurl4-openssl-dev libssl-dev libzstd-dev libgtest-dev libgmock-dev)
run_packages=(busybox-static uidmap)
test_packages=(python3 bubblewrap util-linux docker-registry skopeo umoci debootstrap clang libclang-rt-14-dev
  qemu-system-x86 qemu-utils cpio kmod linux-base xz-utils zstd nodejs apache2-utils i2c-tools
  libgpiod-dev gpiod hyperfine time procps iproute2 curl ca-certificates e2fsprogs dnsmasq-base openssl)

install_packages() {
  [ "$(id -u)" = 0 ] || { say "installing packages needs root: sudo $0 $*"; exit 1; }
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  local want=("${build_packages[@]}" "${run_packages[@]}")
  [ "${1:-}" = test ] && want+=("${test_packages[@]}")
  # Packages this Debian release does not have are named and skipped; the tests that need them
  # say SKIPPED with the reason (and fail on CI where KERN_TEST_REQUIRE names them).
  local have=()
  for p in "${want[@]}"; do
    if apt-cache show "$p" >/dev/null 2>&1; then have+=("$p"); else say "package $p not available here"; fi
  done
  apt-get install -y -qq --no-install-recommends "${have[@]}" >/dev/null
}

# The registry the tests start is their own; Debian's package enables a system one on :5000.
quiet_registry_service() {
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker-registry 2>/dev/null; then
    systemctl stop docker-registry || true
  fi
  pkill -x docker-registry 2>/dev/null || true
}

do_build() {
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j"$(nproc)"
}

run_user() {
  if [ -n "${SUDO_USER:-}" ] && [ "${SUDO_USER}" != root ]; then echo "$SUDO_USER"; else echo "$test_user"; fi
}

ensure_user() {
  local u=$1
  id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"
  # A subordinate id range for --uid-range.
  grep -q "^$u:" /etc/subuid 2>/dev/null || usermod --add-subuids 200000-265535 "$u"
  grep -q "^$u:" /etc/subgid 2>/dev/null || usermod --add-subgids 200000-265535 "$u"
}

# The unprivileged user must reach the build tree; when the checkout sits somewhere it cannot
# enter (a 0700 home), everything is built from a copy it can read.
relocate_if_unreachable() {
  local u=$1
  if ! runuser -u "$u" -- test -r "$here/CMakeLists.txt"; then
    local copy=/var/tmp/kern-src
    say "$here is not readable by $u: building from a copy in $copy"
    rm -rf "$copy" && mkdir -p "$copy"
    (cd "$here" && tar --exclude=./build --exclude='./build-*' -cf - .) | (cd "$copy" && tar -xf -)
    chmod -R a+rX "$copy"
    here=$copy
    build=$copy/build
  fi
}

as_user() { local u=$1; shift; runuser -u "$u" -- env -u XDG_RUNTIME_DIR HOME="$(getent passwd "$u" | cut -d: -f6)" "$@"; }

cmd=${1:-demo}
case "$cmd" in
  deps)
    install_packages "${2:-}"
    ;;
  build)
    do_build
    ;;
  demo)
    if [ "$(id -u)" = 0 ]; then
      install_packages
      u=$(run_user); ensure_user "$u"; relocate_if_unreachable "$u"
      do_build; chmod -R a+rX "$build"
      as_user "$u" bash "$here/tests/support/make_busybox_image.sh" "$build/cli/kern"
      as_user "$u" "$build/cli/kern" box hello --image busybox -- echo "hello from a kern box"
    else
      do_build
      bash "$here/tests/support/make_busybox_image.sh" "$build/cli/kern"
      "$build/cli/kern" box hello --image busybox -- echo "hello from a kern box"
    fi
    ;;
  test)
    [ "$(id -u)" = 0 ] || { say "the test suite sets up users and services: sudo $0 test"; exit 1; }
    install_packages test
    quiet_registry_service
    ensure_user "$test_user"; relocate_if_unreachable "$test_user"
    do_build; chmod -R a+rX "$build"
    export KERN_TEST_USER=$test_user
    # On CI the skips that must not happen on this kind of machine fail instead. Left out: what
    # this kind of host cannot show outside a box either (unprivileged bpf is disabled by the
    # host's sysctl; the kernel has no x32 ABI), so only the in-box answer is checked there.
    if [ "${CI:-}" = true ]; then
      export KERN_TEST_REQUIRE=${KERN_TEST_REQUIRE:-all,-outside-bpf,-outside-x32}
    fi
    rc=0
    (cd "$build" && ctest --output-on-failure -j1 --timeout 1500) || rc=1
    # The unpacker's libFuzzer target: a clang build of its own, run for a bounded time.
    if command -v clang++ >/dev/null 2>&1; then
      fuzz_build=$build-fuzz
      cmake -S "$here" -B "$fuzz_build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DKERN_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
      cmake --build "$fuzz_build" --target fuzz_unpack -j"$(nproc)" >/dev/null
      (cd "$fuzz_build" && ctest -L fuzz --output-on-failure) || rc=1
    else
      say "clang++ missing: the fuzz target was not built"; rc=1
    fi
    exit "$rc"
    ;;
  *)
    say "unknown command $cmd (demo, test, deps, build)"; exit 2
    ;;
esac
