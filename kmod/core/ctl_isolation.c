// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_isolation.c - per-tenant slot limit and delay injection (seed 003).
 *
 * One job: keep a tenant's usage of a device at its allocation by moving
 * its in-flight slot limit n and a dispatch delay, once per evaluation, and
 * hand out slots and delays to its bios in between.  See ctl_isolation.h
 * for the state machine and scales, doc/controllers.md for the
 * reconstructed formulas.
 */
#include "ctl_isolation.h"
#include "ewma.h"

#define BI_ISO_TICK_NS_DEF	(100 * BI_NSEC_PER_MSEC)
#define BI_ISO_PERMILLE		1000
#define BI_ISO_FLIPS_MAX	255

/*
 * Defaults of catalogue A-32 for allocation @alloc (metric/s).
 * Concurrency: any context; @p is owned by the caller.
 */
void bi_iso_params_init(struct bi_iso_params *p, u64 alloc)
{
	p->alloc = alloc;
	p->delay_step_ns = BI_ISO_DELAY_STEP_NS_DEF;
	p->delay_max_ns = 0;
	p->hover_ns = BI_ISO_HOVER_NS_DEF;
	p->small_delay_ns = BI_ISO_SMALL_DELAY_NS_DEF;
	p->tick_ns = BI_ISO_TICK_NS_DEF;
	p->alpha_fp = BI_ISO_ALPHA_FP_DEF;
	p->tol_permille = BI_ISO_TOL_PERMILLE_DEF;
	p->n_max = BI_ISO_N_MAX_DEF;
	p->eval_ticks = BI_ISO_EVAL_TICKS_DEF;
	p->abuse_permille = BI_ISO_ABUSE_PERMILLE_DEF;
	p->horizon_ticks = BI_ISO_HORIZON_TICKS_DEF;
	p->window_bios = BI_ISO_WINDOW_BIOS_DEF;
	p->delay_mode = BI_ISO_SPREAD;
	p->strict = true;
	p->predict_underuse = true;
	p->reduce_below_alloc = false;
	p->predictive = false;
	p->metric_units = false;
}

static u32 bi_iso_n_max(const struct bi_iso_params *p)
{
	return (u32)bi_max_u64(1, bi_min_u64(p->n_max, BI_ISO_MAX_SLOTS));
}

/*
 * Concurrency: before the tenant is published; no lock needed.
 */
void bi_iso_init(struct bi_iso *t, const struct bi_iso_params *p)
{
	t->usage = 0;
	t->usage_win = 0;
	t->win_band = 0;
	t->win_alpha_fp = p->alpha_fp;
	t->slope = 0;
	t->r_pt = 0;
	t->lat_ns = 0;
	t->floor_ns = 0;
	t->delay_ns = 0;
	t->debt_ns = 0;
	t->pace_ns = 0;
	t->pace_units = 0;
	t->lat_last_ns = 0;
	t->units_fp = BI_FP_ONE;
	t->slot_busy = 0;
	t->last_ns = 0;
	t->out_since_ns = 0;
	t->last_flip_ns = 0;
	t->prev_usage = 0;
	t->slot_changes = 0;
	t->n = bi_iso_n_max(p);
	t->prev_n = t->n;
	t->inflight = 0;
	t->big_inflight = 0;
	t->refused = 0;
	t->ticks = 0;
	t->mode = p->strict ? BI_ISO_SLOTS : BI_ISO_RELAXED;
	t->last_sign = 0;
	t->flips = 0;
	t->slot_limited = false;
	t->ramp = 0;
}

/* S3-06 approach 1: usage per running slot.  Concurrency: pure function. */
u64 bi_iso_rpt_avg(u64 usage, u32 n)
{
	return n ? bi_div_u64(usage, n) : 0;
}

/*
 * S3-06 approach 2: the marginal usage of one slot, from the last change.
 * Concurrency: pure function.
 */
u64 bi_iso_rpt_marginal(u64 r_before, u64 r_after, u32 n_before, u32 n_after)
{
	u64 dr = r_before > r_after ? r_before - r_after : r_after - r_before;
	u32 dn = n_before > n_after ? n_before - n_after : n_after - n_before;

	return dn ? bi_div_u64(dr, dn) : 0;
}

/*
 * A-29 [RECONSTRUCTED]: n_target = n - (r - target) / r_pt, as a BI_FP_ONE
 * fixed-point count (7.5 slots = 7680), never below zero.
 * Concurrency: pure function.
 */
u64 bi_iso_n_target_fp(u32 n, u64 usage, u64 target, u64 r_pt)
{
	s64 nt = (s64)n << BI_FP_SHIFT;
	u64 diff;

	if (!r_pt)
		return (u64)nt;
	if (usage >= target) {
		diff = bi_mul_div_u64(usage - target, BI_FP_ONE, r_pt);
		nt = diff >= (u64)nt ? 0 : nt - (s64)diff;
	} else {
		nt += (s64)bi_mul_div_u64(target - usage, BI_FP_ONE, r_pt);
	}
	return (u64)nt;
}

/*
 * S3-07: the delay that brings n slots of r_pt each down to @alloc.
 * Spread: n / (L + delta) = alloc.  Single: (n - 1) / L + 1 / (L + delta)
 * = alloc.  Returns U64_MAX when one delayed slot cannot do it (the caller
 * then removes a slot, as the seed says), 0 when no delay is needed.
 * Concurrency: pure function.
 */
u64 bi_iso_compute_delay_ns(u8 delay_mode, u32 n, u64 alloc, u64 r_pt)
{
	u64 slot_ns, want_ns, rest;

	if (!alloc || !r_pt || !n)
		return 0;
	slot_ns = bi_div_u64(BI_NSEC_PER_SEC, r_pt);	/* 1 / r_pt */
	if (delay_mode == BI_ISO_SINGLE) {
		if ((u64)(n - 1) * r_pt >= alloc)
			return U64_MAX;
		rest = alloc - (u64)(n - 1) * r_pt;
		want_ns = bi_div_u64(BI_NSEC_PER_SEC, rest);
	} else {
		want_ns = bi_mul_div_u64(n, BI_NSEC_PER_SEC, alloc);
	}
	return want_ns > slot_ns ? want_ns - slot_ns : 0;
}

/*
 * bi_iso_compute_delay_ns() for this tenant: the formula counts in the
 * allocation's metric, one per bio for iops; with work units a slot's
 * cycle carries a mean bio's units, so the delay is that many times longer.
 */
static u64 bi_iso_delay_for(const struct bi_iso *t, const struct bi_iso_params *p,
			    u8 delay_mode, u32 n)
{
	u64 d = bi_iso_compute_delay_ns(delay_mode, n, p->alloc, t->r_pt);

	if (!p->metric_units || d == U64_MAX || t->units_fp <= BI_FP_ONE)
		return d;
	return bi_mul_div_u64(d, t->units_fp, BI_FP_ONE);
}

/*
 * The service time of one mean bio on one slot, 1 / r_pt in the metric of
 * bi_iso_delay_for(): the part of a slot's cycle that is not delay.  0 =
 * not measured yet.
 */
static u64 bi_iso_svc_ns(const struct bi_iso *t, const struct bi_iso_params *p)
{
	u64 svc;

	if (!t->r_pt)
		return 0;
	svc = bi_div_u64(BI_NSEC_PER_SEC, t->r_pt);
	if (p->metric_units && t->units_fp > BI_FP_ONE)
		svc = bi_mul_div_u64(svc, t->units_fp, BI_FP_ONE);
	return svc;
}

/* Spread delays are paced once the service time is known (slot_get). */
static bool bi_iso_paced(const struct bi_iso *t, const struct bi_iso_params *p)
{
	return p->delay_mode == BI_ISO_SPREAD && t->r_pt;
}

/*
 * Slots that carry the allocation at device latency @lat_ns: alloc x lat
 * in bios (a bio carries a mean bio's units with work units), rounded up
 * (an exact product gets one more: a slot of headroom either way).
 */
static u32 bi_iso_slots_for(const struct bi_iso *t, const struct bi_iso_params *p,
			    u64 lat_ns)
{
	u64 per = BI_NSEC_PER_SEC;

	if (p->metric_units && t->units_fp > BI_FP_ONE)
		per = bi_mul_div_u64(per, t->units_fp, BI_FP_ONE);
	return (u32)bi_min_u64(bi_mul_div_u64(p->alloc, lat_ns, per) + 1, BI_ISO_MAX_SLOTS);
}

/*
 * A-32's automatic maximum: twice the device latency, at most 50 ms; but
 * never less than the delay one slot's cycle at the allocation needs (up
 * to 1 s): on a fast device 2x the latency is microseconds, and a strict
 * allocation far below the device's speed (a few 1 MiB reads a second)
 * could not be held even with one slot (deviation).
 */
static u64 bi_iso_delay_max(const struct bi_iso *t, const struct bi_iso_params *p)
{
	u64 need, dflt;

	if (p->delay_max_ns)
		return p->delay_max_ns;
	dflt = t->lat_ns ? bi_min_u64(2 * t->lat_ns, BI_ISO_DELAY_CAP_NS) : BI_ISO_DELAY_CAP_NS;
	need = bi_iso_delay_for(t, p, BI_ISO_SPREAD, 1);
	if (need == U64_MAX)
		return dflt;
	return bi_max_u64(dflt, bi_min_u64(need, BI_ISO_SLOT_DELAY_CAP_NS));
}

/*
 * After a change of n or delta the smoothed usage would lag the new state
 * for seconds and drive further, wrong, changes.  Reset it to what the new
 * state delivers: exactly @pred for a tenant that fills its slots, at most
 * @pred for one that does not.
 */
static void bi_iso_model_reset(struct bi_iso *t, u64 pred)
{
	if (!t->r_pt)
		return;
	t->usage = t->slot_limited ? pred : bi_min_u64(t->usage, pred);
	t->slope = 0;
}

static void bi_iso_set_n(struct bi_iso *t, u32 n, u64 now_ns)
{
	(void)now_ns;
	if (n == t->n)
		return;
	t->prev_n = t->n;
	t->prev_usage = t->usage;
	t->n = n;
	t->slot_changes++;
	t->ramp = 1;
	bi_iso_model_reset(t, (u64)n * t->r_pt);
}

/* Enter DELAY at @n slots with the computed delta (S3-05, S3-08). */
static void bi_iso_enter_delay(struct bi_iso *t, const struct bi_iso_params *p,
			       u32 n, u64 now_ns)
{
	u64 d = bi_iso_delay_for(t, p, p->delay_mode, n);

	/* single mode: more than one slot would need a delay; drop one */
	while (d == U64_MAX && n > 1) {
		n--;
		d = bi_iso_delay_for(t, p, p->delay_mode, n);
	}
	if (d == U64_MAX)
		d = 0;
	bi_iso_set_n(t, n, now_ns);	/* a ramp begins (t->ramp) */
	t->delay_ns = bi_min_u64(d, bi_iso_delay_max(t, p));
	t->mode = BI_ISO_DELAY;
	t->flips = 0;
	t->last_sign = 0;
	if (t->delay_ns)
		bi_iso_model_reset(t, p->alloc);
}

/* The band around the allocation: alloc -+ tol_permille. */
static void bi_iso_band(const struct bi_iso_params *p, u64 *hi, u64 *lo)
{
	*hi = bi_div_u64(p->alloc * (BI_ISO_PERMILLE + p->tol_permille), BI_ISO_PERMILLE);
	*lo = bi_div_u64(p->alloc * (BI_ISO_PERMILLE - bi_min_u64(p->tol_permille,
								 BI_ISO_PERMILLE)),
			 BI_ISO_PERMILLE);
}

/*
 * Above the band (@hi) by the usage, and above its own band by the
 * windowed usage (bi_iso_window()): only then is a tenant over its
 * allocation, and only then does it lose slots or gain delay.  A tenant
 * below its allocation over a window of many bios that catches up after
 * a wait is not.
 */
static bool bi_iso_above(const struct bi_iso *t, const struct bi_iso_params *p, u64 hi)
{
	return t->usage > hi && t->usage_win > p->alloc + t->win_band;
}

/* S3-08: track crossings of the band; true once it has hovered hover_ns. */
static bool bi_iso_hovering(struct bi_iso *t, const struct bi_iso_params *p,
			    s8 sign, u64 now_ns)
{
	if (t->flips && now_ns - t->last_flip_ns > p->hover_ns) {
		t->flips = 0;		/* the episode ended quietly */
		t->last_sign = 0;
	}
	if (!sign)
		return false;
	if (!t->last_sign) {
		t->out_since_ns = now_ns;
	} else if (sign != t->last_sign) {
		if (t->flips < BI_ISO_FLIPS_MAX)
			t->flips++;
		t->last_flip_ns = now_ns;
	}
	t->last_sign = sign;
	return t->flips >= 2 && now_ns - t->out_since_ns >= p->hover_ns;
}

/* Predicted crossing of the allocation within the horizon (S3-14). */
static bool bi_iso_crossing_ahead(const struct bi_iso *t,
				  const struct bi_iso_params *p)
{
	s64 ahead;

	if (!p->predictive || t->slope <= 0)
		return false;
	ahead = (s64)t->usage + t->slope * (s64)p->horizon_ticks;
	return ahead >= (s64)p->alloc;
}

static void bi_iso_eval_slots(struct bi_iso *t, const struct bi_iso_params *p,
			      u64 hi, u64 lo, u64 now_ns)
{
	u32 nmax = bi_iso_n_max(p);
	s8 sign = bi_iso_above(t, p, hi) ? 1 : t->usage < lo ? -1 : 0;
	u32 n_hi;
	u64 nt;

	if (bi_iso_hovering(t, p, sign, now_ns)) {
		bi_iso_enter_delay(t, p, bi_max_u64(t->n, t->prev_n), now_ns);
		return;
	}
	if (sign > 0) {
		if (!p->predict_underuse || p->reduce_below_alloc || !t->r_pt) {
			/* S3-04: one slot at a time */
			bi_iso_set_n(t, t->n > 1 ? t->n - 1 : 1, now_ns);
			return;
		}
		/*
		 * r_pt is usage per *busy* slot (device time), so the slots
		 * in use are usage / r_pt and S3-06's n_target = n_used -
		 * (usage - alloc) / r_pt is alloc / r_pt: exact, and free of
		 * the lag of the smoothed usage after a change in demand.
		 */
		nt = bi_iso_n_target_fp(0, 0, p->alloc, t->r_pt);
		n_hi = (u32)bi_div_round_up_u64(nt, BI_FP_ONE);
		n_hi = (u32)bi_max_u64(1, bi_min_u64(n_hi, t->n));
		if ((u64)n_hi * t->r_pt > hi)
			bi_iso_enter_delay(t, p, n_hi, now_ns);	/* S3-05 remedy 1 */
		else
			bi_iso_set_n(t, n_hi < t->n ? n_hi : (u32)bi_max_u64(t->n - 1, 1),
				     now_ns);
		return;
	}
	if (bi_iso_crossing_ahead(t, p) && t->r_pt) {
		/* S3-14: level off before the crossing; fewer slots if enough */
		u32 need = (u32)bi_div_round_up_u64(p->alloc, t->r_pt);

		bi_iso_enter_delay(t, p, bi_max_u64(1, bi_min_u64(need, t->n)), now_ns);
		return;
	}
	if (sign == 0 && t->slot_limited && t->r_pt) {
		/*
		 * S3-06 approach 1 sets the channel width to target / per-slot
		 * usage.  A tenant at its allocation with many more slots than
		 * that is only queueing in the device (its slots are slow
		 * because everybody's are): trim it to the width it needs.
		 */
		u32 need = (u32)bi_div_round_up_u64(p->alloc, t->r_pt) + 1;

		/* one slot of headroom: open-loop arrivals are not evenly spaced */
		if (t->n > need) {
			bi_iso_set_n(t, need, now_ns);
			return;
		}
	}
	if (sign < 0 && t->slot_limited && t->n < nmax && !p->reduce_below_alloc) {
		/* S3-09: no delay, still below: add a slot back */
		if (p->predict_underuse && t->r_pt && (u64)(t->n + 1) * t->r_pt > hi)
			bi_iso_enter_delay(t, p, t->n + 1, now_ns);	/* remedy 2 */
		else
			bi_iso_set_n(t, t->n + 1, now_ns);
	}
}

/*
 * Every tick, paced DELAY, slot-limited in the tick, not above the band:
 * the slots and not the pace hold the tenant back once the device's
 * latency (a neighbour's queue) has eaten the holds: past half of them, or
 * (latency uneven enough that its mean does not show it) once the tick's
 * own rate, with a bio of quantisation in its favour, is below the band
 * although the pace allows the allocation.  Not in the tick after a change
 * of n or delta: latency and rate still show the old state.  S3-09's steps of delta at each evaluation would take seconds
 * to follow (deviation): take the slots that carry the allocation at this
 * latency, or at this rate per slot, plus one, and the delta for them, as
 * many as the maximum delay can pace.  Paced, spare slots do not raise the
 * rate; they ride out the next rise.
 */
static void bi_iso_paced_slots(struct bi_iso *t, const struct bi_iso_params *p,
			       u64 rate, bool limited, bool ramp, u64 now_ns)
{
	u64 hi, lo;
	u32 need = 0;

	bi_iso_band(p, &hi, &lo);
	if (t->mode != BI_ISO_DELAY || !t->delay_ns || !bi_iso_paced(t, p) || !limited ||
	    ramp || p->reduce_below_alloc || t->usage > hi || bi_iso_crossing_ahead(t, p))
		return;
	if (t->lat_last_ns > bi_iso_svc_ns(t, p) + t->delay_ns / 2)
		need = bi_iso_slots_for(t, p, t->lat_last_ns);
	if (rate < lo)
		need = (u32)bi_max_u64(need, bi_div_round_up_u64((u64)t->n * p->alloc,
								 bi_max_u64(rate, 1)));
	need = (u32)bi_min_u64((u64)need + 1, bi_iso_n_max(p));
	/* no more than the maximum delay can pace: a clipped delta runs fast */
	while (need > t->n && bi_iso_delay_for(t, p, BI_ISO_SPREAD, need) >
	       bi_iso_delay_max(t, p))
		need--;
	if (need > t->n)
		bi_iso_enter_delay(t, p, need, now_ns);
}

static void bi_iso_eval_delay(struct bi_iso *t, const struct bi_iso_params *p,
			      u64 hi, u64 lo, u64 now_ns)
{
	u64 step = p->delay_step_ns;
	u64 dmax = bi_iso_delay_max(t, p);

	if (p->delay_mode == BI_ISO_SINGLE)
		step *= t->n;	/* one slot carries the whole slow-down */
	if (bi_iso_above(t, p, hi)) {
		if (t->delay_ns >= dmax && t->n == 1)
			return;	/* no slot left to take: dropping delta would free it */
		if (t->delay_ns >= dmax && bi_iso_paced(t, p)) {
			/*
			 * S3-09 rule 3, paced: a slot less, and the delta those
			 * slots need rather than none, which would let them run
			 * unpaced for an evaluation (deviation); none needed:
			 * slots only, as the rule says.
			 */
			bi_iso_enter_delay(t, p, t->n - 1, now_ns);
			if (!t->delay_ns)
				t->mode = BI_ISO_SLOTS;
			return;
		}
		if (t->delay_ns >= dmax) {
			/* S3-09 rule 3: maximum delay and still above */
			t->delay_ns = 0;
			t->mode = BI_ISO_SLOTS;
			bi_iso_set_n(t, t->n > 1 ? t->n - 1 : 1, now_ns);
			return;
		}
		t->delay_ns = bi_min_u64(t->delay_ns + step, dmax);
	} else if (t->usage < lo) {
		if (bi_iso_crossing_ahead(t, p))
			return;		/* S3-14: keep the pre-emptive delay */
		if (t->delay_ns) {
			/* S3-09 rule 1 */
			t->delay_ns = t->delay_ns > step ? t->delay_ns - step : 0;
		} else if (!t->slot_limited) {
			t->mode = BI_ISO_SLOTS;	/* demand-limited: nothing to shape */
		} else if (t->n < bi_iso_n_max(p) && !p->reduce_below_alloc) {
			/* S3-09 rule 2: delay 0 and still below: add slots */
			if (t->r_pt && (u64)(t->n + 1) * t->r_pt > hi)
				bi_iso_enter_delay(t, p, t->n + 1, now_ns);
			else
				bi_iso_set_n(t, t->n + 1, now_ns);
		}
	}
}

static void bi_iso_eval(struct bi_iso *t, const struct bi_iso_params *p, u64 now_ns)
{
	u64 abuse = bi_div_u64(p->alloc * p->abuse_permille, BI_ISO_PERMILLE);
	u64 hi, lo;

	bi_iso_band(p, &hi, &lo);
	if (t->mode == BI_ISO_ABUSE) {
		if (t->usage < abuse) {
			/* S3-15: restore to the allocation's share of slots */
			u32 n = t->r_pt ? (u32)bi_div_round_up_u64(p->alloc, t->r_pt) :
				t->prev_n;

			n = (u32)bi_max_u64(1, bi_min_u64(n, bi_iso_n_max(p)));
			t->mode = BI_ISO_SLOTS;
			t->delay_ns = 0;
			if (p->predict_underuse && !p->reduce_below_alloc && t->r_pt &&
			    (u64)n * t->r_pt > hi)
				bi_iso_enter_delay(t, p, n, now_ns);
			else
				bi_iso_set_n(t, n, now_ns);
		}
		return;
	}
	if (p->abuse_permille && t->usage >= abuse) {
		t->mode = BI_ISO_ABUSE;
		bi_iso_set_n(t, 1, now_ns);
		/*
		 * One slot alone does not slow a tenant that submits one bio
		 * at a time on a fast device: the slot also gets the delay of
		 * a one-slot cycle at the allocation (deviation from S3-15).
		 */
		t->delay_ns = bi_min_u64(bi_iso_delay_for(t, p, BI_ISO_SPREAD, 1),
					 bi_iso_delay_max(t, p));
		return;
	}
	if (t->mode == BI_ISO_DELAY)
		bi_iso_eval_delay(t, p, hi, lo, now_ns);
	else
		bi_iso_eval_slots(t, p, hi, lo, now_ns);
}

/*
 * S3-13: "recent history, not a single data point".  The windowed usage's
 * smoothing for a tick of @dt_ns: alpha_fp, but no larger than the weight
 * that keeps window_bios bios at the allocation's rate in the window (1 /
 * alpha ticks; a mean bio's units with work units), and no smaller than a
 * window of BI_ISO_WINDOW_MAX_NS.  At 28 bios a tick that is alpha_fp
 * itself (the two usages are one); at 1.9 (a 187 IOPS allocation, 10 ms
 * ticks) a window of 34 ticks.  Its band is tol_permille of the
 * allocation, or BI_ISO_BAND_BIOS bios' step of it in one tick if that is
 * wider (a window capped at 1 s holds few bios of a very low allocation).
 * window_bios 0: the usage alone, as S3-13 reads.
 */
static void bi_iso_window(struct bi_iso *t, const struct bi_iso_params *p, u64 dt_ns)
{
	u64 per_bio = BI_FP_ONE;	/* metric per bio, x1024 */
	u64 bpt, alpha, floor, num, den, step, tol;

	tol = bi_div_u64(p->alloc * bi_min_u64(p->tol_permille, BI_ISO_PERMILLE),
			 BI_ISO_PERMILLE);
	if (!p->window_bios) {
		t->win_alpha_fp = p->alpha_fp;
		t->win_band = tol;
		return;
	}
	if (p->metric_units && t->units_fp > BI_FP_ONE)
		per_bio = t->units_fp;
	/* bios a tick at the allocation, x1024 */
	bpt = bi_mul_div_u64(p->alloc, dt_ns << (2 * BI_FP_SHIFT), BI_NSEC_PER_SEC * per_bio);
	floor = bi_mul_div_u64(dt_ns, BI_FP_ONE, BI_ISO_WINDOW_MAX_NS);
	alpha = bi_max_u64(bi_div_u64(bpt, p->window_bios), bi_max_u64(floor, 1));
	t->win_alpha_fp = (u32)bi_min_u64(alpha, p->alpha_fp);
	/* BI_ISO_BAND_BIOS bios in one tick move the usage by this, rounded up */
	num = (u64)BI_ISO_BAND_BIOS * per_bio * t->win_alpha_fp;
	den = dt_ns << (2 * BI_FP_SHIFT);
	step = bi_mul_div_u64(num, BI_NSEC_PER_SEC, den);
	if (bi_mul_div_u64(step, den, BI_NSEC_PER_SEC) < num)
		step++;
	t->win_band = bi_max_u64(tol, step);
}

/*
 * One tick for one tenant: smooth usage, per-slot usage and latency from
 * @s, then every eval_ticks evaluate the state machine.  @dev_overloaded
 * is the overload controller's state (S3-18 work-conserving mode).
 * Concurrency: tick context; the caller holds the tenant's lock, which also
 * serialises bi_iso_slot_get()/bi_iso_slot_put().
 */
void bi_iso_tick(struct bi_iso *t, const struct bi_iso_params *p,
		 const struct bi_iso_stats *s, bool dev_overloaded, u64 now_ns)
{
	u64 dt = t->last_ns && now_ns > t->last_ns ? now_ns - t->last_ns : p->tick_ns;
	u64 old = t->usage, rate = bi_rate_per_sec(s->done, dt, 1);
	bool limited, ramp;

	bi_iso_window(t, p, dt);
	/* the first tick primes the averages instead of ramping up from 0 */
	t->usage = t->last_ns ? bi_ewma_u64(t->usage, rate, p->alpha_fp) : rate;
	t->usage_win = t->last_ns ? bi_ewma_u64(t->usage_win, rate, t->win_alpha_fp) : rate;
	t->last_ns = now_ns;
	t->slope = bi_ewma_s64(t->slope, (s64)t->usage - (s64)old, p->alpha_fp);
	if (s->ops && s->dev_ns) {
		u64 mean_ns = bi_div_u64(s->dev_ns, s->ops);
		u64 rpt, units;

		/*
		 * Per-slot usage from the service time, not from the mean
		 * device latency: queueing in a congested device would make a
		 * slot look slow and the slot target grow, feeding the very
		 * queue that hurts the other tenants.  The floor is the
		 * lowest latency seen, drifting up 1/64 per tick so that a
		 * device that really slowed down is followed.
		 */
		if (s->dev_min_ns) {
			u64 up = t->floor_ns + bi_max_u64(t->floor_ns >> 6, 1);

			t->floor_ns = t->floor_ns ? bi_min_u64(s->dev_min_ns, up) :
				      s->dev_min_ns;
		} else {
			t->floor_ns = mean_ns;
		}
		rpt = bi_mul_div_u64(s->done, BI_NSEC_PER_SEC,
				     bi_max_u64(t->floor_ns * s->ops, 1));

		t->r_pt = t->r_pt ? bi_ewma_u64(t->r_pt, rpt, p->alpha_fp) : rpt;
		/*
		 * The mean bio size is primed with its first sample like the
		 * latency: a paced cycle is shared out by size over it, and a
		 * mean still ramping up from one unit would slow the pace.
		 */
		units = bi_div_u64(s->units << BI_FP_SHIFT, s->ops);
		t->units_fp = t->lat_ns ? bi_ewma_u64(t->units_fp, units, p->alpha_fp) : units;
		t->lat_ns = t->lat_ns ? bi_ewma_u64(t->lat_ns, mean_ns, p->alpha_fp) :
			    mean_ns;
		t->lat_last_ns = mean_ns;
	} else if (s->done && !s->dev_ns && t->n) {
		/* no device time from the glue: approach 1, or 2 after a change */
		u64 m = bi_iso_rpt_marginal(t->prev_usage, t->usage, t->prev_n, t->n);

		t->r_pt = m ? m : bi_iso_rpt_avg(t->usage, t->n);
	}
	limited = t->refused;
	if (t->refused)
		t->slot_limited = true;
	t->refused = 0;

	if (!p->strict && !dev_overloaded) {
		/* S3-18 work-conserving: no limit while the device copes */
		t->mode = BI_ISO_RELAXED;
		t->delay_ns = 0;
		t->n = bi_iso_n_max(p);
		t->ticks = 0;
		t->slot_limited = false;
		return;
	}
	if (t->mode == BI_ISO_RELAXED)
		t->mode = BI_ISO_SLOTS;
	ramp = t->ramp;
	if (t->ramp)
		t->ramp--;
	if (p->alloc)
		bi_iso_paced_slots(t, p, bi_rate_per_sec(s->done + 1, dt, 1), limited, ramp,
				   now_ns);
	if (++t->ticks < bi_max_u64(p->eval_ticks, 1))
		return;
	t->ticks = 0;
	if (p->alloc)
		bi_iso_eval(t, p, now_ns);
	t->slot_limited = false;
}

/*
 * The slot limit bios see now (S3-16: one less while a big bio runs).
 * Concurrency: any context; a racy read is harmless (the next
 * bi_iso_slot_get() under the tenant lock decides).
 */
u32 bi_iso_limit(const struct bi_iso *t, const struct bi_iso_params *p)
{
	u32 n = t->mode == BI_ISO_RELAXED ? bi_iso_n_max(p) : t->n;

	if (t->big_inflight && n > 1)
		n--;
	return (u32)bi_min_u64(n, BI_ISO_MAX_SLOTS);
}

/*
 * A paced spread delay: n slots of cycle 1 / r_pt + delta each let a bio
 * of the mean size go every (1 / r_pt + delta) / n (S3-16: a bio's share
 * scales with its size).  A bio's turn is the last bio's turn plus the
 * last bio's share, with the cycle as it is now (a new delta applies at
 * once); its hold is the time to its turn, so device latency beyond the
 * service time comes off the holds.  A turn in the past is kept up to one
 * mean bio's share back: a bio that was late on its slot is made up by
 * the next one, and a slow spell owes nothing more (a tenant at its
 * allocation on a full device gives way instead of keeping a queue).  A small
 * read of a mix with large bios waits at most small_delay_ns; its turn is
 * taken all the same, so the bios after it owe the rest.
 */
static u64 bi_iso_pace(struct bi_iso *t, const struct bi_iso_params *p, u32 units,
		       u32 io_flags, u64 now_ns)
{
	u64 cycle = bi_iso_svc_ns(t, p) + t->delay_ns;
	u64 share = bi_div_u64(cycle, bi_max_u64(t->n, 1));	/* a mean bio's */
	u64 start = now_ns - bi_min_u64(now_ns, share), d;

	if (t->pace_units)	/* a bio had a turn */
		start = bi_max_u64(start, t->pace_ns +
				   bi_mul_div_u64(cycle, (u64)t->pace_units << BI_FP_SHIFT,
						  bi_max_u64(t->units_fp, 1) *
						  bi_max_u64(t->n, 1)));
	d = start > now_ns ? start - now_ns : 0;
	t->pace_ns = start;
	t->pace_units = bi_max_u64(units, 1);
	if ((io_flags & BI_ISO_IO_SMALL_READ) &&
	    t->units_fp > (u64)BI_ISO_SMALL_UNITS_DEF << BI_FP_SHIFT)
		d = bi_min_u64(d, p->small_delay_ns);
	return d;
}

/*
 * Ask for a slot for a bio of @units with BI_ISO_IO_* @io_flags at @now_ns.
 * Returns the slot index and the delay to hold it for before dispatch in
 * *@delay_ns, or -1 if the tenant must wait for a completion (S3-10).
 * Concurrency: submission or dispatch context, under the tenant's lock.
 */
int bi_iso_slot_get(struct bi_iso *t, const struct bi_iso_params *p,
		    u32 units, u32 io_flags, u64 now_ns, u64 *delay_ns)
{
	u32 lim = bi_iso_limit(t, p);
	u64 mask = lim >= 64 ? ~0ULL : (1ULL << lim) - 1;
	u64 free = ~t->slot_busy & mask;
	u64 d = 0;
	u32 delayed;
	int slot;

	*delay_ns = 0;
	if (t->inflight >= lim || !free) {
		t->refused++;
		return -1;
	}
	/* highest free slot first: delayed slots are the low ones */
	slot = 63 - __builtin_clzll(free);
	t->slot_busy |= 1ULL << slot;
	t->inflight++;
	if (io_flags & BI_ISO_IO_BIG)
		t->big_inflight++;

	delayed = p->delay_mode == BI_ISO_SINGLE ? 1 : t->n;
	if ((t->mode == BI_ISO_DELAY || t->mode == BI_ISO_ABUSE) && t->delay_ns &&
	    bi_iso_paced(t, p)) {
		d = bi_iso_pace(t, p, units, io_flags, now_ns);
	} else if ((t->mode == BI_ISO_DELAY || t->mode == BI_ISO_ABUSE) && t->delay_ns &&
		   (u32)slot < delayed) {
		/* S3-16: scale by size, cap small reads, big bios absorb the rest */
		d = bi_mul_div_u64(t->delay_ns, (u64)bi_max_u64(units, 1) << BI_FP_SHIFT,
				   bi_max_u64(t->units_fp, 1));
		if ((io_flags & BI_ISO_IO_SMALL_READ) &&
		    t->units_fp > (u64)BI_ISO_SMALL_UNITS_DEF << BI_FP_SHIFT) {
			/* only a mix with large bios has someone to absorb the rest */
			if (d > p->small_delay_ns) {
				t->debt_ns = bi_min_u64(t->debt_ns + d - p->small_delay_ns,
							bi_iso_delay_max(t, p));
				d = p->small_delay_ns;
			}
		} else if (units > BI_ISO_SMALL_UNITS_DEF) {
			d += t->debt_ns;
			t->debt_ns = 0;
		}
	}
	*delay_ns = d;
	return slot;
}

/*
 * Release @slot when its bio completes (or fails before dispatch).
 * Concurrency: completion context (maybe hard IRQ), under the tenant's lock.
 */
void bi_iso_slot_put(struct bi_iso *t, int slot, u32 io_flags)
{
	if (slot < 0 || slot >= BI_ISO_MAX_SLOTS || !(t->slot_busy & (1ULL << slot)))
		return;
	t->slot_busy &= ~(1ULL << slot);
	t->inflight--;
	if ((io_flags & BI_ISO_IO_BIG) && t->big_inflight)
		t->big_inflight--;
}
