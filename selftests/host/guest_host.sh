#!/bin/bash
# guest_host.sh - inside the busybox guest (selftests/vm/run.sh): blkiso as
# a host installs it (selftests/host/run.sh made the `make install` tree
# $BLKISO_TOP/build/host/stage).  kselftest-style output:
#   module   installed into /lib/modules/<release>/updates with depmod,
#            `modprobe blkiso` pulls dm-mod in, a dm table naming blkiso
#            loads the module by its alias;
#   apply    attach lines (idempotent), a tenant line for a missing cgroup
#            applied as a rule on its path (its quota from the cgroup's
#            first I/O once it appears), a bad line changes
#            nothing and removes what the run attached;
#   udev     systemd-udevd with the dm rules and 60-blkiso.rules: the dm
#            UUID BLKISO-NAME, /dev/disk/by-id, by-uuid and UUID= mounts on
#            the blkiso device and back on the disk after detach.
set -uo pipefail
top=${BLKISO_TOP:?run me in the guest through selftests/vm/run.sh}
stage=$top/build/host/stage
ctl=$stage/usr/local/sbin/blkisoctl
ver=$(uname -r)
cg=/sys/fs/cgroup
# util-linux and kmod of the host, not busybox.
export PATH=/sbin:/usr/sbin:/usr/bin:$PATH
tap_prefix=host
. "$(dirname "$0")/tap.sh"
finish() {
	tap_totals
	exit $((fail > 0))
}
echo "TAP version 13"

# The guest's / is a ramfs: kmod and dmsetup from the host, where the
# kernel (request_module) and udev's dm rules look for them.
for b in modprobe depmod rmmod insmod lsmod; do
	ln -sf /usr/bin/kmod "/sbin/$b"
done
ln -sf /usr/sbin/dmsetup /sbin/dmsetup

# ---- module ----
cp -r "$stage/lib/modules/$ver/updates" "/lib/modules/$ver/"
depmod -a "$ver"
[ ! -e /sys/module/dm_mod ] && modprobe blkiso && [ -e /sys/module/dm_mod ] &&
	[ -e /sys/module/blkiso ] && [ -e /dev/blkiso ]
ok $? module_modprobe_pulls_dm_mod
rmmod blkiso
modprobe null_blk nr_devices=1 gb=1
sectors=$(blockdev --getsz /dev/nullb0)
dmsetup create alias_test --table "0 $sectors blkiso /dev/nullb0 0" && [ -e /sys/module/blkiso ]
ok $? module_table_autoloads
dmsetup remove alias_test

# ---- apply ----
truncate -s 64M /tmp/disk1 /tmp/disk2
modprobe loop max_loop=4
l1=$(losetup -f --show /tmp/disk1) && l2=$(losetup -f --show /tmp/disk2) ||
	{ ok 1 loop_devices; finish; }
mkdir -p $cg/tenant_a
conf=/tmp/blkiso.conf
cat > $conf <<EOC
# boot configuration
attach $l1 vol1
device vol1 unit_bytes=4096
tenant vol1 /tenant_a riops=111
tenant /dev/mapper/vol1 /later.slice/batch.service wiops=222
EOC
out=$($ctl apply $conf 2>&1); st=$?
[ $st = 0 ] && [ -e /dev/mapper/vol1 ] &&
	echo "$out" | grep -q 'blkiso.conf:5: note: cgroup /later.slice/batch.service does not exist yet: its line applies as the rule /later.slice/batch.service' &&
	$ctl rule list vol1 | grep -q ' /later.slice/batch.service .*wiops=222' &&
	[ "$($ctl get /tenant_a vol1 | cut -d' ' -f1)" = riops=111 ] &&
	$ctl device get vol1 | grep -q unit_bytes=4096
ok $? apply_missing_cgroup_becomes_rule "status $st: $out; rules: $($ctl rule list vol1 2>&1)"
out=$($ctl apply $conf 2>&1); st=$?
[ $st = 0 ] && ! echo "$out" | grep -q attached && [ "$($ctl rule list vol1 | wc -l)" = 1 ]
ok $? apply_again_attach_is_idempotent "status $st: $out"
# The cgroup appears and does I/O: its tenant has the rule's quota.
echo +io > $cg/cgroup.subtree_control
mkdir -p $cg/later.slice/batch.service
echo +io > $cg/later.slice/cgroup.subtree_control
sh -c "echo \$\$ > $cg/later.slice/batch.service/cgroup.procs &&
	exec dd if=/dev/mapper/vol1 of=/dev/null bs=4k count=4 iflag=direct 2>/dev/null"
line=$($ctl get /later.slice/batch.service vol1 2>&1)
[[ " $line " == *" wiops=222 "* ]]
ok $? apply_rule_quota_when_cgroup_appears "$line"
# A bad line after an attach line: nothing changes, vol2 is removed again.
cat > /tmp/bad.conf <<EOC
attach $l2 vol2
tenant vol1 /tenant_a riops=333
tenant vol2 /tenant_a riops=5q
EOC
out=$($ctl apply /tmp/bad.conf 2>&1); st=$?
[ $st = 2 ] && echo "$out" | grep -q 'bad.conf:3:.*5q' && echo "$out" | grep -q 'nothing applied' &&
	[ ! -e /dev/mapper/vol2 ] && ! dmsetup info vol2 >/dev/null 2>&1 &&
	[ "$($ctl get /tenant_a vol1 | cut -d' ' -f1)" = riops=111 ]
ok $? apply_bad_line_changes_nothing "status $st: $out"
printf 'attach %s vol1\n' "$l2" > /tmp/other.conf
out=$($ctl apply /tmp/other.conf 2>&1); st=$?
[ $st = 2 ] && echo "$out" | grep -q 'other.conf:1: vol1: attached over'
ok $? apply_attach_name_taken "status $st: $out"
printf 'tenant nosuchdev /tenant_a riops=1\n' > /tmp/nodev.conf
$ctl apply /tmp/nodev.conf 2>/dev/null; st=$?
[ $st = 3 ]
ok $? apply_unknown_device_not_found "status $st"
[ "$(dmsetup info -c --noheadings -o uuid vol1)" = BLKISO-vol1 ]
ok $? attach_sets_dm_uuid
$ctl detach vol1

# ---- udev ----
unset DM_DISABLE_UDEV
mkdir -p /etc/udev/rules.d
cp "$stage/etc/udev/rules.d/60-blkiso.rules" /etc/udev/rules.d/
# The host's links point at /bin/udevadm, which is busybox's /bin here.
ln -sf /usr/bin/udevadm /bin/udevadm
ln -sf /usr/bin/udevadm /sbin/systemd-udevd
/sbin/systemd-udevd --daemon
udevadm trigger --action=add --subsystem-match=block && udevadm settle -t 30
uuid=11111111-2222-3333-4444-555555555555
mkfs.ext4 -q -F -L blkisotest -U $uuid "$l1"
udevadm settle -t 30
[ "$(readlink -f /dev/disk/by-uuid/$uuid)" = "$l1" ]
ok $? udev_disk_has_uuid_before_attach "$(ls -l /dev/disk/by-uuid/ 2>&1)"
out=$($ctl attach "$l1" vol1 2>&1); st=$?
udevadm settle -t 30
dm=$(readlink -f /dev/mapper/vol1)
[ $st = 0 ] && [ -b /dev/mapper/vol1 ] && [ "$(readlink -f /dev/disk/by-id/dm-uuid-BLKISO-vol1)" = "$dm" ] &&
	[ "$(readlink -f /dev/disk/by-id/dm-name-vol1)" = "$dm" ]
ok $? udev_by_id_names "status $st $out; $(ls -l /dev/disk/by-id/ 2>&1)"
[ "$(readlink -f /dev/disk/by-uuid/$uuid)" = "$dm" ] &&
	[ "$(readlink -f /dev/disk/by-label/blkisotest)" = "$dm" ] &&
	[ "$(udevadm info -q property -n "$l1" | grep -c '^ID_FS_UUID=')" = 0 ] &&
	udevadm info -q property -n "$l1" | grep -q '^BLKISO_LOWER=1'
ok $? udev_by_uuid_is_blkiso_device "$(ls -l /dev/disk/by-uuid/ /dev/disk/by-label/ 2>&1)"
mkdir -p /mnt/fs && /usr/bin/mount UUID=$uuid /mnt/fs &&
	[ "$(findmnt -n -o SOURCE /mnt/fs)" = /dev/mapper/vol1 ] &&
	[ "$(readlink -f "$(blkid -U $uuid)")" = "$dm" ]
ok $? udev_uuid_mount_lands_on_blkiso "$(findmnt -n -o SOURCE /mnt/fs) $(blkid -U $uuid)"
umount /mnt/fs
$ctl detach vol1 && udevadm settle -t 30
[ "$(readlink -f /dev/disk/by-uuid/$uuid)" = "$l1" ]
ok $? udev_detach_gives_names_back "$(ls -l /dev/disk/by-uuid/ 2>&1)"
udevadm control --exit
finish
