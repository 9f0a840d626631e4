#!/bin/bash
# summary.sh [--expect "NAME..."] LOG... - add up the kselftest "# Totals:"
# lines of the given logs and print one closing line "N passed, N failed[,
# N skipped]", after a line "FAILED log: ..." for each failed case (a
# "not ok" that is no SKIP, or a guest that died before its totals), so
# that the tail of a CI log names what failed.  With --expect, each NAME must have a log NAME.log among
# them that holds a Totals line: a stage that did not build or did not run
# leaves none, and counts as one failure (named on stderr), so a check
# cannot pass by skipping a stage silently.
missing=0
if [ "$1" = --expect ]; then
	for name in $2; do
		found=0
		for log in "${@:3}"; do
			if [ "$(basename "$log")" = "$name.log" ] &&
			   grep -q '^# Totals: pass:' "$log"; then
				found=1
			fi
		done
		if [ "$found" = 0 ]; then
			echo "summary: $name.log has no results (its stage did not build or did not run)" >&2
			missing=$((missing + 1))
		fi
	done
	shift 2
fi
awk -v missing="$missing" '
function name(f) { sub(/.*\//, "", f); return f }
/^not ok / && !/# SKIP/ { failed = failed "FAILED " name(FILENAME) ": " $0 "\n" }
/^# Totals: .*\(guest / { failed = failed "FAILED " name(FILENAME) ": " $0 "\n" }
/^# Totals: pass:/ {
	for (i = 1; i <= NF; i++) {
		split($i, kv, ":")
		if (kv[1] == "pass") p += kv[2]
		if (kv[1] == "fail" || kv[1] == "error") f += kv[2]
		if (kv[1] == "skip") s += kv[2]
	}
}
END { f += missing; printf "%s", failed; printf "%d passed, %d failed", p, f; if (s) printf ", %d skipped", s; printf "\n" }
' "$@"
