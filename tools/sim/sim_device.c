// SPDX-License-Identifier: GPL-2.0
/*
 * sim_device.c - the device model of blkiso-sim.
 *
 * One job: how long the lower device takes for one bio.  The device serves
 * up to Q bios at once, each for L plus per_kib_ns per KiB of payload (the
 * null_blk model of the catalogue's TB-F: queue_mode=2 irqmode=2
 * completion_nsec=L hw_queue_depth=Q gives about Q/L IOPS); bios beyond Q
 * wait in FIFO order, and that wait is part of their device latency
 * (dispatch -> completion, A-27), as it is for a real lower queue.
 */
#include "sim_engine.h"

u64 sim_device_service_ns(const struct sim_device *d, u64 bytes)
{
	return d->latency_ns + d->per_kib_ns * ((bytes + 1023) >> 10);
}
