#!/bin/bash
# demo.sh - the main job, run in the guest by `make demo` (tools/demo/run.sh)
# in the deterministic mode (run.sh -i): a noisy neighbour against a victim
# on one small SSD-like device, without and with blkiso.
#
#   1. shape a null_blk device like a small SSD through configfs and
#      measure its capacity (4k randread at high depth, 1 MiB reads)
#   2. attach blkiso over it, make two cgroups with +io: victim, neighbour
#   3. three phases of DEMO_SECS guest seconds each, through blkiso:
#        phase 1  victim alone
#        phase 2  victim + neighbour, no policy
#        phase 3  victim + neighbour, blkiso's feedback policy (below)
#      victim:    4k randread, psync QD1, fio rate_iops = 60% of its idle rate
#      neighbour: 1 MiB randread, io_uring QD32 (where io.max and iocost failed)
#
# Phase 3's policy is the README's recommended configuration and the
# default of `make bench`'s noisy-neighbour scenario since issue 20
# (selftests/bench/scen-noisy.sh; doc/controllers.md "Depth limit" explains
# each key): two lines an operator would write, the neighbour none:
#   device     depth_limit=1 tick_ms=10 window_ticks=5 (dm-N/conf): while a
#              protected tenant (one with an allocation) misses its latency
#              target in a tick, every tenant above its commitment (here
#              the unconfigured neighbour) is bounded in bios in flight
#              (half its depth, halved on later misses, raised by one every
#              two clean ticks), and its bios are cut to one lower request
#              while it is bound; a miss is seen within a tick or two (a
#              1 MiB read is ~1 ms of this device)
#   victim     alloc = 1.25 x its target IOPS, alloc_metric=iops,
#              isolation=wc: its promise (at exactly its rate its own
#              isolation controller delays fio's catch-up bursts, p99 1.7x
#              solo in the bench); wc: the allocation binds only in an
#              overload episode other tenants' misses are in, so it never
#              holds the victim back here.  latency_us = its phase-1 p99 x
#              1.5 (its SLO, measured alone in this boot), miss_pct=1: more
#              than 1% of its reads in a tick over the target (device
#              latency) binds the limit
#   neighbour  no line: a best-effort flood with no promise, bound only
#              while the victim misses, the whole device otherwise
# Until the eighteenth session phase 3 used the bench's old policy
# (device overload=shed tick_ms=10 window_ticks=5 holdoff_ticks=50
# mult_down=1; the victim's line as now; the neighbour "alloc=<1% of the
# device's 1 MiB reads/s> alloc_metric=iops slots=2 latency_us=1000000"):
# the victim held (p99 1.08x solo) but the neighbour got 26 MB/s (issue 20).
# DEMO_DEV_LINE and DEMO_NEIGH_LINE (%N: 1% of the device's 1 MiB reads/s)
# give it back:
#   DEMO_DEV_LINE="overload=shed tick_ms=10 window_ticks=5 holdoff_ticks=50 mult_down=1"
#   DEMO_NEIGH_LINE="alloc=%N alloc_metric=iops slots=2 latency_us=1000000"
#
# Everything lands in /out (build/vm/out/<run>/ on the host): fio JSON,
# per-second IOPS / mean-latency / latency-histogram logs per tenant and
# phase, blkiso's per-tenant sysfs stats before and after each phase, and
# demo-env.txt (the shaping, the rates, the quota).  tools/demo/report.py
# turns them into the table, build/demo/demo.json and demo.png.
#
# Lines starting with "DEMO-STEP n/N" mark progress; the host wrapper adds
# wall-clock elapsed and remaining time to them.  Guest time (/proc/uptime)
# is recorded around each fio run in demo-times.txt to align the tenants'
# per-second logs; it means nothing between runs (it leaps, see below).
#
# Synchronisation never relies on sleeps: in the deterministic mode guest
# time leaps while the guest waits on the host's 9p, so fio and the tools
# are read into the page cache first, logs are written to /tmp during the
# runs and copied to /out at the end, and the victim starts only once the
# neighbour's bios are seen arriving at blkiso.
set -euo pipefail

# The knobs: DEMO_* variables of the host's environment reach the guest
# (selftests/vm/run.sh passes them through).
out=${BLKISO_OUT:?run me in the guest through selftests/vm/run.sh}
secs=${DEMO_SECS:-10}		# per phase, guest seconds
cap_secs=${DEMO_CAP_SECS:-2}	# per capacity measurement
qd=${DEMO_HW_QD:-8}		# device: hw_queue_depth
lat_ns=${DEMO_LAT_NS:-200000}	# device: completion_nsec (timer completions)
mbps=${DEMO_MBPS:-1000}		# device: bandwidth, MiB/s (null_blk's own throttle)
size_mb=${DEMO_SIZE_MB:-4096}
v_frac=${DEMO_VICTIM_PCT:-60}	# victim rate, % of its own QD1 rate on the idle device
n_qd=${DEMO_NEIGH_QD:-32}
# phase 3's policy
dev_line=${DEMO_DEV_LINE:-depth_limit=1 tick_ms=10 window_ticks=5}
v_lat_pct=${DEMO_VICTIM_LAT_PCT:-150}	# victim latency_us, % of its phase-1 p99
v_miss=${DEMO_VICTIM_MISS_PCT:-1}	# victim miss_pct
v_alloc_pct=${DEMO_VICTIM_ALLOC_PCT:-125}	# victim alloc, % of its target IOPS
v_iso=${DEMO_VICTIM_ISOLATION:-wc}	# victim isolation: wc or strict (see above)
n_line=${DEMO_NEIGH_LINE-}	# the neighbour's line: none (%N: 1% of the 1 MiB reads/s)
steps=7
dm=demo-iso
dev=/dev/mapper/$dm
cg=/sys/fs/cgroup
now() { cut -d' ' -f1 /proc/uptime; }

step() { echo "DEMO-STEP $1/$steps $2"; }

# fio's JSON: one number (jq-free: fio's JSON is regular).
json_num() {	# file dir key
	awk -v d="\"$2\" : {" -v k="\"$3\" :" 'index($0, d) { in_d = 1 }
		in_d && index($0, k) { gsub(/[ ,]/, ""); split($0, a, ":"); print a[2]; exit }' "$1"
}

# Page cache first: fio and its libraries, the tools.
for b in fio dmsetup blockdev bash bc awk; do
	p=$(command -v "$b") || continue
	cat "$p" $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*') > /dev/null 2>&1 || true
done
fio --version > /dev/null
# io_uring and libaio engines are built into Debian's fio; warm its plugins anyway

step 1 "shape null_blk like a small SSD, measure its capacity"
modprobe dm-mod
insmod "$BLKISO_KO"
modprobe null_blk nr_devices=0
nb=/sys/kernel/config/nullb/demo
mkdir "$nb"
for kv in size=$size_mb blocksize=4096 submit_queues=1 hw_queue_depth=$qd irqmode=2 \
	  completion_nsec=$lat_ns mbps=$mbps memory_backed=0 power=1; do
	echo "${kv#*=}" > "$nb/${kv%%=*}"
done
lower=/dev/demo
[ -b $lower ]
cap() {	# name fio-args...
	local n=$1; shift
	fio --name="$n" --filename=$lower --direct=1 --rw=randread --runtime="$cap_secs" \
	    --time_based --eta=never --output-format=json --output="/tmp/cap-$n.json" "$@" > /dev/null
}
cap 4k --bs=4k --ioengine=libaio --iodepth=64
cap 4k-qd1 --bs=4k --ioengine=psync --iodepth=1
cap 1m --bs=1M --ioengine=io_uring --iodepth=32
cap_iops=$(json_num /tmp/cap-4k.json read iops)
cap_qd1=$(json_num /tmp/cap-4k-qd1.json read iops)
cap_bw=$(json_num /tmp/cap-1m.json read bw_bytes)
mb() { echo "$1 / 1000000" | bc -l; }
printf 'device: null_blk %s MiB, hw_queue_depth %s, %s us timer completions, %s MiB/s bandwidth\n' \
	"$size_mb" "$qd" "$((lat_ns / 1000))" "$mbps"
printf 'device capacity: 4k randread QD64 %.0f IOPS (ideal %s), 4k QD1 %.0f IOPS, 1M randread QD32 %.0f MB/s\n' \
	"$cap_iops" "$((qd * 1000000000 / lat_ns))" "$cap_qd1" "$(mb "$cap_bw")"

v_iops=$(printf '%.0f' "$(echo "$cap_qd1 * $v_frac / 100" | bc -l)")
v_iops=$(( (v_iops + 50) / 100 * 100 ))
v_alloc=$(( (v_iops * v_alloc_pct + 50) / 100 ))
n_alloc=$(printf '%.0f' "$(echo "$cap_bw / 1048576 / 100" | bc -l)")	# reads/s
[ "$n_alloc" -ge 1 ] || n_alloc=1
n_line=${n_line//%N/$n_alloc}
# the victim's line needs its solo p99: written once phase 1 has run
# (the bench's order: scen-noisy.sh's noisy_blkiso_victim)
v_line_pre="alloc=$v_alloc alloc_metric=iops isolation=$v_iso"

step 2 "attach blkiso, make cgroups victim and neighbour"
sectors=$(blockdev --getsz $lower)
dmsetup create $dm --table "0 $sectors blkiso $lower 0"
# no udev: /dev/mapper nodes are plain nodes, ask sysfs for dm-N
for d in /sys/block/dm-*; do [ "$(cat "$d/dm/name")" = $dm ] && sys=/sys/kernel/blkiso/${d##*/}; done
[ -d "$sys" ]
echo +io > $cg/cgroup.subtree_control
mkdir $cg/victim $cg/neighbour
v_id=$(stat -c %i $cg/victim)
n_id=$(stat -c %i $cg/neighbour)
echo "blkiso $(cat /sys/kernel/blkiso/version): $(dmsetup table $dm) ($sys)"
{
	echo "kernel=$BLKISO_KVER icount=$BLKISO_ICOUNT phase_secs=$secs"
	echo "dev_size_mb=$size_mb dev_hw_qd=$qd dev_lat_ns=$lat_ns dev_mbps=$mbps"
	echo "cap_4k_iops=$cap_iops cap_4k_qd1_iops=$cap_qd1 cap_1m_bw_bytes=$cap_bw"
	echo "victim_iops=$v_iops victim_pct=$v_frac"
	echo "victim_lat_pct=$v_lat_pct victim_alloc=$v_alloc victim_alloc_pct=$v_alloc_pct victim_isolation=$v_iso"
	echo "neighbour_qd=$n_qd"
	echo "victim_cgid=$v_id neighbour_cgid=$n_id blkiso_sysfs=$sys"
} > /tmp/demo-env.txt
echo "victim: 4k randread psync QD1 at fio rate_iops=$v_iops ($v_frac% of its QD1 rate on the idle device)"
echo "neighbour: 1M randread io_uring QD$n_qd, flat out"
echo "phase 3: blkiso's policy: device ${dev_line%% *}; victim alloc=$v_alloc IOPS, latency target its phase-1 p99 x $v_lat_pct%; neighbour ${n_line:-no line}"

# fio in a cgroup, logs per second, everything in /tmp until the end.
fio_in() {	# cgroup phase runtime fio-args...
	local c=$1 p=$2 rt=$3; shift 3
	local pre=/tmp/p$p-$c
	bash -c 'echo $$ > '"$cg/$c"'/cgroup.procs && echo $$ > '"$pre.pid"' && exec "$@"' fio \
		fio --name="$c" --filename=$dev --direct=1 --rw=randread --runtime="$rt" \
		--time_based --eta=never --output-format=json --output="$pre.json" \
		--write_iops_log="$pre" --write_lat_log="$pre" --log_avg_msec=1000 \
		--write_hist_log="$pre" --log_hist_msec=1000 "$@" > "$pre.stdout" 2>&1
}
victim() { fio_in victim "$1" "$secs" --bs=4k --ioengine=psync --rate_iops="$v_iops"; }
tstats() {	# phase when
	local id
	for id in $v_id $n_id; do
		[ -f "$sys/$id/stats" ] && echo "$id $(cat "$sys/$id/stats")"
	done > "/tmp/p$1-stats-$2.txt"
	echo "device $(cat "$sys/stats")" >> "/tmp/p$1-stats-$2.txt"
}
# The victim runs only while the neighbour's bios arrive at blkiso;
# the neighbour is stopped (SIGINT: fio still writes its JSON) right after.
together() {	# phase
	local npid arrived=0 i
	fio_in neighbour "$1" $((secs + 60)) --bs=1M --ioengine=io_uring --iodepth="$n_qd" &
	npid=$!
	echo "phase=$1 neighbour_start=$(now)" >> /tmp/demo-times.txt
	for i in $(seq 2000); do
		[ -f "$sys/$n_id/stats" ] &&
			arrived=$(tr ' ' '\n' < "$sys/$n_id/stats" | sed -n 's/^arrived=//p')
		[ "${arrived:-0}" -gt 100 ] && break
		sleep 0.01
	done
	[ "${arrived:-0}" -gt 0 ] || { echo "neighbour never started"; kill -TERM "$(cat "/tmp/p$1-neighbour.pid")"; exit 1; }
	echo "phase=$1 victim_start=$(now)" >> /tmp/demo-times.txt
	victim "$1"
	echo "phase=$1 victim_end=$(now)" >> /tmp/demo-times.txt
	kill -TERM "$(cat "/tmp/p$1-neighbour.pid")"
	wait $npid || true
}

step 3 "phase 1/3: victim alone, ${secs}s"
tstats 1 before
echo "phase=1 victim_start=$(now)" >> /tmp/demo-times.txt
victim 1
echo "phase=1 victim_end=$(now)" >> /tmp/demo-times.txt
tstats 1 after

step 4 "phase 2/3: victim + neighbour, no policy, ${secs}s"
tstats 2 before; together 2; tstats 2 after

step 5 "phase 3/3: victim + neighbour, blkiso policies, ${secs}s"
# the victim's SLO from its phase-1 p99 (fio: ns); "policy" lines as
# written, recorded for the report (demo-policy.txt: role line)
solo_p99_ns=$(json_num /tmp/p1-victim.json read 99.000000)
v_lat=$(( solo_p99_ns * v_lat_pct / 100 / 1000 ))
[ "$v_lat" -ge 1 ] || v_lat=1
v_line="$v_line_pre latency_us=$v_lat miss_pct=$v_miss"
echo "$dev_line" > "$sys/conf"
echo "/victim $v_line" > "$sys/tenant"
[ -z "$n_line" ] || echo "/neighbour $n_line" > "$sys/tenant"
{
	echo "device $dev_line"
	echo "victim $v_line"
	echo "neighbour $n_line"
} > /tmp/demo-policy.txt
echo "victim_solo_p99_us=$(( solo_p99_ns / 1000 )) victim_lat_us=$v_lat" >> /tmp/demo-env.txt
echo "device    > ${sys#/sys/}/conf:   $dev_line"
echo "victim    > ${sys#/sys/}/tenant: /victim $v_line (phase-1 p99 $(( solo_p99_ns / 1000 )) us x $v_lat_pct%)"
if [ -n "$n_line" ]; then echo "neighbour > ${sys#/sys/}/tenant: /neighbour $n_line"
else echo "neighbour   no line (best effort: bound by the depth limit while the victim misses)"; fi
tstats 3 before; together 3; tstats 3 after
# the last ticks' decisions (rings), for the record
cat "$sys/ring" > /tmp/p3-ring-device.txt
cat "$sys/$v_id/ring" > /tmp/p3-ring-victim.txt 2>/dev/null || true
cat "$sys/$n_id/ring" > /tmp/p3-ring-neighbour.txt 2>/dev/null || true

step 6 "collect results"
dmsetup remove $dm
rmmod blkiso
cp /tmp/demo-env.txt /tmp/demo-times.txt /tmp/demo-policy.txt /tmp/cap-*.json /tmp/p[123]-* "$out"/
echo "DEMO-DONE"
