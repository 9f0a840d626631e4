#!/bin/bash
# run-all.sh [TEST...] - inside the guest: run every guest test program
# (build/guest/*_test), or the named ones, one after the other.  Output is
# kselftest TAP; each program ends with its "# Totals:" line, which the host
# adds up.  Exit status: non-zero if any test failed.
top=${BLKISO_TOP:?run me in the guest through selftests/vm/run.sh}
cd /tmp
# Bound the clock's leaps in the deterministic mode (see ticker.c).
if [ "${BLKISO_ICOUNT:-0}" = 1 ]; then
	cp "$top/build/guest/ticker" /tmp/ && /tmp/ticker &
fi
# Warm the guest's page cache with the host binaries the tests run (9p,
# cache=loose): in deterministic mode the guest clock jumps ahead while the
# guest waits for the host, so a cold start of fio costs seconds of guest
# time, which would eat into the tests' timeouts.
for b in fio dmsetup blockdev bash lvm; do
	p=$(command -v "$b") || continue
	cat "$p" $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*') > /dev/null 2>&1
done
fio --version > /dev/null
# After a failed program: the kernel stacks of tasks in uninterruptible
# sleep or asleep in blkiso's code, if any (a test the harness killed for
# its timeout may have been stuck in the kernel: this says where).
blocked_tasks() {
	local d p
	for d in /proc/[0-9]*; do
		[ "$(awk '/^State:/ { print $2 }' "$d/status" 2>/dev/null)" = D ] ||
			grep -q blkiso "$d/stack" 2>/dev/null || continue
		p=${d#/proc/}
		echo "# blocked: $p $(tr '\0' ' ' < "$d/cmdline" 2>/dev/null)"
		sed 's/^/#   /' "$d/stack" 2>/dev/null
	done
}
rc=0
if [ $# -eq 0 ]; then
	set -- "$top"/build/guest/*_test
else
	set -- "${@/#/$top/build/guest/}"
fi
for t in "$@"; do
	echo "# ==== $(basename "$t") ($BLKISO_KVER) ===="
	# Run a local copy: its pages then never come over 9p mid-test.
	if ! { cp "$t" /tmp/ && "/tmp/$(basename "$t")"; }; then
		rc=1
		blocked_tasks
	fi
done
exit $rc
