// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_depth.c - the depth limit on tenants above their commitment while a
 * protected tenant misses (issue 20).
 *
 * One job: once per tick, move the device's limit on the bios in flight of
 * each tenant above its commitment from whether a protected tenant missed
 * its latency target in the tick.  See ctl_depth.h for the rules.
 */
#include "ctl_depth.h"

/* Concurrency: any context; @p is owned by the caller. */
void bi_depth_params_init(struct bi_depth_params *p)
{
	p->release_ticks = BI_DEPTH_RELEASE_TICKS_DEF;
	p->probe_ns = BI_DEPTH_PROBE_NS_DEF;
}

/*
 * One tick of a protected tenant: did it have I/O (@io: a completion in
 * the tick or a bio in flight at it)?  Returns whether it counts as
 * active for the depth limit: while it has I/O, and after for twice the
 * longest of its recent quiet stretches between bios (the stretch is
 * remembered as a max decaying by a quarter per stretch), at least
 * BI_DEPTH_QUIET_MIN ticks.  A stretch longer than BI_DEPTH_QUIET_MAX is
 * an idle tenant starting again, not a gap between its bios.
 * Concurrency: the tick's; @r is the tenant's.
 */
bool bi_depth_recent_tick(struct bi_depth_recent *r, bool io)
{
	if (io) {
		if (r->quiet)
			r->gap = r->quiet > BI_DEPTH_QUIET_MAX ? 0 :
				 (u32)bi_max_u64(r->quiet, r->gap - r->gap / 4);
		r->quiet = 0;
		return true;
	}
	if (r->quiet <= BI_DEPTH_QUIET_MAX)
		r->quiet++;
	return r->quiet <= BI_DEPTH_QUIET_MAX &&
	       r->quiet <= bi_max_u64(2 * (u64)r->gap, BI_DEPTH_QUIET_MIN);
}

/* Concurrency: under the caller's tick serialisation (device lock). */
void bi_depth_init(struct bi_depth *d)
{
	d->limit = BI_DEPTH_OFF;
	d->ceiling = 0;
	d->clean_ticks = 0;
	d->clean_ops = 0;
	d->ceiling_ns = 0;
	d->loose_ns = 0;
	d->probe_shift = 0;
	d->probed = 0;
	d->settle = 0;
	d->worst_permille = 0;
	d->best_permille = 0;
	d->raised = false;
	d->loose = false;
	d->episodes = 0;
	d->held = 0;
}

static u32 bi_depth_stop(struct bi_depth *d)
{
	u64 episodes = d->episodes, held = d->held;

	bi_depth_init(d);
	d->episodes = episodes;
	d->held = held;
	return BI_DEPTH_OFF;
}

/* The evidence starts again: after a miss, a raise, or a raise held back. */
static void bi_depth_evidence_reset(struct bi_depth *d)
{
	d->clean_ticks = 0;
	d->clean_ops = 0;
	d->worst_permille = 0;
	d->best_permille = 0;
}

/* Fold a clean tick's protected latencies into the evidence. */
static void bi_depth_evidence_add(struct bi_depth *d, const struct bi_depth_stats *s)
{
	d->clean_ticks++;
	d->clean_ops = (u32)bi_min_u64((u64)d->clean_ops + s->completed, U32_MAX);
	if (s->lat_max_permille > d->worst_permille)
		d->worst_permille = s->lat_max_permille;
	if (s->lat_min_permille &&
	    (!d->best_permille || s->lat_min_permille < d->best_permille))
		d->best_permille = s->lat_min_permille;
}

/*
 * Would one more bio of depth keep the protected tenants' highest latency
 * within their targets?  Predicted: W + (W - B) / limit (ctl_depth.h,
 * "Headroom").  No latencies folded: no prediction, room.
 */
static bool bi_depth_headroom(const struct bi_depth *d)
{
	u64 w = d->worst_permille, b = d->best_permille, step;

	if (!w)
		return true;
	step = b && b < w ? bi_div_u64(w - b, d->limit ? d->limit : 1) : 0;
	return w + step <= 1000;	/* the target, in permille of itself */
}

/*
 * Halve @depth, or cut it to the share of the queue the protected tenant
 * can wait behind: depth x target / latency, when that is smaller.
 */
static u32 bi_depth_cut(u32 depth, u32 over_permille)
{
	u64 cut = depth / 2;

	if (over_permille > 2000)
		cut = bi_min_u64(cut, bi_div_u64((u64)depth * 1000, over_permille));
	return (u32)bi_max_u64(1, cut);
}

/*
 * The highest limit: one below the lower device's slots, so that a bound
 * flood never holds them all (ctl_depth.h); no bound when they are not
 * known, and 1 (the floor) on a one-slot device.
 */
static u32 bi_depth_top(const struct bi_depth_stats *s)
{
	return s->slots ? (u32)bi_max_u64(1, s->slots - 1) : U32_MAX;
}

/* A miss at the current limit: step under it. */
static void bi_depth_missed(struct bi_depth *d, const struct bi_depth_stats *s,
			    u64 now_ns)
{
	bi_depth_evidence_reset(d);
	d->loose = false;
	if (d->limit == BI_DEPTH_OFF) {
		/* the episode starts from what the floods have in the device */
		d->limit = (u32)bi_min_u64(bi_depth_cut(s->inflight_max, s->over_permille),
					   bi_depth_top(s));
		d->ceiling = 0;
		d->raised = false;
		d->settle = 1;
		d->episodes++;
		return;
	}
	if (d->raised) {
		/* the last raise went one too far: hover just under it */
		if (d->limit == d->probed && d->probe_shift < BI_DEPTH_PROBE_SHIFT_MAX)
			d->probe_shift++;
		d->ceiling = d->limit;
		d->ceiling_ns = now_ns;
		d->limit = (u32)bi_max_u64(1, d->limit - 1);
		d->raised = false;
		d->settle = 1;
		return;
	}
	/*
	 * Misses of bios sent before the last step (they complete a tick
	 * later), or while bios sent before the limit still drain, say
	 * nothing of the limit: wait for them.
	 */
	if (d->settle) {
		d->settle--;
		return;
	}
	if (s->inflight_max > d->limit || d->limit == 1)
		return;
	d->ceiling = d->limit;
	d->ceiling_ns = now_ns;
	d->probe_shift = 0;
	d->limit = bi_depth_cut(d->limit, s->over_permille);
	d->settle = 1;
}

/*
 * One tick: returns the limit for the next tick (0 = none).
 * Concurrency: the tick (device tick serialisation); @d is the device's.
 */
u32 bi_depth_tick(struct bi_depth *d, const struct bi_depth_params *p,
		  const struct bi_depth_stats *s, u64 now_ns)
{
	if (!s->protected_active)
		return d->limit ? bi_depth_stop(d) : BI_DEPTH_OFF;
	if (s->missed) {
		bi_depth_missed(d, s, now_ns);
		return d->limit;
	}
	if (d->limit == BI_DEPTH_OFF || !s->completed)
		return d->limit;
	d->settle = 0;
	bi_depth_evidence_add(d, s);
	if (s->inflight_max < d->limit / 2) {
		/*
		 * Nobody comes near the limit (a sample at the tick: a flood at
		 * it may show one or two below): raising proves nothing; let
		 * go in time.
		 */
		if (!d->loose) {
			d->loose = true;
			d->loose_ns = now_ns;
		}
		if (now_ns - d->loose_ns >= p->probe_ns)
			return bi_depth_stop(d);
		return d->limit;
	}
	d->loose = false;
	if (d->limit >= bi_depth_top(s)) {
		/* every slot but one: as high as it goes (or the device changed) */
		d->limit = bi_depth_top(s);
		return d->limit;
	}
	if (d->clean_ticks < p->release_ticks || d->clean_ops < s->evidence)
		return d->limit;
	if (!bi_depth_headroom(d)) {
		/* the limit is where the targets hold: stay, look again */
		bi_depth_evidence_reset(d);
		d->held++;
		return d->limit;
	}
	bi_depth_evidence_reset(d);
	if (d->ceiling && d->limit + 1 >= d->ceiling) {
		if (now_ns - d->ceiling_ns < p->probe_ns << d->probe_shift)
			return d->limit;	/* hover under the depth that missed */
		d->probed = d->ceiling;		/* try it again */
		d->ceiling = 0;
	} else if (d->limit + 1 > d->probed) {
		d->probed = 0;			/* past the old ceiling: it held */
		d->probe_shift = 0;
	}
	d->limit++;
	d->raised = true;
	return d->limit;
}

/*
 * How a read or write of @sectors at @sector of a tenant the limit binds
 * enters: whole when the lower queue takes it as one request, else cut to
 * its first request (*@piece sectors: at most max_sectors, ending at the
 * next chunk boundary, whole logical blocks).  A REQ_NOWAIT bio's piece
 * loses the flag and its rest is known by the caller (blkiso_target.c).
 * Concurrency: any context.
 */
enum bi_depth_cut bi_depth_piece(u64 sector, u32 sectors, const struct bi_depth_lower *q,
				 u32 *piece)
{
	u64 first = q->max_sectors;

	if (q->chunk_sectors)
		first = bi_min_u64(first, q->chunk_sectors - sector % q->chunk_sectors);
	if (q->block_sectors > 1)
		first -= first % q->block_sectors;
	if (!first || sectors <= first)
		return BI_DEPTH_WHOLE;
	*piece = (u32)first;
	return BI_DEPTH_CUT;
}
