#!/bin/bash
# summary.sh LOG... - add up the kselftest "# Totals:" lines of the given
# logs and print one closing line "N passed, N failed[, N skipped]".
awk '
/^# Totals: pass:/ {
	for (i = 1; i <= NF; i++) {
		split($i, kv, ":")
		if (kv[1] == "pass") p += kv[2]
		if (kv[1] == "fail" || kv[1] == "error") f += kv[2]
		if (kv[1] == "skip") s += kv[2]
	}
}
END { printf "%d passed, %d failed", p, f; if (s) printf ", %d skipped", s; printf "\n" }
' "$@"
