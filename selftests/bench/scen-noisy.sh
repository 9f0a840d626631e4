# scen-noisy.sh - scenario 2 of `make bench` (sourced by scenarios-guest.sh):
# a noisy neighbour against a victim, per anchor, runs alternated.
#
#   victim     4k randrw 50/50, psync QD1, at a fixed rate: fio
#              rate_iops=V/2,V/2 with V = 60% of the raw device's QD1 randrw
#              rate measured in this boot (rounded to 100; under 1000: to 10)
#   neighbour  1 MiB random reads, io_uring QD128, flat out; it goes on
#              through EAGAIN read errors (continue_on_error=read,
#              ignore_error=EAGAIN) and they are
#              counted: under io.max, 6.1's io_uring gets EAGAIN for the
#              non-blocking reads that blk-throttle queues and later
#              dispatches when the device has no free tag (the reissue is
#              not possible from that context), which would end fio;
#              under blkiso too, while the neighbour has an allocation:
#              its bios that wait for a slot keep REQ_NOWAIT and fail the
#              same way when blkiso's worker sends them on
# Each anchor's run has three parts, in one state of the anchor:
#   solo       the victim alone, $secs s (its solo p99)
#   idle       the neighbour alone while the victim's cgroup idles,
#              $wc_secs s: work conservation = its MB/s then over its MB/s
#              alone on the raw device without any policy (the same
#              measurement in the run of the anchor "none")
#   together   the victim starts while the neighbour runs, $secs s; the
#              neighbour is stopped when the victim ends
# Policies, as a user would set them:
#   blkiso   the feedback controllers (doc/controllers.md "In the kernel"):
#            the lines below (noisy_blkiso_*); the victim's once its solo
#            part has given its solo p99
#   blkiso-cap  (not in the smoke) the caps-only policy: the
#            neighbour capped at half the raw device's 1 MiB bandwidth
#            (rbps=, the blkiso device), no line for the victim
#   io.max   the neighbour capped at half the bandwidth, an io.max rbps
#            line (the raw device)
#   iocost   calibrated io.cost.model + io.cost.qos, io.weight victim 1000,
#            neighbour 10 (the raw device)
#   bfq      scheduler bfq, io.bfq.weight victim 1000, neighbour 10
#   none     the raw device, scheduler none, nothing
#   blkiso-static, io.max-static  (not in the smoke) the static frontier
#            (issue 20): the neighbour capped with rbps= (the blkiso device
#            / io.max), no line for the victim, the cap bisected over
#            0..100% of the raw device's 1 MiB io_uring bandwidth until the
#            interval is at most 5% wide (5 runs): a step that holds the
#            victim's bounds (isolation mean >= 99%, p05 >= 95%, p99 <=
#            1.5x solo: scen-collect.py --held) raises the cap, one that
#            does not lowers it.  The victim's solo part runs once, in the
#            first step; the others reuse its records.  No idle part.
#            best_static (scen-collect.py) = the holding step with the
#            most neighbour MB/s
# Isolation per victim second: min(100, IOPS / V) x 100 (tools/demo/report.py).
#
# Knobs for trying other blkiso policies (defaults: the lines below):
#   BENCH_NOISY_ANCHORS    the anchors, in order
#   BENCH_NOISY_DEV        blkiso's device line (merged into dm-N/conf)
#   BENCH_NOISY_VICTIM     the victim's tenant line; %V = its target IOPS,
#                          %A = 1.25 x %V (an allocation with headroom),
#                          %L = its latency target in us (solo p99 x
#                          BENCH_NOISY_LAT_PCT / 100, default 150)
#   BENCH_NOISY_NEIGHBOUR  the neighbour's tenant line; %N = 1% of the raw
#                          device's 1 MiB read rate (reads/s); set and
#                          empty: no line (the neighbour unconfigured)
#   BENCH_NOISY_TRACE=1    blkiso's run also records the victim's latency as
#                          blkiso sees it, .map to completion (the
#                          blkiso_complete tracepoint, its cgroup only), one
#                          value in ns a line: lat-solo.txt and lat-v.txt,
#                          to set beside fio's (issue 20: where the tail is
#                          spent); with the pread64/pwrite64 syscalls'
#                          entries and exits (only the psync victim makes
#                          them) in trace-solo.txt and trace-v.txt
#   BENCH_NOISY_CPUS=split the victim's fio on CPU 0, the neighbour's on
#                          CPU 1 (cpus_allowed; needs BENCH_VM_CPUS=2), as a
#                          host with cpusets gives containers (issue 20:
#                          the victim's tail is a wait for the CPU)
# From the neighbour's start to the end of blkiso's run, the tenants' rings
# are read every 100 ms and the device's ring every 500 ms into the run's
# record (ring-dev.txt, ring-victim.txt, ring-neighbour.txt: header lines
# and one line per tick, ticks repeated across reads: keep the first line
# of each seq), the device's stats line every 500 ms with the time
# (stats-poll.txt: depth_limit, depth_held), and dev-stats.txt at the end.

noisy_anchors() {
	if [ -n "${BENCH_NOISY_ANCHORS:-}" ]; then echo "$BENCH_NOISY_ANCHORS"
	elif [ "$smoke" = 1 ]; then echo "blkiso io.max none"
	else echo "blkiso blkiso-cap io.max iocost bfq none blkiso-static io.max-static"; fi
}
noisy_nsteps() {
	local a n=0
	for a in $(noisy_anchors); do
		case $a in *-static) n=$((n + 5)) ;; *) n=$((n + 2)) ;; esac
	done
	echo $n
}

# blkiso's policy, as an operator would write it for a latency-sensitive
# tenant beside a batch reader that has no line of its own (README's
# recommended configuration; doc/controllers.md, the depth limit):
# device    depth_limit=1: a tenant above its commitment (here the
#           unconfigured neighbour) is bounded in bios in flight while a
#           protected tenant misses its latency target, raised again by
#           clean completions; its large bios, REQ_NOWAIT ones included,
#           are cut to one lower request while it is bound.
#           tick_ms=10 window_ticks=5: a miss is seen within a tick or two
#           (a 1 MiB read is ~1 ms of the ssd shape)
# victim    alloc=%A (1.25x its rate: the headroom the README recommends;
#           at its exact rate its own isolation controller delays fio's
#           catch-up bursts, doc/bench.md) alloc_metric=iops isolation=wc,
#           latency_us = its solo p99 x 1.5 (its SLO, measured alone in
#           this run), miss_pct=1: more than 1% of its bios over the target
#           (device latency) binds the limit
# neighbour no line.
# Until the fourteenth session the default was overload=shed with the
# neighbour allocated 1% of the device and slots=2 (the neighbour at 13% of
# best_static on ssd); the depth limit with its REQ_NOWAIT cut measured
# p99 1.31x with the neighbour at 128% and 146% of best_static in two
# ssd boots (doc/bench.md).  BENCH_NOISY_DEV/VICTIM/NEIGHBOUR give the old
# policy back:
#   BENCH_NOISY_DEV="overload=shed tick_ms=10 window_ticks=5 holdoff_ticks=50 mult_down=1"
#   BENCH_NOISY_VICTIM="latency_us=%L miss_pct=1"
#   BENCH_NOISY_NEIGHBOUR="alloc=%N alloc_metric=iops slots=2 latency_us=1000000"
noisy_blkiso_dev=${BENCH_NOISY_DEV:-depth_limit=1 tick_ms=10 window_ticks=5}
noisy_blkiso_victim=${BENCH_NOISY_VICTIM:-alloc=%A alloc_metric=iops isolation=wc latency_us=%L miss_pct=1}
noisy_blkiso_neighbour=${BENCH_NOISY_NEIGHBOUR-}

noisy_victim() {	# cgroup prefix runtime
	# shellcheck disable=SC2046  # noisy_cpus: one word or none
	fio_in "$1" "$2" --filename="$(anchor_dev "$na")" --rw=randrw --rwmixread=50 --bs=4k \
		--ioengine=psync --iodepth=1 --rate_iops="$((v_iops / 2)),$((v_iops / 2))" \
		--runtime="$3" --time_based --write_iops_log="$RUN/$2" --log_avg_msec=1000 \
		--write_hist_log="$RUN/$2" --log_hist_msec=1000 $(noisy_cpus 0)
}

# noisy_cpus cpu: fio's cpus_allowed for BENCH_NOISY_CPUS=split, else nothing
noisy_cpus() {
	[ "${BENCH_NOISY_CPUS:-}" = split ] || return 0
	[ "$(nproc)" -ge 2 ] || { echo "noisy: BENCH_NOISY_CPUS=split needs 2 vCPUs (BENCH_VM_CPUS=2)" >&2; return 1; }
	echo "--cpus_allowed=$1"
}

# solo_p99_us [fio-json]: the victim's solo p99 (reads and writes, the
# higher), from fio's JSON of the solo part (default $RUN/solo.json)
# noisy_victim_line cgroup rate solo-json: blkiso's victim line for a victim
# at rate IOPS, its latency target from its solo p99 (the operator's
# measurement of the workload alone; noisy and ratestep)
noisy_victim_line() {
	local lat vline
	lat=$(( $(solo_p99_us "$3") * ${BENCH_NOISY_LAT_PCT:-150} / 100 ))
	vline=${noisy_blkiso_victim//%V/$2}
	vline=${vline//%A/$(($2 * 5 / 4))}
	noisy_line "$1" "${vline//%L/$lat}" victim
}

# ring_poll_stop pid: end ring_poll (pid) and keep the device's stats
ring_poll_stop() {
	: > /tmp/ring.stop
	wait "$1" || true
	cp /tmp/ring-poll/*.txt "$RUN/" 2>/dev/null || true
	cp "$SYS/stats" "$RUN/dev-stats.txt"
}

solo_p99_us() {
	python3 - "${1:-$RUN/solo.json}" <<'EOF'
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])["jobs"][0]
print(round(max(j[d]["clat_ns"]["percentile"]["99.000000"] for d in ("read", "write")) / 1000))
EOF
}

noisy_meta_workloads() {
	meta victim_workload "randrw 50/50 bs=4k psync QD1 rate_iops=$((v_iops / 2)),$((v_iops / 2))"
	meta neighbour_workload "randread bs=1M io_uring QD128, flat out, continue_on_error=read ignore_error=EAGAIN"
	meta guest_cpus "$(nproc) vCPUs, fio split over CPUs 0/1: ${BENCH_NOISY_CPUS:-no}; $(cat /sys/kernel/debug/sched/preempt 2>/dev/null || echo "preempt: see cmdline") ($(cat /proc/cmdline))"
}

# poll_timer fifo: a poller's 100 ms wait without starting a process: a
# FIFO that nobody writes, open in $poll_fd, whose read times out
# (poll_wait).  Each poller runs in a background subshell of its own.
poll_timer() {
	rm -f "$1" && mkfifo "$1" && exec {poll_fd}<>"$1"
}

poll_wait() {
	local none
	read -r -t 0.1 -u "$poll_fd" none || true
}

# dstat_poll: the raw device's stat line (/sys/block/<dev>/stat; its read
# sectors are counted as requests complete) with the time, every 100 ms,
# into the guest's own /tmp/dstat.txt until /tmp/dstat.stop exists
# (dstat_start, dstat_stop, which copies it to $RUN/dstat.txt).  The
# neighbour's MB/s comes from it (scen-collect.py), not from fio's log:
# fio counts a read when it reaps it, and under blkiso io_uring's inline
# submitter may wait for the lower queue's tags for seconds on a slow
# device (128 whole 1 MiB reads, 9 requests each on 2 slots), then reaps
# them at once: its log had no line for the first 2-3 s and then a second
# above the device's capacity (nineteenth session, issue 20).  No process
# started and no 9p round trip per poll (a FIFO's read times the wait,
# the files are in the guest's memory): with a sleep(1) and a file on /out
# every 100 ms the one vCPU's stalls put 1 ms spikes into a QD1 victim's
# 250 ms p99s at 1,400 IOPS (twentieth session: ratestep's phase 1 p99
# 2.47x solo under blkiso, and io.max's static frontier at that rate fell
# from 757 to 29 MB/s).
dstat_poll() {
	local line
	poll_timer /tmp/dstat.fifo || return 1
	while [ ! -e /tmp/dstat.stop ]; do
		read -r line < "$RAWQ/../stat" || true
		printf '%s %s\n' "${EPOCHREALTIME:-}" "$line" >> /tmp/dstat.txt
		poll_wait
	done
}

# dstat_start: the device poll in the background, pid in dpid
dstat_start() {
	rm -f /tmp/dstat.stop /tmp/dstat.txt
	dstat_poll &
	dpid=$!
}

# dstat_stop: end the device poll; its lines into $RUN/dstat.txt
dstat_stop() {
	: > /tmp/dstat.stop
	wait "$dpid" || true
	cp /tmp/dstat.txt "$RUN/dstat.txt" 2>/dev/null || true
}

# noisy_flood_stop: end the neighbour, then its device poll
noisy_flood_stop() {
	kill -TERM "$(cat "$RUN/n.pid")"
	wait $npid || true
	dstat_stop
}

# noisy_flood device runtime label [engine]: the neighbour (cgroup $n)
# flat out in the background (io_uring unless engine), its pid in npid,
# and the device poll (dstat_poll, pid in dpid); 1 if it never flows
noisy_flood() {
	dstat_start
	# shellcheck disable=SC2046  # noisy_cpus: one word or none
	fio_in $n n --filename="$1" --rw=randread --bs=1M --ioengine="${4:-io_uring}" \
		--iodepth=128 --runtime="$2" --time_based \
		--continue_on_error=read --ignore_error=EAGAIN \
		--write_iops_log="$RUN/n" --log_avg_msec=1000 $(noisy_cpus 1) &
	npid=$!
	wait_flowing $n 20 && return 0
	echo "noisy: the neighbour never started ($3)" >&2
	noisy_flood_stop
	return 1
}

noisy_line() {	# cgroup line role: a blkiso tenant line (empty: none)
	[ -n "$2" ] || return 0
	echo "/$1 $2" > "$SYS/tenant"
	meta "param.$3" "/$1 $2 > ${SYS#/sys/}/tenant"
}

# ring_poll victim neighbour: the device's and the tenants' rings into
# $RUN/ring-* (how often: ring-poll.py) until ring_poll_stop, which copies
# them from the guest's memory.  One python3 process, one read(2) a file
# (bash's read builtin took a sysfs file a byte at a time and stalled the
# victim): it runs in blkiso's runs only, so whatever it costs the one vCPU
# disturbs blkiso's victim and no other anchor's.
ring_poll() {
	rm -rf /tmp/ring-poll /tmp/ring.stop && mkdir /tmp/ring-poll || return 1
	exec python3 "$BLKISO_TOP/selftests/bench/ring-poll.py" "$SYS" \
		"$(stat -c %i "$CG/$1")" "$(stat -c %i "$CG/$2")" /tmp/ring-poll /tmp/ring.stop
}

TRACE=/sys/kernel/tracing
TRACE_EV=$TRACE/events/blkiso/blkiso_complete
noisy_trace_on() {	# cgroup: its bios' blkiso_complete events and the psync syscalls into the trace buffer
	[ "${BENCH_NOISY_TRACE:-0}" = 1 ] || return 0
	echo 0 > $TRACE/tracing_on
	echo 4096 > $TRACE/buffer_size_kb
	echo > $TRACE/trace
	echo "cgid == $(stat -c %i "$CG/$1")" > $TRACE_EV/filter
	echo 1 > $TRACE_EV/enable
	for sc in sys_enter_pread64 sys_exit_pread64 sys_enter_pwrite64 sys_exit_pwrite64; do
		echo 1 > $TRACE/events/syscalls/$sc/enable
	done
	echo 1 > $TRACE/tracing_on
}
noisy_trace_off() {	# prefix: the trace into $RUN/trace-<prefix>.txt, its latencies (ns) into lat-<prefix>.txt
	[ "${BENCH_NOISY_TRACE:-0}" = 1 ] || return 0
	echo 0 > $TRACE_EV/enable
	echo 0 > $TRACE/events/syscalls/enable
	cp $TRACE/trace "$RUN/trace-$1.txt"
	sed -n 's/.* lat_ns=\([0-9]*\).*/\1/p' "$RUN/trace-$1.txt" > "$RUN/lat-$1.txt"
	echo > $TRACE/trace
}

noisy_one() {	# anchor
	local na=$1 a=$1 v n npid dpid rpid=
	[ "$na" = blkiso-cap ] && a=blkiso
	step noisy "$na" solo
	run_begin noisy "$na" victim-qd1-neighbour-1m-qd128
	[ "$a" = "$na" ] || meta device "$(anchor_dev "$a")"	# blkiso-cap: the blkiso device
	v=nv$bench_step n=nn$bench_step
	cg_make $v $n
	meta victim_target_iops "$v_iops"; meta secs "$secs"; meta wc_secs "$wc_secs"
	noisy_meta_workloads
	anchor_on "$a"
	case $na in
	blkiso)
		echo "$noisy_blkiso_dev" > "$SYS/conf"
		meta param.device "$noisy_blkiso_dev > ${SYS#/sys/}/conf"
		noisy_line $n "${noisy_blkiso_neighbour//%N/$n_alloc}" neighbour ;;
	blkiso-cap|io.max) anchor_set "$a" $n rbps "$n_cap" neighbour
		[ "$na" = io.max ] || meta param.victim "no line" ;;
	iocost|bfq) anchor_set "$na" $v weight 1000 victim; anchor_set "$na" $n weight 10 neighbour ;;
	esac
	na=$a
	[ "$1" = blkiso ] && noisy_trace_on $v
	noisy_victim $v solo "$secs"
	[ "$1" = blkiso ] && noisy_trace_off solo
	# the victim's line once its solo p99 is known
	[ "$1" = blkiso ] && noisy_victim_line $v "$v_iops" "$RUN/solo.json"
	step noisy "$1" together
	noisy_flood "$(anchor_dev "$na")" $((secs + wc_secs + 60)) "$1" || { anchor_off "$na"; return 1; }
	if [ "$1" = blkiso ]; then
		ring_poll $v $n &
		rpid=$!
	fi
	meta idle_start_ms "$(epoch_ms)"
	sleep "$wc_secs"
	meta victim_start_ms "$(epoch_ms)"
	[ "$1" = blkiso ] && noisy_trace_on $v
	noisy_victim $v v "$secs"
	[ "$1" = blkiso ] && noisy_trace_off v
	noisy_flood_stop
	if [ -n "$rpid" ]; then
		ring_poll_stop "$rpid"
		echo default > "$SYS/conf"
	fi
	anchor_off "$na"
	cg_drop $v $n
}

# noisy_static_one anchor cap-pct solo-run: one bisection step, the
# neighbour capped at cap-pct % of DEV_N1M; solo-run: the run whose solo
# records this one reuses (empty: measure them)
noisy_static_one() {
	local na=$1 a=${1%-static} pct=$2 cap v n npid dpid engine=io_uring
	cap=$((DEV_N1M / 100 * pct))
	step "${ns_scen:-noisy}" "$na" "${ns_case:-}cap-${pct}pct"
	run_begin "${ns_scen:-noisy}" "$na" "${ns_case:-}cap-${pct}pct"
	v=nv$bench_step n=nn$bench_step
	cg_make $v $n
	meta victim_target_iops "$v_iops"; meta secs "$secs"; meta wc_secs 0; meta cap_pct "$pct"
	noisy_meta_workloads
	meta param.victim "no line"
	# io.max: libaio, whose reads blk-throttle queues wait instead of
	# failing with EAGAIN as 6.1's io_uring's do (the neighbour moved
	# 0 MB/s at every io_uring cap from 50 % to 96 %)
	[ "$a" = io.max ] && engine=libaio
	meta neighbour_engine "$engine"
	anchor_set "$a" $n rbps "$cap" neighbour
	na=$a
	if [ -n "$3" ]; then
		cp "$3"/solo* "$RUN/"
		meta solo_from "${3##*/}"
	else
		noisy_victim $v solo "$secs"
	fi
	noisy_flood "$(anchor_dev "$a")" $((secs + 60)) "$1 cap ${pct}%" "$engine" || return 1
	meta idle_start_ms "$(epoch_ms)"
	meta victim_start_ms "$(epoch_ms)"
	noisy_victim $v v "$secs"
	noisy_flood_stop
	cg_drop $v $n
}

# noisy_static anchor: the bisection (5 steps); the highest cap that held in
# ns_lo.  ns_scen, ns_case: the scenario and a case prefix of its runs
# (default noisy, none; scen-ratestep.sh bisects once per rate)
noisy_static() {
	local lo=0 hi=100 mid solo= held
	while [ $((hi - lo)) -gt 5 ]; do
		mid=$(((lo + hi) / 2))
		noisy_static_one "$1" $mid "$solo" || return 1
		[ -n "$solo" ] || solo=$RUN
		held=$(python3 "$BLKISO_TOP/selftests/bench/scen-collect.py" --held "$RUN")
		echo "${ns_scen:-noisy}: $1 ${ns_case:-}cap ${mid}% of the device: victim bounds $([ "$held" = 1 ] && echo held || echo missed)"
		if [ "$held" = 1 ]; then lo=$mid; else hi=$mid; fi
	done
	ns_lo=$lo
}

scen_noisy() {
	local a
	v_iops=$(round "$(calc "$DEV_QD1 * 60 / 100")")
	if [ "$v_iops" -ge 1000 ]; then v_iops=$(( (v_iops + 50) / 100 * 100 ))
	else v_iops=$(( (v_iops + 5) / 10 * 10 )); fi	# a slow shape: 10s
	n_cap=$((DEV_N1M / 2))
	n_alloc=$(( (DEV_N1M / 1048576 + 50) / 100 ))
	[ "$n_alloc" -ge 1 ] || n_alloc=1
	wc_secs=$(( secs / 2 > 2 ? secs / 2 : 2 ))
	echo "noisy: victim target $v_iops IOPS (60% of QD1 $DEV_QD1), neighbour cap rbps=$n_cap (io.max, blkiso-cap), blkiso floor $n_alloc reads/s"
	for a in $(noisy_anchors); do
		case $a in
		*-static) noisy_static "$a" ;;
		*) noisy_one "$a" ;;
		esac
	done
}
