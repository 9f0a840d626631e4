# systemd-root.sh - sourced by the guest's busybox init (selftests/vm/init,
# through /out/pid1.sh that selftests/host/systemd.sh writes): build a root
# for the host's own systemd and exec it as PID 1.
#
# The root is a tmpfs: /usr is the host's (9p, read-only), /bin /sbin /lib
# /lib64 link into it as on the host (merged /usr), /etc is a copy of the
# host's with every unit the host enabled removed (only static units and
# ours run), /var and /tmp are fresh, /usr/lib/modules is the initramfs's
# modules plus blkiso.ko from the `make install` stage.  Our units,
# blkiso.conf, the fstab line and the udev rules come from
# $BLKISO_TOP/build/host/systemd/etc, laid over the copy.
# Expects BLKISO_TOP, BLKISO_KVER (pid1.sh sets them).
set -u
nr=/newroot
stage=/host$BLKISO_TOP/build/host/stage
mkdir -p $nr
mount -t tmpfs -o mode=755 tmpfs $nr || fail "tmpfs root"
mkdir -p $nr/usr $nr/etc $nr/var $nr/tmp $nr/root $nr/host $nr/out $nr/proc $nr/sys \
	$nr/dev $nr/run $nr/mnt $nr/srv $nr/home $nr/opt $nr/media
chmod 1777 $nr/tmp
for l in bin sbin lib lib64; do ln -s usr/$l $nr/$l; done
mount --bind /host/usr $nr/usr || fail "bind /usr"
mount -o remount,bind,ro $nr/usr
# The guest kernel's modules where kmod looks, and blkiso.ko.
mount -t tmpfs tmpfs $nr/usr/lib/modules || fail "tmpfs modules"
cp -a /lib/modules/$BLKISO_KVER $nr/usr/lib/modules/
mkdir -p $nr/usr/lib/modules/$BLKISO_KVER/updates
cp $stage/lib/modules/$BLKISO_KVER/updates/blkiso.ko $nr/usr/lib/modules/$BLKISO_KVER/updates/
ln -sf /usr/bin/kmod /tmp/depmod && /tmp/depmod -b $nr $BLKISO_KVER || fail "depmod"

cp -a /host/etc/. $nr/etc/ 2>/dev/null
# Nothing the host enabled: no getty, no timers, no daemons, no SysV.
rm -rf $nr/etc/systemd/system/* $nr/etc/systemd/user/* $nr/etc/rc?.d $nr/etc/init.d
rm -f $nr/etc/fstab $nr/etc/crypttab $nr/etc/machine-id
: > $nr/etc/machine-id
cp -a /host$BLKISO_TOP/build/host/systemd/etc/. $nr/etc/
echo blkiso-systemd > $nr/etc/hostname
mkdir -p $nr/var/tmp $nr/var/log $nr/var/lib $nr/var/cache
chmod 1777 $nr/var/tmp

# The kernel filesystems and the shares move along.
for m in /dev /proc /sys /host /out; do
	mount --move $m $nr$m || fail "move $m"
done
umount /run /tmp /mnt 2>/dev/null
exec switch_root $nr /usr/lib/systemd/systemd --log-target=console
