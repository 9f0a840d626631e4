# scen-ratestep.sh - scenario "ratestep" of `make bench` (sourced by
# scenarios-guest.sh; issue 20): the victim's rate doubled, then halved,
# mid-run, the neighbour running throughout, the victim's line left as
# configured for its first rate (what the controller does without a hand
# change).  The workloads are noisy's (scen-noisy.sh): the victim 4k randrw
# 50/50 psync QD1 at a fixed rate, the neighbour 1 MiB random reads flat out.
#
#   rates      R = 30% of the raw device's QD1 randrw rate measured in this
#              boot (rounded as noisy rounds), then 2R (noisy's 60%), then
#              R/2: three phases of $secs s each, one fio run of three jobs
#              in sequence (start delays), IOPS and latency-histogram logs
#              every 250 ms
#   solo       the same three phases with the victim alone (its solo p99 per
#              rate), in each anchor's state, before the neighbour starts
#   io.max-static  per rate, the static frontier of noisy (the neighbour
#              capped with io.max rbps, libaio, bisected 0..100% in 5 runs
#              of $secs s): best_static per rate
#   blkiso     noisy's default policy (noisy_blkiso_*): the device line, the
#              victim's line with %V = R, %A = 1.25 R, %L = 1.5x its solo
#              p99 at R; the neighbour no line
#   none       the raw device, nothing
#   io.max     the neighbour capped at io.max-static's best cap for R (the
#              operator's static cap tuned at the first rate), libaio
# The neighbour starts 1 s before the victim's first phase and stops when
# its last ends.  blkiso's run reads the rings every 100 ms as noisy's does.
# Figures (scen-collect.py ratestep): per phase and per 250 ms interval after
# each step, and the settle time after each step.

# BENCH_RATESTEP_ANCHORS: the anchors, in order (the smoke: blkiso and none,
# no best_static, so no neighbour settle time)
rs_anchors() {
	if [ -n "${BENCH_RATESTEP_ANCHORS:-}" ]; then echo "$BENCH_RATESTEP_ANCHORS"
	elif [ "$smoke" = 1 ]; then echo "blkiso none"
	else echo "io.max-static blkiso none io.max"; fi
}
rs_nsteps() {
	local a n=0
	for a in $(rs_anchors); do
		case $a in *-static) n=$((n + 15)) ;; *) n=$((n + 1)) ;; esac
	done
	echo $n
}

# rs_phases cgroup prefix: the victim's three phases (R, 2R, R/2), $secs s
# each, as one fio run of three jobs in sequence; logs <prefix>1..3_*.
# Each job starts by its start delay (1 s, then $secs later each), not after
# the one before ends (stonewall): fio sets a stonewalled job up only then,
# and the victim sent nothing for ~0.25 s at each step (guest time, 6.1
# -i), in which the depth limit let go (no protected I/O) and the
# neighbour's misses began an overload episode: a pause, not a rate step.
# A delayed job is set up when its delay ends, as the first one is, so the
# phases meet within a few tens of ms (fio 3.33 on the host).
rs_phases() {
	local c=$1 p=$2 k args=() r
	k=0
	for r in $rs_r1 $rs_r2 $rs_r3; do
		k=$((k + 1))
		[ $k = 1 ] || args+=(--name="$p$k")
		args+=(--startdelay=$((1 + (k - 1) * secs)))
		# shellcheck disable=SC2046  # noisy_cpus: one word or none
		args+=(--filename="$(anchor_dev "$na")" --rw=randrw --rwmixread=50 --bs=4k
			--ioengine=psync --iodepth=1 --rate_iops="$((r / 2)),$((r / 2))"
			--runtime="$secs" --time_based --write_iops_log="$RUN/$p$k" --log_avg_msec=250
			--write_hist_log="$RUN/$p$k" --log_hist_msec=250 $(noisy_cpus 0))
	done
	fio_in "$c" "$p" "${args[@]}"
}

# rs_flood engine: the neighbour flat out, 250 ms IOPS log, pid in npid,
# and the raw device's poll (noisy's dstat_poll, pid in dpid: the
# neighbour's MB/s is measured at the device, as noisy's is)
rs_flood() {
	dstat_start
	# shellcheck disable=SC2046  # noisy_cpus: one word or none
	fio_in $n n --filename="$(anchor_dev "$na")" --rw=randread --bs=1M --ioengine="$1" \
		--iodepth=128 --runtime=$((3 * secs + 60)) --time_based \
		--continue_on_error=read --ignore_error=EAGAIN \
		--write_iops_log="$RUN/n" --log_avg_msec=250 $(noisy_cpus 1) &
	npid=$!
	wait_flowing $n 20 && return 0
	echo "ratestep: the neighbour never started ($na)" >&2
	noisy_flood_stop
	return 1
}

rs_one() {	# anchor [cap-pct]: one run of the three phases
	local na=$1 v n npid rpid= engine=io_uring
	step ratestep "$1" steps${2:+ cap ${2}%}
	run_begin ratestep "$1" "steps"
	v=rv$bench_step n=rn$bench_step
	cg_make $v $n
	meta rates "$rs_r1 $rs_r2 $rs_r3"; meta secs "$secs"
	meta victim_workload "randrw 50/50 bs=4k psync QD1, rate_iops R/2,R/2 then 2R, then R/2; 250 ms logs"
	anchor_on "$na"
	case $na in
	blkiso)
		echo "$noisy_blkiso_dev" > "$SYS/conf"
		meta param.device "$noisy_blkiso_dev > ${SYS#/sys/}/conf"
		noisy_line $n "${noisy_blkiso_neighbour//%N/$n_alloc}" neighbour ;;
	io.max)
		engine=libaio
		meta cap_pct "$2"
		anchor_set io.max $n rbps "$((DEV_N1M / 100 * $2))" neighbour ;;
	esac
	meta neighbour_engine "$engine"
	rs_phases $v s
	# the victim's line for its first rate, from its solo p99 at R
	[ "$na" = blkiso ] && noisy_victim_line $v "$rs_r1" "$RUN/s.json"
	rs_flood $engine || { anchor_off "$na"; return 1; }
	if [ "$na" = blkiso ]; then
		ring_poll $v $n &
		rpid=$!
	fi
	sleep 1
	meta victim_start_ms "$(epoch_ms)"
	rs_phases $v v
	noisy_flood_stop
	if [ -n "$rpid" ]; then
		ring_poll_stop "$rpid"
		cp "$SYS/$(stat -c %i "$CG/$v")/stats" "$RUN/victim-stats.txt" 2>/dev/null || true
		echo default > "$SYS/conf"
	fi
	anchor_off "$na"
	cg_drop $v $n
}

scen_ratestep() {
	local a k r lo hi held best=
	rs_r1=$(round "$(calc "$DEV_QD1 * 30 / 100")")
	if [ "$rs_r1" -ge 1000 ]; then rs_r1=$(( (rs_r1 + 50) / 100 * 100 ))
	else rs_r1=$(( (rs_r1 + 5) / 10 * 10 )); fi
	rs_r2=$((rs_r1 * 2)) rs_r3=$((rs_r1 / 2))
	n_alloc=$(( (DEV_N1M / 1048576 + 50) / 100 ))
	[ "$n_alloc" -ge 1 ] || n_alloc=1
	echo "ratestep: victim rates $rs_r1 -> $rs_r2 -> $rs_r3 IOPS (30% of QD1 $DEV_QD1, doubled, halved)"
	for a in $(rs_anchors); do
		case $a in
		*-static)
			# noisy's bisection, once per rate, into this scenario's runs
			k=0
			for r in $rs_r1 $rs_r2 $rs_r3; do
				k=$((k + 1))
				v_iops=$r ns_scen=ratestep ns_case="r$k-" noisy_static "$a" || return 1
				[ $k = 1 ] && best=$ns_lo
			done ;;
		io.max) [ -n "$best" ] && [ "$best" -gt 0 ] || { run_skip ratestep io.max steps \
				"no io.max-static cap held the victim's bounds at R (or not run)"; continue; }
			rs_one io.max "$best" ;;
		*) rs_one "$a" ;;
		esac
	done
}
