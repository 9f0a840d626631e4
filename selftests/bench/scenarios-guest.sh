#!/bin/bash
# scenarios-guest.sh - the guest side of `make bench` scenarios 1, 2, 4, 5, 6
# (accuracy, noisy neighbour, convergence, scale, buffered writer neighbour,
# the victim's rate stepped mid-run;
# scenario 3, overhead, is overhead-guest.sh), each run with five anchors in
# the same boot, runs
# alternated: blkiso, io.max (blk-throttle), iocost (calibrated
# io.cost.model + io.cost.qos + io.weight), bfq (io.bfq.weight) and none.
# Run it in the deterministic mode:
#
#   BENCH_SCENARIOS="noisy accuracy" bash selftests/vm/run.sh -i -k 6.1 -t 3000 \
#       selftests/bench/scenarios-guest.sh
#
# Knobs (run.sh passes BENCH_* through):
#   BENCH_SCENARIOS  any of: accuracy noisy convergence scale buffered
#                    ratestep (default all, run in the order noisy accuracy
#                    convergence scale buffered ratestep)
#   BENCH_SECS       guest seconds per run (default 10; scale runs half)
#   BENCH_CAP_SECS   guest seconds per capacity measurement (default 2)
#   BENCH_SMOKE=1    tiny runs for CI: 2 s runs, 1 s capacity runs, one
#                    accuracy case, the load step only, noisy with blkiso,
#                    io.max and none, scale with blkiso and none, 100
#                    cgroups, runs of 1 s, buffered with blkiso, io.max
#                    and none
#   BENCH_BUF_MBPS   the buffered scenario's device bandwidth (default 200)
#   BENCH_HW_QD, BENCH_LAT_NS, BENCH_MBPS, BENCH_SIZE_MB  the device shaping
#                    (default the demo's: 8 slots, 200 us, 1000 MiB/s, 4 GiB)
#
# Writes $BLKISO_OUT/<scenario>.json per scenario (schema: the top of
# scen-collect.py) as soon as the scenario ends, and the runs' raw records
# (fio JSON, per-second / per-100 ms logs, meta.txt) to
# $BLKISO_OUT/raw/<scenario>/.  Lines "BENCH-STEP n/N scenario anchor case"
# mark progress.  The anchors and the device: lib-guest.sh; each scenario's
# cases: scen-<scenario>.sh.
set -euo pipefail
: "${BLKISO_OUT:?run me in the guest through selftests/vm/run.sh}"
here=$BLKISO_TOP/selftests/bench
smoke=${BENCH_SMOKE:-0}
secs=${BENCH_SECS:-10}
cap_secs=${BENCH_CAP_SECS:-2}
if [ "$smoke" = 1 ]; then secs=${BENCH_SECS:-2} cap_secs=1; fi
scenarios=${BENCH_SCENARIOS:-accuracy noisy convergence scale buffered ratestep}

. "$here/lib-guest.sh"
. "$here/scen-accuracy.sh"
. "$here/scen-noisy.sh"
. "$here/scen-convergence.sh"
. "$here/scen-scale.sh"
. "$here/scen-buffered.sh"
. "$here/scen-ratestep.sh"

order=()
for s in noisy accuracy convergence scale buffered ratestep; do
	case " $scenarios " in *" $s "*) order+=("$s") ;; esac
done
[ ${#order[@]} -gt 0 ] || { echo "BENCH_SCENARIOS: none of accuracy noisy convergence scale buffered ratestep" >&2; exit 2; }
if [ "${BLKISO_ICOUNT:-0}" != 1 ]; then
	echo "scenarios: note: not in the deterministic mode (run.sh -i); rates and instructions per I/O mean little" >&2
fi

bench_steps=0
for s in "${order[@]}"; do
	case $s in
	accuracy) n=$(acc_nsteps) ;;
	noisy) n=$(noisy_nsteps) ;;
	convergence) n=$(conv_nsteps) ;;
	scale) n=$(scale_nsteps) ;;
	buffered) n=$(buffered_nsteps) ;;
	ratestep) n=$(rs_nsteps) ;;
	esac
	bench_steps=$((bench_steps + n))
done
bench_steps=$((bench_steps + 1))

# A failed run leaves its records for a look: $BLKISO_OUT/raw-failed/.
trap 'rc=$?; [ $rc = 0 ] || { mkdir -p "$BLKISO_OUT/raw-failed"; cp -r "$BENCH_RUNS"/. "$BLKISO_OUT/raw-failed/" 2>/dev/null; dmesg | tail -n 30 > "$BLKISO_OUT/raw-failed/dmesg.txt"; }' EXIT
warm_cache
step setup device "shape the device (${BENCH_SHAPE:-ssd}), measure it, attach blkiso"
device_setup
for s in "${order[@]}"; do
	"scen_$s"
	case $s in
	scale|buffered) collect "$s" "/tmp/device-$s.txt" ;;
	*) collect "$s" /tmp/device.txt ;;
	esac
	mkdir -p "$BLKISO_OUT/raw"
	cp -r "$BENCH_RUNS/$s" "$BLKISO_OUT/raw/"
	echo "BENCH-DONE $s $BLKISO_OUT/$s.json"
done
cp /tmp/device*.txt /tmp/cap-*.json "$BLKISO_OUT/raw/"
dmsetup remove $DM
[ -d /sys/block/scaledev ] && dmsetup remove scale-iso
echo "BENCH-DONE all"
