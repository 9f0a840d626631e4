# lib-guest.sh - helpers of the `make bench` scenarios in the guest, sourced
# by selftests/bench/scenarios-guest.sh (and through it by scen-*.sh),
# many-cpus.sh and irqsoff-guest.sh:
# the shaped device and its capacity, the five anchors' setup and teardown,
# fio in a cgroup, progress lines, and each run's record for scen-collect.py.
#
# The device: null_blk shaped like a small SSD through configfs (the demo's
# shaping: BENCH_HW_QD slots, BENCH_LAT_NS timer completions, BENCH_MBPS
# MiB/s, memory_backed=0), scheduler "none".  Its capacity is measured in
# the same boot on the raw device, and the same runs give iocost its linear
# model (rbps from 1 MiB sequential reads, rseqiops/rrandiops from 4 KiB
# sequential/random reads at QD64, and the same for writes).
#
# Where each anchor's cgroups meet the device:
#   blkiso   the blkiso dm device over the null_blk device (quotas in sysfs)
#   io.max   the raw null_blk device (blk-throttle lines in io.max)
#   iocost   the raw device, io.cost.model + io.cost.qos on it, io.weight
#   bfq      the raw device with scheduler bfq, io.bfq.weight
#   none     the raw device, scheduler none, nothing configured
# Anchors that are not in force are undone: io.cost.qos enable=0, the
# scheduler back to none, io.max lines in per-run cgroups that are removed.
#
# A run's record: a directory $BENCH_RUNS/<scenario>/<NNN>/ holding meta.txt
# ("key=value" lines: anchor, case, param.<name>=<exact line>, t0/t1 ...)
# and the fio JSON and logs of the run.  Nothing is written to /out during
# a run (9p waits leap guest time in the deterministic mode).

BENCH_RUNS=/tmp/bench
CG=/sys/fs/cgroup
DM=bench-iso
DMDEV=/dev/mapper/$DM
RAW=/dev/benchdev
RAWQ=/sys/block/benchdev/queue	# the raw device's queue (nvme: nvme0n1's)
devname=null_blk
bench_step=0
bench_steps=0

now_s() { cut -d' ' -f1 /proc/uptime; }
epoch_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }	# fio's log_unix_epoch clock
json_num() {	# file dir key: one number of fio's JSON (jq-free, its JSON is regular)
	awk -v d="\"$2\" : {" -v k="\"$3\" :" 'index($0, d) { in_d = 1 }
		in_d && index($0, k) { gsub(/[ ,]/, ""); split($0, a, ":"); print a[2]; exit }' "$1"
}
calc() { echo "$*" | bc -l; }
round() { printf '%.0f' "$1"; }

# Progress: "BENCH-STEP n/N scenario anchor case".
step() { bench_step=$((bench_step + 1)); echo "BENCH-STEP $bench_step/$bench_steps $*"; }

warm_cache() {	# fio, the tools and python into the page cache
	local b p
	for b in fio dmsetup blockdev bash bc awk sed tr cut grep sleep cat python3 stat seq kill; do
		p=$(command -v "$b") || continue
		cat "$p" $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*') > /dev/null 2>&1 || true
	done
	fio --version > /dev/null
	python3 -c 'import json, os, sys, math' 2>/dev/null || true
	cat "$BLKISO_TOP"/selftests/bench/*.sh "$BLKISO_TOP"/selftests/bench/*.py > /dev/null
}

# ---- the shaped device ----
null_dev() {	# name key=value...: a configfs null_blk device /dev/NAME
	local nb=/sys/kernel/config/nullb/$1 kv
	shift
	mkdir "$nb"
	for kv in "$@" power=1; do
		echo "${kv#*=}" > "$nb/${kv%%=*}"
	done
	[ -b "/dev/${nb##*/}" ]
}

cap_run() {	# name fio-args...: a capacity run on the raw device (CAP_DEV),
	# its JSON in /tmp/cap-<CAP_TAG><name>.json
	local n=$1; shift
	fio --name="$n" --filename="${CAP_DEV:-$RAW}" --direct=1 --runtime="$cap_secs" --time_based \
	    --eta=never --output-format=json --output="/tmp/cap-${CAP_TAG:-}$n.json" "$@" > /dev/null
}

# Device shapes (BENCH_SHAPE, issue 20: no constant tuned to one device):
#   ssd        8 slots, 200 us, 1000 MiB/s (the demo's; the default)
#   fast       32 slots, 50 us, no bandwidth limit
#   slow       2 slots, 4 ms, no bandwidth limit, queue/rotational=1
#   slotbound  8 slots, 250 us, no bandwidth limit (issue 20's failing shape)
#   mq         the ssd shape over 4 submit queues (null_blk keeps at most
#              one per CPU: hw_queues in device.txt says how many it made)
#   nvme       not null_blk: /dev/nvme0n1, QEMU's emulated NVMe controller
#              under the real nvme driver (selftests/vm/run.sh -N; the bench
#              host side boots it in the ordinary mode), one hardware queue
#              per vCPU; slots are its nr_requests, latency its QD1 randrw
#              time measured in this boot (iocost's QoS target)
# BENCH_HW_QD, BENCH_LAT_NS, BENCH_MBPS override the shape's figures.
shape_of() {	# shape: "slots lat_ns mbps submit_queues rotational"
	case $1 in
	ssd) echo 8 200000 1000 1 0 ;;
	fast) echo 32 50000 0 1 0 ;;
	slow) echo 2 4000000 0 1 1 ;;
	slotbound) echo 8 250000 0 1 0 ;;
	mq) echo 8 200000 1000 4 0 ;;
	nvme) echo 0 0 0 0 0 ;;	# measured: device_setup
	*) echo "BENCH_SHAPE: unknown shape '$1' (ssd fast slow slotbound mq nvme)" >&2; return 1 ;;
	esac
}

device_setup() {	# shape, measure, attach blkiso; sets DEV_* and RAW_MM
	local shape sq rot
	shape=$(shape_of "${BENCH_SHAPE:-ssd}")
	set -- $shape
	qd=${BENCH_HW_QD:-$1} lat_ns=${BENCH_LAT_NS:-$2} mbps=${BENCH_MBPS:-$3} sq=$4 rot=$5
	size_mb=${BENCH_SIZE_MB:-4096}
	modprobe dm-mod
	insmod "$BLKISO_KO"
	modprobe null_blk nr_devices=0
	modprobe bfq 2>/dev/null || true
	if [ "${BENCH_SHAPE:-}" = nvme ]; then
		[ -b /dev/nvme0n1 ] || { echo "BENCH_SHAPE=nvme: no /dev/nvme0n1 (selftests/vm/run.sh -N)" >&2; return 1; }
		RAW=/dev/nvme0n1 RAWQ=/sys/block/nvme0n1/queue devname=nvme
		size_mb=$(($(blockdev --getsize64 $RAW) >> 20)) qd=$(cat $RAWQ/nr_requests)
		echo none > $RAWQ/scheduler
		rot=$(cat $RAWQ/rotational)
	else
		null_dev benchdev size="$size_mb" blocksize=4096 submit_queues="$sq" hw_queue_depth="$qd" \
			irqmode=2 completion_nsec="$lat_ns" mbps="$mbps" memory_backed=0
		echo none > $RAWQ/scheduler
		echo "$rot" > $RAWQ/rotational
	fi
	RAW_MM=$(cat $RAWQ/../dev)
	cap_run r4k --rw=randread --bs=4k --ioengine=libaio --iodepth=64
	cap_run s4k --rw=read --bs=4k --ioengine=libaio --iodepth=64
	cap_run s1m --rw=read --bs=1M --ioengine=libaio --iodepth=32
	cap_run w4k --rw=randwrite --bs=4k --ioengine=libaio --iodepth=64
	cap_run ws4k --rw=write --bs=4k --ioengine=libaio --iodepth=64
	cap_run ws1m --rw=write --bs=1M --ioengine=libaio --iodepth=32
	cap_run qd1 --rw=randrw --bs=4k --ioengine=psync --iodepth=1
	cap_run n1m --rw=randread --bs=1M --ioengine=io_uring --iodepth=128
	DEV_R4K=$(round "$(json_num /tmp/cap-r4k.json read iops)")
	DEV_S4K=$(round "$(json_num /tmp/cap-s4k.json read iops)")
	DEV_RBPS=$(round "$(json_num /tmp/cap-s1m.json read bw_bytes)")
	DEV_W4K=$(round "$(json_num /tmp/cap-w4k.json write iops)")
	DEV_WS4K=$(round "$(json_num /tmp/cap-ws4k.json write iops)")
	DEV_WBPS=$(round "$(json_num /tmp/cap-ws1m.json write bw_bytes)")
	DEV_QD1=$(round "$(calc "$(json_num /tmp/cap-qd1.json read iops) + $(json_num /tmp/cap-qd1.json write iops)")")
	DEV_N1M=$(round "$(json_num /tmp/cap-n1m.json read bw_bytes)")
	# nvme: its latency is what one I/O at a time takes in this boot.
	[ "$lat_ns" != 0 ] || lat_ns=$((1000000000 / DEV_QD1))
	IOCOST_MODEL="$RAW_MM ctrl=user model=linear rbps=$DEV_RBPS rseqiops=$DEV_S4K rrandiops=$DEV_R4K wbps=$DEV_WBPS wseqiops=$DEV_WS4K wrandiops=$DEV_W4K"
	# QoS: p95 read/write completion latency target of 5 device latencies,
	# vrate free between 25% and 150% of the model.
	local tgt=$((lat_ns * 5 / 1000))
	IOCOST_QOS="$RAW_MM enable=1 ctrl=user rpct=95.00 rlat=$tgt wpct=95.00 wlat=$tgt min=25.00 max=150.00"
	{
		echo "name=$devname"
		echo "shape=${BENCH_SHAPE:-ssd}"
		echo "size_mb=$size_mb"
		echo "hw_queue_depth=$qd"
		echo "hw_queues=$(ls -d $RAWQ/../mq/*/ | wc -l)"
		echo "rotational=$rot"
		echo "completion_us=$((lat_ns / 1000))"
		echo "mbps_limit=$mbps"
		echo "scheduler=none"
		echo "randread_4k_qd64_iops=$DEV_R4K"
		echo "read_4k_qd64_iops=$DEV_S4K"
		echo "read_1m_qd32_bytes_s=$DEV_RBPS"
		echo "randwrite_4k_qd64_iops=$DEV_W4K"
		echo "write_4k_qd64_iops=$DEV_WS4K"
		echo "write_1m_qd32_bytes_s=$DEV_WBPS"
		echo "randrw_4k_qd1_iops=$DEV_QD1"
		echo "randread_1m_qd128_io_uring_bytes_s=$DEV_N1M"
		echo "iocost_model=$IOCOST_MODEL"
		echo "iocost_qos=$IOCOST_QOS"
	} > /tmp/device.txt
	echo "device: $devname ${BENCH_SHAPE:-ssd} ${size_mb} MiB, $qd slots x $((lat_ns / 1000)) us, $mbps MiB/s: 4k randread QD64 $DEV_R4K IOPS, 1M read $((DEV_RBPS / 1000000)) MB/s, 4k randrw QD1 $DEV_QD1 IOPS"
	local sectors d
	sectors=$(blockdev --getsz $RAW)
	dmsetup create $DM --table "0 $sectors blkiso $RAW 0"
	for d in /sys/block/dm-*; do
		[ "$(cat "$d/dm/name")" = $DM ] && SYS=/sys/kernel/blkiso/${d##*/}
	done
	[ -d "$SYS" ]
	echo +io > $CG/cgroup.subtree_control
}

# ---- anchors ----
anchor_dev() {	# anchor: the device its cgroups use
	if [ "$1" = blkiso ]; then echo $DMDEV; else echo $RAW; fi
}
anchor_on() {	# anchor: device-wide part
	case $1 in
	iocost)
		echo "$IOCOST_MODEL" > $CG/io.cost.model
		echo "$IOCOST_QOS" > $CG/io.cost.qos
		meta param.io.cost.model "$IOCOST_MODEL"
		meta param.io.cost.qos "$IOCOST_QOS" ;;
	bfq)
		echo bfq > $RAWQ/scheduler
		meta param.scheduler bfq ;;
	esac
}
anchor_off() {	# anchor
	case $1 in
	iocost) echo "$RAW_MM enable=0" > $CG/io.cost.qos ;;
	bfq) echo none > $RAWQ/scheduler ;;
	esac
}
# anchor_set anchor cgroup kind value [role]: one tenant's control line,
# recorded as param.<role> (default: the cgroup's name).
#   kind riops|rbps|runits (caps; runits only for blkiso), weight
#   blkiso extra: "mode=request" is added for riops.
anchor_set() {
	local a=$1 c=$2 kind=$3 v=$4 role=${5:-$2} line file
	case $a/$kind in
	blkiso/riops) line="/$c mode=request riops=$v"; file=$SYS/tenant ;;
	blkiso/rbps) line="/$c rbps=$v"; file=$SYS/tenant ;;
	blkiso/runits) line="/$c runits=$v"; file=$SYS/tenant ;;
	io.max/riops|io.max/rbps) line="$RAW_MM $kind=$v"; file=$CG/$c/io.max ;;
	iocost/weight) line="default $v"; file=$CG/$c/io.weight ;;
	bfq/weight) line="default $v"; file=$CG/$c/io.bfq.weight ;;
	*) echo "anchor_set: $a has no $kind" >&2; return 1 ;;
	esac
	echo "$line" > "$file"
	meta "param.$role" "$line > ${file#/sys/}"
}

# ---- a run's record ----
run_begin() {	# scenario anchor case: a fresh run directory, cwd-free
	local n
	n=$(printf '%03d' "$bench_step")
	RUN=$BENCH_RUNS/$1/$n
	mkdir -p "$RUN"
	: > "$RUN/meta.txt"
	meta scenario "$1"; meta anchor "$2"; meta case "$3"
	meta device "$(anchor_dev "$2")"
}
meta() { printf '%s=%s\n' "$1" "$2" >> "$RUN/meta.txt"; }
run_skip() {	# scenario anchor case reason
	step "$1" "$2" "$3"
	run_begin "$1" "$2" "$3"
	meta skipped "$4"
}

# cgroups of a run: /sys/fs/cgroup/<name>, removed by cg_drop
cg_make() { local c; for c in "$@"; do mkdir "$CG/$c"; done; }
cg_drop() { local c; for c in "$@"; do rmdir "$CG/$c" 2>/dev/null || true; done; }

# fio_in cgroup prefix fio-args...: fio in a cgroup, output in $RUN/<prefix>*;
# direct=1 and unix-epoch log stamps for every job (a --name in the
# arguments starts a second job, which repeats the job options it needs);
# its pid in $RUN/<prefix>.pid (SIGTERM ends it and fio still writes JSON).
fio_in() {
	local c=$1 p=$RUN/$2; shift 2
	bash -c 'echo $$ > '"$CG/$c"'/cgroup.procs && echo $$ > '"$p.pid"' && exec "$@"' fio \
		fio --direct=1 --log_unix_epoch=1 --eta=never --output-format=json --output="$p.json" \
		--name="$c" "$@" > "$p.stdout" 2>&1
}

# rios of a cgroup on any device (io.stat), for "is it flowing yet"
cg_rios() {
	local s=0 tok
	for tok in $(cat "$CG/$1/io.stat" 2>/dev/null); do
		case $tok in rios=*) s=$((s + ${tok#rios=})) ;; esac
	done
	echo $s
}
wait_flowing() {	# cgroup min-rios
	local i
	for i in $(seq 3000); do
		[ "$(cg_rios "$1")" -gt "$2" ] && return 0
		sleep 0.01
	done
	return 1
}

collect() {	# scenario [device-file]: $BLKISO_OUT/<scenario>.json from the run records
	python3 "$BLKISO_TOP/selftests/bench/scen-collect.py" "$1" "$BENCH_RUNS/$1" "${2:-/tmp/device.txt}" \
		"$BLKISO_OUT/$1.json" "$(uname -r)" "${BLKISO_ICOUNT:-0}"
}
