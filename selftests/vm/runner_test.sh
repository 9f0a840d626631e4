#!/bin/bash
# runner_test.sh - the QEMU runner turns a guest panic, a hang and a failing
# script into prompt, distinct failures and leaves no qemu behind, and boots
# a deterministic guest with several vCPUs all online (host test,
# kselftest-style output).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 n=0

echo 'exit 3' > "$tmp/exit3.sh"
echo 'echo 1 > /proc/sys/kernel/sysrq; echo c > /proc/sysrq-trigger; sleep 60' > "$tmp/panic.sh"
echo 'sleep 600' > "$tmp/hang.sh"
echo 'dd if=/dev/zero of=/dev/null bs=1k count=1 2>/dev/null' > "$tmp/ok.sh"
# -i -c 2: booted with maxcpus=1, both CPUs online when the script starts.
echo 'grep -qw maxcpus=1 /proc/cmdline && [ "$(cat /sys/devices/system/cpu/online)" = 0-1 ] || exit 7' > "$tmp/cpus.sh"

# check NAME SCRIPT WANT_STATUS MAX_SECONDS [run.sh options]
check() {
	local name=$1 script=$2 want=$3 max=$4 t0 t1 rc left
	shift 4
	n=$((n + 1))
	t0=$(date +%s)
	bash "$top/selftests/vm/run.sh" "$@" "$script" > "$tmp/out" 2>&1
	rc=$?
	t1=$(date +%s)
	outdir=$(sed -n 's/^run\.sh: .*, out \(.*\)$/\1/p' "$tmp/out")
	left=$(pgrep -f "path=$outdir,mount_tag=out" | wc -l)
	[ -n "$outdir" ] || left=unknown
	if [ "$rc" = "$want" ] && [ $((t1 - t0)) -le "$max" ] && [ "$left" = 0 ]; then
		echo "ok $n runner.$name (status $rc in $((t1 - t0))s)"
		pass=$((pass + 1))
	else
		echo "not ok $n runner.$name (status $rc, want $want; $((t1 - t0))s, max ${max}s; $left qemu left)"
		tail -n 15 "$tmp/out" | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
}

echo "TAP version 13"
echo "1..5"
check passing_script "$tmp/ok.sh" 0 60
check script_status_is_returned "$tmp/exit3.sh" 3 60
check panic_fails_promptly "$tmp/panic.sh" 125 60
check hang_is_killed "$tmp/hang.sh" 124 60 -t 20
check deterministic_vcpus_all_online "$tmp/cpus.sh" 0 120 -i -c 2
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]
