// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_target.c - the "blkiso" device-mapper target.
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
 *  blkiso_map()      remap to the lower device (which also ties the bio to
 *                    the submitting task's cgroup), find the tenant by cgroup
 *                    id (RCU hash; created on first sight without sleeping):
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
 */
#include <linux/module.h>
#include <linux/device-mapper.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/slab.h>

#include <linux/ktime.h>
#include <linux/ioprio.h>
#include <linux/blk-cgroup.h>
#include <linux/cgroup.h>
#include <linux/backing-dev.h>
#include <linux/memcontrol.h>

#include "blkiso.h"
#include "compat.h"

#define CREATE_TRACE_POINTS
#include "blkiso_trace.h"

#define DM_MSG_PREFIX "blkiso"

/* At most this many bios and passes per dispatch run (then requeue). */
#define BLKISO_DISPATCH_BATCH	256
#define BLKISO_DISPATCH_PASSES	64
/* Deficit round robin: credit per pass (64 KiB), and its ceiling (a 1 MiB bio). */
#define BLKISO_QUANTUM_UNITS	32
#define BLKISO_DEFICIT_MAX_UNITS	512

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
		return -EINVAL;
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
	if (!bt->bdev) {
		ret = -ENOMEM;
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

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->per_io_data_size = sizeof(struct blkiso_bio);
	ti->accounts_remapped_io = true;
	ti->private = bt;
	return 0;

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
 * A write the kernel waits on (BI_IO_KERNEL_WAITS): a swap write, or a
 * kernel thread's REQ_SYNC write (jbd2's ordered-data flush, sync(2)'s
 * writeback).  Holding it behind its owner's quota would stall the journal
 * or reclaim for everyone, so it is charged and never parked.  In .map
 * only: current is the submitter.
 */
static __always_inline bool blkiso_kernel_waits(blk_opf_t opf)
{
	return (opf & REQ_SWAP) ||
	       ((opf & REQ_SYNC) && (current->flags & PF_KTHREAD));
}

/*
 * The bios a remapped read or write becomes at the lower queue, which
 * splits it at its max_sectors and its chunk boundaries: what riops/wiops
 * count, as blk-throttle counts split bios.  From the size and the limits
 * (bi_split_count), one compare for a bio that fits; a stacked lower
 * device's limits are the stacked ones.
 */
static __always_inline u32 blkiso_lower_bios(const struct bio *bio)
{
	const struct queue_limits *lim = &bdev_get_queue(bio->bi_bdev)->limits;
	u32 sectors = bio_sectors(bio);

	if (likely(sectors <= lim->max_sectors && !lim->chunk_sectors))
		return 1;
	return bi_split_count(bio->bi_iter.bi_sector, sectors, lim->max_sectors,
			      lim->chunk_sectors);
}

/*
 * What the decision core needs to know of a bio.  Out of line: a plain data
 * bio is described only when it leaves .map's fast path (blkiso_leave_fast).
 */
static noinline void blkiso_describe(struct bio *bio, struct bi_io *io)
{
	unsigned short prio = bio_prio(bio);
	blk_opf_t opf = bio->bi_opf;

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		io->op = BI_OP_READ;
		break;
	case REQ_OP_WRITE:
		io->op = bio_sectors(bio) ? BI_OP_WRITE : BI_OP_FLUSH;
		break;
	case REQ_OP_FLUSH:
		io->op = BI_OP_FLUSH;
		break;
	case REQ_OP_DISCARD:
	case REQ_OP_SECURE_ERASE:
		io->op = BI_OP_DISCARD;
		break;
	case REQ_OP_WRITE_ZEROES:
		io->op = BI_OP_WRITE_ZEROES;
		break;
	default:
		io->op = BI_OP_OTHER;
		break;
	}
	io->bytes = bio->bi_iter.bi_size;
	io->lower_bios = (io->op == BI_OP_READ || io->op == BI_OP_WRITE) ?
			 blkiso_lower_bios(bio) : 1;
	io->flags = (op_is_sync(opf) ? BI_IO_SYNC : 0) |
		    ((opf & REQ_META) ? BI_IO_META : 0) |
		    ((opf & REQ_FUA) ? BI_IO_FUA : 0) |
		    ((opf & REQ_PREFLUSH) ? BI_IO_PREFLUSH : 0) |
		    ((opf & REQ_NOWAIT) ? BI_IO_NOWAIT : 0) |
		    (io->op == BI_OP_WRITE && blkiso_kernel_waits(opf) ?
		     BI_IO_KERNEL_WAITS : 0);
	io->prio_class = IOPRIO_PRIO_CLASS(prio);
	io->prio_level = IOPRIO_PRIO_DATA(prio) & 7;
}

/*
 * The owner of a page-cache folio being written back, as cgroup writeback
 * has it (wbc_init_bio() ties the original bio to the same cgroup): the io
 * cgroup of its inode's writeback context; if that is the root's (cgroup
 * writeback off for this inode or filesystem, or the inode owned by the
 * root), the io cgroup the folio's memory cgroup maps to (the nearest with
 * the io controller, as a writeback context would take it); NULL if that
 * is the root too, or the memory controller is off: no cgroup owns it.
 * Swap-cache and anonymous folios have no inode: their memory cgroup.
 *
 * Safe in .map: a folio under writeback keeps its mapping (truncation and
 * eviction wait for the writeback to end), so the inode is alive; the
 * writeback context, its css and cgroup are freed only after an RCU grace
 * period, and the caller is in an RCU read-side section.
 */
static noinline struct cgroup *blkiso_folio_owner(struct folio *folio)
{
	struct address_space *mapping = READ_ONCE(folio->mapping);
	struct cgroup_subsys_state *css;
	struct cgroup *cgrp = NULL;

#ifdef CONFIG_CGROUP_WRITEBACK
	if (mapping && !((unsigned long)mapping & PAGE_MAPPING_FLAGS) &&
	    mapping->host) {
		struct bdi_writeback *wb = READ_ONCE(mapping->host->i_wb);

		if (wb && wb->blkcg_css->parent)
			return wb->blkcg_css->cgroup;
	}
#endif
#ifdef CONFIG_MEMCG
	{
		struct mem_cgroup *memcg = folio_memcg(folio);

		if (memcg)
			cgrp = memcg->css.cgroup;
	}
#endif
	for (; cgrp; cgrp = cgroup_parent(cgrp)) {
		css = rcu_dereference_raw(cgrp->subsys[io_cgrp_id]);
		if (css)
			return css->parent ? cgrp : NULL;
	}
	return NULL;
}

/*
 * The cgroup a bio is charged to (doc/metering.md, "A bio's way"): a write
 * of folios under writeback (page cache or swap), whoever submits it, to
 * the folio's owner (blkiso_folio_owner); any other bio, or a folio no
 * cgroup owns, to the submitter's io cgroup: NULL for a kernel thread (the
 * kernel tenant).  Reads and writes of other pages (direct I/O, bounce
 * buffers) pay one test each.  Caller is in an RCU read-side section.
 */
static __always_inline struct cgroup *blkiso_bio_cgroup(struct bio *bio)
{
	struct cgroup_subsys_state *css;

	if (bio_op(bio) == REQ_OP_WRITE && bio->bi_iter.bi_size) {
		struct folio *folio = page_folio(bio_page(bio));

		if (folio_test_writeback(folio)) {
			struct cgroup *owner = blkiso_folio_owner(folio);

			if (owner)
				return owner;
		}
	}
	if (current->flags & PF_KTHREAD)
		return NULL;
	css = bio_blkcg_css(bio);
	return css ? css->cgroup : NULL;
}

/*
 * Is @bio's lower disk gone for good (deleted, powered off, its driver
 * unbound)?  The block layer marks the gendisk dead and its queue dying
 * when that happens, and never for a transient I/O error.  Slow paths
 * only: a bio about to wait, and the dispatcher.
 */
static bool blkiso_lower_dead(const struct bio *bio)
{
	struct block_device *bdev = bio->bi_bdev;

	return test_bit(GD_DEAD, &bdev->bd_disk->state) ||
	       blk_queue_dying(bdev_get_queue(bdev));
}

/* Arm the dispatch timer for @when unless it fires earlier already. */
static void blkiso_arm(struct blkiso_dev *dev, u64 when)
{
	ktime_t t = ns_to_ktime(when);

	if (hrtimer_active(&dev->timer) &&
	    ktime_before(hrtimer_get_expires(&dev->timer), t))
		return;
	hrtimer_start(&dev->timer, t, HRTIMER_MODE_ABS);
}

static void blkiso_park(struct blkiso_dev *dev, struct blkiso_tenant *t,
			struct bio *bio, u64 retry_ns)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	unsigned long flags;

	this_cpu_inc(t->pcpu->stat[BLKISO_PARKED]);
	this_cpu_inc(t->pcpu->fb.throttled[pb->dir]);
	trace_blkiso_park(dev->devt, t->cgid, pb->dir, pb->units);
	spin_lock_irqsave(&dev->lock, flags);
	bio_list_add(&t->parked_bios[pb->cls], bio);
	WRITE_ONCE(t->nr_parked_cls[pb->cls], t->nr_parked_cls[pb->cls] + 1);
	WRITE_ONCE(t->nr_parked, t->nr_parked + 1);
	WRITE_ONCE(dev->nr_parked, dev->nr_parked + 1);
	atomic_long_inc(&blkiso_live_parked);
	if (list_empty(&t->park)) {
		list_add_tail(&t->park, &dev->parked);
		blkiso_arm(dev, retry_ns);
	}
	/* Draining began while this bio was on its way: let it go now. */
	if (dev->draining)
		queue_work(dev->wq, &dev->dispatch_work);
	spin_unlock_irqrestore(&dev->lock, flags);
}

/* One more bio held by @t outside its class queues.  Device lock held. */
static void blkiso_held_inc(struct blkiso_dev *dev, struct blkiso_tenant *t)
{
	WRITE_ONCE(dev->nr_parked, dev->nr_parked + 1);
	atomic_long_inc(&blkiso_live_parked);
	if (list_empty(&t->park))
		list_add_tail(&t->park, &dev->parked);
}

static void blkiso_held_dec(struct blkiso_dev *dev)
{
	WRITE_ONCE(dev->nr_parked, dev->nr_parked - 1);
	atomic_long_dec(&blkiso_live_parked);
}

/* Hold @bio on @t's timed list until @release_ns.  Device lock held. */
static void blkiso_hold_locked(struct blkiso_dev *dev, struct blkiso_tenant *t,
			       struct bio *bio, u8 stage, u64 release_ns)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));

	pb->stage = stage;
	pb->release_ns = release_ns;
	/* sent later by the dispatcher, which may block: no NOWAIT failures then */
	bio->bi_opf &= ~REQ_NOWAIT;
	bio_list_add(&t->fb.timed, bio);
	WRITE_ONCE(t->fb.nr_timed, t->fb.nr_timed + 1);
	blkiso_held_inc(dev, t);
	blkiso_arm(dev, release_ns);
}

static u32 blkiso_iso_flags(const struct blkiso_bio *pb)
{
	u32 f = 0;

	if (pb->dir == BI_DIR_READ && pb->units <= BI_ISO_SMALL_UNITS_DEF)
		f |= BI_ISO_IO_SMALL_READ;
	if (pb->units >= BI_ISO_BIG_UNITS_DEF)
		f |= BI_ISO_IO_BIG;
	return f;
}

/*
 * The slot gate of a charged bio of a tenant with an allocation
 * (ctl_isolation): a free slot without delay sends it to @out; a delayed
 * slot holds it on the timed list; no slot (or others waiting before it)
 * queues it on the slot-wait FIFO, which a completion wakes.  The slot
 * state is under the tenant's fb lock, so that a completion freeing a slot
 * either comes first (and we get the slot) or sees us waiting (and wakes
 * the dispatcher).  Device lock held.
 */
static void blkiso_slot_gate_locked(struct blkiso_dev *dev, struct blkiso_tenant *t,
				    struct bio *bio, u64 now, struct bio_list *out)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct blkiso_fb *fb = &t->fb;
	u64 delay = 0;
	int slot = -1;

	spin_lock(&fb->lock);
	if (!fb->nr_slot_wait)
		slot = bi_iso_slot_get(&fb->iso, &fb->iso_p, (u32)min_t(u64, pb->units, U32_MAX),
				       blkiso_iso_flags(pb), now, &delay);
	if (slot < 0) {
		bio->bi_opf &= ~REQ_NOWAIT;	/* as blkiso_hold_locked() */
		bio_list_add(&fb->slot_wait, bio);
		WRITE_ONCE(fb->nr_slot_wait, fb->nr_slot_wait + 1);
		spin_unlock(&fb->lock);
		blkiso_held_inc(dev, t);
		return;
	}
	spin_unlock(&fb->lock);
	pb->slot = slot;
	if (delay) {
		blkiso_hold_locked(dev, t, bio, BLKISO_STAGE_DELAY, now + delay);
		return;
	}
	pb->dispatch_ns = now;
	bio_list_add(out, bio);
}

/* A completed (or never sent) bio gives its slot back; wake the waiters. */
static void blkiso_slot_put(struct blkiso_tenant *t, struct blkiso_bio *pb)
{
	unsigned long flags;
	bool wake;

	spin_lock_irqsave(&t->fb.lock, flags);
	bi_iso_slot_put(&t->fb.iso, pb->slot, blkiso_iso_flags(pb));
	wake = t->fb.nr_slot_wait;
	spin_unlock_irqrestore(&t->fb.lock, flags);
	pb->slot = -1;
	if (wake)
		queue_work(t->dev->wq, &t->dev->dispatch_work);
}

/*
 * The overload gate (seed 002) at .map, while the device's gate is open:
 * a large read is shed while the device is overloaded (S0-21), else the
 * multiplier picks victims by rank (S2-07..S2-09).  Device lock held.
 * Returns whether to hold the bio, and as what.
 */
static bool blkiso_victim_locked(struct blkiso_dev *dev, struct blkiso_tenant *t,
				 struct blkiso_bio *pb, u8 *stage)
{
	if (dev->fb.ovl.overloaded &&
	    bi_rate_shed_large_read(&pb->io, true, dev->conf.shed_bytes)) {
		*stage = BLKISO_STAGE_SHED;
		return true;
	}
	if (!bi_fb_victims_on(&dev->conf) || !dev->fb.ovl.m ||
	    !bi_ovl_victim(&dev->fb.ovl, bi_conf_rank(&t->conf, &pb->io),
			   bi_fb_above_commit(&t->conf, &t->fb.iso, t->fb.rate,
					      t->fb.rate_p, true)))
		return false;
	*stage = BLKISO_STAGE_VICTIM;
	dev->fb.victims++;
	t->fb.victims++;
	return true;
}

static u64 blkiso_hold_ns(const struct blkiso_dev *dev)
{
	return (u64)bi_dev_conf_hold_ms(&dev->conf) * NSEC_PER_MSEC;
}

/*
 * The tenants a bio is charged to: its own and its configured ancestors',
 * those capped in its direction, innermost first (at most
 * BI_METER_MAX_DEPTH).  Ancestors are found by the tenants' parent links,
 * which the configuration path keeps up to date.
 */
static noinline u8 blkiso_levels_chain(struct blkiso_bio *pb, struct blkiso_tenant *t,
				      u8 dir)
{
	u8 depth = 0;

	for (; t && depth < BI_METER_MAX_DEPTH; t = READ_ONCE(t->parent))
		if (bi_meter_capped(&t->meter, dir))
			pb->level[depth++] = t;
	return depth;
}

/* Inline for a tenant without a configured ancestor (@dir constant there). */
static __always_inline u8 blkiso_levels(struct blkiso_bio *pb, struct blkiso_tenant *t,
					u8 dir)
{
	if (likely(!READ_ONCE(t->parent))) {
		pb->level[0] = t;
		return bi_meter_capped(&t->meter, dir);
	}
	return blkiso_levels_chain(pb, t, dir);
}

/* This CPU's view of a bio's levels, for the chain calls.  IRQs off. */
static void blkiso_chain(const struct blkiso_bio *pb, struct bi_meter **m,
			 struct bi_meter_cpu **cpu)
{
	u8 i;

	for (i = 0; i < pb->depth; i++) {
		m[i] = &pb->level[i]->meter;
		cpu[i] = &this_cpu_ptr(pb->level[i]->pcpu)->meter;
	}
}

/*
 * Charge a bio through its levels (or force it: system class, draining).
 * Out of line: the map's inline fast path covers the common case.
 */
static noinline bool blkiso_charge(struct blkiso_bio *pb, bool force, u64 now, u64 *retry)
{
	struct bi_meter *m[BI_METER_MAX_DEPTH];
	struct bi_meter_cpu *cpu[BI_METER_MAX_DEPTH];

	if (likely(pb->depth == 1 && !force)) {
		/* The common case: one level, no arrays. */
		struct blkiso_tenant *lt = pb->level[0];
		u64 units = lt == pb->tenant ? pb->units :
			bi_io_units(&lt->meter.cost, &pb->io);

		if (bi_meter_admit_one(&lt->meter, &this_cpu_ptr(lt->pcpu)->meter,
				       &pb->io, units, &pb->cc, now, retry))
			return true;
		pb->cc.depth = 0;
		return false;
	}
	blkiso_chain(pb, m, cpu);
	if (force) {
		bi_meter_force_chain(m, cpu, pb->depth, &pb->io, &pb->cc, now);
		return true;
	}
	if (bi_meter_admit_chain(m, cpu, pb->depth, &pb->io, &pb->cc, now, retry))
		return true;
	pb->cc.depth = 0;
	return false;
}

/* Did a class policy with action=reject refuse it (S1-27)? */
static bool blkiso_policy_rejects(const struct blkiso_bio *pb)
{
	u8 i;

	for (i = 0; i < pb->depth; i++)
		if (pb->cc.lvl[i].flags & BI_CHARGE_REJECT)
			return true;
	return false;
}

/*
 * What the counters, the charge and the queues need to know of a bio, in
 * three parts: what every bio needs (blkiso_prepare_common), a data read or
 * write without META, FUA or PREFLUSH (nearly every bio: blkiso_data_dir()
 * says which) for a constant direction, its units as bi_io_units() counts
 * them (bi_bio_data_units(): blkiso_prepare_data), and any other bio, which calls
 * blkiso_describe() and bi_io_units() (blkiso_prepare_other).
 */
static __always_inline void blkiso_prepare_common(struct blkiso_bio *pb, struct bio *bio,
						  u64 now)
{
	pb->arrive_ns = now;
	pb->dispatch_ns = now;
	pb->slot = -1;
	pb->bytes = bio->bi_iter.bi_size;
}

/*
 * BI_DIR_READ or BI_DIR_WRITE for a plain data bio, else BI_NR_DIRS: a
 * write the kernel waits on is of the system class.
 */
static __always_inline u8 blkiso_data_dir(struct bio *bio)
{
	blk_opf_t opf = bio->bi_opf;
	enum req_op op = bio_op(bio);

	if (likely((op == REQ_OP_READ ||
		    (op == REQ_OP_WRITE && !blkiso_kernel_waits(opf))) &&
		   bio->bi_iter.bi_size &&
		   !(opf & (REQ_META | REQ_FUA | REQ_PREFLUSH))))
		return op == REQ_OP_READ ? BI_DIR_READ : BI_DIR_WRITE;
	return BI_NR_DIRS;
}

/*
 * A plain data bio's direction, units and levels; its struct bi_io only if
 * it leaves the fast path (blkiso_decide): nothing on the fast path reads it.
 */
static __always_inline void blkiso_prepare_data(struct blkiso_bio *pb, struct bio *bio,
						struct blkiso_tenant *t, u8 dir)
{
	pb->dir = dir;
	pb->units = bi_bio_data_units(&t->meter.cost, dir == BI_DIR_WRITE,
				      bio->bi_iter.bi_size);
	pb->depth = blkiso_levels(pb, t, dir);
}

static __always_inline void blkiso_prepare_other(struct blkiso_bio *pb, struct bio *bio,
						 struct blkiso_tenant *t)
{
	blkiso_describe(bio, &pb->io);
	pb->dir = bi_io_dir(&pb->io);
	pb->units = bi_io_units(&t->meter.cost, &pb->io);
	pb->depth = blkiso_levels(pb, t, pb->dir);
}

/* All of it, for the general way. */
static inline void blkiso_prepare(struct blkiso_bio *pb, struct bio *bio,
				  struct blkiso_tenant *t, u64 now)
{
	blkiso_prepare_common(pb, bio, now);
	blkiso_prepare_other(pb, bio, t);
	pb->cls = BI_NR_CLASSES;
}

/*
 * What the general way needs beyond the fast path's preparation: the class
 * not worked out yet, and a plain data bio's struct bi_io (@data_dir: as
 * for blkiso_decide).
 */
static __always_inline void blkiso_leave_fast(struct blkiso_bio *pb, struct bio *bio,
					      u8 data_dir)
{
	pb->cls = BI_NR_CLASSES;
	if (data_dir != BI_NR_DIRS)
		blkiso_describe(bio, &pb->io);
}

static __always_inline void blkiso_admitted(struct blkiso_dev *dev,
					    struct blkiso_tenant *t,
					    struct blkiso_bio *pb)
{
	this_cpu_inc(t->pcpu->stat[BLKISO_ADMITTED]);
	if (trace_blkiso_charge_enabled())
		trace_blkiso_charge(dev->devt, t->cgid, pb->dir, pb->units);
}

/* A bio that may not wait: BLK_STS_AGAIN for NOWAIT, else fail it (reject mode). */
static int blkiso_refuse(struct blkiso_dev *dev, struct bio *bio,
			 struct blkiso_bio *pb, struct blkiso_tenant *t)
{
	trace_blkiso_reject(dev->devt, t->cgid, pb->dir, pb->units);
	pb->tenant = NULL;
	if (bio->bi_opf & REQ_NOWAIT) {
		this_cpu_inc(t->pcpu->stat[BLKISO_REJECTED_NOWAIT]);
		bio->bi_status = BLK_STS_AGAIN;
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	this_cpu_inc(t->pcpu->stat[BLKISO_REJECTED]);
	return DM_MAPIO_KILL;
}

/* A bio its buckets admitted: on its way, through the slot gate if @t has one. */
static int blkiso_pass(struct blkiso_dev *dev, struct bio *bio,
		       struct blkiso_bio *pb, struct blkiso_tenant *t, u64 now)
{
	struct bio_list out = BIO_EMPTY_LIST;
	unsigned long flags;

	if (likely(!READ_ONCE(t->fb.iso_on)) || READ_ONCE(dev->draining)) {
		blkiso_admitted(dev, t, pb);
		return DM_MAPIO_REMAPPED;
	}
	spin_lock_irqsave(&dev->lock, flags);
	blkiso_slot_gate_locked(dev, t, bio, now, &out);
	if (bio_list_empty(&out) && dev->draining)
		queue_work(dev->wq, &dev->dispatch_work);
	spin_unlock_irqrestore(&dev->lock, flags);
	if (bio_list_empty(&out)) {
		this_cpu_inc(t->pcpu->stat[BLKISO_PARKED]);
		trace_blkiso_park(dev->devt, t->cgid, pb->dir, pb->units);
		return DM_MAPIO_SUBMITTED;
	}
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
	unsigned long flags;
	u64 retry = 0;
	bool admitted;

	if (!pb->depth)
		return blkiso_pass(dev, bio, pb, t, now);	/* no cap on its way */
	/* Its class picks its queue; worked out only when queues matter. */
	if (READ_ONCE(t->nr_parked))
		pb->cls = bi_classify(&t->meter.rules, &pb->io);

	local_irq_save(flags);
	if (READ_ONCE(dev->draining))
		admitted = blkiso_charge(pb, true, now, NULL);
	else if (pb->cls < BI_NR_CLASSES && pb->cls != BI_CLASS_SYS &&
		 READ_ONCE(t->nr_parked_cls[pb->cls]))
		admitted = false;	/* FIFO: queue behind its class's parked bios */
	else
		admitted = blkiso_charge(pb, false, now, &retry);
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
	    blkiso_policy_rejects(pb))
		return blkiso_refuse(dev, bio, pb, t);
	if (pb->cls == BI_NR_CLASSES)
		pb->cls = bi_classify(&t->meter.rules, &pb->io);
	blkiso_park(dev, t, bio, retry);
	return DM_MAPIO_SUBMITTED;
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

	if (READ_ONCE(dev->fb.gated) && !bi_io_is_sys(&pb->io)) {
		spin_lock_irqsave(&dev->lock, flags);
		if (!dev->draining && blkiso_victim_locked(dev, t, pb, &stage)) {
			hold = true;
			if (!(bio->bi_opf & REQ_NOWAIT) && !dev->conf.reject_mode) {
				blkiso_hold_locked(dev, t, bio, stage,
						   now + blkiso_hold_ns(dev));
				spin_unlock_irqrestore(&dev->lock, flags);
				this_cpu_inc(t->pcpu->stat[BLKISO_PARKED]);
				trace_blkiso_park(dev->devt, t->cgid, pb->dir, pb->units);
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

	/* The RCU section covers the lookup and the "arrived" count. */
	rcu_read_lock();
	cgrp = blkiso_bio_cgroup(bio);
	t = blkiso_tenant_lookup(dev, cgrp ? cgroup_id(cgrp) : BLKISO_KERNEL_CGID, cgrp);
	pb->tenant = t;
	if (likely(t))
		this_cpu_inc(t->pcpu->stat[BLKISO_ARRIVED]);
	rcu_read_unlock();
	if (unlikely(!t))
		return DM_MAPIO_REMAPPED;
	now = ktime_get_ns();
	blkiso_prepare(pb, bio, t, now);
	return blkiso_map_gated(dev, bio, pb, t, now);
}

/*
 * .map's decision for a prepared bio, IRQs off (@flags: as saved): the gates
 * of the feedback controllers, or no cap on its way, or the common case
 * inline: one level (its own tenant), no parked bios, not draining, and
 * this CPU's local buckets cover the bio.  Anything else goes the general
 * way, nothing charged yet.  @data_dir: the direction of a plain data bio
 * (not of the system class; a constant, so the keys are), whose struct
 * bi_io is filled in only here, for the general way, or BI_NR_DIRS for any
 * other bio (described already).
 */
static __always_inline int blkiso_decide(struct blkiso_dev *dev, struct bio *bio,
					 struct blkiso_bio *pb, struct blkiso_tenant *t,
					 u64 now, unsigned long flags, u8 data_dir)
{
	struct bi_meter_cpu *cpu;
	bool ok;

	if (unlikely(READ_ONCE(t->fb.iso_on) | READ_ONCE(dev->fb.gated))) {
		local_irq_restore(flags);
		blkiso_leave_fast(pb, bio, data_dir);
		return blkiso_map_gated(dev, bio, pb, t, now);
	}
	if (!pb->depth) {
		/* No cap on its way: count it and let it go. */
		local_irq_restore(flags);
		blkiso_admitted(dev, t, pb);
		return DM_MAPIO_REMAPPED;
	}
	if (likely(pb->depth == 1 && pb->level[0] == t && !READ_ONCE(t->nr_parked) &&
		   !READ_ONCE(dev->draining))) {
		cpu = &this_cpu_ptr(t->pcpu)->meter;
		if (data_dir != BI_NR_DIRS)
			ok = bi_meter_admit_data_dir(&t->meter, cpu, pb->units,
						     blkiso_lower_bios(bio), &pb->cc,
						     now, data_dir);
		else
			ok = bi_meter_admit_fast(&t->meter, cpu, &pb->io, pb->units,
						 &pb->cc, now);
		if (ok) {
			local_irq_restore(flags);
			blkiso_admitted(dev, t, pb);
			return DM_MAPIO_REMAPPED;
		}
	}
	local_irq_restore(flags);
	blkiso_leave_fast(pb, bio, data_dir);
	return blkiso_map_slow(dev, bio, pb, t, now);
}

static int blkiso_map(struct dm_target *ti, struct bio *bio)
{
	struct blkiso_target *bt = ti->private;
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct blkiso_dev *dev = bt->bdev;
	struct blkiso_tenant *t;
	struct cgroup *cgrp;
	unsigned long flags;
	u64 cgid, now;

	bio_set_dev(bio, bt->dev->bdev);
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = bt->start +
			dm_target_offset(ti, bio->bi_iter.bi_sector);
	pb->cc.depth = 0;	/* pb->depth: blkiso_prepare() */

	/*
	 * IRQs are off from the lookup to the charge: the charge needs them
	 * off (a completion on this CPU may correct the same local buckets),
	 * and a section with IRQs off is an RCU read-side critical section
	 * as well (synchronize_rcu() waits for it), which covers the lookup
	 * and the "arrived" count: the tenant collector (blkiso_dev.c)
	 * unhashes a removed cgroup's tenant, waits for a grace period, and
	 * then sees every bio that found it.
	 */
	local_irq_save(flags);
	cgrp = blkiso_bio_cgroup(bio);
	cgid = cgrp ? cgroup_id(cgrp) : BLKISO_KERNEL_CGID;
	t = blkiso_tenant_find(dev, cgid);
	if (unlikely(!t)) {
		local_irq_restore(flags);
		return blkiso_map_new(dev, bio, pb);
	}
	pb->tenant = t;
	this_cpu_inc(t->pcpu->stat[BLKISO_ARRIVED]);
	now = ktime_get_ns();
	blkiso_prepare_common(pb, bio, now);
	switch (blkiso_data_dir(bio)) {
	case BI_DIR_READ:
		blkiso_prepare_data(pb, bio, t, BI_DIR_READ);
		return blkiso_decide(dev, bio, pb, t, now, flags, BI_DIR_READ);
	case BI_DIR_WRITE:
		blkiso_prepare_data(pb, bio, t, BI_DIR_WRITE);
		return blkiso_decide(dev, bio, pb, t, now, flags, BI_DIR_WRITE);
	}
	blkiso_prepare_other(pb, bio, t);
	return blkiso_decide(dev, bio, pb, t, now, flags, BI_NR_DIRS);
}

/*
 * A released victim or shed read goes to the tail of its class queue, to
 * be charged like any parked bio (it was counted held once already).
 */
static void blkiso_requeue_locked(struct blkiso_tenant *t, struct bio *bio)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));

	if (pb->cls >= BI_NR_CLASSES)
		pb->cls = bi_classify(&t->meter.rules, &pb->io);
	bio_list_add(&t->parked_bios[pb->cls], bio);
	WRITE_ONCE(t->nr_parked_cls[pb->cls], t->nr_parked_cls[pb->cls] + 1);
	WRITE_ONCE(t->nr_parked, t->nr_parked + 1);
}

/* Send a held bio now: counted dispatched, its device latency starts. */
static void blkiso_release(struct blkiso_dev *dev, struct blkiso_tenant *t,
			   struct bio *bio, u64 now, struct bio_list *out)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));

	pb->dispatch_ns = now;
	bio_list_add(out, bio);
	this_cpu_inc(t->pcpu->stat[BLKISO_DISPATCHED]);
	trace_blkiso_dispatch(dev->devt, t->cgid, pb->dir, pb->units);
}

/*
 * The timed list: delayed bios whose time has come go out; victims and
 * shed reads whose hold is over go to their class queue (a shed read asks
 * again while the device stays overloaded).  Draining releases all.
 */
static unsigned int blkiso_dispatch_timed(struct blkiso_dev *dev, struct blkiso_tenant *t,
					  u64 now, struct bio_list *out, u64 *next_ns)
{
	struct bio_list keep = BIO_EMPTY_LIST;
	unsigned int n = 0;
	struct bio *bio;

	while ((bio = bio_list_pop(&t->fb.timed))) {
		struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));

		if (!dev->draining && pb->release_ns > now && !blkiso_lower_dead(bio)) {
			bio_list_add(&keep, bio);
			*next_ns = min(*next_ns, pb->release_ns);
			continue;
		}
		if (pb->stage == BLKISO_STAGE_SHED && !dev->draining &&
		    dev->fb.ovl.overloaded &&
		    bi_rate_shed_large_read(&pb->io, true, dev->conf.shed_bytes)) {
			pb->release_ns = now + blkiso_hold_ns(dev);
			*next_ns = min(*next_ns, pb->release_ns);
			bio_list_add(&keep, bio);
			continue;
		}
		WRITE_ONCE(t->fb.nr_timed, t->fb.nr_timed - 1);
		if (pb->stage == BLKISO_STAGE_DELAY) {
			blkiso_held_dec(dev);
			blkiso_release(dev, t, bio, now, out);
			n++;
		} else {
			blkiso_requeue_locked(t, bio);
		}
	}
	t->fb.timed = keep;
	return n;
}

/*
 * The slot-wait FIFO: while slots are free, in order.  Draining, or an
 * allocation removed meanwhile, lets every waiter go without a slot.
 */
static unsigned int blkiso_dispatch_slots(struct blkiso_dev *dev, struct blkiso_tenant *t,
					  u64 now, struct bio_list *out, u64 *next_ns)
{
	struct blkiso_fb *fb = &t->fb;
	unsigned int n = 0;
	struct bio *bio;

	spin_lock(&fb->lock);
	while ((bio = bio_list_peek(&fb->slot_wait))) {
		struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
		u64 delay = 0;
		int slot = -1;

		if (!dev->draining && fb->iso_on && !blkiso_lower_dead(bio)) {
			slot = bi_iso_slot_get(&fb->iso, &fb->iso_p,
					       (u32)min_t(u64, pb->units, U32_MAX),
					       blkiso_iso_flags(pb), now, &delay);
			if (slot < 0)
				break;
		}
		bio_list_pop(&fb->slot_wait);
		WRITE_ONCE(fb->nr_slot_wait, fb->nr_slot_wait - 1);
		pb->slot = slot;
		if (delay) {
			/* still held: from the slot-wait FIFO to the timed list */
			pb->stage = BLKISO_STAGE_DELAY;
			pb->release_ns = now + delay;
			bio_list_add(&fb->timed, bio);
			WRITE_ONCE(fb->nr_timed, fb->nr_timed + 1);
			*next_ns = min(*next_ns, pb->release_ns);
			continue;
		}
		blkiso_held_dec(dev);
		blkiso_release(dev, t, bio, now, out);
		n++;
	}
	spin_unlock(&fb->lock);
	return n;
}

/*
 * One deficit-round-robin pass over the tenants with held bios: first the
 * timed list and the slot-wait FIFO, then the class queues: each tenant
 * gets BLKISO_QUANTUM_UNITS more credit and sends bios, in FIFO order,
 * while its credit covers the next one and its buckets admit it; a tenant
 * with an allocation sends them through its slot gate.  Tenants with small
 * bios are served as many units as tenants with large ones, so siblings
 * sharing a parent's quota share it by work, not by bio count (S1-24).
 * A parked bio whose lower disk is dead goes to @failed, uncharged.
 * Returns the bios sent or failed; *@starved is set if a tenant only
 * lacked credit.
 */
static unsigned int blkiso_dispatch_pass(struct blkiso_dev *dev,
					 struct bio_list *out, struct bio_list *failed,
					 u64 *next_ns, bool *starved)
{
	struct blkiso_tenant *t, *tmp;
	unsigned int n = 0;
	u64 now = ktime_get_ns();
	u8 cls;

	list_for_each_entry_safe(t, tmp, &dev->parked, park) {
		bool gate = READ_ONCE(t->fb.iso_on) && !dev->draining;

		if (t->fb.nr_timed)
			n += blkiso_dispatch_timed(dev, t, now, out, next_ns);
		if (t->fb.nr_slot_wait)
			n += blkiso_dispatch_slots(dev, t, now, out, next_ns);
		if (t->nr_parked)
			t->deficit = min_t(s64, t->deficit + BLKISO_QUANTUM_UNITS,
					   BLKISO_DEFICIT_MAX_UNITS);
		/* classes in priority order; a refused class lets the next try */
		for (cls = 0; cls < BI_NR_CLASSES; cls++) {
			while (t->nr_parked_cls[cls]) {
				struct bio *bio = bio_list_peek(&t->parked_bios[cls]);
				struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
				u64 retry = now;

				if (unlikely(blkiso_lower_dead(bio))) {
					bio_list_pop(&t->parked_bios[cls]);
					WRITE_ONCE(t->nr_parked_cls[cls], t->nr_parked_cls[cls] - 1);
					WRITE_ONCE(t->nr_parked, t->nr_parked - 1);
					blkiso_held_dec(dev);
					bio_list_add(failed, bio);
					n++;
					continue;
				}
				if (dev->draining) {
					blkiso_charge(pb, true, now, NULL);
					this_cpu_inc(t->pcpu->stat[BLKISO_DEBT]);
				} else if ((s64)pb->units > t->deficit &&
					   t->deficit < BLKISO_DEFICIT_MAX_UNITS) {
					*starved = true;
					break;
				} else if (!blkiso_charge(pb, false, now, &retry)) {
					*next_ns = min(*next_ns, retry);
					break;
				}
				t->deficit -= pb->units;
				bio_list_pop(&t->parked_bios[cls]);
				WRITE_ONCE(t->nr_parked_cls[cls], t->nr_parked_cls[cls] - 1);
				WRITE_ONCE(t->nr_parked, t->nr_parked - 1);
				blkiso_held_dec(dev);
				if (gate) {
					struct bio_list one = BIO_EMPTY_LIST;

					blkiso_slot_gate_locked(dev, t, bio, now, &one);
					if (bio_list_empty(&one))
						continue;	/* waits for a slot or its delay */
				}
				blkiso_release(dev, t, bio, now, out);
				n++;
			}
		}
		if (!t->nr_parked)
			t->deficit = 0;
		if (!t->nr_parked && !t->fb.nr_slot_wait && !t->fb.nr_timed)
			list_del_init(&t->park);
	}
	return n;
}

/* A parked bio whose lower disk is dead: refused with BLK_STS_IOERR. */
static void blkiso_fail_dead(struct blkiso_dev *dev, struct bio *bio)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct blkiso_tenant *t = pb->tenant;

	this_cpu_inc(t->pcpu->stat[BLKISO_REJECTED]);
	trace_blkiso_reject(dev->devt, t->cgid, pb->dir, pb->units);
	pb->tenant = NULL;	/* .end_io: nothing charged, counted rejected */
	bio->bi_status = BLK_STS_IOERR;
	bio_endio(bio);
}

void blkiso_dispatch_work(struct work_struct *work)
{
	struct blkiso_dev *dev = container_of(work, struct blkiso_dev, dispatch_work);
	struct bio_list out = BIO_EMPTY_LIST, failed = BIO_EMPTY_LIST;
	unsigned int n = 0, got, passes = 0;
	u64 next = U64_MAX;
	bool starved;
	struct bio *bio;

	spin_lock_irq(&dev->lock);
	do {
		starved = false;
		got = blkiso_dispatch_pass(dev, &out, &failed, &next, &starved);
		n += got;
	} while ((got || starved) && n < BLKISO_DISPATCH_BATCH &&
		 ++passes < BLKISO_DISPATCH_PASSES);
	if (!list_empty(&dev->parked)) {
		/*
		 * Look again within one tick whatever the retry time, so that
		 * held bios of a lower disk that died meanwhile fail promptly.
		 */
		next = min(next, ktime_get_ns() +
			   (u64)READ_ONCE(dev->conf.tick_ms) * NSEC_PER_MSEC);
		if (got || starved)
			queue_work(dev->wq, &dev->dispatch_work);
		else
			blkiso_arm(dev, next);
	}
	spin_unlock_irq(&dev->lock);

	while ((bio = bio_list_pop(&failed)))
		blkiso_fail_dead(dev, bio);
	while ((bio = bio_list_pop(&out)))
		dm_submit_bio_remap(bio, NULL);
}

enum hrtimer_restart blkiso_timer_fn(struct hrtimer *timer)
{
	struct blkiso_dev *dev = container_of(timer, struct blkiso_dev, timer);

	queue_work(dev->wq, &dev->dispatch_work);
	return HRTIMER_NORESTART;
}

/* Completion correction along a chain of more than one level.  IRQs off. */
static noinline void blkiso_complete_chain(struct blkiso_bio *pb, u64 now)
{
	struct bi_meter *m[BI_METER_MAX_DEPTH];
	struct bi_meter_cpu *cpu[BI_METER_MAX_DEPTH];

	blkiso_chain(pb, m, cpu);
	bi_meter_complete_chain(m, cpu, &pb->cc, now);
}

/*
 * This tick's device-latency extremes, for the tenants whose controllers
 * use them (allocations: the service time; ideal-rate tracking: the
 * slack), and the squared units that mode=auto's selector needs (the
 * spread of work per bio).  Out of line: most tenants need only the sum
 * and the misses.  IRQs off.
 */
static noinline void blkiso_feedback_extremes(struct blkiso_tenant *t,
					      struct blkiso_fb_cpu *f, u64 dev_ns,
					      u64 units)
{
	u32 seq = (u32)READ_ONCE(t->dev->fb.seq);

	if (READ_ONCE(t->fb.mode_auto)) {
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

static int blkiso_end_io(struct dm_target *ti, struct bio *bio,
			 blk_status_t *error)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct blkiso_tenant *t = pb->tenant;
	struct blkiso_tenant_pcpu __percpu *pc;
	unsigned long flags;
	u64 now, lat_ns, dev_ns;
	bool read;

	if (!t)
		return DM_ENDIO_DONE;
	now = ktime_get_ns();
	pc = t->pcpu;	/* once: each this_cpu op would load it again */
	if (pb->cc.depth) {
		local_irq_save(flags);
		if (likely(pb->cc.depth == 1)) {
			struct blkiso_tenant *lt = pb->level[0];

			bi_meter_complete_fast(&lt->meter, &this_cpu_ptr(lt->pcpu)->meter,
					       &pb->cc.lvl[0], now);
			pb->cc.depth = 0;
		} else {
			blkiso_complete_chain(pb, now);
		}
		local_irq_restore(flags);
	}
	/* the feedback tick's inputs: device latency and misses (IRQ-safe ops) */
	dev_ns = now - pb->dispatch_ns;
	this_cpu_add(pc->fb.dev_ns, dev_ns);
	if (dev_ns > READ_ONCE(t->fb.target_ns))
		this_cpu_inc(pc->fb.missed);
	if (unlikely(READ_ONCE(t->fb.extremes))) {
		local_irq_save(flags);
		blkiso_feedback_extremes(t, this_cpu_ptr(&pc->fb), dev_ns, pb->units);
		local_irq_restore(flags);
	}
	if (pb->slot >= 0)
		blkiso_slot_put(t, pb);
	read = pb->dir == BI_DIR_READ;
	lat_ns = now - pb->arrive_ns;
	if (trace_blkiso_complete_enabled())
		trace_blkiso_complete(t->dev->devt, t->cgid, pb->dir, pb->units,
				      lat_ns, blk_status_to_errno(*error));
	/* "completed" is rios + wios, added up when the counters are folded */
	if (*error)
		this_cpu_inc(pc->stat[BLKISO_ERRORS]);
	this_cpu_inc(pc->stat[read ? BLKISO_RIOS : BLKISO_WIOS]);
	this_cpu_add(pc->stat[read ? BLKISO_RBYTES : BLKISO_WBYTES], pb->bytes);
	this_cpu_add(pc->stat[read ? BLKISO_RUNITS : BLKISO_WUNITS], pb->units);
	/* real us (a constant divisor: a multiply), bounds of the uapi */
	this_cpu_inc(pc->lat[min_t(u32, fls64(div_u64(lat_ns, NSEC_PER_USEC)),
				   BLKISO_LAT_BUCKETS - 1)]);
	this_cpu_add(pc->lat_sum_ns, lat_ns);
	return DM_ENDIO_DONE;
}

static void blkiso_presuspend(struct dm_target *ti)
{
	struct blkiso_dev *dev = ((struct blkiso_target *)ti->private)->bdev;

	spin_lock_irq(&dev->lock);
	WRITE_ONCE(dev->draining, true);
	spin_unlock_irq(&dev->lock);
	queue_work(dev->wq, &dev->dispatch_work);
	flush_work(&dev->dispatch_work);
}

static void blkiso_resume(struct dm_target *ti)
{
	struct blkiso_target *bt = ti->private;

	/* Later changes (dmsetup message, sysfs) are not undone by a resume. */
	if (bt->params && !bt->params_applied) {
		blkiso_dev_configure(bt->bdev, bt->params, strlen(bt->params));
		bt->params_applied = true;
	}
	WRITE_ONCE(bt->bdev->draining, false);
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
	.resume = blkiso_resume,
	.message = blkiso_message,
	.status = blkiso_status,
	.prepare_ioctl = blkiso_prepare_ioctl,
	.iterate_devices = blkiso_iterate_devices,
};

int blkiso_target_init(void)
{
	int ret = dm_register_target(&blkiso_target_type);

	if (ret < 0)
		DMERR("register failed %d", ret);
	return ret;
}

void blkiso_target_exit(void)
{
	dm_unregister_target(&blkiso_target_type);
}
