# scen-accuracy.sh - scenario 1 of `make bench` (sourced by
# scenarios-guest.sh): how close each rate cap holds a tenant to its quota.
#
# One tenant, flat-out random reads (libaio QD16, so it always asks for more
# than its quota) for $secs guest seconds per run, at quotas of 200..5120
# 4 KiB-equivalent IOPS (4k-eq = bytes / 4096) and bs 4k / 64k / 1M.  Per
# (bs, quota), runs alternated:
#   blkiso iops-Q-bs   mode=request riops=Q*4096/bs*P   (the blkiso device)
#   blkiso work-Q-bs   runits=2*Q (2 KiB work units)   (the blkiso device)
#   io.max iops-Q-bs   riops=Q*4096/bs*P                (the raw device)
#   io.max bps-Q-bs    rbps=Q*4096                      (the raw device)
# P: the requests one bio of bs is at the device, which splits it at its
# max_sectors_kb (a 1 MiB read is 9 at null_blk's 128 KiB): both io.max and
# blkiso count riops in the device's requests.  The quotas at 64k and 1M
# are multiples of 16 and 256 so that riops is a whole number.  iocost, bfq and none set no rate: one skipped record each.
# Error: |achieved - quota| / quota, over the run (fio's I/O count / its
# runtime) and per 1 s window (fio's IOPS log, --log_avg_msec=1000).

acc_pairs() {
	if [ "$smoke" = 1 ]; then echo "4k:1000"
	else echo "4k:200 4k:1000 4k:5000 64k:800 64k:4800 1M:2560 1M:5120"; fi
}
acc_nsteps() { echo $(( $(acc_pairs | wc -w) * 4 + 3 )); }

acc_bytes() { case $1 in 4k) echo 4096 ;; 64k) echo 65536 ;; 1M) echo 1048576 ;; esac; }

acc_pieces() {	# bytes: the requests one bio of that size is at the raw device
	local max=$(( $(cat /sys/block/${RAW##*/}/queue/max_sectors_kb) * 1024 ))

	echo $(( ($1 + max - 1) / max ))
}

acc_one() {	# anchor mode bs quota
	local a=$1 m=$2 bs=$3 q=$4 b kind v c
	b=$(acc_bytes "$bs")
	case $m in
	iops) kind=riops v=$((q * 4096 / b * $(acc_pieces "$b"))) ;;
	work) kind=runits v=$((q * 2)) ;;
	bps) kind=rbps v=$((q * 4096)) ;;
	esac
	step accuracy "$a" "$m-$q-$bs"
	run_begin accuracy "$a" "$m-$q-$bs"
	c=acc$bench_step
	cg_make $c
	anchor_set "$a" $c $kind $v tenant
	meta quota "$q"; meta bs "$b"; meta secs "$secs"
	meta workload "randread bs=$bs libaio iodepth=16, flat out"
	fio_in $c t --filename="$(anchor_dev "$a")" --rw=randread --bs="$bs" --ioengine=libaio \
		--iodepth=16 --runtime="$secs" --time_based --write_iops_log="$RUN/t" --log_avg_msec=1000
	cg_drop $c
}

scen_accuracy() {
	local p bs q
	for p in $(acc_pairs); do
		bs=${p%%:*} q=${p#*:}
		acc_one blkiso iops "$bs" "$q"
		acc_one io.max iops "$bs" "$q"
		acc_one blkiso work "$bs" "$q"
		acc_one io.max bps "$bs" "$q"
	done
	run_skip accuracy iocost all "iocost sets no per-cgroup rate: io.weight shares capacity, and its only ceiling, io.cost.qos max=, scales the whole device's vrate, not one cgroup's"
	run_skip accuracy bfq all "BFQ weights share the device; they set no rate"
	run_skip accuracy none all "no policy, no rate"
}
