#!/bin/bash
# compare.sh REFERENCE.tsv CANDIDATE.tsv: from two results files of runc_suite.sh or
# runtime_tools.sh (FILE<TAB>TEST<TAB>RESULT lines; files.tsv for runtime-tools programs), list
# the tests REFERENCE passes and CANDIDATE does not (what CANDIDATE must still do), then those
# CANDIDATE passes and REFERENCE does not, then both totals. Tests are matched by file and name;
# for runtime-tools' results.tsv the name is the TAP line, so use files.tsv to compare programs
# whose test numbering differs between runtimes.
#
# With --why, each test of the first list is followed by the first line of the candidate's raw
# output (raw/FILE.tap of runc_suite.sh, beside CANDIDATE.tsv) that names an error or a failed
# check, to sort the failures by cause.
set -euo pipefail
why=0
[ "${1:-}" = --why ] && { why=1; shift; }
[ $# = 2 ] && [ -f "$1" ] && [ -f "$2" ] ||
	{ echo "kern conformance: error: usage: compare.sh REFERENCE.tsv CANDIDATE.tsv" >&2; exit 2; }
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
awk -F'\t' -v ref="$1" -v cand="$2" -v why=$why -v here="$here" -v dir="$(dirname "$2")/raw" '
	FILENAME == ref { k = $1 "\t" $2; a[k] = $3; if (!(k in seen)) { seen[k] = 1; order[n++] = k }; next }
	{ k = $1 "\t" $2; b[k] = $3; if (!(k in seen)) { seen[k] = 1; order[n++] = k } }
	END {
		print "== passes in " ref ", not in " cand
		for (i = 0; i < n; i++) { k = order[i]
			if (a[k] == "pass" && b[k] != "pass") { printf "%s\t%s\n", k, (k in b) ? b[k] : "absent"; x++
				if (why) print k | ("\"" here "/why.sh\" \"" dir "\"") ; close("\"" here "/why.sh\" \"" dir "\"") } }
		printf "(%d)\n", x
		close(list)
		print "== passes in " cand ", not in " ref
		for (i = 0; i < n; i++) { k = order[i]
			if (b[k] == "pass" && a[k] != "pass") { printf "%s\t%s\n", k, (k in a) ? a[k] : "absent"; y++ } }
		printf "(%d)\n", y
		for (k in a) { ta[a[k]]++; na++ }
		for (k in b) { tb[b[k]]++; nb++ }
		printf "== totals\n%-10s pass %d fail %d skip %d notrun %d of %d\n", "reference", ta["pass"], ta["fail"], ta["skip"], ta["notrun"], na
		printf "%-10s pass %d fail %d skip %d notrun %d of %d\n", "candidate", tb["pass"], tb["fail"], tb["skip"], tb["notrun"], nb
	}' "$1" "$2"
