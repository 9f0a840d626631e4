#!/bin/bash
# irqsoff-guest.sh - the longest IRQs-off sections of blkiso with many
# configured tenants (issue 14), by the module's debug timestamp pairs
# (irqsoff_trace=1; Debian's kernels have no irqsoff tracer).  Run in the
# guest, in the deterministic mode (guest time counts instructions):
#
#   bash selftests/vm/run.sh -i -c 2 -t 3000 selftests/bench/irqsoff-guest.sh 1000 10000
#   bash selftests/vm/run.sh -i -c 4 -t 3000 selftests/bench/irqsoff-guest.sh 1000 10000
#
# For each N given (ascending), it configures tenants up to N cgroups
# (riops=1000000, never biting), lets 8 of them read (fio psync, 4 of them
# held by riops=200 so bios park and the dispatcher runs), changes the
# device line once (tick_ms), and prints the longest section of each kind
# over 3 s: the tick's walk, one dispatch pass, the device line's walk over
# the meters, the sysfs work's walk; and a stats read's time (IRQs on).
set -u
N_LIST=("$@")
[ ${#N_LIST[@]} -gt 0 ] || N_LIST=(1000 10000)
CG=/sys/fs/cgroup
P=/sys/module/blkiso/parameters

modprobe dm-mod
insmod "$BLKISO_KO" irqsoff_trace=1 || exit 1
modprobe null_blk nr_devices=0
nb=/sys/kernel/config/nullb/irq
mkdir $nb
echo 1024 > $nb/size; echo 4096 > $nb/blocksize; echo 1 > $nb/power
sectors=$(blockdev --getsz /dev/irq)
dmsetup create irq-iso --table "0 $sectors blkiso /dev/irq 0 1 tick_ms=100" || exit 1
for d in /sys/block/dm-*; do
	[ "$(cat "$d/dm/name")" = irq-iso ] && SYS=/sys/kernel/blkiso/${d##*/}
done
echo +io > $CG/cgroup.subtree_control
mkdir $CG/irq
echo +io > $CG/irq/cgroup.subtree_control
echo "# cpus: possible $(cat /sys/devices/system/cpu/possible), online $(nproc)"

have=0
for n in "${N_LIST[@]}"; do
	t0=$(cut -d' ' -f1 /proc/uptime)
	for ((i = have; i < n; i++)); do
		mkdir $CG/irq/c$i
		echo "/irq/c$i riops=1000000" > "$SYS/tenant"
	done
	have=$n
	# the sysfs work makes the directories: wait for the last one
	for ((w = 0; w < 600; w++)); do
		[ -d "$SYS/$(stat -c %i $CG/irq/c$((n - 1)))" ] && break
		sleep 1
	done
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "0,0,0,0" > $P/irqsoff_max_ns
	pids=()
	for ((j = 0; j < 8; j++)); do
		c=c$((j * n / 8))
		[ $j -lt 4 ] && echo "/irq/$c riops=200" > "$SYS/tenant"
		(echo $BASHPID > $CG/irq/$c/cgroup.procs
		 exec fio --name=r$j --filename=/dev/mapper/irq-iso --rw=randread --bs=4k \
			--ioengine=psync --direct=1 --runtime=3 --time_based \
			--eta=never --output=/dev/null) &
		pids+=($!)
	done
	sleep 1
	echo "tick_ms=100" > "$SYS/conf"
	cat "$SYS/stats" > /dev/null	# an RCU walk with IRQs on: not in the figures
	wait "${pids[@]}"
	IFS=, read -r tick disp conf sysfs < $P/irqsoff_max_ns
	echo "IRQSOFF tenants=$n cpus=$(nproc) tick_ns=$tick dispatch_ns=$disp conf_ns=$conf sysfs_ns=$sysfs setup_s=$(echo "$t1 - $t0" | bc)"
	for ((j = 0; j < 4; j++)); do
		echo "/irq/c$((j * n / 8)) riops=1000000" > "$SYS/tenant"
	done
done
dmsetup remove irq-iso
