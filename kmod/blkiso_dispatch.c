// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_dispatch.c - where a bio that may not go yet waits, and what sends
 * it on: a tenant's class FIFOs (parked, charged again when its turn
 * comes), the timed list (an injected delay, a victim or shed hold), the
 * slot-wait FIFO of a tenant with an in-flight limit; the hrtimer armed at
 * the earliest retry, and the work item it kicks, which serves the tenants
 * by deficit round robin in work units and submits what it admitted.  A
 * dead lower disk fails what is held here within one tick.
 *
 * Locking: the device lock (dev->lock, IRQ-safe: completions take it) guards
 * every list here and the counts beside them; the tenant's fb lock guards
 * its slots.  The dispatcher runs in process context and submits with no
 * lock held.
 */
#include <linux/device-mapper.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/hrtimer.h>
#include <linux/workqueue.h>

#include "blkiso.h"
#include "blkiso_trace.h"

/*
 * At most this many bios and passes per dispatch run (then requeue): the
 * bound of the work done with the device lock held and IRQs off, as
 * blk-throttle's THROTL_GRP_QUANTUM, draining included.
 */
#define BLKISO_DISPATCH_BATCH	256
#define BLKISO_DISPATCH_PASSES	64
/* Deficit round robin: credit per pass (64 KiB), and its ceiling (a 1 MiB bio). */
#define BLKISO_QUANTUM_UNITS	32
#define BLKISO_DEFICIT_MAX_UNITS	512

/*
 * Is @bio's lower disk gone for good (deleted, powered off, its driver
 * unbound)?  The block layer marks the gendisk dead and its queue dying
 * when that happens, and never for a transient I/O error.  Slow paths
 * only: a bio about to wait, and the dispatcher.
 */
bool blkiso_lower_dead(const struct bio *bio)
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

/*
 * Park @bio on @t's queue of its class until @retry_ns.  False if @t has
 * no class queues yet and no memory for them (GFP_NOWAIT): nothing done.
 */
bool blkiso_park(struct blkiso_dev *dev, struct blkiso_tenant *t,
		 struct bio *bio, u64 retry_ns)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct blkiso_fb *fb = blkiso_fb(t);
	struct blkiso_parkq *q;
	unsigned long flags;

	if (unlikely(blkiso_parkq_get(t, GFP_NOWAIT)))
		return false;

	/* in the shared set: a bio parks under the device lock anyway */
	blkiso_count(t, BLKISO_PARKED);
	/* for the tick, which differences them only once @t has its state */
	if (fb)
		atomic64_inc(&fb->ctr.throttled[pb->dir]);
	trace_blkiso_park(dev->devt, t->cgid, pb->dir, pb->units);
	spin_lock_irqsave(&dev->lock, flags);
	q = t->parkq;
	bio_list_add(&q->bios[pb->cls], bio);
	WRITE_ONCE(q->nr[pb->cls], q->nr[pb->cls] + 1);
	WRITE_ONCE(q->nr_parked, q->nr_parked + 1);
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
	return true;
}

/* One more bio held by @t outside its class queues.  Device lock held. */
static void blkiso_held_inc(struct blkiso_dev *dev, struct blkiso_tenant *t)
{
	lockdep_assert_held(&dev->lock);
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
void blkiso_hold_locked(struct blkiso_dev *dev, struct blkiso_tenant *t,
			struct bio *bio, u8 stage, u64 release_ns)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));

	lockdep_assert_held(&dev->lock);
	pb->stage = stage;
	pb->release_ns = release_ns;
	/* sent later by the dispatcher, which may block: no NOWAIT failures then */
	bio->bi_opf &= ~REQ_NOWAIT;
	/* a victim's, a shed read's, a slot's delay: @t has its feedback state */
	bio_list_add(&t->fb->timed, bio);
	WRITE_ONCE(t->fb->nr_timed, t->fb->nr_timed + 1);
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
 * A slot for @pb, fb lock held: the depth limit first (issue 20: a
 * tenant above its commitment while the device limits depth), then the
 * isolation slot of an allocation (or BLKISO_SLOT_DEPTH without one), and
 * the limit's pace, a delay (ctl_depth.h, "Pace").
 * Returns -1 (wait for a completion) or the slot; @delay as
 * bi_iso_slot_get().  The device lock is held (the limit is the tick's).
 */
static int blkiso_slot_take(struct blkiso_dev *dev, struct blkiso_fb *fb,
			    const struct blkiso_bio *pb, u64 now, u64 *delay)
{
	int slot = BLKISO_SLOT_DEPTH;

	lockdep_assert_held(&dev->lock);
	if (fb->depth_on && !bi_depth_allows(dev->fb.depth.limit, fb->depth_inflight))
		return -1;
	if (fb->iso_on) {
		slot = bi_iso_slot_get(&fb->iso, &fb->iso_p, (u32)min_t(u64, pb->units, U32_MAX),
				       blkiso_iso_flags(pb), now, delay);
		if (slot < 0)
			return -1;
	}
	/* the limit's pace: the slot is granted, the bio waits its turn */
	if (fb->depth_on && dev->fb.depth.pace_ups)
		*delay = max(*delay, bi_depth_pace_delay(&fb->pace_next_ns, pb->units,
							 dev->fb.depth.pace_ups, now));
	fb->depth_inflight++;
	return slot;
}

/*
 * The slot gate of a charged bio of a tenant with an allocation, or above
 * its commitment under the depth limit
 * (ctl_isolation, ctl_depth): a free slot without delay sends it to @out; a delayed
 * slot holds it on the timed list; no slot (or others waiting before it)
 * queues it on the slot-wait FIFO, which a completion wakes.  The slot
 * state is under the tenant's fb lock, so that a completion freeing a slot
 * either comes first (and we get the slot) or sees us waiting (and wakes
 * the dispatcher).  Device lock held.
 */
void blkiso_slot_gate_locked(struct blkiso_dev *dev, struct blkiso_tenant *t,
			     struct bio *bio, u64 now, struct bio_list *out)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct blkiso_fb *fb = t->fb;	/* the gate is on: it has one */
	u64 delay = 0;
	int slot = -1;

	lockdep_assert_held(&dev->lock);
	spin_lock(&fb->lock);
	if (!fb->nr_slot_wait)
		slot = blkiso_slot_take(dev, fb, pb, now, &delay);
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
void blkiso_slot_put(struct blkiso_tenant *t, struct blkiso_bio *pb)
{
	struct blkiso_fb *fb = blkiso_fb(t);	/* it gave the slot: kept since */
	unsigned long flags;
	bool wake;

	spin_lock_irqsave(&fb->lock, flags);
	if (pb->slot != BLKISO_SLOT_DEPTH)
		bi_iso_slot_put(&fb->iso, pb->slot, blkiso_iso_flags(pb));
	fb->depth_inflight--;
	wake = fb->nr_slot_wait;
	spin_unlock_irqrestore(&fb->lock, flags);
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
bool blkiso_victim_locked(struct blkiso_dev *dev, struct blkiso_tenant *t,
			  struct blkiso_bio *pb, u8 *stage)
{
	struct blkiso_fb *fb = t->fb;

	lockdep_assert_held(&dev->lock);
	/* without feedback state yet (its next bio gets it): not held */
	if (!fb)
		return false;
	if (dev->fb.ovl.overloaded &&
	    bi_rate_shed_large_read(&pb->io, true, dev->conf.shed_bytes)) {
		*stage = BLKISO_STAGE_SHED;
		return true;
	}
	if (!bi_fb_victims_on(&dev->conf) || !dev->fb.ovl.m ||
	    !bi_ovl_victim(&dev->fb.ovl, bi_conf_rank(&blkiso_quota(t)->conf, &pb->io),
			   bi_fb_above_commit(&blkiso_quota(t)->conf, &fb->iso, fb->rate,
					      fb->rate_p, true)))
		return false;
	*stage = BLKISO_STAGE_VICTIM;
	dev->fb.victims++;
	fb->victims++;
	return true;
}

u64 blkiso_hold_ns(const struct blkiso_dev *dev)
{
	return (u64)bi_dev_conf_hold_ms(&dev->conf) * NSEC_PER_MSEC;
}

/*
 * A released victim or shed read goes to the tail of its class queue, to
 * be charged like any parked bio (it was counted held once already).  @t
 * held it: it has its feedback state, so its class queues.
 */
static void blkiso_requeue_locked(struct blkiso_tenant *t, struct bio *bio)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct blkiso_parkq *q = t->parkq;

	lockdep_assert_held(&t->dev->lock);
	if (pb->cls >= BI_NR_CLASSES)
		pb->cls = blkiso_classify(t, &pb->io);
	bio_list_add(&q->bios[pb->cls], bio);
	WRITE_ONCE(q->nr[pb->cls], q->nr[pb->cls] + 1);
	WRITE_ONCE(q->nr_parked, q->nr_parked + 1);
}

/* Send a held bio now: counted dispatched, its device latency starts. */
static void blkiso_release(struct blkiso_dev *dev, struct blkiso_tenant *t,
			   struct bio *bio, u64 now, struct bio_list *out)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));

	pb->dispatch_ns = now;
	bio_list_add(out, bio);
	blkiso_count(t, BLKISO_DISPATCHED);
	trace_blkiso_dispatch(dev->devt, t->cgid, pb->dir, pb->units);
}

/*
 * The timed list: delayed bios whose time has come go out; victims and
 * shed reads whose hold is over go to their class queue (a shed read asks
 * again while the device stays overloaded).  Draining releases all.
 */
static unsigned int blkiso_dispatch_timed(struct blkiso_dev *dev, struct blkiso_tenant *t,
					  u64 now, struct bio_list *out, u64 *next_ns,
					  unsigned int budget)
{
	struct bio_list keep = BIO_EMPTY_LIST;
	struct blkiso_fb *fb = t->fb;
	unsigned int n = 0;
	struct bio *bio;

	while (n < budget && (bio = bio_list_pop(&fb->timed))) {
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
		WRITE_ONCE(fb->nr_timed, fb->nr_timed - 1);
		if (pb->stage == BLKISO_STAGE_DELAY) {
			blkiso_held_dec(dev);
			blkiso_release(dev, t, bio, now, out);
			n++;
		} else {
			blkiso_requeue_locked(t, bio);
		}
	}
	/* over budget: the rest stays, in order, for the next pass */
	bio_list_merge(&keep, &fb->timed);
	fb->timed = keep;
	return n;
}

/*
 * The slot-wait FIFO: while slots are free, in order.  Draining, or an
 * allocation removed meanwhile, lets every waiter go without a slot.
 */
static unsigned int blkiso_dispatch_slots(struct blkiso_dev *dev, struct blkiso_tenant *t,
					  u64 now, struct bio_list *out, u64 *next_ns,
					  unsigned int budget)
{
	struct blkiso_fb *fb = t->fb;
	unsigned int n = 0, moved = 0;
	struct bio *bio;

	spin_lock(&fb->lock);
	while (n + moved < budget && (bio = bio_list_peek(&fb->slot_wait))) {
		struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
		u64 delay = 0;
		int slot = -1;

		if (!dev->draining && (fb->iso_on || fb->depth_on) && !blkiso_lower_dead(bio)) {
			slot = blkiso_slot_take(dev, fb, pb, now, &delay);
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
			moved++;
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
 * At most @budget bios are sent or failed (draining too: a suspend never
 * empties a deep queue in one IRQs-off section); the rest waits for the
 * next pass.  Returns the bios sent or failed; *@starved is set if a
 * tenant only lacked credit, or the budget ran out.
 */
static unsigned int blkiso_dispatch_pass(struct blkiso_dev *dev,
					 struct bio_list *out, struct bio_list *failed,
					 u64 *next_ns, bool *starved, unsigned int budget)
{
	struct blkiso_tenant *t, *tmp;
	unsigned int n = 0;
	u64 now = ktime_get_ns();
	u8 cls;

	lockdep_assert_held(&dev->lock);
	list_for_each_entry_safe(t, tmp, &dev->parked, park) {
		struct blkiso_fb *fb = t->fb;	/* NULL: nothing held but parked */
		/*
		 * Never NULL here: a bio is parked only once its tenant has
		 * class queues, and a feedback state (timed or slot-waiting
		 * bios) is published only after them (blkiso_fb_get()).
		 */
		struct blkiso_parkq *q = t->parkq;
		bool gate = blkiso_fb_gate(t) && !dev->draining;

		if (n >= budget) {
			*starved = true;
			break;
		}
		if (fb && fb->nr_timed)
			n += blkiso_dispatch_timed(dev, t, now, out, next_ns, budget - n);
		if (fb && fb->nr_slot_wait)
			n += blkiso_dispatch_slots(dev, t, now, out, next_ns, budget - n);
		if (q->nr_parked)
			q->deficit = min_t(s64, q->deficit + BLKISO_QUANTUM_UNITS,
					   BLKISO_DEFICIT_MAX_UNITS);
		/* classes in priority order; a refused class lets the next try */
		for (cls = 0; cls < BI_NR_CLASSES; cls++) {
			while (q->nr[cls]) {
				if (n >= budget) {
					*starved = true;
					break;
				}
				struct bio *bio = bio_list_peek(&q->bios[cls]);
				struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
				u64 retry = now;
				bool queue;

				if (unlikely(blkiso_lower_dead(bio))) {
					bio_list_pop(&q->bios[cls]);
					WRITE_ONCE(q->nr[cls], q->nr[cls] - 1);
					WRITE_ONCE(q->nr_parked, q->nr_parked - 1);
					blkiso_held_dec(dev);
					bio_list_add(failed, bio);
					n++;
					continue;
				}
				/* bios behind it: wait for whole batches (dispense.c) */
				queue = q->nr[cls] > 1;
				if (dev->draining) {
					blkiso_charge(pb, true, queue, now, NULL);
					blkiso_count(t, BLKISO_DEBT);
				} else if ((s64)pb->units > q->deficit &&
					   q->deficit < BLKISO_DEFICIT_MAX_UNITS) {
					*starved = true;
					break;
				} else if (!blkiso_charge(pb, false, queue, now, &retry)) {
					*next_ns = min(*next_ns, retry);
					break;
				}
				q->deficit -= pb->units;
				bio_list_pop(&q->bios[cls]);
				WRITE_ONCE(q->nr[cls], q->nr[cls] - 1);
				WRITE_ONCE(q->nr_parked, q->nr_parked - 1);
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
		if (!q->nr_parked)
			q->deficit = 0;
		if (!blkiso_tenant_queued(t))
			list_del_init(&t->park);
	}
	return n;
}

/* A parked bio whose lower disk is dead: refused with BLK_STS_IOERR. */
static void blkiso_fail_dead(struct blkiso_dev *dev, struct bio *bio)
{
	struct blkiso_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct blkiso_tenant *t = pb->tenant;

	trace_blkiso_reject(dev->devt, t->cgid, pb->dir, pb->units);
	if (pb->anc_held)
		blkiso_levels_put(pb);
	blkiso_bio_untenanted(pb);	/* .end_io: nothing charged, counted rejected */
	/* the bio's last access to @t (the lifetime rule, blkiso.h) */
	blkiso_count_last(t, BLKISO_REJECTED);
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
	u64 t0;

	spin_lock_irq(&dev->lock);
	t0 = blkiso_irqsoff_begin();
	do {
		starved = false;
		got = blkiso_dispatch_pass(dev, &out, &failed, &next, &starved,
					   BLKISO_DISPATCH_BATCH - n);
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
	blkiso_irqsoff_done(BLKISO_IRQSOFF_DISPATCH, t0);
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

