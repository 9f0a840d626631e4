#!/bin/bash
# run.sh - host side of `make bench`: every phase in turn, a progress line
# per phase and per guest step, then the report and the README's Results.
#
#   tools/bench/run.sh [-k 6.1|6.12]
#
#   1. fastpath     the token engine's fast path under callgrind (host);
#                   cluster: selftests/cluster's 16 simulated hosts against
#                   a real redis-server (host), the agent and the static
#                   quota/16 split, figures into cluster.json
#   2. overhead     selftests/bench/overhead-guest.sh, one deterministic boot
#   3. scenarios    selftests/bench/scenarios-guest.sh, one deterministic boot:
#                   accuracy, noisy, convergence, scale, buffered, anchors
#                   alternated
#   4. report       tools/bench/report.py: bench.json, plots, tables
#   5. results      tools/bench/results.py: README.md's Results section
#
# Knobs (environment; BENCH_* reach the guest scripts too):
#   BENCH_SCENARIOS  the scenarios to run, words of "accuracy noisy overhead
#                    convergence scale buffered ratestep cluster" (default: all)
#   BENCH_SECS       guest seconds per run (scenarios-guest.sh's default if unset)
#   BENCH_SMOKE=1    the short version (a few seconds per scenario)
#   BENCH_IOS        reads per overhead run (default 1000000)
#   BENCH_TIMEOUT    wall seconds allowed to the scenarios' boot (default 7200)
#   BENCH_OUT        output directory (default build/bench)
#   BENCH_README     1: rewrite README.md's Results, 0: leave it alone
#                    (default: 1 for a full run, 0 with BENCH_SMOKE or a subset)
#   BENCH_T0         start time (epoch s) to count elapsed time from
#   BENCH_SHAPE=nvme the guests boot in the ordinary mode with a QEMU NVMe
#                    controller of BENCH_NVME_SIZE (default 4G) as the device
#   BENCH_VM_CPUS    vCPUs of the guests (default: selftests/vm/run.sh's, one
#                    in the deterministic mode; N take turns on one host
#                    thread, close to deterministic; the guest boots with
#                    one online and run.sh onlines the rest before the
#                    scenarios start)
#
# The guests' "BENCH-STEP n/N what" lines are shown with the elapsed wall
# time and an estimate of the phase's remaining time (its elapsed time per
# step so far, times the steps left); a line every 30 s while a step runs
# long.  The guests' raw records stay in OUT/vm-overhead and OUT/vm.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
series=6.1
while getopts "k:" o; do
	case $o in
	k) series=$OPTARG ;;
	*) sed -n '4,5s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
out=${BENCH_OUT:-$top/build/bench}
all="accuracy noisy overhead convergence scale buffered ratestep cluster"
want=${BENCH_SCENARIOS:-$all}
for s in $want; do
	case " $all " in *" $s "*) ;; *) echo "[bench] unknown scenario '$s' (known: $all)" >&2; exit 2 ;; esac
done
guest_scen=$(for s in $want; do [ "$s" = overhead ] || [ "$s" = cluster ] || echo -n "$s "; done)
guest_scen=${guest_scen% }
has_ovh=0; case " $want " in *" overhead "*) has_ovh=1 ;; esac
has_cluster=0; case " $want " in *" cluster "*) has_cluster=1 ;; esac

# BENCH_SHAPE=nvme: QEMU's NVMe controller (run.sh -N) in the ordinary
# mode, so that its 2 vCPUs give the nvme driver 2 hardware queues (the
# deterministic mode's vCPUs take turns on one thread): figures are
# ratios within the boot only.
mode=-i
[ "${BENCH_SHAPE:-}" != nvme ] || mode="-N ${BENCH_NVME_SIZE:-4G}"
start=${BENCH_T0:-$(date +%s)}
N=5
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
phase() {	# n what
	phase_n=$1
	printf '[bench] %d/%d %-58s elapsed %s\n' "$1" $N "$2" "$(mmss $(($(date +%s) - start)))"
}

# guest PHASE-LABEL OUTDIR TIMEOUT SCRIPT: one deterministic boot, progress
# from its BENCH-STEP lines; the status is the guest's.
guest() {
	local label=$1 dir=$2 limit=$3 script=$4 log line n=0 tot=0 what=booting now left pid rc=1 t2=0
	rm -rf "$dir"
	mkdir -p "$dir"
	log=$dir.log
	# the last line carries the status: the reader stops there, not at EOF
	# (tail --pid would wait for the child to be reaped)
	{
		stdbuf -oL env BLKISO_VM_OUT="$dir" bash "$top/selftests/vm/run.sh" $mode -k "$series" \
			${BENCH_VM_CPUS:+-c "$BENCH_VM_CPUS"} -t "$limit" "$script"
		echo "BENCH-GUEST-STATUS $?"
	} > "$log" 2>&1 &
	pid=$!
	exec 3< <(tail -n +1 -F --pid=$pid "$log" 2>/dev/null)
	while :; do
		if IFS= read -r -t 30 line <&3; then
			case $line in
			BENCH-STEP\ *)
				set -- $line
				n=${2%%/*} tot=${2#*/} what=${line#BENCH-STEP * }
				now=$(date +%s)
				left=""
				# the steps after the first (boot, setup) at their mean pace so far
				[ "$n" = 2 ] && t2=$now
				if [ "$n" -gt 2 ] && [ "$tot" -ge "$n" ]; then
					left=", phase ~$(mmss $(( (now - t2) * (tot - n + 1) / (n - 2) ))) left"
				fi
				printf '[bench] %d/%d %s %d/%d %-40s elapsed %s%s\n' "$phase_n" $N "$label" \
					"$n" "$tot" "$what" "$(mmss $((now - start)))" "$left" ;;
			BENCH-GUEST-STATUS\ *) rc=${line#* }; break ;;
			run.sh:*|*BUG:*|*WARNING:*|*Error*|*error:*|*rror\ *|not\ ok*) echo "        $line" ;;
			esac
		else
			[ $? -gt 128 ] || break		# EOF: the run ended
			printf '[bench] %d/%d %s still at %d/%d %s, elapsed %s\n' "$phase_n" $N "$label" \
				"$n" "$tot" "$what" "$(mmss $(($(date +%s) - start)))"
		fi
	done
	wait $pid
	exec 3<&-
	if [ $rc != 0 ]; then
		echo "[bench] $label: the guest run failed (status $rc): $log, $dir/console.log" >&2
		tail -n 15 "$log" | sed 's/^/#   /' >&2
	fi
	return $rc
}

mkdir -p "$out"
echo "[bench] scenarios: $want; output in ${out#$top/}/ (guest $series, $([ "$mode" = -i ] && echo deterministic mode || echo "ordinary mode, NVMe"))"
fail=0

phase 1 "fastpath: the token engine under callgrind (host); cluster (host)"
rm -f "$out/fastpath.json"
if bash "$top/selftests/bench/fastpath.sh" > "$out/fastpath.json.tmp"; then
	mv "$out/fastpath.json.tmp" "$out/fastpath.json"
else
	echo "[bench] fastpath failed" >&2; rm -f "$out/fastpath.json.tmp"; fail=1
fi
rm -f "$out/cluster.json" "$out/cluster.jsonl"
if [ $has_cluster = 1 ]; then
	# figures, whatever the test's verdicts (make cluster-check checks them)
	CLUSTER_FIGURES="$out/cluster.jsonl" "$top/build/cluster/cluster_test" \
		> "$out/cluster.log" 2>&1
	if [ -s "$out/cluster.jsonl" ]; then
		python3 -c 'import json, sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])], indent=1))' \
			"$out/cluster.jsonl" > "$out/cluster.json"
	else
		echo "[bench] cluster: no figures ($out/cluster.log)" >&2; fail=1
	fi
fi

srcs=()
if [ $has_ovh = 1 ]; then
	phase 2 "overhead: instructions per read, 9 paths x 2 engines"
	if guest overhead "$out/vm-overhead" 1800 "$top/selftests/bench/overhead-guest.sh"; then
		cp "$out/vm-overhead/overhead.json" "$out/overhead.json"
		srcs+=("$out/vm-overhead")
	else
		fail=1
	fi
else
	phase 2 "overhead: not selected"
fi

if [ -n "$guest_scen" ]; then
	phase 3 "scenarios: $guest_scen"
	if [ ! -f "$top/selftests/bench/scenarios-guest.sh" ]; then
		echo "[bench] selftests/bench/scenarios-guest.sh is missing" >&2; fail=1
	elif BENCH_SCENARIOS="$guest_scen" guest scenarios "$out/vm" "${BENCH_TIMEOUT:-7200}" \
			"$top/selftests/bench/scenarios-guest.sh"; then
		srcs+=("$out/vm")
	else
		fail=1
		# what finished before the failure still makes a report
		ls "$out"/vm/*.json > /dev/null 2>&1 && srcs+=("$out/vm")
	fi
else
	phase 3 "scenarios: none selected"
fi

phase 4 "report: ${out#$top/}/bench.json, plots, tables"
if [ ${#srcs[@]} = 0 ] && [ -s "$out/cluster.json" ]; then
	echo "[bench] cluster only: ${out#$top/}/cluster.json (no guest fragment: no bench.json)"
	cat "$out/cluster.log" | grep -E 'cluster_test.c:[0-9]+:' | sed 's/^# [^:]*:[0-9]*:/        /'
	exit $fail
fi
if [ ${#srcs[@]} = 0 ]; then
	echo "[bench] nothing to report" >&2
	exit 1
fi
python3 "$top/tools/bench/report.py" -o "$out" --fastpath "$out/fastpath.json" \
	--cluster "$out/cluster.json" \
	--wall-s $(($(date +%s) - start)) "${srcs[@]}" || exit 1

# The README shows full runs only, unless BENCH_README=1 asks.
readme=${BENCH_README:-}
if [ -z "$readme" ]; then
	readme=1
	# every scenario of $all (a count of 5 from before buffered and
	# cluster left every full run's README alone)
	[ "$(printf '%s\n' $want | sort -u | wc -l)" = "$(printf '%s\n' $all | wc -l)" ] &&
		[ "${BENCH_SMOKE:-0}" != 1 ] || readme=0
fi
if [ "$readme" = 0 ]; then
	phase 5 "results: README.md left alone (smoke, subset or BENCH_README=0)"
elif [ $fail != 0 ]; then
	phase 5 "results: README.md left alone (a phase failed)"
else
	phase 5 "results: README.md's Results section from bench.json"
	python3 "$top/tools/bench/results.py" "$out/bench.json" "$top/README.md" || fail=1
fi
echo "[bench] done in $(mmss $(($(date +%s) - start))) wall$([ $fail = 0 ] || echo ', with failures')"
exit $fail
