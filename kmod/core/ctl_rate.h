/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctl_rate.h - the request-rate cap ("RPS Cap") controller of seed 000.
 *
 * Every tick the controller folds one tick of counters into smoothed
 * measurements (S0-02, S0-15, S0-16) and moves the cap of a request bucket
 * by one of four cases (S0-08..S0-12):
 *
 *   A  rejecting, L > C      cap -= (L - C) / (f * n)
 *   B  rejecting, L < C      cap += (C - L) / (f * m)
 *   C  not rejecting, L > C  cap  = min(cap, s * L / f), once; then A's
 *                            step without rejections
 *   D  otherwise             no change
 *
 * Overshoot guard (a deviation, on by default): the steps of A and B stop
 * at C / f, the cap at which L would equal C with the current f.  L is
 * smoothed with alpha 0.3 and lags the cap by several ticks, so the plain
 * step keeps lowering long after the cap is right and drives it to the
 * floor; f (alpha 0.7) follows within a tick or two.
 *
 * L = smoothed completed work units/s, C = committed units/s, f = smoothed
 * units per request.  "Rejecting" counts throttled (delayed or rejected)
 * bios: throttled > 0 in the tick, or the smoothed throttled fraction
 * above epsilon.  The formulas already divide by n and m, so
 * recomputing them every tick is the incremental application of S0-12.
 *
 * The controller only computes a cap; the bucket engine enforces it.  It
 * does not depend on the bucket engine.
 *
 * Fixed-point scales: caps in milli-requests/s (_mrps); L, f and the
 * arrival rate x1024 (_fp, BI_FP_ONE); fractions in parts per million
 * (_ppm); factors s and b in permille (exact decimal seed values).
 */
#ifndef BLKISO_CTL_RATE_H
#define BLKISO_CTL_RATE_H

#include "bi_shim.h"
#include "io.h"

#define BI_MRPS_PER_RPS		1000ULL
#define BI_PPM			1000000U
#define BI_PERMILLE		1000U

/* Defaults (seed 000 and catalogue section 10). */
#define BI_RATE_N_LOWER_DEF		3	/* S0-08: cycles to lower */
#define BI_RATE_M_RAISE_DEF		4	/* S0-09: cycles to raise, m > n */
#define BI_RATE_SAFETY_PERMILLE_DEF	1200	/* S0-10: s = 1.2 */
#define BI_RATE_INIT_B_PERMILLE_DEF	300	/* S0-13: b = 0.3 */
#define BI_RATE_EPS_PPM_DEF		1000	/* 0.001 of arrivals */
#define BI_RATE_CAP_MIN_MRPS_DEF	100	/* floor: 0.1 rps, the cap never reaches 0 */
#define BI_LARGE_READ_BYTES_DEF		(256U * 1024)	/* S0-21 */

enum bi_rate_case {
	BI_RATE_CASE_D,		/* no change */
	BI_RATE_CASE_A,		/* rejecting and over C: lower */
	BI_RATE_CASE_B,		/* rejecting and under C: raise */
	BI_RATE_CASE_C,		/* not rejecting, over C: propose s*L/f */
	BI_RATE_CASE_C_STEP,	/* case C already applied, still over: A's step */
};

struct bi_rate_params {
	u64 committed_ups;	/* C, work units/s */
	u32 n_lower;		/* n */
	u32 m_raise;		/* m */
	u32 safety_permille;	/* s */
	u32 alpha_f_fp;		/* 0.7 */
	u32 alpha_l_fp;		/* 0.3 */
	u32 alpha_rej_fp;	/* 0.7 */
	u32 eps_ppm;		/* rejections count as zero below this fraction */
	u64 cap_min_mrps;	/* lower clamp */
	u64 cap_max_mrps;	/* upper clamp; 0 = C requests/s (f >= 1) */
	u64 tick_ns;		/* interval assumed for the very first tick */
	bool overshoot_guard;	/* A and B never step past C / f (deviation) */
};

/* One tick of counters, folded by the caller from per-CPU counters. */
struct bi_rate_stats {
	u64 arrived;		/* bios that arrived, throttled ones included */
	u64 throttled;		/* bios delayed or rejected by the request bucket */
	u64 completed;		/* bios completed */
	u64 units;		/* work units of the completed bios */
};

struct bi_rate_ctl {
	u64 cap_mrps;		/* output: the request bucket's rate */
	u64 l_fp;		/* L, units/s x1024 */
	u64 f_fp;		/* f, units per request x1024, >= 1 */
	u64 rps_fp;		/* arrivals/s x1024 */
	u64 last_ns;		/* time of the previous tick, 0 = none yet */
	u32 rej_ppm;		/* smoothed throttled fraction of arrivals */
	bool f_primed;		/* f has had a sample */
	bool case_c_done;	/* case C applied in this episode */
};

void bi_rate_params_init(struct bi_rate_params *p, u64 committed_ups);
u64 bi_rate_initial_cap_mrps(u64 committed_ups, u32 b_permille);
void bi_rate_init(struct bi_rate_ctl *c, u64 cap_mrps);
enum bi_rate_case bi_rate_adjust(struct bi_rate_ctl *c,
				 const struct bi_rate_params *p, bool rejecting);
enum bi_rate_case bi_rate_tick(struct bi_rate_ctl *c,
			       const struct bi_rate_params *p,
			       const struct bi_rate_stats *s, u64 now_ns);

bool bi_rate_shed_large_read(const struct bi_io *io, bool overloaded,
			     u64 large_read_bytes);

#endif /* BLKISO_CTL_RATE_H */
