#!/bin/bash
# tap.sh - sourced by the host-side tests (selftests/host/*.sh): kselftest
# TAP results under the prefix $tap_prefix ("host", "deb", "systemd").
#   ok STATUS NAME [DETAIL]   one result: pass if STATUS is 0
#   tap_totals                the "# Totals:" line the summary adds up
pass=0 fail=0 n=0
ok() {	# status name [detail]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $tap_prefix.$2"; pass=$((pass + 1))
	else
		echo "not ok $n $tap_prefix.$2 ${3:-}"; fail=$((fail + 1))
	fi
}
tap_totals() {
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
}
