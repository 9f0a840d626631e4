#!/bin/bash
# profile-guest.sh - in the guest (deterministic mode, under the insncount
# plugin): the overhead scenario's devices (null_blk; dm-linear, blkiso
# without a quota, blkiso with the non-biting riops+runits quota over it),
# then one fio 4 KiB randread qd1 run on BENCH_DEV (default ovh-quota),
# BENCH_IOS reads (default 20000), BENCH_ENGINE (default psync), in a child
# cgroup.  Leaves /proc/kallsyms and /proc/modules in $BLKISO_OUT for the
# report.
set -euo pipefail
ios=${BENCH_IOS:-20000}
dev=${BENCH_DEV:-ovh-quota}
# shellcheck source=selftests/bench/ovh-devices.sh
. "$BLKISO_TOP/selftests/bench/ovh-devices.sh"
ovh_warm
ovh_setup
sh -c "echo \$\$ > /sys/fs/cgroup/bench/cgroup.procs; exec fio --name=o \
	--filename=/dev/mapper/$dev --direct=1 --rw=randread --bs=4k \
	--ioengine=${BENCH_ENGINE:-psync} --iodepth=1 --number_ios=$ios \
	--size=512M --eta=never --output-format=terse" > /dev/null
cat /proc/kallsyms > "$BLKISO_OUT/kallsyms"
cat /proc/modules > "$BLKISO_OUT/modules"
