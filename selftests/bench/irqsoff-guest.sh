#!/bin/bash
# irqsoff-guest.sh - the longest IRQs-off sections of blkiso with many
# configured tenants (issue 14), by the module's debug timestamp pairs
# (irqsoff_trace=1; Debian's kernels have no irqsoff tracer).  Run in the
# guest, in the deterministic mode (guest time counts instructions), with
# N online vCPUs:
#
#   bash selftests/vm/run.sh -i -c N -t 2400 selftests/bench/irqsoff-guest.sh 1000 10000
#
# (run.sh boots the deterministic guest with one online CPU and onlines the
# others before this script), or with one online vCPU and P possible CPUs
# (hotpluggable slots: the per-CPU folds walk every possible CPU):
#
#   BLKISO_QEMU_EXTRA="-smp 1,maxcpus=4" \
#       bash selftests/vm/run.sh -i -t 3000 selftests/bench/irqsoff-guest.sh 1000 10000
#
# For each N given (ascending), it configures tenants up to N cgroups
# (riops=1000000, never biting), lets 8 of them read (fio psync, 4 of them
# held by riops=200 so bios park and the dispatcher runs), changes the
# device line once (tick_ms), and prints the longest section of each kind
# over 3 s: the tick's walk over the active tenants, one dispatch pass,
# one tenant's step of the device line's walk over the meters (no lock is
# held across tenants), the sysfs work's step; and a stats read's time
# (IRQs on).  Then it makes ACTIVE (default 1000, at most N) tenants active
# at once (one direct 4 KiB read each, under tick_ms=10000 so none leaves
# the active list meanwhile) and prints the tick's longest section (it
# visits at most BLKISO_FB_TICK_BATCH = 32 tenants under the device lock,
# its folds take no lock) and that section's cost per tenant it visited.
set -u
N_LIST=("$@")
[ ${#N_LIST[@]} -gt 0 ] || N_LIST=(1000 10000)
# shellcheck source=selftests/bench/lib-guest.sh
. "$BLKISO_TOP/selftests/bench/lib-guest.sh"	# null_dev, CG
P=/sys/module/blkiso/parameters

# BENCH_IRQSOFF_CPU=K: the script and all it starts on CPU K only, the
# other online vCPUs idle (the control of a several-vCPU run: in the
# deterministic mode a busy vCPU's turns count in another's sections)
[ -z "${BENCH_IRQSOFF_CPU:-}" ] || taskset -pc "$BENCH_IRQSOFF_CPU" $$ > /dev/null || exit 1
modprobe dm-mod
insmod "$BLKISO_KO" irqsoff_trace=1 || exit 1
modprobe null_blk nr_devices=0
null_dev irq size=1024 blocksize=4096 || exit 1
sectors=$(blockdev --getsz /dev/irq)
dmsetup create irq-iso --table "0 $sectors blkiso /dev/irq 0 1 tick_ms=100" || exit 1
for d in /sys/block/dm-*; do
	[ "$(cat "$d/dm/name")" = irq-iso ] && SYS=/sys/kernel/blkiso/${d##*/}
done
echo +io > $CG/cgroup.subtree_control
mkdir $CG/irq
echo +io > $CG/irq/cgroup.subtree_control
echo "# cpus: possible $(cat /sys/devices/system/cpu/possible), online $(cat /sys/devices/system/cpu/online), the script on $(taskset -pc $$ | sed 's/.*: //')"

have=0
for n in "${N_LIST[@]}"; do
	t0=$(cut -d' ' -f1 /proc/uptime)
	# one mkdir per 500 cgroups: a fork per cgroup costs more than blkiso
	for ((i = have; i < n; i += 500)); do
		dirs=()
		for ((k = i; k < n && k < i + 500; k++)); do
			dirs+=("$CG/irq/c$k")
		done
		mkdir "${dirs[@]}"
	done
	for ((i = have; i < n; i++)); do
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
	active=$(grep -o 'tick_tenants=[0-9]*' "$SYS/stats")
	wait "${pids[@]}"
	IFS=, read -r tick disp conf sysfs < $P/irqsoff_max_ns
	echo "IRQSOFF tenants=$n online=$(cat /sys/devices/system/cpu/online) possible=$(cat /sys/devices/system/cpu/possible) $active tick_ns=$tick dispatch_ns=$disp conf_ns=$conf sysfs_ns=$sysfs setup_s=$(echo "$t1 - $t0" | bc)"
	for ((j = 0; j < 4; j++)); do
		echo "/irq/c$((j * n / 8)) riops=1000000" > "$SYS/tenant"
	done
	# ACTIVE tenants active at once: the tick's cost per active tenant
	a=${ACTIVE:-1000}
	[ "$a" -le "$n" ] || a=$n
	echo "tick_ms=10000" > "$SYS/conf"
	seq0=$(tail -n 1 "$SYS/ring" | cut -d' ' -f1)
	while [ "$(tail -n 1 "$SYS/ring" | cut -d' ' -f1)" = "$seq0" ]; do sleep 0.05; done
	echo "0,0,0,0" > $P/irqsoff_max_ns
	seq0=$(tail -n 1 "$SYS/ring" | cut -d' ' -f1)
	for ((i = 0; i < a; i++)); do
		(echo $BASHPID > $CG/irq/c$((i * n / a))/cgroup.procs
		 exec dd if=/dev/mapper/irq-iso of=/dev/null bs=4k count=1 \
			skip=$((i % 200)) iflag=direct status=none)
	done
	active=$(grep -o 'tick_tenants=[0-9]*' "$SYS/stats")
	while [ "$(tail -n 1 "$SYS/ring" | cut -d' ' -f1)" = "$seq0" ]; do sleep 0.05; done
	IFS=, read -r tick disp conf sysfs < $P/irqsoff_max_ns
	na=${active#*=}
	# a tick section visits at most BLKISO_FB_TICK_BATCH (32) tenants
	nb=$((na < 32 ? (na > 0 ? na : 1) : 32))
	echo "IRQSOFF_ACTIVE tenants=$n online=$(cat /sys/devices/system/cpu/online) possible=$(cat /sys/devices/system/cpu/possible) $active tick_ns=$tick per_section_tenant_ns=$((tick / nb))"
	# back to 100 ms ticks, and the active tenants off the list again
	echo "tick_ms=100" > "$SYS/conf"
	for ((w = 0; w < 600; w++)); do
		grep -q 'tick_tenants=0 ' "$SYS/stats" && break
		sleep 0.1
	done
done
dmsetup remove irq-iso
