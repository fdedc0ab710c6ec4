#!/bin/bash
# runc_suite.sh RUNC_SRC [options]: run runc's own integration suite (tests/integration/*.bats in
# a checkout of opencontainers/runc, fetched by the caller, never part of this repository) against
# an OCI runtime, and print a table per test file.
#
#   RUNC_SRC             a runc source tree, checked out at the tag of the runc to compare with
#                        (Debian 12 ships 1.1.5: tag v1.1.5)
#   --runtime PATH       the runtime under test (default: runc from PATH). A kern binary is run
#                        through a link named kern-oci, as engines run it.
#   --rootless           run bats as an unprivileged user (the suite then skips what needs root),
#                        as runc's tests/rootless.sh does; --user names the user (default
#                        kerntest), whose /etc/subuid and /etc/subgid ranges become the suite's
#                        ROOTLESS_UIDMAP_*/ROOTLESS_GIDMAP_*.
#   --features LIST      rootless features as runc's rootless.sh names them, "+"-joined: idmap
#                        (newuidmap mappings, the default), cgroup (a cgroup the user may write,
#                        made here for the run and removed after), or "" for neither.
#   --out DIR            where the raw TAP per file and results.tsv go (default: a new directory
#                        under /tmp); results.tsv lines are FILE<TAB>TEST<TAB>RESULT.
#   --only "A.bats B.bats"   run only these files.
#   --test-timeout SECS  per test (bats' BATS_TEST_TIMEOUT, default 120);
#   --file-timeout SECS  per file (default 1500).
#
# Counting rule: a test passes when bats prints "ok" for it without "# skip"; it is skipped when
# bats prints "ok ... # skip"; it fails when bats prints "not ok" (timeouts included); a test
# declared in the file that bats never reported (the file timed out or bats died) is "notrun" and
# is counted with the failures. Totals are over every @test of the files run.
#
# bats runs under script(1), on a terminal, as runc's CI runs it. Two tests need the network
# whatever the runtime (spec.bats "spec validator" clones runtime-spec; mounts_sshfs.bats needs
# sshfs to localhost and skips without it).
#
# What is made here, offline: the two root file systems (make_images.sh, into the tree's
# testdata/, which get-images.sh then finds and does not download) and the suite's helpers
# under contrib/cmd (recvtty, sd-helper, seccompagent) built by Debian's Go from runc's vendor/.
# A helper that cannot be built is named on stderr; the tests that use it then fail as they
# would on any host without it.
set -euo pipefail
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
. "$here/common.sh"

src=${1:-}
[ -n "$src" ] && [ -d "$src/tests/integration" ] ||
	die "usage: runc_suite.sh RUNC_SRC [--runtime PATH] [--rootless [--user U] [--features F]] [--out DIR]
  (RUNC_SRC: a checkout of opencontainers/runc holding tests/integration)"
src=$(readlink -f "$src")
shift
runtime=runc rootless=0 user=kerntest features=idmap out="" only="" test_timeout=120 file_timeout=1500
while [ $# -gt 0 ]; do
	case $1 in
	--runtime) runtime=$2; shift 2 ;;
	--rootless) rootless=1; shift ;;
	--user) user=$2; shift 2 ;;
	--features) features=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--test-timeout) test_timeout=$2; shift 2 ;;
	--file-timeout) file_timeout=$2; shift 2 ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
done
[ "$(id -u)" = 0 ] || die "run as root: the suite's root half needs it, and --rootless switches to --user itself"
for tool in bats jq gawk script timeout runuser; do command -v $tool >/dev/null || die "$tool not found"; done
[ -n "$out" ] || out=$(mktemp -d /tmp/runc-suite.XXXXXX)
mkdir -p "$out/raw"
out=$(readlink -f "$out")
chmod a+rx "$out" "$out/raw"
runtime=$(runtime_link "$runtime" "$out")
chmod a+rX "$out"

# Images and helpers (idempotent: kept in the source tree between runs).
"$here/make_images.sh" "$src/tests/integration/testdata" >/dev/null
go_offline
# runc's Makefile builds with its BUILDTAGS (seccomp): without the tag seccompagent is a stub
# that says "Not supported" and every SCMP_ACT_NOTIFY test fails for any runtime.
for cmd in recvtty sd-helper seccompagent; do
	[ -x "$src/contrib/cmd/$cmd/$cmd" ] && [ "$src/contrib/cmd/$cmd/.built-with-tags" -nt "$src/contrib/cmd/$cmd/$cmd" ] && continue
	(cd "$src/contrib/cmd/$cmd" && go build -tags seccomp -o "$cmd" . && touch .built-with-tags) >"$out/build-$cmd.log" 2>&1 ||
		echo "kern conformance: $cmd could not be built (see $out/build-$cmd.log)" >&2
done
chmod -R a+rX "$src"

# A TMPDIR of the run's own: the suite keeps fixed names in it (BATS_TMPDIR/seccomp-agent.sock,
# seccompagent.pid), so two runs sharing /tmp kill each other's agent. Short, for socket paths.
run_tmp=$(mktemp -d /tmp/kc.XXXXXX)
chmod 1777 "$run_tmp"
env_run=(env PATH="$PATH" RUNC="$runtime" BATS_TEST_TIMEOUT="$test_timeout" TMPDIR="$run_tmp")
cg_made=()
if [ $rootless = 1 ]; then
	id "$user" >/dev/null || die "no user $user"
	uidmap=$(awk -F: -v u="$user" '$1 == u { print $2, $3; exit }' /etc/subuid)
	gidmap=$(awk -F: -v u="$user" '$1 == u { print $2, $3; exit }' /etc/subgid)
	env_run+=(HOME="$(getent passwd "$user" | cut -d: -f6)" ROOTLESS_FEATURES="$features")
	if [[ $features == *idmap* ]]; then
		[ -n "$uidmap" ] && [ -n "$gidmap" ] || die "$user has no /etc/subuid and /etc/subgid ranges"
		read -r us ul <<<"$uidmap"
		read -r gs gl <<<"$gidmap"
		# cwd.bats wants a directory owned by uid 1024 of the container (1000 maps to us).
		aux_dir=$(mktemp -d)
		chown "$((us - 1000 + 1024))" "$aux_dir"
		chmod a+rx "$aux_dir"
		env_run+=(ROOTLESS_UIDMAP_START="$us" ROOTLESS_UIDMAP_LENGTH="$ul"
			ROOTLESS_GIDMAP_START="$gs" ROOTLESS_GIDMAP_LENGTH="$gl" AUX_UID=1024 AUX_DIR="$aux_dir")
	fi
	if [[ $features == *cgroup* ]]; then
		# As rootless.sh: the suite's cgroup in every hierarchy, writable by the user's group.
		grp=$(id -gn "$user")
		for cg in $(cut -d: -f2 </proc/self/cgroup | sed -E 's/^name=//;s/,/\n/g' | sed '/^$/d'); do
			d=/sys/fs/cgroup/$cg/runc-cgroups-integration-test
			[ -d "/sys/fs/cgroup/$cg" ] || continue
			mkdir -p "$d" && cg_made+=("$d")
			chown "root:$grp" "$d" "$d/cgroup.procs" "$d/tasks" 2>/dev/null || true
			chmod g+rwx "$d" && chmod g+rw "$d/cgroup.procs" "$d/tasks" 2>/dev/null || true
			[ "$cg" = cpuset ] && chown "$user:$grp" "$d"/cpuset.{cpus,mems}
		done
	fi
	as_user=(runuser -u "$user" --)
else
	as_user=()
fi
# bats runs on a terminal of its own, as runc's CI runs it (under script(1)): the suite's
# bundles say "terminal": true and a runtime without --console-socket then uses its own stdio,
# which must be a terminal. Carriage returns the terminal adds are taken out again.
# events.bats's stream tests end with a bare `wait`, which waits for every job of the test's
# shell, bats' own per-test timeout timer among them: with BATS_TEST_TIMEOUT set they time out
# for every runtime (runc's own four, on this runner). That file runs without it; the watchdog
# below still ends what outlives the timeout.
run_bats() {
	local envs=("${env_run[@]}")
	[ "$1" = events.bats ] && envs=("${envs[@]/#BATS_TEST_TIMEOUT=*/BATS_TEST_TIMEOUT=}")
	script -qefc "$(printf '%q ' "${as_user[@]}" "${envs[@]}" timeout -k 10 "$file_timeout" bats -t "$1")" /dev/null | tr -d '\r'
}
# bats' own per-test timeout ends the test's shell but not a runtime blocked under it (runc 1.1.5
# blocks in seccomp-notify.bats's noNewPrivileges=false tests), nor a recvtty left behind by a
# failed test, which keeps bats' output open; bats then waits for ever. So, every 15 s: a process
# of the run's session (script(1) makes one per file, orphans included) that is not bats' own
# shell machinery and has lived longer than the per-test timeout is killed (SIGKILL); the test
# then fails, as it should. Kills are logged in watchdog.log.
watchdog() {
	local top=$1 script_pid session="" pid s age comm
	while kill -0 "$top" 2>/dev/null; do
		sleep 15 &
		wait $! || return 0
		if [ -z "$session" ]; then
			script_pid=$(pgrep -x script -P "$top" | head -1) || continue
			session=$(ps -o sid= --ppid "$script_pid" | head -1 | tr -d ' ')
			[ -n "$session" ] || continue
		fi
		ps -eo pid=,sid=,etimes=,comm= | while read -r pid s age comm; do
			[ "$s" = "$session" ] || continue
			case $comm in bash | bats* | script | timeout | runuser | env | tr | cat | sleep) continue ;; esac
			if [ "$age" -gt "$test_timeout" ]; then
				echo "watchdog: killed $comm ($pid) after ${age}s" >>"$out/watchdog.log"
				kill -9 "$pid" 2>/dev/null || true
			fi
		done
	done
}
cleanup() {
	local d
	for d in "${cg_made[@]}"; do rmdir "$d" 2>/dev/null || true; done
	[ -n "${aux_dir:-}" ] && rmdir "$aux_dir" 2>/dev/null || true
	rm -rf "$run_tmp" 2>/dev/null || true
}
trap cleanup EXIT

cd "$src/tests/integration"
files=$(if [ -n "$only" ]; then echo $only | tr ' ' '\n'; else ls *.bats; fi)
: >"$out/results.tsv"
{
	echo "runtime: $runtime ($("$runtime" --version 2>&1 | head -1))"
	echo "source: $src ($(git -C "$src" describe --tags 2>/dev/null || echo unknown))"
	echo "mode: $([ $rootless = 1 ] && echo "rootless as $user, features '$features'" || echo root)"
	echo "started: $(date -u +%FT%TZ)"
} >"$out/run.txt"
for f in $files; do
	tap=$out/raw/${f%.bats}.tap
	rc=0
	run_bats "$f" >"$tap" 2>&1 </dev/null &
	bats_pid=$!
	watchdog "$bats_pid" >/dev/null 2>&1 &
	watchdog_pid=$!
	wait "$bats_pid" || rc=$?
	kill "$watchdog_pid" 2>/dev/null || true
	echo "$f exit $rc" >>"$out/run.txt"
	# Reported tests, by the counting rule above.
	awk -v f="$f" '
		/^ok [0-9]+ / { sub(/^ok [0-9]+ /, ""); r = "pass"
			if (match($0, / # [sS][kK][iI][pP]/)) { $0 = substr($0, 1, RSTART - 1); r = "skip" }
			print f "\t" $0 "\t" r; next }
		/^not ok [0-9]+ / { sub(/^not ok [0-9]+ /, "")
			if (match($0, / # timeout after/)) $0 = substr($0, 1, RSTART - 1)
			print f "\t" $0 "\tfail" }' "$tap" >"$out/file.tsv"
	# Declared tests bats never reported.
	declared=$(sed -nE "s/^@test ['\"](.*)['\"] \{\$/\1/p" "$f")
	if [ "$(grep -c . <<<"$declared")" -gt "$(wc -l <"$out/file.tsv")" ]; then
		while IFS= read -r name; do
			cut -f2 "$out/file.tsv" | grep -qxF -- "$name" || printf '%s\t%s\tnotrun\n' "$f" "$name" >>"$out/file.tsv"
		done <<<"$declared"
	fi
	cat "$out/file.tsv" >>"$out/results.tsv"
	rm -f "$out/file.tsv"
done
echo "finished: $(date -u +%FT%TZ)" >>"$out/run.txt"
print_table "$out/results.tsv" | tee "$out/table.txt"
echo "results: $out/results.tsv"
