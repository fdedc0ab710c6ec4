#!/bin/bash
# Warm-kernel benchmark (issue 5): medians and ratios of a trivial Python cell over
# `kern kernel serve`, a fresh `kern box -- python3 -c 1+1`, the pipe-pair floor and
# `kern kernel run`. Run as an unprivileged user (kern is rootless).
#   tests/bench/kernel_bench.sh [KERN_BIN] [ROOTFS]
# ROOTFS defaults to a language root built by tests/support/make_lang_rootfs.sh next to the
# binary's build dir (or under /tmp when that is not writable).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kern=${1:-${KERN_BIN:-$here/../../build/cli/kern}}
root=${2:-}
if [[ -z $root ]]; then
  root=$(dirname "$(dirname "$(readlink -f "$kern")")")/lang-rootfs
  [[ -w $(dirname "$root") || -f $root/.kern-features ]] || root=/tmp/kern-bench-lang-rootfs-$(id -u)
  bash "$here/../support/make_lang_rootfs.sh" "$root" >/dev/null
fi
exec python3 "$here/kernel_bench.py" --kern "$kern" --rootfs "$root" "${@:3}"
