#!/bin/bash
# kroot.sh SERIES - print the directory of a guest kernel: build/kernels/SERIES
# as `make deps` unpacked it (6.1, 6.12), or for "debug" the kernel of
# `make debug-kernel` (build/debug-kernel/current, the same layout).
top=$(cd "$(dirname "$0")/../.." && pwd)
series=${1:?usage: kroot.sh SERIES}
if [ "$series" = debug ]; then
	kroot=$top/build/debug-kernel/current how="make debug-kernel"
else
	kroot=$top/build/kernels/$series how="make deps"
fi
[ -f "$kroot/vmlinux" ] || { echo "no guest kernel $series: run '$how'" >&2; exit 1; }
echo "$kroot"
