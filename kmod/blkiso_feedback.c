// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_feedback.c - the per-device tick that runs the feedback
 * controllers of kmod/core, and the stats ring it publishes.
 *
 * Every tick_ms (default 100 ms) a delayed work item of the device visits
 * the tenants on its active list (iocost's active list, below) and:
 *
 *  1. folds each tenant's per-CPU counters (completions, units, device
 *     latency sum and extremes, misses, bucket-throttled bios) and takes
 *     the difference from the previous tick;
 *  2. runs each tenant's own overload window (bi_ovl_tenant_tick, S2-16),
 *     then the device's detector and multiplier (bi_ovl_tick) on the sums;
 *  3. per tenant in mode=auto, the mechanism selector (bi_mode_tick, S0-33)
 *     over a decaying window of completions; per tenant in request mode,
 *     the request-rate cap controller (bi_rate_tick) per direction, and
 *     sets the request key's rate;
 *  4. per tenant with an allocation, the isolation controller
 *     (bi_iso_tick: slot limit, delay, mode), then wakes the tenant's slot
 *     waiters, whose limit may have grown;
 *  5. notes which tenants are above their commitment (victim preference,
 *     S2-09), with depth_limit=1 moves the depth limit on them from the
 *     protected tenants' misses (bi_depth_tick, issue 20), opens or closes
 *     the device's victim gate, and writes one record to the device's ring
 *     and one to each active tenant's ring;
 *  6. out of the device lock, reconfigures the meter of each tenant whose
 *     selector switched between work and request tokens.
 *
 * The order is doc/controllers.md's, the same as blkiso-sim's sim_tick(),
 * and the controllers get their parameters from the same lines through
 * kmod/core/feedback.c, so a scenario behaves alike in both.
 *
 * The gates these decisions drive live in blkiso_target.c and blkiso_dispatch.c: the victim gate
 * at .map (overload != off), the slot gate at dispatch (allocations), the
 * delay through the tenant's timed list.  A miss is a completion whose
 * device latency (dispatch -> completion, A-27) exceeded its tenant's
 * latency_us: delays blkiso itself imposes never count as overload.
 *
 * The active list.  A tenant joins it with its first bio after it left
 * (.map: one load and branch per bio, the device lock only then), when
 * its line gives it a controller that moves without I/O (an allocation, a
 * request-rate controller, mode=auto), and when it is created by a rule's
 * line.  It leaves after BLKISO_FB_IDLE_TICKS ticks in a row in which it
 * was idle (nothing arrived, completed, waited or was in flight) and at
 * rest: an empty tick would change none of its state (blkiso_fb_at_rest).
 * A tenant off the list is therefore owed nothing for the ticks it misses:
 * its overload window and mode window are empty, its request-rate
 * controllers are at their fixed point (their time base is reset when it
 * comes back, so the first tick measures one period, not the idle gap),
 * initial=ewma moves only on completions, and its counters are cumulative
 * (the first tick after it comes back folds whatever it missed).  A tenant
 * with an allocation never leaves once on it: its controller follows the
 * device's overload episodes (S3-18) and its hovering clocks every tick.
 * Its ring gets no record while it is off the list (the records carry the
 * tick's seq: a gap is a run of idle ticks).
 *
 * Cost: the tick is O(active tenants x possible CPUs), nothing for an idle
 * tenant; tenants with nothing to report write no ring record.  The folds
 * (the possible-CPU term) take no lock, and no section under the device
 * lock visits more than BLKISO_FB_TICK_BATCH tenants (blkiso_fb_tick()).
 */
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "blkiso.h"

/* Idle ticks at rest in a row after which a tenant leaves the active list. */
#define BLKISO_FB_IDLE_TICKS	2

/*
 * The most tenants the tick visits in one section under the device lock
 * (IRQs off), as blk-throttle's THROTL_QUANTUM bounds a dispatch round:
 * the tick's longest section was ~700 ns per tenant with its fold inside
 * and 4 possible CPUs (doc/robustness.md), so 32 keep one section to
 * ~tens of us whatever the number of active tenants.
 */
#define BLKISO_FB_TICK_BATCH	32

/* Feedback states come from a cache of their own (kzalloc would round up). */
static struct kmem_cache *blkiso_fb_cache;

int blkiso_fb_cache_init(void)
{
	blkiso_fb_cache = KMEM_CACHE(blkiso_fb, 0);
	return blkiso_fb_cache ? 0 : -ENOMEM;
}

void blkiso_fb_cache_exit(void)
{
	kmem_cache_destroy(blkiso_fb_cache);
}

/* Slab bytes of one feedback state (/sys/kernel/blkiso/objects). */
unsigned int blkiso_fb_bytes(void)
{
	return kmem_cache_size(blkiso_fb_cache);
}

static void blkiso_fb_fold(struct blkiso_tenant *t, const struct blkiso_fb *fb, u32 seq,
			   u64 *v, u64 *lat_min, u64 *lat_max);

/*
 * What every tenant's feedback state takes from the lines, an allocation
 * aside: its latency target, whether .end_io keeps extremes, its own
 * overload window.
 */
static void blkiso_fb_conf_common(struct blkiso_fb *fb, const struct bi_tenant_conf *conf,
				  const struct blkiso_dev *dev, bool alloc)
{
	WRITE_ONCE(fb->target_ns, (u64)conf->latency_us * NSEC_PER_USEC);
	/* the service time (allocations) and the slack (ideal mode) need them */
	WRITE_ONCE(fb->extremes, alloc || dev->conf.overload == BI_OVERLOAD_IDEAL ||
		   fb->mode_auto);
	fb->ovl.threshold_permille = bi_fb_tenant_threshold(conf, &dev->conf);
	/* controllers of its own that judge each bio's latency (issue 18) */
	WRITE_ONCE(fb->time_all, fb->extremes || fb->ovl.threshold_permille ||
		   conf->latency_us != BI_LATENCY_US_DEFAULT);
	fb->ovl.window_ticks = bi_fb_tenant_window(conf);
}

/*
 * Publish @fb (zeroed) as @t's feedback state: set from @t's lines as a
 * counted-only tenant's (a line's controllers follow from
 * blkiso_fb_configure()), its counters so far taken as seen, so that its
 * first tick counts only what came after.  Device lock held.
 */
static void blkiso_fb_publish_locked(struct blkiso_tenant *t, struct blkiso_fb *fb)
{
	struct blkiso_dev *dev = t->dev;
	u64 lat_min, lat_max;

	lockdep_assert_held(&dev->lock);
	fb->tenant = t;
	INIT_LIST_HEAD(&fb->active_node);
	spin_lock_init(&fb->lock);
	bio_list_init(&fb->slot_wait);
	bio_list_init(&fb->timed);
	bi_ovl_tenant_init(&fb->ovl);
	blkiso_fb_conf_common(fb, &blkiso_quota(t)->conf, dev, false);
	blkiso_fb_fold(t, fb, (u32)dev->fb.seq, fb->prev, &lat_min, &lat_max);
	/* whole before any reader can see it */
	smp_store_release(&t->fb, fb);
	WRITE_ONCE(t->fb_settled, false);	/* not on the active list yet */
	atomic_long_inc(&blkiso_live_tenant_fb);
}

/*
 * Give @t its feedback state unless it has one: when a line configures it
 * (conf_mutex held, or @t unpublished: .map's rule preset, @gfp
 * GFP_NOWAIT), or at .map (blkiso_fb_activate()) once its device's
 * feedback counts every tenant.  Kept until @t is freed.  Not under the
 * device lock.  -ENOMEM leaves @t as it was.
 */
int blkiso_fb_get(struct blkiso_tenant *t, gfp_t gfp)
{
	struct blkiso_fb *fb;
	unsigned long flags;

	if (blkiso_fb(t))
		return 0;
	/* its held bios go back to its class queues: they come first */
	if (blkiso_parkq_get(t, gfp))
		return -ENOMEM;
	fb = kmem_cache_zalloc(blkiso_fb_cache, gfp | __GFP_NOWARN);
	if (!fb)
		return -ENOMEM;
	spin_lock_irqsave(&t->dev->lock, flags);
	if (!t->fb) {
		blkiso_fb_publish_locked(t, fb);
		fb = NULL;
	}
	spin_unlock_irqrestore(&t->dev->lock, flags);
	if (fb)
		kmem_cache_free(blkiso_fb_cache, fb);
	return 0;
}

/* The release of @t: nothing uses it any more. */
void blkiso_fb_free(struct blkiso_tenant *t)
{
	if (t->fb) {
		kmem_cache_free(blkiso_fb_cache, t->fb);
		atomic_long_dec(&blkiso_live_tenant_fb);
	}
}

/*
 * From now on every tenant that does I/O needs its feedback state
 * (dev->fb_all); conf_mutex held, or .map's rule preset.  Those without
 * one get it at their next bio, once the tick has asked them to
 * (blkiso_fb_all_walk()).
 */
void blkiso_fb_all(struct blkiso_dev *dev)
{
	unsigned long flags;

	if (READ_ONCE(dev->fb_all))
		return;
	spin_lock_irqsave(&dev->lock, flags);
	WRITE_ONCE(dev->fb_all, true);
	dev->fb.all_walk = true;
	spin_unlock_irqrestore(&dev->lock, flags);
}

/*
 * The tick, once after blkiso_fb_all(): every listed tenant without
 * feedback state gets it at its next bio (.map's touch is due again).
 * conf_mutex held (tenants stay listed), the device lock per tenant only:
 * a tenant whose touch found it settled without one before the flag was
 * set is seen here after that touch.
 */
static void blkiso_fb_all_walk(struct blkiso_dev *dev)
{
	struct blkiso_tenant *t;

	list_for_each_entry_rcu(t, &dev->tenant_list, list,
				lockdep_is_held(&dev->conf_mutex)) {
		spin_lock_irq(&dev->lock);
		if (!t->fb)
			WRITE_ONCE(t->fb_settled, false);
		spin_unlock_irq(&dev->lock);
		cond_resched();
	}
	dev->fb.all_walk = false;
}

static u64 blkiso_tick_ns(const struct blkiso_dev *dev)
{
	return (u64)dev->conf.tick_ms * NSEC_PER_MSEC;
}

/* The mechanism in force: mode=auto's choice, or the configured one. */
static u8 blkiso_tenant_mode(const struct blkiso_tenant *t)
{
	const struct blkiso_quota *q = blkiso_quota(t);

	return q->conf.mode == BI_MODE_AUTO ? q->meter.auto_active : q->conf.mode;
}

/*
 * A tenant's line changed (conf_mutex held), before its meter is
 * configured: a tenant newly in mode=auto starts in work mode with an
 * empty window (S0-33), and its meter configures what the selector picks.
 */
void blkiso_fb_mode_configure(struct blkiso_tenant *t)
{
	struct blkiso_fb *fb = blkiso_fb(t);
	bool on = blkiso_quota(t)->conf.mode == BI_MODE_AUTO;

	if (!fb)	/* counted only: no controller */
		return;
	if (on && !fb->mode_auto) {
		bi_mode_init(&fb->ms, BI_MODE_AUTO);
		fb->mode_win = (struct bi_sample){ 0 };
		fb->mode_changed = false;
		blkiso_quota(t)->meter.auto_active = fb->ms.active;
	}
	WRITE_ONCE(fb->mode_auto, on);
}

/*
 * A tenant's line changed (conf_mutex held): the controllers' parameters
 * follow.  A new allocation starts its controller afresh; a changed one
 * keeps its state.  The request-mode caps restart where S0-13 says.
 */
void blkiso_fb_configure(struct blkiso_tenant *t)
{
	struct blkiso_dev *dev = t->dev;
	struct blkiso_quota *q = blkiso_quota(t);	/* conf_mutex: stays */
	struct blkiso_fb *fb = blkiso_fb(t);
	u64 tick_ns = blkiso_tick_ns(dev), now = ktime_get_ns();
	struct bi_iso_params p;
	unsigned long flags;
	u8 rate_on = 0;
	u32 d;

	if (!fb) {
		/* counted only: the lines it will need are read when it gets one */
		return;
	}
	bi_fb_iso_params(&p, &q->conf, tick_ns);
	if (p.alloc)	/* its controller follows the device's detector */
		blkiso_fb_all(dev);
	spin_lock_irqsave(&fb->lock, flags);
	if (!fb->iso_on && p.alloc)
		bi_iso_init(&fb->iso, &p);
	fb->iso_p = p;
	WRITE_ONCE(fb->iso_on, p.alloc != 0);
	spin_unlock_irqrestore(&fb->lock, flags);

	blkiso_fb_conf_common(fb, &q->conf, dev, p.alloc != 0);

	spin_lock_irqsave(&dev->lock, flags);
	for (d = 0; d < BI_NR_DIRS; d++) {
		u64 c = bi_conf_rate_units(&q->conf, &dev->conf.cost, d);

		bi_fb_rate_params(&fb->rate_p[d], &q->conf, c, tick_ns);
		if (blkiso_tenant_mode(t) != BI_MODE_REQUEST || c == BI_CONF_UNLIMITED)
			continue;
		rate_on |= 1U << d;
		if (!(fb->rate_on & (1U << d)) ||
		    bi_conf_rate_requests(&q->conf, d) != BI_CONF_UNLIMITED)
			bi_rate_init(&fb->rate[d], bi_fb_initial_cap_mrps(&q->conf, c, d));
		else	/* the meter was reset to the initial cap: keep ours */
			bi_meter_set_request_rate(&q->meter, d,
						  DIV_ROUND_CLOSEST_ULL(fb->rate[d].cap_mrps,
									BI_MRPS_PER_RPS),
						  now);
	}
	fb->rate_on = rate_on;
	spin_unlock_irqrestore(&dev->lock, flags);
}

/* Put @t on the active list (the tick visits it from the next tick on). */
static void blkiso_fb_activate_locked(struct blkiso_dev *dev, struct blkiso_tenant *t)
{
	struct blkiso_fb *fb = t->fb;
	u32 d;

	lockdep_assert_held(&dev->lock);
	if (!fb) {
		if (t->dead || (!dev->fb_all && !t->configured)) {
			/* nothing of the tick's for it: .map need not come back */
			WRITE_ONCE(t->fb_settled, true);
			return;
		}
		/* IRQs off: or at its next bio, if there is no memory now */
		if (blkiso_parkq_get_locked(t))
			return;
		fb = kmem_cache_zalloc(blkiso_fb_cache, GFP_NOWAIT | __GFP_NOWARN);
		if (!fb)
			return;
		blkiso_fb_publish_locked(t, fb);
	}
	fb->idle_ticks = 0;
	if (fb->active || t->dead)
		return;
	/* the request-rate controllers measure their next tick as one period */
	for (d = 0; d < BI_NR_DIRS; d++)
		fb->rate[d].last_ns = 0;
	list_add_tail(&fb->active_node, &dev->fb.active);
	dev->fb.nr_active++;
	fb->active = true;
	WRITE_ONCE(t->fb_settled, true);
}

/* .map (blkiso_fb_touch), the collector: any context. */
void blkiso_fb_activate(struct blkiso_tenant *t)
{
	struct blkiso_dev *dev = t->dev;
	unsigned long flags;

	spin_lock_irqsave(&dev->lock, flags);
	blkiso_fb_activate_locked(dev, t);
	spin_unlock_irqrestore(&dev->lock, flags);
}

/*
 * @t's line changed (conf_mutex held) or a rule's line made it: a
 * controller that moves without I/O starts ticking now.
 */
void blkiso_fb_configured(struct blkiso_tenant *t)
{
	struct blkiso_fb *fb = blkiso_fb(t);

	if (fb && (READ_ONCE(fb->iso_on) || READ_ONCE(fb->rate_on) || READ_ONCE(fb->mode_auto)))
		blkiso_fb_activate(t);
}

/* @t leaves the active list (the tick, or the collector unlisting it). */
void blkiso_fb_deactivate_locked(struct blkiso_dev *dev, struct blkiso_tenant *t)
{
	struct blkiso_fb *fb = t->fb;

	lockdep_assert_held(&dev->lock);
	if (!fb || !fb->active)
		return;
	list_del_init(&fb->active_node);
	dev->fb.nr_active--;
	fb->active = false;
	WRITE_ONCE(t->fb_settled, false);
	WRITE_ONCE(fb->depth_on, false);	/* idle: nothing to bound */
	WRITE_ONCE(fb->cut_on, false);
}

/* The device line changed (conf_mutex held). */
void blkiso_fb_dev_configure(struct blkiso_dev *dev)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->lock, flags);
	bi_fb_ovl_params(&dev->fb.ovl_p, &dev->conf);
	if (dev->conf.overload == BI_OVERLOAD_OFF && dev->fb_gated)
		WRITE_ONCE(dev->fb_gated, false);
	spin_unlock_irqrestore(&dev->lock, flags);
	/* victims, shedding and the depth limit look at every tenant */
	if (dev->conf.overload != BI_OVERLOAD_OFF || dev->conf.depth_limit)
		blkiso_fb_all(dev);
}

static void blkiso_fb_tick(struct work_struct *work);

void blkiso_fb_dev_init(struct blkiso_dev *dev)
{
	bi_fb_ovl_params(&dev->fb.ovl_p, &dev->conf);
	bi_ovl_init(&dev->fb.ovl, &dev->fb.ovl_p);
	bi_depth_params_init(&dev->fb.depth_p);
	bi_depth_init(&dev->fb.depth);
	INIT_LIST_HEAD(&dev->fb.active);
	INIT_DELAYED_WORK(&dev->fb.tick_work, blkiso_fb_tick);
}

/*
 * Ticks are due every tick_ms from the last due time, not from when the
 * last one ran, so that they keep their period on average (work items
 * start late by a jiffy or so); a tick more than a period late is not
 * caught up with.
 */
static void blkiso_fb_requeue(struct blkiso_dev *dev)
{
	unsigned long period = max(1UL, msecs_to_jiffies(READ_ONCE(dev->conf.tick_ms)));
	unsigned long now = jiffies;

	dev->fb.due += period;
	if (time_before_eq(dev->fb.due, now) || time_after(dev->fb.due, now + period))
		dev->fb.due = now + period;
	queue_delayed_work(dev->wq, &dev->fb.tick_work, dev->fb.due - now);
}

/*
 * @t's shared counters (a counted-only tenant's) and those in its feedback
 * state @fb into @v, as the per-CPU ones.
 */
static void blkiso_fb_fold_shared(struct blkiso_tenant *t, const struct blkiso_fb *fb,
				  u32 seq, u64 *v, u64 *lat_min, u64 *lat_max)
{
	const struct blkiso_fb_shared *fc = &fb->ctr;
	u64 stat[BLKISO_NR_STATS];

	blkiso_ctr_stats(t, stat);
	v[BLKISO_FB_ROPS] = stat[BLKISO_RIOS];
	v[BLKISO_FB_WOPS] = stat[BLKISO_WIOS];
	v[BLKISO_FB_RUNITS] = stat[BLKISO_RUNITS];
	v[BLKISO_FB_WUNITS] = stat[BLKISO_WUNITS];
	v[BLKISO_FB_DEV_NS] = atomic64_read(&fc->dev_ns);
	v[BLKISO_FB_MISSED] = atomic64_read(&fc->missed);
	v[BLKISO_FB_RTHROTTLED] = atomic64_read(&fc->throttled[BI_DIR_READ]);
	v[BLKISO_FB_WTHROTTLED] = atomic64_read(&fc->throttled[BI_DIR_WRITE]);
	v[BLKISO_FB_UNITS_SQ] = READ_ONCE(fc->ext.units_sq);
	v[BLKISO_FB_ARRIVED] = stat[BLKISO_ARRIVED];
	v[BLKISO_FB_REFUSED] = stat[BLKISO_REJECTED] + stat[BLKISO_REJECTED_NOWAIT];
	if (READ_ONCE(fc->ext.lat_seq) == seq) {
		*lat_min = READ_ONCE(fc->ext.lat_min_ns);
		*lat_max = READ_ONCE(fc->ext.lat_max_ns);
	}
}

/*
 * Fold @t's counters into @v (cumulative) and the latency extremes: its
 * shared set, and its per-CPU ones if it has them.
 */
static void blkiso_fb_fold(struct blkiso_tenant *t, const struct blkiso_fb *fb, u32 seq,
			   u64 *v, u64 *lat_min, u64 *lat_max)
{
	struct blkiso_tenant_pcpu __percpu *pcpu = READ_ONCE(t->pcpu);
	int cpu;

	*lat_min = U64_MAX;
	*lat_max = 0;
	blkiso_fb_fold_shared(t, fb, seq, v, lat_min, lat_max);
	for_each_possible_cpu(cpu) {
		struct blkiso_tenant_pcpu *pc;

		if (!pcpu)
			break;
		pc = per_cpu_ptr(pcpu, cpu);

		/* throttled and refused bios: in the shared set only */
		v[BLKISO_FB_ROPS] += READ_ONCE(pc->stat[blkiso_pcpu_stat(BLKISO_RIOS)]);
		v[BLKISO_FB_WOPS] += READ_ONCE(pc->stat[blkiso_pcpu_stat(BLKISO_WIOS)]);
		v[BLKISO_FB_RUNITS] += READ_ONCE(pc->stat[blkiso_pcpu_stat(BLKISO_RUNITS)]);
		v[BLKISO_FB_WUNITS] += READ_ONCE(pc->stat[blkiso_pcpu_stat(BLKISO_WUNITS)]);
		v[BLKISO_FB_DEV_NS] += READ_ONCE(pc->fb.dev_ns);
		v[BLKISO_FB_MISSED] += READ_ONCE(pc->fb.missed);
		v[BLKISO_FB_UNITS_SQ] += READ_ONCE(pc->fb.ext.units_sq);
		v[BLKISO_FB_ARRIVED] += READ_ONCE(pc->stat[blkiso_pcpu_stat(BLKISO_ARRIVED)]);
		if (READ_ONCE(pc->fb.ext.lat_seq) == seq) {
			*lat_min = min(*lat_min, READ_ONCE(pc->fb.ext.lat_min_ns));
			*lat_max = max(*lat_max, READ_ONCE(pc->fb.ext.lat_max_ns));
		}
	}
	v[BLKISO_FB_OPS] = v[BLKISO_FB_ROPS] + v[BLKISO_FB_WOPS];	/* completed */
}

static void blkiso_fb_record(struct blkiso_tenant *t, const struct blkiso_tick_rec *devrec)
{
	struct blkiso_fb *fb = t->fb, *s = fb;
	struct blkiso_tick_rec *r = &fb->ring[fb->ring_n++ % BLKISO_RING_TENANT];

	*r = (struct blkiso_tick_rec){
		.seq = devrec->seq,
		.time_ns = devrec->time_ns,
		.completed = (u32)min_t(u64, s->d[BLKISO_FB_OPS], U32_MAX),
		.missed = (u32)min_t(u64, s->d[BLKISO_FB_MISSED], U32_MAX),
		.miss_permille = fb->ovl.miss_permille,
		.mult = devrec->mult,
		.flags = (devrec->flags & BLKISO_TICK_OVERLOADED) |
			 (fb->above ? BLKISO_TICK_ABOVE : 0) |
			 (blkiso_tenant_mode(t) == BI_MODE_REQUEST ? BLKISO_TICK_REQUEST : 0),
		.victims = fb->victims,
		.iso_mode = BLKISO_ISO_NONE,
		.rcap_mrps = fb->rate_on & (1U << BI_DIR_READ) ?
			     fb->rate[BI_DIR_READ].cap_mrps : 0,
		.wcap_mrps = fb->rate_on & (1U << BI_DIR_WRITE) ?
			     fb->rate[BI_DIR_WRITE].cap_mrps : 0,
	};
	spin_lock(&fb->lock);
	if (fb->iso_on) {
		r->usage = fb->iso.usage;
		r->delay_ns = fb->iso.delay_ns;
		r->slots = bi_iso_limit(&fb->iso, &fb->iso_p);
		r->inflight = fb->iso.inflight;
		r->iso_mode = fb->iso.mode;
	}
	spin_unlock(&fb->lock);
}

/*
 * mode=auto (S0-33): the selector over a window that halves every tick, as
 * blkiso-sim's; the committed rate is the read work cap.  A switch is
 * applied after the device lock is dropped (blkiso_fb_mode_switch).
 */
static void blkiso_fb_mode_tick(struct blkiso_dev *dev, struct blkiso_tenant *t)
{
	const struct blkiso_quota *q = blkiso_quota(t);
	struct blkiso_fb *fb = t->fb;
	struct bi_sample *w = &fb->mode_win;
	u64 c = bi_conf_rate_units(&q->conf, &dev->conf.cost, BI_DIR_READ);

	w->n = w->n / 2 + fb->d[BLKISO_FB_OPS];
	w->units = w->units / 2 + fb->d[BLKISO_FB_RUNITS] + fb->d[BLKISO_FB_WUNITS];
	w->units_sq = w->units_sq / 2 + fb->d[BLKISO_FB_UNITS_SQ];
	if (bi_mode_tick(&fb->ms, w, c == BI_CONF_UNLIMITED ? U64_MAX : c) !=
	    q->meter.auto_active)
		fb->mode_changed = true;
}

/*
 * Step 6: the selector switched; the meter takes the other mechanism (a key
 * that comes on starts full, like any new cap) and the request-rate
 * controller starts or stops.  conf_mutex held, not the device lock.
 */
static void blkiso_fb_mode_switch(struct blkiso_tenant *t)
{
	t->fb->mode_changed = false;
	blkiso_quota(t)->meter.auto_active = t->fb->ms.active;
	blkiso_meter_configure(t);
	blkiso_fb_configure(t);
	queue_work(t->dev->wq, &t->dev->dispatch_work);
}

/*
 * @t's bios sent down and not completed, from the folded counters (what
 * arrived, less what completed, was refused or waits here).  Tick only.
 */
static u32 blkiso_fb_inflight(const struct blkiso_tenant *t)
{
	const struct blkiso_fb *fb = t->fb;
	s64 n = (s64)(fb->prev[BLKISO_FB_ARRIVED] - fb->prev[BLKISO_FB_OPS] -
		      fb->prev[BLKISO_FB_REFUSED]) - blkiso_tenant_queued(t);

	return (u32)clamp_t(s64, n, 0, U32_MAX);
}

/* Steps 3 and 4 for one tenant; the device lock is held. */
static void blkiso_fb_tenant_tick(struct blkiso_dev *dev, struct blkiso_tenant *t,
				  u64 others_missed, u64 now, bool *wake)
{
	/* loaded once: a line may give @t its own quota meanwhile */
	struct blkiso_quota *q = blkiso_quota(t);
	struct blkiso_fb *fb = t->fb, *s = fb;
	u32 d;

	if (fb->mode_auto)
		blkiso_fb_mode_tick(dev, t);
	if (q->conf.initial == BI_INITIAL_EWMA) {
		/* S0-29: the tick's completions move initial=ewma's estimate */
		struct bi_sample smp = {
			.n = s->d[BLKISO_FB_OPS],
			.units = s->d[BLKISO_FB_RUNITS] + s->d[BLKISO_FB_WUNITS],
		};

		bi_meter_adapt_tick(&q->meter, &smp);
	}

	for (d = 0; d < BI_NR_DIRS; d++) {
		struct bi_rate_stats rs;
		bool rd = d == BI_DIR_READ;

		if (!(fb->rate_on & (1U << d)))
			continue;
		rs.completed = s->d[rd ? BLKISO_FB_ROPS : BLKISO_FB_WOPS];
		rs.units = s->d[rd ? BLKISO_FB_RUNITS : BLKISO_FB_WUNITS];
		rs.throttled = s->d[rd ? BLKISO_FB_RTHROTTLED : BLKISO_FB_WTHROTTLED];
		/* a bio still waiting for the request bucket is throttled */
		if (blkiso_nr_parked(t))
			rs.throttled++;
		rs.arrived = rs.completed + rs.throttled;
		bi_rate_tick(&fb->rate[d], &fb->rate_p[d], &rs, now);
		bi_meter_set_request_rate(&q->meter, d,
					  DIV_ROUND_CLOSEST_ULL(fb->rate[d].cap_mrps,
								BI_MRPS_PER_RPS),
					  now);
	}

	spin_lock(&fb->lock);
	if (fb->iso_on) {
		struct bi_iso_stats is = {
			.ops = s->d[BLKISO_FB_OPS],
			.units = s->d[BLKISO_FB_RUNITS] + s->d[BLKISO_FB_WUNITS],
			.dev_ns = s->d[BLKISO_FB_DEV_NS],
			.dev_min_ns = s->lat_min == U64_MAX ? 0 : s->lat_min,
		};

		is.done = bi_fb_done(&q->conf, is.ops, is.units);
		bi_iso_tick(&fb->iso, &fb->iso_p, &is,
			    bi_fb_wc_held(&dev->fb.ep, &fb->others_tick, others_missed,
					  dev->fb.ovl_p.window_ticks), now);
		if (fb->nr_slot_wait)
			*wake = true;
	}
	/*
	 * active: bios in flight count (issue 20, the slow shape: a whole 1 MiB
	 * read on a 2-slot disk of 4 ms takes 18 ms, longer than a tick, and a
	 * flood judged idle in the ticks without a completion was let go
	 * unbound and uncut), as blkiso-sim's sim_tick() has it
	 */
	fb->above = bi_fb_above_commit(&q->conf, &fb->iso, fb->rate, fb->rate_p,
				       s->d[BLKISO_FB_OPS] || blkiso_tenant_queued(t) ||
				       blkiso_fb_inflight(t));
	spin_unlock(&fb->lock);
}

/*
 * Issue 20's depth limit (ctl_depth): the tick's limit from the protected
 * tenants' misses (@ds).  Device lock held.
 */
static u32 blkiso_fb_depth_limit(struct blkiso_dev *dev, struct bi_depth_stats *ds, u64 now)
{
	lockdep_assert_held(&dev->lock);
	if (dev->conf.depth_limit)
		return bi_depth_tick(&dev->fb.depth, &dev->fb.depth_p, ds, now);
	if (dev->fb.depth.limit)
		bi_depth_init(&dev->fb.depth);
	return BI_DEPTH_OFF;
}

/*
 * Which tenants the depth limit binds: those above their commitment.  On
 * a device with the limit (@armed) their bios of more requests than the
 * lower device has slots are cut to one whether it is on or not
 * (bi_depth_cut_unbound()): sent whole while it was off, such a bio would
 * still be queueing its requests below when it comes on (the slow shape's
 * first second).  A tenant it no longer binds, or whose limit grew, has
 * its waiting bios looked at again.  Device lock held.
 */
static void blkiso_fb_depth_bind(struct blkiso_fb *fb, bool armed, u32 limit, bool *wake)
{
	bool on = limit != BI_DEPTH_OFF && fb->above, cut = armed && fb->above;

	if (on != fb->depth_on)
		WRITE_ONCE(fb->depth_on, on);
	if (cut != fb->cut_on)
		WRITE_ONCE(fb->cut_on, cut);
	if (fb->nr_slot_wait)
		*wake = true;
}

/* Would an empty tick leave request-rate controller @d of @fb as it is? */
static bool blkiso_fb_rate_at_rest(const struct blkiso_fb *fb, u32 d, u64 now)
{
	const struct bi_rate_ctl *c = &fb->rate[d];
	struct bi_rate_stats none = { 0 };
	struct bi_rate_ctl next = *c;

	bi_rate_tick(&next, &fb->rate_p[d], &none, now);
	return next.cap_mrps == c->cap_mrps && next.l_fp == c->l_fp &&
	       next.rps_fp == c->rps_fp && next.rej_ppm == c->rej_ppm &&
	       next.case_c_done == c->case_c_done;
}

/*
 * Was @t idle in this tick (nothing arrived or completed, nothing waits or
 * is in flight), and would an empty tick change none of its state?  Then
 * skipping its ticks owes it nothing (the active list, at the top).
 */
static bool blkiso_fb_at_rest(const struct blkiso_tenant *t, u64 now)
{
	const struct blkiso_fb *fb = t->fb;
	u32 d, i;

	if (fb->d[BLKISO_FB_ARRIVED] || fb->d[BLKISO_FB_OPS] || fb->victims ||
	    fb->prev[BLKISO_FB_ARRIVED] != fb->prev[BLKISO_FB_OPS] + fb->prev[BLKISO_FB_REFUSED] ||
	    blkiso_tenant_queued(t) || !list_empty(&t->park))
		return false;
	if (fb->iso_on || fb->mode_changed || fb->above)
		return false;
	for (i = 0; i < BI_OVL_TENANT_WINDOW; i++)
		if (fb->ovl.completed[i])
			return false;
	if (fb->mode_auto && (fb->mode_win.n || fb->mode_win.units || fb->mode_win.units_sq))
		return false;
	for (d = 0; d < BI_NR_DIRS; d++)
		if ((fb->rate_on & (1U << d)) && !blkiso_fb_rate_at_rest(fb, d, now))
			return false;
	return true;
}

/*
 * What one tick gathers across its walks: the device's sums (applied once,
 * after the first walk) and what it does once the walks are done.
 */
struct blkiso_tick {
	struct blkiso_fb *first, *last;	/* the active list as the tick found it */
	u64 now;
	u32 seq;
	struct bi_ovl_stats os;
	struct bi_depth_stats ds;
	bool signal, wake, switched, any_above;
};

/*
 * Step 1 for @s and its own overload window, and its part of the device's
 * sums.  No lock: the fold reads per-CPU and shared counters that .map and
 * .end_io write without the device lock anyway (it is as exact with IRQs
 * on), and what it writes (@s's d[], prev[], extremes, overload window) only
 * the tick reads; the lines it reads hold still under conf_mutex.
 */
static void blkiso_fb_tenant_fold(struct blkiso_dev *dev, struct blkiso_fb *s,
				  struct blkiso_tick *tk)
{
	struct blkiso_tenant *t = s->tenant;
	const struct bi_tenant_conf *conf = &blkiso_quota(t)->conf;
	u64 cur[BLKISO_FB_NR];
	u32 k;

	blkiso_fb_fold(t, s, tk->seq, cur, &s->lat_min, &s->lat_max);
	for (k = 0; k < BLKISO_FB_NR; k++) {
		s->d[k] = cur[k] - s->prev[k];
		s->prev[k] = cur[k];
	}
	/* the tenants' own windows first: their signal feeds the device */
	if (bi_ovl_tenant_tick(&s->ovl, &dev->fb.ovl_p, s->d[BLKISO_FB_OPS],
			       s->d[BLKISO_FB_MISSED]))
		tk->signal = true;
	if (bi_fb_depth_protected(conf, &dev->conf) &&
	    bi_depth_recent_tick(&s->depth_recent, s->d[BLKISO_FB_OPS] || blkiso_fb_inflight(t)))
		bi_fb_depth_fold(&tk->ds, conf, &s->ovl, s->d[BLKISO_FB_OPS],
				 s->d[BLKISO_FB_MISSED], s->d[BLKISO_FB_DEV_NS],
				 s->lat_min == U64_MAX ? 0 : s->lat_min, s->lat_max);
	tk->os.completed += s->d[BLKISO_FB_OPS];
	tk->os.missed += s->d[BLKISO_FB_MISSED];
	if (s->lat_max)
		tk->os.slack_min_ns = min_t(s64, tk->os.slack_min_ns,
					    (s64)s->target_ns - (s64)s->lat_max);
}

/* Steps 3-5 for @s after the device's step 2; the device lock held. */
static void blkiso_fb_tenant_step(struct blkiso_dev *dev, struct blkiso_fb *s,
				  const struct blkiso_tick_rec *rec, struct blkiso_tick *tk)
{
	struct blkiso_tenant *t = s->tenant;

	/* the other tenants' misses in this tick: whose the episode is (S3-18) */
	blkiso_fb_tenant_tick(dev, t, tk->os.missed - min(tk->os.missed, s->d[BLKISO_FB_MISSED]),
			      tk->now, &tk->wake);
	if (s->above) {
		u64 units = s->d[BLKISO_FB_RUNITS] + s->d[BLKISO_FB_WUNITS];

		tk->any_above = true;
		tk->ds.inflight_max = max(tk->ds.inflight_max, blkiso_fb_inflight(t));
		/* what the busiest bound tenant moves: the depth limit's pace starts there */
		tk->ds.bound_units_max = max(tk->ds.bound_units_max, units);
	}
	if (t->configured || s->d[BLKISO_FB_OPS] || s->victims)
		blkiso_fb_record(t, rec);
	if (s->mode_changed)
		tk->switched = true;
	if (!blkiso_fb_at_rest(t, tk->now)) {
		s->idle_ticks = 0;
	} else if (++s->idle_ticks >= BLKISO_FB_IDLE_TICKS) {
		/* a bio that came after the fold (IRQs on) found @t listed: it stays */
		if (blkiso_tenant_stat(t, BLKISO_ARRIVED) == s->prev[BLKISO_FB_ARRIVED])
			blkiso_fb_deactivate_locked(dev, t);
		else
			s->idle_ticks = 0;
	}
	s->victims = 0;
}

/* The entry after @s in the tick's walk, NULL after the last. */
static struct blkiso_fb *blkiso_fb_walk_next(const struct blkiso_tick *tk,
					     struct blkiso_fb *s)
{
	return s == tk->last ? NULL : list_next_entry(s, active_node);
}

/*
 * The tick.  Each section it holds the device lock in (IRQs off) visits at
 * most BLKISO_FB_TICK_BATCH tenants; it drops the lock and may reschedule
 * between batches.  Its walks stay valid across the gaps because, while
 * the tick holds conf_mutex, the active list only grows at its tail: .map
 * adds there (blkiso_fb_activate), and only the tick and the collector
 * remove, both under conf_mutex.  So the entries from the first to the
 * last the tick found keep their order and links (.map's additions write
 * only the last one's next, which the walk never follows), and a cursor on
 * an entry not yet visited stays on the list.  Walk 1 folds those tenants
 * with the lock not held at all (blkiso_fb_tenant_fold); the device's sums
 * span it and are applied once, with the device record, in one section;
 * walk 2 (steps 3-5, the tick's deactivations) visits the same tenants;
 * tenants that joined meanwhile are visited from the next tick on, as they
 * would be had they joined after the tick.  Walk 3 (the depth limit's
 * bindings) visits the list as it is.  The device record of tick seq is
 * written before its tenants' records (a ring reader between the batches
 * may see the one without all of the others).
 */
static void blkiso_fb_tick(struct work_struct *work)
{
	struct blkiso_dev *dev = container_of(to_delayed_work(work), struct blkiso_dev,
					      fb.tick_work);
	struct blkiso_tick tk = { .os.slack_min_ns = BI_OVL_NO_SLACK };
	struct blkiso_tick_rec *rec;
	struct blkiso_fb *s, *next;
	struct blkiso_tenant *t;
	bool flipped, gated;
	unsigned int n;
	u32 limit;
	u64 t0;

	mutex_lock(&dev->conf_mutex);	/* the tenants' lines hold still */
	if (dev->fb.all_walk)
		blkiso_fb_all_walk(dev);
	spin_lock_irq(&dev->lock);
	tk.now = ktime_get_ns();
	tk.seq = (u32)dev->fb.seq;
	if (!list_empty(&dev->fb.active)) {
		tk.first = list_first_entry(&dev->fb.active, struct blkiso_fb, active_node);
		tk.last = list_last_entry(&dev->fb.active, struct blkiso_fb, active_node);
	}
	spin_unlock_irq(&dev->lock);

	/* walk 1: steps 1-2 of each tenant, no lock */
	for (s = tk.first, n = 0; s; s = next) {
		next = blkiso_fb_walk_next(&tk, s);
		blkiso_fb_tenant_fold(dev, s, &tk);
		if (++n % BLKISO_FB_TICK_BATCH == 0)
			cond_resched();
	}

	spin_lock_irq(&dev->lock);
	t0 = blkiso_irqsoff_begin();
	/* completions from now on count towards the next tick's extremes */
	dev->fb.seq++;
	bi_ovl_tick(&dev->fb.ovl, &dev->fb.ovl_p, &tk.os, tk.signal, tk.now);
	bi_fb_episode_tick(&dev->fb.ep, &dev->fb.ovl);
	rec = &dev->fb.ring[(dev->fb.seq - 1) % BLKISO_RING_DEV];
	*rec = (struct blkiso_tick_rec){
		.seq = dev->fb.seq,
		.time_ns = tk.now,
		.completed = (u32)min_t(u64, tk.os.completed, U32_MAX),
		.missed = (u32)min_t(u64, tk.os.missed, U32_MAX),
		.miss_permille = dev->fb.ovl.miss_permille,
		.mult = dev->fb.ovl.m,
		.flags = dev->fb.ovl.overloaded ? BLKISO_TICK_OVERLOADED : 0,
		.victims = dev->fb.victims,
		.iso_mode = BLKISO_ISO_NONE,
	};
	dev->fb.victims = 0;

	/* walk 2: steps 3-5 of each tenant, BLKISO_FB_TICK_BATCH per section */
	for (s = tk.first; s; ) {
		for (n = 0; s && n < BLKISO_FB_TICK_BATCH; n++, s = next) {
			next = blkiso_fb_walk_next(&tk, s);	/* before @s may leave */
			blkiso_fb_tenant_step(dev, s, rec, &tk);
		}
		blkiso_irqsoff_done(BLKISO_IRQSOFF_TICK, t0);
		spin_unlock_irq(&dev->lock);
		cond_resched();
		spin_lock_irq(&dev->lock);
		t0 = blkiso_irqsoff_begin();
	}
	/* the device's part of step 5; it sees every tenant's step 3-4 */
	dev->fb.ovl.any_above_commit = tk.any_above;
	tk.ds.slots = READ_ONCE(dev->fb.lower_slots);
	limit = blkiso_fb_depth_limit(dev, &tk.ds, tk.now);
	flipped = dev->fb.overloaded != dev->fb.ovl.overloaded;
	WRITE_ONCE(dev->fb.overloaded, dev->fb.ovl.overloaded);
	/* victims while M > 0 (not in shed mode), shedding while overloaded */
	gated = dev->conf.overload != BI_OVERLOAD_OFF &&
		(dev->fb.ovl.m || dev->fb.ovl.overloaded);
	/* on the line every .map reads: written only when it changes */
	if (dev->fb_gated != gated)
		WRITE_ONCE(dev->fb_gated, gated);

	/* walk 3: the depth limit's bindings, the list as it is now */
	s = list_first_entry(&dev->fb.active, struct blkiso_fb, active_node);
	while (&s->active_node != &dev->fb.active) {
		for (n = 0; &s->active_node != &dev->fb.active && n < BLKISO_FB_TICK_BATCH;
		     n++, s = list_next_entry(s, active_node))
			blkiso_fb_depth_bind(s, dev->conf.depth_limit, limit, &tk.wake);
		blkiso_irqsoff_done(BLKISO_IRQSOFF_TICK, t0);
		spin_unlock_irq(&dev->lock);
		cond_resched();
		spin_lock_irq(&dev->lock);
		t0 = blkiso_irqsoff_begin();
	}
	if (tk.wake)
		queue_work(dev->wq, &dev->dispatch_work);
	blkiso_irqsoff_done(BLKISO_IRQSOFF_TICK, t0);
	spin_unlock_irq(&dev->lock);
	/*
	 * No RCU section: a switch may wait for a grace period
	 * (blkiso_meter_configure); conf_mutex keeps every listed tenant
	 * listed (the collector unlists under it), .map only adds.  Only in
	 * a tick where a selector switched (rare): a walk over all tenants,
	 * IRQs on.
	 */
	if (tk.switched)
		list_for_each_entry_rcu(t, &dev->tenant_list, list,
					lockdep_is_held(&dev->conf_mutex))
			if (t->fb && t->fb->mode_changed)
				blkiso_fb_mode_switch(t);
	mutex_unlock(&dev->conf_mutex);
	/* S2-06: pollers of the "overloaded" attribute wake on a change */
	if (flipped && READ_ONCE(dev->in_sysfs))
		sysfs_notify(&dev->kobj, NULL, "overloaded");
	blkiso_fb_requeue(dev);
}

void blkiso_fb_dev_start(struct blkiso_dev *dev)
{
	dev->fb.due = jiffies;
	blkiso_fb_requeue(dev);
}

void blkiso_fb_dev_stop(struct blkiso_dev *dev)
{
	cancel_delayed_work_sync(&dev->fb.tick_work);
}

/*
 * The last ticks of @dev (@t NULL) or of @t, oldest first, into @recs.
 * Returns the number written.  Takes the device lock.
 */
int blkiso_fb_ring(struct blkiso_dev *dev, struct blkiso_tenant *t,
		   struct blkiso_tick_rec *recs, unsigned int capacity)
{
	unsigned int size = t ? BLKISO_RING_TENANT : BLKISO_RING_DEV, n, i;
	const struct blkiso_fb *fb = t ? blkiso_fb(t) : NULL;
	const struct blkiso_tick_rec *ring = fb ? fb->ring : dev->fb.ring;
	u64 written;

	if (t && !fb)
		return 0;	/* no feedback state: no tick recorded it */
	spin_lock_irq(&dev->lock);
	written = t ? fb->ring_n : dev->fb.seq;
	n = min3((u64)size, written, (u64)capacity);
	for (i = 0; i < n; i++)
		recs[i] = ring[(written - n + i) % size];
	spin_unlock_irq(&dev->lock);
	return n;
}

static int blkiso_fb_ring_line(char *buf, size_t size, const struct blkiso_tick_rec *r,
			       bool tenant)
{
	int len = scnprintf(buf, size, "%llu %llu %u %u %u %u %u %u",
			    r->seq, div_u64(r->time_ns, NSEC_PER_USEC), r->completed,
			    r->missed, r->miss_permille, r->mult, r->flags, r->victims);

	if (tenant)
		len += scnprintf(buf + len, size - len, " %llu %u %u %llu %u %llu %llu",
				 r->usage, r->slots, r->inflight,
				 div_u64(r->delay_ns, NSEC_PER_USEC), r->iso_mode,
				 r->rcap_mrps, r->wcap_mrps);
	len += scnprintf(buf + len, size - len, "\n");
	return len;
}

#define BLKISO_RING_LINE_MAX	192

/*
 * sysfs "ring": a header line, then one line per tick, oldest first; as
 * many of the newest as fit the page (all of them with realistic numbers;
 * BLKISO_IOC_RING always returns all).
 */
ssize_t blkiso_fb_ring_show(struct blkiso_dev *dev, struct blkiso_tenant *t, char *buf)
{
	struct blkiso_tick_rec *recs;
	char *lines;
	int n, i, first, len, used;
	int *lens;

	recs = kmalloc_array(BLKISO_RING_DEV, sizeof(*recs) + BLKISO_RING_LINE_MAX +
			     sizeof(int), GFP_KERNEL);
	if (!recs)
		return -ENOMEM;
	lines = (char *)(recs + BLKISO_RING_DEV);
	lens = (int *)(lines + BLKISO_RING_DEV * BLKISO_RING_LINE_MAX);
	n = blkiso_fb_ring(dev, t, recs, BLKISO_RING_DEV);
	if (t)
		len = sysfs_emit(buf, "seq time_us completed missed miss_pm mult flags victims usage slots inflight delay_us mode rcap_mrps wcap_mrps\n");
	else
		len = sysfs_emit(buf, "seq time_us completed missed miss_pm mult flags victims\n");
	/*
	 * The newest lines that fit, oldest of them first.  A page of
	 * formatted lines is a few hundred microseconds of a slow CPU, and
	 * anyone may read it: let a waiting task run between lines (a
	 * kernel without preemption would otherwise hold it off that long).
	 */
	used = len;
	for (first = n; first > 0; first--) {
		i = first - 1;
		lens[i] = blkiso_fb_ring_line(lines + i * BLKISO_RING_LINE_MAX,
					      BLKISO_RING_LINE_MAX, &recs[i], t);
		if (used + lens[i] >= PAGE_SIZE)
			break;
		used += lens[i];
		cond_resched();
	}
	for (i = first; i < n; i++)
		len += sysfs_emit_at(buf, len, "%s", lines + i * BLKISO_RING_LINE_MAX);
	kfree(recs);
	return len;
}
