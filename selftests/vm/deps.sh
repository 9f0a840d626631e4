#!/bin/bash
# deps.sh - install everything blkiso needs on a Debian 12 machine (root).
#
# Idempotent: when every package is installed and both guest kernels are
# unpacked it returns in about a second without asking apt anything.
#
# Guest kernels are never installed on the host: their packages are fetched
# with `apt-get download` and unpacked with `dpkg-deb -x` below
# build/kernels/<version>/, with build/kernels/<series> (6.1, 6.12) a link to
# the version apt offers today.  The versions are discovered from Debian's
# meta packages (linux-image-amd64 for 6.1, linux-image-6.12-amd64 for 6.12),
# never written down here.  The 6.1 headers come from apt (they do not pull
# an image); the 6.12 headers package depends on its image, so it is unpacked
# like the kernel.
#
# promtool (`blkisoctl stats --prometheus` is checked with `promtool check
# metrics`) comes the same way from Debian's prometheus package, unpacked
# below build/prometheus/ so that no server is installed or started.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$top/build/kernels
promtool=$top/build/prometheus/usr/bin/promtool

packages=(
	gcc make bc flex bison libelf-dev libssl-dev pahole
	clang llvm libclang-rt-14-dev valgrind
	qemu-system-x86 busybox-static kmod cpio xz-utils zstd file
	fio liburing-dev libdevmapper-dev dmsetup lvm2
	libcap2-bin util-linux e2fsprogs xfsprogs
	gnuplot-nox python3
	redis-server redis-sentinel libhiredis-dev
	linux-source-6.1
	systemd udev debhelper dh-dkms dkms lintian
)
series_meta=( "6.1:linux-image-amd64" "6.12:linux-image-6.12-amd64" )

say() { printf 'deps: %s\n' "$*"; }

missing_packages() {
	local p st
	for p in "$@"; do
		st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$st" = installed ] || printf '%s\n' "$p"
	done
}

kernels_ready() {
	local sm series
	for sm in "${series_meta[@]}"; do
		series=${sm%%:*}
		[ -f "$kdir/$series/vmlinux" ] || return 1
		[ -f "$kdir/$series/.headers-ok" ] || return 1
	done
	return 0
}

# Fast path: nothing to do.
if [ -z "$(missing_packages "${packages[@]}")" ] && kernels_ready &&
   [ -f "$top/build/ksrc/.stamp" ] && [ -x "$promtool" ]; then
	say "everything is installed"
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	say "must run as root (apt-get install)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_updated=0
apt_update() {
	[ $apt_updated = 1 ] && return 0
	say "apt-get update"
	apt-get update -q >/dev/null
	apt_updated=1
}

# Which kernel does each series mean today?  The meta package's dependency
# names the image, e.g. linux-image-6.1.0-56-amd64 -> 6.1.0-56-amd64.
image_of() {
	apt-cache depends "$1" 2>/dev/null |
		sed -n 's/^  Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1
}

apt_update
declare -A image_pkg
for sm in "${series_meta[@]}"; do
	series=${sm%%:*}
	pkg=$(image_of "${sm#*:}")
	if [ -z "$pkg" ]; then
		say "cannot find the kernel image behind ${sm#*:} in apt" >&2
		exit 1
	fi
	image_pkg[$series]=$pkg
done
ver61=${image_pkg[6.1]#linux-image-}

want=( "${packages[@]}" "linux-headers-$ver61" )
mapfile -t need < <(missing_packages "${want[@]}")
if [ ${#need[@]} -gt 0 ]; then
	say "apt-get install ${need[*]}"
	apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

# Unpack a bzImage's payload into an ELF vmlinux: QEMU boots it through the
# PVH entry, which skips the ~3 s in-guest decompression.
extract_vmlinux() {
	local bz=$1 out=$2 magic off
	for magic in 'xz:\xfd7zXZ\x00' 'zstd:\x28\xb5\x2f\xfd' 'gzip:\x1f\x8b\x08'; do
		off=$(LC_ALL=C grep -obUaP "${magic#*:}" "$bz" | head -n 1 | cut -d: -f1)
		[ -n "$off" ] || continue
		case ${magic%%:*} in
		xz)   tail -c +$((off + 1)) "$bz" | xz -dcq --single-stream > "$out.tmp" 2>/dev/null || true ;;
		zstd) tail -c +$((off + 1)) "$bz" | zstd -dcq > "$out.tmp" 2>/dev/null || true ;;
		gzip) tail -c +$((off + 1)) "$bz" | gzip -dcq > "$out.tmp" 2>/dev/null || true ;;
		esac
		if file "$out.tmp" | grep -q 'ELF 64-bit'; then
			mv "$out.tmp" "$out"
			return 0
		fi
	done
	rm -f "$out.tmp"
	return 1
}

fetch_and_unpack() {
	local dest=$1; shift
	local dl
	dl=$(mktemp -d)
	(cd "$dl" && apt-get download -q "$@" >/dev/null 2>&1) || {
		say "apt-get download $* failed" >&2
		rm -rf "$dl"
		return 1
	}
	for deb in "$dl"/*.deb; do
		dpkg-deb -x "$deb" "$dest"
	done
	rm -rf "$dl"
}

mkdir -p "$kdir"
for sm in "${series_meta[@]}"; do
	series=${sm%%:*}
	pkg=${image_pkg[$series]}
	ver=${pkg#linux-image-}
	root=$kdir/$ver
	if [ ! -f "$root/vmlinux" ]; then
		say "unpacking guest kernel $ver"
		rm -rf "$root"
		mkdir -p "$root"
		fetch_and_unpack "$root" "$pkg"
		bz=$(ls "$root"/boot/vmlinuz-* | head -n 1)
		extract_vmlinux "$bz" "$root/vmlinux" || {
			say "cannot unpack $bz into an ELF vmlinux" >&2
			exit 1
		}
		# Module dependencies of the whole tree, for the initramfs builder.
		depmod -b "$root" "$ver"
	fi
	if [ ! -f "$root/.headers-ok" ]; then
		if [ -d "/usr/src/linux-headers-$ver" ]; then
			ln -sfn "/usr/src/linux-headers-$ver" "$root/headers"
		else
			# The headers package depends on the image: unpack it
			# with its -common and linux-kbuild packages instead.
			mapfile -t hdeps < <(apt-cache depends "linux-headers-$ver" |
				sed -n 's/^  Depends: \(linux-\(headers\|kbuild\)-[^ ]*\)$/\1/p')
			say "unpacking headers for $ver"
			fetch_and_unpack "$root" "linux-headers-$ver" "${hdeps[@]}"
			# Its Makefile includes the -common tree by absolute path.
			sed -i "s|include /usr/src/|include $root/usr/src/|" \
				"$root/usr/src/linux-headers-$ver/Makefile"
			ln -sfn "$root/usr/src/linux-headers-$ver" "$root/headers"
		fi
		[ -f "$root/headers/Makefile" ] || { say "no headers for $ver" >&2; exit 1; }
		touch "$root/.headers-ok"
	fi
	echo "$ver" > "$root/.version"
	ln -sfn "$ver" "$kdir/$series"
done

if [ ! -x "$promtool" ]; then
	say "unpacking promtool (prometheus package)"
	rm -rf "$top/build/prometheus"
	mkdir -p "$top/build/prometheus"
	fetch_and_unpack "$top/build/prometheus" prometheus
	[ -x "$promtool" ] || { say "no promtool in the prometheus package" >&2; exit 1; }
fi

# The kselftest harness and checkpatch from linux-source-6.1.
if [ ! -f "$top/build/ksrc/.stamp" ]; then
	bash "$top/selftests/vm/ksrc.sh" "$top/build/ksrc"
fi
say "done"
