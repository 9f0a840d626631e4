// SPDX-License-Identifier: GPL-2.0
/*
 * tokadapt.c - tick-time adaptation of the token engine: the default
 * initial deduction follows the smoothed units per bio, and auto mode picks
 * request or work tokens from the variability of bio sizes.
 *
 * The EWMA is per bio (S = a * x + (1 - a) * S, A-01), folded once per tick:
 * n bios of mean m move S by the weight w = 1 - (1 - a)^n towards m, which
 * is exact when the n bios are equal and close otherwise, and costs the
 * completion path only three additions (bi_sample_add).
 *
 * Concurrency: see tokadapt.h.
 */
#include "tokadapt.h"

/* bi_sample_fold - add a CPU's sample into @sum and clear it (tick). */
void bi_sample_fold(struct bi_sample *sum, struct bi_sample *cpu)
{
	sum->n += cpu->n;
	sum->units += cpu->units;
	sum->units_sq += cpu->units_sq;
	*cpu = (struct bi_sample){ 0 };
}

/* bi_adapt_init - start from @initial (seed default 1, §10). */
void bi_adapt_init(struct bi_adapt *a, s64 initial, bool enabled)
{
	a->initial = bi_max_s64(initial, 1);
	a->ewma_fp = (u64)a->initial << BI_FP_SHIFT;
	a->alpha_fp = BI_ADAPT_ALPHA_FP;
	a->adapt_pct = BI_ADAPT_PCT;
	a->enabled = enabled;
}

/* (1 - alpha)^n x BI_FP_ONE, by squaring; 0 once it rounds away. */
static u64 keep_weight_fp(u32 alpha_fp, u64 n)
{
	u64 base = BI_FP_ONE - bi_min_u64(alpha_fp, BI_FP_ONE);
	u64 acc = BI_FP_ONE;

	while (n && acc) {
		if (n & 1)
			acc = (acc * base) >> BI_FP_SHIFT;
		base = (base * base) >> BI_FP_SHIFT;
		n >>= 1;
	}
	return acc;
}

/*
 * bi_adapt_tick - fold the tick's completions @s into the EWMA; if the
 * initial deduction is off from it by more than adapt_pct, set it to the
 * rounded EWMA (S0-29).  Returns true if the initial deduction changed.
 */
bool bi_adapt_tick(struct bi_adapt *a, const struct bi_sample *s)
{
	u64 keep, mean_fp, init_fp, diff, r;

	if (!s->n)
		return false;
	keep = keep_weight_fp(a->alpha_fp, s->n);
	mean_fp = bi_min_u64(s->units / s->n, 1ULL << 30) << BI_FP_SHIFT;
	mean_fp += ((s->units % s->n) << BI_FP_SHIFT) / s->n;
	a->ewma_fp = (keep * a->ewma_fp + (BI_FP_ONE - keep) * mean_fp) >> BI_FP_SHIFT;
	if (!a->enabled)
		return false;
	init_fp = (u64)a->initial << BI_FP_SHIFT;
	diff = a->ewma_fp > init_fp ? a->ewma_fp - init_fp : init_fp - a->ewma_fp;
	if (diff * 100 <= (u64)a->adapt_pct * init_fp)
		return false;
	r = bi_max_u64((a->ewma_fp + BI_FP_ONE / 2) >> BI_FP_SHIFT, 1);
	if ((s64)r == a->initial)
		return false;
	a->initial = (s64)r;
	return true;
}

/* bi_mode_init - configured mechanism; auto starts in work mode. */
void bi_mode_init(struct bi_modesel *m, u8 setting)
{
	m->cv_limit_fp = BI_MODE_CV_LIMIT_FP;
	m->low_rate = BI_MODE_LOW_RATE_UNITS;
	m->active = BI_MODE_WORK;
	bi_mode_set(m, setting);
}

/* bi_mode_set - a written mode=request|work applies from the next bio. */
void bi_mode_set(struct bi_modesel *m, u8 setting)
{
	m->setting = setting > BI_MODE_AUTO ? BI_MODE_AUTO : setting;
	if (m->setting != BI_MODE_AUTO)
		m->active = m->setting;
	else if (m->active != BI_MODE_REQUEST)
		m->active = BI_MODE_WORK;
}

/*
 * bi_mode_tick - auto selection over the window sample @win (S0-33): work
 * tokens if CV(units per bio) > cv_limit or @committed_rate < low_rate
 * (seed: "low target rate or highly variable work per request"), request
 * tokens otherwise.  CV^2 = (n * sum_sq - sum^2) / sum^2, compared in 128
 * bits without division.  Returns the active mode.
 */
u8 bi_mode_tick(struct bi_modesel *m, const struct bi_sample *win,
		u64 committed_rate)
{
	__uint128_t var, lim;
	u64 n, sum, sq;

	if (m->setting != BI_MODE_AUTO)
		return m->active;
	if (committed_rate < m->low_rate) {
		m->active = BI_MODE_WORK;
		return m->active;
	}
	if (win->n < 2 || !win->units)
		return m->active;
	/* scaling n, sum and sum_sq alike keeps CV; bound them for 128 bits */
	n = win->n;
	sum = win->units;
	sq = win->units_sq;
	while (n > (1ULL << 32) || sum > (1ULL << 40) || sq > (1ULL << 60)) {
		n >>= 1;
		sum >>= 1;
		sq >>= 1;
	}
	if (!sum)
		return m->active;
	var = (__uint128_t)n * sq > (__uint128_t)sum * sum ?
	      (__uint128_t)n * sq - (__uint128_t)sum * sum : 0;
	lim = (__uint128_t)sum * sum * m->cv_limit_fp * m->cv_limit_fp;
	m->active = (var << (2 * BI_FP_SHIFT)) > lim ? BI_MODE_WORK : BI_MODE_REQUEST;
	return m->active;
}
