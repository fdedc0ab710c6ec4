#!/bin/bash
# The VM lane of a build whose target tests/vm cannot boot a guest for yet (tests/CMakeLists.txt
# registers this instead of tests/vm there): an aarch64 kern in an x86_64 guest would only fail.
# A skip by the name vm-TARGET, with KERN_TEST_REQUIRE's rules (tests/unit/test_require.h): a
# comma list of shell patterns, "all" for every name, a leading '-' excludes. Required, it fails.
#
#   no_vm_lane.sh TARGET      (CMAKE_SYSTEM_PROCESSOR: aarch64)
set -u
name=vm-${1:?usage: no_vm_lane.sh TARGET}
required=0 excluded=0
IFS=, read -ra patterns <<<"${KERN_TEST_REQUIRE:-}"
for p in "${patterns[@]}"; do
  negate=0
  [[ $p == -* ]] && { negate=1; p=${p#-}; }
  [[ $p == all ]] && p='*'
  # shellcheck disable=SC2053  # the pattern is a glob on purpose
  [[ -n $p && $name == $p ]] || continue
  if ((negate)); then excluded=1; else required=1; fi
done
reason="tests/vm boots no $1 guest yet (its run.sh names no qemu-system-$1)"
if ((required && !excluded)); then
  echo "kern-vm: required by KERN_TEST_REQUIRE ($name): $reason" >&2
  exit 1
fi
echo "kern-vm: SKIP ($name): $reason" >&2
exit 77
