# ovh-devices.sh - sourced in the guest by the scripts that measure the cost
# per read (overhead-guest.sh, insncount/profile-guest.sh): warm the page
# cache with the host binaries they run, then one null_blk device "ovh"
# (1 GiB, null_blk defaults) and over it dm-linear (ovh-linear), blkiso
# without a quota (ovh-blkiso), and blkiso with a quota that never bites
# (ovh-quota: $ovh_quota for the cgroup "bench", which the reads run in;
# its blkiso directory in $ovh_quota_dir).  BENCH_QUOTA: another line for
# it (e.g. one key, "riops=1000000000", or "initial=1 ..."), to measure the
# general charge against the exact two-key one.
# shellcheck shell=bash
ovh_quota=${BENCH_QUOTA:-"riops=1000000000 runits=1000000000"}
ovh_quota_dir=
ovh_nb=/sys/kernel/config/nullb/ovh

# Page cache first: fio and its libraries come over 9p, and in the
# deterministic mode the guest clock leaps while it waits for the host.
ovh_warm() {
	local b p
	for b in fio dmsetup blockdev bc; do
		p=$(command -v "$b") || continue
		# shellcheck disable=SC2046  # the libraries, one word each
		cat "$p" $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*') > /dev/null 2>&1 || true
	done
	fio --version > /dev/null
}

ovh_setup() {
	local nb=$ovh_nb sz d
	modprobe dm-mod
	insmod "$BLKISO_KO"
	modprobe null_blk nr_devices=0
	mkdir "$nb"; echo 1024 > "$nb/size"; echo 1 > "$nb/power"
	sz=$(blockdev --getsz /dev/ovh)
	dmsetup create ovh-linear --table "0 $sz linear /dev/ovh 0"
	dmsetup create ovh-blkiso --table "0 $sz blkiso /dev/ovh 0"
	dmsetup create ovh-quota --table "0 $sz blkiso /dev/ovh 0"
	echo +io > /sys/fs/cgroup/cgroup.subtree_control
	mkdir -p /sys/fs/cgroup/bench
	for d in /sys/block/dm-*; do
		if [ "$(cat "$d"/dm/name)" = ovh-quota ]; then
			ovh_quota_dir=/sys/kernel/blkiso/$(basename "$d")
		fi
	done
	echo "/bench $ovh_quota" > "$ovh_quota_dir/tenant"
}
