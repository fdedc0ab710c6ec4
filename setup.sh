#!/usr/bin/env bash
# kern's one setup script, for a fresh Debian 12 machine.
#
#   ./setup.sh demo   install, build, load the built-in busybox image, run a box in it
#   ./setup.sh test   install, build, run the whole test suite (unit, integration as an
#                     unprivileged user, the VM lane); what CI runs (.ci/run)
#   ./setup.sh deps   only install the Debian packages
#   ./setup.sh build  only configure and build (as any user)
#   ./setup.sh install [PREFIX]  install, build, put kern, kern-oci (the OCI runtime's name for
#                     engines), the man pages and the bash, zsh and fish completions under
#                     PREFIX (default /usr/local)
#
# Run it as root (a fresh Debian machine has no sudo) or as a user who may use sudo: what needs
# root (packages, the test user) runs this script again through sudo. demo as a user without
# sudo works when the packages are installed already. The box itself is always run by an
# unprivileged user (the user who ran sudo, else KERN_TEST_USER, default "kerntest", created if
# missing): a rootless runtime tested as root proves little.
#
# KERN_SETUP_DRY_RUN=1: decide who runs what (root, sudo, which user runs the boxes), say it in
# one "setup: dry run: ..." line and stop before changing anything; for tests of this script.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${KERN_BUILD_DIR:-$here/build}
test_user=${KERN_TEST_USER:-kerntest}

say() { printf 'setup: %s\n' "$*" >&2; }

build_packages=(cmake g++ make pkg-config libseccomp-dev libcap-dev libtomlplusplus-dev libcli11-dev
  libarchive-dev nlohmann-json3-dev libcurl4-openssl-dev libssl-dev libzstd-dev libgtest-dev libgmock-dev)
run_packages=(busybox-static uidmap passt)
test_packages=(python3 bubblewrap util-linux docker-registry skopeo umoci debootstrap clang libclang-rt-14-dev
  qemu-system-x86 qemu-utils cpio kmod linux-base xz-utils zstd nodejs apache2-utils i2c-tools
  libgpiod-dev gpiod hyperfine time procps iproute2 curl ca-certificates e2fsprogs dnsmasq-base openssl
  # apparmor_parser, which the VM lane runs in its guest to load the profile --apparmor enters.
  apparmor
  # test_install: the installed man pages rendered, the zsh and fish completion scripts checked.
  man-db zsh fish
  # The engines that drive kern-oci in test_oci_engines: rootless podman (conmon, slirp4netns for
  # its network, catatonit for its pause process; uidmap above) and containerd.
  podman conmon containerd catatonit slirp4netns)

# The variables this script reads, passed on when it runs itself again through sudo (which
# resets the environment).
passed_env=(KERN_BUILD_DIR KERN_TEST_USER KERN_TEST_REQUIRE KERN_SETUP_DRY_RUN CI)

# Root for what follows: as root, nothing to do; else this script again through sudo when there
# is one (SUDO_USER then names the calling user, who runs the boxes); else a clear refusal.
become_root() {
  [ "$(id -u)" = 0 ] && return 0
  if command -v sudo >/dev/null 2>&1; then
    local envs=() v
    for v in "${passed_env[@]}"; do [ -n "${!v:-}" ] && envs+=("$v=${!v}"); done
    say "$cmd needs root: running it again through sudo"
    exec sudo -- env "${envs[@]}" "$here/setup.sh" "${args[@]}"
  fi
  say "$cmd needs root and sudo is not installed: run it as root (su -c '$here/setup.sh ${args[*]}')"
  exit 1
}

# Packages of the given lists that are not installed.
missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

# In a dry run, the decision made and nothing else.
dry_stop() {
  if [ -n "${KERN_SETUP_DRY_RUN:-}" ]; then
    say "dry run: $*"
    exit 0
  fi
}

install_packages() {
  [ "$(id -u)" = 0 ] || { say "installing packages needs root"; exit 1; }
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

# build_jobs: parallel compiles capped by memory (tests/support/build_jobs.sh).
. "$here/tests/support/build_jobs.sh"

do_build() {
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j"$(build_jobs)"
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

# The demo's last lines: where kern is and what to try next ($2: the user the box ran as, when
# the demo ran as root).
next_steps() {
  local kern=$1 who=${2:-}
  say "kern is built at $kern; not installed: ./setup.sh install [PREFIX] puts kern, kern-oci, the"
  say "man pages and the bash, zsh and fish completions under PREFIX (default /usr/local)"
  if [ -n "$who" ]; then
    say "try next, as $who (kern never needs root; from root: runuser -u $who -- COMMAND):"
  else
    say "try next:"
  fi
  say "  a shell in a box (exit leaves it):   $kern box -it --image busybox -- sh"
  say "  every isolation step, nothing run:   $kern box --plan --image busybox -- true"
  say "  a detached box:                      $kern box web -d --image busybox -- httpd -f -p 8080"
  say "    then $kern ps, $kern logs web, $kern stop web"
  say "  what this host gives boxes:          $kern doctor"
  say "  the manual:                          man -l $here/man/kern.1 (man kern once installed)"
}

as_user() { local u=$1; shift; runuser -u "$u" -- env -u XDG_RUNTIME_DIR HOME="$(getent passwd "$u" | cut -d: -f6)" "$@"; }

args=("$@")
cmd=${1:-demo}
case "$cmd" in
  deps)
    become_root
    dry_stop "deps as root"
    install_packages "${2:-}"
    ;;
  build)
    dry_stop "build as $(id -un) with $(build_jobs) parallel jobs"
    do_build
    ;;
  demo)
    if [ "$(id -u)" != 0 ] && [ -n "$(missing_packages "${build_packages[@]}" "${run_packages[@]}")" ]; then
      become_root
    fi
    if [ "$(id -u)" = 0 ]; then
      u=$(run_user)
      dry_stop "demo as root, the box run by $u"
      install_packages
      ensure_user "$u"; relocate_if_unreachable "$u"
      do_build; chmod -R a+rX "$build"
      as_user "$u" bash "$here/tests/support/make_busybox_image.sh" "$build/cli/kern"
      as_user "$u" "$build/cli/kern" box hello --image busybox -- echo "hello from a kern box"
      next_steps "$build/cli/kern" "$u"
    else
      dry_stop "demo as $(id -un), the packages installed already"
      do_build
      bash "$here/tests/support/make_busybox_image.sh" "$build/cli/kern"
      "$build/cli/kern" box hello --image busybox -- echo "hello from a kern box"
      next_steps "$build/cli/kern"
    fi
    ;;
  test)
    become_root
    dry_stop "test as root, the tests run by $test_user"
    install_packages test
    ensure_user "$test_user"; relocate_if_unreachable "$test_user"
    do_build; chmod -R a+rX "$build"
    export KERN_TEST_USER=$test_user
    # On CI the skips that must not happen on this kind of machine fail instead. Left out: what
    # this kind of host cannot show outside a box either (unprivileged bpf is disabled by the
    # host's sysctl; the kernel has no x32 ABI), so only the in-box answer is checked there; and
    # "cgroup", the tests that need a delegated cgroup v2, which this kind of host (cgroup v1
    # hybrid) has not: the VM lane, where cgroup v2 is the only hierarchy, checks those.
    if [ "${CI:-}" = true ]; then
      export KERN_TEST_REQUIRE=${KERN_TEST_REQUIRE:-all,-outside-bpf,-outside-x32,-cgroup}
    fi
    rc=0
    (cd "$build" && ctest --output-on-failure -j1 --timeout 1500) || rc=1
    # The unpacker's libFuzzer target: a clang build of its own, run for a bounded time.
    if command -v clang++ >/dev/null 2>&1; then
      fuzz_build=$build-fuzz
      cmake -S "$here" -B "$fuzz_build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DKERN_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
      cmake --build "$fuzz_build" --target fuzz_unpack -j"$(build_jobs)" >/dev/null
      (cd "$fuzz_build" && ctest -L fuzz --output-on-failure) || rc=1
    else
      say "clang++ missing: the fuzz target was not built"; rc=1
    fi
    exit "$rc"
    ;;
  install)
    become_root
    dry_stop "install as root"
    install_packages
    do_build
    prefix=$(readlink -f "${2:-/usr/local}" || echo "${2:-/usr/local}")
    cmake --install "$build" --prefix "$prefix" --strip >/dev/null
    say "installed $prefix/bin/kern and kern-oci beside it (the OCI runtime's name for engines),"
    say "the man pages under $prefix/share/man (man kern, man kern-box), and completions for"
    say "bash ($prefix/share/bash-completion/completions/kern), zsh ($prefix/share/zsh/site-functions/_kern)"
    say "and fish ($prefix/share/fish/vendor_completions.d/kern.fish); a new shell picks them up"
    k=kern
    case ":$PATH:" in *":$prefix/bin:"*) ;; *) k=$prefix/bin/kern ;; esac
    say "try next: $k doctor; $k box --image busybox -- echo hi (once ./setup.sh demo or $k pull has"
    say "put an image in your store); $k help lists the verbs"
    ;;
  *)
    say "unknown command $cmd (demo, test, deps, build, install)"; exit 2
    ;;
esac
