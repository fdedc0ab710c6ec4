#!/bin/bash
# runtime_tools.sh RT_SRC [options]: run the OCI runtime-tools validation programs
# (validation/*/*.go in a checkout of opencontainers/runtime-tools, fetched by the caller, never
# part of this repository) against an OCI runtime, as root, and print a table per program.
#
#   RT_SRC               a runtime-tools source tree. Its go.mod must accept the Go installed
#                        (Debian 12's Go 1.19: commit 260e151, March 2025, is the last whose
#                        vendor/ builds with it; later ones need Go 1.21's standard library)
#   --runtime PATH       the runtime under test (default: runc from PATH); a kern binary is run
#                        through a link named kern-oci.
#   --out DIR            raw TAP per program, results.tsv (one line per TAP test) and files.tsv
#                        (PROGRAM<TAB>(program)<TAB>pass|fail<TAB>details); default: a new directory under /tmp.
#   --only "a b"         run only these programs (names as in validation/, e.g. "hooks state").
#   --timeout SECS       per program (default 300).
#   --recount            count again from an earlier run's --out DIR (raw/ and run.txt), run nothing.
#
# Counting rule: a program (file) is clean when it exits 0, prints a TAP plan, reports as many
# tests as the plan says and none of them "not ok", and, when it ran no test at all ("1..0": the
# hooks programs), printed no "error" diagnostic; otherwise it failed (timeouts included).
# A TAP test line "ok N ... # SKIP" is a skip, "ok" otherwise a pass, "not ok" a failure; the
# per-test counts are given beside the file verdict, but the file verdict is the headline figure
# (it is what the programs' own harness, prove or tap, reports).
#
# Built here, offline, if missing: runtimetest and the validation programs, by the tree's
# Makefile with Debian's Go and the tree's vendor/. The programs unpack the tree's own
# rootfs-ARCH.tar.gz; nothing is downloaded.
set -euo pipefail
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
. "$here/common.sh"

src=${1:-}
[ -n "$src" ] && [ -d "$src/validation" ] ||
	die "usage: runtime_tools.sh RT_SRC [--runtime PATH] [--out DIR] [--only NAMES] [--timeout SECS]
  (RT_SRC: a checkout of opencontainers/runtime-tools holding validation/)"
src=$(readlink -f "$src")
shift
runtime=runc out="" only="" timeout=300 recount=0
while [ $# -gt 0 ]; do
	case $1 in
	--runtime) runtime=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--recount) recount=1; shift ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
done
# count NAME RC: the TAP lines of program NAME into results.tsv, its verdict into files.tsv.
count() {
	local name=$1 rc=$2 tap=$out/raw/$1.tap plan seen bad errs verdict=pass
	awk -v f="$name" '
		/^ok [0-9]+/ { r = "pass"; if (toupper($0) ~ / # SKIP/) r = "skip"; print f "\t" $0 "\t" r; next }
		/^not ok [0-9]+/ { print f "\t" $0 "\tfail" }' "$tap" >>"$out/results.tsv"
	plan=$(sed -nE 's/^1\.\.([0-9]+).*/\1/p' "$tap" | head -1)
	seen=$(grep -cE '^(not )?ok [0-9]+' "$tap" || true)
	bad=$(grep -cE '^not ok [0-9]+' "$tap" || true)
	errs=$(grep -cE '^ +"error":' "$tap" || true)
	[ "$rc" = 0 ] && [ -n "$plan" ] && [ "$plan" = "$seen" ] && [ "$bad" = 0 ] || verdict=fail
	[ "$seen" = 0 ] && [ "$errs" != 0 ] && verdict=fail
	printf '%s\t(program)\t%s\t%s\n' "$name" "$verdict" "exit $rc, plan ${plan:-none}, seen $seen, not ok $bad, error diagnostics $errs" >>"$out/files.tsv"
}

if [ $recount = 0 ]; then
	[ "$(id -u)" = 0 ] || die "run as root: the validation programs create containers as root"
	[ -n "$out" ] || out=$(mktemp -d /tmp/runtime-tools.XXXXXX)
	mkdir -p "$out/raw"
	out=$(readlink -f "$out")
	runtime=$(runtime_link "$runtime" "$out")

	cd "$src"
	go_offline
	progs=$(if [ -n "$only" ]; then for p in $only; do echo "validation/$p/$p.t"; done; else
		find validation -name '*.go' ! -path '*/util/*' | sed 's/\.go$/.t/' | sort; fi)
	missing=$(for p in runtimetest $progs; do [ -x "$p" ] || echo "$p"; done)
	if [ -n "$missing" ]; then
		make runtimetest $missing >"$out/build.log" 2>&1 || die "build failed, see $out/build.log"
	fi

	{
		echo "runtime: $runtime ($("$runtime" --version 2>&1 | head -1))"
		echo "source: $src ($(git -C "$src" describe --tags --always 2>/dev/null || echo unknown))"
		echo "started: $(date -u +%FT%TZ)"
	} >"$out/run.txt"
	for p in $progs; do
		name=$(basename "$p" .t)
		rc=0
		RUNTIME=$runtime timeout -k 10 "$timeout" "./$p" >"$out/raw/$name.tap" 2>"$out/raw/$name.err" </dev/null || rc=$?
		echo "$name exit $rc" >>"$out/run.txt"
	done
	echo "finished: $(date -u +%FT%TZ)" >>"$out/run.txt"
fi
[ -n "$out" ] && [ -f "$out/run.txt" ] || die "--recount needs --out DIR of an earlier run"
: >"$out/results.tsv"
: >"$out/files.tsv"
while read -r name word rc; do
	[ "$word" = exit ] && count "$name" "$rc"
done <"$out/run.txt"
{
	echo "Per TAP test:"
	print_table "$out/results.tsv"
	echo
	echo "Per program (clean = pass):"
	awk -F'\t' '{ printf "%-40s %-5s %s\n", $1, $3, $4; c[$3]++; n++ }
		END { printf "clean %d of %d programs\n", c["pass"], n }' "$out/files.tsv"
} | tee "$out/table.txt"
echo "results: $out/results.tsv $out/files.tsv"
