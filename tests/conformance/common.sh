# common.sh: shared by the conformance scripts (sourced, not run).

# die MESSAGE: the scripts' one error form.
die() {
	echo "kern conformance: error: $*" >&2
	exit 2
}

# runtime_link PATH DIR: print the path to run PATH by. A kern binary is reached through a link
# named kern-oci made in DIR (kern takes runc's command line under that name, kern-oci(1));
# anything else (runc, an existing kern-oci link) is printed as it is.
runtime_link() {
	local path=$1 dir=$2
	path=$(command -v "$path") || die "runtime $1 not found"
	if [ "$(basename "$path")" = kern ]; then
		ln -sf "$(readlink -f "$path")" "$dir/kern-oci"
		path=$dir/kern-oci
	fi
	echo "$path"
}

# go_offline: Debian's Go with the module proxy off and each tree's vendor/ used.
go_offline() {
	command -v go >/dev/null || die "go not found (Debian package golang-go)"
	export GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local GO111MODULE=on
	: "${GOCACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/go-build}"
	export GOCACHE
}

# print_table RESULTS.tsv: one row per group (test file) with pass/fail/skip counts, then totals.
# RESULTS.tsv lines are GROUP<TAB>TEST<TAB>RESULT, RESULT one of pass, fail, skip, notrun
# (notrun: declared but never reported, counted with the failures).
print_table() {
	awk -F'\t' '
		{ g = $1; if (!(g in seen)) { seen[g] = 1; order[n++] = g }
		  r = $3; if (r == "notrun") { r = "fail"; nr[g]++ } ; c[g, r]++; t[r]++; tot[g]++; all++ }
		END {
			printf "%-44s %5s %5s %5s %6s %5s\n", "file", "pass", "fail", "skip", "notrun", "total"
			for (i = 0; i < n; i++) { g = order[i]
				printf "%-44s %5d %5d %5d %6d %5d\n", g, c[g, "pass"], c[g, "fail"], c[g, "skip"], nr[g], tot[g] }
			printf "%-44s %5d %5d %5d %6s %5d\n", "TOTAL", t["pass"], t["fail"], t["skip"], "", all
		}' "$1"
}
