// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_depth.c - the depth limit on tenants above their commitment while a
 * protected tenant misses (issue 20).
 *
 * One job: once per tick, move the device's limit on the bios in flight of
 * each tenant above its commitment, and its pace, from whether a protected
 * tenant missed its latency target in the tick.  See ctl_depth.h for the
 * rules.
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

/* The bound tenants' throughput starts again: the limit or the pace moved. */
static void bi_depth_tput_reset(struct bi_depth *d)
{
	d->tput_units = 0;
	d->tput_ns = 0;
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
	d->pace_ups = 0;
	d->pace_floor_ups = 0;
	d->pace_shift = 0;
	d->pace_missed = 0;
	d->pace_chunk = 0;
	d->below_ups = 0;
	bi_depth_tput_reset(d);
	d->tick_ns = 0;
	d->paced = 0;
}

static u32 bi_depth_stop(struct bi_depth *d)
{
	u64 episodes = d->episodes, held = d->held, paced = d->paced;

	bi_depth_init(d);
	d->episodes = episodes;
	d->held = held;
	d->paced = paced;
	return BI_DEPTH_OFF;
}

/*
 * Fold a tick into the throughput: what the busiest bound tenant
 * completed, over the tick's length.  The busiest, not their mean: the
 * pace spaces each tenant's bios, so it binds the one nearest it, and a
 * small bound tenant (a protected one above its own allocation) beside a
 * flood would halve a mean, start a pace under what the flood moved and
 * make a pace that holds the flood look unbinding.
 */
static void bi_depth_tput_add(struct bi_depth *d, const struct bi_depth_stats *s, u64 now_ns)
{
	if (d->tick_ns && now_ns > d->tick_ns) {
		d->tput_ns += now_ns - d->tick_ns;
		d->tput_units += s->bound_units_max;
	}
	d->tick_ns = now_ns;
}

/* A bound tenant's units a second at this limit and pace, 0 = not measured yet */
static u64 bi_depth_tput(const struct bi_depth *d)
{
	if (d->tput_ns < BI_DEPTH_TPUT_MIN_NS)
		return 0;
	return bi_mul_div_u64(d->tput_units, BI_NSEC_PER_SEC, d->tput_ns);
}

/*
 * Go to @depth with a pace of @ups, where a bound tenant moved at the
 * depth below (ctl_depth.h, "Pace").
 */
static void bi_depth_pace_start(struct bi_depth *d, u32 depth, u64 ups)
{
	d->limit = depth;
	d->pace_ups = ups;
	d->pace_floor_ups = ups;
	d->pace_shift = 0;
	d->pace_missed = 0;
	d->pace_chunk = 0;
	d->ceiling = 0;
	d->probed = 0;
	d->raised = false;
	d->settle = 1;
	d->paced++;
	bi_depth_tput_reset(d);
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

	if (over_permille > BI_DEPTH_QUEUE_PERMILLE)
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

/*
 * The depth the limit is at missed where the one below held: hover one
 * under it, that depth the ceiling (tried again after probe_ns).
 */
static void bi_depth_hover_under(struct bi_depth *d, u64 now_ns)
{
	d->ceiling = d->limit;
	d->ceiling_ns = now_ns;
	d->limit = (u32)bi_max_u64(1, d->limit - 1);
	d->settle = 1;
}

/*
 * The misses under a pace are over what the evidence allows: slow it by
 * an eighth and ask twice the evidence before the next raise; at the pace
 * it started at, the depth itself misses: back to the one below, without
 * a pace.
 */
static void bi_depth_pace_slow(struct bi_depth *d, u64 now_ns)
{
	bi_depth_evidence_reset(d);
	d->pace_missed = 0;
	d->pace_chunk = 0;
	bi_depth_tput_reset(d);
	d->settle = 1;
	if (d->pace_ups <= d->pace_floor_ups) {
		if (d->probe_shift < BI_DEPTH_PROBE_SHIFT_MAX)
			d->probe_shift++;
		bi_depth_hover_under(d, now_ns);
		d->pace_ups = 0;
		return;
	}
	d->pace_ups = bi_max_u64(d->pace_floor_ups,
				 d->pace_ups - (d->pace_ups >> BI_DEPTH_PACE_CUT_SHIFT));
	if (d->pace_shift < BI_DEPTH_PACE_SHIFT_MAX)
		d->pace_shift++;
}

/*
 * A tick under a pace (ctl_depth.h, "Pace"): the protected tenants'
 * misses counted against what the evidence allows; once the evidence
 * (times its backoff) is in within it, faster while the bound tenants move
 * at the pace, and a pace they stay well under no longer binds and goes.
 */
static void bi_depth_pace_tick(struct bi_depth *d, const struct bi_depth_params *p,
			       const struct bi_depth_stats *s, u64 now_ns)
{
	u64 need = (u64)s->evidence << d->pace_shift, allowed, tput;

	if (d->settle) {
		/* the tick after a step: its bios were sent before it */
		d->settle--;
		return;
	}
	if (!s->completed)
		return;
	bi_depth_evidence_add(d, s);
	d->pace_missed = (u32)bi_min_u64((u64)d->pace_missed + s->missed_ops, U32_MAX);
	d->pace_chunk = (u32)bi_min_u64((u64)d->pace_chunk + s->completed, U32_MAX);
	/* permille, and a share of it (ctl_depth.h, "Pace") */
	allowed = bi_div_u64((u64)s->evidence * s->allow_permille, 1000 * BI_DEPTH_PACE_ALLOW_DIV);
	if ((s->missed && s->over_permille > BI_DEPTH_QUEUE_PERMILLE) || d->pace_missed > allowed) {
		bi_depth_pace_slow(d, now_ns);
		return;
	}
	if (d->pace_chunk >= s->evidence) {
		/* a run of evidence-many bios within it: the next run counts alone */
		d->pace_chunk = 0;
		d->pace_missed = 0;
	}
	if (d->clean_ticks < p->release_ticks || d->clean_ops < need ||
	    d->tput_ns < BI_DEPTH_TPUT_MIN_NS)
		return;
	tput = bi_depth_tput(d);
	bi_depth_evidence_reset(d);
	bi_depth_tput_reset(d);
	if (tput * 100 < d->pace_ups * BI_DEPTH_PACE_BINDS_PCT) {
		/*
		 * Gone, as a raise: a miss now comes back to a pace, at
		 * what they moved under this one.
		 */
		d->pace_ups = 0;
		d->below_ups = tput;
		d->raised = true;
		return;
	}
	d->pace_ups += d->pace_ups >> (d->pace_shift ? BI_DEPTH_PACE_RAISE_SHIFT :
						       BI_DEPTH_PACE_RAMP_SHIFT);
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
		if (d->below_ups >= BI_DEPTH_PACE_MIN_UPS) {
			/* one bio of depth is too far: the same, paced */
			bi_depth_pace_start(d, d->limit, d->below_ups);
			return;
		}
		/* the last raise went one too far: hover just under it */
		if (d->limit == d->probed && d->probe_shift < BI_DEPTH_PROBE_SHIFT_MAX)
			d->probe_shift++;
		bi_depth_hover_under(d, now_ns);
		d->raised = false;
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
	bi_depth_tput_reset(d);
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
	if (d->limit != BI_DEPTH_OFF)
		bi_depth_tput_add(d, s, now_ns);
	if (d->limit != BI_DEPTH_OFF && d->pace_ups) {
		bi_depth_pace_tick(d, p, s, now_ns);
		return d->limit;
	}
	if (s->missed) {
		bi_depth_missed(d, s, now_ns);
		d->tick_ns = now_ns;
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
	d->below_ups = bi_depth_tput(d);	/* where a pace would start */
	bi_depth_tput_reset(d);
	d->limit++;
	d->raised = true;
	return d->limit;
}

/*
 * How a read or write of @sectors at @sector of a tenant the limit binds
 * enters: whole when the lower queue takes it as one request, else cut to
 * its first request (*@piece sectors: at most max_sectors, ending at the
 * next chunk boundary, whole logical blocks).  A REQ_NOWAIT bio's piece
 * loses the flag and its rest is known by the caller (blkiso_cut.c).
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
