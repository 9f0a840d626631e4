#!/bin/bash
# debug-run.sh FUZZ_SECONDS [TEST...] - inside the debug guest (make
# check-debug, selftests/vm/debug-suite.sh): the guest test programs (all,
# or the named ones) through run-all.sh, then iface_fuzz for FUZZ_SECONDS
# (0: none).  Each test's start goes into the kernel log as a
# "blkiso-debug: " line, so that the host can name the test during which
# each report appeared; the whole log is saved as /out/dmesg.txt.
top=${BLKISO_TOP:?run me in the guest through selftests/vm/run.sh}
secs=${1:?usage: debug-run.sh FUZZ_SECONDS [TEST...]}
shift
mark() { echo "blkiso-debug: $*" > /dev/kmsg; }

# The kernel log streamed to the host as it is written (util-linux dmesg
# flushes each record): a boot stopped or killed before the end still
# leaves every report so far in /out/dmesg.txt, which debug-suite.sh reads;
# the console shows only emergency messages (the init's dmesg -n 1).
follow=
if [ -x /usr/bin/dmesg ]; then
	/usr/bin/dmesg --follow > /out/dmesg.txt 2>&1 &
	follow=$!
fi

rc=0
if [ $# -gt 0 ]; then
	bash "$top/selftests/guest/run-all.sh" "$@" 2>&1 | while IFS= read -r l; do
		printf '%s\n' "$l"
		case $l in "#  RUN "* | "# ===="*) mark "$l" ;; esac
	done
	rc=${PIPESTATUS[0]}
fi
if [ "$secs" -gt 0 ]; then
	mark "# ==== iface_fuzz ($secs s) ===="
	echo "# ==== iface_fuzz ($BLKISO_KVER) ===="
	cp "$top/build/guest/iface_fuzz" /tmp/ && /tmp/iface_fuzz "$secs" || rc=1
fi
mark "# ==== end ===="
[ -z "$follow" ] || { kill "$follow"; wait "$follow"; } 2>/dev/null
dmesg > /out/dmesg.txt
exit $rc
