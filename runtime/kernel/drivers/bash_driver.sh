# The bash driver: run inside the box as `bash --norc --noprofile -c SOURCE kern-kernel`.
# Runs in the box (the workload process).
#
# Each cell is sourced at the top level of the one shell (not in a function), so variables,
# `declare`d arrays, functions, the working directory and exports persist. The code reaches the
# shell through a here-string on fd 9, which bash reads whole before running it, so the cell's
# own stdin stays /dev/null. The end of a cell is one packet on fd 4 (SOCK_SEQPACKET).
# Interrupts: SIGINT goes to the whole process group (the foreground command dies, as with
# Ctrl-C); the INT trap then arms a DEBUG trap that, under extdebug, returns from every function
# and from the sourced cell, so the cell stops at its next command and gives rc 130.
# `exit` in a cell ends the shell and so the kernel (it answers `dead` from then on).
# Embedded in the kern binary at build time (runtime/kernel/embed_driver.cmake).
__kern_dbg() { [[ -n $__kern_intr && " ${BASH_SOURCE[*]} " == *" /dev/fd/9 "* ]] && return 2; return 0; }
trap '__kern_intr=1; trap __kern_dbg DEBUG' INT
shopt -s extdebug
printf 'W{"ready":true,"lang":"bash","version":"%s","pid":%d}' "$BASH_VERSION" "$$" >&4
while :; do
  IFS=' ' read -r -u 3 __kern_m __kern_cid __kern_n || exit 0
  __kern_lc=${LC_ALL-}; LC_ALL=C
  IFS= read -r -u 3 -d '' -N "$__kern_n" __kern_code
  IFS= read -r -u 3 __kern_nonce
  LC_ALL=$__kern_lc
  [[ -z $__kern_lc ]] && unset LC_ALL
  unset __kern_lc __kern_m
  __kern_intr=
  # shellcheck source=/dev/null
  source /dev/fd/9 9<<<"$__kern_code"
  __kern_rc=$?
  trap - DEBUG
  [[ -n $__kern_intr ]] && __kern_rc=130
  printf 'W{"nonce":"%s","rc":%d}' "$__kern_nonce" "$__kern_rc" >&4
done
