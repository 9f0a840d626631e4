#!/bin/bash
# run.sh - host side of `make demo`: boot the 6.1 guest in the deterministic
# mode, run selftests/guest/demo.sh in it, then report (tools/demo/report.py):
# the table on stdout, build/demo/demo.json and build/demo/demo.png.
#
#   tools/demo/run.sh [-k 6.1|6.12]     (DEMO_OUT=dir: elsewhere than build/demo)
#
# The guest's "DEMO-STEP n/N what" lines are shown with the wall-clock time
# elapsed (since `make demo` began, build included) and an estimate of what
# remains; a line every 10 s while a step runs long.  The estimate uses the
# step times measured on an idle 2-core machine (EXPECT below; steps take
# longer when other work loads it).  The guest's raw results stay in
# build/vm/out/<run>/; its path is taken from run.sh's last line, not from
# the `latest` link, which another run may move meanwhile.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
series=6.1
while getopts "k:" o; do
	case $o in
	k) series=$OPTARG ;;
	*) echo "usage: $0 [-k 6.1|6.12]" >&2; exit 2 ;;
	esac
done

# Expected wall seconds: boot, then steps 1..6, then the report.
EXPECT=(10 9 1 5 11 7 2 1)
total=0; for e in "${EXPECT[@]}"; do total=$((total + e)); done

start=${DEMO_T0:-$(date +%s)}	# make demo passes its own start: the build counts
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
cur=0 cur_start=$(date +%s)
remaining() {	# seconds left: the rest of the current step, then the steps after it
	local now=$(date +%s) left=0 i
	left=$((EXPECT[cur] - (now - cur_start)))
	[ $left -lt 0 ] && left=0
	for ((i = cur + 1; i < ${#EXPECT[@]}; i++)); do left=$((left + EXPECT[i])); done
	echo $left
}
progress() {	# text
	local now=$(date +%s)
	printf '[demo] %-62s elapsed %s, ~%s left\n' "$1" "$(mmss $((now - start)))" \
		"$(mmss "$(remaining)")"
}

echo "[demo] a noisy neighbour vs a victim, without and with blkiso (the guest part: about $(mmss $total) on 2 cores)"
progress "0/7 booting the $series guest (deterministic mode)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
label="0/7 booting"
# stdbuf: the runner's pipeline (tr, tee, grep) passes each line at once.
# The last line, DEMO-EXIT <status>, ends the loop below: tail's --pid
# alone kept it waiting up to 10 s (the job is a zombie until waited for).
{
	stdbuf -oL bash "$top/selftests/vm/run.sh" -i -k "$series" -t 400 \
		"$top/selftests/guest/demo.sh" > "$log" 2>&1
	echo "DEMO-EXIT $?" >> "$log"
} &
pid=$!
rc=
exec 3< <(tail -n +1 -F --pid=$pid "$log" 2>/dev/null)
while :; do
	if IFS= read -r -t 10 line <&3; then
		case $line in
		DEMO-STEP\ *)
			set -- $line
			cur=${2%%/*} cur_start=$(date +%s)
			label=${line#DEMO-STEP }
			progress "$label" ;;
		DEMO-DONE) ;;
		DEMO-EXIT\ *) rc=${line#DEMO-EXIT }; break ;;
		*) echo "       $line" ;;
		esac
	else
		[ $? -gt 128 ] || break		# EOF: the run ended
		progress "   ... still at ${label%%,*}"
	fi
done
wait $pid
[ -n "$rc" ] || rc=1	# no DEMO-EXIT line: the job died
exec 3<&-
outdir=$(sed -n 's/^run\.sh: .* out \(.*\)$/\1/p' "$log" | tail -n 1)
if [ $rc -ne 0 ] || [ -z "$outdir" ] || [ ! -f "$outdir/demo-env.txt" ]; then
	echo "[demo] the guest run failed (status $rc); console: ${outdir:-build/vm/out/latest}/console.log" >&2
	exit $((rc ? rc : 1))
fi
cur=7 cur_start=$(date +%s)
dest=${DEMO_OUT:-$top/build/demo}
progress "7/7 report: table, ${dest#$top/}/demo.json and demo.png"
mkdir -p "$dest"
DEMO_WALL_S=$(($(date +%s) - start)) python3 "$top/tools/demo/report.py" "$outdir" "$dest" || exit 1
echo "[demo] done in $(mmss $(($(date +%s) - start))) wall; raw results (fio JSON, per-second logs, blkiso stats): $outdir"
