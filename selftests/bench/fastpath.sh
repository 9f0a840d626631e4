#!/bin/bash
# fastpath.sh [N] - instructions per bio on the token engine's fast path
# (local hit: charge at submission + correction at completion), measured by
# callgrind inside bench_loop() only, printed as JSON on stdout.  Also
# counts atomic read-modify-write instructions (lock prefix, xchg) in the
# measured loop's machine code, where the inline fast path is expanded.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-1000000}
bin=$top/build/bench/fastpath_bench
make -s -C "$top" "$bin" >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
meta=$(valgrind --tool=callgrind --toggle-collect=bench_loop \
	--callgrind-out-file="$out/cg.out" "$bin" "$n" 2>"$out/vg.log")
ir=$(awk '/^summary:/ {print $2}' "$out/cg.out")
[ -n "$ir" ] || ir=$(awk '/^totals:/ {print $2}' "$out/cg.out")
# atomics on the fast path: bi_local_charge's hit and bi_local_correct are
# inline (dispense.h), so count in bench_loop, where they are expanded; the
# slow paths are separate symbols, outside this count
atomics=$(objdump -d --no-show-raw-insn "$bin" | awk '
	/^[0-9a-f]+ <bench_loop>:/ {on = 1; next}
	/^[0-9a-f]+ </ {on = 0}
	on && (/\tlock / || /xchg.*\(/) {c++}
	END {print c + 0}')
bios=$(sed -n 's/.*"bios": \([0-9]*\).*/\1/p' <<<"$meta")
disp=$(sed -n 's/.*"global_dispenses": \([0-9]*\).*/\1/p' <<<"$meta")
awk -v ir="$ir" -v n="$bios" -v d="$disp" -v a="$atomics" 'BEGIN {
	printf "{\"bench\": \"fastpath\", \"bios\": %d, \"instructions\": %d, ", n, ir
	printf "\"instructions_per_bio\": %.1f, \"global_dispenses\": %d, ", ir / n, d
	printf "\"bios_per_dispense\": %.0f, \"atomic_rmw_in_fast_path\": %d}\n", (d ? n / d : n), a
}'
