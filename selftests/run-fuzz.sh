#!/bin/bash
# run-fuzz.sh SECONDS FUZZER... - run each libFuzzer target for SECONDS from
# its corpus under build/fuzz/corpus/<name>; kselftest-style result per target.
set -uo pipefail
secs=$1; shift
top=$(cd "$(dirname "$0")/.." && pwd)
pass=0 fail=0 n=0
echo "TAP version 13"
echo "1..$#"
for f in "$@"; do
	n=$((n + 1))
	name=$(basename "$f")
	corpus=$top/build/fuzz/corpus/$name
	mkdir -p "$corpus"
	if "$f" -max_total_time="$secs" -print_final_stats=1 "$corpus" \
		> "$top/build/fuzz/$name.log" 2>&1; then
		echo "ok $n fuzz.$name ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$top/build/fuzz/$name.log" | grep -o '[0-9]*$') runs in ${secs}s)"
		pass=$((pass + 1))
	else
		echo "not ok $n fuzz.$name"
		grep -A30 -m1 'ERROR\|==ERROR\|runtime error\|Assert\|deadly' "$top/build/fuzz/$name.log" | head -40 | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]
