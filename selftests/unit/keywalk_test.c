// SPDX-License-Identifier: GPL-2.0
/*
 * keywalk_test.c - every key the grammar accepts changes what the module
 * runs (issue 17: no key that does nothing).
 *
 * The walk goes over the grammar's own key tables (bi_conf_key_name(),
 * bi_dev_conf_key_name()), so a key added to the grammar without a row
 * below fails it.  Each row gives a context line and a setting line.  The
 * state the module derives from a configuration is taken the way the
 * module takes it: the meter as bi_meter_configure() sets it up, the
 * feedback controllers' parameters as blkiso_feedback.c builds them
 * (bi_fb_*), the class and rank of a set of probe bios, their cost in
 * units and whether the overload gate sheds them.  A row passes when the
 * setting changes that state.  A key the kernel glue reads itself
 * (no core function between) names instead the guest test that asserts
 * its effect, and the walk checks that the test exists.  Locked keys must
 * be refused.
 */
#include <stdio.h>
#include <string.h>

#include "feedback.h"
#include "meter.h"
#include "kselftest_harness.h"

/* What the module derives from a configuration, flattened. */
#define STATE_MAX	512

struct state {
	u64 v[STATE_MAX];
	u32 n;
};

static void put(struct state *s, u64 v)
{
	if (s->n < STATE_MAX)
		s->v[s->n] = v;
	s->n++;
}

static const struct bi_io probes[] = {
	{ .op = BI_OP_READ, .bytes = 4096, .flags = BI_IO_SYNC, .prio_class = BI_PRIO_BE },
	{ .op = BI_OP_READ, .bytes = 4096, .flags = BI_IO_SYNC, .prio_class = BI_PRIO_RT },
	{ .op = BI_OP_READ, .bytes = 4096, .flags = BI_IO_SYNC, .prio_class = BI_PRIO_IDLE },
	{ .op = BI_OP_READ, .bytes = 307200, .flags = BI_IO_SYNC, .prio_class = BI_PRIO_BE },
	{ .op = BI_OP_READ, .bytes = 2 << 20, .flags = BI_IO_SYNC, .prio_class = BI_PRIO_BE },
	{ .op = BI_OP_WRITE, .bytes = 8192, .prio_class = BI_PRIO_BE },
	{ .op = BI_OP_WRITE, .bytes = 1 << 20, .prio_class = BI_PRIO_BE },
	{ .op = BI_OP_DISCARD, .bytes = 1 << 20, .prio_class = BI_PRIO_BE },
	{ .op = BI_OP_WRITE_ZEROES, .bytes = 4096, .prio_class = BI_PRIO_BE },
	{ .op = BI_OP_OTHER, .bytes = 0, .prio_class = BI_PRIO_BE },
};

static void derive(const struct bi_tenant_conf *c, const struct bi_dev_conf *d,
		   struct state *s)
{
	static struct bi_meter m;
	const struct bi_meter_cfg *mc;
	struct bi_iso_params ip;
	struct bi_rate_params rp;
	struct bi_ovl_params op;
	u64 tick_ns = (u64)d->tick_ms * BI_NSEC_PER_MSEC, committed;
	u32 i, j;

	s->n = 0;
	bi_meter_init(&m, 0);
	bi_meter_configure(&m, c, d, 0);
	mc = bi_meter_cfg(&m);
	put(s, mc->key_on);
	for (i = 0; i < BI_NR_KEYS; i++) {
		put(s, m.key[i].b.rate);
		put(s, (u64)m.key[i].b.max_tokens);
		put(s, (u64)m.key[i].b.tokens);
		put(s, (u64)m.key[i].local_max);
		put(s, (u64)m.key[i].min_batch);
		put(s, m.key[i].hold_ns);
	}
	put(s, (u64)mc->wfixed);
	put(s, (u64)m.ewma_init);
	put(s, mc->initial);
	put(s, m.ad.enabled);
	put(s, m.ad.adapt_pct);
	put(s, mc->db.units);
	put(s, mc->db.pct);
	put(s, mc->cls_on);
	put(s, m.cls_rated);
	for (i = 0; i < BI_NR_CLASSES; i++) {
		put(s, m.cls[i].rate);
		put(s, (u64)m.cls[i].max_tokens);
		put(s, m.policy[i].nr_buckets);
		for (j = 0; j < BI_POLICY_MAX_BUCKETS; j++)
			put(s, j < m.policy[i].nr_buckets ? m.policy[i].bucket[j] : 0);
		put(s, m.policy[i].deduct);
		put(s, m.policy[i].action);
		put(s, (u64)m.policy[i].min_tokens);
		put(s, (u64)m.policy[i].floor_tokens);
	}
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		put(s, bi_classify(&mc->rules, &probes[i]));
		put(s, bi_io_units(&mc->cost, &probes[i]));
		put(s, bi_conf_rank(c, &probes[i]));
		put(s, bi_rate_shed_large_read(&probes[i], true, d->shed_bytes));
	}
	bi_fb_iso_params(&ip, c, tick_ns);
	put(s, ip.alloc);
	put(s, ip.delay_step_ns);
	put(s, ip.delay_max_ns);
	put(s, ip.hover_ns);
	put(s, ip.small_delay_ns);
	put(s, ip.tick_ns);
	put(s, ip.alpha_fp);
	put(s, ip.tol_permille);
	put(s, ip.n_max);
	put(s, ip.eval_ticks);
	put(s, ip.abuse_permille);
	put(s, ip.horizon_ticks);
	put(s, ip.window_bios);
	put(s, ip.delay_mode);
	put(s, ip.strict);
	put(s, ip.predict_underuse);
	put(s, ip.reduce_below_alloc);
	put(s, ip.predictive);
	put(s, ip.metric_units);
	put(s, bi_conf_delay_max_us(c, 1000));
	for (i = 0; i < BI_NR_DIRS; i++) {
		committed = bi_conf_rate_units(c, &d->cost, i);
		bi_fb_rate_params(&rp, c, committed, tick_ns);
		put(s, rp.committed_ups);
		put(s, rp.n_lower);
		put(s, rp.m_raise);
		put(s, rp.safety_permille);
		put(s, rp.tick_ns);
		put(s, bi_fb_initial_cap_mrps(c, committed, i));
	}
	bi_fb_ovl_params(&op, d);
	put(s, op.window_ticks);
	put(s, op.threshold_permille);
	put(s, op.t_first);
	put(s, op.t_next);
	put(s, op.r_release);
	put(s, op.holdoff_ticks);
	put(s, (u64)op.theta_ns);
	put(s, (u64)op.band_ns);
	put(s, op.simple);
	put(s, op.ideal);
	put(s, bi_fb_tenant_threshold(c, d));
	put(s, bi_fb_tenant_window(c));
	put(s, bi_dev_conf_hold_ms(d));
}

/*
 * One row per key: @ctx is applied first (what the key needs to act on:
 * a cap for burst_ms, class rates for a policy), then @set; the state of
 * ctx + set must differ from the state of ctx alone.  @guest instead: the
 * guest test ("file.c:test") that asserts a key the kernel glue reads
 * itself.  @locked: the key must be refused.
 */
struct walk {
	const char *key, *ctx, *set, *guest;
	bool locked;
};

#define CORE(k, c, s)	{ k, c, s, NULL, false }
#define GLUE(k, s, g)	{ k, "", s, g, false }
#define LOCKED(k)	{ k, "", k "=1", NULL, true }
#define CLASS(cl)								\
	CORE(cl ".units", "", cl ".units=100"),					\
	CORE(cl ".policy", "hi.units=100 mid.units=100 lo.units=100",		\
	     cl ".policy=mid,hi"),						\
	CORE(cl ".deduct", "hi.units=100 mid.units=100 lo.units=100",		\
	     cl ".deduct=spill"),						\
	CORE(cl ".min", "hi.units=100 mid.units=100 lo.units=100", cl ".min=-7"), \
	CORE(cl ".floor", "hi.units=100 mid.units=100 lo.units=100",		\
	     cl ".floor=-70"),							\
	CORE(cl ".action", "hi.units=100 mid.units=100 lo.units=100",		\
	     cl ".action=reject")
#define RULE(r)	CORE(r, "", r "=lo:wzero")

static const struct walk tenant_walk[] = {
	CORE("riops", "", "riops=100"),
	CORE("wiops", "", "wiops=100"),
	CORE("rbps", "", "rbps=1M"),
	CORE("wbps", "", "wbps=1M"),
	CORE("runits", "", "runits=1000"),
	CORE("wunits", "", "wunits=1000"),
	CORE("alloc", "", "alloc=500"),
	CORE("alloc_metric", "alloc=500", "alloc_metric=iops"),
	CORE("isolation", "alloc=500", "isolation=strict"),
	CORE("mode", "runits=1000", "mode=request"),
	CORE("burst_ms", "runits=1000", "burst_ms=500"),
	CORE("burst_limit", "riops=1000", "burst_limit=7"),
	CORE("initial", "runits=1000", "initial=fixed:8"),
	CORE("min_tokens", "hi.units=100", "min_tokens=5"),
	CORE("floor", "hi.units=100", "floor=-50"),
	CORE("deadband", "runits=1000", "deadband=4"),
	GLUE("latency_us", "latency_us=1000",
	     "feedback_test.c:overload_multiplier_adds_t_holds_k_falls_r"),
	CORE("prio", "", "prio=3"),
	CORE("slots", "alloc=500", "slots=9"),
	CORE("lower_ticks", "runits=1000", "lower_ticks=2"),
	CORE("raise_ticks", "runits=1000", "raise_ticks=6"),
	CORE("safety_pct", "runits=1000", "safety_pct=150"),
	CORE("adapt_pct", "runits=1000 initial=ewma", "adapt_pct=50"),
	CORE("miss_pct", "", "miss_pct=20"),
	CORE("window_ticks", "", "window_ticks=5"),
	CORE("hover_ms", "alloc=500", "hover_ms=0"),
	CORE("delay_step_us", "alloc=500", "delay_step_us=250"),
	CORE("delay_max_us", "alloc=500", "delay_max_us=20000"),
	CORE("abuse_pct", "alloc=500", "abuse_pct=300"),
	CORE("delay_mode", "alloc=500", "delay_mode=single"),
	CORE("reduce_below_alloc", "alloc=500", "reduce_below_alloc=1"),
	CORE("predictive", "alloc=500", "predictive=1"),
	CORE("smoothing_pct", "alloc=500", "smoothing_pct=10"),
	CLASS("hi"),
	CLASS("mid"),
	CLASS("lo"),
	CORE("sys.units", "", "sys.units=50"),
	LOCKED("sys.policy"), LOCKED("sys.deduct"), LOCKED("sys.min"),
	LOCKED("sys.floor"), LOCKED("sys.action"),
	CORE("rdef", "", "rdef=lo"),
	RULE("r0"), RULE("r1"), RULE("r2"), RULE("r3"),
	RULE("r4"), RULE("r5"), RULE("r6"), RULE("r7"),
};

/* Device rows: ctx and set are device lines; a tenant with caps and alloc. */
#define DEV_TENANT	"runits=100000 riops=1000 alloc=500"

static const struct walk dev_walk[] = {
	CORE("unit_bytes", "", "unit_bytes=4K"),
	CORE("discard_units", "", "discard_units=8"),
	CORE("write_unit_weight", "", "write_unit_weight=3"),
	CORE("tick_ms", "", "tick_ms=10"),
	GLUE("reject_mode", "reject_mode=1", "meter_test.c:reject_mode_fails_a_throttled_bio"),
	CORE("overload", "", "overload=simple"),
	CORE("window_ticks", "", "window_ticks=20"),
	CORE("overload_pct", "", "overload_pct=25"),
	CORE("mult_up", "", "mult_up=40"),
	CORE("mult_down", "", "mult_down=1"),
	CORE("holdoff_ticks", "", "holdoff_ticks=0"),
	CORE("ideal_us", "", "ideal_us=50"),
	CORE("ideal_band_us", "", "ideal_band_us=1000"),
	CORE("shed_bytes", "", "shed_bytes=1M"),
	CORE("local_max_pct", "", "local_max_pct=50"),
	CORE("hold_ms", "", "hold_ms=200"),
	CORE("dispense_hold_ms", "", "dispense_hold_ms=5"),
	GLUE("chunk_bytes", "chunk_bytes=256K",
	     "iomax_test.c:chunk_bytes_sends_a_large_write_in_pieces"),
	CORE("depth_limit", "", "depth_limit=1"),
};

/* Does selftests/guest/@file define @test? (cwd: the repository's top.) */
static bool guest_test_exists(const char *ref)
{
	char path[256], want[160], line[512];
	const char *colon = strchr(ref, ':');
	bool found = false;
	FILE *f;

	if (!colon)
		return false;
	snprintf(path, sizeof(path), "selftests/guest/%.*s", (int)(colon - ref), ref);
	snprintf(want, sizeof(want), ", %s,", colon + 1);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "TEST_F", 6) && strstr(line, want);
	fclose(f);
	return found;
}

static const struct walk *find(const struct walk *w, u32 n, const char *key)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (!strcmp(w[i].key, key))
			return &w[i];
	return NULL;
}

static int parse(bool dev, void *out, const char *line)
{
	return dev ? bi_dev_conf_parse(out, line, strlen(line), NULL) :
		     bi_conf_parse(out, line, strlen(line), NULL);
}

static int merge(bool dev, void *out, const char *line)
{
	return dev ? bi_dev_conf_merge(out, line, strlen(line), NULL) :
		     bi_conf_merge(out, line, strlen(line), NULL);
}

static void walk(struct __test_metadata *_metadata, bool dev,
		 const struct walk *w, u32 nw)
{
	u32 nkeys = dev ? bi_dev_conf_nr_keys() : bi_conf_nr_keys(), i, checked = 0;
	static struct state a, b;
	struct bi_tenant_conf tc;
	struct bi_dev_conf dc;

	for (i = 0; i < nkeys; i++) {
		const char *key = dev ? bi_dev_conf_key_name(i) : bi_conf_key_name(i);
		const struct walk *r = find(w, nw, key);
		void *mine = dev ? (void *)&dc : (void *)&tc;

		ASSERT_NE(NULL, r) TH_LOG("key %s has no effect check in keywalk_test.c", key);
		ASSERT_EQ(0, parse(false, &tc, dev ? DEV_TENANT : ""));
		bi_dev_conf_init(&dc);
		ASSERT_EQ(0, parse(dev, mine, r->ctx)) TH_LOG("%s: context '%s'", key, r->ctx);
		if (r->locked) {
			EXPECT_EQ(-BI_EPERM, merge(dev, mine, r->set)) TH_LOG("%s", key);
			continue;
		}
		if (r->guest) {
			EXPECT_TRUE(guest_test_exists(r->guest)) TH_LOG("%s: %s", key, r->guest);
			EXPECT_EQ(0, merge(dev, mine, r->set)) TH_LOG("%s", r->set);
			continue;
		}
		derive(&tc, &dc, &a);
		ASSERT_EQ(0, merge(dev, mine, r->set)) TH_LOG("%s: '%s'", key, r->set);
		derive(&tc, &dc, &b);
		ASSERT_GE(STATE_MAX, a.n);
		EXPECT_TRUE(a.n == b.n && memcmp(a.v, b.v, a.n * sizeof(a.v[0])))
			TH_LOG("'%s' after '%s' changes nothing the module runs", r->set, r->ctx);
		checked++;
	}
	TH_LOG("%s keys: %u checked in the derived state, the rest in a guest or locked",
	       dev ? "device" : "tenant", checked);
}

TEST(every_tenant_key_changes_what_the_module_runs)
{
	walk(_metadata, false, tenant_walk, sizeof(tenant_walk) / sizeof(tenant_walk[0]));
}

TEST(every_device_key_changes_what_the_module_runs)
{
	walk(_metadata, true, dev_walk, sizeof(dev_walk) / sizeof(dev_walk[0]));
}

/*
 * A word key's default written as its word is the default: "predictive=0"
 * leaves predictive off (the word's value, not only its position).
 */
TEST(default_words_are_the_defaults)
{
	static const char *const lines[] = {
		"delay_mode=spread", "reduce_below_alloc=0", "predictive=0",
		"isolation=wc", "alloc_metric=units", "mode=work", "initial=exact",
	};
	static struct state a, b;
	struct bi_tenant_conf tc;
	struct bi_dev_conf dc;
	u32 i;

	bi_dev_conf_init(&dc);
	ASSERT_EQ(0, parse(false, &tc, "alloc=500 runits=1000"));
	derive(&tc, &dc, &a);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		ASSERT_EQ(0, parse(false, &tc, "alloc=500 runits=1000"));
		ASSERT_EQ(0, merge(false, &tc, lines[i]));
		derive(&tc, &dc, &b);
		EXPECT_EQ(0, memcmp(a.v, b.v, a.n * sizeof(a.v[0]))) TH_LOG("%s", lines[i]);
	}
	ASSERT_EQ(0, parse(true, &dc, "reject_mode=0 overload=off"));
	EXPECT_EQ(0, dc.reject_mode);
	EXPECT_EQ(BI_OVERLOAD_OFF, dc.overload);
}

/* The walk can fail: a setting that changes nothing is caught. */
TEST(a_key_without_effect_is_caught)
{
	static struct state a, b;
	struct bi_tenant_conf tc;
	struct bi_dev_conf dc;

	bi_dev_conf_init(&dc);
	ASSERT_EQ(0, bi_conf_parse(&tc, "", 0, NULL));
	derive(&tc, &dc, &a);
	/* burst_ms without a cap: no bucket to size */
	ASSERT_EQ(0, bi_conf_merge(&tc, "burst_ms=500", 12, NULL));
	derive(&tc, &dc, &b);
	EXPECT_EQ(a.n, b.n);
	EXPECT_EQ(0, memcmp(a.v, b.v, a.n * sizeof(a.v[0])));
	EXPECT_FALSE(guest_test_exists("meter_test.c:no_such_test"));
}

TEST_HARNESS_MAIN
