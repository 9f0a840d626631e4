#!/bin/bash
# mkinitramfs.sh SERIES OUT - build the guest's initramfs for a guest kernel
# unpacked by `make deps` (build/kernels/SERIES) or the debug kernel.
#
# It holds only busybox, the init script and the in-tree modules the tests
# use (with their dependencies, decompressed, depmod'ed).  Everything else
# (bash, fio and its ~60 libraries, dmsetup, the project tree with
# blkiso.ko and the test programs) comes read-only from the host over 9p:
# the host's / is mounted at /host and /usr points there, so host binaries
# run unchanged in the guest.
set -euo pipefail
series=$1 out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
kroot=$(bash "$top/selftests/vm/kroot.sh" "$series")
ver=$(cat "$kroot/.version")

# Modules the tests and the runner use; their dependencies are added (the
# debug kernel has most built in: modprobe finds them in modules.builtin).
modules=(
	virtio_pci 9pnet_virtio 9p configfs virtio_blk
	null_blk scsi_debug sd_mod loop nvme
	dm-mod dm-delay dm-flakey dm-crypt
	bfq kyber-iosched
	ext4 xfs crc32c_generic crc32c-intel libcrc32c
)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,run,host,out,etc,root,mnt,lib/modules}
# mktemp makes it 0700: non-root tests must be able to resolve paths.
chmod 755 "$stage"
cp /bin/busybox "$stage/bin/busybox"
# Scripts say #!/bin/bash: the host's bash, through /usr.
ln -s /usr/bin/bash "$stage/bin/bash"
cp "$top/selftests/vm/init" "$stage/init"
chmod 755 "$stage/init"

# Host binaries run in the guest through these links.
ln -s /host/usr "$stage/usr"
ln -s /usr/lib64 "$stage/lib64"
ln -s /usr/lib/x86_64-linux-gnu "$stage/lib/x86_64-linux-gnu"
ln -s /host/etc/ld.so.cache "$stage/etc/ld.so.cache"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' > "$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$stage/etc/group"

mdest=$stage/lib/modules/$ver
mkdir -p "$mdest"
# A module this kernel lacks is left out (the debug kernel has no
# virtio_blk, which only systemd-check's guest needs); the ones every test
# needs are checked below.
for m in "${modules[@]}"; do
	modprobe -d "$kroot" -S "$ver" --show-depends "$m" 2>/dev/null |
		sed -n 's/^insmod \([^ ]*\).*/\1/p' || true
done | sort -u | while read -r path; do
	rel=${path#"$kroot/lib/modules/$ver/"}
	mkdir -p "$mdest/$(dirname "$rel")"
	case $path in
	*.ko.xz)  xz -dc "$path" > "$mdest/${rel%.xz}" ;;
	*.ko.zst) zstd -dcq "$path" > "$mdest/${rel%.zst}" ;;
	*)        cp "$path" "$mdest/$rel" ;;
	esac
done
cp "$kroot/lib/modules/$ver"/modules.{order,builtin,builtin.modinfo} "$mdest/" 2>/dev/null || true
depmod -b "$stage" "$ver"
for m in null_blk dm-mod 9p; do
	modprobe -d "$stage" -S "$ver" --show-depends "$m" >/dev/null ||
		{ echo "mkinitramfs: module $m missing for $ver" >&2; exit 1; }
done

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
