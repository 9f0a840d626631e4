#!/bin/bash
# debug-kernel.sh - build the debug guest kernel (make debug-kernel): Debian's
# linux-source-6.1 configured by `make allnoconfig` plus selftests/vm/debug.config
# (KASAN, lockdep, UBSAN, kmemleak, DEBUG_OBJECTS, fault injection; see
# doc/robustness.md), laid out like a Debian guest kernel of `make deps` so
# run.sh, mkinitramfs.sh and kdir.sh treat it as the series "debug":
#
#   build/debug-kernel/<key>/vmlinux, bzImage (what QEMU boots), .version,
#       boot/config-<release>,
#       lib/modules/<release>/ (null_blk, scsi_debug; modules.builtin),
#       headers -> linux-headers-<release>, the build tree blkiso.ko builds in
#   build/debug-kernel/current -> <key>
#
# <key> hashes the fragment, the make arguments below and the source
# package's version: a kernel built once is reused until one of them
# changes.  The build runs at nice 19 with -j${DEBUG_KERNEL_JOBS:-2} (the
# machine is shared).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
frag=$top/selftests/vm/debug.config
tarball=/usr/src/linux-source-6.1.tar.xz
jobs=${DEBUG_KERNEL_JOBS:-2}
base=$top/build/debug-kernel
# The PVH entry (QEMU's -kernel vmlinux) runs C code before KASAN's shadow
# exists and triple-faults: arch/x86/platform/pvh/enlighten.c is built
# uninstrumented here, but it calls instrumented lib/string.c too, so the
# runner boots this kernel's bzImage instead (the Linux boot protocol).
make_args=(KASAN_SANITIZE_enlighten.o=n)

[ -f "$tarball" ] || { echo "debug-kernel: no $tarball: run 'make deps'" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
key=$( { cat "$frag"; echo "${make_args[*]}"; echo "$srcver"; } | sha256sum | cut -c1-12)
kroot=$base/$key
if [ -f "$kroot/.built" ] && [ -f "$kroot/bzImage" ]; then
	ln -sfn "$key" "$base/current"
	echo "debug-kernel: $(cat "$kroot/.version") is built ($kroot)"
	exit 0
fi

t0=$(date +%s)
src=$base/src-$srcver
if [ ! -f "$src/.unpacked" ]; then
	echo "debug-kernel: unpacking linux-source-6.1 $srcver"
	rm -rf "$src" && mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	touch "$src/.unpacked"
fi

# The release names the key, so blkiso.ko built for one config never
# loads into another.
localver=-$key
rel=$(make -s -C "$src" LOCALVERSION="$localver" kernelversion)-blkiso-debug$localver
obj=$kroot/linux-headers-$rel
mkdir -p "$obj"
kmake() { nice -n 19 make -C "$src" O="$obj" LOCALVERSION="$localver" "${make_args[@]}" "$@"; }

kmake -s KCONFIG_ALLCONFIG="$frag" allnoconfig
# Every line of the fragment must have survived (a dependency not met
# silently drops a symbol).
bad=0
while IFS= read -r line; do
	case $line in CONFIG_*=*) ;; *) continue ;; esac
	grep -qxF "$line" "$obj/.config" || {
		echo "debug-kernel: $line did not survive: $(grep "^${line%%=*}=\|# ${line%%=*} " "$obj/.config" || echo unset)" >&2
		bad=1
	}
done < "$frag"
[ "$bad" = 0 ] || exit 1
[ "$(kmake -s kernelrelease)" = "$rel" ] || { echo "debug-kernel: release is not $rel" >&2; exit 1; }

echo "debug-kernel: building $rel in $obj (nice 19, -j$jobs)"
kmake -j"$jobs" bzImage modules
kmake -s INSTALL_MOD_PATH="$kroot" modules_install
rm -f "$kroot/lib/modules/$rel/build" "$kroot/lib/modules/$rel/source"
cp "$obj/vmlinux" "$kroot/vmlinux"
cp "$obj/arch/x86/boot/bzImage" "$kroot/bzImage"
mkdir -p "$kroot/boot"
cp "$obj/.config" "$kroot/boot/config-$rel"
ln -sfn "linux-headers-$rel" "$kroot/headers"
echo "$rel" > "$kroot/.version"
touch "$kroot/.built"
ln -sfn "$key" "$base/current"
echo "debug-kernel: built $rel in $(( $(date +%s) - t0 ))s"
