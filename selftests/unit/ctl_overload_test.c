// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_overload_test.c - overload detection, the throttle multiplier and
 * victim selection (seed 002).  Expected numbers are the catalogue's (d)
 * parts of S2-03..S2-17 with the A-23 defaults.
 */
#include <string.h>
#include "ctl_overload.h"
#include "io.h"
#include "kselftest_harness.h"

#define TICK_NS		(100 * BI_NSEC_PER_MSEC)

static const struct bi_ovl_stats over = { 100, 50, -1000 };	/* 50 % missed */
static const struct bi_ovl_stats clean = { 100, 0, 5 * BI_NSEC_PER_MSEC };

static bool tick(struct bi_ovl *o, const struct bi_ovl_params *p,
		 const struct bi_ovl_stats *s)
{
	return bi_ovl_tick(o, p, s, false, 0);
}

static u32 count_victims(struct bi_ovl *o, u8 rank, u32 nr)
{
	u32 i, v = 0;

	for (i = 0; i < nr; i++)
		v += bi_ovl_victim(o, rank, false);
	return v;
}

/* S2-03: more than the threshold (10 %) of the window missed */
TEST(threshold_is_strict)
{
	struct bi_ovl_stats ten = { 100, 10, 0 }, eleven = { 100, 11, 0 }, all = { 7, 7, 0 };
	struct bi_ovl_params p;
	struct bi_ovl o;

	bi_ovl_params_init(&p);
	p.window_ticks = 1;
	bi_ovl_init(&o, &p);
	ASSERT_FALSE(tick(&o, &p, &ten));
	ASSERT_EQ(100, o.miss_permille);
	ASSERT_TRUE(tick(&o, &p, &eleven));
	/* every bio missed: 1000 permille, the scale's top */
	ASSERT_TRUE(tick(&o, &p, &all));
	ASSERT_EQ(1000, o.miss_permille);
}

/* init sets every field, whatever the memory held before */
TEST(init_from_garbage)
{
	struct bi_ovl_tenant t;
	struct bi_ovl_params p;
	struct bi_ovl o;

	memset(&p, 0xa5, sizeof(p));
	bi_ovl_params_init(&p);
	ASSERT_EQ(10U, p.window_ticks);
	ASSERT_EQ(0U, p.m_init);
	ASSERT_FALSE(p.simple);
	ASSERT_FALSE(p.ideal);
	memset(&o, 0xa5, sizeof(o));
	bi_ovl_init(&o, &p);
	ASSERT_EQ(0U, o.miss_permille);
	ASSERT_EQ(0ULL, o.transitions);
	ASSERT_FALSE(o.any_above_commit);
	ASSERT_FALSE(o.overloaded);
	ASSERT_EQ(0U, o.m);
	/* every slot of the window is empty: a clean tick shows 0 % missed */
	ASSERT_FALSE(tick(&o, &p, &clean));
	ASSERT_EQ(0U, o.miss_permille);
	ASSERT_EQ(100ULL, o.sum_completed);
	ASSERT_EQ(0ULL, o.transitions);

	memset(&t, 0xa5, sizeof(t));
	bi_ovl_tenant_init(&t);
	t.threshold_permille = 100;
	ASSERT_FALSE(bi_ovl_tenant_tick(&t, &p, 100, 0));
	ASSERT_EQ(0U, t.miss_permille);
}

/* A window of 0 ticks is a window of 1. */
TEST(window_of_zero_is_one)
{
	struct bi_ovl_params p;
	struct bi_ovl o;

	bi_ovl_params_init(&p);
	p.window_ticks = 0;
	bi_ovl_init(&o, &p);
	ASSERT_TRUE(tick(&o, &p, &over));
	ASSERT_FALSE(tick(&o, &p, &clean));
	ASSERT_EQ(0U, o.miss_permille);
}

/*
 * Anti-windup (bi_ovl_tick): once overloaded, M rises again only while the
 * newest tick is itself over the threshold (strictly: 10 % exactly holds),
 * or a tenant's signal or a hint says so.
 */
TEST(raise_only_while_the_newest_tick_misses)
{
	struct bi_ovl_stats at = { 1000, 100, 0 }, above = { 1000, 101, 0 };
	struct bi_ovl_params p;
	struct bi_ovl o;

	bi_ovl_params_init(&p);
	bi_ovl_init(&o, &p);
	ASSERT_TRUE(tick(&o, &p, &over));
	ASSERT_EQ(20U, o.m);
	ASSERT_TRUE(tick(&o, &p, &at));		/* window 13.6 %: still over */
	ASSERT_EQ(20U, o.m);			/* the newest tick is not: hold */
	ASSERT_TRUE(tick(&o, &p, &above));
	ASSERT_EQ(40U, o.m);

	/* a tenant's signal alone, tick after tick, on a clean device */
	bi_ovl_init(&o, &p);
	ASSERT_TRUE(bi_ovl_tick(&o, &p, &clean, true, 0));
	ASSERT_TRUE(bi_ovl_tick(&o, &p, &clean, true, 0));
	ASSERT_EQ(40U, o.m);
}

/* S2-13: slack exactly theta, or exactly theta + band, holds M. */
TEST(ideal_band_edges)
{
	struct bi_ovl_params p;
	struct bi_ovl o;
	struct bi_ovl_stats s = { 100, 0, 0 };
	int i;

	bi_ovl_params_init(&p);
	p.ideal = true;
	p.window_ticks = 1;
	p.holdoff_ticks = 0;
	bi_ovl_init(&o, &p);
	o.m = 10;
	s.slack_min_ns = (s64)p.theta_ns;
	tick(&o, &p, &s);
	ASSERT_EQ(10U, o.m);
	s.slack_min_ns = (s64)p.theta_ns - 1;
	tick(&o, &p, &s);
	ASSERT_EQ(11U, o.m);
	s.slack_min_ns = (s64)(p.theta_ns + p.band_ns);
	tick(&o, &p, &s);
	ASSERT_EQ(11U, o.m);
	s.slack_min_ns = (s64)(p.theta_ns + p.band_ns) + 1;
	for (i = 0; i < 2; i++)
		tick(&o, &p, &s);
	ASSERT_EQ(9U, o.m);
}

/*
 * S2-09: victims deferred to a tenant above its commitment are owed for
 * the tick only: after the tick, an above-commitment bio that is not due
 * is not a victim.
 */
TEST(owed_victims_expire_with_the_tick)
{
	struct bi_ovl_params p;
	struct bi_ovl o;

	bi_ovl_params_init(&p);
	bi_ovl_init(&o, &p);
	o.any_above_commit = true;
	o.m = 25;				/* rank 2 (BE): 50 % */
	ASSERT_FALSE(bi_ovl_victim(&o, 2, false));	/* not due */
	ASSERT_FALSE(bi_ovl_victim(&o, 2, false));	/* due: owed */
	ASSERT_EQ(1U, o.owed[2]);
	tick(&o, &p, &clean);			/* hold-off: M stays 25 */
	ASSERT_EQ(25U, o.m);
	ASSERT_EQ(0U, o.owed[2]);
	ASSERT_FALSE(bi_ovl_victim(&o, 2, true));	/* 50: not due */
	ASSERT_TRUE(bi_ovl_victim(&o, 2, true));	/* 100: due */
}

/* S2-04: misses in one tick: W = 1 flags 1 tick, W = 10 keeps them 10 ticks */
TEST(window_length)
{
	struct bi_ovl_stats quiet = { 500, 0, BI_NSEC_PER_MSEC };
	struct bi_ovl_stats burst = { 1000, 1000, -1 };
	struct bi_ovl_params p;
	struct bi_ovl o;
	int i;

	bi_ovl_params_init(&p);
	p.window_ticks = 1;
	bi_ovl_init(&o, &p);
	ASSERT_TRUE(tick(&o, &p, &burst));
	ASSERT_FALSE(tick(&o, &p, &quiet));

	p.window_ticks = 10;
	bi_ovl_init(&o, &p);
	ASSERT_TRUE(tick(&o, &p, &burst));
	for (i = 1; i < 10; i++) {
		ASSERT_TRUE(tick(&o, &p, &quiet));	/* >= 1000 / 5500 */
		ASSERT_GT(o.miss_permille, 99);
	}
	ASSERT_FALSE(tick(&o, &p, &quiet));		/* the burst left the window */
	ASSERT_EQ(0, o.miss_permille);
}

/* S2-05: an unloaded run never throttles */
TEST(bootstrap_stays_zero)
{
	struct bi_ovl_params p;
	struct bi_ovl o;
	int i;

	bi_ovl_params_init(&p);
	bi_ovl_init(&o, &p);
	for (i = 0; i < 200; i++)
		ASSERT_FALSE(tick(&o, &p, &clean));
	ASSERT_EQ(0, o.m);
	ASSERT_EQ(0, count_victims(&o, 2, 10000));
}

/* S2-07: T = 20: M = 20 then 40; of 10,000 bios 2000 +-1, then 4000 +-1 */
TEST(aggressive_increase_and_exact_fractions)
{
	struct bi_ovl_params p;
	struct bi_ovl o;
	u32 v;

	bi_ovl_params_init(&p);
	bi_ovl_init(&o, &p);
	tick(&o, &p, &over);
	ASSERT_EQ(20, o.m);
	v = count_victims(&o, 1, 10000);
	ASSERT_LE(v, 2001);
	ASSERT_GE(v, 1999);
	tick(&o, &p, &over);
	ASSERT_EQ(40, o.m);
	v = count_victims(&o, 1, 10000);
	ASSERT_LE(v, 4001);
	ASSERT_GE(v, 3999);
}

/* S2-08, A-25: T = 10 -> 10 / 20 / 30 %; M = 40 -> 40 / 80 / 100 % */
TEST(priority_weighted)
{
	struct bi_ovl_params p;
	struct bi_ovl o;

	bi_ovl_params_init(&p);
	p.t_first = 10;
	p.t_next = 10;
	bi_ovl_init(&o, &p);
	tick(&o, &p, &over);
	ASSERT_EQ(10, bi_ovl_throttle_pct(&o, 1));
	ASSERT_EQ(20, bi_ovl_throttle_pct(&o, 2));
	ASSERT_EQ(30, bi_ovl_throttle_pct(&o, 3));
	ASSERT_EQ(1000, count_victims(&o, 1, 10000));
	ASSERT_EQ(2000, count_victims(&o, 2, 10000));
	ASSERT_EQ(3000, count_victims(&o, 3, 10000));
	tick(&o, &p, &over);
	tick(&o, &p, &over);
	tick(&o, &p, &over);
	ASSERT_EQ(40, o.m);
	ASSERT_EQ(40, bi_ovl_throttle_pct(&o, 1));
	ASSERT_EQ(80, bi_ovl_throttle_pct(&o, 2));
	ASSERT_EQ(100, bi_ovl_throttle_pct(&o, 3));
	ASSERT_EQ(10000, count_victims(&o, 3, 10000));
}

/*
 * S2-10, A-24: T = 20, R = 2, K = 3: 40 after two overloaded ticks; clean
 * ticks 1-3 hold; ticks 4.. give 38, 36, ..., 0 at clean tick 23; an
 * overload adds 20 again.
 */
TEST(slow_release_with_holdoff)
{
	struct bi_ovl_params p;
	struct bi_ovl o;
	int i;

	bi_ovl_params_init(&p);
	p.window_ticks = 1;
	bi_ovl_init(&o, &p);
	tick(&o, &p, &over);
	tick(&o, &p, &over);
	ASSERT_EQ(40, o.m);
	for (i = 1; i <= 3; i++) {
		tick(&o, &p, &clean);
		ASSERT_EQ(40, o.m);
	}
	for (i = 4; i <= 23; i++) {
		tick(&o, &p, &clean);
		ASSERT_EQ((u32)(40 - 2 * (i - 3)), o.m);
	}
	ASSERT_EQ(0, o.m);
	tick(&o, &p, &clean);
	ASSERT_EQ(0, o.m);

	/* overload returns in the middle of a release */
	tick(&o, &p, &over);
	tick(&o, &p, &over);
	for (i = 0; i < 5; i++)
		tick(&o, &p, &clean);
	ASSERT_EQ(36, o.m);
	tick(&o, &p, &over);
	ASSERT_EQ(56, o.m);
}

/* S2-11: T_first = 30, T_next = 10 -> 30, 40, 50 */
TEST(first_and_next_increments)
{
	struct bi_ovl_params p;
	struct bi_ovl o;

	bi_ovl_params_init(&p);
	p.t_first = 30;
	p.t_next = 10;
	bi_ovl_init(&o, &p);
	tick(&o, &p, &over);
	ASSERT_EQ(30, o.m);
	tick(&o, &p, &over);
	ASSERT_EQ(40, o.m);
	tick(&o, &p, &over);
	ASSERT_EQ(50, o.m);
}

/* S2-07 alternative start: M rests at a non-zero initial value */
TEST(nonzero_initial_multiplier)
{
	struct bi_ovl_params p;
	struct bi_ovl o;
	int i;

	bi_ovl_params_init(&p);
	p.window_ticks = 1;
	p.m_init = 5;
	bi_ovl_init(&o, &p);
	ASSERT_EQ(5, o.m);
	tick(&o, &p, &over);
	ASSERT_EQ(25, o.m);
	for (i = 0; i < 50; i++)
		tick(&o, &p, &clean);
	ASSERT_EQ(5, o.m);
}

/*
 * S2-09: two tenants of equal rank alternate bios, one above its
 * commitment: >= 80 % of the victims are its bios, and the total stays
 * the multiplier's fraction.
 */
TEST(victims_prefer_above_commitment)
{
	struct bi_ovl_params p;
	struct bi_ovl o;
	u32 i, from_above = 0, total = 0;

	bi_ovl_params_init(&p);
	bi_ovl_init(&o, &p);
	tick(&o, &p, &over);			/* M = 20: rank 2 -> 40 % */
	o.any_above_commit = true;
	for (i = 0; i < 10000; i++) {
		bool above = i & 1;
		bool v = bi_ovl_victim(&o, 2, above);

		total += v;
		from_above += v && above;
	}
	ASSERT_GE(from_above * 10, total * 8);
	ASSERT_LE(total, 4001);
	ASSERT_GE(total, 4000 - BI_OVL_OWED_MAX);
}

/*
 * S2-13: after the hold-off, the window's minimum slack steers M:
 * < theta -> +1, > theta + band -> -1, otherwise hold.
 */
TEST(ideal_rate_tracking)
{
	struct bi_ovl_stats tight = { 100, 0, 50 * BI_NSEC_PER_USEC };
	struct bi_ovl_stats in_band = { 100, 0, 300 * BI_NSEC_PER_USEC };
	struct bi_ovl_stats loose = { 100, 0, 2 * BI_NSEC_PER_MSEC };
	struct bi_ovl_params p;
	struct bi_ovl o;
	int i;

	bi_ovl_params_init(&p);
	p.ideal = true;
	p.window_ticks = 1;
	bi_ovl_init(&o, &p);
	tick(&o, &p, &over);
	ASSERT_EQ(20, o.m);
	for (i = 0; i < 3; i++)
		tick(&o, &p, &loose);		/* hold-off */
	ASSERT_EQ(20, o.m);
	tick(&o, &p, &loose);
	ASSERT_EQ(19, o.m);
	tick(&o, &p, &in_band);
	ASSERT_EQ(19, o.m);
	tick(&o, &p, &tight);
	ASSERT_EQ(20, o.m);
	ASSERT_FALSE(o.overloaded);
}

/* S2-14: ideal-rate mode from boot raises M before any overload */
TEST(ideal_rate_from_boot)
{
	struct bi_ovl_stats tight = { 100, 0, 10 * BI_NSEC_PER_USEC };
	struct bi_ovl_params p;
	struct bi_ovl o;
	int i;

	bi_ovl_params_init(&p);
	p.ideal = true;
	bi_ovl_init(&o, &p);
	for (i = 0; i < 10; i++)
		ASSERT_FALSE(tick(&o, &p, &tight));
	ASSERT_EQ(7, o.m);			/* 10 ticks - hold-off 3 */
}

/* S2-15: simple mode throttles T while overloaded and nothing otherwise */
TEST(simple_mode)
{
	struct bi_ovl_params p;
	struct bi_ovl o;

	bi_ovl_params_init(&p);
	p.simple = true;
	p.window_ticks = 1;
	bi_ovl_init(&o, &p);
	tick(&o, &p, &over);
	ASSERT_EQ(20, o.m);
	tick(&o, &p, &over);
	ASSERT_EQ(20, o.m);
	tick(&o, &p, &clean);
	ASSERT_EQ(0, o.m);
	tick(&o, &p, &over);
	ASSERT_EQ(3, o.transitions);
}

/*
 * S2-16: a tenant's own threshold, changed at run time, takes effect at
 * the next tick and raises the device's state.
 */
TEST(tenant_override)
{
	struct bi_ovl_params p;
	struct bi_ovl_tenant t;
	struct bi_ovl o;
	bool sig;

	bi_ovl_params_init(&p);
	bi_ovl_init(&o, &p);
	bi_ovl_tenant_init(&t);
	/* 5 % of the tenant's bios miss: under the device threshold */
	sig = bi_ovl_tenant_tick(&t, &p, 100, 5);
	ASSERT_FALSE(sig);
	ASSERT_EQ(50, t.miss_permille);
	ASSERT_FALSE(bi_ovl_tick(&o, &p, &clean, sig, 0));
	t.threshold_permille = 20;		/* the tool writes 2 % */
	sig = bi_ovl_tenant_tick(&t, &p, 100, 5);
	ASSERT_TRUE(sig);
	ASSERT_TRUE(bi_ovl_tick(&o, &p, &clean, sig, 0));
	ASSERT_EQ(20, o.m);
	t.window_ticks = 1;
	ASSERT_FALSE(bi_ovl_tenant_tick(&t, &p, 100, 0));
}

TEST_HARNESS_MAIN
