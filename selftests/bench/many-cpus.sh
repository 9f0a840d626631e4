#!/bin/bash
# many-cpus.sh - issue 18's many-CPU figures, in a guest: one capped cgroup
# read by fio jobs pinned one per online CPU; the cap's accuracy from
# blkiso's own counters, the global dispenses per bio, and the
# lock:contention_begin events with the lock's caller.
#
#   bash selftests/vm/run.sh -k 6.1 -i -c 4 -t 1200 \
#       selftests/bench/many-cpus.sh [RIOPS [SECONDS [QD]]]
#
# In the deterministic mode (-i) run.sh boots the guest with one online CPU
# and onlines the others before this script (a boot that brings them up
# itself does not finish in useful time: selftests/vm/run.sh).  The
# ordinary mode (-c N without -i) works too; its rates swing with the
# host's load.
#
# The device: a null_blk device (one submit queue per CPU, no shaping:
# its capacity is far above the cap), blkiso over it, cgroup /mc with
# riops=RIOPS (default 8000: capacity 400 bios at burst_ms=50, so a local
# bucket's batch is min(local_max 64, capacity / 4 = 100) = 64 bios and one
# dispense per 32 bios is reachable; at riops=2000 the batch is 25).  One
# fio job per online CPU (libaio, QD (default 4), 4 KiB random reads,
# --cpus_allowed=N) for SECONDS + 5 s (default 10); the rate is the
# tenant's `completed` count over SECONDS of guest time from the moment
# it passed 2 x RIOPS, its error against RIOPS in percent.  Dispenses per bio: the
# tenant's `dispenses` (batches its global buckets handed to per-CPU ones)
# over its `arrived`, over the whole run.  Contention: every
# lock:contention_begin event during the run with a stack trace (tracefs
# stacktrace trigger); the caller is the first frame outside the locking
# code, the blkiso caller the first frame of the blkiso module.
#
# Prints MANYCPU lines; writes $BLKISO_OUT/many-cpus.json and the raw trace
# ($BLKISO_OUT/contention.txt).  Figures only: exits 0 unless the setup
# fails.
set -uo pipefail
: "${BLKISO_OUT:?run me in the guest through selftests/vm/run.sh}"
RIOPS=${1:-8000}
SECS=${2:-10}
QD=${3:-4}
# shellcheck source=selftests/bench/lib-guest.sh
. "$BLKISO_TOP/selftests/bench/lib-guest.sh"	# null_dev, CG
T=/sys/kernel/tracing
WORK=/tmp/many-cpus

stat_of() {	# name: one counter of the tenant's stats
	tr ' ' '\n' < "$STATS" | sed -n "s/^$1=//p"
}
# The clock and the counters with builtins only: in the deterministic mode
# guest time leaps while a program is read over 9p.
snap() {	# sets snap_t (guest seconds), snap_c (completed), snap_span
	local s u0 u1
	read -r u0 _ < /proc/uptime
	IFS= read -r -d '' s < "$STATS"
	read -r u1 _ < /proc/uptime
	snap_t=$(echo "scale=3; ($u0 + $u1) / 2" | bc)
	snap_span=$(echo "$u1 - $u0" | bc)
	s=${s##*completed=}
	snap_c=${s%% *}
}

mkdir -p $WORK
NCPU=$(nproc)
echo "MANYCPU cpus online $(cat /sys/devices/system/cpu/online) possible $(cat /sys/devices/system/cpu/possible) icount=$BLKISO_ICOUNT"

modprobe dm-mod
insmod "$BLKISO_KO" || exit 1
modprobe null_blk nr_devices=0
null_dev mc size=1024 blocksize=4096 submit_queues="$NCPU" || exit 1
dmsetup create mc-iso --table "0 $(blockdev --getsz /dev/mc) blkiso /dev/mc 0" || exit 1
SYS=/sys/kernel/blkiso/dm-$(dmsetup info -c --noheadings -o minor mc-iso)
echo +io > $CG/cgroup.subtree_control
mkdir $CG/mc
echo "/mc riops=$RIOPS" > "$SYS/tenant" || exit 1
STATS=$SYS/$(stat -c %i $CG/mc)/stats
# fio and the tools into the page cache before anything is measured
fio --version > /dev/null
cat "$(command -v python3)" > /dev/null

mountpoint -q $T || mount -t tracefs nodev $T
echo 4096 > $T/buffer_size_kb
echo > $T/trace
echo stacktrace > $T/events/lock/contention_begin/trigger
echo 1 > $T/events/lock/contention_begin/enable

jobs=()
for ((i = 0; i < NCPU; i++)); do
	jobs+=("--name=c$i" "--cpus_allowed=$i" --filename=/dev/mapper/mc-iso --direct=1
	       --rw=randread --bs=4k --ioengine=libaio --iodepth="$QD"
	       --runtime=$((SECS + 5)) --time_based --eta=never)
done
a0=$(stat_of arrived); d0=$(stat_of dispenses)
(echo $BASHPID > $CG/mc/cgroup.procs
 exec fio --output-format=json --output=$WORK/fio.json "${jobs[@]}") &
fpid=$!
# from the 2nd second of reads on: starting 8 fio jobs can take seconds of
# guest time in the deterministic mode (their pages come over 9p)
snap
while [ "$snap_c" -lt $((2 * RIOPS)) ]; do sleep 0.05; snap; done
snap; t1=$snap_t c1=$snap_c span1=$snap_span
sleep "$SECS"
snap; t2=$snap_t c2=$snap_c span2=$snap_span
echo "MANYCPU window $t1 .. $t2 s: completed $c1 .. $c2 (stats read in $span1 / $span2 s)"
wait $fpid
echo 0 > $T/events/lock/contention_begin/enable
echo '!stacktrace' > $T/events/lock/contention_begin/trigger
a1=$(stat_of arrived); d1=$(stat_of dispenses)
cat $T/trace > $WORK/contention.txt
cat "$STATS" > $WORK/stats.txt

python3 - "$WORK" "$NCPU" "$RIOPS" "$SECS" "$QD" "$BLKISO_ICOUNT" \
	"$t1" "$t2" "$c1" "$c2" "$a0" "$a1" "$d0" "$d1" <<'EOF' > $WORK/many-cpus.json
import collections, json, re, sys
(work, ncpu, riops, secs, qd, icount, t1, t2, c1, c2, a0, a1, d0, d1) = sys.argv[1:]
t1, t2 = float(t1), float(t2)
rate = (int(c2) - int(c1)) / (t2 - t1)
bios, disp = int(a1) - int(a0), int(d1) - int(d0)
fio = json.load(open(work + "/fio.json"))
job_iops = [j["read"]["iops"] for j in fio["jobs"]]
# lock:contention_begin events, each followed by its stack (" => func+off")
LOCKING = re.compile(r"^(queued_|native_queued|__pv_queued|_raw_|do_raw_|__raw_|"
                     r"__mutex|mutex_|rwsem|__down|down_|rt_mutex|__rt_mutex|"
                     r"percpu_down|osq_|trace_|perf_|event_triggers|__traceiter|"
                     r"__trace|ftrace|rcu_read|preempt|_printk)")
events, cur = [], None
for line in open(work + "/contention.txt"):
    if "contention_begin:" in line:
        m = re.search(r"\(flags=([A-Z_|]+)\)", line)
        cur = {"flags": m.group(1) if m else "?", "frames": []}
        events.append(cur)
    elif line.startswith(" => ") and cur is not None:
        cur["frames"].append(line[4:].strip())
callers, bcallers, flags = collections.Counter(), collections.Counter(), collections.Counter()
for e in events:
    fr = [re.sub(r"\+0x[0-9a-f/]+", "", f) for f in e["frames"]]
    out = [f for f in fr if not LOCKING.match(f.split()[0])]
    callers[out[0] if out else "?"] += 1
    mod = [f for f in fr if f.endswith("[blkiso]")]
    if mod:
        bcallers[" <- ".join(mod[:3])] += 1
    flags[e["flags"]] += 1
res = {
    "vcpus": int(ncpu), "icount": int(icount), "riops": int(riops), "qd": int(qd),
    "window_s": round(t2 - t1, 3), "rate": round(rate, 1),
    "err_pct": round((rate - int(riops)) / int(riops) * 100, 3),
    "fio_iops": round(sum(job_iops), 1),
    "fio_job_iops_min": round(min(job_iops), 1), "fio_job_iops_max": round(max(job_iops), 1),
    "bios": bios, "dispenses": disp,
    "bios_per_dispense": round(bios / disp, 2) if disp else None,
    "contention_events": len(events),
    "contention_blkiso": sum(bcallers.values()),
    "contention_by_flags": dict(flags),
    "contention_by_caller": dict(callers.most_common(20)),
    "contention_blkiso_by_caller": dict(bcallers.most_common(20)),
}
print(json.dumps(res, indent=1))
EOF
cp $WORK/many-cpus.json $WORK/contention.txt $WORK/stats.txt "$BLKISO_OUT"/
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("MANYCPU vcpus=%(vcpus)d icount=%(icount)d riops=%(riops)d rate=%(rate)s err_pct=%(err_pct)s"
      " bios=%(bios)d dispenses=%(dispenses)d bios_per_dispense=%(bios_per_dispense)s"
      " fio_jobs=%(fio_job_iops_min)s..%(fio_job_iops_max)s"
      " contention=%(contention_events)d blkiso=%(contention_blkiso)d" % r)
for k, v in r["contention_by_caller"].items():
    print("MANYCPU caller %6d %s" % (v, k))
for k, v in r["contention_blkiso_by_caller"].items():
    print("MANYCPU blkiso %6d %s" % (v, k))
' $WORK/many-cpus.json
dmsetup remove mc-iso
