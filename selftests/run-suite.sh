#!/bin/bash
# run-suite.sh NAME BIN... - run kselftest-harness binaries one after the
# other, keep their output in build/results/NAME.log, and print the suite's
# totals.  selftests/summary.sh adds up every suite's "# Totals:" line.
set -uo pipefail
name=$1; shift
top=$(cd "$(dirname "$0")/.." && pwd)
log=$top/build/results/$name.log
mkdir -p "$(dirname "$log")"
: > "$log"
rc=0
for bin in "$@"; do
	"$bin" 2>&1 | tee -a "$log"
	st=${PIPESTATUS[0]}
	[ "$st" -eq 0 ] || rc=1
	if ! grep -q '^# Totals:' <(tail -n 3 "$log"); then
		# A binary that crashed before its totals counts as one failure.
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0 ($bin died with status $st)" | tee -a "$log"
	fi
done
bash "$top/selftests/summary.sh" "$log"
exit $rc
