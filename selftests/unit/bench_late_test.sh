#!/bin/bash
# bench_late_test.sh - the bench's figures of the victim's tail
# (selftests/bench/scen-collect.py, doc/bench.md) count what they say (part
# of make unit): the split of its late I/Os (late_split(): fio's I/Os over
# the target against blkiso's line or 1.5x the solo p99, blkiso's ring read
# by overlapping polls with each tick once, and the share of the late I/Os
# already late below blkiso), and its p99.9 apart from its p99.
top=$(cd "$(dirname "$0")/../.." && pwd)
tap_prefix=bench_late
. "$top/selftests/host/tap.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# three polls of a ring: ticks 10-12, then 11-13 again, then 13-14
{
	echo "seq time_us completed missed miss_pm"
	printf '%s\n' "10 1 300 0 0" "11 2 300 1 3" "12 3 200 0 0"
	printf '%s\n' "11 2 300 1 3" "12 3 200 0 0" "13 4 100 1 10"
	printf '%s\n' "13 4 100 1 10" "14 5 100 0 0"
} > "$dir/ring-victim.txt"
mkdir "$dir/noring"

got=$(python3 - "$top/selftests/bench/scen-collect.py" "$dir" <<'EOF'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("sc", sys.argv[1])
sc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sc)
d = sys.argv[2]
# 1,000 I/Os: 990 in bin 500 (7.5 us), 10 in bin 1200 (14.7 ms); the
# target half-way
lo, hi = 500, 1200
bins = [0] * 1300
bins[lo], bins[hi] = 990, 10
thr_us = int((sc.plat_idx_to_val(lo) + sc.plat_idx_to_val(hi)) / 2 / 1000)
print("ring", sc.ring_totals(d + "/ring-victim.txt"))
m = sc.late_split(d, {"param.victim": "/v alloc=1 latency_us=%d miss_pct=1" % thr_us}, bins, 1.0)
print("blkiso", m["victim_late_pct"], m["victim_dev_late_pct"], m["late_at_device_pct"])
# no line: 1.5x the solo p99; no ring: no device figures
sp99 = sc.plat_idx_to_val(hi) / 1.5 + 1
m = sc.late_split(d + "/noring", {}, bins, sp99)
print("none", m["victim_late_pct"], sorted(m))
m = sc.late_split(d + "/noring", {}, bins, sc.plat_idx_to_val(hi) / 1.5 - 1)
print("under", m["victim_late_pct"])
# 1,000 I/Os, the 2 slowest in bin 1200: p99 does not see them, p99.9 does
bins[lo], bins[hi] = 998, 2
print("pct", sc.hist_pct(bins, 99) == sc.plat_idx_to_val(lo),
      sc.hist_pct(bins, 99.9) == sc.plat_idx_to_val(hi))
EOF
)
line() { echo "$got" | grep "^$1 "; }

ok "$([ "$(line ring)" = "ring (1000, 2)" ]; echo $?)" \
	ring_ticks_counted_once "# got: $(line ring)"
ok "$([ "$(line blkiso)" = "blkiso 1.0 0.2 20.0" ]; echo $?)" \
	late_split_against_blkisos_target "# got: $(line blkiso)"
ok "$([ "$(line none)" = "none 0.0 ['victim_late_pct']" ] &&
      [ "$(line under)" = "under 1.0" ]; echo $?)" \
	late_against_the_p99_bound_without_a_line "# got: $(line none) / $(line under)"
ok "$([ "$(line pct)" = "pct True True" ]; echo $?)" \
	p999_sees_the_stalls_p99_does_not "# got: $(line pct)"
tap_totals
[ "$fail" = 0 ]
