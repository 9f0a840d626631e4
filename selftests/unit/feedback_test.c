// SPDX-License-Identifier: GPL-2.0
/*
 * feedback_test.c - the controllers' settings from tenant and device lines
 * (kmod/core/feedback.c): every key reaches its parameter with its scale
 * (percent to permille, us and ms to ns), the request cap's start (S0-13),
 * a tenant's own overload threshold (S2-16), and "above its commitment"
 * (S2-09) at the edge of the isolation band and of the committed rate.
 */
#include <string.h>

#include "feedback.h"
#include "kselftest_harness.h"

#define MS	BI_NSEC_PER_MSEC
#define US	BI_NSEC_PER_USEC

static int tline(struct bi_tenant_conf *c, const char *line)
{
	return bi_conf_parse(c, line, strlen(line), NULL);
}

static int dline(struct bi_dev_conf *d, const char *line)
{
	bi_dev_conf_init(d);
	return bi_dev_conf_parse(d, line, strlen(line), NULL);
}

TEST(overload_params_from_the_device_line)
{
	struct bi_ovl_params p;
	struct bi_dev_conf d;

	ASSERT_EQ(0, dline(&d, "window_ticks=7 overload_pct=15 mult_up=30 mult_down=4 "
			   "holdoff_ticks=5 ideal_us=250 ideal_band_us=700 overload=ideal"));
	bi_fb_ovl_params(&p, &d);
	ASSERT_EQ(7U, p.window_ticks);
	ASSERT_EQ(150U, p.threshold_permille);
	ASSERT_EQ(30U, p.t_first);
	ASSERT_EQ(30U, p.t_next);
	ASSERT_EQ(4U, p.r_release);
	ASSERT_EQ(5U, p.holdoff_ticks);
	ASSERT_EQ(250 * US, (u64)p.theta_ns);
	ASSERT_EQ(700 * US, (u64)p.band_ns);
	ASSERT_TRUE(p.ideal);
	ASSERT_FALSE(p.simple);
	ASSERT_EQ(0, dline(&d, "overload=simple"));
	bi_fb_ovl_params(&p, &d);
	ASSERT_TRUE(p.simple);
	ASSERT_FALSE(p.ideal);
	ASSERT_EQ(10U, p.window_ticks);		/* the defaults */
	ASSERT_EQ(100U, p.threshold_permille);
	ASSERT_EQ(20U, p.t_first);
	ASSERT_EQ(2U, p.r_release);
	ASSERT_EQ(3U, p.holdoff_ticks);
}

TEST(isolation_params_from_the_tenant_line)
{
	struct bi_tenant_conf c;
	struct bi_iso_params p;

	ASSERT_EQ(0, tline(&c, "alloc=500 isolation=wc slots=70 hover_ms=300 "
			   "delay_step_us=150 delay_max_us=9000 abuse_pct=300 alloc_metric=iops"));
	bi_fb_iso_params(&p, &c, 40 * MS);
	ASSERT_EQ(500ULL, p.alloc);
	ASSERT_FALSE(p.strict);
	ASSERT_EQ(64U, p.n_max);		/* the slot bitmap's size */
	ASSERT_EQ(300 * MS, p.hover_ns);
	ASSERT_EQ(150 * US, p.delay_step_ns);
	ASSERT_EQ(9000 * US, p.delay_max_ns);
	ASSERT_EQ(3000U, p.abuse_permille);
	ASSERT_EQ(40 * MS, p.tick_ns);
	ASSERT_FALSE(p.metric_units);
	ASSERT_EQ(0, tline(&c, "alloc=500 isolation=strict slots=8"));
	bi_fb_iso_params(&p, &c, 100 * MS);
	ASSERT_TRUE(p.strict);
	ASSERT_EQ(8U, p.n_max);
	ASSERT_TRUE(p.metric_units);		/* units by default */
	ASSERT_EQ(2000U, p.abuse_permille);
	ASSERT_EQ(1000 * MS, p.hover_ns);
	ASSERT_EQ(100 * US, p.delay_step_ns);
}

TEST(rate_params_from_the_tenant_line)
{
	struct bi_tenant_conf c;
	struct bi_rate_params p;

	ASSERT_EQ(0, tline(&c, "lower_ticks=5 raise_ticks=7 safety_pct=130"));
	bi_fb_rate_params(&p, &c, 1000, 50 * MS);
	ASSERT_EQ(1000ULL, p.committed_ups);
	ASSERT_EQ(5U, p.n_lower);
	ASSERT_EQ(7U, p.m_raise);
	ASSERT_EQ(1300U, p.safety_permille);
	ASSERT_EQ(50 * MS, p.tick_ns);
	bi_fb_rate_params(&p, &c, BI_CONF_UNLIMITED, 50 * MS);
	ASSERT_EQ(0ULL, p.committed_ups);
}

/*
 * A line that sets none of the controller's keys runs the seed's controller
 * (S0-08..S0-10, ctl_rate.h): n = 3, m = 4, s = 1.2, as grammar.md's
 * defaults say.
 */
TEST(rate_params_default_to_the_seed)
{
	struct bi_rate_params p, seed;
	struct bi_tenant_conf c;

	ASSERT_EQ(0, tline(&c, "runits=1000"));
	bi_fb_rate_params(&p, &c, 1000, 50 * MS);
	bi_rate_params_init(&seed, 1000);
	ASSERT_EQ(3U, p.n_lower);
	ASSERT_EQ(4U, p.m_raise);
	ASSERT_EQ(1200U, p.safety_permille);
	ASSERT_EQ(seed.n_lower, p.n_lower);
	ASSERT_EQ(seed.m_raise, p.m_raise);
	ASSERT_EQ(seed.safety_permille, p.safety_permille);
}

/* S0-13: the iops cap if there is one, else C x 0.3, else none. */
TEST(request_cap_start)
{
	struct bi_tenant_conf c;

	ASSERT_EQ(0, tline(&c, "riops=250"));
	ASSERT_EQ(250000ULL, bi_fb_initial_cap_mrps(&c, 1000, BI_DIR_READ));
	ASSERT_EQ(300000ULL, bi_fb_initial_cap_mrps(&c, 1000, BI_DIR_WRITE));
	ASSERT_EQ(0ULL, bi_fb_initial_cap_mrps(&c, BI_CONF_UNLIMITED, BI_DIR_WRITE));
}

/* S2-16: a miss_pct other than the device's overload_pct is the tenant's own. */
TEST(tenant_threshold_override)
{
	struct bi_tenant_conf c;
	struct bi_dev_conf d;

	ASSERT_EQ(0, dline(&d, "overload_pct=10"));
	ASSERT_EQ(0, tline(&c, "miss_pct=10"));
	ASSERT_EQ(0U, bi_fb_tenant_threshold(&c, &d));
	ASSERT_EQ(0, tline(&c, "miss_pct=9"));
	ASSERT_EQ(90U, bi_fb_tenant_threshold(&c, &d));
	ASSERT_EQ(0, tline(&c, "miss_pct=11"));
	ASSERT_EQ(110U, bi_fb_tenant_threshold(&c, &d));
}

/*
 * S2-09: above its commitment means above the isolation band (allocation
 * + 3 %, not at its edge) by the usage and by the usage over its window
 * of bios (a catch-up after a wait is not above), or above C in a
 * direction with a committed rate; a tenant promised nothing is above
 * whenever it is active.
 */
TEST(above_commitment_edges)
{
	struct bi_rate_params rp[BI_NR_DIRS];
	struct bi_rate_ctl rc[BI_NR_DIRS];
	struct bi_tenant_conf c;
	struct bi_iso iso;
	struct bi_iso_params ip;

	memset(rc, 0, sizeof(rc));
	bi_rate_params_init(&rp[0], 0);
	bi_rate_params_init(&rp[1], 0);
	ASSERT_EQ(0, tline(&c, "alloc=1000"));
	bi_fb_iso_params(&ip, &c, 100 * MS);
	bi_iso_init(&iso, &ip);
	iso.usage = 1030;
	iso.usage_win = iso.usage;
	ASSERT_FALSE(bi_fb_above_commit(&c, &iso, rc, rp, true));
	iso.usage = 1031;
	iso.usage_win = iso.usage;
	ASSERT_TRUE(bi_fb_above_commit(&c, &iso, rc, rp, false));
	/* above by the tick's usage, within it over the window: catching up */
	iso.usage_win = 1000;
	ASSERT_FALSE(bi_fb_above_commit(&c, &iso, rc, rp, true));
	iso.usage_win = iso.usage;
	ASSERT_EQ(0, tline(&c, "alloc=100000"));	/* the band is 3 % exactly */
	iso.usage = 103000;
	iso.usage_win = iso.usage;
	ASSERT_FALSE(bi_fb_above_commit(&c, &iso, rc, rp, true));
	iso.usage = 103001;
	iso.usage_win = iso.usage;
	ASSERT_TRUE(bi_fb_above_commit(&c, &iso, rc, rp, true));

	ASSERT_EQ(0, tline(&c, ""));		/* no allocation */
	iso.usage = 0;
	ASSERT_TRUE(bi_fb_above_commit(&c, &iso, rc, rp, true));
	ASSERT_FALSE(bi_fb_above_commit(&c, &iso, rc, rp, false));
	/* a committed write rate C = 500 units/s: above iff L > C */
	bi_rate_params_init(&rp[BI_DIR_WRITE], 500);
	rc[BI_DIR_WRITE].l_fp = (u64)500 << BI_FP_SHIFT;
	ASSERT_FALSE(bi_fb_above_commit(&c, &iso, rc, rp, true));
	rc[BI_DIR_WRITE].l_fp++;
	ASSERT_TRUE(bi_fb_above_commit(&c, &iso, rc, rp, false));
	rc[BI_DIR_READ].l_fp = (u64)10000 << BI_FP_SHIFT;	/* no read commitment */
	rc[BI_DIR_WRITE].l_fp = 0;
	ASSERT_FALSE(bi_fb_above_commit(&c, &iso, rc, rp, true));
}

/* S3-13: smoothing_pct is the usage's alpha in percent: 100 is no smoothing */
TEST(smoothing_pct_is_alpha_in_percent)
{
	struct bi_tenant_conf c;
	struct bi_iso_params ip;

	ASSERT_EQ(0, tline(&c, "alloc=1000 smoothing_pct=100"));
	bi_fb_iso_params(&ip, &c, 10 * MS);
	ASSERT_EQ(BI_FP_ONE, ip.alpha_fp);
	ASSERT_EQ(0, tline(&c, "alloc=1000"));
	bi_fb_iso_params(&ip, &c, 10 * MS);
	ASSERT_EQ(BI_ISO_ALPHA_FP_DEF, ip.alpha_fp);
	ASSERT_EQ(BI_ISO_WINDOW_BIOS_DEF, ip.window_bios);
}

/*
 * S3-18: a work-conserving allocation is held in an episode that other
 * tenants' misses are in (during it, or in the window before it began),
 * not in one made of the tenant's own misses only.
 */
TEST(wc_held_only_for_other_tenants_misses)
{
	struct bi_fb_episode e = { 0 };
	struct bi_ovl o = { 0 };
	u64 others = 0;

	bi_fb_episode_tick(&e, &o);			/* tick 1: quiet */
	ASSERT_FALSE(bi_fb_wc_held(&e, &others, 0, 5));
	o.overloaded = true;
	bi_fb_episode_tick(&e, &o);			/* tick 2: episode, own misses */
	ASSERT_EQ(2, e.start);
	ASSERT_FALSE(bi_fb_wc_held(&e, &others, 0, 5));
	bi_fb_episode_tick(&e, &o);			/* tick 3: another tenant misses */
	ASSERT_TRUE(bi_fb_wc_held(&e, &others, 3, 5));
	o.overloaded = false;
	o.m = 10;					/* the multiplier decays: still on */
	bi_fb_episode_tick(&e, &o);
	ASSERT_TRUE(bi_fb_wc_held(&e, &others, 0, 5));
	o.m = 0;					/* over */
	bi_fb_episode_tick(&e, &o);			/* tick 5 */
	ASSERT_FALSE(bi_fb_wc_held(&e, &others, 0, 5));
	/* tick 6: quiet, others miss (the window fills); tick 7: episode */
	bi_fb_episode_tick(&e, &o);
	ASSERT_FALSE(bi_fb_wc_held(&e, &others, 2, 5));
	o.overloaded = true;
	bi_fb_episode_tick(&e, &o);
	ASSERT_EQ(7, e.start);
	ASSERT_TRUE(bi_fb_wc_held(&e, &others, 0, 5));
	/* a new episode long after the others' last miss: own misses only */
	o.overloaded = false;
	for (int i = 0; i < 10; i++)
		bi_fb_episode_tick(&e, &o);
	o.overloaded = true;
	bi_fb_episode_tick(&e, &o);			/* tick 18, others at 6 */
	ASSERT_FALSE(bi_fb_wc_held(&e, &others, 0, 5));
	ASSERT_TRUE(bi_fb_wc_held(&e, &others, 0, 12));	/* within a 12-tick window */
}

TEST_HARNESS_MAIN
