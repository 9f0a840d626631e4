// SPDX-License-Identifier: GPL-2.0
/*
 * ewma_test.c - exponential smoothing and per-tick rates (kmod/core/ewma.h,
 * S0-15, A-01): alpha weighs the new sample, results are rounded to the
 * nearest integer, half away from zero for signed values (so a value and
 * its negation smooth alike), alpha of one or more takes the sample.
 */
#include "ewma.h"
#include "kselftest_harness.h"

TEST(unsigned_rounds_to_nearest)
{
	ASSERT_EQ(1ULL, bi_ewma_u64(0, 1, 717));	/* 0.70 */
	ASSERT_EQ(0ULL, bi_ewma_u64(0, 1, 307));	/* 0.30 */
	ASSERT_EQ(2ULL, bi_ewma_u64(0, 3, 717));	/* 2.10 */
	ASSERT_EQ(0ULL, bi_ewma_u64(0, 1, 511));	/* 0.499 */
	ASSERT_EQ(1ULL, bi_ewma_u64(0, 1, 512));	/* 0.500: half up */
	ASSERT_EQ(1ULL, bi_ewma_u64(0, 1, 614));	/* 0.600 */
	ASSERT_EQ(7ULL, bi_ewma_u64(10, 0, 307));	/* 7.00 */
	ASSERT_EQ(13ULL, bi_ewma_u64(10, 20, 307));	/* 13.00 */
	ASSERT_EQ(0ULL, bi_ewma_u64(100, 0, BI_FP_ONE));
	ASSERT_EQ(4ULL, bi_ewma_u64(100, 4, 2 * BI_FP_ONE));
	ASSERT_EQ(100ULL, bi_ewma_u64(100, 4, 0));	/* alpha 0 keeps */
	/* no overflow near 2^63 (128-bit products) */
	ASSERT_EQ(1ULL << 62, bi_ewma_u64(1ULL << 62, 1ULL << 62, 717));
}

TEST(signed_rounds_half_away_from_zero)
{
	ASSERT_EQ(-1, bi_ewma_s64(0, -1, 717));		/* -0.70 */
	ASSERT_EQ(1, bi_ewma_s64(0, 1, 717));
	ASSERT_EQ(0, bi_ewma_s64(0, -1, 307));		/* -0.30 */
	ASSERT_EQ(-7, bi_ewma_s64(-10, 0, 307));	/* -7.00 */
	ASSERT_EQ(7, bi_ewma_s64(10, 0, 307));
	ASSERT_EQ(-13, bi_ewma_s64(-10, -20, 307));
	ASSERT_EQ(0, bi_ewma_s64(-10, 10, 512));
	ASSERT_EQ(-2, bi_ewma_s64(-3, -1, 512));	/* -2.00 */
	ASSERT_EQ(0, bi_ewma_s64(0, -1, 511));		/* -0.499 */
	ASSERT_EQ(-1, bi_ewma_s64(0, -1, 614));		/* -0.600 */
	ASSERT_EQ(1, bi_ewma_s64(0, 1, 614));
	ASSERT_EQ(-3, bi_ewma_s64(-4, -1, 512));	/* -2.50: away from zero */
	ASSERT_EQ(3, bi_ewma_s64(4, 1, 512));		/* 2.50 */
	ASSERT_EQ(-3, bi_ewma_s64(5, -3, BI_FP_ONE));
	ASSERT_EQ(-3, bi_ewma_s64(5, -3, 3 * BI_FP_ONE));
}

/* The seed's alphas (S0-15) to the nearest 1/1024: 0.7 -> 717, 0.3 -> 307. */
TEST(seed_alphas_in_fixed_point)
{
	ASSERT_EQ(717ULL, bi_ewma_u64(0, BI_FP_ONE, BI_ALPHA_F_FP));
	ASSERT_EQ(717ULL, bi_ewma_u64(0, BI_FP_ONE, BI_ALPHA_REJ_FP));
	ASSERT_EQ(307ULL, bi_ewma_u64(0, BI_FP_ONE, BI_ALPHA_L_FP));
}

TEST(rate_per_second)
{
	ASSERT_EQ(0ULL, bi_rate_per_sec(5, 0, 1));
	ASSERT_EQ(10ULL, bi_rate_per_sec(5, BI_NSEC_PER_SEC / 2, 1));
	ASSERT_EQ(3072ULL, bi_rate_per_sec(3, BI_NSEC_PER_SEC, BI_FP_ONE));
	ASSERT_EQ(33ULL, bi_rate_per_sec(10, 300 * BI_NSEC_PER_MSEC, 1));	/* 33.3 */
}

TEST_HARNESS_MAIN
