#!/bin/bash
# systemd-probe.sh - in the systemd guest (selftests/host/systemd.sh), as
# blkiso-probe.service once multi-user.target is reached: was blkiso
# attached at boot, before the fstab mount by UUID=, does the quota of
# work.slice apply once work.service made it, does `systemctl reload
# blkiso` apply a changed quota?  Prints TAP and BLKISO_VM_EXIT on the
# console, then powers off.
set -uo pipefail
ctl=$BLKISO_CTL uuid=$BLKISO_UUID
tap_prefix=systemd
. "$(dirname "$0")/tap.sh"
# The value of KEY in CGROUP's line on vol1, waiting up to 30 s for VALUE.
quota_becomes() {	# cgroup key value
	local i line
	for i in $(seq 60); do
		line=$($ctl get "$1" vol1 2>/dev/null)
		[[ " $line " == *" $2=$3 "* ]] && return 0
		sleep 0.5
	done
	echo "$line"
	return 1
}
mono() { systemctl show -P ActiveEnterTimestampMonotonic "$1"; }

echo "TAP version 13"
[ "$(cat /proc/1/comm)" = systemd ]
ok $? pid1_is_systemd
st=$(systemctl is-active blkiso.service)
[ "$st" = active ]
ok $? unit_active "$st; $(journalctl -b -u blkiso.service --no-pager | tail -n 5)"
journalctl -b -u blkiso.service --no-pager | grep -q 'applies as the rule /work.slice/work.service'
ok $? boot_apply_missing_cgroup_as_rule "$(journalctl -b -u blkiso.service --no-pager | tail -n 5)"
[ "$(dmsetup info -c --noheadings -o uuid vol1 2>&1)" = BLKISO-vol1 ] && [ -b /dev/mapper/vol1 ]
ok $? attached_at_boot "$(dmsetup ls 2>&1)"
src=$(findmnt -n -o SOURCE /mnt/data)
[ "$src" = /dev/mapper/vol1 ]
ok $? fstab_uuid_mount_on_blkiso "source $src"
b=$(mono blkiso.service) m=$(mono mnt-data.mount)
[ -n "$b" ] && [ -n "$m" ] && [ "$b" -gt 0 ] && [ "$b" -lt "$m" ]
ok $? blkiso_before_mount "blkiso $b mount $m"
[ "$(readlink -f /dev/disk/by-uuid/$uuid)" = "$(readlink -f /dev/mapper/vol1)" ] &&
	[ -L /dev/disk/by-id/dm-uuid-BLKISO-vol1 ]
ok $? udev_names "$(ls -l /dev/disk/by-uuid/ /dev/disk/by-id/ 2>&1 | tr '\n' ' ')"
quota_becomes /work.slice riops 100
ok $? slice_quota
[ "$(systemctl is-active work.service)" = active ] &&
	quota_becomes /work.slice/work.service wiops 50
ok $? service_quota_after_its_start
# A restart makes the service's cgroup anew (a new id): the rule again.
id1=$(stat -c %i /sys/fs/cgroup/work.slice/work.service)
systemctl restart work.service
id2=$(stat -c %i /sys/fs/cgroup/work.slice/work.service)
[ "$id1" != "$id2" ] && quota_becomes /work.slice/work.service wiops 50
ok $? service_quota_after_restart "ids $id1 $id2"
sed -i 's/riops=100/riops=250/' /etc/blkiso/blkiso.conf
systemctl reload blkiso.service && quota_becomes /work.slice riops 250
ok $? reload_applies_changed_quota
# I/O from a unit in the slice is counted for its cgroup (io accounting
# on: else systemd leaves the io controller off and every bio is root's).
systemd-run -q --wait -p Slice=work.slice -p IOAccounting=yes dd if=/dev/mapper/vol1 of=/dev/null bs=4k count=20 \
	iflag=direct 2>/dev/null
$ctl -j stats vol1 | grep -q '"rios":20'
ok $? io_counted_in_slice "$($ctl stats vol1 2>&1 | head -n 8)"
tap_totals
echo "BLKISO_VM_EXIT=$((fail > 0))"
systemctl poweroff -ff
