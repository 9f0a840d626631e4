#!/bin/bash
# wb-fsync.sh - inside the guest: the fsync stall of issue 16, repeated
# (doc/metering.md, "The fsync stall").  Runs writeback_test's two fsync
# cases, the writer capped by blkiso (wbps=1M) and by io.max (wbps=1M on
# the blkiso device), alternated, BENCH_WB_REPEATS times (default 5), on
# BENCH_WB_FS (default ext4), its journal BENCH_WB_JOURNAL_MB MiB if set
# (else mkfs's: 16 MiB here), mounted with BENCH_WB_MOUNT_OPTS added if set
# (e.g. nodioread_nolock).  Prints each run's figures (the tests' TH_LOG
# lines) and, per cap, in how many runs the fsync p99 passed 50 ms; the
# slow fsyncs' stacks are kept as wb_fsync_slow_<run>_<cap>.txt in /out.
# The rates hold in the deterministic mode:
#   bash selftests/vm/run.sh -k 6.1 -i -t 3600 selftests/bench/wb-fsync.sh
top=${BLKISO_TOP:?run me in the guest through selftests/vm/run.sh}
repeats=${BENCH_WB_REPEATS:-5}
fs=${BENCH_WB_FS:-ext4}
[ -z "${BENCH_WB_JOURNAL_MB:-}" ] || export WB_JOURNAL_MB=$BENCH_WB_JOURNAL_MB
[ -z "${BENCH_WB_MOUNT_OPTS:-}" ] || export WB_MOUNT_OPTS=$BENCH_WB_MOUNT_OPTS
cd /tmp || exit 1
if [ "${BLKISO_ICOUNT:-0}" = 1 ]; then
	cp "$top/build/guest/ticker" /tmp/ && /tmp/ticker &
fi
cp "$top/build/guest/writeback_test" /tmp/ || exit 1
fio --version > /dev/null
declare -A over=([blkiso]=0 [iomax]=0) ran=([blkiso]=0 [iomax]=0)
for i in $(seq "$repeats"); do
	for cap in blkiso iomax; do
		case $cap in
		blkiso) only=fsync_beside_a_capped_flood tag= ;;
		iomax) only=fsync_beside_an_iomax_capped_flood tag=_iomax ;;
		esac
		out=$(GUEST_FULL=1 WB_ONLY=$only WB_FS=$fs /tmp/writeback_test 2>&1)
		line=$(grep -o "$fs: fsync p50.*" <<< "$out")
		[ "$i.$cap" != 1.blkiso ] || grep -m1 " /mnt/wb " <<< "$out"
		echo "run $i $cap: ${line:-no figures}"
		mv "$BLKISO_OUT/wb_fsync_slow_$fs$tag.txt" "$BLKISO_OUT/wb_fsync_slow_${i}_$cap.txt" 2>/dev/null
		grep "Expected" <<< "$out"
		p99=$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<< "$line")
		[ -n "$p99" ] || continue
		ran[$cap]=$((ran[$cap] + 1))
		awk -v p="$p99" 'BEGIN { exit !(p > 50) }' && over[$cap]=$((over[$cap] + 1))
	done
done
for cap in blkiso iomax; do
	echo "$cap: fsync p99 over 50 ms in ${over[$cap]} of ${ran[$cap]} runs ($fs, journal ${BENCH_WB_JOURNAL_MB:-default} MiB, mount options ${BENCH_WB_MOUNT_OPTS:-default}, $BLKISO_KVER)"
done
