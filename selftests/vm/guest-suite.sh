#!/bin/bash
# guest-suite.sh SERIES [ICOUNT] - boot one guest kernel once and run every
# guest test program in it (selftests/guest/run-all.sh), in the
# deterministic mode (ICOUNT=1: rates and capacities) or the ordinary one
# (2 vCPUs: per-CPU behaviour).  Tests that need the other mode skip.  The
# console goes to build/results/guest-SERIES-MODE.log; a guest that dies
# or hangs before every program printed its totals counts as one more
# failure there.  The guest has a QEMU NVMe controller of
# $BLKISO_GUEST_NVME (default 1G; empty: none) for target_test's nvme cases.
set -uo pipefail
series=$1 icount=${2:-0}
top=$(cd "$(dirname "$0")/../.." && pwd)
log=$top/build/results/guest-$series-$([ "$icount" = 1 ] && echo icount || echo smp).log
mkdir -p "$(dirname "$log")"
nr=$(ls "$top"/build/guest/*_test 2>/dev/null | wc -l)
opts=(-k "$series" -t "${BLKISO_GUEST_TIMEOUT:-1500}")
[ "$icount" = 1 ] && opts+=(-i)
nvme=${BLKISO_GUEST_NVME-1G}
[ -z "$nvme" ] || opts+=(-N "$nvme")
bash "$top/selftests/vm/run.sh" "${opts[@]}" "$top/selftests/guest/run-all.sh" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
got=$(grep -c '^# Totals:' "$log")
if [ "$got" -lt "$nr" ] || { [ "$rc" != 0 ] && ! grep -q '^# Totals: .*fail:[1-9]' "$log"; }; then
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0 (guest $series: status $rc, $got of $nr programs reported)" | tee -a "$log"
	rc=1
fi
bash "$top/selftests/summary.sh" "$log"
exit $rc
