// SPDX-License-Identifier: GPL-2.0
/*
 * sim_device.c - the device model of blkiso-sim.
 *
 * One job: how long the lower device takes for one bio, and when it may
 * start one.  The device serves up to Q bios at once, each for L plus
 * per_kib_ns per KiB of payload (the null_blk model of the catalogue's
 * TB-F: queue_mode=2 irqmode=2 completion_nsec=L hw_queue_depth=Q gives
 * about Q/L IOPS); bios beyond Q wait in FIFO order, and that wait is part
 * of their device latency (dispatch -> completion, A-27), as it is for a
 * real lower queue.
 *
 * mbps=M is null_blk's device-wide bandwidth budget (its mbps= parameter,
 * drivers/block/null_blk): every 1 ms window has (2^20 / 1000) x M bytes;
 * a bio larger than what is left of it is refused, and nothing starts
 * until the next window, when the budget is whole again (what was not
 * spent is not carried).  A refused bio gives its slot back and waits at
 * the head of the FIFO: one bio in flight can spend a window's budget, so
 * the slots are not what a small bio waits behind (issue 20's ssd shape).
 */
#include "sim_engine.h"

u64 sim_device_service_ns(const struct sim_device *d, u64 bytes)
{
	return d->latency_ns + d->per_kib_ns * ((bytes + 1023) >> 10);
}

/*
 * Take @bytes of this window's budget.  Returns false, and the start of
 * the next window in *@retry_ns, when they do not fit: the rest of this
 * window is then spent (null_blk refuses everything until its timer).
 */
bool sim_device_budget_take(struct sim *s, u64 bytes, u64 *retry_ns)
{
	u64 window = s->now / SIM_DEV_WINDOW_NS;

	if (!s->dev.window_bytes)
		return true;
	if (window != s->dev_window) {
		s->dev_window = window;
		s->dev_budget = s->dev.window_bytes;
	}
	if (bytes <= s->dev_budget) {
		s->dev_budget -= bytes;
		return true;
	}
	s->dev_budget = 0;
	*retry_ns = (window + 1) * SIM_DEV_WINDOW_NS;
	return false;
}
