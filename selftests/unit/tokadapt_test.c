// SPDX-License-Identifier: GPL-2.0
/*
 * tokadapt_test.c - tick-time adaptation (kmod/core/tokadapt.c): the
 * adaptive initial deduction (S0-29), min_tokens=auto together with it
 * (S0-30), and request/work/auto selection (S0-33, S0-34, A-42).
 */
#include <string.h>
#include "tokadapt.h"
#include "bucket.h"
#include "admit.h"
#include "kselftest_harness.h"

#define MS	BI_NSEC_PER_MSEC
#define SEC	BI_NSEC_PER_SEC

static void feed(struct bi_sample *s, int n, u64 units)
{
	while (n--)
		bi_sample_add(s, units);
}

/*
 * S0-29: initial 1, then 100 consecutive 64 KiB writes (50 per tick):
 * within 2 ticks the initial is in [30, 32]; then 4 KiB reads: 2 within 5.
 */
TEST(s0_29_adaptive_initial)
{
	struct bi_sample cpu[2] = { 0 }, tick;
	struct bi_adapt a;
	int i;

	bi_adapt_init(&a, 1, true);
	for (i = 0; i < 2; i++) {
		tick = (struct bi_sample){ 0 };
		feed(&cpu[0], 25, 32);			/* two CPUs' samples */
		feed(&cpu[1], 25, 32);
		bi_sample_fold(&tick, &cpu[0]);
		bi_sample_fold(&tick, &cpu[1]);
		ASSERT_EQ(0ULL, cpu[0].n);
		bi_adapt_tick(&a, &tick);
	}
	ASSERT_LE(30, a.initial);
	ASSERT_GE(32, a.initial);
	for (i = 0; i < 5; i++) {
		tick = (struct bi_sample){ 0 };
		feed(&tick, 50, 2);
		bi_adapt_tick(&a, &tick);
	}
	ASSERT_EQ(2, a.initial);
}

/* S0-29: no change while differences are small; disabled = seed default. */
TEST(s0_29_dead_zone)
{
	struct bi_sample s = { 0 };
	struct bi_adapt a;

	bi_adapt_init(&a, 32, true);
	feed(&s, 100, 36);				/* 12.5 % < 25 % */
	ASSERT_FALSE(bi_adapt_tick(&a, &s));
	ASSERT_EQ(32, a.initial);
	s = (struct bi_sample){ 0 };
	ASSERT_FALSE(bi_adapt_tick(&a, &s));		/* no completions */
	bi_adapt_init(&a, 1, false);
	feed(&s, 100, 32);
	ASSERT_FALSE(bi_adapt_tick(&a, &s));
	ASSERT_EQ(1, a.initial);
}

/*
 * S0-29 in exact fixed point (x1024): a tick of n bios weighs the old
 * average by (1 - 0.7)^n, by squaring (307/1024, 92, 27, ...); the mean
 * keeps its fraction.  One 3-unit bio from 1.0: 0.3 x 1024 + 0.7 x 3072 =
 * 2458 (2.40), rounded to an initial of 2.  Three bios of 10 units (3 1/3,
 * 3413): 27/1024 of the old, 997/1024 of the mean = 3392.
 */
TEST(s0_29_exact_fixed_point)
{
	struct bi_sample s = { 1, 3, 9 };
	struct bi_adapt a;

	bi_adapt_init(&a, 1, true);
	ASSERT_TRUE(bi_adapt_tick(&a, &s));
	ASSERT_EQ(2458ULL, a.ewma_fp);
	ASSERT_EQ(2, a.initial);
	s = (struct bi_sample){ 3, 10, 34 };
	bi_adapt_tick(&a, &s);
	ASSERT_EQ((27 * 2458ULL + 997 * 3413ULL) >> 10, a.ewma_fp);
	ASSERT_EQ(3, a.initial);
	/* no completions: nothing moves */
	s = (struct bi_sample){ 0, 0, 0 };
	ASSERT_FALSE(bi_adapt_tick(&a, &s));
	ASSERT_EQ(3, a.initial);
	/* an initial of 0 or less starts at 1 */
	bi_adapt_init(&a, -4, true);
	ASSERT_EQ(1, a.initial);
	ASSERT_EQ(1024ULL, a.ewma_fp);
}

/*
 * The dead zone's edges: from 4, an average of exactly 5.0 (25 %) keeps
 * it, 5 + 1/1024 moves it to 5; from 1, 1.27 is outside the zone but
 * still rounds to 1, which is no change.  1024 bios in one tick leave
 * nothing of the old average.
 */
TEST(s0_29_dead_zone_edges)
{
	struct bi_sample s = { 1024, 5 * 1024, 0 };
	struct bi_adapt a;

	bi_adapt_init(&a, 4, true);
	ASSERT_FALSE(bi_adapt_tick(&a, &s));
	ASSERT_EQ(5120ULL, a.ewma_fp);
	ASSERT_EQ(4, a.initial);
	s.units++;
	ASSERT_TRUE(bi_adapt_tick(&a, &s));
	ASSERT_EQ(5, a.initial);
	bi_adapt_init(&a, 1, true);
	s = (struct bi_sample){ 1024, 1300, 0 };
	ASSERT_FALSE(bi_adapt_tick(&a, &s));
	ASSERT_EQ(1300ULL, a.ewma_fp);
	ASSERT_EQ(1, a.initial);
}

/*
 * S0-33's selector at its edges: a committed rate of 999 units/s is low
 * (work), 1000 is not; one bio is not a window; sizes 1 and 3 have a CV
 * of exactly 0.5 (request tokens), 1 and 4 above it (work).
 */
TEST(s0_33_selector_edges)
{
	struct bi_sample even = { 100, 800, 6400 };
	struct bi_sample one = { 1, 512, 512 * 512 };
	struct bi_sample half = { 2, 4, 10 }, over = { 2, 5, 17 };
	struct bi_modesel m;

	bi_mode_init(&m, BI_MODE_AUTO);
	ASSERT_EQ(BI_MODE_WORK, bi_mode_tick(&m, &even, 999));
	ASSERT_EQ(BI_MODE_REQUEST, bi_mode_tick(&m, &even, 1000));
	ASSERT_EQ(BI_MODE_REQUEST, bi_mode_tick(&m, &one, 1000));
	ASSERT_EQ(BI_MODE_REQUEST, bi_mode_tick(&m, &half, 1000));
	ASSERT_EQ(BI_MODE_WORK, bi_mode_tick(&m, &over, 1000));
	/* auto keeps request tokens in force; a bad setting means auto */
	bi_mode_tick(&m, &even, 1000);
	bi_mode_set(&m, BI_MODE_AUTO + 7);
	ASSERT_EQ(BI_MODE_AUTO, m.setting);
	ASSERT_EQ(BI_MODE_REQUEST, m.active);
	bi_mode_set(&m, BI_MODE_WORK);
	ASSERT_EQ(BI_MODE_WORK, bi_mode_tick(&m, &even, 1000));	/* fixed */
}

/* S0-30: min = auto follows the adapted initial: 31 throttled, 32 admitted. */
TEST(s0_30_min_auto_follows)
{
	struct bi_policy p;
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_sample s = { 0 };
	struct bi_ticket t;
	struct bi_adapt a;
	int c;

	bi_adapt_init(&a, 1, true);
	feed(&s, 64, 32);
	bi_adapt_tick(&a, &s);
	ASSERT_EQ(32, a.initial);
	bi_policy_priority(&p, BI_CLASS_LO);
	p.min_tokens = BI_MIN_TOKENS_AUTO;
	for (c = 0; c < BI_NR_CLASSES; c++)
		bi_bucket_init(&cls[c], 0, 100, 31, 0);
	ASSERT_EQ(BI_VERDICT_DELAY, bi_admit(cls, &p, a.initial, 0, &t));
	cls[BI_CLASS_LO].tokens = 32;
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &p, a.initial, 0, &t));
}

/*
 * S0-33: auto mode.  A 1 s window of 4 KiB / 1 MiB bios alternating every
 * 200 ms -> work; uniform 4 KiB at C = 100,000 units/s -> request; a low
 * committed rate -> work; an explicit mode applies to the next bio.
 */
TEST(s0_33_mode_selection)
{
	struct bi_sample win = { 0 };
	struct bi_modesel m;
	int i;

	bi_mode_init(&m, BI_MODE_AUTO);
	ASSERT_EQ(BI_MODE_WORK, m.active);
	for (i = 0; i < 5; i++)
		feed(&win, i & 1 ? 20 : 400, i & 1 ? 512 : 2);
	ASSERT_EQ(BI_MODE_WORK, bi_mode_tick(&m, &win, 100000));
	win = (struct bi_sample){ 0 };
	feed(&win, 2000, 2);
	ASSERT_EQ(BI_MODE_REQUEST, bi_mode_tick(&m, &win, 100000));
	ASSERT_EQ(1, bi_mode_cost(&m, 512));
	ASSERT_EQ(BI_MODE_WORK, bi_mode_tick(&m, &win, 999));
	/* CV exactly at the limit stays request: two sizes 1 and 3 -> CV 0.5 */
	win = (struct bi_sample){ 0 };
	feed(&win, 10, 1);
	feed(&win, 10, 3);
	ASSERT_EQ(BI_MODE_REQUEST, bi_mode_tick(&m, &win, 100000));
	bi_mode_set(&m, BI_MODE_WORK);
	ASSERT_EQ(512, bi_mode_cost(&m, 512));		/* the next bio */
	ASSERT_EQ(BI_MODE_WORK, bi_mode_tick(&m, &win, 100000));	/* sticks */
	bi_mode_set(&m, BI_MODE_REQUEST);
	ASSERT_EQ(1, bi_mode_cost(&m, 512));
}

/*
 * S0-33 over windows too large for exact products (2^54 bios): halves of
 * sizes 10 and 29 (CV^2 0.237, request tokens) and 10 and 31 (0.262, work
 * tokens) still come out on their side of 0.5; a selector started on
 * garbage memory begins in work mode.
 */
TEST(s0_33_selector_scales_huge_windows)
{
	const u64 half = 1ULL << 53;
	struct bi_sample below = { 2 * half, 39 * half, 941 * half };
	struct bi_sample above = { 2 * half, 41 * half, 1061 * half };
	struct bi_sample wide;
	struct bi_modesel m;

	memset(&m, 0xa5, sizeof(m));
	m.active = BI_MODE_REQUEST;
	bi_mode_init(&m, BI_MODE_AUTO);
	ASSERT_EQ(BI_MODE_WORK, m.active);
	ASSERT_EQ(BI_MODE_REQUEST, bi_mode_tick(&m, &below, 1000));
	ASSERT_EQ(BI_MODE_WORK, bi_mode_tick(&m, &above, 1000));
	ASSERT_EQ(BI_MODE_REQUEST, bi_mode_tick(&m, &below, 1000));
	/*
	 * 2^56 bios, halves of 1 and 4 units (CV^2 0.36): the sum of squares
	 * stays under 2^60, yet the products overflow 128 bits unless the
	 * count and the sum alone bring the window down.
	 */
	wide = (struct bi_sample){ 1ULL << 56, 5ULL << 55, 17ULL << 55 };
	ASSERT_EQ(BI_MODE_WORK, bi_mode_tick(&m, &wide, 1000));
}

/*
 * S0-33 conservation across a switch and S0-34 (unit analogue): a tenant
 * with a request bucket (cap 100/s, burst 3) and a work bucket (4000
 * units/s, 50 ms = 200 units).  One bio per ms; bios go from 4 KiB (2
 * units) to 1 MiB (512) at t = 1 s.  The tenant runs @mode, the other
 * mechanism in [0.5 s, 1 s), @mode again from 1 s.  Each phase's admitted
 * bios show which bucket was in force: request tokens pass ~100 bios/s
 * whatever their size, work tokens 4000 units/s (all 2-unit bios at 1 per
 * ms, ~8 of 512 units a second).
 */
struct phases {
	u64 bios[3];		/* admitted in [0, 0.5 s), [0.5 s, 1 s), [1 s, 2 s) */
	u64 units;		/* units admitted in [1 s, 2 s) */
};

static struct phases after_switch(u8 mode)
{
	struct bi_bucket req, work;
	struct bi_modesel m;
	struct phases ph = { { 0 }, 0 };
	u64 t;

	bi_mode_init(&m, mode);
	bi_bucket_init(&req, 100, 3, 3, 0);
	bi_bucket_init(&work, 4000, (s64)bi_bucket_capacity(4000, 50), 200, 0);
	for (t = 0; t < 2 * SEC; t += MS) {
		u64 u = t < SEC ? 2 : 512;
		struct bi_bucket *b;

		if (t == SEC / 2)
			bi_mode_set(&m, mode == BI_MODE_WORK ? BI_MODE_REQUEST :
							      BI_MODE_WORK);
		if (t == SEC)
			bi_mode_set(&m, mode);
		b = m.active == BI_MODE_REQUEST ? &req : &work;
		if (!bi_bucket_try_charge(b, 1, bi_mode_cost(&m, (s64)u), BI_NO_FLOOR, t))
			continue;
		ph.bios[t < SEC / 2 ? 0 : t < SEC ? 1 : 2]++;
		if (t >= SEC)
			ph.units += u;
	}
	return ph;
}

TEST(s0_33_34_switch_and_overadmission)
{
	struct phases work = after_switch(BI_MODE_WORK);
	struct phases req = after_switch(BI_MODE_REQUEST);

	/* work tokens: every 2-unit bio passes (2000 of 4000 units/s) */
	ASSERT_EQ(500ULL, work.bios[0]);
	/* request tokens in between: 0.5 s at 100/s plus the burst of 3 */
	ASSERT_LE(50ULL, work.bios[1]);
	ASSERT_GE(53ULL, work.bios[1]);
	/* 1 MiB bios on work tokens: rate + capacity, give or take one bio */
	ASSERT_GE(4000ULL + 200 + 512, work.units);
	ASSERT_LE(4000ULL + 200 - 512, work.units);

	ASSERT_LE(50ULL, req.bios[0]);
	ASSERT_GE(53ULL, req.bios[0]);
	ASSERT_EQ(500ULL, req.bios[1]);
	/* 1 MiB bios on request tokens: ~100 of them, 12 times the work cap */
	ASSERT_LE(100ULL, req.bios[2]);
	ASSERT_GE(103ULL, req.bios[2]);
	ASSERT_EQ(req.bios[2] * 512, req.units);
}

TEST_HARNESS_MAIN
