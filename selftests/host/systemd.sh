#!/bin/bash
# systemd.sh [SERIES] - blkiso.service for real: a guest whose PID 1 is the
# host's systemd (selftests/host/systemd-root.sh builds its root), with
# systemd-udevd and the dm udev rules running, a virtio disk with an ext4
# filesystem, and an fstab line mounting it by UUID= (make systemd-check,
# part of make check-full).  /etc/blkiso/blkiso.conf attaches blkiso over
# the disk by its /dev/disk/by-id name and gives /work.slice and
# work.service's own cgroup quotas; the latter appears only when
# work.service starts (its line becomes a rule on the path, so the quota
# is there from the service's first read, and again after a restart).
# selftests/host/systemd-probe.sh checks the result once
# multi-user.target is reached, then reloads a changed quota.  The
# journal goes to the console: a boot that does not get there shows how
# far it got in build/host/systemd-out/console.log.
set -uo pipefail
series=${1:-6.1}
top=$(cd "$(dirname "$0")/../.." && pwd)
h=$top/build/host
stage=$h/stage sd=$h/systemd out=$h/systemd-out
uuid=5b1c1a5e-0b5e-4d1e-9a7e-000000b1c150
kver=$(cat "$top/build/kernels/$series/.version")
echo "TAP version 13"
rm -rf "$stage" "$sd" "$out"
make -C "$top" --no-print-directory install DESTDIR="$stage" KVER="$series" >/dev/null 2>&1 || {
	echo "not ok 1 systemd.make_install"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	exit 1
}
e=$sd/etc
mkdir -p "$e/systemd/system/sysinit.target.wants" "$e/systemd/system/multi-user.target.wants" \
	"$e/blkiso" "$e/udev/rules.d" "$e/systemd/journald.conf.d"
sed -e "s|@SBINDIR@|/host$stage/usr/local/sbin|g" -e 's|@SYSCONFDIR@|/etc|g' \
	"$top/dist/blkiso.service.in" > "$e/systemd/system/blkiso.service"
ln -s ../blkiso.service "$e/systemd/system/sysinit.target.wants/blkiso.service"
cp "$top/dist/60-blkiso.rules" "$e/udev/rules.d/"
cat > "$e/blkiso/blkiso.conf" <<EOC
attach /dev/disk/by-id/virtio-blkisodisk vol1
tenant vol1 /work.slice riops=100
tenant vol1 /work.slice/work.service wiops=50
EOC
echo "UUID=$uuid /mnt/data ext4 defaults,x-systemd.device-timeout=60s 0 0" > "$e/fstab"
cat > "$e/systemd/system/work.service" <<EOC
[Unit]
Description=a service whose slice has a blkiso quota
After=blkiso.service
[Service]
Slice=work.slice
IOAccounting=yes
ExecStart=/bin/sh -c 'dd if=/dev/mapper/vol1 of=/dev/null bs=4k count=1 iflag=direct; exec sleep infinity'
[Install]
WantedBy=multi-user.target
EOC
cat > "$e/systemd/system/blkiso-probe.service" <<EOC
[Unit]
Description=blkiso systemd test probe
After=multi-user.target work.service mnt-data.mount blkiso.service
[Service]
Type=oneshot
Environment=BLKISO_CTL=/host$stage/usr/local/sbin/blkisoctl BLKISO_UUID=$uuid
ExecStart=/bin/bash /host$top/selftests/host/systemd-probe.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/console
[Install]
WantedBy=multi-user.target
EOC
ln -s ../work.service "$e/systemd/system/multi-user.target.wants/"
ln -s ../blkiso-probe.service "$e/systemd/system/multi-user.target.wants/"
ln -s /usr/lib/systemd/system/multi-user.target "$e/systemd/system/default.target"
for u in getty.target serial-getty@.service console-getty.service systemd-firstboot.service \
	 systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
	 fstrim.timer man-db.timer systemd-tmpfiles-clean.timer; do
	ln -s /dev/null "$e/systemd/system/$u"
done
printf '[Journal]\nForwardToConsole=yes\nMaxLevelConsole=info\nStorage=volatile\n' \
	> "$e/systemd/journald.conf.d/console.conf"

truncate -s 64M "$sd/disk.img"
mkfs.ext4 -q -F -U "$uuid" -L blkdata "$sd/disk.img" || exit 1

mkdir -p "$out"
cat > "$out/pid1.sh" <<EOC
BLKISO_TOP='$top' BLKISO_KVER='$kver'
. /host$top/selftests/host/systemd-root.sh
EOC
BLKISO_VM_OUT=$out \
BLKISO_QEMU_EXTRA="-drive file=$sd/disk.img,if=none,id=d0,format=raw -device virtio-blk-pci,drive=d0,serial=blkisodisk" \
	bash "$top/selftests/vm/run.sh" -k "$series" -t "${BLKISO_SYSTEMD_TIMEOUT:-600}" \
	"$top/selftests/host/systemd-probe.sh" > "$out/run.log" 2>&1
rc=$?
grep -E '^(not )?ok [0-9]+ systemd\.|^# Totals:' "$out/console.log"
if ! grep -q '^# Totals:' "$out/console.log"; then
	echo "# boot did not reach the probe (status $rc); the console's last lines:"
	grep -v '^BLKISO_VM_EXIT' "$out/console.log" | tail -n 25 | sed 's/^/#   /'
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	exit 1
fi
exit $rc
