// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_rate_test.c - the request-rate cap controller (seed 000): EWMA,
 * cases A/B/C/D, initial caps, shedding.
 * Expected numbers are the catalogue's (d) parts of S0-02, S0-08..S0-13,
 * S0-15, S0-16, S0-21.
 */
#include <stdlib.h>
#include <string.h>
#include "ctl_rate.h"
#include "ewma.h"
#include "kselftest_harness.h"

/* |seen - want| <= tol, with the tolerance visible at the call */
#define ASSERT_CLOSE(want, seen, tol) \
	ASSERT_LE(llabs((long long)(seen) - (long long)(want)), (long long)(tol))

#define FP(x)		((u64)(x) << BI_FP_SHIFT)
#define TICK_NS		(100 * BI_NSEC_PER_MSEC)

static void setup(struct bi_rate_ctl *c, struct bi_rate_params *p, u64 cap_rps,
		  u64 l_ups, u64 f_units, u64 committed)
{
	bi_rate_params_init(p, committed);
	p->cap_max_mrps = 1000000000ULL;	/* no upper clamp in these tests */
	p->overshoot_guard = false;		/* the seed's formulas, unguarded */
	bi_rate_init(c, cap_rps * BI_MRPS_PER_RPS);
	c->l_fp = FP(l_ups);
	c->f_fp = FP(f_units);
	c->f_primed = true;
}

/* S0-15 / A-01: from S0 = 10 with inputs 0, 0, 0; +-0.01 = +-10/1024 */
TEST(ewma_seed_alphas)
{
	u64 s = FP(10);

	s = bi_ewma_u64(s, 0, BI_ALPHA_F_FP);
	ASSERT_CLOSE(3072, s, 10);		/* 3.00 */
	s = bi_ewma_u64(s, 0, BI_ALPHA_F_FP);
	ASSERT_CLOSE(922, s, 10);		/* 0.90 */
	s = bi_ewma_u64(s, 0, BI_ALPHA_F_FP);
	ASSERT_CLOSE(276, s, 10);		/* 0.27 */

	s = FP(10);
	s = bi_ewma_u64(s, 0, BI_ALPHA_L_FP);
	ASSERT_CLOSE(7168, s, 10);		/* 7.00 */
	s = bi_ewma_u64(s, 0, BI_ALPHA_L_FP);
	ASSERT_CLOSE(5018, s, 10);		/* 4.90 */
	s = bi_ewma_u64(s, 0, BI_ALPHA_L_FP);
	ASSERT_CLOSE(3512, s, 10);		/* 3.43 */
}

/* S0-08: X = 40, f = 4, n = 3 -> -3.33 per tick; 26.67, then 20.00 (+-0.01) */
TEST(case_a_lowers)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	setup(&c, &p, 30, 140, 4, 100);
	ASSERT_EQ(BI_RATE_CASE_A, bi_rate_adjust(&c, &p, true));
	ASSERT_CLOSE(26667, c.cap_mrps, 10);
	bi_rate_adjust(&c, &p, true);
	bi_rate_adjust(&c, &p, true);
	ASSERT_CLOSE(20000, c.cap_mrps, 10);
}

/* S0-12: with constant inputs the change after n ticks is X/f +-1 % */
TEST(incremental_sums_to_x_over_f)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;
	int i;

	setup(&c, &p, 100, 300, 4, 100);	/* X / f = 200 / 4 = 50 rps */
	for (i = 0; i < 3; i++)
		bi_rate_adjust(&c, &p, true);
	ASSERT_CLOSE(50000, 100000 - c.cap_mrps, 500);
}

/* S0-12: n = 1 is the single-step form: X / f at once (140 - 100 = 40, f 4: -10) */
TEST(single_step_when_n_is_one)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	setup(&c, &p, 30, 140, 4, 100);
	p.n_lower = 1;
	ASSERT_EQ(BI_RATE_CASE_A, bi_rate_adjust(&c, &p, true));
	ASSERT_CLOSE(20000, c.cap_mrps, 1);
}

/* S0-09: Y = 40, f = 4, m = 4 -> +2.5; without rejections no change */
TEST(case_b_raises_only_when_rejecting)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	setup(&c, &p, 20, 60, 4, 100);
	ASSERT_EQ(BI_RATE_CASE_B, bi_rate_adjust(&c, &p, true));
	ASSERT_EQ(22500, c.cap_mrps);

	setup(&c, &p, 20, 60, 4, 100);
	ASSERT_EQ(BI_RATE_CASE_D, bi_rate_adjust(&c, &p, false));
	ASSERT_EQ(20000, c.cap_mrps);
}

/*
 * S0-10: cap 10, C = 100, 5 rps of 500 units -> L = 2500: s L / f = 6.0.
 * still over at the next tick -> the case-A step without rejections.
 * With L <= C the rule is not triggered.
 */
TEST(case_c_proposes_then_steps)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	setup(&c, &p, 10, 2500, 500, 100);
	ASSERT_EQ(BI_RATE_CASE_C, bi_rate_adjust(&c, &p, false));
	ASSERT_EQ(6000, c.cap_mrps);
	/* (2500 - 100) / (500 * 3) = 1.6 */
	ASSERT_EQ(BI_RATE_CASE_C_STEP, bi_rate_adjust(&c, &p, false));
	ASSERT_EQ(4400, c.cap_mrps);

	setup(&c, &p, 10, 100, 500, 100);
	ASSERT_EQ(BI_RATE_CASE_D, bi_rate_adjust(&c, &p, false));
	ASSERT_EQ(10000, c.cap_mrps);
}

/*
 * case C's proposal is applied once per episode of being over C
 * without rejections.  An episode ends when L is back within C (case D)
 * or rejections start (A or B): over again after that, C proposes anew.
 */
TEST(a_05_case_c_once_per_episode)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	setup(&c, &p, 10, 2500, 500, 100);
	ASSERT_EQ(BI_RATE_CASE_C, bi_rate_adjust(&c, &p, false));
	ASSERT_EQ(BI_RATE_CASE_C_STEP, bi_rate_adjust(&c, &p, false));
	c.l_fp = FP(100);			/* within C: the episode ends */
	ASSERT_EQ(BI_RATE_CASE_D, bi_rate_adjust(&c, &p, false));
	c.l_fp = FP(2500);
	c.cap_mrps = 10000;
	ASSERT_EQ(BI_RATE_CASE_C, bi_rate_adjust(&c, &p, false));
	ASSERT_EQ(6000, c.cap_mrps);
	ASSERT_EQ(BI_RATE_CASE_A, bi_rate_adjust(&c, &p, true));
	c.cap_mrps = 10000;
	ASSERT_EQ(BI_RATE_CASE_C, bi_rate_adjust(&c, &p, false));
	ASSERT_EQ(6000, c.cap_mrps);
	c.l_fp = FP(60);			/* under C, rejecting */
	ASSERT_EQ(BI_RATE_CASE_B, bi_rate_adjust(&c, &p, true));
	c.l_fp = FP(2500);
	ASSERT_EQ(BI_RATE_CASE_C, bi_rate_adjust(&c, &p, false));
}

/*
 * S0-02 / S0-11: counters producing each of the four combinations give
 * A/B/C/D through the whole tick (EWMA with alpha 1 so L is the sample).
 */
TEST(four_cases_from_counters)
{
	static const struct {
		u64 arrived, throttled, completed, units;
		enum bi_rate_case want;
	} tab[] = {
		{ 40, 10, 30, 150, BI_RATE_CASE_A },	/* L 1500 > C, rejecting */
		{ 40, 10, 30, 30, BI_RATE_CASE_B },	/* L 300 < C, rejecting */
		{ 20, 0, 20, 200, BI_RATE_CASE_C },	/* L 2000 > C, none rejected */
		{ 20, 0, 20, 20, BI_RATE_CASE_D },	/* L 200 < C, none rejected */
	};
	unsigned int i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct bi_rate_stats s = { tab[i].arrived, tab[i].throttled,
					   tab[i].completed, tab[i].units };
		struct bi_rate_params p;
		struct bi_rate_ctl c;

		bi_rate_params_init(&p, 1000);
		p.alpha_l_fp = BI_FP_ONE;
		p.alpha_rej_fp = BI_FP_ONE;
		bi_rate_init(&c, 300 * BI_MRPS_PER_RPS);
		ASSERT_EQ(tab[i].want, bi_rate_tick(&c, &p, &s, TICK_NS));
	}
}

/*
 * S0-11: the request-rate check and the work check give the same case in
 * either order.  Rate first: rejecting ? (L > C ? A : L < C ? B : D) :
 * (L > C ? C : D).  Work first: L > C ? (rejecting ? A : C) : L < C ?
 * (rejecting ? B : D) : D.  Every combination, with L on C, one step
 * (1/1024 unit/s) either side of it and 100 units/s either side, must give
 * what both orders give; the far ones must move the cap (400 rps, f = 4)
 * the way their case says: A down, B up, C to s * L / f = 330 rps, D not
 * at all.
 */
static enum bi_rate_case rate_first(bool rejecting, s64 l_minus_c)
{
	if (rejecting)
		return l_minus_c > 0 ? BI_RATE_CASE_A :
		       l_minus_c < 0 ? BI_RATE_CASE_B : BI_RATE_CASE_D;
	return l_minus_c > 0 ? BI_RATE_CASE_C : BI_RATE_CASE_D;
}

static enum bi_rate_case work_first(bool rejecting, s64 l_minus_c)
{
	if (l_minus_c > 0)
		return rejecting ? BI_RATE_CASE_A : BI_RATE_CASE_C;
	if (l_minus_c < 0)
		return rejecting ? BI_RATE_CASE_B : BI_RATE_CASE_D;
	return BI_RATE_CASE_D;
}

TEST(s0_11_both_evaluation_orders)
{
	static const s64 l_minus_c[] = { -(s64)FP(100), -1, 0, 1, (s64)FP(100) };
	unsigned int i;
	int r;

	for (r = 0; r < 2; r++) {
		for (i = 0; i < sizeof(l_minus_c) / sizeof(l_minus_c[0]); i++) {
			s64 d = l_minus_c[i];
			bool far = d <= -(s64)FP(100) || d >= (s64)FP(100);
			enum bi_rate_case want = rate_first(r, d), got;
			struct bi_rate_params p;
			struct bi_rate_ctl c;

			ASSERT_EQ(want, work_first(r, d));
			setup(&c, &p, 400, 0, 4, 1000);
			c.l_fp = (u64)((s64)FP(1000) + d);	/* C = 1000 units/s */
			got = bi_rate_adjust(&c, &p, r);
			ASSERT_EQ(want, got) TH_LOG("rejecting %d, L - C %lld/1024", r,
						    (long long)d);
			if (got == BI_RATE_CASE_D)
				ASSERT_EQ(400000ULL, c.cap_mrps);
			if (!far)
				continue;
			if (got == BI_RATE_CASE_A)
				ASSERT_GT(400000ULL, c.cap_mrps);
			if (got == BI_RATE_CASE_B)
				ASSERT_LT(400000ULL, c.cap_mrps);
			if (got == BI_RATE_CASE_C)
				ASSERT_CLOSE(330000, c.cap_mrps, 1);
		}
	}
}

/* init sets every field, whatever the memory held before */
TEST(init_from_garbage)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	memset(&p, 0xa5, sizeof(p));
	bi_rate_params_init(&p, 1000);
	ASSERT_EQ(100ULL, p.cap_min_mrps);
	ASSERT_EQ(0ULL, p.cap_max_mrps);
	ASSERT_EQ(100 * BI_NSEC_PER_MSEC, p.tick_ns);	/* S0-14: the seed's tick */
	ASSERT_TRUE(p.overshoot_guard);
	memset(&c, 0xa5, sizeof(c));
	bi_rate_init(&c, 5000);
	ASSERT_FALSE(c.case_c_done);
	ASSERT_FALSE(c.f_primed);
	ASSERT_EQ(0U, c.rej_ppm);
	ASSERT_EQ((u64)BI_FP_ONE, c.f_fp);
	ASSERT_EQ(0ULL, c.rps_fp);
	ASSERT_EQ(0ULL, c.l_fp);
	ASSERT_EQ(0ULL, c.last_ns);
}

/*
 * S0-16: the rates are counts over the tick's real interval; the very
 * first tick, which has no previous one, assumes tick_ns.  Alpha 1, so the
 * smoothed rates are the samples: 100 bios of 3 units in the first tick
 * (100 ms assumed) are 1,000 rps and 3,000 units/s; the same counts over
 * the next 250 ms are 400 rps and 1,200 units/s; a tick with nothing
 * reads 0.
 */
TEST(s0_16_rates_over_the_real_interval)
{
	struct bi_rate_stats s = { 100, 0, 100, 300 }, none = { 0 };
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	bi_rate_params_init(&p, 100000);
	p.alpha_l_fp = BI_FP_ONE;
	bi_rate_init(&c, 1000 * BI_MRPS_PER_RPS);
	bi_rate_tick(&c, &p, &s, 5 * BI_NSEC_PER_SEC);
	ASSERT_EQ(FP(1000), c.rps_fp);
	ASSERT_EQ(FP(3000), c.l_fp);
	ASSERT_EQ(FP(3), c.f_fp);
	bi_rate_tick(&c, &p, &s, 5 * BI_NSEC_PER_SEC + 250 * BI_NSEC_PER_MSEC);
	ASSERT_EQ(FP(400), c.rps_fp);
	ASSERT_EQ(FP(1200), c.l_fp);
	bi_rate_tick(&c, &p, &none, 6 * BI_NSEC_PER_SEC);
	ASSERT_EQ(0ULL, c.rps_fp);
	ASSERT_EQ(0ULL, c.l_fp);
	ASSERT_EQ(FP(3), c.f_fp);		/* nothing completed: f kept */

	/* default alpha 0.3 from a fresh controller: nothing arrived reads 0 */
	bi_rate_params_init(&p, 100000);
	bi_rate_init(&c, 1000 * BI_MRPS_PER_RPS);
	bi_rate_tick(&c, &p, &none, TICK_NS);
	ASSERT_EQ(0ULL, c.rps_fp);
}

/*
 * The cap stays in [cap_min, C requests/s] (f >= 1 unit), or [cap_min,
 * cap_max] when cap_max is set, even when both ends are the same.
 */
TEST(clamp_ends)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	setup(&c, &p, 90, 10, 1, 100);		/* C = 100 units/s: 100 rps */
	p.cap_max_mrps = 0;
	ASSERT_EQ(BI_RATE_CASE_B, bi_rate_adjust(&c, &p, true));
	ASSERT_EQ(100000ULL, c.cap_mrps);	/* +22.5 rps, clamped */
	setup(&c, &p, 1, 10, 1, 100);
	p.cap_max_mrps = p.cap_min_mrps;	/* a one-value range */
	ASSERT_EQ(BI_RATE_CASE_B, bi_rate_adjust(&c, &p, true));
	ASSERT_EQ(p.cap_min_mrps, c.cap_mrps);
}

/*
 * "rejecting" is a throttled bio in this tick, or a smoothed
 * throttled fraction strictly above epsilon; nothing arrived is not
 * rejecting, even with epsilon 0.
 */
TEST(rejecting_edges)
{
	struct bi_rate_stats one = { 100000, 1, 100000, 400000 };	/* L 4M > C */
	struct bi_rate_stats idle = { 0, 0, 0, 0 };
	struct bi_rate_stats calm = { 1000, 0, 1000, 4000 };		/* L 40,000 > C */
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	bi_rate_params_init(&p, 1000);
	bi_rate_init(&c, 300 * BI_MRPS_PER_RPS);
	ASSERT_EQ(BI_RATE_CASE_A, bi_rate_tick(&c, &p, &one, TICK_NS));
	ASSERT_GT(p.eps_ppm, c.rej_ppm);	/* 10 ppm smoothed: under epsilon */

	p.eps_ppm = 0;
	bi_rate_init(&c, 300 * BI_MRPS_PER_RPS);
	ASSERT_EQ(BI_RATE_CASE_D, bi_rate_tick(&c, &p, &idle, TICK_NS));

	bi_rate_params_init(&p, 1000);
	p.alpha_rej_fp = 0;			/* the smoothed fraction holds */
	bi_rate_init(&c, 300 * BI_MRPS_PER_RPS);
	c.rej_ppm = p.eps_ppm;			/* exactly epsilon: not above */
	ASSERT_EQ(BI_RATE_CASE_C, bi_rate_tick(&c, &p, &calm, TICK_NS));
	bi_rate_init(&c, 300 * BI_MRPS_PER_RPS);
	c.rej_ppm = p.eps_ppm + 1;
	ASSERT_EQ(BI_RATE_CASE_A, bi_rate_tick(&c, &p, &calm, TICK_NS));
}

/* S0-15: f is primed by its first sample, then smoothed (alpha 0.7). */
TEST(f_primed_then_smoothed)
{
	struct bi_rate_stats two = { 10, 0, 10, 20 }, ten = { 10, 0, 10, 100 };
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	bi_rate_params_init(&p, 1000);
	bi_rate_init(&c, 300 * BI_MRPS_PER_RPS);
	bi_rate_tick(&c, &p, &two, TICK_NS);
	ASSERT_EQ(FP(2), c.f_fp);
	bi_rate_tick(&c, &p, &ten, 2 * TICK_NS);
	ASSERT_CLOSE(7782, c.f_fp, 3);		/* 0.7 x 10 + 0.3 x 2 = 7.6 */
}

/*
 * S0-13: the start is C x b: C = 10,000 units/s, b = 0.3 -> 3,000 rps; b = 1
 * is C itself.
 */
TEST(initial_caps)
{
	ASSERT_EQ(3000000, bi_rate_initial_cap_mrps(10000, BI_RATE_INIT_B_PERMILLE_DEF));
	ASSERT_EQ(10000000, bi_rate_initial_cap_mrps(10000, BI_PERMILLE));
}

/* S0-16: 2000 bios/s of 4 KiB -> arrival 2000 +-2 %, L 4000 +-2 %, f 2.00 +-0.05 */
TEST(monitored_quantities)
{
	struct bi_rate_stats s = { 200, 0, 200, 400 };
	struct bi_rate_params p;
	struct bi_rate_ctl c;
	u64 now = 0;
	int i;

	bi_rate_params_init(&p, 100000);
	bi_rate_init(&c, 10000 * BI_MRPS_PER_RPS);
	for (i = 0; i < 30; i++) {
		now += TICK_NS;
		bi_rate_tick(&c, &p, &s, now);
	}
	ASSERT_CLOSE(FP(2000), c.rps_fp, FP(40));
	ASSERT_CLOSE(FP(4000), c.l_fp, FP(80));
	ASSERT_CLOSE(FP(2), c.f_fp, 51);
}

/*
 * one tick with rejections, then none: the smoothed throttle rate
 * (alpha 0.7) falls below epsilon and the controller stops raising.
 */
TEST(rejection_rate_decays_to_zero)
{
	struct bi_rate_stats rej = { 100, 50, 50, 50 };
	struct bi_rate_stats clean = { 50, 0, 50, 50 };
	struct bi_rate_params p;
	struct bi_rate_ctl c;
	u64 now = TICK_NS;
	int i;

	bi_rate_params_init(&p, 100000);
	bi_rate_init(&c, 1000 * BI_MRPS_PER_RPS);
	ASSERT_EQ(BI_RATE_CASE_B, bi_rate_tick(&c, &p, &rej, now));
	ASSERT_CLOSE(350000, c.rej_ppm, 400);	/* 0.7 x 50 % */
	/* 350000 x 0.3^k < 1000 once k >= 5 */
	for (i = 0; i < 4; i++) {
		now += TICK_NS;
		ASSERT_EQ(BI_RATE_CASE_B, bi_rate_tick(&c, &p, &clean, now));
	}
	now += TICK_NS;
	ASSERT_EQ(BI_RATE_CASE_D, bi_rate_tick(&c, &p, &clean, now));
	ASSERT_LT(c.rej_ppm, p.eps_ppm + 1);
}

/* S0-21: only large non-metadata reads are shed, only while overloaded */
TEST(large_read_shedding)
{
	struct bi_io big = { .bytes = 1 << 20, .op = BI_OP_READ };
	struct bi_io small = { .bytes = 4096, .op = BI_OP_READ };
	struct bi_io wr = { .bytes = 1 << 20, .op = BI_OP_WRITE };
	struct bi_io meta = { .bytes = 1 << 20, .op = BI_OP_READ, .flags = BI_IO_META };

	ASSERT_TRUE(bi_rate_shed_large_read(&big, true, BI_LARGE_READ_BYTES_DEF));
	ASSERT_FALSE(bi_rate_shed_large_read(&big, false, BI_LARGE_READ_BYTES_DEF));
	ASSERT_FALSE(bi_rate_shed_large_read(&small, true, BI_LARGE_READ_BYTES_DEF));
	ASSERT_FALSE(bi_rate_shed_large_read(&wr, true, BI_LARGE_READ_BYTES_DEF));
	ASSERT_FALSE(bi_rate_shed_large_read(&meta, true, BI_LARGE_READ_BYTES_DEF));
	/* "at least shed_bytes": a read of exactly the threshold is shed */
	ASSERT_TRUE(bi_rate_shed_large_read(&small, true, 4096));
	ASSERT_FALSE(bi_rate_shed_large_read(&small, true, 4097));
}

/*
 * Overshoot guard: with L lagging at 140 and f = 4, case A stops at
 * C / f = 25 instead of going on to 20; case B stops at C / f too.
 */
TEST(overshoot_guard_stops_at_c_over_f)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;
	int i;

	setup(&c, &p, 30, 140, 4, 100);
	p.overshoot_guard = true;
	for (i = 0; i < 3; i++)
		bi_rate_adjust(&c, &p, true);
	ASSERT_EQ(25000, c.cap_mrps);

	setup(&c, &p, 24, 20, 4, 100);
	p.overshoot_guard = true;
	bi_rate_adjust(&c, &p, true);		/* +5 would give 29 */
	ASSERT_EQ(25000, c.cap_mrps);

	/* a cap already at C / f stays there, whichever way L lags */
	setup(&c, &p, 25, 20, 4, 100);
	p.overshoot_guard = true;
	ASSERT_EQ(BI_RATE_CASE_B, bi_rate_adjust(&c, &p, true));
	ASSERT_EQ(25000, c.cap_mrps);
	setup(&c, &p, 25, 140, 4, 100);
	p.overshoot_guard = true;
	ASSERT_EQ(BI_RATE_CASE_A, bi_rate_adjust(&c, &p, true));
	ASSERT_EQ(25000, c.cap_mrps);
}

/*
 * Without the guard (the seed's formulas) A and B step past C / f: from 20
 * with L 140, f 4 (C / f = 25), A gives 20 - 40 / 12 = 16.67; from 30 with
 * L 60, B gives 30 + 40 / 16 = 32.5.
 */
TEST(unguarded_steps_pass_c_over_f)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	setup(&c, &p, 20, 140, 4, 100);
	ASSERT_EQ(BI_RATE_CASE_A, bi_rate_adjust(&c, &p, true));
	ASSERT_CLOSE(16667, c.cap_mrps, 1);
	setup(&c, &p, 30, 60, 4, 100);
	ASSERT_EQ(BI_RATE_CASE_B, bi_rate_adjust(&c, &p, true));
	ASSERT_EQ(32500, c.cap_mrps);
}

/*
 * The module folds per-CPU counters while bios complete, so a tick may
 * count a completion and not yet its units: f from such a tick is 0.  f
 * stays at least 1/1024 unit, every step divides by it, and the next
 * tick's real sample takes over (alpha 0.7: 0.7 x 4 + 0.3 x 1/1024).
 */
TEST(a_tick_without_units_keeps_f_positive)
{
	struct bi_rate_stats torn = { 1, 0, 1, 0 }, real = { 10, 1, 10, 40 };
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	bi_rate_params_init(&p, 1000);
	bi_rate_init(&c, 300 * BI_MRPS_PER_RPS);
	ASSERT_EQ(BI_RATE_CASE_D, bi_rate_tick(&c, &p, &torn, TICK_NS));
	ASSERT_EQ(1ULL, c.f_fp);
	ASSERT_EQ(300000ULL, c.cap_mrps);
	ASSERT_EQ(BI_RATE_CASE_B, bi_rate_tick(&c, &p, &real, 2 * TICK_NS));
	ASSERT_CLOSE(2868, c.f_fp, 1);
	ASSERT_LE(300000ULL, c.cap_mrps);
}

/* The cap never leaves [cap_min, C] */
TEST(cap_is_clamped)
{
	struct bi_rate_params p;
	struct bi_rate_ctl c;

	bi_rate_params_init(&p, 100);
	bi_rate_init(&c, 5 * BI_MRPS_PER_RPS);
	c.l_fp = FP(100000);
	c.f_fp = FP(1);
	bi_rate_adjust(&c, &p, true);
	ASSERT_EQ(p.cap_min_mrps, c.cap_mrps);
	c.l_fp = 0;
	c.cap_mrps = 99 * BI_MRPS_PER_RPS;
	bi_rate_adjust(&c, &p, true);
	ASSERT_EQ(100 * BI_MRPS_PER_RPS, c.cap_mrps);
}

TEST_HARNESS_MAIN
