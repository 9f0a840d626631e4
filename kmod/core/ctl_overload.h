/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctl_overload.h - the overload controller of seed 002 (S2-03..S2-17).
 *
 * Per device (the "system"): the fraction of completed bios whose device
 * latency (dispatch -> completion, A-27) missed their target, over a moving
 * window of W ticks, decides "overloaded" (S2-03, S2-04).  A throttle
 * multiplier M (percentage points) then moves:
 *
 *   overloaded                 M += T_first (first tick of an episode) or
 *                              T_next (S2-07, S2-11); T_next only while the
 *                              newest tick itself misses (anti-windup)
 *   clean for <= K ticks       hold
 *   clean for > K ticks        M -= R, down to M_init (S2-10), or, in
 *                              ideal-rate mode, follow the window's minimum
 *                              slack: < theta -> +I_up, > theta + band ->
 *                              -I_down, else hold (S2-12..S2-14)
 *   simple mode                M = T_first while overloaded, else M_init
 *                              (S2-15, the naive controller)
 *
 * A bio of priority rank P (RT 1, BE 2, IDLE 3: bi_io_rank() in classify.c,
 * or the tenant's prio override) is a victim with
 * probability min(100, M * P) %, chosen by a deterministic accumulator per
 * rank (S2-08, A-25, A-28), preferring tenants above their commitment
 * (S2-09).
 * Tenants may override the threshold and window (S2-16).
 *
 * Scales: M in percentage points; fractions in permille; times in ns.
 */
#ifndef BLKISO_CTL_OVERLOAD_H
#define BLKISO_CTL_OVERLOAD_H

#include "bi_shim.h"

#define BI_OVL_MAX_WINDOW	100	/* ring size; W <= this (the grammar allows 100) */
#define BI_OVL_TENANT_WINDOW	16	/* per-tenant ring (memory budget) */
#define BI_OVL_NR_RANKS		4	/* rank 0 unused: ranks 1..3 */
#define BI_OVL_M_MAX		100	/* M beyond 100 points throttles no more */
#define BI_OVL_OWED_MAX		64	/* S2-09: victims deferred to above-commit tenants per tick */

/* Catalogue A-23 defaults. */
#define BI_OVL_WINDOW_DEF		10
#define BI_OVL_THRESHOLD_PERMILLE_DEF	100	/* 10 % missed */
#define BI_OVL_T_DEF			20
#define BI_OVL_R_DEF			2
#define BI_OVL_HOLDOFF_DEF		3
#define BI_OVL_THETA_NS_DEF		(100 * BI_NSEC_PER_USEC)
#define BI_OVL_BAND_NS_DEF		(500 * BI_NSEC_PER_USEC)
#define BI_OVL_I_STEP_DEF		1

#define BI_OVL_NO_SLACK		S64_MAX	/* no completion in the window */

struct bi_ovl_params {
	u32 window_ticks;		/* W */
	u32 threshold_permille;		/* overload indicator value */
	u32 t_first;			/* T on the first overloaded tick */
	u32 t_next;			/* T on each further one */
	u32 r_release;			/* R */
	u32 holdoff_ticks;		/* K */
	u32 m_init;			/* resting multiplier */
	u32 i_up;			/* ideal-rate increments */
	u32 i_down;
	s64 theta_ns;			/* ideal-rate threshold on the minimum slack */
	s64 band_ns;			/* acceptable band above theta */
	bool simple;			/* S2-15 naive mode */
	bool ideal;			/* S2-13 ideal-rate tracking */
};

/* One tick of device counters (every tenant), folded by the caller. */
struct bi_ovl_stats {
	u64 completed;		/* bios completed in the tick */
	u64 missed;		/* of those, device latency > their target */
	s64 slack_min_ns;	/* min(target - device latency); BI_OVL_NO_SLACK if none */
};

struct bi_ovl_slot {
	u32 completed;
	u32 missed;
	s64 slack_min_ns;
};

struct bi_ovl {
	struct bi_ovl_slot ring[BI_OVL_MAX_WINDOW];
	u64 sum_completed;
	u64 sum_missed;
	u64 transitions;		/* overloaded <-> not, for S2-15/S2-19 */
	u32 pos;
	u32 m;				/* output: multiplier, points */
	u32 clean_ticks;		/* consecutive non-overloaded ticks */
	u32 miss_permille;		/* last window's miss fraction */
	u32 acc[BI_OVL_NR_RANKS];	/* A-28 victim accumulators */
	u32 owed[BI_OVL_NR_RANKS];	/* S2-09 victims owed by above-commit tenants */
	s64 slack_min_ns;		/* last window's minimum slack */
	bool overloaded;		/* output: state */
	bool any_above_commit;		/* S2-09: some tenant is above its commitment */
};

/* S2-16: per-tenant miss fraction with optional overrides. */
struct bi_ovl_tenant {
	u32 completed[BI_OVL_TENANT_WINDOW];
	u32 missed[BI_OVL_TENANT_WINDOW];
	u32 window_ticks;		/* 0 = the device's W (capped at the ring) */
	u32 threshold_permille;		/* 0 = no per-tenant overload signal */
	u32 pos;
	u32 miss_permille;		/* output: this tenant's miss fraction */
};

void bi_ovl_params_init(struct bi_ovl_params *p);
void bi_ovl_init(struct bi_ovl *o, const struct bi_ovl_params *p);
bool bi_ovl_tick(struct bi_ovl *o, const struct bi_ovl_params *p,
		 const struct bi_ovl_stats *s, bool tenant_signal, u64 now_ns);
u32 bi_ovl_throttle_pct(const struct bi_ovl *o, u8 rank);
bool bi_ovl_victim(struct bi_ovl *o, u8 rank, bool above_commit);

void bi_ovl_tenant_init(struct bi_ovl_tenant *t);
bool bi_ovl_tenant_tick(struct bi_ovl_tenant *t, const struct bi_ovl_params *p,
			u64 completed, u64 missed);

#endif /* BLKISO_CTL_OVERLOAD_H */
