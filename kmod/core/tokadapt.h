/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tokadapt.h - what the token engine adapts at the tick: the default initial
 * deduction (S0-29), min_tokens=auto (S0-30, via BI_MIN_TOKENS_AUTO in
 * admit.h), and the request/work/auto mechanism selection (S0-33, S0-34,
 *
 *
 * Completions feed a struct bi_sample (count, units, squared units); the
 * kernel keeps one per CPU (no atomics, IRQs off on the completing CPU) and
 * the tick folds them with bi_sample_fold() before calling bi_adapt_tick()
 * and bi_mode_tick().
 *
 * Concurrency: bi_sample_add on the sample's own CPU (completion, IRQs off);
 * bi_sample_fold, bi_adapt_tick, bi_mode_tick in the tick work item with the
 * tenant lock; bi_mode_set in configuration with the tenant lock;
 * bi_mode_cost and reading bi_adapt.initial anywhere (a stale value for one
 * bio is harmless: the completion correction settles its cost).
 */
#ifndef BLKISO_TOKADAPT_H
#define BLKISO_TOKADAPT_H

#include "bi_shim.h"
#include "conf.h"

/* Seed 000 alpha for f, units per request (§10): 0.7 x BI_FP_ONE */
#define BI_ADAPT_ALPHA_FP	717
/* Re-set the initial deduction when off by more than this (S0-29, §10) */
#define BI_ADAPT_PCT		25
/* Auto mode picks work tokens when CV(units/bio) > 0.5 ... (S0-33) */
#define BI_MODE_CV_LIMIT_FP	(BI_FP_ONE / 2)
/* ... or when the committed rate is below this many units per second */
#define BI_MODE_LOW_RATE_UNITS	1000

struct bi_sample {
	u64 n;			/* completed bios */
	u64 units;		/* their work units */
	u64 units_sq;		/* sum of squared units, for the CV */
};

/* Record one completion of @units (capped at 2^24 so squares never wrap). */
static inline void bi_sample_add(struct bi_sample *s, u64 units)
{
	units = bi_min_u64(units, 1ULL << 24);
	s->n++;
	s->units += units;
	s->units_sq += units * units;
}

struct bi_adapt {
	u64 ewma_fp;		/* smoothed units per bio, x BI_FP_ONE */
	s64 initial;		/* current default initial deduction, >= 1 */
	u32 alpha_fp;		/* weight of one new bio, x BI_FP_ONE */
	u32 adapt_pct;		/* dead zone before the initial moves */
	bool enabled;
};

/* The modes are conf.h's enum bi_mode: the grammar's mode= values. */

struct bi_modesel {
	u8 setting;		/* enum bi_mode as configured */
	u8 active;		/* BI_MODE_REQUEST or BI_MODE_WORK in force */
	u32 cv_limit_fp;	/* x BI_FP_ONE */
	u64 low_rate;		/* units/s */
};

/* Cost of a bio of @units under the active mechanism. */
static inline s64 bi_mode_cost(const struct bi_modesel *m, s64 units)
{
	return m->active == BI_MODE_REQUEST ? 1 : units;
}

void bi_sample_fold(struct bi_sample *sum, struct bi_sample *cpu);
void bi_adapt_init(struct bi_adapt *a, s64 initial, bool enabled);
bool bi_adapt_tick(struct bi_adapt *a, const struct bi_sample *s);
void bi_mode_init(struct bi_modesel *m, u8 setting);
void bi_mode_set(struct bi_modesel *m, u8 setting);
u8 bi_mode_tick(struct bi_modesel *m, const struct bi_sample *win,
		u64 committed_rate);

#endif /* BLKISO_TOKADAPT_H */
