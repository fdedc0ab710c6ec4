#!/usr/bin/env bash
# kern's one setup script, for a fresh Debian 12 machine.
#
#   ./setup.sh demo   install, build, load the built-in busybox image, run a box in it
#   ./setup.sh test   install, build, run the whole test suite (unit, integration as an
#                     unprivileged user, the VM lane); what CI runs (.ci/run). On an amd64
#                     host the arm64 lane follows: the cross build of every target, its unit
#                     tests under qemu-aarch64-static and its VM lane. On an arm64 host (a
#                     Debian or Raspberry Pi OS board) the native build is the arm64 lane: no
#                     cross build, and the VM lane boots an arm64 guest or is skipped by name.
#   ./setup.sh deps   only install the Debian packages
#   ./setup.sh build  only configure and build (as any user)
#   ./setup.sh install [PREFIX]  install, build, put kern, kern-oci (the OCI runtime's name for
#                     engines), the man pages and the bash, zsh and fish completions under
#                     PREFIX (default /usr/local), and say whether each shell finds them there
#   ./setup.sh tun    only make /dev/net/tun and /dev/fuse usable by every user, as Debian's
#                     udev rules do (deps, demo, test and install do it too): for --net private
#                     and a user's FUSE mounts
#
# Run it as root (a fresh Debian machine has no sudo) or as a user who may use sudo: what needs
# root (packages, the test user) runs this script again through sudo. demo as a user without
# sudo works when the packages are installed already. Through sudo, the build is made as the
# user who ran sudo (their clone's build/ stays theirs); only packages, the device and the
# installed files are root's. The box itself is always run by an unprivileged user (the user
# who ran sudo, else KERN_TEST_USER, default "kerntest", created if missing): a rootless runtime
# tested as root proves little.
#
# KERN_SETUP_DRY_RUN=1: decide who runs what (root, sudo, which user runs the boxes), say it in
# one "setup: dry run: ..." line and stop before changing anything; for tests of this script.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${KERN_BUILD_DIR:-$here/build}
test_user=${KERN_TEST_USER:-kerntest}

say() { printf 'setup: %s\n' "$*" >&2; }

build_packages=(cmake g++ make pkg-config libseccomp-dev libcap-dev libtomlplusplus-dev libcli11-dev
  libarchive-dev nlohmann-json3-dev libcurl4-openssl-dev libssl-dev libzstd-dev libgtest-dev libgmock-dev
  # kern compose reads compose files with it.
  libyaml-cpp-dev)
# bash-completion: the loader that finds kern's bash completion (a fresh Debian has none).
# python3: make_busybox_image.sh, the demo's image.
run_packages=(busybox-static uidmap passt bash-completion python3)
test_packages=(python3 bubblewrap util-linux docker-registry skopeo umoci runc crun debootstrap clang libclang-rt-14-dev
  qemu-utils cpio kmod linux-base xz-utils zstd nodejs apache2-utils i2c-tools
  libgpiod-dev gpiod hyperfine time procps iproute2 curl ca-certificates e2fsprogs dnsmasq-base openssl
  # test_box_lookup_scale counts the record files a verb opens.
  strace
  # test_oci_runtime: a --root on bindfs (FUSE 2), a real file system without RENAME_EXCHANGE.
  bindfs
  # apparmor_parser, which the VM lane runs in its guest to load the profile --apparmor enters.
  apparmor
  # test_install: the installed man pages rendered, the zsh and fish completion scripts checked.
  man-db zsh fish
  # test_box_systemd_unit: systemd-analyze verifies kern generate systemd's unit (systemd does not
  # run as PID 1 here; the package only brings its tools).
  systemd
  # The engines that drive kern-oci in test_oci_engines: rootless podman (conmon, slirp4netns for
  # its network, catatonit for its pause process; uidmap above) and containerd.
  podman conmon containerd catatonit slirp4netns
  # tests/bench/compose_bench.py: the peer of kern compose up and down.
  podman-compose)
# Every name above exists for amd64 and for arm64 in Debian 12. What depends on the host's own
# architecture (dpkg --print-architecture): the emulator of the VM lane's guest, which is of the
# host's architecture; and, on amd64 only, the arm64 lane's cross toolchain, the :arm64
# libraries kern links (headers only for those it opens with dlopen), qemu-user to run what the
# cross build made, and qemu-system-arm (qemu-system-aarch64) for that build's VM lane.
host_arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
case "$host_arch" in
  amd64) test_packages+=(qemu-system-x86) ;;
  arm64) test_packages+=(qemu-system-arm) ;;
esac
cross_packages=(crossbuild-essential-arm64 qemu-user-static qemu-system-arm file libstdc++6:arm64 libseccomp-dev:arm64
  libcap-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 libssl-dev:arm64 libcurl4-openssl-dev:arm64
  libarchive-dev:arm64)
cross_lane() { [ "$host_arch" = amd64 ]; }
# What `test` runs for arm64 on this host, for the dry run's line.
arm64_lane_note() {
  case "$host_arch" in
    amd64) echo "then the arm64 lane: the cross build of every target in $build-arm64, its unit tests under qemu-aarch64-static, its VM lane" ;;
    arm64) echo "no cross build on this arm64 host: the native build and its tests are the arm64 lane" ;;
    *) echo "no arm64 lane on this $host_arch host" ;;
  esac
}

# The variables this script reads, passed on when it runs itself again through sudo (which
# resets the environment).
passed_env=(KERN_BUILD_DIR KERN_TEST_USER KERN_TEST_REQUIRE KERN_CROSS_TEST_REQUIRE KERN_SETUP_DRY_RUN CI)

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
  local want=("${build_packages[@]}" "${run_packages[@]}")
  [ "${1:-}" = test ] && want+=("${test_packages[@]}")
  if [ "${1:-}" = test ] && cross_lane; then
    want+=("${cross_packages[@]}")
    # The :arm64 packages are known to apt only once the architecture is added.
    dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  fi
  apt-get update -qq
  # Packages this Debian release does not have are named and skipped; the tests that need them
  # say SKIPPED with the reason (and fail on CI where KERN_TEST_REQUIRE names them).
  local have=()
  for p in "${want[@]}"; do
    if apt-cache show "$p" >/dev/null 2>&1; then have+=("$p"); else say "package $p not available here"; fi
  done
  local todo
  todo=$(missing_packages "${have[@]}" | wc -l)
  # apt-get is kept quiet: say what is happening, since it takes minutes on a board or a slow mirror.
  [ "$todo" = 0 ] || say "installing $todo Debian packages with apt-get (a few minutes; quiet until done)"
  apt-get install -y -qq --no-install-recommends "${have[@]}" >/dev/null
  prepare_devices
}

# build_jobs: parallel compiles capped by memory (tests/support/build_jobs.sh).
. "$here/tests/support/build_jobs.sh"

# /dev/net/tun and /dev/fuse as Debian's udev rules leave them (50-udev-default.rules:
# KERNEL=="tun", MODE="0666"; KERNEL=="fuse", MODE="0666"): pasta opens the first in a box's user
# namespace, where only its mode counts (--net private); a user's FUSE mount (fusermount, bindfs
# in the tests) needs the second. Where no udev runs (a container, a minimal VM) they are 0600
# root or missing; kern doctor checks the first. Not kept over a reboot without udev: run
# `./setup.sh tun` again.
prepare_devices() {
  [ "$(id -u)" = 0 ] || { say "making /dev/net/tun and /dev/fuse usable needs root"; exit 1; }
  [ -e /dev/net/tun ] || modprobe tun 2>/dev/null || true
  open_device /dev/net/tun 10 200 "--net private"
  open_device /dev/fuse 10 229 "a user's FUSE mounts"
}

# open_device PATH MAJOR MINOR PURPOSE: the character device made, or made mode 0666.
open_device() {
  local dev=$1 purpose=$4 mode
  if [ ! -e "$dev" ]; then
    if mkdir -p "$(dirname "$dev")" && mknod -m 0666 "$dev" c "$2" "$3"; then
      say "made $dev (char $2,$3, mode 0666) for $purpose"
    else
      say "could not make $dev: $purpose will not work here"
    fi
    return 0
  fi
  mode=$(stat -c %a "$dev")
  if [ "$mode" != 666 ]; then
    if [ -c "$dev" ] && chmod 0666 "$dev"; then
      say "$dev was mode $mode: made 0666, as Debian's udev rule does, for $purpose"
    else
      say "could not make $dev usable (mode $mode): $purpose will not work here"
    fi
  fi
}

# Who builds: through sudo, the user who ran it (the clone and its build/ are theirs); else
# whoever runs this script.
builder() {
  if [ "$(id -u)" = 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then echo "$SUDO_USER"; else id -un; fi
}

# Configure and build as the builder; with arguments, only those targets (demo and install need
# kern alone, not the unit tests: about half the compile time).
do_build() {
  local targets=() t u
  for t in "$@"; do targets+=(--target "$t"); done
  if [ $# -gt 0 ]; then
    say "building $* as $(builder): under 4 minutes on a 2-core machine (the unit tests are not built)"
  else
    say "building everything, the unit tests too, as $(builder): longer than kern alone (build and tests, CI's whole run: about 20 minutes, and the arm64 lane after it on amd64)"
  fi
  u=$(builder)
  if [ "$u" != "$(id -un)" ]; then
    # A build/ an earlier run through sudo left root's: the user's own again.
    [ -e "$build" ] && chown -R "$u": "$build"
    runuser -u "$u" -- cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    runuser -u "$u" -- cmake --build "$build" -j"$(build_jobs)" "${targets[@]}"
  else
    cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" -j"$(build_jobs)" "${targets[@]}"
  fi
}

# What root wrote into the build tree afterwards (ctest's logs, the install manifest) goes back
# to the builder.
give_back_build() {
  local u
  u=$(builder)
  if [ "$u" != "$(id -un)" ] && [ -e "$build" ]; then chown -R "$u": "$build"; fi
  if [ "$u" != "$(id -un)" ] && [ -e "$build-arm64" ]; then chown -R "$u": "$build-arm64"; fi
  return 0
}

# $1 (zsh or fish) looks in $2 or not, as the shell itself lists its directories: the command
# $4, run with the flag $3 (no rc file) and no XDG_DATA_DIRS, as a login shell has it; $5: where
# to add what.
shell_report() {
  if ! command -v "$1" >/dev/null 2>&1; then
    say "$1: not installed here ($2 is ready for it)"
  elif env -u XDG_DATA_DIRS "$1" "$3" -c "$4" 2>/dev/null | grep -qxF "$2"; then
    say "$1: found in $2 by a new shell"
  else
    say "$1: $2 is not searched: add to $5"
  fi
}

# Where each shell looks for the completions just installed under $1 (a prefix): said as it is,
# with the line that makes a shell look there when it does not.
completion_report() {
  local prefix=$1 share=$1/share home bashdirs
  home=$(getent passwd "$(builder)" | cut -d: -f6)
  # bash-completion loads a command's completion from ~/.local/share and $XDG_DATA_DIRS
  # (unset in a login shell: /usr/local/share:/usr/share), each with /bash-completion/completions.
  bashdirs=":${XDG_DATA_DIRS:-/usr/local/share:/usr/share}:$home/.local/share:"
  if [ ! -f /usr/share/bash-completion/bash_completion ]; then
    say "bash: the bash-completion package is not installed, so no completion loads: apt-get install bash-completion"
  elif case "$bashdirs" in *":$share:"* | *":$share/:"*) true ;; *) false ;; esac; then
    say "bash: found in $share/bash-completion/completions by a new shell"
  else
    say "bash: $share is not searched (bash-completion looks in ~/.local/share and \$XDG_DATA_DIRS, else"
    say "  /usr/local/share:/usr/share): add to ~/.bashrc: source $share/bash-completion/completions/kern"
  fi
  shell_report zsh "$share/zsh/site-functions" -f 'print -rl -- $fpath' \
    "~/.zshrc, before compinit: fpath+=($share/zsh/site-functions)"
  shell_report fish "$share/fish/vendor_completions.d" --no-config 'printf "%s\n" $fish_complete_path' \
    "~/.config/fish/config.fish: set -p fish_complete_path $share/fish/vendor_completions.d"
}

# The command as the builder, in the environment of this script.
as_builder() {
  local u
  u=$(builder)
  if [ "$u" != "$(id -un)" ]; then runuser -u "$u" -- "$@"; else "$@"; fi
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
    [ "$(builder)" = root ] || chown -R "$(builder)": "$copy"
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
  tun)
    become_root
    dry_stop "tun as root"
    prepare_devices
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
      dry_stop "demo as root, built by $(builder) (target kern), the box run by $u"
      install_packages
      ensure_user "$u"; relocate_if_unreachable "$u"
      do_build kern; chmod -R a+rX "$build"
      as_user "$u" bash "$here/tests/support/make_busybox_image.sh" "$build/cli/kern"
      as_user "$u" "$build/cli/kern" box hello --image busybox -- echo "hello from a kern box"
      next_steps "$build/cli/kern" "$u"
    else
      dry_stop "demo as $(id -un), built by $(builder) (target kern), the packages installed already"
      do_build kern
      bash "$here/tests/support/make_busybox_image.sh" "$build/cli/kern"
      "$build/cli/kern" box hello --image busybox -- echo "hello from a kern box"
      next_steps "$build/cli/kern"
    fi
    ;;
  test)
    become_root
    dry_stop "test as root, built by $(builder) (every target), the tests run by $test_user; $(arm64_lane_note)"
    install_packages test
    ensure_user "$test_user"; relocate_if_unreachable "$test_user"
    do_build; chmod -R a+rX "$build"
    export KERN_TEST_USER=$test_user
    # On CI the skips that must not happen on this kind of machine fail instead. Left out: what
    # this kind of host cannot show outside a box either (unprivileged bpf is disabled by the
    # host's sysctl; the kernel has no x32 ABI), so only the in-box answer is checked there; and
    # "cgroup", the tests that need a delegated cgroup v2, which this kind of host (cgroup v1
    # hybrid) has not: the VM lane, where cgroup v2 is the only hierarchy, checks those; and
    # "podman-heredoc", the comparison of a heredoc build with podman's, which Debian 12's podman
    # 4.3 cannot read (kern's half of that test still runs).
    if [ "${CI:-}" = true ]; then
      export KERN_TEST_REQUIRE=${KERN_TEST_REQUIRE:-all,-outside-bpf,-outside-x32,-cgroup,-podman-heredoc}
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
      [ "$(builder)" = "$(id -un)" ] || chown -R "$(builder)": "$fuzz_build"
    else
      say "clang++ missing: the fuzz target was not built"; rc=1
    fi
    # The arm64 lane of an amd64 host: the cross build of every target and its unit tests under
    # qemu-aarch64-static (tests/cross/build_arm64.sh, as the builder), then that build's VM lane.
    # On CI only what qemu-user cannot do may skip there, each by name: seccomp-filter-load (it
    # refuses seccomp for its guest), bpf-syscall (no bpf(2) for its guest), openat2 (qemu 7.2
    # answers ENOSYS), userns (qemu runs threads of its own, and a process with more than one
    # thread cannot unshare a user namespace). The VM lane that follows boots an arm64 guest and
    # runs there what qemu-user cannot: boxes, the seccomp filter, limits, vgpio, the OCI mode.
    # KERN_CROSS_TEST_REQUIRE overrides.
    if cross_lane; then
      xbuild=$build-arm64
      xrequire=${KERN_CROSS_TEST_REQUIRE:-}
      if [ "${CI:-}" = true ]; then
        xrequire=${KERN_CROSS_TEST_REQUIRE:-all,-seccomp-filter-load,-bpf-syscall,-openat2,-userns}
      fi
      [ -e "$xbuild" ] && chown -R "$(builder)": "$xbuild"
      say "the arm64 lane: cross build in $xbuild, unit tests under qemu-aarch64-static (KERN_TEST_REQUIRE=$xrequire)"
      as_builder env KERN_TEST_REQUIRE="$xrequire" bash "$here/tests/cross/build_arm64.sh" "$xbuild" || rc=1
      if [ -x "$xbuild/cli/kern" ]; then
        chmod -R a+rX "$xbuild"
        (cd "$xbuild" && KERN_TEST_REQUIRE="$xrequire" ctest -L vm --output-on-failure --timeout 3600) || rc=1
      else
        say "the arm64 cross build made no kern: its VM lane did not run"; rc=1
      fi
    fi
    give_back_build
    exit "$rc"
    ;;
  install)
    become_root
    dry_stop "install as root, built by $(builder) (targets kern, kern_completions)"
    install_packages
    do_build kern kern_completions
    prefix=$(readlink -f "${2:-/usr/local}" || echo "${2:-/usr/local}")
    cmake --install "$build" --prefix "$prefix" --strip >/dev/null
    give_back_build
    say "installed $prefix/bin/kern and kern-oci beside it (the OCI runtime's name for engines),"
    say "the man pages under $prefix/share/man (man kern, man kern-box), and completions for"
    say "bash ($prefix/share/bash-completion/completions/kern), zsh ($prefix/share/zsh/site-functions/_kern)"
    say "and fish ($prefix/share/fish/vendor_completions.d/kern.fish). Where each shell looks for them:"
    completion_report "$prefix"
    k=kern
    case ":$PATH:" in *":$prefix/bin:"*) ;; *) k=$prefix/bin/kern ;; esac
    say "try next: $k doctor; $k box --image busybox -- echo hi (once ./setup.sh demo or $k pull has"
    say "put an image in your store); $k help lists the verbs"
    ;;
  *)
    say "unknown command $cmd (demo, test, deps, build, install, tun)"; exit 2
    ;;
esac
