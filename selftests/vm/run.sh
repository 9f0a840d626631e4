#!/bin/bash
# run.sh - boot a Debian guest kernel under QEMU (TCG) and run one script in it.
#
#   run.sh [-k SERIES] [-i] [-t SECONDS] [-c CPUS] [-m MEM] [-N SIZE] SCRIPT [ARGS...]
#
#   -k SERIES   guest kernel: 6.1 (default) or 6.12, as unpacked by `make deps`,
#               or debug, the checking kernel of `make debug-kernel`
#   -i          deterministic mode: -icount shift=0,sleep=off, one vCPU; guest
#               time counts guest instructions (1 ns each) and idle time
#               jumps to the next timer, so rates and costs repeat exactly
#   -t SECONDS  wall-clock limit for the whole run (default 600)
#   -c CPUS     vCPUs (default 2; in the deterministic mode 1 unless -c is
#               given: then CPUS vCPUs take turns on one host thread, the
#               guest boots with one online (maxcpus=1) and the others are
#               onlined before SCRIPT runs; see below)
#   -m MEM      guest memory (default 2G)
#   -N SIZE     attach a QEMU NVMe controller (-device nvme) with one
#               namespace of SIZE (e.g. 2G): /dev/nvme0n1 in the guest, the
#               real nvme driver, one I/O queue per vCPU ($BLKISO_NVME=SIZE
#               does the same; see below)
#
# The guest sees the host's / read-only at /host (so SCRIPT, the project
# tree, blkiso.ko and every host binary are there) and a fresh writable
# directory at /out, which is build/vm/out/<run>/ on the host (results, JSON;
# $BLKISO_VM_OUT chooses another directory).
# SCRIPT runs under bash in the guest with these variables set:
#   BLKISO_TOP    the project tree (as seen from the guest)
#   BLKISO_KO     blkiso.ko built for this kernel
#   BLKISO_OUT    /out
#   BLKISO_KVER   the guest kernel release;  BLKISO_ICOUNT  1 in deterministic mode
# and selftests/guest/lib.sh offers the helpers (null_blk, cgroups, fio...).
#
# BLKISO_KO_HOST: the host path of the blkiso.ko to test instead of
# build/kmod-<release>/blkiso.ko (selftests/host/dkms.sh).
# BLKISO_QEMU_EXTRA: more QEMU arguments, word-split (e.g. a TCG plugin:
# selftests/bench/insncount/profile.sh).
# BLKISO_APPEND: more words for the guest kernel's command line (e.g.
# preempt=full: Debian's kernels are PREEMPT_DYNAMIC, voluntary by default).
#
# The NVMe device (-N, BLKISO_NVME): its backing file is a sparse raw file
# of this run's own in the host's memory (/dev/shm, else the run's output
# directory; removed when run.sh exits; what the guest writes takes host
# memory, up to SIZE), opened with aio=threads: a guest read costs a
# host pread on a fresh file (holes or what this run wrote),
# never the host's disk, whose writeback (a module build's) stalled reads
# of a file there.  init loads nvme.ko when it sees the controller (PCI
# class 0x010802).  Its I/O completes in host time, out of the guest's
# instructions: in the deterministic mode a guest that idles while it
# waits for the device has its clock leap to its next timer (sleep=off),
# again and again until the host thread answers, so a loaded host made a
# read take 6 to 700 ms of guest time.  A test that times nvme I/O there
# keeps the vCPU busy meanwhile (target_test's gu_busy_start()).  Its rates
# are the emulation's (QEMU's TCG, a host thread pool): use only ratios
# measured in one boot.
#
# Several vCPUs in the deterministic mode (-i -c N, N > 1): a guest kernel
# that brings its secondary CPUs up at boot does not reach its script in
# useful time under QEMU 7.2's round-robin TCG (doc/robustness.md), while
# onlining them from user space takes 0.1-0.5 s of guest time each.  So
# run.sh adds maxcpus=1 to the command line (unless BLKISO_APPEND gives a
# maxcpus= of its own) and job.sh onlines every present CPU before SCRIPT:
# SCRIPT starts with all N online, as in the ordinary mode.
#
# The exit status is the script's.  A kernel panic or oops (oops=panic,
# panic=-1, -no-reboot), a WARNING/BUG in dmesg (status 90), or a hang
# (status 124 after SECONDS) end the run promptly, print the console's tail
# and leave no qemu process behind.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
series=6.1 icount=0 limit=600 cpus=2 icpus=1 mem=2G nvme=${BLKISO_NVME:-}
while getopts "k:it:c:m:N:" opt; do
	case $opt in
	k) series=$OPTARG ;;
	i) icount=1 ;;
	t) limit=$OPTARG ;;
	c) cpus=$OPTARG icpus=$OPTARG ;;
	m) mem=$OPTARG ;;
	N) nvme=$OPTARG ;;
	*) sed -n '2,20s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: run.sh [-k SERIES] [-i] [-t S] [-N SIZE] SCRIPT [ARGS...]" >&2; exit 2; }
script=$(realpath "$1"); shift

kroot=$(bash "$top/selftests/vm/kroot.sh" "$series") || exit 2
ver=$(cat "$kroot/.version")
# BLKISO_KO_HOST: another blkiso.ko for this kernel (a DKMS build).
ko=${BLKISO_KO_HOST:-$top/build/kmod-$ver/blkiso.ko}
[ -f "$ko" ] || echo "run.sh: note: $ko is not built (make module KVER=$series)" >&2

# The initramfs depends only on the kernel and the runner's own files.
initrd=$top/build/vm/$series/initramfs.cpio
if [ ! -f "$initrd" ] || [ "$top/selftests/vm/init" -nt "$initrd" ] ||
   [ "$top/selftests/vm/mkinitramfs.sh" -nt "$initrd" ] ||
   [ "$kroot/.version" -nt "$initrd" ]; then
	bash "$top/selftests/vm/mkinitramfs.sh" "$series" "$initrd" 2>/dev/null || exit 2
fi

# BLKISO_VM_OUT names the output directory (else a fresh one per run, and
# build/vm/out/latest points at the newest: concurrent runs move it).
# Several deterministic vCPUs: boot with one, online the rest in job.sh.
online_all=0
if [ "$icount" = 1 ] && [ "$icpus" -gt 1 ]; then
	online_all=1
	case " ${BLKISO_APPEND:-} " in
	*" maxcpus="*) ;;
	*) BLKISO_APPEND="${BLKISO_APPEND:+$BLKISO_APPEND }maxcpus=1" ;;
	esac
fi

out=${BLKISO_VM_OUT:-$top/build/vm/out/$(date +%Y%m%d-%H%M%S)-$$}
mkdir -p "$out"
[ -n "${BLKISO_VM_OUT:-}" ] || ln -sfn "$out" "$top/build/vm/out/latest"
{
	echo "export BLKISO_TOP='/host$top' BLKISO_KO='/host$ko' BLKISO_OUT=/out"
	echo "export BLKISO_KVER='$ver' BLKISO_ICOUNT=$icount BLKISO_SERIES='$series'"
	# Knobs of guest scripts pass through: DEMO_*, BENCH_*, GUEST_FULL.
	env | grep -E '^((DEMO|BENCH)_[A-Z0-9_]*|GUEST_FULL)=' | sed "s/'/'\\\\''/g; s/=\(.*\)/='\1'/; s/^/export /"
	# -i -c N: the guest booted with one online CPU (maxcpus=1, below).
	if [ "$online_all" = 1 ]; then
		echo 'for c in /sys/devices/system/cpu/cpu[0-9]*; do'
		echo '	[ -f "$c/online" ] && [ "$(cat "$c/online")" = 0 ] && echo 1 > "$c/online"'
		echo 'done'
	fi
	echo "cd /tmp"
	printf 'exec /usr/bin/bash %q' "/host$script"
	[ $# -eq 0 ] || printf ' %q' "$@"
	echo
} > "$out/job.sh"

if [ "$icount" = 1 ]; then
	accel=(-accel tcg,thread=single -icount shift=0,sleep=off -smp "$icpus")
else
	accel=(-accel tcg,thread=multi -smp "$cpus")
fi
log=$out/console.log

# tsc=reliable: no clocksource watchdog.  Under TCG with 2 vCPUs it once
# declared the TSC unstable mid-test and switched clocksource, whose
# run-time code patching (int3) oopsed in sched_clock_cpu (6.12 guest).
# The kernel: vmlinux through its PVH entry, or a bzImage when the kernel
# has one (the debug kernel: its KASAN cannot boot through PVH).
kimg=$kroot/vmlinux
[ -f "$kroot/bzImage" ] && kimg=$kroot/bzImage
# The debug kernel: readable pointers in its reports; an RCU stall report
# only after 2 minutes (KASAN and lockdep under TCG on a loaded host are
# slow enough to trip the default 21 s).  And the q35 machine: the default
# i440fx's ACPI _PRT method builds its table in an AML loop that, interpreted
# under KASAN and lockdep, hits ACPI's loop timeout and stalls the boot for
# minutes; q35's _PRT returns a fixed table.  (acpi=noirq avoided the loop
# but left the guest one CPU: it skips the MADT's I/O APIC, and the debug
# config has no MP-table parser.)
append="console=ttyS0 quiet panic=-1 oops=panic random.trust_cpu=on mitigations=off tsc=reliable"
machine=()
if [ "$series" = debug ]; then
	append+=" no_hash_pointers rcupdate.rcu_cpu_stall_timeout=120"
	machine=(-machine q35)
fi
# The debug kernel in the ordinary mode: its PIT calibration of the TSC
# fails when the host starves the guest (it read 319 and 399 MHz for 2,596
# at load 25, and guest time then ran 6-8 times fast, so every timeout in
# it expired early).  TCG's TSC is the host's: give the guest its frequency.
if [ "$series" = debug ] && [ "$icount" = 0 ]; then
	khz=$(dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9]*\)\.\([0-9]\{3\}\) MHz.*/\1\2/p' | head -n 1)
	[ -z "$khz" ] || append+=" tsc_early_khz=$khz"
fi
[ -z "${BLKISO_APPEND:-}" ] || append+=" $BLKISO_APPEND"
qemu=(qemu-system-x86_64 "${accel[@]}" "${machine[@]}" -cpu max -m "$mem" -no-reboot
	-display none -monitor none -serial stdio -nic none
	-kernel "$kimg" -initrd "$initrd"
	-append "$append"
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on"
	-virtfs "local,path=$out,mount_tag=out,security_model=none")

if [ -n "$nvme" ]; then
	nvme_img=$(mktemp -p /dev/shm blkiso-nvme0.XXXXXX 2>/dev/null ||
		   mktemp -p "$out" nvme0.XXXXXX) || exit 2
	trap 'rm -f "$nvme_img"' EXIT	# whatever way run.sh ends
	truncate -s "$nvme" "$nvme_img" || exit 2
	qemu+=(-drive "file=$nvme_img,if=none,id=nv0,format=raw,cache=writeback,aio=threads"
		-device "nvme,serial=blkiso-nv0,drive=nv0")
fi
# shellcheck disable=SC2206  # BLKISO_QEMU_EXTRA: words, as documented
[ -z "${BLKISO_QEMU_EXTRA:-}" ] || qemu+=($BLKISO_QEMU_EXTRA)

start=$(date +%s.%N)
# setsid: qemu and everything under it form one group we can always kill.
# Line-buffered filters: into a pipe or a file, tr and grep would hold the
# console in 4 KiB blocks, so a slow guest's last lines (the test running
# when it hung or was stopped) would reach console.log only at the end.
setsid timeout -k 5 "$limit" "${qemu[@]}" < /dev/null 2>&1 |
	stdbuf -oL tr -d '\r' | tee "$log" |
	grep --line-buffered -v -E '^BLKISO_VM_EXIT=|reboot: Power down'
qrc=${PIPESTATUS[0]}
elapsed=$(echo "$(date +%s.%N) - $start" | bc)

rc=$(sed -n 's/^BLKISO_VM_EXIT=\([0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ -z "$rc" ]; then
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		echo "run.sh: guest hung: no result after ${limit}s (killed)" >&2
		rc=124
	else
		echo "run.sh: guest died without a result (panic or oops?), qemu status $qrc" >&2
		rc=125
	fi
	echo "---- console tail ($log) ----" >&2
	tail -n 40 "$log" >&2
fi
printf 'run.sh: kernel %s%s, status %s, %.1fs wall, out %s\n' "$ver" \
	"$([ "$icount" = 1 ] && echo ', icount')" "$rc" "$elapsed" "$out" >&2
exit "$rc"
