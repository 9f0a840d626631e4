#!/bin/bash
# overhead-guest.sh - in the guest, deterministic mode: guest instructions
# per 4 KiB read (fio randread qd1, psync and io_uring, 50,000 I/Os, in a
# child cgroup) on the raw null_blk device, through dm-linear, through
# blkiso with an unconfigured tenant, through blkiso with a quota that never
# bites (riops=10^9: charged through the per-CPU buckets, statistics on),
# and raw with a non-biting io.max for comparison.  In icount mode one
# guest nanosecond is one guest instruction, so 1e9 / IOPS = instructions
# per I/O, kernel and fio together.  Writes $BLKISO_OUT/overhead.json.
set -euo pipefail
[ "${BLKISO_ICOUNT:-0}" = 1 ] || { echo "overhead: needs ICOUNT=1" >&2; exit 2; }
ios=${1:-${BENCH_IOS:-50000}}
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
	[ "$(cat $d/dm/name)" = ovh-quota ] && basename $d; done)
echo "/bench riops=1000000000 runits=1000000000" > "$quota_dir/tenant"

# Warm-up: fio and its libraries come over 9p.
fio --version > /dev/null

run() {	# path engine -> instructions per I/O
	sh -c "echo \$\$ > /sys/fs/cgroup/bench/cgroup.procs; exec fio --name=o \
		--filename=$1 --direct=1 --rw=randread --bs=4k --ioengine=$2 \
		--iodepth=1 --number_ios=$ios --size=512M --eta=never \
		--output-format=json" |
	awk '/"read" : \{/ {r = 1} r && /"iops" :/ {gsub(",", ""); v = 1e9 / $3; r = 0} END {print v}'
}

declare -A res
for engine in psync io_uring; do
	res[raw,$engine]=$(run /dev/ovh $engine)
	res[linear,$engine]=$(run /dev/mapper/ovh-linear $engine)
	res[blkiso,$engine]=$(run /dev/mapper/ovh-blkiso $engine)
	res[quota,$engine]=$(run /dev/mapper/ovh-quota $engine)
done
maj=$(stat -c %t /dev/ovh); min=$(stat -c %T /dev/ovh)
echo "$((16#$maj)):$((16#$min)) riops=1000000000" > /sys/fs/cgroup/bench/io.max
for engine in psync io_uring; do
	res[iomax,$engine]=$(run /dev/ovh $engine)
done

{
	printf '{"bench": "overhead", "unit": "guest instructions per 4 KiB read", "ios": %d, "kernel": "%s",\n' "$ios" "$(uname -r)"
	for engine in psync io_uring; do
		printf ' "%s": {"raw": %.0f, "dm_linear": %.0f, "blkiso_no_quota": %.0f, "blkiso_quota": %.0f, "io_max": %.0f,' \
			$engine ${res[raw,$engine]} ${res[linear,$engine]} ${res[blkiso,$engine]} \
			${res[quota,$engine]} ${res[iomax,$engine]}
		printf ' "blkiso_quota_over_dm_linear": %.0f, "blkiso_no_quota_over_dm_linear": %.0f, "io_max_over_raw": %.0f}%s\n' \
			$(echo "${res[quota,$engine]} - ${res[linear,$engine]}" | bc) \
			$(echo "${res[blkiso,$engine]} - ${res[linear,$engine]}" | bc) \
			$(echo "${res[iomax,$engine]} - ${res[raw,$engine]}" | bc) \
			"$([ $engine = psync ] && echo , || echo '}')"
	done
} > "$BLKISO_OUT/overhead.json"
cat "$BLKISO_OUT/overhead.json"
cat "$quota_dir"/*/stats | head -3
