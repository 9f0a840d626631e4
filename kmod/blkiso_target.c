// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_target.c - the "blkiso" device-mapper target: its hooks, .map and
 * .end_io with their inline one-level charge.  What a bio is (owner, cost
 * at the lower queue) is read in blkiso_bio.h; its charge along a chain of
 * tenants, and where that charge is kept until .end_io, is
 * blkiso_charge.c; where it waits and what sends it on is
 * blkiso_dispatch.c.
 *
 * Table line (dm-linear compatible, so a blkiso segment can replace a
 * linear one live):
 *
 *	<dev> <offset> [<#params> <key=value>...]
 *
 * The parameters are a device line in the grammar of kmod/core/conf.h
 * (doc/grammar.md), e.g. "2 unit_bytes=4096 tick_ms=50".
 *
 * A bio's way through the target:
 *
 *  blkiso_map()      with chunk_bytes set, cut a larger read or write to
 *                    its first chunk (blkiso_chunk(): dm core sends the
 *                    rest through .map again, one piece at a time); then
 *                    remap to the lower device (which also ties the bio to
 *                    the submitting task's cgroup), find the tenant by cgroup
 *                    id (RCU hash; created on first sight without sleeping);
 *                    a tenant the depth limit binds (issue 20) has a larger
 *                    read or write cut to one lower request
 *                    (blkiso_depth_cut(), the same way), a REQ_NOWAIT one
 *                    too, its pieces without the flag, and where its rest
 *                    begins noted for the submitting task, so that the
 *                    rest, known by task and sector whenever it comes
 *                    back, loses the flag as well and is never refused
 *                    (refused whole only if no note is free); a tenant
 *                    capped in bytes has one of more requests than half
 *                    the lower device's slots cut the same way until it
 *                    fits (blkiso_cap_cut()).  The tenant:
 *                    a write of page-cache pages is its owner's (cgroup
 *                    writeback's), other bios the submitter's, those of
 *                    kernel threads the "kernel" tenant's; and
 *                    charge the bio through the tenant's per-CPU local
 *                    buckets (kmod/core/meter.c), and through those of its
 *                    configured ancestor cgroups' tenants (io.max nesting;
 *                    all levels or none).  Admitted: back to dm at once.
 *                    Not admitted: a REQ_NOWAIT bio ends with BLK_STS_AGAIN
 *                    (io_uring retries it from a worker), in reject mode or
 *                    by a reject policy a bio fails with BLK_STS_IOERR, any
 *                    other bio is parked at the tail of its tenant's FIFO
 *                    for its class; while that FIFO holds bios, new ones of
 *                    the class park behind them.  System-class bios (flush,
 *                    FUA, meta, writes the kernel waits on) are charged but
 *                    never parked.
 *  dispatch          an hrtimer at the earliest retry time kicks a work item
 *                    (a timer cannot submit bios) that serves the tenants by
 *                    deficit round robin in work units (classes in priority
 *                    order within a tenant), and submits what it admitted
 *                    with dm_submit_bio_remap().
 *  blkiso_end_io()   corrects the charge to the bio's actual cost (may run in
 *                    hard-IRQ context: per-CPU data with IRQs off only) and
 *                    counts the completion and its latency.
 *  presuspend        sets the device draining and dispatches every parked bio
 *                    at once, counted as debt, so suspend, reload and remove
 *                    never wait behind a low quota; resume ends draining.
 *  dead lower disk   (removed, powered off: GD_DEAD or a dying queue, never
 *                    a mere I/O error) the dispatcher fails every held bio
 *                    with BLK_STS_IOERR within one tick, and a bio that
 *                    would wait goes straight down instead, to fail there as
 *                    on dm-linear: a quota only delays a failure then.
 *
 * The admit-at-once path takes no device-wide lock and writes no shared
 * cache line: the tenant hash is read under RCU, the charge hits this CPU's
 * local buckets, the counters are per CPU.
 *
 * One throttled bio, step by step (a 64 KiB read of /P/C, P capped at
 * riops=100, its local bucket empty):
 *  1. blkiso_map() (here), IRQs off: blkiso_bio_cgroup() (blkiso_bio.h)
 *     names /P/C, blkiso_tenant_find() (blkiso.h) its tenant C, counted
 *     arrived; blkiso_levels() follows C->parent to P (C has no cap of its
 *     own): pb->level0 = P, P held (->held, the lifetime rule in
 *     blkiso.h); a level not its own leaves the inline fast path
 *     (blkiso_decide()).
 *  2. blkiso_map_slow(): blkiso_charge() (blkiso_charge.c) finds P's local
 *     bucket short, asks P's global bucket (kmod/core/meter.c, dispense.c)
 *     and is refused with a retry time; not REQ_NOWAIT, no reject mode:
 *     blkiso_park() (blkiso_dispatch.c) puts it on C's FIFO for its class,
 *     C on dev->parked, arms the hrtimer.
 *  3. The timer kicks blkiso_dispatch_work() (blkiso_dispatch.c): under the
 *     device lock, at most BLKISO_DISPATCH_BATCH bios per run, deficit
 *     round robin over the parked tenants; C's turn charges the bio again
 *     (blkiso_charge()), now admitted: counted dispatched, submitted with
 *     dm_submit_bio_remap() after the lock is dropped.
 *  4. blkiso_end_io() (here), any context: the charge corrected to the
 *     actual cost on this CPU's local buckets of every level, P given back
 *     (blkiso_levels_put(), blkiso_charge.c), latency and counters, and last the completion
 *     count, after which the collector (blkiso_dev.c) may free C or P if
 *     their cgroups are gone.
 * A bio that is admitted at once stops after step 1 and goes on at step 4.
 */
#include <linux/module.h>
#include <linux/device-mapper.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/slab.h>

#include <linux/ktime.h>
#include <linux/delay.h>
#include <linux/rcupdate.h>
#include <linux/cgroup.h>

#include "blkiso.h"
#include "blkiso_bio.h"
#include "blkiso_charge.h"
#include "blkiso_cut.h"
#include "compat.h"

#define CREATE_TRACE_POINTS
#include "blkiso_trace.h"

#define DM_MSG_PREFIX "blkiso"

/* The per-bio area's bound (issue 18): dm-delay's is 40 bytes. */
#define BLKISO_BIO_MAX_BYTES	96
struct blkiso_target {
	struct dm_dev *dev;
	sector_t start;		/* offset into the lower device, in sectors */
	struct blkiso_dev *bdev;	/* device state, shared across reloads */
	char *params;		/* the table's device line, or NULL */
	unsigned int nr_params;
	bool params_applied;	/* at this table's first resume */
};

/* Join argv into one space-separated line in @buf. */
static int blkiso_join(char *buf, size_t size, unsigned int argc, char **argv)
{
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < argc; i++) {
		size_t len = strlen(argv[i]);

		if (n + len + 2 > size)
			return -E2BIG;
		if (i)
			buf[n++] = ' ';
		memcpy(buf + n, argv[i], len + 1);
		n += len;
	}
	return n;
}

/*
 * "[<#params> <key=value>...]" after <dev> <offset>: checked now, kept in
 * @bt, and applied when this table is first resumed, so that a reload that
 * is refused, or loaded and never resumed, changes nothing.
 */
static int blkiso_parse_params(struct dm_target *ti, struct blkiso_target *bt,
			       unsigned int argc, char **argv)
{
	unsigned int nr_params;
	char dummy, *line;
	int len, ret;

	if (argc == 0)
		return 0;
	if (sscanf(argv[0], "%u%c", &nr_params, &dummy) != 1 ||
	    nr_params != argc - 1) {
		ti->error = "Parameter count does not match the parameters that follow it";
		return -EINVAL;
	}
	if (!nr_params)
		return 0;
	line = kmalloc(BI_CONF_LINE_MAX, GFP_KERNEL);
	if (!line) {
		ti->error = "Cannot allocate memory";
		return -ENOMEM;
	}
	len = blkiso_join(line, BI_CONF_LINE_MAX, nr_params, argv + 1);
	ret = len < 0 ? len : blkiso_dev_merge(bt->bdev, line, len, false);
	if (ret) {
		kfree(line);
		ti->error = "Invalid device parameter (the kernel log says which and why)";
		return ret;	/* the parser's cause, or E2BIG for an overlong line */
	}
	bt->params = line;
	bt->nr_params = nr_params;
	return 0;
}

static int blkiso_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct blkiso_target *bt;
	unsigned long long start;
	blkiso_mode_t mode;
	char dummy;
	int ret;

	if (argc < 2) {
		ti->error = "Expected <dev> <offset> [<#params> <key=value>...]";
		return -EINVAL;
	}
	if (sscanf(argv[1], "%llu%c", &start, &dummy) != 1 ||
	    start != (sector_t)start) {
		ti->error = "Invalid device sector offset";
		return -EINVAL;
	}
	bt = kzalloc(sizeof(*bt), GFP_KERNEL);
	if (!bt) {
		ti->error = "Cannot allocate blkiso context";
		return -ENOMEM;
	}
	bt->start = start;
	bt->bdev = blkiso_dev_get(dm_table_get_md(ti->table), &ti->error);
	if (IS_ERR(bt->bdev)) {
		ret = PTR_ERR(bt->bdev);
		goto free_bt;
	}
	ret = blkiso_parse_params(ti, bt, argc - 2, argv + 2);
	if (ret)
		goto put_bdev;

	mode = dm_table_get_mode(ti->table);
	ret = dm_get_device(ti, argv[0], mode, &bt->dev);
	if (ret) {
		ti->error = "Device lookup failed";
		goto put_bdev;
	}
	/*
	 * A table onto the device itself (a reload naming /dev/mapper/<self>)
	 * would send every bio back into .map for ever.  6.2 and later refuse
	 * it in dm_get_device() (bd_link_disk_holder()); 6.1 does not.
	 */
	if (bt->dev->bdev->bd_disk == dm_disk(dm_table_get_md(ti->table))) {
		ti->error = "A blkiso device cannot map onto itself";
		ret = -EINVAL;
		goto put_dev;
	}

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->per_io_data_size = sizeof(struct blkiso_bio);
	ti->accounts_remapped_io = true;
	ti->private = bt;
	return 0;

put_dev:
	dm_put_device(ti, bt->dev);
put_bdev:
	kfree(bt->params);
	blkiso_dev_put(bt->bdev);
free_bt:
	kfree(bt);
	return ret;
}

static void blkiso_dtr(struct dm_target *ti)
{
	struct blkiso_target *bt = ti->private;

	dm_put_device(ti, bt->dev);
	blkiso_dev_put(bt->bdev);
	kfree(bt->params);
	kfree(bt);
}

/*
 * What the counters, the charge and the queues need to know of a bio, in
 * four parts: what every bio needs (blkiso_prepare_common), a data read or
 * write without META, FUA or PREFLUSH (nearly every bio: blkiso_data_dir()
 * says which) for a constant direction, its units as bi_io_units() counts
 * them (bi_meter_cfg_data_units(): blkiso_prepare_data), any other bio, which calls
 * blkiso_describe() and bi_io_units() (blkiso_prepare_other), and what only
 * the general ways of .map and .end_io read (blkiso_prepare_slow): a bio
 * that .map's fast path admits and whose completion only counts skips it.
 */
static __always_inline void blkiso_prepare_common(struct blkiso_bio *pb, struct bio *bio)
{
	pb->io.bytes = bio->bi_iter.bi_size;	/* the counters' (describe: the same) */
}

static __always_inline void blkiso_prepare_slow(struct blkiso_bio *pb, u64 now)
{
	pb->arrive_ns = now;	/* 0: not timed (blkiso_count_arrived()) */
	pb->dispatch_ns = now;
	pb->slot = -1;
	pb->ch.flags = 0;
	pb->charged = 0;
	pb->ch_ext = false;
	pb->end = BLKISO_END_SLOW;
}

/*
 * BI_DIR_READ or BI_DIR_WRITE for a plain data bio, else BI_NR_DIRS: a
 * write the kernel waits on is of the system class.
 */
static __always_inline u8 blkiso_data_dir(struct bio *bio, u32 size)
{
	blk_opf_t opf = bio->bi_opf;
	enum req_op op = bio_op(bio);

	if (likely((op == REQ_OP_READ ||
		    (op == REQ_OP_WRITE && !blkiso_kernel_waits(bio))) &&
		   size &&
		   !(opf & (REQ_META | REQ_FUA | REQ_PREFLUSH))))
		return op == REQ_OP_READ ? BI_DIR_READ : BI_DIR_WRITE;
	return BI_NR_DIRS;
}

/*
 * A plain data bio's direction, units and levels; its struct bi_io only if
 * it leaves the fast path (blkiso_decide): nothing on the fast path reads it.
 */
static __always_inline void blkiso_prepare_data(struct blkiso_bio *pb, u32 size,
						struct blkiso_tenant *t,
						const struct bi_meter_cfg *c, u8 dir)
{
	pb->dir = dir;
	pb->units = bi_meter_cfg_data_units(c, dir == BI_DIR_WRITE, size);
	pb->depth = blkiso_levels(pb, t, c, dir);
}

static __always_inline void blkiso_prepare_other(struct blkiso_bio *pb, struct bio *bio,
						 struct blkiso_tenant *t,
						 const struct bi_meter_cfg *c)
{
	blkiso_describe(bio, &pb->io);
	pb->dir = bi_io_dir(&pb->io);
	pb->units = bi_io_units(&c->cost, &pb->io);
	pb->depth = blkiso_levels(pb, t, c, pb->dir);
}

/* All of it, for the general way. */
static inline void blkiso_prepare(struct blkiso_bio *pb, struct bio *bio,
				  struct blkiso_tenant *t, u64 now)
{
	blkiso_prepare_common(pb, bio);
	blkiso_prepare_slow(pb, now);
	blkiso_prepare_other(pb, bio, t, bi_meter_cfg(&blkiso_quota(t)->meter));
	pb->cls = BI_NR_CLASSES;
}

/*
 * What the general way needs beyond the fast path's preparation: its
 * fields (blkiso_prepare_slow), the class not worked out yet, and a plain
 * data bio's struct bi_io (@data_dir: as for blkiso_decide).
 */
static __always_inline void blkiso_leave_fast(struct blkiso_bio *pb, struct bio *bio,
					      u8 data_dir, u64 now)
{
	blkiso_prepare_slow(pb, now);
	pb->cls = BI_NR_CLASSES;
	if (data_dir != BI_NR_DIRS)
		blkiso_describe(bio, &pb->io);
}

static __always_inline void blkiso_admitted_trace(struct blkiso_dev *dev,
						  struct blkiso_tenant *t,
						  struct blkiso_bio *pb)
{
	if (trace_blkiso_charge_enabled())
		trace_blkiso_charge(dev->devt, t->cgid, pb->dir, pb->units);
}

static __always_inline void blkiso_admitted(struct blkiso_dev *dev,
					    struct blkiso_tenant *t,
					    struct blkiso_bio *pb)
{
	blkiso_count(t, BLKISO_ADMITTED);
	blkiso_admitted_trace(dev, t, pb);
}

/* A bio that may not wait: BLK_STS_AGAIN for NOWAIT, else fail it (reject mode). */
static int blkiso_refuse(struct blkiso_dev *dev, struct bio *bio,
			 struct blkiso_bio *pb, struct blkiso_tenant *t)
{
	trace_blkiso_reject(dev->devt, t->cgid, pb->dir, pb->units);
	if (pb->anc_held)
		blkiso_levels_put(pb);
	blkiso_bio_untenanted(pb);
	/* a killed bio does not reach .end_io: its extension goes now */
	if (pb->ext && !(bio->bi_opf & REQ_NOWAIT))
		blkiso_ext_put(pb);
	/* counted rejected: the bio's last access to @t */
	if (bio->bi_opf & REQ_NOWAIT) {
		blkiso_count_last(t, BLKISO_REJECTED_NOWAIT);
		bio->bi_status = BLK_STS_AGAIN;
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	blkiso_count_last(t, BLKISO_REJECTED);
	return DM_MAPIO_KILL;
}

/*
 * The time for the buckets, the gates and the queues: @now if the bio is
 * timed (read in .map), else read here (0: not read yet).
 */
static __always_inline u64 blkiso_now(u64 now)
{
	return likely(now) ? now : ktime_get_ns();
}

/* A bio its buckets admitted: on its way, through the slot gate if @t has one. */
static int blkiso_pass(struct blkiso_dev *dev, struct bio *bio,
		       struct blkiso_bio *pb, struct blkiso_tenant *t, u64 now)
{
	struct bio_list out = BIO_EMPTY_LIST;
	unsigned long flags;

	if (likely(!blkiso_fb_gate(t)) || READ_ONCE(dev->draining)) {
		blkiso_admitted(dev, t, pb);
		return DM_MAPIO_REMAPPED;
	}
	spin_lock_irqsave(&dev->lock, flags);
	blkiso_slot_gate_locked(dev, t, bio, now, &out);
	if (bio_list_empty(&out)) {
		/* counted while held: once the lock goes, it may end at once */
		blkiso_count(t, BLKISO_PARKED);
		trace_blkiso_park(dev->devt, t->cgid, pb->dir, pb->units);
		if (dev->draining)
			queue_work(dev->wq, &dev->dispatch_work);
		spin_unlock_irqrestore(&dev->lock, flags);
		return DM_MAPIO_SUBMITTED;
	}
	spin_unlock_irqrestore(&dev->lock, flags);
	blkiso_admitted(dev, t, pb);
	return DM_MAPIO_REMAPPED;
}

/*
 * The general way of a prepared bio through .map: force, charge through
 * every level, queue behind its class's parked bios, park, or reject.
 */
static noinline int blkiso_map_slow(struct blkiso_dev *dev, struct bio *bio,
				    struct blkiso_bio *pb, struct blkiso_tenant *t,
				    u64 now)
{
	const struct blkiso_parkq *q;
	unsigned long flags;
	u64 retry = 0;
	bool admitted;

	now = blkiso_now(now);
	if (!pb->depth)
		return blkiso_pass(dev, bio, pb, t, now);	/* no cap on its way */
	/* NULL: it never parked (struct blkiso_parkq) */
	q = READ_ONCE(t->parkq);
	/* Its class picks its queue; worked out only when queues matter. */
	if (q && READ_ONCE(q->nr_parked))
		pb->cls = blkiso_classify(t, &pb->io);
	/* a new bio: nothing of its class waits behind it (queue: false) */
	local_irq_save(flags);
	if (READ_ONCE(dev->draining))
		admitted = blkiso_charge(pb, true, false, now, NULL);
	else if (pb->cls < BI_NR_CLASSES && pb->cls != BI_CLASS_SYS && q &&
		 READ_ONCE(q->nr[pb->cls]))
		admitted = false;	/* FIFO: queue behind its class's parked bios */
	else
		admitted = blkiso_charge(pb, false, false, now, &retry);
	local_irq_restore(flags);
	if (admitted)
		return blkiso_pass(dev, bio, pb, t, now);
	if (unlikely(blkiso_lower_dead(bio))) {
		/* nothing to wait for: down, uncharged, to fail as on dm-linear */
		blkiso_admitted(dev, t, pb);
		return DM_MAPIO_REMAPPED;
	}
	if (!retry)
		retry = now;

	if ((bio->bi_opf & REQ_NOWAIT) || READ_ONCE(dev->conf.reject_mode) ||
	    (pb->ch.flags & BI_CHARGE_REJECT))
		return blkiso_refuse(dev, bio, pb, t);
	if (pb->cls == BI_NR_CLASSES)
		pb->cls = blkiso_classify(t, &pb->io);
	if (likely(blkiso_park(dev, t, bio, retry)))
		return DM_MAPIO_SUBMITTED;
	/*
	 * No memory for its first class queues (GFP_NOWAIT): it goes now,
	 * charged in full as a drain charges it, so its buckets carry the
	 * debt and the bios after it pay for it.
	 */
	local_irq_save(flags);
	blkiso_charge(pb, true, false, now, NULL);
	local_irq_restore(flags);
	blkiso_count(t, BLKISO_DEBT);
	return blkiso_pass(dev, bio, pb, t, now);
}

/*
 * .map for a tenant with an allocation, or while the device's overload gate
 * is open: the victim gate first (a victim waits hold_ms before its charge,
 * or is refused in reject mode / with REQ_NOWAIT), then the general way,
 * whose admitted bios pass the slot gate.  The system class is never held.
 */
static noinline int blkiso_map_gated(struct blkiso_dev *dev, struct bio *bio,
				     struct blkiso_bio *pb, struct blkiso_tenant *t,
				     u64 now)
{
	unsigned long flags;
	bool hold = false;
	u8 stage;

	now = blkiso_now(now);
	if (READ_ONCE(dev->fb_gated) && !bi_io_is_sys(&pb->io)) {
		spin_lock_irqsave(&dev->lock, flags);
		if (!dev->draining && blkiso_victim_locked(dev, t, pb, &stage)) {
			hold = true;
			if (!(bio->bi_opf & REQ_NOWAIT) && !dev->conf.reject_mode) {
				blkiso_hold_locked(dev, t, bio, stage,
						   now + blkiso_hold_ns(dev));
				/* counted while held, as in blkiso_pass() */
				blkiso_count(t, BLKISO_PARKED);
				trace_blkiso_park(dev->devt, t->cgid, pb->dir, pb->units);
				spin_unlock_irqrestore(&dev->lock, flags);
				return DM_MAPIO_SUBMITTED;
			}
		}
		spin_unlock_irqrestore(&dev->lock, flags);
		if (hold)
			return blkiso_refuse(dev, bio, pb, t);
	}
	return blkiso_map_slow(dev, bio, pb, t, now);
}

/*
 * .map's general ways: the clock of a bio that was not sampled (@now 0)
 * but whose tenant's feedback times every bio (@times_all), and a weight
 * of 1 for it should the tenant lose that feedback before it completes
 * (blkiso_lat_weigh()); else @now as it was.
 */
static __always_inline u64 blkiso_feedback_clock(struct blkiso_bio *pb, u64 now,
						 bool times_all)
{
	if (now || !times_all)
		return now;
	pb->lat_mask = 0;
	return ktime_get_ns();
}

/*
 * A cgroup's first bio on this device: create its tenant, then go on.  Its
 * cgroup is found again (the RCU section of .map's lookup has ended), so
 * that the id and the cgroup whose ancestors are searched agree.
 */
static noinline int blkiso_map_new(struct blkiso_dev *dev, struct bio *bio,
				   struct blkiso_bio *pb)
{
	struct blkiso_tenant *t;
	struct cgroup *cgrp;
	u64 now;

	/* no depth limit binds a new tenant */
	blkiso_nowait_unsplit(bio);
	/* The RCU section covers the lookup, the "arrived" count, the levels. */
	rcu_read_lock();
	cgrp = blkiso_bio_cgroup(bio);
	t = blkiso_tenant_lookup(dev, cgrp ? cgroup_id(cgrp) : BLKISO_KERNEL_CGID, cgrp);
	if (unlikely(!t)) {
		rcu_read_unlock();
		blkiso_bio_untenanted(pb);
		return DM_MAPIO_REMAPPED;
	}
	pb->tenant = t;
	now = blkiso_count_arrived(t, pb);
	blkiso_fb_touch(t);
	now = blkiso_feedback_clock(pb, now, blkiso_fb_times_all(dev, blkiso_fb(t)));
	blkiso_prepare(pb, bio, t, now);
	rcu_read_unlock();
	return blkiso_map_gated(dev, bio, pb, t, now);
}

/*
 * A sampled arrival, @i (from 1) of @t under @mask (blkiso_lat_sampled()):
 * its clock, and the sampling steered (issue 18) to about one timed bio a
 * jiffy (plain racy writes: a heuristic): a second sample in the same
 * jiffy doubles the sample, up to BLKISO_LAT_SAMPLE_MAX, and a jiffy
 * without one halves it for each jiffy missed.  So a fast tenant reads the
 * clock for 1 bio in up to 256, and a slow one (at most about HZ bios a
 * second) has every bio timed, its histogram exact.  The sample only
 * doubles at an arrival that the new mask samples too, so that with the
 * arrivals counted in one order the next sample is the new mask + 1 bios
 * on: what this one stands for (pb->lat_mask, blkiso_lat_weigh()).  Out of
 * line: 1 bio in mask + 1.
 */
noinline u64 blkiso_lat_sample(struct blkiso_fb *fb, struct blkiso_bio *pb, u32 i, u8 mask)
{
	struct blkiso_lat *l = &fb->lat;
	u16 j = (u16)jiffies, d = j - READ_ONCE(l->stamp);

	if (!d) {
		if (mask < BLKISO_LAT_SAMPLE_MAX - 1 && !(i & (2U * mask + 1))) {
			mask = 2 * mask + 1;
			WRITE_ONCE(l->mask, mask);
		}
	} else {
		WRITE_ONCE(l->stamp, j);
		if (d > 1 && mask) {
			mask >>= min_t(u16, d - 1, 8);
			WRITE_ONCE(l->mask, mask);
		}
	}
	pb->lat_mask = mask;
	return ktime_get_ns();
}

/*
 * .map's inline admission of a bio at its one level, @t's own, for any
 * charge but bi_meter_admit_exact()'s: IRQs off, @cpu this CPU's local
 * buckets of @t, @q and @c as for blkiso_decide().  Admitted: true, and
 * the charge kept where its completion reads it, pb->end set.  Out of line:
 * its local struct bi_chain_charge would give .map a stack canary.
 */
static noinline bool blkiso_admit_keep(struct blkiso_bio *pb, struct bio *bio,
				       struct blkiso_quota *q, const struct bi_meter_cfg *c,
				       struct bi_meter_cpu *cpu, u64 hit_now, u64 now,
				       u8 data_dir)
{
	/*
	 * Not zeroed by CONFIG_INIT_STACK_ALL_ZERO (Debian's kernels): its
	 * 296 bytes cost 38 instructions a bio; read only after an admission
	 * that wrote the fields read (blkiso_charge1_keep()).
	 */
	struct bi_chain_charge cc __uninitialized;
	bool ok;

	if (data_dir == BI_DIR_READ)
		ok = bi_meter_admit_data_dir_cfg(&q->meter, c, cpu, pb->units,
						 blkiso_lower_bios(bio), &cc, hit_now,
						 BI_DIR_READ);
	else if (data_dir == BI_DIR_WRITE)
		ok = bi_meter_admit_data_dir_cfg(&q->meter, c, cpu, pb->units,
						 blkiso_lower_bios(bio), &cc, hit_now,
						 BI_DIR_WRITE);
	else
		ok = bi_meter_admit_fast(&q->meter, cpu, &pb->io, pb->units, &cc, hit_now);
	if (!ok)
		return false;
	/*
	 * One level, no class stage: no ticket.  Kept only for a completion
	 * that reads it: a timed bio, a correction due, or a REQ_NOWAIT
	 * bio's refund.
	 */
	if (unlikely(now || !bi_chain_settled(&cc))) {
		blkiso_prepare_slow(pb, now);
		blkiso_charge1_keep(pb, &cc.lvl[0]);
	} else if (unlikely(bio->bi_opf & REQ_NOWAIT)) {
		blkiso_charge1_keep(pb, &cc.lvl[0]);
		pb->end = BLKISO_END_REFUND;
	} else {
		pb->end = 0;
	}
	return true;
}

/*
 * .map's inline admission of a plain data bio of direction @data_dir (a
 * constant) whose configuration caps both its keys, initial=exact, no
 * class stage (issue 18): two hits (bi_meter_admit_exact()), the charge
 * settled, kept (its requests alone: BLKISO_END_EXACT) only for a
 * completion that reads it (a timed bio, or a REQ_NOWAIT bio's refund).
 * IRQs off, @cpu, @hit_now and @now as for blkiso_admit_keep().
 */
static __always_inline bool blkiso_admit_exact2(struct blkiso_bio *pb, struct bio *bio,
						struct bi_meter_cpu *cpu, u64 hit_now,
						u64 now, u8 data_dir)
{
	u32 reqs = blkiso_lower_bios(bio);

	if (!bi_meter_admit_exact(cpu, pb->units, reqs, hit_now, data_dir))
		return false;
	if (unlikely(now || (bio->bi_opf & REQ_NOWAIT))) {
		if (now)
			blkiso_prepare_slow(pb, now);
		pb->ch.reqs = reqs;
		pb->end = (now ? BLKISO_END_SLOW : BLKISO_END_REFUND) | BLKISO_END_EXACT;
	} else {
		pb->end = 0;
	}
	return true;
}

/*
 * .map's inline admission of a plain data bio of direction @data_dir (a
 * constant) whose configuration caps one of its keys, @bit (the
 * configuration's exact1): one hit and one take (bi_meter_admit_exact1()),
 * the charge settled, kept (its requests and its key: BLKISO_END_EXACT1)
 * only for a completion that reads it (a timed bio, or a REQ_NOWAIT bio's
 * refund).  IRQs off, @cpu, @hit_now and @now as for blkiso_admit_keep().
 */
static __always_inline bool blkiso_admit_exact1(struct blkiso_bio *pb, struct bio *bio,
						struct bi_meter_cpu *cpu, u8 bit, u64 hit_now,
						u64 now, u8 data_dir)
{
	bool work = bit & (1U << bi_work_key(data_dir));
	u32 reqs = 0;

	if (work) {
		if (!bi_meter_admit_exact1(cpu, bi_work_key(data_dir), pb->units, hit_now))
			return false;
	} else {
		reqs = blkiso_lower_bios(bio);
		if (!bi_meter_admit_exact1(cpu, bi_request_key(data_dir), reqs, hit_now))
			return false;
	}
	if (unlikely(now || (bio->bi_opf & REQ_NOWAIT))) {
		/* the rest of the charge follows from pb->units (BLKISO_END_EXACT1) */
		if (work)
			reqs = blkiso_lower_bios(bio);
		if (now)
			blkiso_prepare_slow(pb, now);
		pb->ch.reqs = reqs;
		pb->ch.keys = bit;
		pb->end = (now ? BLKISO_END_SLOW : BLKISO_END_REFUND) | BLKISO_END_EXACT1;
	} else {
		pb->end = 0;
	}
	return true;
}

/*
 * .map's decision for a prepared bio, IRQs off (@flags: as saved): the gates
 * of the feedback controllers, or no cap on its way, or the common case
 * inline: one level (its own tenant), no parked bios, not draining, and
 * this CPU's local buckets cover the bio.  Anything else goes the general
 * way, nothing charged yet.  @data_dir: the direction of a plain data bio
 * (not of the system class; a constant, so the keys are), whose struct
 * bi_io is filled in only here, for the general way, or BI_NR_DIRS for any
 * other bio (described already).  @q, @c: @t's quota and its meter's
 * configuration as .map loaded them for the bio's units and levels, used
 * for its admission too.  @fl: the flags of @t's feedback state as .map
 * loaded them (blkiso_fb_map_flags()), @dfl its device's map_flags: both
 * 0, no gate, no drain, one test.  @counted false (a tenant without a
 * per-CPU area or a feedback state, @fl and @dfl 0; IRQs on, preemption
 * off, @flags unused): its arrival is counted here, still in the RCU
 * section of its lookup, which ends here, with its admission
 * in one count if it passes at once with no cap on its way
 * (blkiso_count_passed(), untimed), else a sampled bio's clock read then:
 * after the lookup and the preparation rather than before them.
 */
static __always_inline int blkiso_decide(struct blkiso_dev *dev, struct bio *bio,
					 struct blkiso_bio *pb, struct blkiso_tenant *t,
					 struct blkiso_quota *q, const struct bi_meter_cfg *c,
					 u32 fl, u32 dfl, u64 now, unsigned long flags,
					 u8 data_dir, bool counted)
{
	struct blkiso_tenant_pcpu __percpu *pc;
	struct bi_meter_cpu *cpu;
	bool ok;

	if (unlikely(fl | dfl) &&
	    (blkiso_fb_gate_fl(fl) | (dfl & BLKISO_DEV_MAP_GATED))) {
		local_irq_restore(flags);
		blkiso_leave_fast(pb, bio, data_dir, now);
		return blkiso_map_gated(dev, bio, pb, t, now);
	}
	if (!pb->depth) {
		/* No cap on its way: count it and let it go. */
		if (!counted) {
			/*
			 * Arrived and admitted, one count; not timed (no
			 * feedback state).  No blkiso_fb_touch(): a tenant
			 * without a feedback state on a device whose feedback
			 * does not count every tenant has nothing of the
			 * tick's, and is settled or not as it was (a new
			 * tenant's first bio touched it in blkiso_map_new());
			 * once dev->fb_all is set, its bios take the way that
			 * touches it, before and after blkiso_fb_all()'s walk.
			 */
			blkiso_count_passed(t);
			preempt_enable();
			pb->end = 0;
			blkiso_admitted_trace(dev, t, pb);
			return DM_MAPIO_REMAPPED;
		}
		local_irq_restore(flags);
		if (unlikely(now))
			blkiso_prepare_slow(pb, now);	/* timed */
		else
			pb->end = 0;
		blkiso_admitted(dev, t, pb);
		return DM_MAPIO_REMAPPED;
	}
	if (!counted) {
		/* its arrival as any other's, then the general way */
		now = blkiso_count_arrived(t, pb);
		blkiso_fb_touch(t);
		preempt_enable();
		blkiso_leave_fast(pb, bio, data_dir, now);
		return blkiso_map_slow(dev, bio, pb, t, now);
	}
	if (likely(pb->depth == 1 && pb->level0 == t && !(dfl & BLKISO_DEV_MAP_DRAINING) &&
		   !blkiso_nr_parked(t))) {
		/*
		 * A hit needs the time only to see that the demand interval
		 * has not ended: the coarse clock will do (no ktime_get()
		 * for an untimed bio); a miss reads the clock in the slow
		 * path.
		 */
		u64 hit_now = now ? now : blkiso_coarse_ns();

		/* loaded after @c (acquire): a capped configuration's area is there */
		pc = READ_ONCE(t->pcpu);
		cpu = &this_cpu_ptr(pc)->meter;
		if (data_dir != BI_NR_DIRS && likely(c->exact2 & (1U << data_dir)))
			ok = blkiso_admit_exact2(pb, bio, cpu, hit_now, now, data_dir);
		else if (data_dir != BI_NR_DIRS && c->exact1[data_dir])
			ok = blkiso_admit_exact1(pb, bio, cpu, c->exact1[data_dir], hit_now,
						 now, data_dir);
		else
			ok = blkiso_admit_keep(pb, bio, q, c, cpu, hit_now, now, data_dir);
		if (likely(ok)) {
			local_irq_restore(flags);
			this_cpu_inc(pc->stat[blkiso_pcpu_stat(BLKISO_ADMITTED)]);
			blkiso_admitted_trace(dev, t, pb);
			return DM_MAPIO_REMAPPED;
		}
	}
	local_irq_restore(flags);
	blkiso_leave_fast(pb, bio, data_dir, now);
	return blkiso_map_slow(dev, bio, pb, t, now);
}

/*
 * .map after the tenant's lookup, its arrival count and its clock (@now,
 * IRQs off, @flags as saved): the bio's preparation and the decision, by
 * one configuration of @t (its units, levels and admission), for the flags
 * @fl and @dfl as in blkiso_decide() (0 and 0: constants there).
 * @counted false: its arrival is not counted yet, nor its clock read, and
 * only preemption is off (blkiso_decide()).
 */
static __always_inline int blkiso_map_tail(struct blkiso_dev *dev, struct bio *bio,
					   struct blkiso_bio *pb, struct blkiso_tenant *t,
					   u32 fl, u32 dfl, u64 now, unsigned long flags,
					   bool counted)
{
	struct blkiso_quota *q = blkiso_quota(t);
	const struct bi_meter_cfg *c = bi_meter_cfg(&q->meter);

	/* once: the stores to @pb below would make the compiler load it again */
	u32 size = bio->bi_iter.bi_size;

	pb->io.bytes = size;	/* blkiso_prepare_common() */
	switch (blkiso_data_dir(bio, size)) {
	case BI_DIR_READ:
		blkiso_prepare_data(pb, size, t, c, BI_DIR_READ);
		return blkiso_decide(dev, bio, pb, t, q, c, fl, dfl, now, flags, BI_DIR_READ,
				     counted);
	case BI_DIR_WRITE:
		blkiso_prepare_data(pb, size, t, c, BI_DIR_WRITE);
		return blkiso_decide(dev, bio, pb, t, q, c, fl, dfl, now, flags, BI_DIR_WRITE,
				     counted);
	}
	blkiso_prepare_other(pb, bio, t, c);
	return blkiso_decide(dev, bio, pb, t, q, c, fl, dfl, now, flags, BI_NR_DIRS,
				     counted);
}

/*
 * .map for a bio whose tenant's feedback flags @fl or device flags @dfl
 * are not 0 (@fb: the tenant's feedback state, @now, a sampled bio's
 * clock or 0, and @rest as .map found them, IRQs off, @flags as saved): its
 * clock, the depth limit's cut, then the rest with the flags as they are.
 * Out of line: its copy of the decision is not on the plain bio's way.
 */
static noinline int blkiso_map_flagged(struct blkiso_dev *dev, struct bio *bio,
				       struct blkiso_bio *pb, struct blkiso_tenant *t,
				       const struct blkiso_fb *fb, u32 fl, u32 dfl,
				       u64 now, bool rest, unsigned long flags)
{
	now = blkiso_feedback_clock(pb, now, blkiso_fb_times_all_fl(fb, fl, dfl));

	if (unlikely(fl & BLKISO_FB_MAP_DEPTH)) {
		if (!blkiso_depth_cut(dev, bio, rest)) {
			/* whole, before any part went down: the caller retries it */
			blkiso_prepare(pb, bio, t, now);
			local_irq_restore(flags);
			return blkiso_refuse(dev, bio, pb, t);
		}
	} else if ((fl & BLKISO_FB_MAP_CUT) &&
		   bi_depth_cut_unbound(bio_sectors(bio),
					bdev_get_queue(bio->bi_bdev)->limits.max_sectors,
					READ_ONCE(dev->fb.lower_slots))) {
		/* not bound: with no note for its rest, whole without the flag */
		if (!blkiso_depth_cut(dev, bio, rest))
			blkiso_nowait_unsplit(bio);
	} else {
		blkiso_nowait_unsplit(bio);
	}
	return blkiso_map_tail(dev, bio, pb, t, fl, dfl, now, flags, true);
}

/*
 * notrace here and on .end_io: the ftrace entry of each is a 5-byte no-op,
 * an instruction on every bio (issue 18); the tracepoints
 * (blkiso_trace.h) and kprobes still see both.
 */
static notrace int blkiso_map(struct dm_target *ti, struct bio *bio)
{
	struct blkiso_target *bt = ti->private;
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct blkiso_dev *dev = bt->bdev;
	struct blkiso_tenant_pcpu __percpu *pc;
	struct blkiso_tenant *t;
	const struct blkiso_fb *fb;
	unsigned long flags;
	u64 cgid, now;
	u32 chunk = READ_ONCE(dev->chunk_over), fl, dfl;
	bool rest;

	/*
	 * .end_io finds its data here, not by dm_per_bio_data() (an exported
	 * call, issue 18): dm core gives each target a clone whose bi_private
	 * is NULL and unused by dm (clone_to_tio() is container_of()), as
	 * dm-snap and dm-clone rely on; no layer below touches a bio it did
	 * not allocate.
	 */
	bio->bi_private = pb;
	if (unlikely(bio->bi_iter.bi_size > chunk))
		blkiso_chunk(bio, chunk);
	bio_set_dev(bio, bt->dev->bdev);
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = bt->start +
			dm_target_offset(ti, bio->bi_iter.bi_sector);
	/* read before the levels are found (blkiso_levels_chain()) */
	pb->ext = NULL;
	pb->anc_held = false;

	/*
	 * Preemption is off from the lookup on, and IRQs from the lookup of a
	 * tenant with a per-CPU area or a feedback state to its charge: the
	 * charge needs them off (a completion on this CPU may correct the
	 * same local buckets).  Either section is an RCU read-side critical
	 * section (synchronize_rcu() waits for it), and they overlap, which
	 * covers the lookup, the "arrived" count and the ancestor levels'
	 * holds: the tenant collector (blkiso_dev.c) unhashes a removed
	 * cgroup's tenant, waits for a grace period, and then sees every bio
	 * that references it.  A counted-only tenant's bio needs no more than
	 * that: its counts are atomic (issue 18: saving and restoring the
	 * IRQ flag cost it about 8 instructions).
	 */
	preempt_disable();
	cgid = blkiso_bio_cgid(bio);
	t = blkiso_tenant_find(dev, cgid);
	if (unlikely(!t)) {
		preempt_enable();
		blkiso_map_rest(dev, bio);
		return blkiso_map_new(dev, bio, pb);
	}
	pb->tenant = t;
	/* the three in one test; loaded again below, not kept in registers */
	if (!((unsigned long)READ_ONCE(t->pcpu) | (unsigned long)blkiso_fb(t) |
	      READ_ONCE(dev->map_flags))) {
		/*
		 * Counted only, and nothing of the feedback's (the tick never
		 * visits it): its arrival is counted where .map knows whether
		 * it passes at once, still with preemption off, and its clock
		 * read there (blkiso_decide(), @counted false).
		 */
		blkiso_nowait_unsplit(bio);
		return blkiso_map_tail(dev, bio, pb, t, 0, 0, 0, 0, false);
	}
	rest = blkiso_map_rest(dev, bio);
	if (unlikely(bio->bi_iter.bi_size > READ_ONCE(dev->cap_cut_over)))
		blkiso_cap_cut(dev, bio, t, rest);
	/* preemption back on once IRQs are off: the read-side section goes on */
	local_irq_save(flags);
	preempt_enable();
	pc = READ_ONCE(t->pcpu);
	dfl = READ_ONCE(dev->map_flags);
	/* a sampled bio's clock, else 0: read later only if its buckets need it */
	now = blkiso_count_arrived_pc(t, pc, pb);
	blkiso_fb_touch(t);
	/*
	 * Once, and its flags in one load, its device's in another: the
	 * clock, the depth limit, the gates, draining.  Both 0 (no feedback
	 * state, or one that holds nothing of this bio; the device neither
	 * draining nor gated, its feedback not counting every tenant): none
	 * of them is tested again on this bio's way (blkiso_map_tail() with
	 * constant flags).
	 */
	fb = blkiso_fb(t);
	fl = blkiso_fb_map_flags(fb);
	if (likely(!(fl | dfl))) {
		blkiso_nowait_unsplit(bio);
		return blkiso_map_tail(dev, bio, pb, t, 0, 0, now, flags, true);
	}
	return blkiso_map_flagged(dev, bio, pb, t, fb, fl, dfl, now, rest, flags);
}

/*
 * This tick's device-latency extremes, for the tenants whose controllers
 * use them (allocations: the service time; ideal-rate tracking: the
 * slack), and the squared units that mode=auto's selector needs (the
 * spread of work per bio).  Out of line: most tenants need only the sum
 * and the misses.  IRQs off.
 */
static noinline void blkiso_feedback_extremes(struct blkiso_tenant *t,
					      const struct blkiso_fb *fb,
					      struct blkiso_fb_ext *f, u64 dev_ns,
					      u64 units)
{
	u32 seq = (u32)READ_ONCE(t->dev->fb.seq);

	if (READ_ONCE(fb->mode_auto)) {
		units = min_t(u64, units, 1ULL << 24);	/* as bi_sample_add() */
		f->units_sq += units * units;
	}

	if (f->lat_seq != seq) {
		f->lat_seq = seq;
		f->lat_min_ns = dev_ns;
		f->lat_max_ns = dev_ns;
	} else if (dev_ns < f->lat_min_ns) {
		f->lat_min_ns = dev_ns;
	} else if (dev_ns > f->lat_max_ns) {
		f->lat_max_ns = dev_ns;
	}
}

/*
 * The latency histogram's bucket of a bio's @lat_ns: its real us (a
 * constant divisor: a multiply), within the bounds of the uapi.
 */
static __always_inline u32 blkiso_lat_bucket(u64 lat_ns)
{
	return min_t(u32, fls64(div_u64(lat_ns, NSEC_PER_USEC)), BLKISO_LAT_BUCKETS - 1);
}

/*
 * How many bios the timed @pb of @t stands for: 1 where every bio is
 * timed (blkiso_fb_times_all(); @fb: @t's feedback state as loaded), else
 * its sample's size (blkiso_lat_sampled()).  A bio timed under the other
 * rule (its tenant's line changed meanwhile) is weighed by the new one.
 */
static __always_inline u32 blkiso_lat_weigh(const struct blkiso_tenant *t,
					    const struct blkiso_fb *fb,
					    const struct blkiso_bio *pb)
{
	return blkiso_fb_times_all(t->dev, fb) ? 1 : pb->lat_mask + 1U;
}

/* A timed bio's latency in its tenant's histogram and sum (@fb's), @w times. */
static __always_inline void blkiso_lat_add(struct blkiso_fb *fb, u32 w, u64 lat_ns)
{
	atomic64_add(w, &fb->lat.bucket[blkiso_lat_bucket(lat_ns)]);
	atomic64_add(lat_ns * w, &fb->lat.sum_ns);
}

/*
 * A timed bio of a counted-only tenant (no per-CPU area): the feedback
 * tick's inputs and the latency histogram, both in its feedback state (a
 * bio is timed only once its tenant has one, which is kept until the
 * tenant is freed).  Its feedback state and weight loaded only here.
 */
static __always_inline void blkiso_end_io_shared_timed(struct blkiso_tenant *t,
						       struct blkiso_bio *pb,
						       u64 lat_ns, u64 dev_ns)
{
	struct blkiso_fb *fb = blkiso_fb(t);
	u32 w = blkiso_lat_weigh(t, fb, pb);
	struct blkiso_fb_shared *fc;
	unsigned long flags;

	if (unlikely(!fb))
		return;
	fc = &fb->ctr;
	atomic64_add(dev_ns * w, &fc->dev_ns);
	if (dev_ns > READ_ONCE(fb->target_ns))
		atomic64_add(w, &fc->missed);
	if (unlikely(READ_ONCE(fb->extremes))) {
		spin_lock_irqsave(&fb->lock, flags);
		blkiso_feedback_extremes(t, fb, &fc->ext, dev_ns, pb->units);
		spin_unlock_irqrestore(&fb->lock, flags);
	}
	blkiso_lat_add(fb, w, lat_ns);
}

/*
 * .end_io's carry for a counted-only tenant (blkiso_end_io_shared()): the
 * bytes and units of @pb's direction, either of which reached
 * BLKISO_CARRY_AT (blkiso_ctr_carry() carries only a half that did), after
 * adding @pb's units if the bytes' add came here first (@units_too); then
 * the completion, the bio's last access to @t.  DM_ENDIO_DONE, for
 * .end_io's tail call; its arguments are those .end_io holds already.
 */
static noinline __cold int blkiso_end_io_carry(struct blkiso_bio *pb, struct blkiso_tenant *t,
					       bool units_too)
{
	struct blkiso_tenant_ctr *c = &t->ctr;
	unsigned int dir = pb->dir;

	if (units_too)
		atomic_add(pb->units, &c->lo[blkiso_lo_stat(BLKISO_RUNITS) + dir]);
	blkiso_ctr_carry(c, &c->lo[blkiso_lo_stat(BLKISO_RBYTES) + dir]);
	blkiso_ctr_carry(c, &c->lo[blkiso_lo_stat(BLKISO_RUNITS) + dir]);
	atomic64_inc(&t->ios[dir]);
	return DM_ENDIO_DONE;
}

/*
 * .end_io's counters for a counted-only tenant (no per-CPU area): the same
 * as the per-CPU ones, in its shared set, "completed" last as well (after
 * blkiso_end_io_shared_timed() for a timed bio).
 */
static __always_inline int blkiso_end_io_shared(struct blkiso_tenant *t,
						struct blkiso_bio *pb, blk_status_t error)
{
	struct blkiso_tenant_ctr *c = &t->ctr;
	unsigned int dir = pb->dir;	/* once: each atomic is a compiler barrier */

	if (error)
		blkiso_count(t, BLKISO_ERRORS);
	/*
	 * indexed by the direction, read then write (blkiso_lo_stat()); bytes
	 * in sectors.  A carry after both adds, in a tail call that counts the
	 * completion too: no call in the middle, so .end_io saves no register
	 * (issue 18).
	 */
	if (unlikely(blkiso_ctr_add_test(&c->lo[blkiso_lo_stat(BLKISO_RBYTES)] + dir,
					 pb->io.bytes >> SECTOR_SHIFT)))
		return blkiso_end_io_carry(pb, t, true);
	if (unlikely(blkiso_ctr_add_test(&c->lo[blkiso_lo_stat(BLKISO_RUNITS)] + dir, pb->units)))
		return blkiso_end_io_carry(pb, t, false);
	/* 64-bit, no carry: the bio's last access to @t (blkiso_lo_stat()) */
	atomic64_inc(&t->ios[dir]);
	return DM_ENDIO_DONE;
}

/*
 * A timed bio of a tenant with a per-CPU area (@pc): the feedback tick's
 * inputs, device latency and misses (IRQ-safe ops); a configured tenant
 * has its feedback state (NULL: only while the line that gives it both is
 * being published), and a bio is timed only once it has.  The latency
 * histogram is the tenant's, in that state, shared by its CPUs (issue 18:
 * 264 bytes less per CPU); a lock-prefixed add where a per-CPU one was,
 * same instruction count.
 */
static __always_inline void blkiso_end_io_pcpu_timed(struct blkiso_tenant *t,
						     struct blkiso_tenant_pcpu __percpu *pc,
						     struct blkiso_bio *pb,
						     u64 lat_ns, u64 dev_ns)
{
	struct blkiso_fb *fb = blkiso_fb(t);
	u32 w = blkiso_lat_weigh(t, fb, pb);
	unsigned long flags;

	this_cpu_add(pc->fb.dev_ns, dev_ns * w);
	if (unlikely(!fb))
		return;
	if (dev_ns > READ_ONCE(fb->target_ns))
		this_cpu_add(pc->fb.missed, w);
	if (unlikely(READ_ONCE(fb->extremes))) {
		local_irq_save(flags);
		blkiso_feedback_extremes(t, fb, this_cpu_ptr(&pc->fb.ext), dev_ns,
					 pb->units);
		local_irq_restore(flags);
	}
	blkiso_lat_add(fb, w, lat_ns);
}

/*
 * .end_io's counters for a tenant with a per-CPU area (@pc).  "completed"
 * is rios + wios, added up when the counters are folded; last, the bio's
 * last access to @t: the collector frees a removed cgroup's tenant once
 * arrived bios are all completed (blkiso.h).
 */
static __always_inline void blkiso_end_io_pcpu(struct blkiso_tenant *t,
					       struct blkiso_tenant_pcpu __percpu *pc,
					       struct blkiso_bio *pb, blk_status_t error)
{
	bool read = pb->dir == BI_DIR_READ;

	if (error)
		blkiso_count(t, BLKISO_ERRORS);
	this_cpu_add(pc->stat[blkiso_pcpu_stat(read ? BLKISO_RBYTES : BLKISO_WBYTES)],
		     pb->io.bytes);
	this_cpu_add(pc->stat[blkiso_pcpu_stat(read ? BLKISO_RUNITS : BLKISO_WUNITS)],
		     pb->units);
	this_cpu_inc(pc->stat[blkiso_pcpu_stat(read ? BLKISO_RIOS : BLKISO_WIOS)]);
}

/*
 * The completion's correction of a charge that is not settled, or its
 * refund (BLK_STS_AGAIN from below).  Out of line: with the default
 * initial=exact a one-level charge is settled, and its local struct
 * bi_charge would give every .end_io a stack frame and its canary.
 */
static noinline void blkiso_end_io_correct(struct blkiso_bio *pb, blk_status_t error,
					   u64 now)
{
	unsigned long flags;

	local_irq_save(flags);
	if (unlikely(error == BLK_STS_AGAIN)) {
		blkiso_refund(pb, now);
	} else if (likely(!pb->ch_ext)) {
		struct blkiso_tenant *lt = pb->level0;
		struct bi_charge ch;

		blkiso_charge1_load(pb, &ch);
		bi_meter_complete_fast(&blkiso_quota(lt)->meter, &this_cpu_ptr(lt->pcpu)->meter,
				       &ch, now);
		pb->charged = 0;
	} else {
		blkiso_complete_chain(pb, now);
	}
	local_irq_restore(flags);
}

/*
 * .end_io's general way: a bio without a tenant, one whose .map set
 * BLKISO_END_SLOW (timed, a correction due, a slot, ancestor levels or an
 * extension held), and any bio that ended in an error or while the
 * completion is traced.
 */
static noinline __noclone int blkiso_end_io_slow(struct dm_target *ti, struct bio *bio,
						 blk_status_t *error)
{
	/* .end_io's own arguments: its tail call moves no register */
	struct blkiso_bio *pb = bio->bi_private;
	struct blkiso_tenant *t = pb->tenant;
	struct blkiso_tenant_pcpu __percpu *pc;
	u64 now = 0, lat_ns = 0, dev_ns = 0;
	bool timed;

	if (!t) {
		if (unlikely(pb->ext))
			blkiso_ext_put(pb);
		return DM_ENDIO_DONE;
	}
	if (!(pb->end & BLKISO_END_SLOW)) {
		/*
		 * From .map's fast path: not timed, no slot, its charge
		 * settled, kept only for a refund (BLKISO_END_REFUND).  A
		 * bio that was not REQ_NOWAIT has none: the block layer fails
		 * only those with BLK_STS_AGAIN.
		 */
		pb->arrive_ns = 0;
		pb->slot = -1;
		pb->ch_ext = false;
		if (!(pb->end & BLKISO_END_REFUND))
			pb->charged = 0;
	}
	/* an exact charge (timed or REQ_NOWAIT) kept its requests (and key) alone */
	if (pb->end & (BLKISO_END_EXACT | BLKISO_END_EXACT1))
		blkiso_charge1_exact(pb);
	/* not timed in .map (blkiso_count_arrived()): no clock unless corrected */
	timed = pb->arrive_ns;
	if (likely(timed))
		now = ktime_get_ns();
	/* once: each this_cpu op would load it again; NULL: counted only */
	pc = READ_ONCE(t->pcpu);
	/*
	 * A one-level charge without a ticket that took its units exactly at
	 * submission corrects by 0 (bi_chain_settled()): nothing to do unless
	 * it is refunded.
	 */
	if (pb->charged &&
	    (unlikely(*error == BLK_STS_AGAIN) || pb->ch_ext ||
	     (s64)pb->ch.units != pb->ch.init)) {
		now = blkiso_now(now);
		blkiso_end_io_correct(pb, *error, now);
	}
	if (unlikely(pb->anc_held))
		blkiso_levels_put(pb);
	if (unlikely(pb->ext))
		blkiso_ext_put(pb);
	if (likely(timed)) {
		dev_ns = now - pb->dispatch_ns;
		lat_ns = now - pb->arrive_ns;
	}
	if (pb->slot >= 0)
		blkiso_slot_put(t, pb);
	/* lat_ns 0: not timed */
	if (trace_blkiso_complete_enabled())
		trace_blkiso_complete(t->dev->devt, t->cgid, pb->dir, pb->units,
				      lat_ns, blk_status_to_errno(*error));
	if (unlikely(!pc)) {
		if (timed)
			blkiso_end_io_shared_timed(t, pb, lat_ns, dev_ns);
		return blkiso_end_io_shared(t, pb, *error);
	}
	if (likely(timed))
		blkiso_end_io_pcpu_timed(t, pc, pb, lat_ns, dev_ns);
	blkiso_end_io_pcpu(t, pc, pb, *error);
	return DM_ENDIO_DONE;
}

/*
 * Issue 18: the completion of a bio that .map's fast path admitted and
 * whose completion only counts (pb->end without BLKISO_END_SLOW: not
 * timed, nothing to correct, nothing held) tests that byte and adds its
 * counters; anything else, an error, or tracing takes the general way.
 */
static notrace int blkiso_end_io(struct dm_target *ti, struct bio *bio,
				 blk_status_t *error)
{
	struct blkiso_bio *pb = bio->bi_private;	/* set by .map */
	struct blkiso_tenant *t = pb->tenant;
	struct blkiso_tenant_pcpu __percpu *pc;

	/* BLKISO_END_SLOW where pb->tenant is NULL */
	if (unlikely((pb->end & BLKISO_END_SLOW) || *error) ||
	    trace_blkiso_complete_enabled())
		return blkiso_end_io_slow(ti, bio, error);
	/* NULL: counted only */
	pc = READ_ONCE(t->pcpu);
	if (!pc)
		return blkiso_end_io_shared(t, pb, 0);
	blkiso_end_io_pcpu(t, pc, pb, 0);
	return DM_ENDIO_DONE;
}

/* How long a suspend waits for the rests of cut REQ_NOWAIT bios (ms). */
#define BLKISO_NW_REST_WAIT_MS	200

static void blkiso_presuspend(struct dm_target *ti)
{
	struct blkiso_dev *dev = ((struct blkiso_target *)ti->private)->bdev;
	unsigned int i;

	spin_lock_irq(&dev->lock);
	WRITE_ONCE(dev->draining, true);
	spin_unlock_irq(&dev->lock);
	/*
	 * A REQ_NOWAIT bio cut before draining was set has its rest on its
	 * way back to dm core, still REQ_NOWAIT; once dm blocks I/O for the
	 * suspend (right after this hook), dm refuses that rest and the read
	 * fails with EAGAIN where io_uring cannot send it again.  .map runs
	 * such bios under RCU (dm_get_live_table_fast()), so after a grace
	 * period every cut that saw draining false has noted its rest: wait,
	 * boundedly, for those rests to reach .map.  A note whose rest never
	 * comes (a task gone) costs one bounded wait; resume forgets it.
	 */
	synchronize_rcu();
	for (i = 0; i < BLKISO_NW_REST_WAIT_MS &&
	     atomic_read(&dev->nw_rests_used); i++)
		usleep_range(1000, 1100);
	/*
	 * The dispatcher sends at most BLKISO_DISPATCH_BATCH bios per run and
	 * requeues itself: wait for runs until nothing is held (the bound only
	 * stops a flood of new bios from holding us; dm waits for the rest).
	 */
	for (i = 0; i < 256 && (!i || READ_ONCE(dev->nr_parked)); i++) {
		queue_work(dev->wq, &dev->dispatch_work);
		flush_work(&dev->dispatch_work);
	}
}

/*
 * A table's parameters were checked at load against the device line of
 * then; a change since (dmsetup message, sysfs) could make them refuse
 * now.  Check again here, where a failure can still refuse the resume
 * (.resume cannot fail): the error reaches `dmsetup resume`.
 */
static int blkiso_preresume(struct dm_target *ti)
{
	struct blkiso_target *bt = ti->private;

	if (!bt->params || bt->params_applied)
		return 0;
	return blkiso_dev_merge(bt->bdev, bt->params, strlen(bt->params), false);
}

/*
 * The lower device's slots: its per-device queue depth (SCSI sets one
 * under a shared host's), else its tag set's, 0 for a bio-based device.
 */
static u32 blkiso_lower_slots(struct block_device *bdev)
{
	struct request_queue *q = bdev_get_queue(bdev);

	if (q->queue_depth)
		return q->queue_depth;
	return queue_is_mq(q) && q->tag_set ? q->tag_set->queue_depth : 0;
}

/*
 * dev->cap_cut_over: half of @slots requests of the lower queue's largest
 * size (at least one), in bytes; U32_MAX without slots or beyond 32 bits.
 */
static u32 blkiso_cap_cut_over(struct block_device *bdev, u32 slots)
{
	u64 bytes = (u64)max(slots / 2, 1U) *
		    (queue_max_sectors(bdev_get_queue(bdev)) << SECTOR_SHIFT);

	return slots && bytes < U32_MAX ? (u32)bytes : U32_MAX;
}

static void blkiso_resume(struct dm_target *ti)
{
	struct blkiso_target *bt = ti->private;
	u32 slots = blkiso_lower_slots(bt->dev->bdev);

	WRITE_ONCE(bt->bdev->fb.lower_slots, slots);
	WRITE_ONCE(bt->bdev->cap_cut_over, blkiso_cap_cut_over(bt->dev->bdev, slots));

	/* Later changes (dmsetup message, sysfs) are not undone by a resume. */
	if (bt->params && !bt->params_applied) {
		blkiso_dev_configure(bt->bdev, bt->params, strlen(bt->params));
		bt->params_applied = true;
	}
	WRITE_ONCE(bt->bdev->draining, false);
	blkiso_nw_rests_clear(bt->bdev);
}

/*
 * dmsetup message <dev> 0 tenant <cgroup> key=value...
 * dmsetup message <dev> 0 tenant_del <cgroup>
 * dmsetup message <dev> 0 rule <glob> key=value...  |  rule del <glob>
 * dmsetup message <dev> 0 device key=value...
 */
static int blkiso_message(struct dm_target *ti, unsigned int argc, char **argv,
			  char *result, unsigned int maxlen)
{
	struct blkiso_dev *dev = ((struct blkiso_target *)ti->private)->bdev;
	char *line;
	int len, ret;

	if (argc == 2 && !strcmp(argv[0], "tenant_del"))
		return blkiso_tenant_del(dev, argv[1], strlen(argv[1]));
	if (argc < 2 || (strcmp(argv[0], "tenant") && strcmp(argv[0], "device") &&
			 strcmp(argv[0], "rule"))) {
		DMWARN("message: expected \"tenant <cgroup> key=value...\", \"tenant_del <cgroup>\", \"rule <glob> key=value...\", \"rule del <glob>\" or \"device key=value...\"");
		return -EINVAL;
	}
	line = kmalloc(BI_CONF_LINE_MAX, GFP_KERNEL);
	if (!line)
		return -ENOMEM;
	len = blkiso_join(line, BI_CONF_LINE_MAX, argc - 1, argv + 1);
	if (len < 0)
		ret = -EINVAL;
	else if (!strcmp(argv[0], "tenant"))
		ret = blkiso_tenant_configure(dev, line, len);
	else if (!strcmp(argv[0], "rule"))
		ret = blkiso_rule_line(dev, line, len);
	else
		ret = blkiso_dev_configure(dev, line, len);
	kfree(line);
	return ret;
}

static void blkiso_status(struct dm_target *ti, status_type_t type,
			  unsigned int status_flags, char *result,
			  unsigned int maxlen)
{
	struct blkiso_target *bt = ti->private;
	size_t sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("tenants=%u queued=%u draining=%d",
		       READ_ONCE(bt->bdev->nr_tenants), READ_ONCE(bt->bdev->nr_parked),
		       READ_ONCE(bt->bdev->draining));
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s %llu", bt->dev->name, (unsigned long long)bt->start);
		if (bt->params)
			DMEMIT(" %u %s", bt->nr_params, bt->params);
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,start=%llu;", bt->dev->name,
		       (unsigned long long)bt->start);
		break;
	}
}

static int blkiso_prepare_ioctl(struct dm_target *ti,
				struct block_device **bdev)
{
	struct blkiso_target *bt = ti->private;

	*bdev = bt->dev->bdev;
	/* Pass ioctls through only when the whole device is mapped. */
	if (bt->start || ti->len != bdev_nr_sectors(bt->dev->bdev))
		return 1;
	return 0;
}

static int blkiso_iterate_devices(struct dm_target *ti,
				  iterate_devices_callout_fn fn, void *data)
{
	struct blkiso_target *bt = ti->private;

	return fn(ti, bt->dev, bt->start, ti->len, data);
}

/*
 * A write-zeroes is charged as a write of its size (units.c), so it comes
 * no larger than the lower device's largest write: a capped tenant's
 * BLKZEROOUT or fallocate -z then waits piece by piece under its cap, as
 * its writes do, instead of passing whole (up to gigabytes in one bio) and
 * leaving its later I/O a debt of that many seconds.
 */
static void blkiso_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	if (limits->max_write_zeroes_sectors > limits->max_sectors)
		limits->max_write_zeroes_sectors = limits->max_sectors;
}

static struct target_type blkiso_target_type = {
	.name = "blkiso",
	.version = {0, 2, 0},
	.features = DM_TARGET_NOWAIT,
	.module = THIS_MODULE,
	.ctr = blkiso_ctr,
	.dtr = blkiso_dtr,
	.map = blkiso_map,
	.end_io = blkiso_end_io,
	.presuspend = blkiso_presuspend,
	.preresume = blkiso_preresume,
	.resume = blkiso_resume,
	.message = blkiso_message,
	.status = blkiso_status,
	.prepare_ioctl = blkiso_prepare_ioctl,
	.iterate_devices = blkiso_iterate_devices,
	.io_hints = blkiso_io_hints,
};

int blkiso_target_init(void)
{
	int ret;

	BUILD_BUG_ON(sizeof(struct blkiso_bio) > BLKISO_BIO_MAX_BYTES);
	/* BLKISO_FB_MAP_*: the flags' bytes in .map's one load */
	BUILD_BUG_ON(offsetof(struct blkiso_fb, iso_on) != offsetof(struct blkiso_fb, map_flags));
	BUILD_BUG_ON(offsetof(struct blkiso_fb, depth_on) !=
		     offsetof(struct blkiso_fb, map_flags) + 1);
	BUILD_BUG_ON(offsetof(struct blkiso_fb, time_all) !=
		     offsetof(struct blkiso_fb, map_flags) + 2);
	BUILD_BUG_ON(offsetof(struct blkiso_fb, cut_on) !=
		     offsetof(struct blkiso_fb, map_flags) + 3);
	ret = blkiso_charge_init();
	if (ret)
		return ret;
	ret = dm_register_target(&blkiso_target_type);
	if (ret < 0) {
		DMERR("register failed %d", ret);
		blkiso_charge_exit();
	}
	return ret;
}

void blkiso_target_exit(void)
{
	dm_unregister_target(&blkiso_target_type);
	blkiso_charge_exit();
}
