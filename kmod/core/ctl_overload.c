// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_overload.c - overload detection and the throttle multiplier
 * (seed 002, S2-03..S2-17).
 *
 * One job: once per tick, decide from the window's missed-latency fraction
 * whether the device is overloaded and move the multiplier M; between
 * ticks, pick victims so that exactly min(100, M * P) % of a rank's bios
 * are throttled.  See ctl_overload.h for the rules and scales.
 */
#include "ctl_overload.h"

/*
 * Fill @p with the catalogue's A-23 defaults (damped mode, ideal rate off).
 * Concurrency: any context; @p is owned by the caller.
 */
void bi_ovl_params_init(struct bi_ovl_params *p)
{
	p->window_ticks = BI_OVL_WINDOW_DEF;
	p->threshold_permille = BI_OVL_THRESHOLD_PERMILLE_DEF;
	p->t_first = BI_OVL_T_DEF;
	p->t_next = BI_OVL_T_DEF;
	p->r_release = BI_OVL_R_DEF;
	p->holdoff_ticks = BI_OVL_HOLDOFF_DEF;
	p->m_init = 0;
	p->i_up = BI_OVL_I_STEP_DEF;
	p->i_down = BI_OVL_I_STEP_DEF;
	p->theta_ns = BI_OVL_THETA_NS_DEF;
	p->band_ns = BI_OVL_BAND_NS_DEF;
	p->simple = false;
	p->ideal = false;
}

/*
 * Concurrency: before the device state is published; no lock needed.
 */
void bi_ovl_init(struct bi_ovl *o, const struct bi_ovl_params *p)
{
	u32 i;

	for (i = 0; i < BI_OVL_MAX_WINDOW; i++) {
		o->ring[i].completed = 0;
		o->ring[i].missed = 0;
		o->ring[i].slack_min_ns = BI_OVL_NO_SLACK;
	}
	for (i = 0; i < BI_OVL_NR_RANKS; i++) {
		o->acc[i] = 0;
		o->owed[i] = 0;
	}
	o->sum_completed = 0;
	o->sum_missed = 0;
	o->transitions = 0;
	o->pos = 0;
	o->m = p->m_init;
	o->clean_ticks = 0;
	o->miss_permille = 0;
	o->slack_min_ns = BI_OVL_NO_SLACK;
	o->overloaded = false;
	o->any_above_commit = false;
}

static u32 bi_ovl_window(const struct bi_ovl_params *p)
{
	return (u32)bi_max_u64(1, bi_min_u64(p->window_ticks, BI_OVL_MAX_WINDOW));
}

static u32 bi_sat_u32(u64 v)
{
	return v > U32_MAX ? U32_MAX : (u32)v;
}

/* Replace the oldest of the W ring slots with this tick's counters. */
static void bi_ovl_roll(struct bi_ovl *o, const struct bi_ovl_params *p,
			const struct bi_ovl_stats *s)
{
	u32 w = bi_ovl_window(p);
	struct bi_ovl_slot *slot;
	s64 slack = BI_OVL_NO_SLACK;
	u32 i;

	if (o->pos >= w)
		o->pos = 0;
	slot = &o->ring[o->pos];
	slot->completed = bi_sat_u32(s->completed);
	slot->missed = bi_sat_u32(bi_min_u64(s->missed, s->completed));
	slot->slack_min_ns = s->completed ? s->slack_min_ns : BI_OVL_NO_SLACK;
	o->pos = (o->pos + 1) % w;

	/*
	 * W <= 100: a scan is cheaper than a monotonic deque for the minimum,
	 * and recomputing the sums keeps them right when W is retuned.
	 */
	o->sum_completed = 0;
	o->sum_missed = 0;
	for (i = 0; i < w; i++) {
		o->sum_completed += o->ring[i].completed;
		o->sum_missed += o->ring[i].missed;
		slack = bi_min_s64(slack, o->ring[i].slack_min_ns);
	}
	o->slack_min_ns = slack;
	o->miss_permille = o->sum_completed ?
		(u32)bi_div_u64(o->sum_missed * 1000, o->sum_completed) : 0;
}

static void bi_ovl_raise(struct bi_ovl *o, u32 step)
{
	o->m = (u32)bi_min_u64((u64)o->m + step, BI_OVL_M_MAX);
}

static void bi_ovl_lower(struct bi_ovl *o, const struct bi_ovl_params *p, u32 step)
{
	o->m = o->m > p->m_init + step ? o->m - step : p->m_init;
}

/* Not overloaded: hold-off, then release or follow the ideal rate. */
static void bi_ovl_clean_tick(struct bi_ovl *o, const struct bi_ovl_params *p)
{
	o->clean_ticks++;
	if (o->clean_ticks <= p->holdoff_ticks)
		return;		/* hold M until the hold-off is satisfied */
	if (!p->ideal) {
		bi_ovl_lower(o, p, p->r_release);
		return;
	}
	if (o->slack_min_ns == BI_OVL_NO_SLACK)
		bi_ovl_lower(o, p, p->i_down);	/* idle window: nothing to protect */
	else if (o->slack_min_ns < p->theta_ns)
		bi_ovl_raise(o, p->i_up);	/* above the ideal rate */
	else if (o->slack_min_ns > p->theta_ns + p->band_ns)
		bi_ovl_lower(o, p, p->i_down);	/* below it: admit more */
}

/*
 * One poll interval (S2-04): roll the window with @s, decide the state and
 * move M.  @tenant_signal is true if a tenant with its own threshold is
 * over it (S2-16).  Returns the new state.
 * Concurrency: tick context (work item), one caller at a time per device;
 * bi_ovl_victim() may run concurrently only if the glue serialises it with
 * the tick (the device lock), since both touch the accumulators.
 */
bool bi_ovl_tick(struct bi_ovl *o, const struct bi_ovl_params *p,
		 const struct bi_ovl_stats *s, bool tenant_signal, u64 now_ns)
{
	bool was = o->overloaded;
	bool over, now_over;
	u32 i;

	(void)now_ns;	/* the window is counted in ticks */
	bi_ovl_roll(o, p, s);
	/* this tick alone: is the overload still there, or only its history? */
	now_over = tenant_signal ||
		   (s->completed && s->missed * 1000 > s->completed * p->threshold_permille);
	over = (o->sum_completed && o->miss_permille > p->threshold_permille) ||
	       tenant_signal;
	for (i = 0; i < BI_OVL_NR_RANKS; i++)
		o->owed[i] = 0;

	if (p->simple) {
		o->m = over ? p->t_first : p->m_init;
	} else if (over) {
		/*
		 * Anti-windup: misses stay in the window for W ticks after the
		 * throttle has cured them.  Raise only while the newest tick
		 * misses too (or on the first overloaded tick); otherwise hold.
		 */
		if (!was || now_over)
			bi_ovl_raise(o, was ? p->t_next : p->t_first);
		o->clean_ticks = 0;
	} else {
		bi_ovl_clean_tick(o, p);
	}
	if (over != was)
		o->transitions++;
	o->overloaded = over;
	return over;
}

/* S2-08, A-25: (M x P) %, clamped at 100.  Concurrency: any context (a read). */
u32 bi_ovl_throttle_pct(const struct bi_ovl *o, u8 rank)
{
	return (u32)bi_min_u64((u64)o->m * bi_max_u64(rank, 1), 100);
}

/*
 * Is this bio of rank @rank a victim?  A-28: a Bresenham accumulator per
 * rank makes exactly pct % of them victims.  S2-09: a victim that falls on
 * a tenant at or below its commitment is deferred (up to BI_OVL_OWED_MAX
 * per tick) to the next bio of a tenant above it, when one exists.
 * Concurrency: submission context, under the device lock (the accumulator
 * is shared by every tenant of the device).
 */
bool bi_ovl_victim(struct bi_ovl *o, u8 rank, bool above_commit)
{
	u32 r = rank < BI_OVL_NR_RANKS ? rank : BI_OVL_NR_RANKS - 1;
	u32 pct = bi_ovl_throttle_pct(o, (u8)r);
	bool due;

	if (!pct)
		return false;
	o->acc[r] += pct;
	due = o->acc[r] >= 100;
	if (due)
		o->acc[r] -= 100;
	if (!due) {
		if (above_commit && o->owed[r]) {
			o->owed[r]--;
			return true;
		}
		return false;
	}
	if (above_commit || !o->any_above_commit)
		return true;
	if (o->owed[r] < BI_OVL_OWED_MAX) {
		o->owed[r]++;
		return false;
	}
	return true;
}

/*
 * Concurrency: before the tenant is published.
 */
void bi_ovl_tenant_init(struct bi_ovl_tenant *t)
{
	u32 i;

	for (i = 0; i < BI_OVL_TENANT_WINDOW; i++) {
		t->completed[i] = 0;
		t->missed[i] = 0;
	}
	t->window_ticks = 0;
	t->threshold_permille = 0;
	t->pos = 0;
	t->miss_permille = 0;
}

/*
 * S2-16: roll one tenant's own window; true if the tenant has its own
 * threshold and its miss fraction is above it.  Overrides written by the
 * tool take effect at this (next) tick.
 * Concurrency: tick context, before bi_ovl_tick() of the same tick.
 */
bool bi_ovl_tenant_tick(struct bi_ovl_tenant *t, const struct bi_ovl_params *p,
			u64 completed, u64 missed)
{
	u32 w = t->window_ticks ? t->window_ticks : p->window_ticks;
	u64 sc = 0, sm = 0;
	u32 i;

	w = (u32)bi_max_u64(1, bi_min_u64(w, BI_OVL_TENANT_WINDOW));
	if (t->pos >= w)
		t->pos = 0;
	t->completed[t->pos] = bi_sat_u32(completed);
	t->missed[t->pos] = bi_sat_u32(bi_min_u64(missed, completed));
	t->pos = (t->pos + 1) % w;
	for (i = 0; i < w; i++) {
		sc += t->completed[i];
		sm += t->missed[i];
	}
	t->miss_permille = sc ? (u32)bi_div_u64(sm * 1000, sc) : 0;
	return t->threshold_permille && sc &&
	       t->miss_permille > t->threshold_permille;
}
