#!/bin/sh
# Builds the built-in default image "busybox" from Debian's busybox-static (/bin/busybox) as a
# docker-archive and loads it into kern's store, so that `kern box hello --image busybox -- ...`
# works offline. Usage: make_busybox_image.sh [KERN_BINARY] [OUT.tar]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kern=${1:-"$here/../../build/cli/kern"}
out=${2:-"${TMPDIR:-/tmp}/kern-busybox-$(id -u).tar"}
if [ ! -x /bin/busybox ]; then
  echo "make_busybox_image.sh: /bin/busybox is missing: apt-get install busybox-static" >&2
  exit 1
fi
python3 "$here/build_images.py" busybox-archive "$out" --tag busybox:latest
"$kern" load -i "$out"
rm -f "$out"
