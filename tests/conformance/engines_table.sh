#!/usr/bin/env bash
# engines_table.sh: what container engines do with runc and with kern-oci, side by side.
#
#   sudo tests/conformance/engines_table.sh KERN_BIN CRICTL [--user NAME] [--only PARTS] [--out FILE]
#
#   KERN_BIN   a kern binary; it is run through a link named kern-oci made in the temp tree
#              (kern takes runc's command line under that name).
#   CRICTL     a crictl binary, or "-" to skip the CRI part.
#   --user     the unprivileged user for rootless podman (default kerntest; needs /etc/subuid
#              and /etc/subgid ranges).
#   --only     a comma list of parts: podman-root, podman-rootless, cri (default: all three).
#   --out      also write the table to FILE.
#
# Every action is run with the reference runtime (runc, found on PATH) and with kern-oci, in
# the same run, on the same image, and the results go in one markdown table
# (action | runc | kern-oci | note). The note column starts with "DIFFERS" when the two
# results differ in what matters for the action (timings are compared in coarse bands, the
# exact seconds are shown). Progress goes to stderr, the table to stdout.
#
# Parts:
#   podman-root      podman as root, storage/config/network config in the temp tree.
#   podman-rootless  podman as --user, with its own HOME and XDG dirs in the temp tree.
#   cri              a containerd of its own (config, root, state, socket in the temp tree)
#                    with the CRI plugin, two runtime handlers (runc, kern), a CNI bridge
#                    with portmap, a locally built pause image; driven by crictl.
#   docker           never measured: said in one SKIPPED line (no Docker engine runs here).
# A part whose tools are missing is left out with a "SKIPPED: <part>: <reason>" line.
#
# Nothing is downloaded. The busybox image is made from Debian's busybox-static by
# tests/support/build_images.py; the pause image is a few lines of C built with gcc -static
# (or busybox's sleep when gcc is missing).
#
# Needs: root, python3, podman + conmon + uidmap + slirp4netns (Debian 12: podman 4.3),
# containerd (1.6) + containernetworking-plugins (/usr/lib/cni), iptables, runc, gcc.
#
# Getting crictl (Debian 12 does not package it), offline with Debian's Go 1.19:
#   fetch https://github.com/kubernetes-sigs/cri-tools and check out tag v1.26.1 (its go.mod
#   says go 1.19 and it carries vendor/), then in that tree:
#     GOFLAGS=-mod=vendor GOPROXY=off go build -o /some/bin/crictl ./cmd/crictl
#   (v1.26.x speaks CRI v1, which containerd 1.6 serves.)
#
# Everything the script starts is removed on exit, also on error or Ctrl-C: podman containers
# and images (in the private storage), the rootless pause process, containerd, its shims, pods
# and containers, mounts under the temp tree, the CNI bridge and the cgroup parent it made,
# and the temp tree. Chains that the CNI plugins add to iptables' nat table
# (CNI-HOSTPORT-*, shared by every CNI user on the host) are left as the plugins leave them.
#
# Host notes (Debian 12 in a VM without CAP_SYS_RESOURCE): root podman's default ulimits
# (nofile 1048576, nproc 4194304) cannot be granted there, for runc as for kern-oci, so the
# private containers.conf sets them to what the host allows; the CRI plugin runs with
# restrict_oom_score_adj = true for the same reason (a pause container's -998 needs it).

set -o pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SUPPORT=$HERE/../support
PATH_CLEAN=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
IMG=localhost/kern-eng-busybox:latest
PAUSE_IMG=localhost/kern-eng-pause:latest
RUNTIMES="runc kern"

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
log() { echo "[engines $(date +%T)] $*" >&2; }

# ----------------------------------------------------------------------------------------------
# Arguments

[ $# -ge 2 ] || usage
KERN_ARG=$1 CRICTL=$2
shift 2
TEST_USER=kerntest ONLY="podman-root,podman-rootless,cri" OUT_FILE=""
while [ $# -gt 0 ]; do
	case $1 in
	--user) TEST_USER=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--out) OUT_FILE=$2; shift 2 ;;
	*) usage ;;
	esac
done
wanted() { case ",$ONLY," in *",$1,"*) return 0 ;; esac; return 1; }

[ "$(id -u)" = 0 ] || { echo "engines_table.sh: run as root (root podman, containerd, runuser)" >&2; exit 2; }
KERN=$(readlink -f "$KERN_ARG") && [ -x "$KERN" ] || { echo "engines_table.sh: not executable: $KERN_ARG" >&2; exit 2; }
RUNC=$(command -v runc) || { echo "engines_table.sh: runc (the reference) not found" >&2; exit 2; }
command -v python3 >/dev/null || { echo "engines_table.sh: python3 not found" >&2; exit 2; }

# ----------------------------------------------------------------------------------------------
# The results: one row per action, a cell per runtime. put ACTION RUNTIME SHOWN [KEY]: SHOWN is
# the cell's text, KEY what the two runtimes are compared by (SHOWN when not given).

declare -A RES KEY NOTE SEEN
ORDER=()
SKIPS=()

put() {
	local action=$1 rt=$2 shown=$3 key=${4-$3}
	if [ -z "${SEEN[$action]}" ]; then SEEN[$action]=1; ORDER+=("$action"); fi
	RES[$action|$rt]=$shown
	KEY[$action|$rt]=$key
	log "  $rt | $action | $shown"
}
note() { NOTE[$1]=$2; }
skip() { SKIPS+=("SKIPPED: $1: $2"); echo "SKIPPED: $1: $2" >&2; }

# One line, no table-breaking pipes, bounded length.
cell() { printf '%s' "$1" | tr '\n\t' '  ' | sed 's/|/\\|/g; s/  */ /g; s/^ //; s/ $//' | cut -c1-220; }

# Seconds since a start taken with now, one decimal; band: a coarse class for comparing.
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
band() { awk -v s="$1" 'BEGIN { if (s < 1.5) print "<1.5s"; else if (s < 5) print "1.5-5s"; else if (s < 15) print "5-15s"; else print ">=15s" }'; }

# ----------------------------------------------------------------------------------------------
# The private tree, the kern-oci link and the images

T=$(mktemp -d /tmp/kern-engines.XXXXXX) || exit 2
chmod 755 "$T"
mkdir -m 755 "$T/bin"
ln -s "$KERN" "$T/bin/kern-oci"
declare -A RTP=([runc]=$RUNC [kern]=$T/bin/kern-oci)

CONTAINERD_PID=""
PODMAN_ROOT_USED="" PODMAN_RL_USED=""
BR_PODMAN_BEFORE=$(ip -o link show cni-podman0 2>/dev/null | wc -l)
HOSTLOCAL_PODMAN_BEFORE=$([ -e /var/lib/cni/networks/podman ] && echo 1 || echo 0)

# The image: busybox-static as one layer, tagged $IMG, cmd /bin/sh. Its config gets a history
# entry per layer: podman build (buildah) refuses to commit a second RUN step on a base image
# without one ("history lists 2 non-empty layers, but we have 3 layers on disk").
python3 - "$SUPPORT" "$T/busybox.tar" "$IMG" <<'EOF' || { echo "engines_table.sh: building the image failed" >&2; rm -rf "$T"; exit 2; }
import json, sys
sys.path.insert(0, sys.argv[1])
import build_images
plain = build_images.image_config
def with_history(diff_ids, **kw):
    cfg = json.loads(plain(diff_ids, **kw))
    cfg["history"] = [{"created": cfg["created"], "created_by": "engines_table.sh: busybox-static"} for _ in diff_ids]
    return json.dumps(cfg, sort_keys=True).encode()
build_images.image_config = with_history
build_images.write_docker_archive(sys.argv[2], [build_images.busybox_layer()], [sys.argv[3]], cmd=["/bin/sh"])
EOF
chmod 644 "$T/busybox.tar"

# ----------------------------------------------------------------------------------------------
# Cleanup, on every exit

umount_under() {
	local top=$1 m
	awk -v t="$top/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | awk '{ print length, $0 }' |
		sort -rn | cut -d' ' -f2- | while read -r m; do umount -l "$m" 2>/dev/null; done
}

# The container entries under a runtime's state root that belong to this run: their files name
# the temp tree (bundle and rootfs paths are in it).
our_state() {
	local e
	for e in "$1"/*; do
		[ -d "$e" ] && grep -rqsF "$T/" "$e" && basename "$e"
	done
}

pids_matching() { # pids whose command line contains the fixed string $1 (not this shell's)
	local p
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" = $$ ] && continue
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "$1" && echo "$p"
	done
}

cleanup() {
	trap - EXIT INT TERM
	log "cleaning up"
	if [ -n "$PODMAN_ROOT_USED" ]; then
		pod_root rm -af -t 0 >/dev/null 2>&1
		pod_root rmi -af >/dev/null 2>&1
	fi
	if [ -n "$PODMAN_RL_USED" ]; then
		pod_rl rm -af -t 0 >/dev/null 2>&1
		pod_rl rmi -af >/dev/null 2>&1
		local pp
		pp=$(cat "$T/rl/run/libpod/tmp/pause.pid" 2>/dev/null) && [ -n "$pp" ] && kill -9 "$pp" 2>/dev/null
	fi
	if [ -n "$CONTAINERD_PID" ]; then
		cri rmp -af >/dev/null 2>&1
		kill "$CONTAINERD_PID" 2>/dev/null
		local i
		for i in $(seq 100); do kill -0 "$CONTAINERD_PID" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$CONTAINERD_PID" 2>/dev/null
		# Shims (and their children) of this containerd: they name its socket.
		for i in $(pids_matching "$T/cri/c.sock"); do kill -9 "$i" 2>/dev/null; done
		ip link del kernengcri0 2>/dev/null
	fi
	# Containers of ours whose runtime state outlived them (reported in the table already).
	local d id
	for d in /run/kern-oci /run/runc "$T/rl/run/kern-oci" "$T/rl/run/runc"; do
		for id in $(our_state "$d"); do
			case $d in
			*kern-oci) "$T/bin/kern-oci" --root "$d" delete --force "$id" ;;
			*) "$RUNC" --root "$d" delete --force "$id" ;;
			esac >/dev/null 2>&1
		done
	done
	umount_under "$T"
	for d in /sys/fs/cgroup/*/kern-eng-cri /sys/fs/cgroup/unified/kern-eng-cri; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	[ "$BR_PODMAN_BEFORE" = 0 ] && ip link del cni-podman0 2>/dev/null
	[ "$HOSTLOCAL_PODMAN_BEFORE" = 0 ] && rm -rf /var/lib/cni/networks/podman
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ----------------------------------------------------------------------------------------------
# Running things

# runs ARGV (a command or one of this script's functions, which bound their time themselves);
# sets RC, OUT (stdout), ERR (stderr), SECS.
runx() {
	local t0
	t0=$(now)
	OUT=$("$@" 2>"$T/stderr")
	RC=$?
	ERR=$(cat "$T/stderr")
	SECS=$(since "$t0")
}

# ARGV on a fresh pty that is its controlling terminal (as from an interactive shell); prints
# what it wrote there and exits with its exit code.
pty_run() {
	python3 -c '
import os, pty, select, signal, sys, time
pid, fd = pty.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
out, end = b"", time.monotonic() + 90
while time.monotonic() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
else:
    os.kill(pid, signal.SIGKILL)
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace").replace("\r", ""))
sys.exit(os.waitstatus_to_exitcode(st) & 255)
' "$@"
}

# ----------------------------------------------------------------------------------------------
# podman

PODMAN_ROOT_CMD=() PODMAN_RL_CMD=()

setup_podman_root() {
	local d=$T/root
	mkdir -p "$d/conf" "$d/run" "$d/data" "$d/net" "$d/tmp"
	# Ulimits the host can grant (see the header); podman lowers its own nproc to 32768 first.
	local nofile nproc
	nofile=$(ulimit -Hn)
	nproc=$(ulimit -Hu)
	[ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
	cat >"$d/conf/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$d/tmp"
runtime_supports_json = ["crun", "runc", "kata", "runsc", "krun", "kern-oci"]
[network]
network_config_dir = "$d/net"
EOF
	cat >"$d/conf/storage.conf" <<EOF
[storage]
driver = "overlay"
runroot = "$d/run"
graphroot = "$d/data"
EOF
	PODMAN_ROOT_CMD=(env -i "PATH=$PATH_CLEAN" TERM=xterm HOME=/root "TMPDIR=$d/tmp"
		"CONTAINERS_CONF=$d/conf/containers.conf" "CONTAINERS_STORAGE_CONF=$d/conf/storage.conf" podman)
	PODMAN_ROOT_USED=1
}

setup_podman_rootless() {
	local d=$T/rl
	mkdir -p "$d/home" "$d/run" "$d/conf/containers" "$d/data" "$d/tmp"
	cat >"$d/conf/containers/containers.conf" <<EOF
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime_supports_json = ["crun", "runc", "kata", "runsc", "krun", "kern-oci"]
EOF
	cat >"$d/conf/containers/storage.conf" <<EOF
[storage]
driver = "vfs"
runroot = "$d/run/containers"
graphroot = "$d/data/containers/storage"
EOF
	chown -R "$TEST_USER:" "$d"
	chmod 700 "$d/run"
	PODMAN_RL_CMD=(runuser -u "$TEST_USER" -- env -i "PATH=$PATH_CLEAN" TERM=xterm "HOME=$d/home"
		"TMPDIR=$d/tmp" "XDG_RUNTIME_DIR=$d/run" "XDG_CONFIG_HOME=$d/conf" "XDG_DATA_HOME=$d/data" podman)
	PODMAN_RL_USED=1
}

pod_root() { timeout -k 5 150 "${PODMAN_ROOT_CMD[@]}" "$@"; }
pod_rl() { timeout -k 5 150 "${PODMAN_RL_CMD[@]}" "$@"; }

# The mode being measured: P runs podman of that mode, PR podman with the runtime $rt.
MODE=""
P() { if [ "$MODE" = root ]; then pod_root "$@"; else pod_rl "$@"; fi; }
PR() { P --runtime "${RTP[$rt]}" "$@"; }

wait_log() { # NAME NEEDLE: up to 20 s for NEEDLE in podman logs NAME
	local i
	for i in $(seq 100); do
		P logs "$1" 2>&1 | grep -q -- "$2" && return 0
		sleep 0.2
	done
	return 1
}

# Records the container's id (for the cleanup of runtime state) and removes it.
prm() {
	P inspect --format '{{.Id}}' "$1" >>"$T/ids" 2>/dev/null
	P rm -f -t 0 "$1" >/dev/null 2>&1
}

# One podman mode, one runtime: every action, put under "podman $MODE: ...".
podman_suite() {
	rt=$1
	local A="podman $MODE:" n out code t0 s k logs got missing sig

	runx PR run --rm "$IMG" true
	put "$A run --rm true" "$rt" "rc=$RC (${SECS}s)$( [ $RC = 0 ] || echo "; $(cell "$ERR")")" "rc=$RC"

	runx PR run --rm "$IMG" sh -c 'exit 3'
	put "$A run --rm sh -c 'exit 3'" "$rt" "rc=$RC"

	runx PR run --rm "$IMG" /no-such-command
	put "$A run of a missing command" "$rt" "rc=$RC" "rc=$RC"

	# -it under a pty: the container's stdin is a terminal, TERM passes, the exit code comes back.
	if [ "$MODE" = root ]; then out=$(pty_run "${PODMAN_ROOT_CMD[@]}" --runtime "${RTP[$rt]}" run --rm -it "$IMG" sh -c 'tty; echo term=$TERM; exit 5')
	else out=$(pty_run "${PODMAN_RL_CMD[@]}" --runtime "${RTP[$rt]}" run --rm -it "$IMG" sh -c 'tty; echo term=$TERM; exit 5'); fi
	code=$?
	k="rc=$code tty=$(echo "$out" | grep -o '^/dev/pts/[0-9]*' | sed 's/[0-9]*$/N/' | head -1) $(echo "$out" | grep -o 'term=[a-z]*' | head -1)"
	put "$A run --rm -it (pty): tty; exit 5" "$rt" "$k" "$k"

	n=ke-logs-$rt
	runx PR run -d --name $n "$IMG" sh -c 'echo out-line; echo err-line >&2; echo ready; sleep 1000'
	if [ $RC = 0 ] && wait_log $n ready; then
		logs=$(P logs $n 2>&1)
		k="run -d rc=0; logs: $(echo "$logs" | grep -c out-line) out, $(echo "$logs" | grep -c err-line) err line"
	else k="run -d rc=$RC $(cell "$ERR")"; fi
	put "$A run -d + logs (stdout and stderr)" "$rt" "$k"
	prm $n

	n=ke-exec-$rt
	PR run -d --name $n "$IMG" sh -c 'echo inside > /tmp/flag; echo ready; while :; do sleep 0.1; done' >/dev/null 2>&1
	wait_log $n ready
	runx P exec $n sh -c 'cat /tmp/flag; exit 4'
	put "$A exec: cat a file; exit 4" "$rt" "rc=$RC out=$OUT"
	prm $n

	# stop of a pid-1 sleep: SIGTERM is ignored by the kernel for a pid 1 without a handler,
	# so runc's container ends with podman's SIGKILL after --time.
	n=ke-stop-$rt
	PR run -d --name $n "$IMG" sleep 1000 >/dev/null 2>&1
	sleep 0.5
	runx P stop --time 2 $n
	code=$(P inspect --format '{{.State.ExitCode}}' $n 2>/dev/null)
	put "$A stop --time 2 of 'sleep 1000'" "$rt" "stop rc=$RC after ${SECS}s; exit code $code" "rc=$RC $(band "$SECS") code=$code"
	prm $n

	n=ke-trap-$rt
	PR run -d --name $n "$IMG" sh -c 'trap "echo got-term; exit 0" TERM; echo ready; while :; do sleep 0.1; done' >/dev/null 2>&1
	wait_log $n ready
	runx P stop --time 10 $n
	code=$(P inspect --format '{{.State.ExitCode}}' $n 2>/dev/null)
	got=$(P logs $n 2>&1 | grep -c got-term)
	put "$A stop of a shell that traps TERM (exit 0)" "$rt" "stop rc=$RC after ${SECS}s; exit code $code; trap ran: $got" \
		"rc=$RC $(band "$SECS") code=$code trap=$got"
	prm $n

	# kill: a shell traps ten signals and logs each; then KILL.
	n=ke-kill-$rt
	local sigs="USR1 HUP INT TERM QUIT WINCH USR2 ALRM PIPE CONT"
	PR run -d --name $n "$IMG" sh -c "for s in $sigs; do trap \"echo got-\$s\" \$s; done; echo ready; while :; do sleep 0.1; done" >/dev/null 2>&1
	wait_log $n ready
	for sig in $sigs; do P kill --signal $sig $n >/dev/null 2>&1; sleep 0.3; done
	sleep 1
	logs=$(P logs $n 2>&1)
	got=0 missing=""
	for sig in $sigs; do
		if echo "$logs" | grep -qx "got-$sig"; then got=$((got + 1)); else missing="$missing $sig"; fi
	done
	P kill --signal KILL $n >/dev/null 2>&1
	code=$(P wait $n 2>/dev/null)
	put "$A kill -s USR1,HUP,INT,TERM,QUIT,WINCH,USR2,ALRM,PIPE,CONT (trapped), then KILL" "$rt" \
		"$got/10 reached the trap${missing:+ (missing:$missing)}; KILL: exit code $code"
	prm $n

	# What pid 1 is: podman top, and /proc/1/cmdline from inside.
	n=ke-top-$rt
	PR run -d --name $n "$IMG" sleep 1000 >/dev/null 2>&1
	sleep 0.5
	runx P top $n pid comm
	out=$(echo "$OUT" | awk 'NR > 1 { printf "%s%s=%s", sep, $1, $2; sep = " " }')
	k="top rc=$RC: $out"
	runx P exec $n sh -c 'tr "\0" " " </proc/1/cmdline'
	put "$A top / pid 1 of 'sleep 1000'" "$rt" "$k; /proc/1/cmdline: $(cell "$OUT" | cut -c1-60)"
	prm $n

	runx PR run --rm --tmpfs /t "$IMG" sh -c 'grep " /t " /proc/mounts | cut -d" " -f3,4; touch /t/x && echo write-ok'
	put "$A --tmpfs /t" "$rt" "rc=$RC $(cell "$OUT")" "rc=$RC $(echo "$OUT" | grep -o 'write-ok\|^tmpfs')"
	runx PR run --rm --mount type=tmpfs,dst=/t "$IMG" sh -c 'grep " /t " /proc/mounts | cut -d" " -f3,4; touch /t/x && echo write-ok'
	put "$A --mount type=tmpfs,dst=/t" "$rt" "rc=$RC $(cell "$OUT")" "rc=$RC $(echo "$OUT" | grep -o 'write-ok\|^tmpfs')"

	runx PR run --rm --read-only "$IMG" sh -c 'touch /x 2>/dev/null && echo root-writable || echo root-ro; touch /tmp/y && echo tmp-ok'
	put "$A --read-only (/ refused, /tmp writable)" "$rt" "rc=$RC $(cell "$OUT")"

	runx PR run --rm --device /dev/null:/dev/xnull "$IMG" sh -c 'ls -l /dev/xnull | cut -c1-10; echo x >/dev/xnull && echo write-ok || echo write-refused'
	put "$A --device /dev/null:/dev/xnull" "$rt" "rc=$RC $(cell "$OUT")$( [ $RC = 0 ] || echo " $(cell "$ERR")")"
	runx PR run --rm --device /dev/null:/dev/xnull:r "$IMG" sh -c 'ls -l /dev/xnull | cut -c1-10; echo x >/dev/xnull && echo write-ok || echo write-refused'
	put "$A --device /dev/null:/dev/xnull:r (write must fail)" "$rt" "rc=$RC $(cell "$OUT")$( [ $RC = 0 ] || echo " $(cell "$ERR")")"
	# /dev/null (1:3) is in every engine's default device allowlist, so ':r' cannot refuse a
	# write to it through the devices cgroup. /dev/cpu_dma_latency (10:259) is not: a write
	# there (a latency request that ends with the open file) shows what ':r' does.
	if [ -c /dev/cpu_dma_latency ]; then
		runx PR run --rm --device /dev/cpu_dma_latency:/dev/xlat "$IMG" sh -c 'echo 1000000 >/dev/xlat && echo write-ok || echo write-refused'
		put "$A --device /dev/cpu_dma_latency:/dev/xlat (not in the default allowlist)" "$rt" "rc=$RC $(cell "$OUT")$( [ $RC = 0 ] || echo " $(cell "$ERR")")"
		runx PR run --rm --device /dev/cpu_dma_latency:/dev/xlat:r "$IMG" sh -c 'echo 1000000 >/dev/xlat && echo write-ok || echo write-refused'
		put "$A --device /dev/cpu_dma_latency:/dev/xlat:r (write must fail)" "$rt" "rc=$RC $(cell "$OUT")$( [ $RC = 0 ] || echo " $(cell "$ERR")")"
	fi

	runx PR run --rm --privileged "$IMG" sh -c 'grep CapEff /proc/self/status | cut -f2; echo devs=$(ls /dev | wc -l); mkdir -p /mnt && mount -t tmpfs none /mnt && echo mount-ok'
	put "$A --privileged (CapEff, /dev entries, mount)" "$rt" "rc=$RC $(cell "$OUT")" "rc=$RC $(echo "$OUT" | grep -v devs=)"

	n=ke-timeout-$rt
	runx PR run --rm --name $n --timeout 3 "$IMG" sleep 100
	s=$SECS code=$RC
	sleep 1
	k=$(pids_matching "-n $n " | wc -l)
	put "$A run --timeout 3 sleep 100" "$rt" "rc=$code after ${s}s; conmon left: $k" "rc=$code $(band "$s") conmon=$k"
	prm $n

	runx PR run --rm -m 64m "$IMG" sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max'
	put "$A -m 64m (limit read inside)" "$rt" "rc=$RC $(cell "$OUT")$(echo "$ERR" | grep -q 'not supported' && echo ' (podman: limits ignored on cgroup v1 rootless)')"

	# A child shell forks 40 background sleeps and dies at its first refused fork (a
	# non-interactive sh exits on "can't fork"); the count it reached is read back with builtins.
	runx PR run --rm --pids-limit 20 "$IMG" sh -c 'cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max 2>/dev/null || echo no-pids.max; sh -c "i=0; while [ \$i -lt 40 ]; do sleep 30 & i=\$((i+1)); echo \$i >/tmp/n; done" 2>/dev/null; read n </tmp/n; echo "forked=$n of 40"'
	put "$A --pids-limit 20 (pids.max; 40 background forks)" "$rt" "rc=$RC after ${SECS}s: $(cell "$OUT")" "rc=$RC $(band "$SECS") $(cell "$OUT")"

	# The cgroup mount as the container sees it: which hierarchies, how many cgroups below its
	# memory directory (the container's own cgroup has none; the host's root has many), and
	# whether it can make one there.
	runx PR run --rm "$IMG" sh -c 'ls /sys/fs/cgroup | tr "\n" " "; echo "; memory/ subdirs: $(find /sys/fs/cgroup/memory/ -mindepth 1 -maxdepth 1 -type d | wc -l)"; mkdir /sys/fs/cgroup/memory/kern-eng-probe 2>/dev/null && rmdir /sys/fs/cgroup/memory/kern-eng-probe && echo "; mkdir: allowed" || echo "; mkdir: refused"'
	put "$A /sys/fs/cgroup inside: hierarchies; memory/ subdirs; mkdir there" "$rt" "rc=$RC $(cell "$OUT")"

	# podman build runs each RUN step with the OCI runtime given by --runtime (--no-cache: the
	# second runtime's build must not reuse the first one's steps).
	local b=$T/build-$MODE-$rt
	mkdir -p "$b"
	printf 'FROM %s\nRUN echo step-one > /one\nRUN cat /one > /two && echo step-two >> /two\n' "$IMG" >"$b/Containerfile"
	chmod -R a+rX "$b"
	runx PR build --no-cache --runtime "${RTP[$rt]}" -t localhost/kern-eng-built-$rt -f "$b/Containerfile" "$b"
	k="build rc=$RC (${SECS}s)"
	if [ $RC = 0 ]; then
		runx PR run --rm localhost/kern-eng-built-$rt cat /two
		k="$k; image's /two: $(cell "$OUT")"
	else k="$k; $(echo "$ERR" | grep -i error | tail -1 | cut -c1-150)"; fi
	put "$A build: FROM busybox + 2 RUN steps" "$rt" "$k" "$(echo "$k" | sed 's/ ([0-9.]*s)//')"
	P rmi -f localhost/kern-eng-built-$rt >/dev/null 2>&1

	n=ke-pause-$rt
	PR run -d --name $n "$IMG" sleep 1000 >/dev/null 2>&1
	sleep 0.5
	runx P pause $n
	k="pause rc=$RC"
	[ $RC = 0 ] || k="$k ($(echo "$ERR" | tail -1 | cut -c1-90))"
	k="$k, state $(P inspect --format '{{.State.Status}}' $n 2>/dev/null)"
	runx P unpause $n
	k="$k; unpause rc=$RC, state $(P inspect --format '{{.State.Status}}' $n 2>/dev/null)"
	put "$A pause / unpause" "$rt" "$k"

	runx P stats --no-stream --format '{{.MemUsage}} pids={{.PIDs}}' $n
	if [ $RC = 0 ]; then k="rc=0: $(cell "$OUT")"; else k="rc=$RC: $(echo "$ERR" | tail -1 | cut -c1-100)"; fi
	put "$A stats --no-stream (of a 'sleep 1000')" "$rt" "$k" "rc=$RC $(echo "$OUT" | grep -o 'pids=[0-9]*')"
	prm $n

	# Nothing left: podman's list, conmons, runtime state.
	local ids left=""
	[ -z "$(P ps -aq 2>/dev/null)" ] || left="$left podman-containers"
	for n in ke-logs ke-exec ke-stop ke-trap ke-kill ke-top ke-timeout ke-pause; do
		[ -n "$(pids_matching "-n $n-$rt ")" ] && left="$left conmon($n)"
	done
	if [ $MODE = root ]; then ids="/run/kern-oci /run/runc"; else ids="$T/rl/run/kern-oci $T/rl/run/runc"; fi
	for n in $ids; do
		for k in $(our_state "$n"); do left="$left state($n/${k:0:12})"; done
	done
	put "$A after all of the above: containers, conmon, runtime state left" "$rt" "${left:-none}"
}

part_podman() { # root|rootless
	MODE=$1
	local part=podman-$1 m
	for m in podman conmon; do
		command -v $m >/dev/null || [ -x /usr/libexec/podman/$m ] || { skip $part "$m not installed"; return; }
	done
	if [ "$MODE" = rootless ]; then
		for m in newuidmap slirp4netns runuser; do command -v $m >/dev/null || { skip $part "$m not installed"; return; }; done
		id "$TEST_USER" >/dev/null 2>&1 || { skip $part "user $TEST_USER does not exist"; return; }
		grep -q "^$TEST_USER:" /etc/subuid || { skip $part "$TEST_USER has no /etc/subuid range"; return; }
		setup_podman_rootless
	else
		setup_podman_root
	fi
	[ -c /dev/net/tun ] && [ "$(stat -c %a /dev/net/tun)" != 666 ] && chmod 0666 /dev/net/tun
	log "podman $MODE: loading the image"
	P load -i "$T/busybox.tar" >/dev/null 2>"$T/load.err" || { skip $part "podman load failed: $(cell "$(cat "$T/load.err")")"; return; }
	note "podman $MODE: stop --time 2 of 'sleep 1000'" "runc: a pid-1 sleep has no TERM handler, so podman's SIGKILL ends it after --time (137)"
	note "podman $MODE: --device /dev/null:/dev/xnull:r (write must fail)" "1:3 is in the default device allowlist (rwm): the devices cgroup cannot refuse it, for any runtime; the cpu_dma_latency rows test ':r'"
	note "podman $MODE: run --timeout 3 sleep 100" "conmon SIGKILLs the container's process group after 3 s; podman then reports 255"
	if [ "$MODE" = rootless ]; then
		note "podman $MODE: --device /dev/cpu_dma_latency:/dev/xlat (not in the default allowlist)" "rootless: the node is the host's (root 0600, nobody inside): file permissions refuse the write"
		note "podman $MODE: -m 64m (limit read inside)" "podman drops limits on cgroup v1 rootless (warning), whatever the runtime"
		note "podman $MODE: /sys/fs/cgroup inside: hierarchies; memory/ subdirs; mkdir there" "0 subdirs: the user's own cgroup is bound; more: the host's cgroup root is bound"
	fi
	for rt in $RUNTIMES; do
		log "podman $MODE with $rt"
		podman_suite "$rt"
	done
}

# ----------------------------------------------------------------------------------------------
# containerd's CRI plugin through crictl

CRI_T=""
cri() { timeout -k 5 120 "$CRICTL" --config "$CRI_T/crictl.yaml" "$@"; }
ctrk() { timeout -k 5 120 ctr --address "$CRI_T/c.sock" --namespace k8s.io "$@"; }

setup_cri() {
	CRI_T=$T/cri
	mkdir -p "$CRI_T/net.d" "$CRI_T/ipam" "$CRI_T/logs"
	cat >"$CRI_T/config.toml" <<EOF
version = 2
root = "$CRI_T/root"
state = "$CRI_T/state"
[grpc]
  address = "$CRI_T/c.sock"
[ttrpc]
  address = "$CRI_T/c.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CRI_T/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMG"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$RUNC"
        Root = "$CRI_T/state-runc"
        SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kern]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kern.options]
        BinaryName = "$T/bin/kern-oci"
        Root = "$CRI_T/state-kern"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CRI_T/net.d"
    max_conf_num = 1
EOF
	# A bridge with host-local addresses (kept in the tree) and portmap for hostPort.
	cat >"$CRI_T/net.d/10-kern-eng.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "kern-eng-cri", "plugins": [
 {"type": "bridge", "bridge": "kernengcri0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
  "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.213.0.0/24"}]], "dataDir": "$CRI_T/ipam"}},
 {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
	printf 'runtime-endpoint: unix://%s/c.sock\nimage-endpoint: unix://%s/c.sock\ntimeout: 60\n' "$CRI_T" "$CRI_T" >"$CRI_T/crictl.yaml"

	# The sandbox image: a static pause (stays until TERM/INT, reaps children).
	if command -v gcc >/dev/null; then
		cat >"$CRI_T/pause.c" <<'EOF'
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void quit(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
	signal(SIGINT, quit);
	signal(SIGTERM, quit);
	signal(SIGCHLD, reap);
	for (;;) pause();
}
EOF
		gcc -static -Os -s -o "$CRI_T/pause" "$CRI_T/pause.c" || return 1
	fi
	python3 - "$SUPPORT" "$CRI_T/pause.tar" "$PAUSE_IMG" "$CRI_T/pause" <<'EOF' || return 1
import os, sys
sys.path.insert(0, sys.argv[1])
import build_images as b
if os.path.exists(sys.argv[4]):
    with open(sys.argv[4], "rb") as f:
        layer = b.Layer().file("pause", f.read(), 0o755).bytes()
    b.write_docker_archive(sys.argv[2], [layer], [sys.argv[3]], cmd=["/pause"])
else:  # no gcc: busybox's sleep stands in
    b.write_docker_archive(sys.argv[2], [b.busybox_layer()], [sys.argv[3]], cmd=["/bin/sleep", "2147483647"])
EOF
	setsid containerd --config "$CRI_T/config.toml" >"$CRI_T/containerd.log" 2>&1 </dev/null &
	CONTAINERD_PID=$!
	local i
	for i in $(seq 150); do
		ctr --address "$CRI_T/c.sock" version >/dev/null 2>&1 && break
		kill -0 $CONTAINERD_PID 2>/dev/null || break
		sleep 0.2
	done
	ctr --address "$CRI_T/c.sock" version >/dev/null 2>&1 || return 1
	ctrk images import "$CRI_T/pause.tar" >/dev/null 2>&1 || return 1
	ctrk images import "$T/busybox.tar" >/dev/null 2>&1 || return 1
	cri info >/dev/null 2>&1 || return 1
}

# Where a process's cgroups are, per hierarchy line of /proc/PID/cgroup, that contain ID.
cgroup_count() { local n; n=$(grep -c "$2" "/proc/$1/cgroup" 2>/dev/null); echo "${n:-0}"; }
cgroup_dirs_of() { # ID: cgroup directories under the parent kern-eng-cri that name ID
	find /sys/fs/cgroup -maxdepth 3 -type d -path "*/kern-eng-cri/*$1*" 2>/dev/null
}

cri_suite() {
	rt=$1
	local A="cri:" port pod cid pid s k out podjson ctrjson sbpid left pname base
	case $rt in runc) port=18091 ;; *) port=18092 ;; esac
	pname=ke-$rt
	mkdir -p "$CRI_T/logs/$rt"
	podjson=$CRI_T/pod-$rt.json ctrjson=$CRI_T/ctr-$rt.json
	# The pod as kubelet makes it by default: its own pid namespace per container (CONTAINER),
	# a cgroupfs parent, a hostPort.
	cat >"$podjson" <<EOF
{"metadata": {"name": "$pname", "namespace": "default", "uid": "$pname-uid", "attempt": 0},
 "hostname": "$pname", "log_directory": "$CRI_T/logs/$rt",
 "port_mappings": [{"protocol": 0, "container_port": 80, "host_port": $port}],
 "linux": {"cgroup_parent": "/kern-eng-cri", "security_context": {"namespace_options": {"pid": 1}}}}
EOF
	cat >"$ctrjson" <<EOF
{"metadata": {"name": "web"}, "image": {"image": "$IMG"}, "log_path": "web.log",
 "command": ["sh", "-c", "mkdir -p /www && echo hello-$rt >/www/index.html && httpd -p 80 -h /www && exec sleep 1000"],
 "linux": {"security_context": {"namespace_options": {"pid": 1}}}}
EOF
	runx cri runp --runtime "$rt" "$podjson"
	pod=$OUT
	put "$A runp --runtime H (hostPort pod)" "$rt" "rc=$RC (${SECS}s)$( [ $RC = 0 ] || echo "; $(cell "$ERR" | cut -c1-150)")" "rc=$RC"
	[ $RC = 0 ] || return
	echo "$pod" >>"$T/ids"
	sbpid=$(cri inspectp "$pod" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["info"]["pid"])' 2>/dev/null)

	runx cri create "$pod" "$ctrjson" "$podjson"
	cid=$OUT
	k="create rc=$RC"
	if [ $RC = 0 ]; then
		echo "$cid" >>"$T/ids"
		runx cri start "$cid"
		k="$k, start rc=$RC"
	fi
	[ $RC = 0 ] || k="$k; $(cell "$ERR" | cut -c1-150)"
	put "$A create + start a container in it" "$rt" "$k"
	sleep 1

	out=""
	for s in 1 2 3 4 5; do out=$(wget -qO- -T 2 "http://127.0.0.1:$port/" 2>/dev/null) && break; sleep 0.5; done
	put "$A hostPort (runc 18091, kern 18092) -> the container's httpd :80" "$rt" "$( [ -n "$out" ] && echo "served '$out'" || echo "no answer")" \
		"$( [ -n "$out" ] && echo served || echo no-answer)"

	runx cri exec "$cid" sh -c 'tr "\0" " " </proc/1/cmdline'
	k="rc=$RC, /proc/1/cmdline: $(cell "$OUT" | cut -c1-60)"
	runx cri exec "$cid" sh -c 'exit 7'
	put "$A exec (pid 1 as seen inside; exit 7)" "$rt" "$k; 'exit 7' -> crictl rc=$RC"

	pid=$(cri inspect "$cid" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["info"]["pid"])' 2>/dev/null)
	k="pid=$pid ($(tr '\0' ' ' 2>/dev/null </proc/$pid/cmdline | cut -c1-40)); state $(cri inspect -o go-template --template '{{.status.state}}' "$cid" 2>/dev/null)"
	put "$A inspect: the container's pid is" "$rt" "$k" "$(tr '\0' ' ' 2>/dev/null </proc/$pid/cmdline | cut -d' ' -f1)"
	put "$A cgroups (cgroupfs driver, v1 hybrid): /proc/PID/cgroup lines naming the container" "$rt" \
		"$(cgroup_count "$pid" "kern-eng-cri/$cid") of $(grep -c . /proc/$pid/cgroup 2>/dev/null)"

	runx cri stats -o json --id "$cid"
	k=$(echo "$OUT" | python3 -c '
import json, sys
s = json.load(sys.stdin)["stats"][0]
print("cpu=%sns mem=%sB" % (s["cpu"]["usageCoreNanoSeconds"]["value"], s["memory"]["workingSetBytes"]["value"]))' 2>/dev/null)
	put "$A stats" "$rt" "rc=$RC ${k:-no numbers}" "rc=$RC $(echo "$k" | sed 's/=0[a-zA-Z]*/=zero/g; s/=[1-9][0-9]*/=n/g')"

	runx cri stop --timeout 3 "$cid"
	s=$SECS
	k=$(cri inspect -o go-template --template '{{.status.exitCode}} {{.status.reason}}' "$cid" 2>/dev/null)
	put "$A stop --timeout 3 (pid-1 'sleep 1000')" "$rt" "rc=$RC after ${s}s; exit code/reason: $k" "rc=$RC $(band "$s") $k"

	runx cri stopp "$pod"
	k="stopp rc=$RC"
	runx cri rmp "$pod"
	put "$A stopp + rmp" "$rt" "$k, rmp rc=$RC"
	sleep 1

	left=""
	iptables -t nat -S 2>/dev/null | grep -q -- "--dport $port " && left="$left iptables-rule"
	wget -qO- -T 2 "http://127.0.0.1:$port/" >/dev/null 2>&1 && left="$left port-answers"
	ss -ltnH "sport = :$port" 2>/dev/null | grep -q . && left="$left port-listened"
	[ -n "$pid" ] && [ -d /proc/$pid ] && left="$left container-process"
	[ -n "$sbpid" ] && [ -d /proc/$sbpid ] && left="$left sandbox-process"
	[ -n "$(pids_matching "hello-$rt")" ] && left="$left container-children"
	[ -n "$(cgroup_dirs_of "$cid")" ] && left="$left cgroup($cid)"
	[ -n "$(cgroup_dirs_of "$pod")" ] && left="$left cgroup(pod)"
	[ -n "$(ls "$CRI_T/state-$rt/k8s.io" 2>/dev/null)" ] && left="$left runtime-state($(ls "$CRI_T/state-$rt/k8s.io" | cut -c1-12 | tr '\n' ' '))"
	[ -n "$(pids_matching "-id $pod")" ] && left="$left shim"
	[ -n "$(ls -A "$CRI_T/state/io.containerd.runtime.v2.task/k8s.io" 2>/dev/null)" ] && left="$left task-dir"
	put "$A after rmp: port rule, processes, cgroups, runtime state, shim left" "$rt" "${left:-none}"

	# A pod whose containers share the sandbox's pid namespace (namespace_options.pid = POD):
	# the container's sh is not pid 1 and has two children; stop must end them all.
	pname=ke-shared-$rt
	case $rt in runc) base=7000 ;; *) base=7100 ;; esac
	cat >"$podjson" <<EOF
{"metadata": {"name": "$pname", "namespace": "default", "uid": "$pname-uid", "attempt": 0},
 "hostname": "$pname", "log_directory": "$CRI_T/logs/$rt",
 "linux": {"cgroup_parent": "/kern-eng-cri", "security_context": {"namespace_options": {"pid": 0}}}}
EOF
	cat >"$ctrjson" <<EOF
{"metadata": {"name": "shared"}, "image": {"image": "$IMG"}, "log_path": "shared.log",
 "command": ["sh", "-c", "sleep $((base + 1)) & sleep $((base + 2)) & exec sleep $((base + 3))"],
 "linux": {"security_context": {"namespace_options": {"pid": 0}}}}
EOF
	runx cri runp --runtime "$rt" "$podjson"
	pod=$OUT
	[ $RC = 0 ] || { put "$A pid=POD pod: runp" "$rt" "rc=$RC $(cell "$ERR" | cut -c1-150)"; return; }
	echo "$pod" >>"$T/ids"
	cid=$(cri create "$pod" "$ctrjson" "$podjson" 2>/dev/null) && cri start "$cid" >/dev/null 2>&1
	echo "$cid" >>"$T/ids"
	sleep 1
	runx cri exec "$cid" sh -c 'echo "pid1=$(tr "\0" " " </proc/1/cmdline)"; ps -o comm | grep -c "^sleep" | sed "s/^/sleeps=/"'
	pid=$(cri inspect "$cid" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["info"]["pid"])' 2>/dev/null)
	sbpid=$(cri inspectp "$pod" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["info"]["pid"])' 2>/dev/null)
	# From the host: is the container's process in the sandbox's pid namespace itself?
	if [ -n "$pid" ] && [ "$(readlink /proc/$pid/ns/pid)" = "$(readlink /proc/$sbpid/ns/pid 2>/dev/null)" ]; then k=yes; else k=no; fi
	put "$A pid=POD pod: pid 1 and processes seen by the container; its pid ns is the sandbox's" "$rt" \
		"rc=$RC $(cell "$OUT" | cut -c1-150); same pid ns as the pause: $k"
	# Left after stop: host processes in the container's pids cgroup, and the three sleeps.
	runx cri stop --timeout 3 "$cid"
	s=$SECS
	k=$(cri inspect -o go-template --template '{{.status.exitCode}} {{.status.reason}}' "$cid" 2>/dev/null)
	sleep 0.5
	left=$(for d in $(cgroup_dirs_of "$cid" | grep '/pids/'); do cat "$d/cgroup.procs"; done 2>/dev/null | wc -l)
	left="$left in its cgroup, $(for k in 1 2 3; do pids_matching "sleep $((base + k))"; done | wc -l) of its 3 sleeps"
	put "$A pid=POD pod: stop --timeout 3 of the container" "$rt" "rc=$RC after ${s}s; exit code/reason: $k; processes left: $left" \
		"rc=$RC $(band "$s") $k left=$left"
	runx cri rmp -f "$pod"
	sleep 1
	left=""
	[ -n "$pid" ] && [ -d /proc/$pid ] && left="$left process"
	[ -n "$(cgroup_dirs_of "$cid")$(cgroup_dirs_of "$pod")" ] && left="$left cgroups"
	[ -n "$(ls "$CRI_T/state-$rt/k8s.io" 2>/dev/null)" ] && left="$left runtime-state"
	[ -n "$(pids_matching "-id $pod")" ] && left="$left shim"
	put "$A pid=POD pod: rmp -f, then left" "$rt" "rmp rc=$RC; left: ${left:-none}"
}

part_cri() {
	[ "$CRICTL" = - ] && { skip cri "no crictl given"; return; }
	[ -x "$CRICTL" ] || { skip cri "crictl not executable: $CRICTL (see the header for how to build it)"; return; }
	local m
	for m in containerd ctr containerd-shim-runc-v2 iptables wget; do
		command -v $m >/dev/null || { skip cri "$m not installed"; return; }
	done
	[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/portmap ] && [ -x /usr/lib/cni/host-local ] ||
		{ skip cri "CNI plugins not in /usr/lib/cni (containernetworking-plugins)"; return; }
	log "cri: starting a private containerd"
	if ! setup_cri; then
		skip cri "containerd/CRI setup failed: $(tail -3 "$CRI_T/containerd.log" 2>/dev/null | cell "$(cat)")"
		return
	fi
	note "cri: stop --timeout 3 (pid-1 'sleep 1000')" "runc: a pid-1 sleep ignores TERM, the shim's SIGKILL ends it after the timeout (137)"
	note "cri: after rmp: port rule, processes, cgroups, runtime state, shim left" "containerd does not listen on hostPorts (portmap's DNAT rules); the rule, processes, cgroups, state are checked"
	for rt in $RUNTIMES; do
		log "cri with $rt"
		cri_suite "$rt"
	done
}

# ----------------------------------------------------------------------------------------------
# Run and print

log "tree $T; kern-oci -> $KERN"
wanted podman-root && part_podman root
wanted podman-rootless && part_podman rootless
wanted cri && part_cri
if docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
	skip docker "a Docker engine answers, but this script does not drive it"
else
	skip docker "no Docker engine runs on this machine (the docker client exists, dockerd does not run here)"
fi

table() {
	local sha kv rv a r k n
	sha=$(sha256sum "$KERN" | cut -c1-12)
	kv=$("$T/bin/kern-oci" --version 2>/dev/null | head -2 | tr '\n' ' ')
	rv=$("$RUNC" --version 2>/dev/null | head -1)
	echo "# Container engines with runc and with kern-oci"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); host: $(uname -r), $(. /etc/os-release; echo "$PRETTY_NAME")"
	echo "- kern-oci: $KERN (sha256 $sha...; $kv)"
	echo "- runc: $RUNC ($rv)"
	echo "- podman $(podman --version 2>/dev/null | awk '{print $3}'), conmon $(conmon --version 2>/dev/null | head -1 | awk '{print $3}'), containerd $(containerd --version 2>/dev/null | awk '{print $3}'), crictl $([ -x "$CRICTL" ] && "$CRICTL" --version 2>/dev/null | awk '{print $3}')"
	echo "- cgroups: $(mount -t cgroup | wc -l) v1 hierarchies$(mount -t cgroup2 | awk '{ printf ", v2 at %s", $3 }')"
	echo
	for a in "${SKIPS[@]}"; do echo "$a"; echo; done
	echo "| action | runc | kern-oci | note |"
	echo "|---|---|---|---|"
	for a in "${ORDER[@]}"; do
		r=${RES[$a|runc]-not run} k=${RES[$a|kern]-not run} n=${NOTE[$a]}
		if [ "${KEY[$a|runc]-x}" != "${KEY[$a|kern]-y}" ]; then n="DIFFERS${n:+; $n}"; fi
		echo "| $(cell "$a") | $(cell "$r") | $(cell "$k") | $(cell "$n") |"
	done
	echo "| docker | not measured | not measured | no Docker engine runs on this machine (client only) |"
}
table | tee ${OUT_FILE:+"$OUT_FILE"}
