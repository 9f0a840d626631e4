#!/bin/bash
# overhead-guest.sh - in the guest, deterministic mode: guest instructions
# per 4 KiB read (fio randread qd1, psync and io_uring, BENCH_IOS reads:
# default 1,000,000, 5,000 with BENCH_SMOKE=1; in a child cgroup) on one
# null_blk device, through nine paths:
#   raw              the null_blk device itself
#   dm-linear        dm-linear over it
#   blkiso-no-quota  blkiso over it, the tenant unconfigured
#   blkiso           blkiso over it, a quota that never bites (riops=10^9:
#                    charged through the per-CPU buckets, statistics on)
#   io.max           the raw device, blk-throttle with a non-biting io.max
#   iocost           the raw device, iocost enabled (io.cost.qos enable=1,
#                    vrate pinned at its maximum, a cost model of 10^7 IOPS
#                    and 100 GB/s: it never bites) and io.weight 100
# and the LVM user's comparison, each through dm-linear (a logical volume):
#   io.max-lv        io.max set on the dm-linear device itself (blk-throttle
#                    works on bio-based devices), the same non-biting riops
#   iocost-lv        iocost on the disk under dm-linear, as for iocost (it
#                    hooks blk-mq only, so the disk, not the LV)
#   bfq-lv           the disk under dm-linear with the bfq scheduler (blk-mq
#                    only too; the /bench cgroup at its default weight)
# In icount mode one guest nanosecond is one guest instruction, so 1e9 /
# IOPS = instructions per I/O, kernel and fio together.
#
# Writes $BLKISO_OUT/overhead.json, a bench fragment (doc/bench.md):
#   {"scenario": "overhead", "kernel", "icount", "device": {...},
#    "runs": [{"anchor", "case": engine, "params", "metrics":
#              {"instr_per_io", "over_raw"[, "over_dm_linear"]}, "series": {}}]}
# (over_dm_linear for dm-linear, blkiso* and the *-lv anchors).
# "BENCH-STEP n/N what" lines mark progress (tools/bench/run.sh adds times).
set -euo pipefail
[ "${BLKISO_ICOUNT:-0}" = 1 ] || { echo "overhead: needs ICOUNT=1" >&2; exit 2; }
ios=${1:-${BENCH_IOS:-1000000}}
[ -n "${1:-}${BENCH_IOS:-}" ] || [ "${BENCH_SMOKE:-0}" != 1 ] || ios=5000
steps=10
step() { echo "BENCH-STEP $1/$steps overhead: $2"; }

# shellcheck source=selftests/bench/ovh-devices.sh
. "$BLKISO_TOP/selftests/bench/ovh-devices.sh"
ovh_warm

step 1 "null_blk, dm-linear, blkiso (no quota, non-biting quota)"
ovh_setup
modprobe bfq 2>/dev/null || true
maj=$((16#$(stat -c %t /dev/ovh))); min=$((16#$(stat -c %T /dev/ovh)))
lv=$(dmsetup info -c --noheadings -o major,minor ovh-linear | tr -d ' ')
sched=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/block/ovh/queue/scheduler)
iomax="riops=1000000000"
model="ctrl=user model=linear rbps=100000000000 rseqiops=10000000 rrandiops=10000000 wbps=100000000000 wseqiops=10000000 wrandiops=10000000"
qos="enable=1 ctrl=user rpct=0 rlat=10000000 wpct=0 wlat=10000000 min=10000 max=10000"

run() {	# path engine -> instructions per I/O
	sh -c "echo \$\$ > /sys/fs/cgroup/bench/cgroup.procs; exec fio --name=o \
		--filename=$1 --direct=1 --rw=randread --bs=4k --ioengine=$2 \
		--iodepth=1 --number_ios=$ios --io_size=$((ios * 4))k --size=512M --eta=never \
		--output-format=json" |
	awk '/"read" : \{/ {r = 1} r && /"iops" :/ {gsub(",", ""); v = 1e9 / $3; r = 0} END {printf "%.0f\n", v}'
}

anchor_on() {	# anchor: its controller on, checked
	case $1 in
	io.max) echo "$maj:$min $iomax" > /sys/fs/cgroup/bench/io.max ;;
	io.max-lv)
		echo "$lv $iomax" > /sys/fs/cgroup/bench/io.max
		grep -q "^$lv .*$iomax" /sys/fs/cgroup/bench/io.max ;;
	iocost*)
		echo "$maj:$min $model" > /sys/fs/cgroup/io.cost.model
		echo "$maj:$min $qos" > /sys/fs/cgroup/io.cost.qos
		echo 100 > /sys/fs/cgroup/bench/io.weight
		grep -q "^$maj:$min enable=1" /sys/fs/cgroup/io.cost.qos ;;
	bfq-lv)
		echo bfq > /sys/block/ovh/queue/scheduler
		grep -q '\[bfq\]' /sys/block/ovh/queue/scheduler ;;
	esac
}
anchor_off() {	# anchor: its controller off again
	case $1 in
	io.max) echo "$maj:$min riops=max" > /sys/fs/cgroup/bench/io.max ;;
	io.max-lv) echo "$lv riops=max" > /sys/fs/cgroup/bench/io.max ;;
	iocost*) echo "$maj:$min enable=0" > /sys/fs/cgroup/io.cost.qos ;;
	bfq-lv) echo "$sched" > /sys/block/ovh/queue/scheduler ;;
	esac
}

declare -A res path
anchors=(raw dm-linear blkiso-no-quota blkiso io.max iocost io.max-lv iocost-lv bfq-lv)
path=([raw]=/dev/ovh [dm-linear]=/dev/mapper/ovh-linear [blkiso-no-quota]=/dev/mapper/ovh-blkiso
	[blkiso]=/dev/mapper/ovh-quota [io.max]=/dev/ovh [iocost]=/dev/ovh
	[io.max-lv]=/dev/mapper/ovh-linear [iocost-lv]=/dev/mapper/ovh-linear
	[bfq-lv]=/dev/mapper/ovh-linear)
n=2
for a in "${anchors[@]}"; do
	step $n "$a, psync and io_uring, $ios reads each"
	anchor_on "$a"
	for engine in psync io_uring; do
		res[$a,$engine]=$(run "${path[$a]}" $engine)
		echo "  $a $engine: ${res[$a,$engine]} instructions per read"
	done
	anchor_off "$a"
	n=$((n + 1))
done
cat "$ovh_quota_dir"/*/stats | head -3

params() {	# anchor engine
	printf '"engine": "%s", "rw": "randread", "bs": "4k", "iodepth": 1, "ios": %d, "path": "%s"' \
		"$2" "$ios" "${path[$1]}"
	case $1 in
	blkiso) printf ', "quota": "%s"' "$ovh_quota" ;;
	io.max*) printf ', "io.max": "%s"' "$iomax" ;;
	iocost*) printf ', "io.cost.model": "%s", "io.cost.qos": "%s", "io.weight": 100' "$model" "$qos" ;;
	bfq-lv) printf ', "scheduler": "bfq"' ;;
	esac
}
{
	printf '{"scenario": "overhead", "kernel": "%s", "icount": %d,\n' "$(uname -r)" "$BLKISO_ICOUNT"
	printf ' "unit": "guest instructions per 4 KiB read (kernel and fio)",\n'
	printf ' "device": {"kind": "null_blk", "size_mb": 1024, "shaping": "none (null_blk defaults)", "queue_mode": %s, "irqmode": %s, "hw_queue_depth": %s, "memory_backed": %s},\n' \
		"$(cat $ovh_nb/queue_mode)" "$(cat $ovh_nb/irqmode)" "$(cat $ovh_nb/hw_queue_depth)" "$(cat $ovh_nb/memory_backed)"
	printf ' "runs": [\n'
	sep=""
	for a in "${anchors[@]}"; do
		for engine in psync io_uring; do
			v=${res[$a,$engine]}
			printf '%s  {"anchor": "%s", "case": "%s", "params": {%s},\n' "$sep" "$a" "$engine" "$(params $a $engine)"
			printf '   "metrics": {"instr_per_io": %d, "over_raw": %d' "$v" $((v - ${res[raw,$engine]}))
			case $a in
			dm-linear|blkiso*|*-lv) printf ', "over_dm_linear": %d' $((v - ${res[dm-linear,$engine]})) ;;
			esac
			printf '}, "series": {}}'
			sep=$',\n'
		done
	done
	printf '\n ]}\n'
} > "$BLKISO_OUT/overhead.json"
cat "$BLKISO_OUT/overhead.json"
