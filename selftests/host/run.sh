#!/bin/bash
# run.sh [SERIES] - blkiso as a host installs it (make host-check):
# `make install` into build/host/stage, the unit checked by
# `systemd-analyze verify`, then selftests/host/guest_host.sh in a guest of
# SERIES (default 6.1): module autoload, blkisoctl apply as blkiso.service
# runs it, udev names.  kselftest-style output; build/results/host.log.
set -uo pipefail
series=${1:-6.1}
top=$(cd "$(dirname "$0")/../.." && pwd)
stage=$top/build/host/stage
tap_prefix=host
. "$(dirname "$0")/tap.sh"
echo "TAP version 13"
rm -rf "$stage"
out=$(make -C "$top" --no-print-directory install DESTDIR="$stage" KVER="$series" 2>&1)
ok $? make_install "$(tail -n 5 <<<"$out")"
# verify runs the unit's commands' paths: point them at this tree.
unit=$(mktemp -d)/blkiso.service
sed -e "s|@SBINDIR@|$stage/usr/local/sbin|g" -e 's|@SYSCONFDIR@|/etc|g' \
	"$top/dist/blkiso.service.in" > "$unit"
out=$(systemd-analyze verify --man=no "$unit" 2>&1)
[ -z "$out" ]
ok $? unit_verifies "$out"
rm -rf "$(dirname "$unit")"
# uninstall on a copy: only the administrator's blkiso.conf stays.
cp -a "$stage" "$stage.un"
out=$(make -C "$top" --no-print-directory uninstall DESTDIR="$stage.un" KVER="$series" 2>&1)
left=$(cd "$stage.un" && find . -type f)
[ "$left" = ./etc/blkiso/blkiso.conf ]
ok $? make_uninstall "$out; left: $left"
rm -rf "$stage.un"
tap_totals
glog=$(mktemp)
bash "$top/selftests/vm/run.sh" -k "$series" -t 300 "$top/selftests/host/guest_host.sh" 2>&1 |
	tee "$glog"
rc=${PIPESTATUS[0]}
# A guest that died or hung before its totals is one more failure.
if ! grep -q '^# Totals:' "$glog"; then
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0 (guest status $rc, no totals)"
	rc=1
fi
rm -f "$glog"
[ "$fail" = 0 ] && exit $rc
exit 1
