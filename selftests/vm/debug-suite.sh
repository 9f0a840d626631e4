#!/bin/bash
# debug-suite.sh TEST... - make check-debug: boot the debug kernel (make
# debug-kernel) once with 2 vCPUs and run the named guest test programs,
# then the interface fuzzer with fault injection (iface_fuzz.c) for
# $DEBUG_FUZZ_SECONDS (default 300), then a kmemleak scan (the guest's
# init).  Every KASAN, lockdep, UBSAN, DEBUG_OBJECTS, kmemleak, WARN or BUG
# report fails the run; each is listed below with the test during which it
# appeared.  DEBUG_ICOUNT=1 runs in the deterministic mode instead;
# DEBUG_TIMEOUT (default 7200 s) bounds the whole boot; the guest's output
# goes to $DEBUG_OUT (default build/vm/debug-out: console.log, dmesg.txt,
# which the guest writes as the kernel logs, so a boot stopped or timed out
# still has its reports listed).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${DEBUG_OUT:-$top/build/vm/debug-out}
rm -rf "$out" && mkdir -p "$out"
opts=(-k debug -t "${DEBUG_TIMEOUT:-7200}")
[ "${DEBUG_ICOUNT:-0}" = 1 ] && opts+=(-i)
t0=$(date +%s)
BLKISO_VM_OUT=$out bash "$top/selftests/vm/run.sh" "${opts[@]}" \
	"$top/selftests/guest/debug-run.sh" "${DEBUG_FUZZ_SECONDS:-300}" "$@"
rc=$?
echo "# debug-suite: status $rc after $(( $(date +%s) - t0 )) s wall"

# The reports, each with the test that was running (the last
# "blkiso-debug:" mark before it) and its first lines.
bad='WARNING:|BUG:|Oops|general protection fault|UBSAN:|ODEBUG:|suspicious RCU usage|possible circular locking'
if [ -f "$out/dmesg.txt" ]; then
	awk -v bad="$bad" '
		/blkiso-debug: / { sub(/.*blkiso-debug: /, ""); test = $0; next }
		left > 0 { print "#   " $0; left--; next }
		$0 ~ bad { n++; print "# report " n " during [" test "]:"; print "#   " $0; left = 8 }
		END { print "# debug-suite: " n + 0 " kernel reports" }' "$out/dmesg.txt"
fi
grep -E '^blkiso-vm: kmemleak' -A 30 "$out/console.log" 2>/dev/null | sed 's/^/# /'
# Injected allocation failures print the kernel's "page allocation
# failure" / "vmalloc error" warning with a Call Trace, which made the
# guest's init report status 90: those alone are the fault injection
# working, not a report.
if [ "$rc" = 90 ] && [ -f "$out/dmesg.txt" ] &&
   grep -q 'kmemleak: .*, 0 of blkiso' "$out/console.log" &&
   [ "$(awk '/page allocation failure|vmalloc error/ { skip = 1 }
	     skip && /<\/TASK>/ { skip = 0; next }
	     !skip' "$out/dmesg.txt" | grep -E -c "$bad|Call Trace:")" = 0 ] &&
   ! grep -q '^# Totals: .*fail:[1-9]' "$out/console.log"; then
	echo "# debug-suite: status 90 came from injected allocation failures' warnings only: passed"
	rc=0
fi
got=$(grep -c '^# Totals:' "$out/console.log" 2>/dev/null)
if [ "$rc" != 0 ] && ! grep -q '^# Totals: .*fail:[1-9]' "$out/console.log"; then
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0 (debug guest: status $rc, $got programs reported)"
fi
exit $rc
