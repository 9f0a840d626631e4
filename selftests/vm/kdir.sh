#!/bin/bash
# kdir.sh [SERIES|RELEASE] - print the kernel build directory to build
# blkiso for.  A series (6.1, 6.12) means the headers `make deps` unpacked
# for that guest kernel, "debug" the build tree of `make debug-kernel`; a
# release means /lib/modules/RELEASE/build; nothing
# means the running kernel's headers when installed, else the newest Debian
# headers found.
top=$(cd "$(dirname "$0")/../.." && pwd)
want=${1:-}
if [ "$want" = debug ]; then
	d=$top/build/debug-kernel/current/headers
	[ -f "$d/Makefile" ] && { echo "$d"; exit 0; }
	echo "kdir: no debug kernel: run 'make debug-kernel'" >&2
	exit 1
fi
if [ -n "$want" ]; then
	for d in "$top/build/kernels/$want/headers" "/lib/modules/$want/build"; do
		[ -f "$d/Makefile" ] && { echo "$d"; exit 0; }
	done
	echo "kdir: no headers for kernel '$want': run 'make deps'" >&2
	exit 1
fi
d=/lib/modules/$(uname -r)/build
[ -f "$d/Makefile" ] && { echo "$d"; exit 0; }
best=$(for d in /usr/src/linux-headers-*-amd64 "$top"/build/kernels/*/headers; do
	[ -f "$d/Makefile" ] || continue
	r=$(basename "$(realpath "$d")"); echo "${r#linux-headers-} $d"
done | sort -V -k1,1 | tail -n 1 | cut -d' ' -f2)
[ -n "$best" ] || { echo "kdir: no kernel headers found: run 'make deps'" >&2; exit 1; }
echo "$best"
