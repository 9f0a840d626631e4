# scen-scale.sh - scenario 5 of `make bench` (sourced by scenarios-guest.sh):
# throughput and guest instructions per I/O with 1,000 configured cgroups
# and fio in 8 of them, against the same 8 fio processes in 1 configured
# cgroup.  Deterministic mode only: there 1e9 / total IOPS is the guest
# instructions per I/O while the one vCPU is saturated (8 runnable fio
# processes, a null_blk device with no shaping that completes at once:
# the CPU is the bottleneck, as in overhead-guest.sh).
#
# Per anchor, runs alternated, on its own device (scaledev, and a blkiso
# device over it): 8 x fio 4k randread psync QD1 for $scale_secs s, first
# in /scale/one (configured alone), then in 8 of /scale/c0..c999 (spread
# over the range) with all 1,000 configured:
#   blkiso   "/scale/cN riops=1000000000 runits=1000000000" (never bites)
#   io.max   "MAJ:MIN riops=1000000000" in each io.max (never bites)
#   iocost   io.cost.model 10^7 IOPS / 10^11 B/s (never the limit), qos
#            min=max=100 (vrate pinned), io.weight 100..199
#   bfq      scheduler bfq, io.bfq.weight 100..199
#   none     the raw device, nothing (the 1,000 cgroups exist)
# BENCH_SMOKE=1: 100 cgroups, blkiso and none only.

scale_anchors() { if [ "$smoke" = 1 ]; then echo "blkiso none"; else echo "blkiso io.max iocost bfq none"; fi; }
scale_nsteps() { echo $(( $(scale_anchors | wc -w) * 2 )); }
SCALE_N=1000
if [ "$smoke" = 1 ]; then SCALE_N=100; fi

scale_setup() {
	local sectors d i
	null_dev scaledev size=1024
	echo none > /sys/block/scaledev/queue/scheduler
	SC_MM=$(cat /sys/block/scaledev/dev)
	sectors=$(blockdev --getsz /dev/scaledev)
	dmsetup create scale-iso --table "0 $sectors blkiso /dev/scaledev 0"
	for d in /sys/block/dm-*; do
		[ "$(cat "$d/dm/name")" = scale-iso ] && SC_SYS=/sys/kernel/blkiso/${d##*/}
	done
	mkdir $CG/scale
	echo +io > $CG/scale/cgroup.subtree_control
	mkdir $CG/scale/one
	for ((i = 0; i < SCALE_N; i++)); do mkdir $CG/scale/c$i; done
	SC_MODEL="$SC_MM ctrl=user model=linear rbps=100000000000 rseqiops=10000000 rrandiops=10000000 wbps=100000000000 wseqiops=10000000 wrandiops=10000000"
	SC_QOS="$SC_MM enable=1 ctrl=user rpct=95.00 rlat=100000 wpct=95.00 wlat=100000 min=100.00 max=100.00"
	{
		echo "name=null_blk"
		echo "size_mb=1024"
		echo "shaping=none (defaults: completes at once, softirq)"
		echo "scheduler=none"
		echo "cgroups_configured=$SCALE_N"
		echo "iocost_model=$SC_MODEL"
		echo "iocost_qos=$SC_QOS"
	} > /tmp/device-scale.txt
}

scale_conf() {	# anchor cgroup(under /scale) index: one cgroup's line
	local a=$1 c=$2 i=$3
	case $a in
	blkiso) echo "/scale/$c riops=1000000000 runits=1000000000" > "$SC_SYS/tenant" ;;
	io.max) echo "$SC_MM riops=1000000000" > "$CG/scale/$c/io.max" ;;
	iocost) echo "default $((100 + i % 100))" > "$CG/scale/$c/io.weight" ;;
	bfq) echo "default $((100 + i % 100))" > "$CG/scale/$c/io.bfq.weight" ;;
	esac
}

scale_fio() {	# anchor prefix cgroup...: 8 fio processes, one per named cgroup
	local a=$1 p=$2 dev=/dev/scaledev j=0 c pids=()
	shift 2
	[ "$a" = blkiso ] && dev=/dev/mapper/scale-iso
	for c in "$@"; do
		fio_in "scale/$c" "$p$j" --filename=$dev --rw=randread --bs=4k --ioengine=psync \
			--iodepth=1 --runtime="$scale_secs" --time_based &
		pids+=($!)
		j=$((j + 1))
	done
	wait "${pids[@]}"
}

scale_one() {	# anchor
	local a=$1 i many=()
	step scale "$a" 1-cgroup
	run_begin scale "$a" "$SCALE_N-cgroups-8-busy"
	meta secs "$scale_secs"; meta jobs 8
	meta device "$([ "$a" = blkiso ] && echo /dev/mapper/scale-iso || echo /dev/scaledev)"
	meta workload "8 x fio 4k randread psync QD1, one process per cgroup"
	case $a in
	iocost)
		echo "$SC_MODEL" > $CG/io.cost.model; echo "$SC_QOS" > $CG/io.cost.qos
		meta param.io.cost.model "$SC_MODEL"; meta param.io.cost.qos "$SC_QOS" ;;
	bfq) echo bfq > /sys/block/scaledev/queue/scheduler; meta param.scheduler bfq ;;
	esac
	meta cgroups "$SCALE_N"
	scale_conf "$a" one 0
	case $a in
	blkiso) meta param.line "/scale/cN riops=1000000000 runits=1000000000 > kernel/blkiso/${SC_SYS##*/}/tenant" ;;
	io.max) meta param.line "$SC_MM riops=1000000000 > fs/cgroup/scale/cN/io.max" ;;
	iocost) meta param.line "default 100+N%100 > fs/cgroup/scale/cN/io.weight" ;;
	bfq) meta param.line "default 100+N%100 > fs/cgroup/scale/cN/io.bfq.weight" ;;
	none) meta param.line "nothing" ;;
	esac
	scale_fio "$a" one one one one one one one one one
	step scale "$a" 1000-cgroups
	for ((i = 0; i < SCALE_N; i++)); do scale_conf "$a" c$i $i; done
	for ((i = 0; i < 8; i++)); do many+=("c$((i * SCALE_N / 8 + 7))"); done
	meta busy "${many[*]}"
	scale_fio "$a" many "${many[@]}"
	case $a in
	io.max)
		echo "$SC_MM riops=max" > $CG/scale/one/io.max
		for ((i = 0; i < SCALE_N; i++)); do echo "$SC_MM riops=max" > $CG/scale/c$i/io.max; done ;;
	iocost) echo "$SC_MM enable=0" > $CG/io.cost.qos ;;
	bfq) echo none > /sys/block/scaledev/queue/scheduler ;;
	esac
}

scen_scale() {
	local a
	scale_secs=$(( secs / 2 > 2 ? secs / 2 : 2 ))
	[ "$smoke" = 1 ] && scale_secs=1
	scale_setup
	for a in $(scale_anchors); do scale_one "$a"; done
}
