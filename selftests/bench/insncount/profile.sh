#!/bin/bash
# profile.sh - exact guest instructions per 4 KiB read, per kernel function,
# with the insncount QEMU plugin (insncount.c):
#
#   selftests/bench/insncount/profile.sh [-k 6.1|6.12] [-n IOS] [-B KO] DEV... [-- FUNC...]
#
# DEV: ovh-linear, ovh-blkiso (no quota) or ovh-quota (non-biting riops +
# runits), one deterministic boot each (profile-guest.sh), in
# build/insncount/<dev>/.  Prints, per DEV, blkiso's own functions per read
# and, when ovh-linear is among them, every function's difference to it;
# FUNCs (module functions) are printed instruction by instruction.  The
# counts cover the whole boot: divide-by-reads figures are exact for
# functions only the reads run (blkiso's), approximate for shared ones.
# DEV "buffered": IOS buffered 4 KiB writes through ext4 instead (figures
# per write); "buffered-before": the same with the module KO (-B, e.g. one
# built from an older commit), and the differences are then to it.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
here=$top/selftests/bench/insncount
series=6.1 ios=20000 before_ko=
while getopts "k:n:B:" opt; do
	case $opt in
	k) series=$OPTARG ;;
	n) ios=$OPTARG ;;
	B) before_ko=$(realpath "$OPTARG") ;;
	*) sed -n '2,14s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
devs=() funcs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do devs+=("$1"); shift; done
[ $# -gt 0 ] && shift && funcs=("$@")
[ ${#devs[@]} -gt 0 ] || { echo "usage: profile.sh [-k S] [-n N] [-B KO] DEV... [-- FUNC...]" >&2; exit 2; }

out=$top/build/insncount
mkdir -p "$out"
gcc -O2 -Wall -shared -fPIC -o "$out/insncount.so" "$here/insncount.c"
make -C "$top" --no-print-directory module KVER="$series" > /dev/null
per=read base=ovh-linear
for d in "${devs[@]}"; do
	rm -rf "${out:?}/$d"; mkdir -p "$out/$d"
	ko_host=
	case $d in
	buffered) per=write ;;
	*-before)
		[ -n "$before_ko" ] || { echo "profile.sh: $d needs -B KO" >&2; exit 2; }
		ko_host=$before_ko base=$d ;;
	esac
	BLKISO_KO_HOST=$ko_host BENCH_DEV=${d%-before} BENCH_IOS=$ios BLKISO_VM_OUT=$out/$d \
	BLKISO_QEMU_EXTRA="-plugin $out/insncount.so,out=$out/$d/counts" \
		bash "$top/selftests/vm/run.sh" -k "$series" -i -t 1800 \
		"$here/profile-guest.sh"
done
ko=$(ls "$top"/build/kmod-"$(cat "$top/build/kernels/$series/.version")"/blkiso.ko)
args=(--reads "$ios" --per "$per" --base "$base" --ko "$ko")
for f in "${funcs[@]}"; do args+=(--func "$f"); done
for d in "${devs[@]}"; do args+=("$out/$d"); done
python3 "$here/report.py" "${args[@]}"
