#!/bin/bash
# The warm kernel's drivers (runtime/kernel/drivers/) checked by their own languages' tools:
# bash -n, python3's compiler, node --check; shellcheck and pyflakes3 too where installed.
# Run: bash tests/unit/kernel_drivers_check.sh (ctest: unit.kernel_drivers_check).
set -uo pipefail
dir=$(cd "$(dirname "$0")/../../runtime/kernel/drivers" && pwd)
rc=0
check() {
  local what=$1
  shift
  if "$@"; then
    echo "ok: $what"
  else
    echo "FAILED: $what"
    rc=1
  fi
}
check "bash -n bash_driver.sh" bash -n "$dir/bash_driver.sh"
check "python3 compiles python_driver.py" python3 -c \
  "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')" "$dir/python_driver.py"
if command -v node >/dev/null; then
  check "node --check node_driver.js" node --check "$dir/node_driver.js"
else
  echo "not run: node --check (no node on this host)"
fi
if command -v shellcheck >/dev/null; then
  check "shellcheck bash_driver.sh" shellcheck -s bash "$dir/bash_driver.sh"
fi
if command -v pyflakes3 >/dev/null; then
  check "pyflakes3 python_driver.py" pyflakes3 "$dir/python_driver.py"
fi
exit $rc
