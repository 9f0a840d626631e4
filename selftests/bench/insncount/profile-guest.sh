#!/bin/bash
# profile-guest.sh - in the guest (deterministic mode, under the insncount
# plugin): the overhead scenario's devices (null_blk; dm-linear, blkiso
# without a quota, blkiso with the non-biting riops+runits quota over it),
# then one fio 4 KiB randread qd1 run on BENCH_DEV (default ovh-quota),
# BENCH_IOS reads (default 20000), BENCH_ENGINE (default psync), in a child
# cgroup.  Leaves /proc/kallsyms and /proc/modules in $BLKISO_OUT for the
# report.
#
# BENCH_TENANTS=N (default 1): N - 1 more cgroups, each a configured
# tenant of ovh-quota with its quota, before the run (the tenant lookup
# at N tenants: doc/bench.md "Scale").
#
# BENCH_DEV=buffered instead: BENCH_IOS buffered 4 KiB writes (fio psync,
# then end_fsync) to a file on ext4 on blkiso over a memory-backed null_blk
# (mkfs on the null_blk before blkiso is over it, so that blkiso sees the
# mount's and the writer's bios only), from a cgroup with +memory +io whose
# tenant has a quota that never bites; the device's stats (the bios each
# tenant had) also go to $BLKISO_OUT.
set -euo pipefail
ios=${BENCH_IOS:-20000}
dev=${BENCH_DEV:-ovh-quota}
# shellcheck source=selftests/bench/ovh-devices.sh
. "$BLKISO_TOP/selftests/bench/ovh-devices.sh"
ovh_warm
if [ "$dev" = buffered ]; then
	nb=/sys/kernel/config/nullb/bc
	modprobe dm-mod; modprobe null_blk nr_devices=0; insmod "$BLKISO_KO"
	modprobe crc32c_generic; modprobe libcrc32c; modprobe ext4
	mkdir $nb; echo 512 > $nb/size; echo 1 > $nb/memory_backed; echo 1 > $nb/power
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/bc
	dmsetup create bc --table "0 $(blockdev --getsz /dev/bc) blkiso /dev/bc 0"
	echo "+io +memory" > /sys/fs/cgroup/cgroup.subtree_control
	mkdir -p /sys/fs/cgroup/bench /mnt/bc
	mount -t ext4 /dev/mapper/bc /mnt/bc
	for d in /sys/block/dm-*; do
		[ "$(cat "$d/dm/name")" = bc ] && sys=/sys/kernel/blkiso/${d##*/}
	done
	echo "/bench wbps=100G wiops=1000000000" > "$sys/tenant"
	sync
	sh -c "echo \$\$ > /sys/fs/cgroup/bench/cgroup.procs; exec fio --name=w \
		--filename=/mnt/bc/f --rw=write --bs=4k --size=$((ios * 4))k \
		--ioengine=psync --end_fsync=1 --eta=never --output-format=terse" > /dev/null
	umount /mnt/bc
	cat "$sys/stats" "$sys"/*/stats > "$BLKISO_OUT/stats" 2>/dev/null || true
	cat /proc/kallsyms > "$BLKISO_OUT/kallsyms"
	cat /proc/modules > "$BLKISO_OUT/modules"
	exit 0
fi
ovh_setup
if [ "${BENCH_TENANTS:-1}" -gt 1 ]; then
	mkdir /sys/fs/cgroup/scale
	echo +io > /sys/fs/cgroup/scale/cgroup.subtree_control
	for ((i = 1; i < BENCH_TENANTS; i++)); do
		mkdir /sys/fs/cgroup/scale/t$i
		echo "/scale/t$i $ovh_quota" > "$ovh_quota_dir/tenant"
	done
	echo "$((BENCH_TENANTS - 1)) more tenants configured"
fi
sh -c "echo \$\$ > /sys/fs/cgroup/bench/cgroup.procs; exec fio --name=o \
	--filename=/dev/mapper/$dev --direct=1 --rw=randread --bs=4k \
	--ioengine=${BENCH_ENGINE:-psync} --iodepth=1 --number_ios=$ios \
	--size=512M --eta=never --output-format=terse" > /dev/null
cat /proc/kallsyms > "$BLKISO_OUT/kallsyms"
cat /proc/modules > "$BLKISO_OUT/modules"
