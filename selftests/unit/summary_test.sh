#!/bin/bash
# summary_test.sh - selftests/summary.sh, which decides whether make check
# passes, counts what it must (part of make unit): the Totals lines add up,
# and with --expect a stage whose log is missing or holds no results (a
# target that did not build) counts as a failure; each failed case is named
# before the closing line.
top=$(cd "$(dirname "$0")/../.." && pwd)
tap_prefix=summary
. "$top/selftests/host/tap.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sum=$top/selftests/summary.sh

printf '%s\n' "ok 1 u.a" "not ok 2 u.b" "not ok 3 u.c # SKIP why" \
	"# Totals: pass:3 fail:1 xfail:0 xpass:0 skip:2 error:0" > "$dir/unit.log"
echo "# Totals: pass:4 fail:0 xfail:0 xpass:0 skip:0 error:1" > "$dir/smoke.log"
echo "make: *** [fuzz] Error 1" > "$dir/fuzz.log"

out=$(bash "$sum" "$dir"/*.log 2>/dev/null | tail -n 1)
ok "$([ "$out" = "7 passed, 2 failed, 2 skipped" ]; echo $?)" totals_add_up "# got: $out"

out=$(bash "$sum" "$dir"/*.log 2>/dev/null | head -n -1)
ok "$([ "$out" = "FAILED unit.log: not ok 2 u.b" ]; echo $?)" failed_cases_named "# got: $out"

out=$(bash "$sum" --expect "unit smoke" "$dir"/*.log 2>/dev/null | tail -n 1)
ok "$([ "$out" = "7 passed, 2 failed, 2 skipped" ]; echo $?)" expected_logs_present "# got: $out"

out=$(bash "$sum" --expect "unit fuzz cluster" "$dir"/*.log 2>"$dir/err" | tail -n 1)
ok "$([ "$out" = "7 passed, 4 failed, 2 skipped" ] &&
      grep -q 'fuzz.log has no results' "$dir/err" &&
      grep -q 'cluster.log has no results' "$dir/err"; echo $?)" \
	missing_or_empty_stage_fails "# got: $out / $(cat "$dir/err")"
tap_totals
[ "$fail" = 0 ]
