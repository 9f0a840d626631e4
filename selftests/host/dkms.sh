#!/bin/bash
# dkms.sh [--lintian] [--install] [--meter] [SERIES...] - the packages as a
# host gets them (make deb-check / make check-full): make deb (debhelper,
# dh-dkms), lintian with no error (--lintian); with --install, the two
# packages installed on this machine with apt (their postinst has DKMS
# build and install the module for every kernel whose headers are in
# /lib/modules/*/build, here Debian's 6.1 headers that make deps
# installs), checked, and purged again; then for each SERIES (default 6.1
# 6.12) `dkms build` of the blkiso-dkms package's source against the
# headers `make deps` unpacked, in private DKMS trees below build/dkms,
# and with --meter the guest's meter suite (selftests/guest/meter_test,
# deterministic mode, ~3 min) on each DKMS-built module.
# kselftest-style output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
lint= meter=0 install=0
[ "${1:-}" = --lintian ] && { lint=--lintian; shift; }
[ "${1:-}" = --install ] && { install=1; shift; }
[ "${1:-}" = --meter ] && { meter=1; shift; }
[ $# -gt 0 ] || set -- 6.1 6.12
tap_prefix=deb
. "$(dirname "$0")/tap.sh"
echo "TAP version 13"
out=$(bash "$top/dist/mkdeb.sh" $lint 2>&1)
ok $? "make_deb${lint:+_lintian}" "$out"
ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
if [ "$install" = 1 ]; then
	k61=$(cat "$top/build/kernels/6.1/.version")
	out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"$top/build/deb/blkiso-dkms_${ver}_all.deb" \
		"$top/build/deb/blkiso-tools_${ver}_amd64.deb" 2>&1)
	ok $? apt_install_packages "$(tail -n 10 <<<"$out")"
	dkms status blkiso | grep -q "$k61, x86_64: installed" &&
		[ "$(/sbin/modinfo -k "$k61" -F alias blkiso)" = dm-blkiso ]
	ok $? postinst_dkms_installed_module "$(dkms status 2>&1)"
	[ "$(systemctl is-enabled blkiso.service 2>&1)" = enabled ] &&
		[ -f /etc/blkiso/blkiso.conf ] && [ -f /lib/udev/rules.d/60-blkiso.rules ] &&
		systemd-analyze verify /lib/systemd/system/blkiso.service
	ok $? unit_enabled_and_verifies "$(systemctl is-enabled blkiso.service 2>&1)"
	out=$(DEBIAN_FRONTEND=noninteractive apt-get purge -y -q blkiso-dkms blkiso-tools 2>&1)
	[ $? = 0 ] && [ ! -e "/lib/modules/$k61/updates/dkms/blkiso.ko" ] &&
		[ ! -e /etc/blkiso ] && [ ! -e /etc/systemd/system/sysinit.target.wants/blkiso.service ]
	ok $? apt_purge_leaves_nothing "$(tail -n 10 <<<"$out")"
fi
d=$top/build/dkms
rm -rf "$d" && mkdir -p "$d/root" "$d/tree" "$d/inst"
dpkg-deb -x "$top/build/deb/blkiso-dkms_${ver}_all.deb" "$d/root" || { tap_totals; exit 1; }
[ -f "$d/root/usr/src/blkiso-$ver/dkms.conf" ]
ok $? dkms_conf_in_package
for series in "$@"; do
	kver=$(cat "$top/build/kernels/$series/.version")
	out=$(dkms build -m blkiso -v "$ver" -k "$kver" \
		--kernelsourcedir "$(realpath "$top/build/kernels/$series/headers")" \
		--sourcetree "$d/root/usr/src" --dkmstree "$d/tree" --installtree "$d/inst" 2>&1)
	ko=$d/tree/blkiso/$ver/$kver/x86_64/module/blkiso.ko
	[ -f "$ko" ] && [ "$(/sbin/modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ]
	ok $? "dkms_build_$series" "$(tail -n 20 <<<"$out")"
done
tap_totals
rc=0
[ "$fail" = 0 ] || rc=1
[ "$meter" = 1 ] || exit $rc
# The meter suite on each DKMS-built module.
for series in "$@"; do
	kver=$(cat "$top/build/kernels/$series/.version")
	BLKISO_KO_HOST=$d/tree/blkiso/$ver/$kver/x86_64/module/blkiso.ko \
		bash "$top/selftests/vm/run.sh" -k "$series" -i -t 900 \
		"$top/selftests/guest/run-all.sh" meter_test || rc=1
done
exit $rc
