#!/bin/bash
# buffered-cost.sh - in the guest, deterministic mode: guest instructions per
# buffered 4 KiB write (fio psync, BENCH_IOS writes, default 32768, then
# end_fsync) to a file on ext4 on blkiso over a memory-backed null_blk, from
# a cgroup with +memory +io whose tenant has a quota that never bites.
# BENCH_KOS="a.ko b.ko" compares modules (default: $BLKISO_KO), two rounds
# each, alternating in one boot; the first round warms the caches.
#   BENCH_KOS="$PWD/old.ko $PWD/new.ko" make vm-run ICOUNT=1 SCRIPT=selftests/bench/buffered-cost.sh
set -euo pipefail
[ "${BLKISO_ICOUNT:-0}" = 1 ] || { echo "buffered-cost: needs ICOUNT=1" >&2; exit 2; }
n=${BENCH_IOS:-32768}
cp "$BLKISO_TOP/build/guest/ticker" /tmp/ && /tmp/ticker &
p=$(command -v fio); cat "$p" $(ldd "$p" | grep -o '/[^ ]*') > /dev/null 2>&1
modprobe dm-mod; modprobe null_blk nr_devices=0
modprobe crc32c_generic; modprobe libcrc32c; modprobe ext4
d=/sys/kernel/config/nullb/bc; mkdir -p $d
echo 1024 > $d/size; echo 1 > $d/memory_backed; echo 1 > $d/power
echo "+io +memory" > /sys/fs/cgroup/cgroup.subtree_control; mkdir -p /sys/fs/cgroup/bc /mnt/bc
for round in 1 2; do
	for ko in ${BENCH_KOS:-$BLKISO_KO}; do
		insmod "$ko"
		dmsetup create bc --table "0 $(blockdev --getsz /dev/bc) blkiso /dev/bc 0"
		mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 /dev/mapper/bc
		mount -t ext4 -o noinit_itable /dev/mapper/bc /mnt/bc
		echo "/bc wbps=100G wiops=100000000" > "$(ls -d /sys/kernel/blkiso/dm-*)/tenant"
		sync
		t0=$(/usr/bin/date +%s%N)
		sh -c "echo \$\$ > /sys/fs/cgroup/bc/cgroup.procs; exec fio --name=w \
			--filename=/mnt/bc/f --rw=write --bs=4k --size=$((n * 4))k \
			--ioengine=psync --end_fsync=1 --output=/dev/null"
		t1=$(/usr/bin/date +%s%N)
		echo "round $round $(basename "$ko"): $(( (t1 - t0) / n )) instructions per buffered 4 KiB write"
		umount /mnt/bc; dmsetup remove bc; rmmod blkiso
	done
done
