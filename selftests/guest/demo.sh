#!/bin/bash
# demo.sh - the main job at this stage, run in the guest by `make demo`:
# attach blkiso over a null_blk device, push fio through it and show the
# result next to the raw device.  (The isolation demo with tenants and
# quotas replaces this as the policy issues land.)
set -euo pipefail
modprobe dm-mod
insmod "$BLKISO_KO"
modprobe null_blk nr_devices=0
nb=/sys/kernel/config/nullb/demo
mkdir "$nb"
echo 1024 > "$nb/size"; echo 1 > "$nb/memory_backed"; echo 1 > "$nb/power"
sectors=$(blockdev --getsz /dev/demo)
dmsetup create demo-iso --table "0 $sectors blkiso /dev/demo 0"
echo "blkiso $(cat /sys/kernel/blkiso/version) on $(uname -r): $(dmsetup table demo-iso)"
run() {
	fio --name="$1" --filename="$2" --direct=1 --ioengine=psync --rw=randrw \
	    --bs=4k --size=64M --verify=crc32c --eta=never --output-format=json \
	    --output="$BLKISO_OUT/demo-$1.json" >/dev/null
	awk -v n="$1" '/"read" : \{/ {r=1} r && /"iops" :/ {gsub(",","");ri=$3; r=0}
		/"write" : \{/ {w=1} w && /"iops" :/ {gsub(",","");wi=$3; w=0}
		END {printf "%-10s read %8.0f IOPS  write %8.0f IOPS  (verify crc32c ok)\n", n, ri, wi}' \
		"$BLKISO_OUT/demo-$1.json"
}
run raw /dev/demo
run blkiso /dev/mapper/demo-iso
dmsetup remove demo-iso
rmmod blkiso
echo "fio JSON: build/vm/out/latest/demo-*.json"
