#!/bin/bash
# profile-guest.sh - in the guest (deterministic mode, under the insncount
# plugin): the overhead scenario's devices (null_blk; dm-linear, blkiso
# without a quota, blkiso with the non-biting riops+runits quota over it),
# then one fio 4 KiB randread qd1 run on BENCH_DEV (default ovh-quota),
# BENCH_IOS reads (default 20000), BENCH_ENGINE (default psync), in a child
# cgroup.  Leaves /proc/kallsyms and /proc/modules in $BLKISO_OUT for the
# report.
set -euo pipefail
ios=${BENCH_IOS:-20000}
dev=${BENCH_DEV:-ovh-quota}
for b in fio dmsetup blockdev; do
	p=$(command -v "$b") || continue
	# shellcheck disable=SC2046  # the libraries, one word each
	cat "$p" $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*') > /dev/null 2>&1 || true
done
fio --version > /dev/null
modprobe dm-mod
insmod "$BLKISO_KO"
modprobe null_blk nr_devices=0
nb=/sys/kernel/config/nullb/ovh
mkdir "$nb"; echo 1024 > "$nb/size"; echo 1 > "$nb/power"
sz=$(blockdev --getsz /dev/ovh)
dmsetup create ovh-linear --table "0 $sz linear /dev/ovh 0"
dmsetup create ovh-blkiso --table "0 $sz blkiso /dev/ovh 0"
dmsetup create ovh-quota --table "0 $sz blkiso /dev/ovh 0"
echo +io > /sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/bench
quota_dir=/sys/kernel/blkiso/$(for d in /sys/block/dm-*; do
	[ "$(cat "$d"/dm/name)" = ovh-quota ] && basename "$d"; done)
echo "/bench riops=1000000000 runits=1000000000" > "$quota_dir/tenant"
sh -c "echo \$\$ > /sys/fs/cgroup/bench/cgroup.procs; exec fio --name=o \
	--filename=/dev/mapper/$dev --direct=1 --rw=randread --bs=4k \
	--ioengine=${BENCH_ENGINE:-psync} --iodepth=1 --number_ios=$ios \
	--size=512M --eta=never --output-format=terse" > /dev/null
cat /proc/kallsyms > "$BLKISO_OUT/kallsyms"
cat /proc/modules > "$BLKISO_OUT/modules"
