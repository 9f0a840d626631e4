# scen-convergence.sh - scenario 4 of `make bench` (sourced by
# scenarios-guest.sh): how fast a capped tenant's rate settles within +-5%
# of its quota after its load changes.  One fio run of two jobs in one
# cgroup: job a for $secs/2 s, then job b (startdelay) for $secs/2 s (a
# runs 300 ms longer: no gap while b starts); per-100 ms IOPS logs with
# unix-epoch stamps (a common time base).
#
#   load-step  quota 5000 4k-eq IOPS; a: 4k randread psync QD1 (on this
#              device ~4,000 IOPS: under the quota), b: 4k randread libaio
#              QD32 (~38,000: far over it).  blkiso mode=request riops=5000,
#              io.max riops=5000
#   size-step  quota 2000 4k-eq IOPS; a: 4k randread libaio QD8, b: 64k
#              randread libaio QD8 (both over it).  blkiso runits=4000
#              (work units), io.max rbps=8192000
# settle_s: from the step (b's start) until the trailing 1 s rate (4k-eq)
# is within +-5% of the quota and stays there; settle_100ms_s the same on
# the bare 100 ms samples.  iocost, bfq and none set no rate: skipped.

conv_cases() { if [ "$smoke" = 1 ]; then echo load-step; else echo "load-step size-step"; fi; }
conv_nsteps() { echo $(( $(conv_cases | wc -w) * 2 + 3 )); }

conv_one() {	# anchor case
	local a=$1 k=$2 c half dev q kind v
	half=$(( secs / 2 > 1 ? secs / 2 : 1 ))
	dev=$(anchor_dev "$a")
	case $k in
	load-step) q=5000 kind=riops v=5000 ;;
	size-step) q=2000
		if [ "$a" = blkiso ]; then kind=runits v=4000; else kind=rbps v=8192000; fi ;;
	esac
	step convergence "$a" "$k"
	run_begin convergence "$a" "$k"
	c=conv$bench_step
	cg_make $c
	anchor_set "$a" $c $kind $v tenant
	meta quota "$q"; meta half_secs "$half"
	case $k in
	load-step)
		meta workload "a: 4k randread psync QD1 ${half}s, then b: 4k randread libaio QD32 ${half}s"
		meta bs_a 4096; meta bs_b 4096
		fio_in $c t --filename="$dev" --rw=randread --bs=4k --ioengine=psync --iodepth=1 \
			--runtime=$((half * 1000 + 300))ms --time_based --write_iops_log="$RUN/a" --log_avg_msec=100 \
			--name=b --filename="$dev" --rw=randread --bs=4k --ioengine=libaio --iodepth=32 \
			--startdelay=$half --runtime=$half --time_based --write_iops_log="$RUN/b" \
			--log_avg_msec=100 ;;
	size-step)
		meta workload "a: 4k randread libaio QD8 ${half}s, then b: 64k randread libaio QD8 ${half}s"
		meta bs_a 4096; meta bs_b 65536
		fio_in $c t --filename="$dev" --rw=randread --bs=4k --ioengine=libaio --iodepth=8 \
			--runtime=$((half * 1000 + 300))ms --time_based --write_iops_log="$RUN/a" --log_avg_msec=100 \
			--name=b --filename="$dev" --rw=randread --bs=64k --ioengine=libaio --iodepth=8 \
			--startdelay=$half --runtime=$half --time_based --write_iops_log="$RUN/b" \
			--log_avg_msec=100 ;;
	esac
	cg_drop $c
}

scen_convergence() {
	local k
	for k in $(conv_cases); do
		conv_one blkiso "$k"
		conv_one io.max "$k"
	done
	run_skip convergence iocost all "iocost sets no per-cgroup rate to converge to (io.weight shares capacity)"
	run_skip convergence bfq all "BFQ weights set no rate"
	run_skip convergence none all "no policy, no rate"
}
