# scen-buffered.sh - scenario "buffered writer neighbour" of `make bench`
# (sourced by scenarios-guest.sh): a victim reading with O_DIRECT beside a
# writer that floods the page cache, per anchor, runs alternated.  Issue 16:
# the writer's writeback is submitted by the flusher, and each anchor has to
# charge it to the writer's cgroup (cgroup writeback) to hold it.
#
#   device     its own null_blk, memory-backed (it holds an ext4), shaped
#              like the other scenarios' (BENCH_HW_QD slots, BENCH_LAT_NS
#              timer completions) but at BENCH_BUF_MBPS MiB/s (default 200:
#              slower than the guest fills its page cache, as a disk is
#              slower than a host's memory), measured and calibrated for
#              iocost in this boot like the main device, before mkfs
#   victim     4k random reads of a 64 MiB file on the ext4, O_DIRECT,
#              psync QD1, at a fixed rate: fio rate_iops=V, V = 60% of the
#              device's QD1 4k random read rate measured in this boot
#              (rounded to 100)
#   writer     1 MiB buffered writes (psync), flat out, rewriting a 128 MiB
#              file on the same ext4, in a cgroup with the memory and io
#              controllers (cgroup writeback), memory.max 256M;
#              vm.dirty_bytes 32M, vm.dirty_background_bytes 8M for the
#              scenario.  Its figures are its write(2) rate, which dirty
#              throttling holds to the rate its writeback completes at
# Each anchor's run has noisy's three parts (scen-noisy.sh): the victim
# alone ($secs s, its solo p99), the writer alone while the victim idles
# ($wc_secs s: work conservation against the "none" run's), then both
# ($secs s).  The filesystem is mounted through the anchor's device for the
# run (blkiso: a blkiso dm device over the null_blk, created for the run:
# dm holds its lower device exclusively) and unmounted after it, which
# writes back what the writer left dirty.
# Policies, as a user would set them:
#   blkiso      the writer capped at half the device's 1 MiB write bandwidth
#               (wbps=), the victim given its rate as an allocation
#               (alloc=V alloc_metric=iops isolation=strict)
#   blkiso-cap  (not in the smoke) the writer's cap only, as io.max has it
#   io.max      the writer's cap as an io.max wbps line on the raw device
#   iocost      calibrated io.cost.model + io.cost.qos, io.weight victim
#               1000, writer 10
#   bfq         scheduler bfq, io.bfq.weight victim 1000, writer 10
#   none        the raw device, scheduler none, nothing
# Records and metrics: those of noisy (scen-collect.py), the writer in the
# neighbour's place (n_iops logs of 1 MiB writes).

BUF_DEV=/dev/bufdev
BUF_DM=buf-iso
BUF_MNT=/mnt/bench-buf

buffered_anchors() {
	if [ -n "${BENCH_BUF_ANCHORS:-}" ]; then echo "$BENCH_BUF_ANCHORS"
	elif [ "$smoke" = 1 ]; then echo "blkiso io.max none"
	else echo "blkiso blkiso-cap io.max iocost bfq none"; fi
}
buffered_nsteps() { echo $(( $(buffered_anchors | wc -w) * 2 + 1 )); }

# the device, its capacity, iocost's model for it, the ext4 and the
# victim's file; writes /tmp/device-buffered.txt
buffered_setup() {
	local mbps=${BENCH_BUF_MBPS:-200} c
	step buffered device "shape a memory-backed null_blk, measure it, mkfs"
	null_dev bufdev size=1024 blocksize=4096 submit_queues=1 hw_queue_depth="$qd" \
		irqmode=2 completion_nsec="$lat_ns" mbps="$mbps" memory_backed=1
	echo none > /sys/block/bufdev/queue/scheduler
	BUF_MM=$(cat /sys/block/bufdev/dev)
	for c in "r4k --rw=randread --bs=4k --ioengine=libaio --iodepth=64" \
		 "s4k --rw=read --bs=4k --ioengine=libaio --iodepth=64" \
		 "s1m --rw=read --bs=1M --ioengine=libaio --iodepth=32" \
		 "w4k --rw=randwrite --bs=4k --ioengine=libaio --iodepth=64" \
		 "ws4k --rw=write --bs=4k --ioengine=libaio --iodepth=64" \
		 "ws1m --rw=write --bs=1M --ioengine=libaio --iodepth=32" \
		 "qd1 --rw=randread --bs=4k --ioengine=psync --iodepth=1"; do
		set -- $c
		CAP_DEV=$BUF_DEV CAP_TAG=buf- cap_run "$@"
	done
	BUF_R4K=$(round "$(json_num /tmp/cap-buf-r4k.json read iops)")
	BUF_S4K=$(round "$(json_num /tmp/cap-buf-s4k.json read iops)")
	BUF_RBPS=$(round "$(json_num /tmp/cap-buf-s1m.json read bw_bytes)")
	BUF_W4K=$(round "$(json_num /tmp/cap-buf-w4k.json write iops)")
	BUF_WS4K=$(round "$(json_num /tmp/cap-buf-ws4k.json write iops)")
	BUF_WBPS=$(round "$(json_num /tmp/cap-buf-ws1m.json write bw_bytes)")
	BUF_QD1=$(round "$(json_num /tmp/cap-buf-qd1.json read iops)")
	BUF_MODEL="$BUF_MM ctrl=user model=linear rbps=$BUF_RBPS rseqiops=$BUF_S4K rrandiops=$BUF_R4K wbps=$BUF_WBPS wseqiops=$BUF_WS4K wrandiops=$BUF_W4K"
	BUF_QOS="$BUF_MM enable=1 ctrl=user rpct=95.00 rlat=$((lat_ns * 5 / 1000)) wpct=95.00 wlat=$((lat_ns * 5 / 1000)) min=25.00 max=150.00"
	{
		echo "name=null_blk"
		echo "size_mb=1024"
		echo "memory_backed=1"
		echo "filesystem=ext4"
		echo "hw_queue_depth=$qd"
		echo "completion_us=$((lat_ns / 1000))"
		echo "mbps_limit=$mbps"
		echo "scheduler=none"
		echo "randread_4k_qd64_iops=$BUF_R4K"
		echo "read_4k_qd64_iops=$BUF_S4K"
		echo "read_1m_qd32_bytes_s=$BUF_RBPS"
		echo "randwrite_4k_qd64_iops=$BUF_W4K"
		echo "write_4k_qd64_iops=$BUF_WS4K"
		echo "write_1m_qd32_bytes_s=$BUF_WBPS"
		echo "randread_4k_qd1_iops=$BUF_QD1"
		echo "dirty_bytes=$((32 << 20))"
		echo "dirty_background_bytes=$((8 << 20))"
		echo "iocost_model=$BUF_MODEL"
		echo "iocost_qos=$BUF_QOS"
	} > /tmp/device-buffered.txt
	echo "buffered: null_blk 1024 MiB memory-backed, $qd slots x $((lat_ns / 1000)) us, $mbps MiB/s: 4k randread QD1 $BUF_QD1 IOPS, 1M write $((BUF_WBPS / 1000000)) MB/s"
	# ext4's checksums need the crc32c driver loaded first
	modprobe crc32c_generic; modprobe libcrc32c; modprobe ext4
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $BUF_DEV
	mkdir -p $BUF_MNT
	mount -t ext4 $BUF_DEV $BUF_MNT
	dd if=/dev/zero of=$BUF_MNT/victim bs=1M count=64 conv=fsync status=none
	umount $BUF_MNT
	BUF_DIRTY=$(cat /proc/sys/vm/dirty_bytes)
	BUF_DIRTY_BG=$(cat /proc/sys/vm/dirty_background_bytes)
	BUF_RATIO=$(cat /proc/sys/vm/dirty_ratio)
	BUF_RATIO_BG=$(cat /proc/sys/vm/dirty_background_ratio)
	echo $((32 << 20)) > /proc/sys/vm/dirty_bytes
	echo $((8 << 20)) > /proc/sys/vm/dirty_background_bytes
	echo +memory > $CG/cgroup.subtree_control
}

buffered_teardown() {
	if [ "$BUF_DIRTY" != 0 ]; then echo "$BUF_DIRTY" > /proc/sys/vm/dirty_bytes
	else echo "$BUF_RATIO" > /proc/sys/vm/dirty_ratio; fi
	if [ "$BUF_DIRTY_BG" != 0 ]; then echo "$BUF_DIRTY_BG" > /proc/sys/vm/dirty_background_bytes
	else echo "$BUF_RATIO_BG" > /proc/sys/vm/dirty_background_ratio; fi
	echo -memory > $CG/cgroup.subtree_control 2>/dev/null || true
}

# buf_mount anchor: the ext4 through the anchor's device; sets BUF_SYS
# for blkiso
buf_mount() {
	local d
	case $1 in
	blkiso)
		dmsetup create $BUF_DM --table "0 $(blockdev --getsz $BUF_DEV) blkiso $BUF_DEV 0"
		for d in /sys/block/dm-*; do
			[ "$(cat "$d/dm/name")" = $BUF_DM ] && BUF_SYS=/sys/kernel/blkiso/${d##*/}
		done
		mount -t ext4 /dev/mapper/$BUF_DM $BUF_MNT
		meta device /dev/mapper/$BUF_DM ;;
	iocost)
		echo "$BUF_MODEL" > $CG/io.cost.model
		echo "$BUF_QOS" > $CG/io.cost.qos
		meta param.io.cost.model "$BUF_MODEL"
		meta param.io.cost.qos "$BUF_QOS"
		mount -t ext4 $BUF_DEV $BUF_MNT ;;
	bfq)
		echo bfq > /sys/block/bufdev/queue/scheduler
		meta param.scheduler bfq
		mount -t ext4 $BUF_DEV $BUF_MNT ;;
	*)	mount -t ext4 $BUF_DEV $BUF_MNT ;;
	esac
}
buf_umount() {	# anchor
	umount $BUF_MNT
	case $1 in
	blkiso) dmsetup remove $BUF_DM ;;
	iocost) echo "$BUF_MM enable=0" > $CG/io.cost.qos ;;
	bfq) echo none > /sys/block/bufdev/queue/scheduler ;;
	esac
}

buf_line() {	# file line role: one control line, recorded
	echo "$2" > "$1"
	meta "param.$3" "$2 > ${1#/sys/}"
}

buf_victim() {	# cgroup prefix runtime
	fio_in "$1" "$2" --filename=$BUF_MNT/victim --readonly --rw=randread --bs=4k \
		--ioengine=psync --iodepth=1 --rate_iops="$v_iops" \
		--runtime="$3" --time_based --write_iops_log="$RUN/$2" --log_avg_msec=1000 \
		--write_hist_log="$RUN/$2" --log_hist_msec=1000
}

cg_wios() {	# cgroup: its wios on any device (io.stat)
	local s=0 tok
	for tok in $(cat "$CG/$1/io.stat" 2>/dev/null); do
		case $tok in wios=*) s=$((s + ${tok#wios=})) ;; esac
	done
	echo $s
}

buffered_one() {	# anchor
	local na=$1 a=$1 v n npid i
	[ "$na" = blkiso-cap ] && a=blkiso
	step buffered "$na" solo
	run_begin buffered "$na" victim-4k-qd1-writer-1m-buffered
	meta device $BUF_DEV
	v=bv$bench_step n=bw$bench_step
	cg_make $v $n
	echo $((256 << 20)) > "$CG/$n/memory.max"
	meta param.writer_memory.max "$((256 << 20)) > fs/cgroup/$n/memory.max"
	meta victim_target_iops "$v_iops"; meta secs "$secs"; meta wc_secs "$wc_secs"
	meta victim_workload "randread bs=4k psync QD1 O_DIRECT rate_iops=$v_iops, a 64 MiB file on the ext4"
	meta neighbour_workload "write bs=1M psync buffered, flat out, a 128 MiB file on the ext4"
	buf_mount "$a"
	case $na in
	blkiso)
		buf_line "$BUF_SYS/tenant" "/$n wbps=$w_cap" writer
		buf_line "$BUF_SYS/tenant" "/$v alloc=$v_iops alloc_metric=iops isolation=strict" victim ;;
	blkiso-cap)
		buf_line "$BUF_SYS/tenant" "/$n wbps=$w_cap" writer
		meta param.victim "no line" ;;
	io.max) buf_line "$CG/$n/io.max" "$BUF_MM wbps=$w_cap" writer ;;
	iocost) buf_line "$CG/$v/io.weight" "default 1000" victim
		buf_line "$CG/$n/io.weight" "default 10" writer ;;
	bfq) buf_line "$CG/$v/io.bfq.weight" "default 1000" victim
		buf_line "$CG/$n/io.bfq.weight" "default 10" writer ;;
	esac
	buf_victim $v solo "$secs"
	step buffered "$na" together
	fio_in $n n --direct=0 --filename=$BUF_MNT/writer --size=128M --rw=write --bs=1M \
		--ioengine=psync --runtime=$((secs + wc_secs + 60)) --time_based \
		--write_iops_log="$RUN/n" --log_avg_msec=1000 &
	npid=$!
	# the writer's writeback is flowing (its cgroup's writes reach a device)
	for i in $(seq 3000); do
		[ "$(cg_wios $n)" -gt 0 ] && break
		sleep 0.01
	done
	meta idle_start_ms "$(epoch_ms)"
	sleep "$wc_secs"
	meta victim_start_ms "$(epoch_ms)"
	buf_victim $v v "$secs"
	kill -TERM "$(cat "$RUN/n.pid")"
	wait $npid || true
	[ "$a" != blkiso ] || cp "$BUF_SYS/stats" "$RUN/dev-stats.txt"
	buf_umount "$a"
	cg_drop $v $n
}

scen_buffered() {
	local a
	buffered_setup
	v_iops=$(round "$(calc "$BUF_QD1 * 60 / 100")")
	v_iops=$(( (v_iops + 50) / 100 * 100 ))
	w_cap=$((BUF_WBPS / 2))
	wc_secs=$(( secs / 2 > 2 ? secs / 2 : 2 ))
	echo "buffered: victim target $v_iops IOPS (60% of QD1 $BUF_QD1), writer cap wbps=$w_cap (blkiso, io.max)"
	for a in $(buffered_anchors); do buffered_one "$a"; done
	buffered_teardown
}
