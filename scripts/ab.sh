#!/usr/bin/env bash
# ab.sh compares a benchmark figure between git revisions by interleaved
# runs, as docs/BENCHMARKS.md recommends for comparing revisions: it builds
# one test binary per revision, runs them in turn N times (so that a change
# in the machine's load affects all of them alike), and prints the minimum
# and the median of the metric for each.
#
#	scripts/ab.sh [-n N] [-bench REGEXP] [-benchtime T] [-metric UNIT] PKG REV...
#	scripts/ab.sh -n 10 ./webgraph HEAD~1 HEAD
#
# REV may be WORK for the working tree. Defaults: -n 10, -bench SharedSeq,
# -benchtime 30x, -metric cpu-ns/arc. Run it on a quiet machine.
set -euo pipefail
n=10 bench=SharedSeq benchtime=30x metric=cpu-ns/arc
while [[ $# -gt 0 && $1 == -* ]]; do
	case $1 in
	-n) n=$2 ;;
	-bench) bench=$2 ;;
	-benchtime) benchtime=$2 ;;
	-metric) metric=$2 ;;
	*) echo "unknown flag $1" >&2; exit 2 ;;
	esac
	shift 2
done
[[ $# -ge 2 ]] || { sed -n '2,13p' "$0" >&2; exit 2; }
pkg=$1; shift
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'for d in "$tmp"/wt*; do [[ -d $d ]] && git -C "$root" worktree remove --force "$d"; done; rm -rf "$tmp"' EXIT
bins=()
for i in $(seq $#); do
	rev=${!i}
	if [[ $rev == WORK ]]; then
		src=$root
	else
		src=$tmp/wt$i
		git -C "$root" worktree add --detach -q "$src" "$rev"
		# The shared data the benchmarks read sits beside the checkout.
		[[ -e $root/../shared && ! -e $tmp/shared ]] && ln -s "$(cd "$root/../shared" && pwd)" "$tmp/shared"
	fi
	(cd "$src" && go test -c -o "$tmp/bin$i" "$pkg")
	bins+=("$tmp/bin$i")
done
dir=$root/$pkg
for r in $(seq "$n"); do
	for i in "${!bins[@]}"; do
		(cd "$dir" && "${bins[$i]}" -test.run='^$' -test.bench="$bench" -test.benchtime="$benchtime") |
			awk -v m="$metric" -v i="$i" '{ for (f = 1; f < NF; f++) if ($(f+1) == m) { print i, $f; exit } }'
	done
done | sort -k1,1n -k2,2g | awk -v revs="$*" '
	{ v[$1] = v[$1] " " $2; c[$1]++ }
	END {
		split(revs, name, " ")
		for (i = 0; i in c; i++) {
			split(v[i], x, " ")
			printf "%-12s min %s  median %s  (%d runs)\n", name[i+1], x[1], x[int((c[i]+1)/2)], c[i]
		}
	}'
