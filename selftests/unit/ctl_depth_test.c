// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_depth_test.c - issue 20's depth limit on tenants above their
 * commitment (ctl_depth.c) and the per-tenant detection that feeds it
 * (feedback.c): the rules of ctl_depth.h, tick by tick, on the injected
 * clock.
 */
#include <string.h>
#include "ctl_depth.h"
#include "feedback.h"
#include "kselftest_harness.h"

#define TICK_NS		(10 * BI_NSEC_PER_MSEC)

struct rig {
	struct bi_depth d;
	struct bi_depth_params p;
	u64 now;
	u32 slots;	/* the lower device's, 0 = unknown (the default) */
};

static void rig_init(struct rig *r)
{
	memset(&r->d, 0xa5, sizeof(r->d));
	bi_depth_params_init(&r->p);
	bi_depth_init(&r->d);
	r->now = 0;
	r->slots = 0;
}

/* One tick: a protected tenant completed bios, missed or not. */
static u32 tick(struct rig *r, bool missed, u32 inflight, u32 over_permille)
{
	struct bi_depth_stats s = {
		.protected_active = true, .completed = true, .missed = missed,
		.inflight_max = inflight, .over_permille = over_permille,
		.slots = r->slots,
	};

	r->now += TICK_NS;
	return bi_depth_tick(&r->d, &r->p, &s, r->now);
}

/* Clean ticks with the floods at the limit until the limit moves. */
static u32 ticks_to_raise(struct rig *r)
{
	u32 from = r->d.limit, n = 0;

	while (r->d.limit == from && n < 100000) {
		tick(r, false, r->d.limit, 0);
		n++;
	}
	return n;
}

TEST(init_from_garbage_is_off)
{
	struct rig r;

	rig_init(&r);
	ASSERT_EQ(BI_DEPTH_OFF, r.d.limit);
	ASSERT_EQ(0U, r.d.ceiling);
	ASSERT_EQ(0U, r.d.settle);
	ASSERT_EQ(0U, r.d.probed);
	ASSERT_EQ(0U, r.d.episodes);
	ASSERT_EQ(0U, r.d.clean_ticks);
	ASSERT_EQ(0U, r.d.clean_ops);
	ASSERT_EQ(0ULL, r.d.ceiling_ns);
	ASSERT_EQ(0ULL, r.d.loose_ns);
	ASSERT_EQ(0U, r.d.probe_shift);
	ASSERT_FALSE(r.d.raised);
	ASSERT_FALSE(r.d.loose);
	ASSERT_EQ(2U, r.p.release_ticks);
	ASSERT_EQ(BI_NSEC_PER_SEC, r.p.probe_ns);
	/* off: anything goes; on: strictly below the limit */
	ASSERT_TRUE(bi_depth_allows(BI_DEPTH_OFF, 1000));
	ASSERT_TRUE(bi_depth_allows(3, 2));
	ASSERT_FALSE(bi_depth_allows(3, 3));
}

TEST(clean_ticks_start_nothing)
{
	struct rig r;
	u32 i;

	rig_init(&r);
	for (i = 0; i < 50; i++)
		ASSERT_EQ(BI_DEPTH_OFF, tick(&r, false, 256, 0));
	ASSERT_EQ(0U, r.d.episodes);
}

TEST(a_miss_starts_at_half_the_deepest_flood)
{
	struct rig r;

	rig_init(&r);
	ASSERT_EQ(128U, tick(&r, true, 256, 1500));
	ASSERT_EQ(1U, r.d.episodes);
	/* a flood of one bio still gets a limit of one */
	rig_init(&r);
	ASSERT_EQ(1U, tick(&r, true, 1, 1500));
	ASSERT_EQ(1U, tick(&r, true, 0, 1500));
}

TEST(a_deep_queue_is_cut_in_proportion_to_the_latency)
{
	struct rig r;

	rig_init(&r);
	/* 64x the target: 256 x 1/64 = 4, well under half */
	ASSERT_EQ(4U, tick(&r, true, 256, 64000));
	/* up to 2x the target the cut is a halving */
	rig_init(&r);
	ASSERT_EQ(128U, tick(&r, true, 256, 2000));
	rig_init(&r);
	ASSERT_EQ(85U, tick(&r, true, 256, 3000));
	/* the share is rounded down: 4 x 1000 / 2001 = 1.999 -> 1 */
	rig_init(&r);
	ASSERT_EQ(1U, tick(&r, true, 4, 2001));
}

TEST(misses_after_a_step_wait_one_tick_and_for_the_drain)
{
	struct rig r;

	rig_init(&r);
	ASSERT_EQ(128U, tick(&r, true, 256, 1500));
	/* the tick after the step: its misses are the old bios' */
	ASSERT_EQ(128U, tick(&r, true, 200, 1500));
	/* the floods still have more in flight than the limit: draining */
	ASSERT_EQ(128U, tick(&r, true, 129, 1500));
	ASSERT_EQ(64U, tick(&r, true, 128, 1500));
	ASSERT_EQ(128U, r.d.ceiling);
	/* and so does every later step: the bios sent at 128 end now */
	ASSERT_EQ(64U, tick(&r, true, 64, 1500));
	ASSERT_EQ(32U, tick(&r, true, 64, 1500));
	ASSERT_EQ(32U, tick(&r, true, 32, 1500));
}

TEST(clean_ticks_with_completions_raise_one_every_release_ticks)
{
	struct bi_depth_stats idle = { .protected_active = true, .inflight_max = 4 };
	struct rig r;
	u32 i;

	rig_init(&r);
	ASSERT_EQ(4U, tick(&r, true, 8, 1500));
	ASSERT_EQ(4U, tick(&r, false, 4, 0));
	/* a tick in which the protected tenant completed nothing proves nothing */
	for (i = 0; i < 10; i++)
		ASSERT_EQ(4U, bi_depth_tick(&r.d, &r.p, &idle, r.now += TICK_NS));
	ASSERT_EQ(5U, tick(&r, false, 4, 0));
	ASSERT_TRUE(r.d.raised);
	ASSERT_EQ(2U, ticks_to_raise(&r));
	ASSERT_EQ(6U, r.d.limit);
}

TEST(a_raise_that_misses_steps_back_and_hovers_under_it)
{
	struct rig r;
	u64 t0;

	rig_init(&r);
	ASSERT_EQ(3U, tick(&r, true, 6, 1500));
	ticks_to_raise(&r);
	ticks_to_raise(&r);
	ASSERT_EQ(5U, r.d.limit);
	/* 5 misses: back to 4, and 5 is the ceiling */
	ASSERT_EQ(4U, tick(&r, true, 5, 1500));
	ASSERT_EQ(5U, r.d.ceiling);
	t0 = r.now;
	/* the late misses of the bios sent at 5 do not halve it */
	ASSERT_EQ(4U, tick(&r, true, 4, 1500));
	/* hover at 4 for probe_ns, then try 5 again */
	ticks_to_raise(&r);
	ASSERT_EQ(5U, r.d.limit);
	ASSERT_GE(r.now - t0, r.p.probe_ns);
	ASSERT_LT(r.now - t0, r.p.probe_ns + 3 * TICK_NS);
	/* it misses again: the next try waits twice as long */
	ASSERT_EQ(4U, tick(&r, true, 5, 1500));
	ASSERT_EQ(1U, r.d.probe_shift);
	t0 = r.now;
	ticks_to_raise(&r);
	ASSERT_GE(r.now - t0, 2 * r.p.probe_ns);
	ASSERT_LT(r.now - t0, 2 * r.p.probe_ns + 3 * TICK_NS);
	/* this time it holds: past it, the ceiling and the backoff are gone */
	ASSERT_EQ(2U, ticks_to_raise(&r));
	ASSERT_EQ(6U, r.d.limit);
	ASSERT_EQ(0U, r.d.ceiling);
	ASSERT_EQ(0U, r.d.probe_shift);
}

TEST(failed_probes_back_off_to_eight_times)
{
	struct rig r;
	u32 i;
	u64 t0;

	rig_init(&r);
	tick(&r, true, 4, 1500);
	ticks_to_raise(&r);
	ASSERT_EQ(3U, r.d.limit);
	tick(&r, true, 3, 1500);
	for (i = 0; i < 6; i++) {
		ticks_to_raise(&r);
		ASSERT_EQ(3U, r.d.limit);
		tick(&r, true, 3, 1500);
	}
	ASSERT_EQ((u32)BI_DEPTH_PROBE_SHIFT_MAX, r.d.probe_shift);
	t0 = r.now;
	ticks_to_raise(&r);
	ASSERT_GE(r.now - t0, r.p.probe_ns << BI_DEPTH_PROBE_SHIFT_MAX);
}

TEST(at_two_a_miss_cuts_to_one_and_at_one_nothing_moves)
{
	struct rig r;

	rig_init(&r);
	ASSERT_EQ(2U, tick(&r, true, 4, 1500));
	ASSERT_EQ(2U, tick(&r, true, 2, 1500));
	ASSERT_EQ(1U, tick(&r, true, 2, 1500));
	ASSERT_EQ(2U, r.d.ceiling);
	/* from one, no lower step: no new ceiling, and the raise is not held */
	rig_init(&r);
	ASSERT_EQ(1U, tick(&r, true, 2, 1500));
	ASSERT_EQ(1U, tick(&r, true, 1, 1500));
	ASSERT_EQ(1U, tick(&r, true, 1, 1500));
	ASSERT_EQ(0U, r.d.ceiling);
	ASSERT_EQ(2U, ticks_to_raise(&r));
	ASSERT_EQ(2U, r.d.limit);
	/* the raise to two misses: back to one, two the ceiling */
	ASSERT_EQ(1U, tick(&r, true, 2, 1500));
	ASSERT_EQ(2U, r.d.ceiling);
}

TEST(the_ceiling_is_tried_again_exactly_probe_ns_after_it_missed)
{
	struct rig r;
	u64 t0;

	rig_init(&r);
	r.p.release_ticks = 1;
	ASSERT_EQ(4U, tick(&r, true, 8, 1500));
	ASSERT_EQ(5U, tick(&r, false, 4, 0));
	ASSERT_EQ(4U, tick(&r, true, 5, 1500));
	ASSERT_EQ(5U, r.d.ceiling);
	t0 = r.now;
	ticks_to_raise(&r);
	ASSERT_EQ(5U, r.d.limit);
	ASSERT_EQ(r.p.probe_ns, r.now - t0);
}

TEST(a_step_down_from_a_steady_limit_forgets_the_probe_backoff)
{
	struct rig r;
	u64 t0;

	rig_init(&r);
	r.p.release_ticks = 1;
	ASSERT_EQ(4U, tick(&r, true, 8, 1500));
	ASSERT_EQ(5U, tick(&r, false, 4, 0));
	ASSERT_EQ(4U, tick(&r, true, 5, 1500));
	ticks_to_raise(&r);
	/* the probe of 5 misses: the next one would wait 2 x probe_ns */
	ASSERT_EQ(4U, tick(&r, true, 5, 1500));
	ASSERT_EQ(1U, r.d.probe_shift);
	ASSERT_EQ(4U, tick(&r, true, 4, 1500));
	/* a miss at the steady 4 (not a raise): a new ceiling, a new backoff */
	ASSERT_EQ(2U, tick(&r, true, 4, 1500));
	ASSERT_EQ(4U, r.d.ceiling);
	ASSERT_EQ(0U, r.d.probe_shift);
	t0 = r.now;
	ASSERT_EQ(3U, tick(&r, false, 2, 0));
	ticks_to_raise(&r);
	ASSERT_EQ(4U, r.d.limit);
	ASSERT_EQ(r.p.probe_ns, r.now - t0);
}

TEST(a_stop_forgets_the_episode_but_counts_it)
{
	struct bi_depth_stats gone = { .protected_active = false };
	struct rig r;

	rig_init(&r);
	ASSERT_EQ(8U, tick(&r, true, 16, 1500));
	tick(&r, true, 8, 1500);
	ASSERT_EQ(4U, tick(&r, true, 8, 1500));
	ASSERT_EQ(8U, r.d.ceiling);
	ASSERT_EQ(BI_DEPTH_OFF, bi_depth_tick(&r.d, &r.p, &gone, r.now += TICK_NS));
	ASSERT_EQ(BI_DEPTH_OFF, r.d.limit);
	ASSERT_EQ(0U, r.d.ceiling);
	ASSERT_EQ(0U, r.d.settle);
	/* back, and clean: nothing to bound; a miss starts episode two afresh */
	ASSERT_EQ(BI_DEPTH_OFF, tick(&r, false, 16, 0));
	ASSERT_EQ(8U, tick(&r, true, 16, 1500));
	ASSERT_EQ(2U, r.d.episodes);
}

TEST(a_limit_nobody_reaches_lets_go_after_probe_ns)
{
	struct rig r;
	u32 n = 0;

	rig_init(&r);
	ASSERT_EQ(8U, tick(&r, true, 16, 1500));
	/* 4 of 8 in flight still binds (a sample), and raises */
	ASSERT_EQ(8U, tick(&r, false, 4, 0));
	ASSERT_EQ(9U, tick(&r, false, 4, 0));
	/* the floods keep 2 in flight: no raise, and off after probe_ns */
	while (tick(&r, false, 2, 0) != BI_DEPTH_OFF)
		ASSERT_LT(++n, 1000U);
	/* the first loose tick starts the clock: probe_ns after it */
	ASSERT_EQ(r.p.probe_ns / TICK_NS + 1, n + 1);
	ASSERT_EQ(1U, r.d.episodes);
	/* a flood back near the limit stops the clock: the next spell starts it again */
	rig_init(&r);
	ASSERT_EQ(8U, tick(&r, true, 16, 1500));
	for (n = 0; n < r.p.probe_ns / TICK_NS / 2; n++)
		ASSERT_EQ(8U, tick(&r, false, 2, 0));
	ASSERT_NE(BI_DEPTH_OFF, tick(&r, false, 8, 0));
	for (n = 0; tick(&r, false, 2, 0) != BI_DEPTH_OFF; n++)
		ASSERT_LT(n, 1000U);
	ASSERT_EQ(r.p.probe_ns / TICK_NS + 1, n + 1);
}

TEST(no_protected_tenant_no_limit)
{
	struct bi_depth_stats gone = { .protected_active = false, .missed = true,
				       .inflight_max = 64 };
	struct rig r;

	rig_init(&r);
	ASSERT_EQ(32U, tick(&r, true, 64, 1500));
	ASSERT_EQ(BI_DEPTH_OFF, bi_depth_tick(&r.d, &r.p, &gone, r.now += TICK_NS));
	ASSERT_EQ(0U, r.d.ceiling);
	ASSERT_EQ(1U, r.d.episodes);
	ASSERT_EQ(BI_DEPTH_OFF, bi_depth_tick(&r.d, &r.p, &gone, r.now += TICK_NS));
}

/*
 * From a fresh state: I/O, @n quiet ticks, I/O again: the gap is @n, and
 * the tenant stays active for 2 x @n quiet ticks, then counts as gone.
 */
static void quiet_stretch_keeps_twice(struct __test_metadata *_metadata,
				      struct bi_depth_recent *r, u32 n)
{
	u32 i;

	memset(r, 0, sizeof(*r));
	EXPECT_TRUE(bi_depth_recent_tick(r, true));
	for (i = 0; i < n; i++)
		bi_depth_recent_tick(r, false);
	EXPECT_TRUE(bi_depth_recent_tick(r, true));
	EXPECT_EQ(n, r->gap);
	for (i = 0; i < 2 * n; i++)
		EXPECT_TRUE(bi_depth_recent_tick(r, false));
	EXPECT_FALSE(bi_depth_recent_tick(r, false));
}

/* feedback.c: who is judged on its own window, and what the tick folds */
/*
 * A QD1 victim at 80 IOPS on a 4 ms disk has no I/O in one 10 ms tick of
 * a few: it stays active across such a tick, and across twice its
 * longest recent quiet stretch, then counts as gone.
 */
TEST(a_protected_tenant_stays_active_between_its_bios)
{
	struct bi_depth_recent r;
	int i;

	memset(&r, 0, sizeof(r));
	/* I/O every other tick: the quiet tick is covered (the minimum, 2) */
	for (i = 0; i < 10; i++) {
		EXPECT_TRUE(bi_depth_recent_tick(&r, true));
		EXPECT_TRUE(bi_depth_recent_tick(&r, false));
	}
	EXPECT_EQ(1U, r.gap);
	/* it stops: active for BI_DEPTH_QUIET_MIN ticks, then gone */
	EXPECT_TRUE(bi_depth_recent_tick(&r, false));
	EXPECT_FALSE(bi_depth_recent_tick(&r, false));
	EXPECT_FALSE(bi_depth_recent_tick(&r, false));
	/* quiet stretches of 2 keep it for 4 (twice the stretch, above the minimum) */
	quiet_stretch_keeps_twice(_metadata, &r, 2);
	/* a sparser tenant: quiet stretches of 5 keep it for 10 */
	quiet_stretch_keeps_twice(_metadata, &r, 5);
	/* back after 11 quiet ticks: that stretch is the longest */
	EXPECT_TRUE(bi_depth_recent_tick(&r, true));
	EXPECT_EQ(0U, r.quiet);
	EXPECT_EQ(11U, r.gap);
	/* a longer stretch is forgotten by a quarter per shorter one */
	EXPECT_TRUE(bi_depth_recent_tick(&r, false));
	EXPECT_TRUE(bi_depth_recent_tick(&r, true));
	EXPECT_EQ(9U, r.gap);
	/* a quarter, not less: 20 quiet ticks, then 1, leave 15 */
	memset(&r, 0, sizeof(r));
	bi_depth_recent_tick(&r, true);
	for (i = 0; i < 20; i++)
		bi_depth_recent_tick(&r, false);
	bi_depth_recent_tick(&r, true);
	bi_depth_recent_tick(&r, false);
	bi_depth_recent_tick(&r, true);
	EXPECT_EQ(15U, r.gap);
}

/* Idle for longer than BI_DEPTH_QUIET_MAX: starting again is no gap. */
TEST(an_idle_tenant_starting_again_gets_no_long_grace)
{
	struct bi_depth_recent r;
	int i;

	memset(&r, 0, sizeof(r));
	EXPECT_TRUE(bi_depth_recent_tick(&r, true));
	for (i = 0; i < 1000; i++)
		bi_depth_recent_tick(&r, false);
	EXPECT_FALSE(bi_depth_recent_tick(&r, false));
	EXPECT_TRUE(bi_depth_recent_tick(&r, true));
	EXPECT_EQ(0U, r.gap);
	EXPECT_TRUE(bi_depth_recent_tick(&r, false));
	EXPECT_TRUE(bi_depth_recent_tick(&r, false));
	EXPECT_FALSE(bi_depth_recent_tick(&r, false));
	/* and never more than BI_DEPTH_QUIET_MAX ticks, whatever the stretch */
	memset(&r, 0, sizeof(r));
	r.gap = 1000;
	for (i = 0; i < BI_DEPTH_QUIET_MAX; i++)
		EXPECT_TRUE(bi_depth_recent_tick(&r, false));
	EXPECT_FALSE(bi_depth_recent_tick(&r, false));
}

TEST(depth_limit_judges_an_allocation_on_its_own_window)
{
	struct bi_tenant_conf victim, flood;
	struct bi_dev_conf dev;
	struct bi_ovl_tenant ovl;

	bi_dev_conf_init(&dev);
	bi_tenant_conf_init(&victim);
	bi_tenant_conf_init(&flood);
	victim.alloc = 2400;
	victim.latency_us = 400;
	/* miss_pct equal to the device's: no override without the key */
	ASSERT_EQ(dev.overload_pct, victim.miss_pct);
	ASSERT_EQ(0U, bi_fb_tenant_threshold(&victim, &dev));
	dev.depth_limit = 1;
	ASSERT_TRUE(bi_fb_depth_protected(&victim, &dev));
	ASSERT_EQ(victim.miss_pct * 10, bi_fb_tenant_threshold(&victim, &dev));
	/* a tenant promised nothing is not protected */
	ASSERT_FALSE(bi_fb_depth_protected(&flood, &dev));
	ASSERT_EQ(0U, bi_fb_tenant_threshold(&flood, &dev));

	bi_ovl_tenant_init(&ovl);
	ovl.threshold_permille = 100;
	ASSERT_FALSE(bi_fb_depth_missed(&ovl, 100, 10));
	ASSERT_TRUE(bi_fb_depth_missed(&ovl, 100, 11));
	ASSERT_FALSE(bi_fb_depth_missed(&ovl, 0, 0));
	ovl.threshold_permille = 0;
	ASSERT_FALSE(bi_fb_depth_missed(&ovl, 100, 100));
}

TEST(the_fold_measures_the_latency_over_the_target)
{
	struct bi_depth_stats ds = { 0 };
	struct bi_tenant_conf c;
	struct bi_ovl_tenant ovl;

	bi_tenant_conf_init(&c);
	c.latency_us = 400;
	bi_ovl_tenant_init(&ovl);
	ovl.threshold_permille = 100;
	/* nothing completed: active, nothing else */
	bi_fb_depth_fold(&ds, &c, &ovl, 0, 0, 0, 0, 0);
	ASSERT_TRUE(ds.protected_active);
	ASSERT_EQ(0U, ds.completed);
	ASSERT_EQ(0U, ds.evidence);
	/* clean: completed, no miss, no ratio; 10 % shows in 10 bios: 3 x 10 asked */
	bi_fb_depth_fold(&ds, &c, &ovl, 10, 0, 10 * 300 * BI_NSEC_PER_USEC, 0, 0);
	ASSERT_EQ(10U, ds.completed);
	ASSERT_EQ(3U * 10, ds.evidence);
	ASSERT_FALSE(ds.missed);
	ASSERT_EQ(0U, ds.over_permille);
	/* 4 of 10 missed, mean 1.2 ms against 400 us: 3000 permille */
	bi_fb_depth_fold(&ds, &c, &ovl, 10, 4, 10 * 1200 * BI_NSEC_PER_USEC, 0, 0);
	ASSERT_TRUE(ds.missed);
	ASSERT_EQ(3000U, ds.over_permille);
	/* the worst tenant counts */
	bi_fb_depth_fold(&ds, &c, &ovl, 10, 4, 10 * 800 * BI_NSEC_PER_USEC, 0, 0);
	ASSERT_EQ(3000U, ds.over_permille);
	/* completions add up; the strictest threshold (1 %, 3 %: rounded up) needs most */
	ASSERT_EQ(30U, ds.completed);
	ovl.threshold_permille = 30;
	bi_fb_depth_fold(&ds, &c, &ovl, 5, 0, 5 * 300 * BI_NSEC_PER_USEC, 0, 0);
	ASSERT_EQ(35U, ds.completed);
	ASSERT_EQ(3U * 34, ds.evidence);
	ovl.threshold_permille = 10;
	bi_fb_depth_fold(&ds, &c, &ovl, 5, 0, 5 * 300 * BI_NSEC_PER_USEC, 0, 0);
	ASSERT_EQ(3U * 100, ds.evidence);
	ovl.threshold_permille = 1000;
	bi_fb_depth_fold(&ds, &c, &ovl, 5, 0, 5 * 300 * BI_NSEC_PER_USEC, 0, 0);
	ASSERT_EQ(3U * 100, ds.evidence);
	/* the pace's inputs: every late bio, and the strictest share allowed late */
	ASSERT_EQ(8U, ds.missed_ops);
	ASSERT_EQ(10U, ds.allow_permille);
	bi_fb_depth_fold(&ds, &c, &ovl, 20, 1, 20 * 300 * BI_NSEC_PER_USEC, 0, 0);
	ASSERT_EQ(9U, ds.missed_ops);	/* one of twenty: under the tick's 100 %, counted */
	/* no threshold of its own: no evidence asked */
	memset(&ds, 0, sizeof(ds));
	ovl.threshold_permille = 0;
	bi_fb_depth_fold(&ds, &c, &ovl, 5, 0, 5 * 300 * BI_NSEC_PER_USEC, 0, 0);
	ASSERT_EQ(0U, ds.evidence);
	ASSERT_EQ(5U, ds.completed);
}

/*
 * A sparse victim (1.5 bios a tick on a slow disk) proves nothing by two
 * clean ticks: a raise waits until the protected tenants completed enough
 * bios since the last miss or raise to show a miss at their threshold.
 */
TEST(a_raise_waits_for_enough_clean_completions)
{
	struct bi_depth_stats s = {
		.protected_active = true, .completed = 30, .evidence = 100,
		.inflight_max = 4,
	};
	struct rig r;
	u32 i;

	rig_init(&r);
	ASSERT_EQ(4U, tick(&r, true, 8, 1500));
	/* 30 a tick: 120 >= 100 after the fourth, not at release_ticks */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(4U, bi_depth_tick(&r.d, &r.p, &s, r.now += TICK_NS));
	ASSERT_EQ(90U, r.d.clean_ops);
	ASSERT_EQ(5U, bi_depth_tick(&r.d, &r.p, &s, r.now += TICK_NS));
	/* a raise starts the count again */
	ASSERT_EQ(0U, r.d.clean_ops);
	s.inflight_max = 5;
	for (i = 0; i < 3; i++)
		ASSERT_EQ(5U, bi_depth_tick(&r.d, &r.p, &s, r.now += TICK_NS));
	/* a miss (held: it came in the settle tick) forgets the clean ones */
	s.missed = true;
	s.over_permille = 1500;
	bi_depth_tick(&r.d, &r.p, &s, r.now += TICK_NS);
	ASSERT_EQ(0U, r.d.clean_ops);
	ASSERT_EQ(0U, r.d.clean_ticks);
	/* saturates instead of wrapping */
	s.missed = false;
	s.completed = U32_MAX;
	s.evidence = U32_MAX;
	r.d.clean_ops = 5;
	r.d.clean_ticks = 0;
	r.d.ceiling = 0;
	i = r.d.limit;
	ASSERT_EQ(i, bi_depth_tick(&r.d, &r.p, &s, r.now += TICK_NS));
	ASSERT_EQ(U32_MAX, r.d.clean_ops);
	ASSERT_EQ(i + 1, bi_depth_tick(&r.d, &r.p, &s, r.now += TICK_NS));
}

/* The fold keeps the highest and the lowest latency, in permille of each target. */
TEST(the_fold_keeps_the_latency_extremes_against_the_target)
{
	struct bi_depth_stats ds = { 0 };
	struct bi_tenant_conf c, slow;
	struct bi_ovl_tenant ovl;

	bi_tenant_conf_init(&c);
	c.latency_us = 400;
	slow = c;
	slow.latency_us = 6000;
	bi_ovl_tenant_init(&ovl);
	ovl.threshold_permille = 10;
	/* not measured (0): nothing folded */
	bi_fb_depth_fold(&ds, &c, &ovl, 2, 0, 2 * 300 * BI_NSEC_PER_USEC, 0, 0);
	ASSERT_EQ(0U, ds.lat_max_permille);
	ASSERT_EQ(0U, ds.lat_min_permille);
	/* 260 and 380 us against 400: 650 and 950 */
	bi_fb_depth_fold(&ds, &c, &ovl, 2, 0, 640 * BI_NSEC_PER_USEC,
			 260 * BI_NSEC_PER_USEC, 380 * BI_NSEC_PER_USEC);
	ASSERT_EQ(950U, ds.lat_max_permille);
	ASSERT_EQ(650U, ds.lat_min_permille);
	/* another tenant, 4.0 to 6.6 ms against 6 ms: the highest 1100, the lowest stays */
	bi_fb_depth_fold(&ds, &slow, &ovl, 2, 1, 10600 * BI_NSEC_PER_USEC,
			 4000 * BI_NSEC_PER_USEC, 6600 * BI_NSEC_PER_USEC);
	ASSERT_EQ(1100U, ds.lat_max_permille);
	ASSERT_EQ(650U, ds.lat_min_permille);
	/* only a highest (one bio): it is the lowest too */
	memset(&ds, 0, sizeof(ds));
	bi_fb_depth_fold(&ds, &c, &ovl, 1, 0, 200 * BI_NSEC_PER_USEC, 0,
			 200 * BI_NSEC_PER_USEC);
	ASSERT_EQ(500U, ds.lat_max_permille);
	ASSERT_EQ(500U, ds.lat_min_permille);
	/* a latency far under the target is not taken for "none" */
	memset(&ds, 0, sizeof(ds));
	bi_fb_depth_fold(&ds, &c, &ovl, 1, 0, 100, 100, 100);
	ASSERT_EQ(1U, ds.lat_min_permille);
	/* saturates */
	bi_fb_depth_fold(&ds, &c, &ovl, 1, 1, U64_MAX, U64_MAX, U64_MAX);
	ASSERT_EQ(U32_MAX, ds.lat_max_permille);
}

/* Clean ticks with the floods at the limit and the victim's latencies. */
static u32 tick_lat(struct rig *r, u32 lo, u32 hi)
{
	struct bi_depth_stats s = {
		.protected_active = true, .completed = 1, .inflight_max = r->d.limit,
		.lat_min_permille = lo, .lat_max_permille = hi,
	};

	r->now += TICK_NS;
	return bi_depth_tick(&r->d, &r->p, &s, r->now);
}

/*
 * Seed 002's ideal-rate tracking in depth: a raise is predicted to add
 * (W - B) / limit to the protected tenants' highest latency W; it is made
 * only while that stays within the target.  The slow shape: 2 slots x
 * 4 ms, the victim's target 1.5x its 4 ms, at 2 the flood fills both
 * slots and the victim's highest is 995 permille of the target.
 */
TEST(a_raise_waits_for_headroom_under_the_target)
{
	struct rig r;
	u32 i;

	rig_init(&r);
	ASSERT_EQ(1U, tick(&r, true, 2, 1500));
	/* at 1 the victim always finds a slot: 4 ms = 661 permille, room */
	ASSERT_EQ(1U, tick_lat(&r, 661, 661));
	ASSERT_EQ(2U, tick_lat(&r, 661, 661));
	ASSERT_EQ(0U, r.d.held);
	/* at 2: 661 to 995, predicted 995 + 334 / 2 = 1162: held, and again */
	for (i = 0; i < 10; i++)
		ASSERT_EQ(2U, tick_lat(&r, 661, 995));
	ASSERT_EQ(5U, r.d.held);
	/* each hold starts the evidence again: one tick near the target holds the next */
	ASSERT_EQ(2U, tick_lat(&r, 661, 995));
	ASSERT_EQ(2U, tick_lat(&r, 661, 700));
	ASSERT_EQ(6U, r.d.held);
	/* the flood's bios got shorter: 661 to 800, predicted 869: up */
	ASSERT_EQ(2U, tick_lat(&r, 661, 800));
	ASSERT_EQ(3U, tick_lat(&r, 661, 800));
	ASSERT_EQ(6U, r.d.held);
	/* exactly at the target is room; one permille over is not */
	rig_init(&r);
	ASSERT_EQ(2U, tick(&r, true, 4, 1500));
	tick_lat(&r, 600, 800);
	ASSERT_EQ(3U, tick_lat(&r, 700, 866));		/* 866 + 266 / 2 = 999 */
	rig_init(&r);
	ASSERT_EQ(2U, tick(&r, true, 4, 1500));
	tick_lat(&r, 600, 800);
	ASSERT_EQ(3U, tick_lat(&r, 700, 867));		/* 867 + 267 / 2 = 1000 */
	rig_init(&r);
	ASSERT_EQ(2U, tick(&r, true, 4, 1500));
	tick_lat(&r, 600, 800);
	ASSERT_EQ(2U, tick_lat(&r, 700, 868));		/* 868 + 268 / 2 = 1002 */
	ASSERT_EQ(1U, r.d.held);
	rig_init(&r);
	ASSERT_EQ(2U, tick(&r, true, 4, 1500));
	tick_lat(&r, 601, 800);
	ASSERT_EQ(2U, tick_lat(&r, 701, 868));		/* 868 + 267 / 2 = 1001 */
	/* no lowest (one bio a tick, not measured): the highest alone, no step */
	rig_init(&r);
	ASSERT_EQ(2U, tick(&r, true, 4, 1500));
	tick_lat(&r, 0, 990);
	ASSERT_EQ(3U, tick_lat(&r, 0, 1000));
}

/* A try of the ceiling needs headroom as well as its time. */
TEST(the_ceiling_is_tried_again_only_with_headroom)
{
	struct rig r;
	u32 i;

	rig_init(&r);
	r.p.release_ticks = 1;
	ASSERT_EQ(4U, tick(&r, true, 8, 1500));
	ASSERT_EQ(5U, tick(&r, false, 4, 0));
	ASSERT_EQ(4U, tick(&r, true, 5, 1500));
	ASSERT_EQ(5U, r.d.ceiling);
	/* probe_ns later, still with the victim near its target: no try */
	for (i = 0; i < 200; i++)
		ASSERT_EQ(4U, tick_lat(&r, 600, 950));
	ASSERT_GE(r.now, r.p.probe_ns);
	ASSERT_EQ(4U, tick_lat(&r, 600, 950));
	/* room: tried at once */
	ASSERT_EQ(5U, tick_lat(&r, 600, 700));
	ASSERT_EQ(5U, r.d.probed);
}

/* 128 KiB requests (256 sectors), 4 KiB blocks (8 sectors) */
TEST(a_bound_bio_is_cut_to_one_lower_request)
{
	struct bi_depth_lower q = { .max_sectors = 256, .block_sectors = 8 };
	u32 piece = 7;

	/* one request already: whole, *piece untouched */
	ASSERT_EQ(BI_DEPTH_WHOLE, bi_depth_piece(0, 8, &q, &piece));
	ASSERT_EQ(BI_DEPTH_WHOLE, bi_depth_piece(0, 256, &q, &piece));
	ASSERT_EQ(7U, piece);
	/* 1 MiB: its first 128 KiB */
	ASSERT_EQ(BI_DEPTH_CUT, bi_depth_piece(0, 2048, &q, &piece));
	ASSERT_EQ(256U, piece);
	ASSERT_EQ(BI_DEPTH_CUT, bi_depth_piece(1000, 257, &q, &piece));
	ASSERT_EQ(256U, piece);
	/* the request ends at the next chunk boundary (chunks of 64 KiB) */
	q.chunk_sectors = 128;
	ASSERT_EQ(BI_DEPTH_CUT, bi_depth_piece(120, 2048, &q, &piece));
	ASSERT_EQ(8U, piece);
	ASSERT_EQ(BI_DEPTH_CUT, bi_depth_piece(128, 2048, &q, &piece));
	ASSERT_EQ(128U, piece);
	ASSERT_EQ(BI_DEPTH_WHOLE, bi_depth_piece(120, 8, &q, &piece));
	/* whole logical blocks: 252 of a 255-sector limit */
	q.chunk_sectors = 0;
	q.max_sectors = 255;
	ASSERT_EQ(BI_DEPTH_CUT, bi_depth_piece(0, 2048, &q, &piece));
	ASSERT_EQ(248U, piece);
	q.block_sectors = 1;
	ASSERT_EQ(BI_DEPTH_CUT, bi_depth_piece(0, 2048, &q, &piece));
	ASSERT_EQ(255U, piece);
	/* less than a block left before the boundary, or no limit: whole */
	q.block_sectors = 8;
	q.max_sectors = 4;
	ASSERT_EQ(BI_DEPTH_WHOLE, bi_depth_piece(0, 2048, &q, &piece));
	q.max_sectors = 0;
	ASSERT_EQ(BI_DEPTH_WHOLE, bi_depth_piece(0, 2048, &q, &piece));
}

TEST(the_limit_stays_under_the_lower_slots)
{
	struct rig r;
	u32 i;

	/* a 2-slot disk: a flood of 16 starts at 1, not 8, and stays there */
	rig_init(&r);
	r.slots = 2;
	ASSERT_EQ(1U, tick(&r, true, 16, 1500));
	for (i = 0; i < 2000; i++)
		ASSERT_EQ(1U, tick(&r, false, 1, 0));
	ASSERT_EQ(0U, r.d.ceiling);
	ASSERT_EQ(0ULL, r.d.held);	/* not a lack of headroom */
	/* 8 slots: raised up to 7, never to 8 */
	rig_init(&r);
	r.slots = 8;
	ASSERT_EQ(1U, tick(&r, true, 2, 1500));
	for (i = 0; i < 2000 && r.d.limit < 7; i++)
		tick(&r, false, r.d.limit, 0);
	ASSERT_EQ(7U, r.d.limit);
	for (i = 0; i < 2000; i++)
		ASSERT_EQ(7U, tick(&r, false, 7, 0));
	/* the device under it changed to 4 slots: the next clean tick obeys */
	r.slots = 4;
	ASSERT_EQ(3U, tick(&r, false, 7, 0));
	/* one slot: the floor; unknown: as before (half the flood) */
	rig_init(&r);
	r.slots = 1;
	ASSERT_EQ(1U, tick(&r, true, 16, 1500));
	ASSERT_EQ(100000U, ticks_to_raise(&r));	/* it never moves */
	rig_init(&r);
	ASSERT_EQ(8U, tick(&r, true, 16, 1500));
}

/*
 * The slots under a raised limit shrink to two: the limit is cut to one,
 * and the raise is still the last change.  A miss then steps back from
 * the raise, but one is the floor: the limit stays on (0 would let the
 * flood go unbound while the victim misses).  Nor was the miss a probe
 * of a ceiling: with the slots back, two is tried probe_ns later.
 */
TEST(a_miss_at_one_after_the_slots_shrank_keeps_the_limit)
{
	struct rig r;
	u64 t0;

	rig_init(&r);
	r.slots = 8;
	ASSERT_EQ(4U, tick(&r, true, 8, 1500));
	ticks_to_raise(&r);
	ASSERT_EQ(5U, r.d.limit);
	r.slots = 2;
	ASSERT_EQ(1U, tick(&r, false, 5, 0));
	ASSERT_EQ(1U, tick(&r, true, 1, 1500));
	ASSERT_EQ(0U, r.d.probe_shift);
	r.slots = 8;
	t0 = r.now;
	ticks_to_raise(&r);
	ASSERT_EQ(2U, r.d.limit);
	ASSERT_EQ(r.p.probe_ns, r.now - t0);
}

TEST(an_unbound_bio_is_cut_only_where_it_overflows_the_slots)
{
	/* 1 MiB in 255-sector requests: nine of them */
	ASSERT_TRUE(bi_depth_cut_unbound(2048, 255, 2));	/* the slow shape */
	ASSERT_TRUE(bi_depth_cut_unbound(2048, 255, 8));	/* ssd, slotbound */
	ASSERT_FALSE(bi_depth_cut_unbound(2048, 255, 32));	/* fast */
	ASSERT_FALSE(bi_depth_cut_unbound(2040, 255, 8));	/* exactly the 8 slots */
	ASSERT_TRUE(bi_depth_cut_unbound(2041, 255, 8));
	ASSERT_FALSE(bi_depth_cut_unbound(2048, 255, 0));	/* slots unknown */
	ASSERT_FALSE(bi_depth_cut_unbound(2048, 0, 2));
	/* no overflow of the product */
	ASSERT_FALSE(bi_depth_cut_unbound(U32_MAX, U32_MAX, U32_MAX));
}

/*
 * The pace (ctl_depth.h, "Pace"): a tick of the ssd shape's flood at the
 * limit, moving @units work units a tick (5,000 units of 2 KiB in 10 ms:
 * 1.02 GB/s), the victim's device latencies @lo..@hi permille of its target.
 */
static u32 tick_paced(struct rig *r, bool missed, u32 lo, u32 hi, u64 units, u32 completed)
{
	struct bi_depth_stats s = {
		.protected_active = true, .completed = completed, .missed = missed,
		.missed_ops = missed, .inflight_max = r->d.limit,
		.over_permille = missed ? 1500 : 0,
		.lat_min_permille = lo, .lat_max_permille = hi, .slots = r->slots,
		.bound_units_max = units,
	};

	r->now += TICK_NS;
	return bi_depth_tick(&r->d, &r->p, &s, r->now);
}

/* At 1, raised to 2, which misses: 2 again, paced at what 1 moved (2,800 units a tick). */
static void rig_paced(struct __test_metadata *_metadata, struct rig *r)
{
	rig_init(r);
	r->slots = 8;
	ASSERT_EQ(1U, tick_paced(r, true, 0, 0, 0, 1));
	ASSERT_EQ(1U, tick_paced(r, false, 300, 400, 2800, 1));
	ASSERT_EQ(2U, tick_paced(r, false, 300, 400, 2800, 1));
	ASSERT_EQ(2U, tick_paced(r, true, 300, 1500, 2800, 1));
	ASSERT_EQ(2U, r->d.limit);
	ASSERT_EQ(1U, r->d.settle);
}

/* The tick after a pace's step, the flood at it: its misses, if any, are not the pace's. */
static void pace_settle(struct rig *r)
{
	tick_paced(r, false, 500, 990, r->d.pace_ups / 100, 1);
}

/*
 * A raise that misses goes back to that depth with a pace: what one bound
 * tenant moved a second at the depth below (S3-08: the higher thread
 * count, with delays), rather than hover one below at half the device.
 * A raise held for headroom is not paced: it stays.
 */
TEST(a_raise_that_misses_is_made_again_paced)
{
	struct rig r;
	u32 i;

	rig_paced(_metadata, &r);
	ASSERT_EQ(280000ULL, r.d.pace_ups);
	ASSERT_EQ(280000ULL, r.d.pace_floor_ups);
	ASSERT_EQ(0U, r.d.ceiling);
	ASSERT_EQ(1ULL, r.d.paced);
	/* a stop forgets it, but counts it */
	{
		struct bi_depth_stats none = { 0 };

		r.now += TICK_NS;
		ASSERT_EQ(0U, bi_depth_tick(&r.d, &r.p, &none, r.now));
	}
	ASSERT_EQ(0ULL, r.d.pace_ups);
	ASSERT_EQ(1ULL, r.d.paced);
	/* under 1,000 units a second (9 a tick) at 1: not paced, it hovers */
	rig_init(&r);
	r.slots = 8;
	ASSERT_EQ(1U, tick_paced(&r, true, 0, 0, 0, 1));
	tick_paced(&r, false, 300, 400, 9, 1);
	ASSERT_EQ(2U, tick_paced(&r, false, 300, 400, 9, 1));
	ASSERT_EQ(1U, tick_paced(&r, true, 300, 1500, 9, 1));
	ASSERT_EQ(0ULL, r.d.pace_ups);
	ASSERT_EQ(2U, r.d.ceiling);
	/* exactly 1,000 (10 a tick) is the slowest pace there is: paced */
	rig_init(&r);
	r.slots = 8;
	ASSERT_EQ(1U, tick_paced(&r, true, 0, 0, 0, 1));
	tick_paced(&r, false, 300, 400, 10, 1);
	ASSERT_EQ(2U, tick_paced(&r, false, 300, 400, 10, 1));
	ASSERT_EQ(2U, tick_paced(&r, true, 300, 1500, 10, 1));
	ASSERT_EQ((u64)BI_DEPTH_PACE_MIN_UPS, r.d.pace_ups);
	/* held for headroom (900 + 400 / 1 = 1300): stays at 1, no pace */
	rig_init(&r);
	r.slots = 8;
	ASSERT_EQ(1U, tick_paced(&r, true, 0, 0, 0, 1));
	for (i = 0; i < 6; i++)
		ASSERT_EQ(1U, tick_paced(&r, false, 500, 900, 2800, 1));
	ASSERT_EQ(0ULL, r.d.pace_ups);
	ASSERT_EQ(3ULL, r.d.held);
}

/*
 * The pace starts at what the depth below moved since the limit last
 * moved, not over spans at other depths.
 */
TEST(a_pace_starts_from_the_depth_it_is_above)
{
	struct rig r;

	rig_init(&r);
	r.slots = 8;
	ASSERT_EQ(4U, tick(&r, true, 8, 1500));
	/* at 4: 9,000 units a tick; then a miss halves it to 2 */
	tick_paced(&r, false, 300, 400, 9000, 1);
	tick_paced(&r, true, 300, 1500, 9000, 1);
	ASSERT_EQ(2U, r.d.limit);
	tick_paced(&r, true, 300, 1500, 4000, 1);	/* settling */
	/* at 2: 4,000 a tick, raised to 3, which misses: paced at 2's 400,000 a second */
	tick_paced(&r, false, 300, 400, 4000, 1);
	ASSERT_EQ(3U, tick_paced(&r, false, 300, 400, 4000, 1));
	ASSERT_EQ(3U, tick_paced(&r, true, 300, 1500, 6000, 1));
	ASSERT_EQ(400000ULL, r.d.pace_ups);
}

/*
 * A tick at the time of the one before (no time passed) adds no span to
 * the bound tenants' throughput, and none of its units either: units
 * moved in no time would start a pace faster than the flood moved.
 */
TEST(a_tick_with_no_time_passed_adds_nothing_to_the_throughput)
{
	struct rig r;

	rig_init(&r);
	r.slots = 8;
	r.p.release_ticks = 3;
	ASSERT_EQ(1U, tick_paced(&r, true, 0, 0, 0, 1));
	tick_paced(&r, false, 300, 400, 2800, 1);
	tick_paced(&r, false, 300, 400, 2800, 1);
	/* the third clean tick at the second's time: raised to 2 */
	r.now -= TICK_NS;
	ASSERT_EQ(2U, tick_paced(&r, false, 300, 400, 2800, 1));
	/* 2 misses: paced at 5,600 units in 20 ms, not 8,400 */
	ASSERT_EQ(2U, tick_paced(&r, true, 300, 1500, 2800, 1));
	ASSERT_EQ(280000ULL, r.d.pace_ups);
}

/*
 * Clean evidence while the flood moves at the pace: an eighth faster each
 * time until the first miss, a sixteenth after it.
 */
TEST(a_pace_rises_while_it_binds_slower_after_a_miss)
{
	struct rig r;
	u64 pace;
	u32 i;

	rig_paced(_metadata, &r);
	/* the tick after the start settles; then two clean ticks per raise */
	pace_settle(&r);
	pace = r.d.pace_ups;
	for (i = 0; i < 4; i++) {
		tick_paced(&r, false, 500, 990, pace / 100, 1);
		tick_paced(&r, false, 500, 990, pace / 100, 1);
		ASSERT_EQ(pace + pace / 8, r.d.pace_ups);
		ASSERT_EQ(2U, r.d.limit);
		pace = r.d.pace_ups;
	}
	/* no headroom rule under a pace (990 + 490 / 2 would pass): the steps are small */
	ASSERT_EQ(0ULL, r.d.held);
	tick_paced(&r, true, 500, 1500, pace / 100, 1);
	pace_settle(&r);
	pace = r.d.pace_ups;
	for (i = 0; i < 4; i++) {
		tick_paced(&r, false, 500, 990, pace / 100, 1);
		tick_paced(&r, false, 500, 990, pace / 100, 1);
		ASSERT_EQ(pace + pace / 16, r.d.pace_ups);
		pace = r.d.pace_ups;
	}
}

/*
 * Under a pace misses are counted in runs of evidence-many bios against
 * half the share the target allows (1 %: 1 of 300), as the victim's p99
 * is judged per second; a tick with one late bio of twenty is not a miss
 * of the pace, nor is one late bio in each run.  A queue (a tick's mean
 * over twice the target) is.
 */
TEST(a_pace_is_judged_on_the_misses_the_target_allows)
{
	struct bi_depth_stats st = {
		.protected_active = true, .completed = 20, .inflight_max = 2,
		.lat_min_permille = 500, .lat_max_permille = 1100, .slots = 8,
		.evidence = 300, .allow_permille = 10,
	};
	struct rig r;
	u64 pace;
	u32 i;

	rig_paced(_metadata, &r);
	pace_settle(&r);
	pace = r.d.pace_ups;
	/* two runs of 300 (15 ticks of 20), one late bio in each */
	for (i = 0; i < 30; i++) {
		st.missed = i % 15 == 7;
		st.missed_ops = st.missed;
		st.over_permille = st.missed ? 1100 : 0;
		st.bound_units_max = pace / 100;
		r.now += TICK_NS;
		bi_depth_tick(&r.d, &r.p, &st, r.now);
		if (i == 14)
			ASSERT_EQ(pace + pace / 8, r.d.pace_ups);
	}
	pace = r.d.pace_ups;
	ASSERT_EQ(280000ULL * 9 / 8 * 9 / 8, pace);
	/* a second late bio in one run: slower at once */
	for (i = 0; i < 2; i++) {
		st.missed = true;
		st.missed_ops = 1;
		r.now += TICK_NS;
		bi_depth_tick(&r.d, &r.p, &st, r.now);
	}
	ASSERT_EQ(pace - pace / 8, r.d.pace_ups);
	ASSERT_EQ(2U, r.d.limit);
	/*
	 * a late bio in a tick whose mean is exactly twice the target: not a
	 * queue yet (as for the cut, past 2x is), only the run's one allowed
	 */
	pace_settle(&r);
	pace = r.d.pace_ups;
	st.missed_ops = 1;
	st.over_permille = BI_DEPTH_QUEUE_PERMILLE;
	r.now += TICK_NS;
	bi_depth_tick(&r.d, &r.p, &st, r.now);
	ASSERT_EQ(pace, r.d.pace_ups);
	/* a queue: one tick whose mean is 2.5x the target */
	st.over_permille = 2500;
	r.now += TICK_NS;
	bi_depth_tick(&r.d, &r.p, &st, r.now);
	ASSERT_EQ(bi_max_u64(280000, pace - pace / 8), r.d.pace_ups);
}

/*
 * A judged tick under the ssd shape's pace: @completed protected bios,
 * @late of them over the target, the flood moving @units.  A run is 300
 * bios (1 %), one late bio in it allowed.
 */
static u32 tick_run(struct rig *r, u32 completed, u32 late, u64 units)
{
	struct bi_depth_stats s = {
		.protected_active = true, .completed = completed, .missed = late > 0,
		.missed_ops = late, .inflight_max = r->d.limit,
		.over_permille = late ? 1100 : 0,
		.lat_min_permille = 500, .lat_max_permille = late ? 1100 : 990,
		.slots = r->slots, .evidence = 300, .allow_permille = 10,
		.bound_units_max = units,
	};

	r->now += TICK_NS;
	return bi_depth_tick(&r->d, &r->p, &s, r->now);
}

/*
 * A run counts its bios from none, after the run before and after a slow
 * alike: at 299 bios a tick a run is two ticks (the tick that passes 300
 * ends it, its extra bios do not carry over), so a late bio in each tick
 * of one run is two in it, one over the allowance.
 */
TEST(a_pace_run_counts_its_bios_from_none)
{
	struct rig r;
	u64 pace;
	u32 i;

	rig_paced(_metadata, &r);
	pace_settle(&r);
	/* two clean runs: an eighth faster after each */
	for (i = 0; i < 4; i++)
		tick_run(&r, 299, 0, r.d.pace_ups / 100);
	pace = r.d.pace_ups;
	ASSERT_EQ(280000ULL * 9 / 8 * 9 / 8, pace);
	/* the next run: a late bio in each tick, the second one over */
	tick_run(&r, 299, 1, pace / 100);
	ASSERT_EQ(pace, r.d.pace_ups);
	tick_run(&r, 299, 1, pace / 100);
	ASSERT_EQ(pace - pace / 8, r.d.pace_ups);
	/* after the slow, the run starts from none again: the same */
	pace_settle(&r);
	pace = r.d.pace_ups;
	tick_run(&r, 299, 1, pace / 100);
	ASSERT_EQ(pace, r.d.pace_ups);
	tick_run(&r, 299, 1, pace / 100);
	ASSERT_EQ(280000ULL, r.d.pace_ups);	/* an eighth slower, not under the start */
	ASSERT_EQ(2U, r.d.limit);
}

/*
 * A new pace counts its runs and its late bios from none: what the last
 * one left of an unfinished run (a pace that went mid-run) is not its.
 */
TEST(a_new_pace_counts_its_run_afresh)
{
	struct rig r;

	rig_paced(_metadata, &r);
	pace_settle(&r);
	/*
	 * a run of 300 in one tick, then 299 with a late bio: 1,000 units a
	 * tick (with the settle tick's 2,800, 160,000 a second) binds
	 * nothing, and the pace goes with that run half done
	 */
	tick_run(&r, 300, 0, 1000);
	tick_run(&r, 299, 1, 1000);
	ASSERT_EQ(0ULL, r.d.pace_ups);
	ASSERT_EQ(2U, r.d.limit);
	/* a miss: paced again at 160,000 */
	ASSERT_EQ(2U, tick_run(&r, 299, 1, 1000));
	ASSERT_EQ(160000ULL, r.d.pace_ups);
	pace_settle(&r);
	/* its first late bio is the run's one allowed: the old run's is not counted */
	ASSERT_EQ(2U, tick_run(&r, 299, 1, 1600));
	ASSERT_EQ(160000ULL, r.d.pace_ups);
	/* nor are the old run's bios: the second tick is in the same run, one over */
	ASSERT_EQ(1U, tick_run(&r, 299, 1, 1600));
	ASSERT_EQ(0ULL, r.d.pace_ups);
	ASSERT_EQ(2U, r.d.ceiling);
}

/*
 * A miss under the pace: an eighth slower (not under where it started),
 * twice the evidence before the next raise, up to 8x; at the start pace,
 * back to one bio lower without a pace, the higher its ceiling.
 */
TEST(a_miss_under_the_pace_slows_it_and_backs_off)
{
	struct rig r;
	u64 pace;
	u32 i, n;

	rig_paced(_metadata, &r);
	for (i = 0; i < 8; i++)
		tick_paced(&r, false, 500, 990, r.d.pace_ups / 100, 1);
	pace = r.d.pace_ups;
	ASSERT_GT(pace, 280000ULL * 5 / 4);
	ASSERT_EQ(2U, tick_paced(&r, true, 500, 1500, pace / 100, 1));
	ASSERT_EQ(pace - pace / 8, r.d.pace_ups);
	ASSERT_EQ(1U, r.d.pace_shift);
	/* the tick after a step is settling: its miss moves nothing */
	pace = r.d.pace_ups;
	tick_paced(&r, true, 500, 1500, pace / 100, 1);
	ASSERT_EQ(pace, r.d.pace_ups);
	/* the evidence now takes twice the completions: 4 ticks of 1 */
	r.d.settle = 0;
	for (n = 0; r.d.pace_ups == pace && n < 100; n++) {
		struct bi_depth_stats s = {
			.protected_active = true, .completed = 100, .inflight_max = 2,
			.lat_min_permille = 500, .lat_max_permille = 990, .slots = 8,
			.bound_units_max = pace / 100, .evidence = 300,
		};

		r.now += TICK_NS;
		bi_depth_tick(&r.d, &r.p, &s, r.now);
	}
	ASSERT_EQ(6U, n);	/* 600 completions: 2 x the evidence */
	/* misses down to the floor, then a miss there: 1, no pace, ceiling 2 */
	for (i = 0; i < 40 && r.d.pace_ups; i++) {
		tick_paced(&r, true, 500, 1500, 2000, 1);
		tick_paced(&r, true, 500, 1500, 2000, 1);
		ASSERT_GE(r.d.pace_ups == 0 ? 280000ULL : r.d.pace_ups, 280000ULL);
	}
	ASSERT_EQ(0ULL, r.d.pace_ups);
	ASSERT_EQ(1U, r.d.limit);
	ASSERT_EQ(2U, r.d.ceiling);
	ASSERT_EQ(1U, r.d.probe_shift);	/* its ceiling is tried again later */
}

/*
 * A pace starts afresh: its throughput is what the tenants move under it,
 * not the unpaced raise's ticks before, and a second pace after one that
 * backed off ramps an eighth per evidence again.
 */
TEST(a_pace_starts_afresh)
{
	struct rig r;
	u64 pace;
	u32 i;

	/* at 2 unpaced the flood stalled (0 units), then missed: paced at 280,000 */
	rig_init(&r);
	r.slots = 8;
	tick_paced(&r, true, 0, 0, 0, 1);
	tick_paced(&r, false, 300, 400, 2800, 1);
	ASSERT_EQ(2U, tick_paced(&r, false, 300, 400, 2800, 1));
	tick_paced(&r, true, 300, 1500, 0, 1);
	ASSERT_EQ(280000ULL, r.d.pace_ups);
	/* 2,200 a tick under it (79 %, binds; with the stalled tick 59 %, would not) */
	for (i = 0; i < 3; i++)
		tick_paced(&r, false, 500, 990, 2200, 1);
	ASSERT_EQ(315000ULL, r.d.pace_ups);

	/* a miss backs it off; misses to its floor; the floor misses: 1, no pace */
	tick_paced(&r, true, 500, 1500, 3150, 1);
	ASSERT_EQ(1U, r.d.pace_shift);
	for (i = 0; i < 40 && r.d.pace_ups; i++)
		tick_paced(&r, true, 500, 1500, 2800, 1);
	ASSERT_EQ(0ULL, r.d.pace_ups);
	ASSERT_EQ(1U, r.d.limit);
	/* clean at 1 until 2 is tried again; it misses: a second pace */
	for (i = 0; i < 1000 && r.d.limit == 1; i++)
		tick_paced(&r, false, 300, 400, 2800, 1);
	ASSERT_EQ(2U, r.d.limit);
	tick_paced(&r, true, 300, 1500, 2800, 1);
	pace = r.d.pace_ups;
	ASSERT_EQ(280000ULL, pace);
	ASSERT_EQ(2ULL, r.d.paced);
	pace_settle(&r);
	tick_paced(&r, false, 500, 990, pace / 100, 1);
	tick_paced(&r, false, 500, 990, pace / 100, 1);
	ASSERT_EQ(pace + pace / 8, r.d.pace_ups);
}

/*
 * A pace the bound tenants stay well under binds nothing: it goes, the
 * depth stays.  It goes as a raise: a miss before the next one comes back
 * to a pace at what they moved under it (the pace was the smoothing that
 * held), not to the depth below.
 */
TEST(a_pace_nobody_reaches_goes)
{
	struct rig r;

	rig_paced(_metadata, &r);
	pace_settle(&r);
	tick_paced(&r, false, 500, 990, 2100, 1);	/* 3/4 of 280,000 a second: binds */
	tick_paced(&r, false, 500, 990, 2100, 1);
	ASSERT_EQ(315000ULL, r.d.pace_ups);
	tick_paced(&r, false, 500, 990, 2200, 1);	/* under 3/4 of 315,000 */
	tick_paced(&r, false, 500, 990, 2200, 1);
	ASSERT_EQ(0ULL, r.d.pace_ups);
	ASSERT_EQ(2U, r.d.limit);
	/* unpaced, a miss: paced again at 220,000, what two ticks of 2,200 are */
	ASSERT_EQ(2U, tick_paced(&r, true, 500, 1500, 3000, 1));
	ASSERT_EQ(220000ULL, r.d.pace_ups);
	ASSERT_EQ(220000ULL, r.d.pace_floor_ups);
	ASSERT_EQ(2ULL, r.d.paced);
	/* and that pace's floor missing: the depth below, 2 its ceiling */
	pace_settle(&r);
	ASSERT_EQ(1U, tick_paced(&r, true, 500, 1500, 2200, 1));
	ASSERT_EQ(0ULL, r.d.pace_ups);
	ASSERT_EQ(2U, r.d.ceiling);
}

/*
 * A probe of the ceiling that misses is paced, not failed: the pace held
 * that depth.  A miss after the pace went (the flood too slow to pace
 * again) is a first miss there, not the probe's second: the next try
 * waits probe_ns, no backoff.
 */
TEST(a_miss_after_a_paced_probe_is_not_a_failed_probe)
{
	struct rig r;
	u64 t0;
	u32 i;

	rig_init(&r);
	r.slots = 8;
	ASSERT_EQ(1U, tick_paced(&r, true, 0, 0, 0, 1));
	/* raised to 2 at 900 units a second: 2 misses, too slow to pace: 1, 2 the ceiling */
	tick_paced(&r, false, 300, 400, 9, 1);
	ASSERT_EQ(2U, tick_paced(&r, false, 300, 400, 9, 1));
	ASSERT_EQ(1U, tick_paced(&r, true, 300, 1500, 9, 1));
	ASSERT_EQ(2U, r.d.ceiling);
	/* 2 tried again probe_ns later, the flood faster: it misses, paced */
	for (i = 0; i < 1000 && r.d.limit == 1; i++)
		tick_paced(&r, false, 300, 400, 2800, 1);
	ASSERT_EQ(2U, r.d.limit);
	ASSERT_EQ(2U, tick_paced(&r, true, 300, 1500, 2800, 1));
	ASSERT_NE(0ULL, r.d.pace_ups);
	/* the flood slows to 500 units a second: the pace goes, and a miss can not pace */
	for (i = 0; i < 3; i++)
		tick_paced(&r, false, 500, 990, 5, 1);
	ASSERT_EQ(0ULL, r.d.pace_ups);
	ASSERT_EQ(1U, tick_paced(&r, true, 500, 1500, 5, 1));
	ASSERT_EQ(2U, r.d.ceiling);
	ASSERT_EQ(0U, r.d.probe_shift);
	t0 = r.now;
	ticks_to_raise(&r);
	ASSERT_EQ(2U, r.d.limit);
	ASSERT_EQ(r.p.probe_ns, r.now - t0);
}

/* The pace's spacing: each bio after the last, no credit for idle time. */
TEST(the_pace_spaces_a_tenants_bios_by_their_units)
{
	u64 next = 0, now = 1000000;

	/* 500,000 units a second: a 64-unit bio every 128 us */
	ASSERT_EQ(0ULL, bi_depth_pace_delay(&next, 64, 500000, now));
	ASSERT_EQ(now + 128000, next);
	ASSERT_EQ(128000ULL, bi_depth_pace_delay(&next, 64, 500000, now));
	ASSERT_EQ(255990ULL, bi_depth_pace_delay(&next, 64, 500000, now + 10));
	/* idle for a second: the next goes at once, one bio's spacing after */
	now += BI_NSEC_PER_SEC;
	ASSERT_EQ(0ULL, bi_depth_pace_delay(&next, 64, 500000, now));
	ASSERT_EQ(now + 128000, next);
	/* a bio of no units counts one */
	ASSERT_EQ(128000ULL, bi_depth_pace_delay(&next, 0, 500000, now));
	ASSERT_EQ(now + 130000, next);
}

TEST_HARNESS_MAIN
