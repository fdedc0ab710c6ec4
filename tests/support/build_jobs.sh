# Sourced by setup.sh and tests/cross/build_arm64.sh. build_jobs prints how many compiles to run
# at once: min(cores, MemAvailable / 1.5 GiB), at least 1. One unit of cli/ peaks at ~1.2 GiB, so
# a 4 GB board compiling with one job per core would swap to death.
build_jobs() {
  local cores avail_kb jobs
  cores=$(nproc)
  avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null)
  jobs=$(( ${avail_kb:-0} / (1536 * 1024) ))
  [ "$jobs" -gt "$cores" ] && jobs=$cores
  [ "$jobs" -lt 1 ] && jobs=1
  echo "$jobs"
}
