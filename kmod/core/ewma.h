/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ewma.h - exponential smoothing for the feedback controllers (S0-15, A-01).
 *
 * S_t = alpha * x_t + (1 - alpha) * S_{t-1}: alpha weights the new sample,
 * so a high alpha (0.7) forgets quickly, as seed 000 says of the rejection
 * rate.  Alpha is a BI_FP_ONE (x1024) fraction; the smoothed value keeps
 * whatever scale the caller gives it (controllers keep x1024 values so that
 * the fractional part survives).  Rounded to nearest.
 */
#ifndef BLKISO_EWMA_H
#define BLKISO_EWMA_H

#include "bi_shim.h"

/* Seed 000 alphas (S0-15), x1024. */
#define BI_ALPHA_F_FP		717	/* 0.7: average units per request */
#define BI_ALPHA_L_FP		307	/* 0.3: units per second (L) */
#define BI_ALPHA_REJ_FP		717	/* 0.7: rejection (throttle) rate */

static inline u64 bi_ewma_u64(u64 prev, u64 sample, u32 alpha_fp)
{
	if (alpha_fp >= BI_FP_ONE)
		return sample;
	return (u64)(((__uint128_t)sample * alpha_fp +
		      (__uint128_t)prev * (BI_FP_ONE - alpha_fp) +
		      BI_FP_ONE / 2) >> BI_FP_SHIFT);
}

static inline s64 bi_ewma_s64(s64 prev, s64 sample, u32 alpha_fp)
{
	__int128 v;

	if (alpha_fp >= BI_FP_ONE)
		return sample;
	v = (__int128)sample * alpha_fp +
	    (__int128)prev * (s64)(BI_FP_ONE - alpha_fp);
	/* round half away from zero, symmetric for both signs */
	if (v >= 0)
		return (s64)((v + BI_FP_ONE / 2) >> BI_FP_SHIFT);
	return -(s64)((-v + BI_FP_ONE / 2) >> BI_FP_SHIFT);
}

/*
 * @count events per @interval_ns as a rate per second, times @scale
 * (count * scale must fit 64 bits: per-tick counters do).
 */
static inline u64 bi_rate_per_sec(u64 count, u64 interval_ns, u64 scale)
{
	if (!interval_ns)
		return 0;
	return bi_mul_div_u64(count * scale, BI_NSEC_PER_SEC, interval_ns);
}

#endif /* BLKISO_EWMA_H */
