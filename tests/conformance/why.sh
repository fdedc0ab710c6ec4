#!/bin/bash
# why.sh RAW_DIR: for each FILE<TAB>TEST line on stdin, print what the runtime said in that
# test's block of RAW_DIR/FILE-stem.tap: its first error line ("kern: error", a log line at
# level error, "error:"), else the check that failed (used by compare.sh --why).
dir=$1
while IFS=$'\t' read -r file test; do
	awk -v t="$test" '
		function out() { if (inside) { print "    why: " (err != "" ? err : chk); inside = 0; done = 1 } }
		/^(not )?ok [0-9]+ / { out(); if (done) exit
			name = $0; sub(/^(not )?ok [0-9]+ /, "", name); sub(/ # (timeout|skip).*/, "", name)
			inside = (name == t); err = chk = ""; next }
		inside && err == "" && /kern: error|level=error|error:/ { err = $0; sub(/^# */, "", err) }
		inside && chk == "" && /failed|timeout/ { chk = $0; sub(/^# */, "", chk) }
		END { out() }' "$dir/${file%.bats}.tap"
done
