// SPDX-License-Identifier: GPL-2.0
/*
 * dispense_test.c - global/local dispensing (kmod/core/dispense.c): S4-02,
 * S4-03, S4-04, S4-05, S4-06, S4-07, S4-09, A-34, A-35, A-36 (the
 * over-admission bound), conservation when completions land on another
 * CPU, and S1-16 with threads: 64 threads, each owning one local bucket (a
 * pinned task on its own CPU), race through the real local/global path for
 * 10 tokens, 1000 times; the global-dispense ratio is asserted too.
 */
#include <pthread.h>
#include "dispense.h"
#include "tokrng.h"
#include "kselftest_harness.h"

#define MS	BI_NSEC_PER_MSEC
#define SEC	BI_NSEC_PER_SEC

/* The current interval's demand is @units (the balance kept). */
static void set_cur_units(struct bi_local *l, u32 units)
{
	l->flow_base = (u32)l->tokens + units;
}

/* S4-02 / A-34: dispense up to the request if available > threshold. */
TEST(s4_02_dispense_rule)
{
	struct bi_global g;
	u64 retry;

	bi_global_init(&g, 0, 100, 3, 0);
	ASSERT_EQ(3, bi_global_dispense(&g, 10, 1, 10, 0, &retry, NULL));
	ASSERT_EQ(U64_MAX, retry);			/* rate 0: never */
	ASSERT_EQ(0, bi_global_dispense(&g, 10, 1, 10, 0, NULL, NULL));	/* insufficient */
	ASSERT_EQ(1ULL, g.nr_refused);
	bi_global_init(&g, 0, 100, 4, 0);
	g.threshold = 5;
	ASSERT_EQ(0, bi_global_dispense(&g, 10, 1, 10, 0, NULL, NULL));
	bi_global_init(&g, 0, 100, 8, 0);
	g.threshold = 5;
	ASSERT_EQ(3, bi_global_dispense(&g, 10, 1, 10, 0, NULL, NULL));
	ASSERT_EQ(5, g.b.tokens);
	/* negative threshold: borrowing from the global bucket */
	bi_global_init(&g, 0, 100, 0, 0);
	g.threshold = -20;
	ASSERT_EQ(20, bi_global_dispense(&g, 30, 1, 30, 0, NULL, NULL));
	ASSERT_EQ(-20, g.b.tokens);
}

/*
 * A key capped again while in use: bi_global_restart() waits for the lock
 * a completion holds (bi_global_init() used to zero it under the holder),
 * starts the bucket afresh, keeps the dispense counters, bumps the
 * generation.
 */
struct restart_arg {
	struct bi_global *g;
	int done;
};

static void *restart_thread(void *p)
{
	struct restart_arg *a = p;

	bi_global_restart(a->g, 1000, 200, 200, 5 * SEC);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(restart_keeps_the_lock_and_the_counters)
{
	struct bi_global g;
	struct restart_arg a = { .g = &g };
	unsigned long flags;
	pthread_t th;
	u32 gen;
	int i;

	bi_global_init(&g, 0, 100, 0, 0);
	ASSERT_EQ(0, bi_global_dispense(&g, 10, 1, 10, 0, NULL, NULL));
	gen = g.gen;
	flags = bi_lock_irqsave(&g.lock);		/* a completion holds it */
	ASSERT_EQ(0, pthread_create(&th, NULL, restart_thread, &a));
	for (i = 0; i < 50; i++) {
		sched_yield();
		ASSERT_EQ(0, __atomic_load_n(&a.done, __ATOMIC_ACQUIRE));
	}
	bi_unlock_irqrestore(&g.lock, flags);
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(1, a.done);
	ASSERT_EQ(200, g.b.tokens);
	ASSERT_EQ(1000ULL, g.b.rate);
	ASSERT_EQ(1ULL, g.nr_requests);
	ASSERT_EQ(1ULL, g.nr_refused);
	ASSERT_EQ(gen + 1, g.gen);
	/* and the lock is free */
	flags = bi_lock_irqsave(&g.lock);
	bi_unlock_irqrestore(&g.lock, flags);
}

/* S4-03 / A-38: 1000/s gives +10 per 10 ms interval, capped at max. */
TEST(s4_03_interval_refill)
{
	struct bi_global g;
	u64 t;

	bi_global_init(&g, 1000, 35, 0, 0);
	for (t = 10 * MS; t <= 30 * MS; t += 10 * MS) {
		bi_bucket_refill(&g.b, t);
		ASSERT_EQ((s64)(t / MS), g.b.tokens);
	}
	bi_bucket_refill(&g.b, 40 * MS);
	ASSERT_EQ(35, g.b.tokens);
}

/* S4-04: on-demand refill: 1000/s, max 500, current 100. */
TEST(s4_04_lazy_refill)
{
	struct bi_global g;

	bi_global_init(&g, 1000, 500, 100, 0);
	ASSERT_EQ(1, bi_global_dispense(&g, 1, 1, 1, 250 * MS, NULL, NULL));
	ASSERT_EQ(349, g.b.tokens);			/* 350 before the dispense */
	bi_global_init(&g, 1000, 500, 100, 0);
	ASSERT_EQ(1, bi_global_dispense(&g, 1, 1, 1, 2 * SEC, NULL, NULL));
	ASSERT_EQ(499, g.b.tokens);			/* capped at 500 */
}

/* a new capacity sets the local cap (1/16 of it, at least 1). */
TEST(set_recomputes_local_max)
{
	struct bi_global g;

	bi_global_init(&g, 1000, 16000, 0, 0);
	ASSERT_EQ(1000, g.local_max);
	bi_global_set(&g, 1000, 3200, 0);
	ASSERT_EQ(200, g.local_max);
	bi_global_set(&g, 1000, 10, 0);
	ASSERT_EQ(1, g.local_max);
}

/*
 * bi_global_tune() sets rate, capacity, local share, batch and hold in one
 * step (the meter's configure); a retune keeps the balance, a restart fills
 * the bucket.
 */
TEST(tune_sets_share_batch_and_hold_together)
{
	struct bi_global g;

	bi_global_init(&g, 1000, 16000, 100, 0);
	bi_global_tune(&g, false, 2000, 8000, 300, 50, 7 * MS, 0);
	EXPECT_EQ(2000ULL, g.b.rate);
	EXPECT_EQ(8000, g.b.max_tokens);
	EXPECT_EQ(100, g.b.tokens);
	EXPECT_EQ(300, g.local_max);
	EXPECT_EQ(50, g.min_batch);
	EXPECT_EQ(7 * MS, g.hold_ns);
	bi_global_tune(&g, true, 2000, 8000, 200, 40, 9 * MS, 0);
	EXPECT_EQ(8000, g.b.tokens);
	EXPECT_EQ(200, g.local_max);
	EXPECT_EQ(40, g.min_batch);
	EXPECT_EQ(9 * MS, g.hold_ns);
}

/*
 * S4-04: a refused request is told when the rest can be had, or one
 * capacity's worth when the rest is more: capacity 1 at 10/s, 5 wanted,
 * empty: one token, 100 ms.
 */
TEST(retry_for_one_capacity)
{
	struct bi_global g;
	u64 retry;

	bi_global_init(&g, 10, 1, 0, 0);
	ASSERT_EQ(0, bi_global_dispense(&g, 5, 5, 5, 0, &retry, NULL));
	ASSERT_EQ(100 * MS, retry);
}

/*
 * reclaim hands back a local balance (or debt) unused for more than
 * a tick, and nothing else: not an empty one, not one used within the tick.
 */
TEST(reclaim_only_idle_balances)
{
	struct bi_global g;
	struct bi_local l;
	u64 t;

	bi_global_init(&g, 0, 1000, 0, 0);
	bi_local_init(&l, 0);
	ASSERT_LT(0ULL, g.tick_ns);
	/* used in the interval [10, 11) ticks */
	t = 10 * g.tick_ns;
	l.interval_end_ns = t + g.tick_ns;
	set_cur_units(&l, 1);
	ASSERT_FALSE(bi_local_reclaim(&l, &g, t + 50 * g.tick_ns));	/* empty */
	l.interval_end_ns = t + g.tick_ns;
	l.tokens = 7;
	set_cur_units(&l, 1);
	ASSERT_FALSE(bi_local_reclaim(&l, &g, t - 1));			/* clock behind */
	/* 10 whole intervals unused: [11, 21) ticks; not yet in the 21st */
	ASSERT_FALSE(bi_local_reclaim(&l, &g, t + BI_LOCAL_IDLE_TICKS * g.tick_ns +
				      g.tick_ns - 1));
	ASSERT_EQ(7, l.tokens);
	ASSERT_EQ(BI_LOCAL_IDLE_TICKS - 1, (int)l.idle);
	ASSERT_TRUE(bi_local_reclaim(&l, &g, t + BI_LOCAL_IDLE_TICKS * g.tick_ns +
				     g.tick_ns));
	ASSERT_EQ(0, l.tokens);
	ASSERT_EQ(7, g.b.tokens);
	ASSERT_EQ(7ULL, l.returned);
	/* a debt goes back too; the idle count saturates (4 bits) */
	l.tokens = -3;
	set_cur_units(&l, 0);
	ASSERT_TRUE(bi_local_reclaim(&l, &g, t + 200 * g.tick_ns));
	ASSERT_EQ(BI_LOCAL_IDLE_MAX, (int)l.idle);
	ASSERT_EQ(3ULL, l.got);				/* the debt, as taken */
	ASSERT_EQ(4, g.b.tokens);
	/* a single token goes back as returned, not as a debt */
	l.tokens = 1;
	set_cur_units(&l, 0);
	ASSERT_TRUE(bi_local_reclaim(&l, &g, t + 230 * g.tick_ns));
	ASSERT_EQ(8ULL, l.returned);
	ASSERT_EQ(3ULL, l.got);
	ASSERT_EQ(5, g.b.tokens);
}

/*
 * A wait never asks for more than half the capacity (bi_local_charge_slow):
 * with a hold longer than the wait, an 80-token bio on an empty bucket of
 * 100 at 100/s is told to come back when 50 are there (500 ms), not 80;
 * with a capacity of 2 at 10/s, when 1 is there (100 ms).
 */
TEST(a_wait_asks_for_half_the_capacity)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry;

	bi_global_init(&g, 100, 100, 0, 0);
	g.hold_ns = 10 * SEC;			/* the hold does not end it first */
	bi_local_init(&l, 0);
	ASSERT_FALSE(bi_local_charge(&l, &g, 80, true, 0, &retry));
	ASSERT_EQ(500 * MS, retry);
	bi_global_init(&g, 10, 2, 0, 0);
	g.hold_ns = 10 * SEC;
	bi_local_init(&l, 0);
	ASSERT_FALSE(bi_local_charge(&l, &g, 5, true, 0, &retry));
	ASSERT_EQ(100 * MS, retry);
}

/* S4-05 / S4-10: after one dispense, bios are served locally. */
TEST(s4_05_local_hits)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry;
	int i;

	bi_global_init(&g, 0, 16000, 16000, 0);		/* local_max 1000 */
	bi_local_init(&l, 0);
	for (i = 0; i < 32; i++)
		ASSERT_TRUE(bi_local_charge(&l, &g, 2, true, 0, &retry));
	ASSERT_EQ(1ULL, g.nr_requests);			/* 32 bios x 2 units */
	ASSERT_EQ(0, l.tokens);
	ASSERT_EQ(32ULL, l.nr_bios);
	ASSERT_EQ(1ULL, l.nr_slow);
}

/*
 * S4-06 / S4-07 / A-37: negative cache and hold interval.  The global bucket
 * refills 1 unit per 200 ms, longer than the 100 ms hold: bios within the
 * hold are throttled without global contact; the first at t0 + hold asks
 * again.  When the global bucket can cover the bio sooner, the hold ends
 * then (a longer hold would let it fill and drop tokens).
 */
TEST(s4_06_07_negative_cache_and_hold)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry, t0 = 5 * MS;

	bi_global_init(&g, 5, 100, 0, 0);
	bi_local_init(&l, 0);
	g.b.last_ns = t0;				/* empty at t0 */
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, t0, &retry));
	ASSERT_EQ(1ULL, g.nr_requests);
	ASSERT_EQ(t0 + g.hold_ns, retry);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, t0 + 50 * MS, &retry));
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, t0 + g.hold_ns - 1, &retry));
	ASSERT_EQ(1ULL, g.nr_requests);			/* no global contact */
	ASSERT_EQ(2ULL, l.nr_held);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, t0 + g.hold_ns, &retry));
	ASSERT_EQ(2ULL, g.nr_requests);			/* asked again */
	ASSERT_EQ(t0 + 200 * MS, retry);		/* one token away */
	ASSERT_TRUE(bi_local_charge(&l, &g, 1, true, t0 + 200 * MS, &retry));

	/* 1000/s: 2 units are there after 2 ms, so the hold is 2 ms */
	bi_global_init(&g, 1000, 100, 0, 0);
	bi_local_init(&l, 0);
	g.b.last_ns = t0;
	ASSERT_FALSE(bi_local_charge(&l, &g, 2, true, t0, &retry));
	ASSERT_EQ(t0 + 2 * MS, retry);
	ASSERT_FALSE(bi_local_charge(&l, &g, 2, true, t0 + 2 * MS - 1, &retry));
	ASSERT_EQ(1ULL, g.nr_requests);
	ASSERT_TRUE(bi_local_charge(&l, &g, 2, true, t0 + 2 * MS, &retry));
}

/*
 * A retune lapses every CPU's negative-cache entry: a bio held on the old
 * rate asks again at once and passes on the new rate's tokens, keeping
 * what its CPU gathered before (issue 15: a cap raised while bios wait).
 * A hold computed after a retune holds: it is stamped with the generation
 * it was computed under.
 */
TEST(retune_lapses_the_hold)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry, t0 = 5 * MS;

	bi_global_init(&g, 4, 100, 0, 0);
	bi_local_init(&l, 0);
	g.b.last_ns = t0;
	bi_global_set(&g, 5, 100, t0);
	ASSERT_NE(0U, g.gen);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, t0, &retry));
	ASSERT_EQ(t0 + g.hold_ns, retry);
	ASSERT_EQ((u8)g.gen, (u8)l.hold_gen);
	/* the same rate again holds on */
	bi_global_set(&g, 5, 100, t0 + MS);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, t0 + MS, &retry));
	ASSERT_EQ(1ULL, g.nr_requests);		/* held, not asked */
	ASSERT_EQ(1ULL, l.nr_held);
	/* 1000/s from t0 + 1 ms: one token 1 ms later, asked at once */
	bi_global_set(&g, 1000, 100, t0 + MS);
	ASSERT_TRUE(bi_local_charge(&l, &g, 1, true, t0 + 2 * MS, &retry));
	ASSERT_EQ(2ULL, g.nr_requests);
}

/* Every interval of @l's history had @units of demand. */
static void set_demand(struct bi_local *l, u64 units)
{
	int i;

	for (i = 0; i < BI_DEMAND_INTERVALS; i++)
		bi_local_set_demand(l, i, units);
}

/* S4-09: linearly weighted demand, capped at a fraction of the global max. */
TEST(s4_09_request_size)
{
	u64 d[BI_DEMAND_INTERVALS] = { 40, 30, 20, 10 };	/* [0] most recent */
	struct bi_global g;
	struct bi_local l;

	ASSERT_EQ(30ULL, bi_demand_wavg(d, 4));
	bi_global_init(&g, 0, 800, 800, 0);
	ASSERT_EQ(50, g.local_max);			/* default max/16 */
	g.local_max = 800 / 8;				/* claim 10: 1/8 of max */
	bi_local_init(&l, 0);
	set_demand(&l, 5000);
	ASSERT_EQ(100, bi_local_request_size(&l, &g, 1));
	set_demand(&l, 70);
	ASSERT_EQ(70, bi_local_request_size(&l, &g, 1));
	ASSERT_EQ(100, bi_local_request_size(&l, &g, 64));	/* 32 x 64, capped */
	ASSERT_EQ(300, bi_local_request_size(&l, &g, 300));	/* a bio above the cap */
	/* a CPU busier now than its history asks for the current interval's */
	set_demand(&l, 0);
	set_cur_units(&l, 90);
	ASSERT_EQ(90, bi_local_request_size(&l, &g, 1));
}

/* The demand history rolls lazily, one slot per elapsed interval. */
TEST(demand_history_rolls)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry;

	bi_global_init(&g, 0, 1LL << 30, 1LL << 30, 0);
	bi_local_init(&l, 0);
	ASSERT_TRUE(bi_local_charge(&l, &g, 7, true, 0, &retry));
	ASSERT_TRUE(bi_local_charge(&l, &g, 5, true, 100 * MS, &retry));	/* next interval */
	ASSERT_EQ(7ULL, bi_local_demand(&l, 0));
	ASSERT_TRUE(bi_local_charge(&l, &g, 1, true, 350 * MS, &retry));	/* 2 later */
	ASSERT_EQ(0ULL, bi_local_demand(&l, 0));
	ASSERT_EQ(5ULL, bi_local_demand(&l, 1));
	ASSERT_EQ(7ULL, bi_local_demand(&l, 2));
}

/*
 * The history shifts by the intervals that passed: one (the newest is the
 * interval that ended), three (two empty ones in between), and more than
 * it holds (all empty).
 */
TEST(demand_history_shifts_by_intervals)
{
	struct bi_global g;
	struct bi_local l;
	const u64 T = BI_DISPENSE_TICK_NS;
	int i;

	bi_global_init(&g, 0, 1000, 0, 0);
	bi_local_init(&l, 0);
	for (i = 0; i < BI_DEMAND_INTERVALS; i++)
		bi_local_set_demand(&l, i, i + 1);	/* {1, 2, 3, 4} */
	set_cur_units(&l, 9);
	ASSERT_FALSE(bi_local_reclaim(&l, &g, T));	/* empty: rotates only */
	ASSERT_EQ(9ULL, bi_local_demand(&l, 0));
	ASSERT_EQ(1ULL, bi_local_demand(&l, 1));
	ASSERT_EQ(2ULL, bi_local_demand(&l, 2));
	ASSERT_EQ(3ULL, bi_local_demand(&l, 3));
	ASSERT_EQ(2 * T, l.interval_end_ns);
	set_cur_units(&l, 8);
	ASSERT_FALSE(bi_local_reclaim(&l, &g, 4 * T + 1));	/* three intervals */
	ASSERT_EQ(0ULL, bi_local_demand(&l, 0));
	ASSERT_EQ(0ULL, bi_local_demand(&l, 1));
	ASSERT_EQ(8ULL, bi_local_demand(&l, 2));
	ASSERT_EQ(9ULL, bi_local_demand(&l, 3));
	ASSERT_EQ(5 * T, l.interval_end_ns);
	set_cur_units(&l, 6);
	ASSERT_FALSE(bi_local_reclaim(&l, &g, 8 * T + 1));	/* four: the oldest */
	ASSERT_EQ(0ULL, bi_local_demand(&l, 0));
	ASSERT_EQ(0ULL, bi_local_demand(&l, 2));
	ASSERT_EQ(6ULL, bi_local_demand(&l, 3));
	set_cur_units(&l, 7);
	ASSERT_FALSE(bi_local_reclaim(&l, &g, 20 * T));		/* more than four */
	for (i = 0; i < BI_DEMAND_INTERVALS; i++)
		ASSERT_EQ(0ULL, bi_local_demand(&l, i));
}

/*
 * Issue 18's narrowed fields at their edges.  Demand codes: exact below
 * 256, within 1/256 above (round to nearest, the carry into the next
 * exponent included), saturating at BI_DEMAND_MAX; each interval's code
 * leaves the others and the fields packed beside them alone.
 */
TEST(demand_codes_round_and_saturate)
{
	struct bi_local l;
	u64 v, d;
	int i;

	bi_local_init(&l, 0);
	for (v = 0; v < 256; v++) {
		bi_local_set_demand(&l, 1, v);
		ASSERT_EQ(v, bi_local_demand(&l, 1));
	}
	bi_local_set_demand(&l, 1, 257);		/* 128.5 << 1: to even-up 129 << 1 */
	ASSERT_EQ(258ULL, bi_local_demand(&l, 1));
	bi_local_set_demand(&l, 1, 511);		/* 255.5 << 1: carries to 128 << 2 */
	ASSERT_EQ(512ULL, bi_local_demand(&l, 1));
	for (v = 256; v < BI_DEMAND_MAX; v += v / 97 + 1) {
		bi_local_set_demand(&l, 1, v);
		d = bi_local_demand(&l, 1);
		ASSERT_GE(v / 256 + 1, d > v ? d - v : v - d);
	}
	bi_local_set_demand(&l, 1, BI_DEMAND_MAX);
	ASSERT_EQ(BI_DEMAND_MAX, bi_local_demand(&l, 1));
	bi_local_set_demand(&l, 1, U32_MAX);
	ASSERT_EQ(BI_DEMAND_MAX, bi_local_demand(&l, 1));
	bi_local_set_demand(&l, 1, U64_MAX);
	ASSERT_EQ(BI_DEMAND_MAX, bi_local_demand(&l, 1));
	/* the neighbours: other intervals, the hold's generation, the flags */
	l.hold_gen = 0xa5;
	l.idle = BI_LOCAL_IDLE_MAX;
	l.draining = 1;
	for (i = 0; i < BI_DEMAND_INTERVALS; i++)
		bi_local_set_demand(&l, i, 10 * (i + 1));
	bi_local_set_demand(&l, 2, U64_MAX);
	ASSERT_EQ(10ULL, bi_local_demand(&l, 0));
	ASSERT_EQ(20ULL, bi_local_demand(&l, 1));
	ASSERT_EQ(BI_DEMAND_MAX, bi_local_demand(&l, 2));
	ASSERT_EQ(40ULL, bi_local_demand(&l, 3));
	ASSERT_EQ(0xa5, (int)l.hold_gen);
	ASSERT_EQ(BI_LOCAL_IDLE_MAX, (int)l.idle);
	ASSERT_EQ(1, (int)l.draining);
	ASSERT_EQ(0, (int)l.used);
}

/*
 * The current interval's demand is the balance's flow: charges and
 * completion charges add to it; dispenses, refunds and hand-backs move the
 * balance, not the demand.  At 2^32 units it wraps (an interval's demand on
 * one CPU never comes near: flow_base in dispense.h).  A bio dearer than
 * the largest batch is charged whole and its demand kept.
 */
TEST(current_demand_is_the_balance_flow)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry;

	bi_global_init(&g, 0, 1 << 20, 1 << 20, 0);
	g.local_max = 100;
	bi_local_init(&l, 0);
	ASSERT_TRUE(bi_local_charge(&l, &g, 3, true, 0, &retry));	/* a dispense */
	ASSERT_EQ(93, l.tokens);
	ASSERT_EQ(3U, bi_local_cur_units(&l));
	bi_local_take(&l, 4);
	ASSERT_EQ(7U, bi_local_cur_units(&l));
	ASSERT_EQ(10, bi_local_apply(&l, &g, 10, 0));
	ASSERT_EQ(17U, bi_local_cur_units(&l));
	ASSERT_EQ(1, (int)l.used);			/* the dispense was use */
	l.used = 0;
	ASSERT_EQ(-6, bi_local_apply(&l, &g, -6, 0));			/* a refund */
	ASSERT_EQ(85, l.tokens);
	ASSERT_EQ(17U, bi_local_cur_units(&l));
	ASSERT_EQ(1, (int)l.used);
	ASSERT_EQ(-20, bi_local_apply(&l, &g, -20, 0));		/* above local_max */
	ASSERT_EQ(100, l.tokens);
	ASSERT_EQ(17U, bi_local_cur_units(&l));
	/* the wrap */
	set_cur_units(&l, U32_MAX - 1);
	bi_local_take(&l, 3);
	ASSERT_EQ(1U, bi_local_cur_units(&l));
	/* a bio of 4,096 on a fresh CPU: one dispense above local_max */
	bi_local_init(&l, 0);
	ASSERT_TRUE(bi_local_charge(&l, &g, 4096, true, 0, &retry));
	ASSERT_EQ(0, l.tokens);
	ASSERT_EQ(4096U, bi_local_cur_units(&l));
	ASSERT_TRUE(bi_local_charge(&l, &g, 1, true, g.tick_ns, &retry));
	ASSERT_EQ(4096ULL, bi_local_demand(&l, 0));
	ASSERT_EQ(99, l.tokens);			/* local_max caps the batch */
	ASSERT_EQ(1U, bi_local_cur_units(&l));
}

/*
 * The hold, kept in 16 ns units after the interval's start: the first
 * refusal answers the exact time, later ones the stored end (at most 15 ns
 * later); it outlives the demand intervals it spans (60 s, the longest
 * dispense_hold_ms); a hold longer than 32 bits hold is cut, so the CPU
 * asks once early; a time behind the interval holds nothing.
 */
TEST(hold_in_units_across_intervals)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry, t0 = 5 * MS + 3;

	bi_global_init(&g, 0, 100, 0, 0);		/* never refills */
	g.hold_ns = 60 * SEC;
	bi_local_init(&l, 0);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, t0, &retry));
	ASSERT_EQ(t0 + 60 * SEC, retry);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, t0 + 59 * SEC, &retry));
	ASSERT_EQ(1ULL, g.nr_requests);			/* held across 590 intervals */
	ASSERT_LE(t0 + 60 * SEC, retry);
	ASSERT_GT(t0 + 60 * SEC + 16, retry);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, retry - 1, &retry));
	ASSERT_EQ(1ULL, g.nr_requests);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, retry, &retry));
	ASSERT_EQ(2ULL, g.nr_requests);			/* asked again at its end */
	/* 100 s: cut at 2^32 x 16 ns = 68.7 s after the interval's start */
	bi_global_init(&g, 0, 100, 0, 0);
	g.hold_ns = 100 * SEC;
	bi_local_init(&l, 0);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, t0, &retry));
	ASSERT_EQ(t0 + 100 * SEC, retry);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, 68 * SEC, &retry));
	ASSERT_EQ(1ULL, g.nr_requests);
	ASSERT_EQ((u64)U32_MAX << BI_HOLD_SHIFT, retry);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, 69 * SEC, &retry));
	ASSERT_EQ(2ULL, g.nr_requests);
	/* a hold that ends before the interval under way: none stored */
	g.hold_ns = 100 * MS;
	bi_local_init(&l, SEC);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, SEC / 2, &retry));
	ASSERT_EQ(0U, l.hold_rel);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, SEC / 2, &retry));
	ASSERT_EQ(4ULL, g.nr_requests);
}

/*
 * Edges of the dispense rule and the draining mark: a global bucket with
 * tokens but fewer than the least asked refuses; the weighted average
 * rounds down (9 / 10 is 0); a CPU is draining only if it got tokens and
 * the global still holds some after its batch.
 */
TEST(dispense_least_wavg_and_draining_edges)
{
	u64 d[BI_DEMAND_INTERVALS] = { 0, 3, 0, 0 };
	struct bi_global g;
	struct bi_local l;
	u64 retry;

	bi_global_init(&g, 0, 100, 3, 0);
	ASSERT_EQ(0, bi_global_dispense(&g, 10, 5, 5, 0, &retry, NULL));
	ASSERT_EQ(1ULL, g.nr_refused);
	ASSERT_EQ(3, g.b.tokens);
	ASSERT_EQ(0ULL, bi_demand_wavg(d, BI_DEMAND_INTERVALS));
	/* got 1, 1 left: draining */
	bi_global_init(&g, 0, 100, 2, 0);
	g.local_max = 1;
	bi_local_init(&l, 0);
	ASSERT_TRUE(bi_local_charge(&l, &g, 1, true, 0, &retry));
	ASSERT_EQ(1, (int)l.draining);
	/* got 1, none left: not draining */
	bi_local_init(&l, 0);
	ASSERT_TRUE(bi_local_charge(&l, &g, 1, true, 0, &retry));
	ASSERT_EQ(0, (int)l.draining);
	/* got none (a batch of 5 waited for), 2 left: not draining */
	bi_global_init(&g, 0, 100, 2, 0);
	g.local_max = 10;
	g.min_batch = 5;
	bi_local_init(&l, 0);
	ASSERT_FALSE(bi_local_charge(&l, &g, 1, true, 0, &retry));
	ASSERT_EQ(2, g.b.tokens);
	ASSERT_EQ(0, (int)l.draining);
}

/* What comes back: capped at capacity, a debt saturated at the limit. */
TEST(put_caps_and_saturates)
{
	struct bi_global g;

	bi_global_init(&g, 0, 100, 95, 0);
	bi_global_put(&g, 10, 0);
	ASSERT_EQ(100, g.b.tokens);
	ASSERT_EQ(5ULL, g.b.dropped);
	ASSERT_EQ(10ULL, g.b.taken);
	bi_global_init(&g, 0, 100, 0, 0);
	g.b.tokens = -BI_TOKENS_LIMIT + 5;
	bi_global_put(&g, -10, 0);
	ASSERT_EQ(-BI_TOKENS_LIMIT, g.b.tokens);
	ASSERT_EQ(5ULL, g.b.given);
}

/* A restart sets local_max and the hold afresh from the new capacity. */
TEST(restart_resets_local_max_and_hold)
{
	struct bi_global g;
	u32 gen;

	bi_global_init(&g, 100, 100, 100, 0);
	g.local_max = 77;
	g.hold_ns = 5;
	g.min_batch = 9;
	bi_global_restart(&g, 100, 1600, 1600, 0);
	ASSERT_EQ(100, g.local_max);
	ASSERT_EQ(BI_DISPENSE_TICK_NS, g.hold_ns);
	ASSERT_EQ(0, g.min_batch);
	/* a retune moves the generation on by one for a new rate only */
	gen = g.gen;
	bi_global_set(&g, 100, 800, 0);
	ASSERT_EQ(gen, g.gen);
	bi_global_set(&g, 200, 800, 0);
	ASSERT_EQ(gen + 1, g.gen);
}

/* a short dispense stays local; the retry uses it. */
TEST(a_35_partial_dispense_kept)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry;

	bi_global_init(&g, 1000, 100, 3, 0);
	bi_local_init(&l, 0);
	ASSERT_FALSE(bi_local_charge(&l, &g, 5, true, 0, &retry));
	ASSERT_EQ(3, l.tokens);
	ASSERT_EQ(2 * MS, retry);			/* the missing 2 units */
	ASSERT_FALSE(bi_local_charge(&l, &g, 5, true, 2 * MS - 1, &retry));
	ASSERT_TRUE(bi_local_charge(&l, &g, 5, true, 2 * MS, &retry));
	ASSERT_EQ(0, l.tokens);
}

/*
 * worst case over-admission = nr_cpus x local_max.  8 CPUs each keep
 * a full local bucket in use (one bio every 50 ms, refunded), the global
 * refills to max, then everything is spent at one instant: g.max + 8 *
 * local_max, exactly the documented bound.  CPUs idle for more than
 * BI_LOCAL_IDLE_TICKS (1 s) instead give their tokens back when they next charge: the first finds
 * the global full, which drops them, and spends it; the others' go back
 * to the emptied global and are spent there: g.max + 7 * local_max.
 */
static int burst(struct bi_global *g, struct bi_local *l, int ncpu, u64 now)
{
	int admitted = 0, c;
	u64 retry;

	for (c = 0; c < ncpu; c++)
		while (bi_local_charge(&l[c], g, 1, true, now, &retry))
			admitted++;
	return admitted;
}

static void fill_locals(struct bi_global *g, struct bi_local *l, int ncpu)
{
	u64 retry;
	int c;

	bi_global_init(g, 1600, 1600, 1600, 0);	/* local_max 100 */
	for (c = 0; c < ncpu; c++) {
		bi_local_init(&l[c], 0);
		bi_local_set_demand(&l[c], 0, 1000);	/* busy: ask for the cap */
		bi_local_charge(&l[c], g, 1, true, 0, &retry);
		bi_local_correct(&l[c], g, 1, 0, NULL, 0);	/* refund: full */
	}
}

TEST(a_36_over_admission_bound)
{
	enum { NCPU = 8 };
	struct bi_local l[NCPU];
	struct bi_global g;
	u64 retry, now;
	int c;

	fill_locals(&g, l, NCPU);
	for (c = 0; c < NCPU; c++)
		ASSERT_EQ(g.local_max, l[c].tokens);
	for (now = 50 * MS; now < 500 * MS; now += 50 * MS)
		for (c = 0; c < NCPU; c++) {		/* in use: kept */
			ASSERT_TRUE(bi_local_charge(&l[c], &g, 1, true, now, &retry));
			bi_local_correct(&l[c], &g, 1, 0, NULL, now);
		}
	bi_bucket_refill(&g.b, now);			/* global back to max */
	ASSERT_EQ(1600, g.b.tokens);
	ASSERT_EQ(1600 + NCPU * 100, burst(&g, l, NCPU, now));

	/* idle (2 s): given back on return, the first CPU's dropped */
	fill_locals(&g, l, NCPU);
	now = 2 * SEC;
	ASSERT_EQ(1600 + (NCPU - 1) * 100, burst(&g, l, NCPU, now));
	ASSERT_EQ(100ULL, g.b.dropped);
	/*
	 * idle for less (200 ms, under BI_LOCAL_IDLE_TICKS): the locals are
	 * kept and spent, beside the global's 800 + 320 refilled
	 */
	fill_locals(&g, l, NCPU);
	now = 200 * MS;
	ASSERT_EQ(800 + 320 + NCPU * 100, burst(&g, l, NCPU, now));
	ASSERT_EQ(0ULL, g.b.dropped);
}

struct sys_sums {
	s64 tokens, charged, refunded;
	u64 got, returned;
};

static struct sys_sums sum_locals(const struct bi_local *l, int n)
{
	struct sys_sums s = { 0 };
	int c;

	for (c = 0; c < n; c++) {
		s.tokens += l[c].tokens;
		s.charged += (s64)l[c].charged;
		s.refunded += (s64)l[c].refunded;
		s.got += l[c].got;
		s.returned += l[c].returned;
	}
	return s;
}

/*
 * Conservation with completions on another CPU: random charges on one
 * local, corrections on a random other, reclaims, retunes.  Tokens in the
 * system = initial + refilled - dropped - charged + refunded.
 */
TEST(conservation_cross_cpu)
{
	enum { NCPU = 8, NB = 64 };
	uint64_t rng = 4004;
	int round, i;

	for (round = 0; round < 50; round++) {
		struct bi_local l[NCPU];
		struct bi_global g;
		s64 init[NB], t0;
		u64 now = 0, retry;
		struct sys_sums s;
		int c;

		bi_global_init(&g, tokrng_range(&rng, 0, 200000),
			       tokrng_range(&rng, 16, 20000), 0, 0);
		g.threshold = tokrng_range(&rng, -100, 10);
		t0 = g.b.tokens;
		for (c = 0; c < NCPU; c++)
			bi_local_init(&l[c], 0);
		for (i = 0; i < NB; i++)
			init[i] = -1;
		for (i = 0; i < 3000; i++) {
			int k = tokrng_next(&rng) % NB;

			c = tokrng_next(&rng) % NCPU;
			now += tokrng_range(&rng, 0, 3 * MS);
			if (init[k] < 0) {
				s64 cost = tokrng_range(&rng, 1, 64);

				if (bi_local_charge(&l[c], &g, cost, true, now, &retry))
					init[k] = cost;
			} else if (tokrng_next(&rng) % 8) {
				bi_local_correct(&l[c], &g, init[k],
						 tokrng_range(&rng, 1, 600), NULL, now);
				init[k] = -1;
			} else if (tokrng_next(&rng) & 1) {
				bi_local_reclaim(&l[c], &g, now);
			} else {
				bi_global_set(&g, tokrng_range(&rng, 0, 200000),
					      tokrng_range(&rng, 16, 20000), now);
			}
			s = sum_locals(l, NCPU);
			ASSERT_EQ(s.got, g.b.given);
			ASSERT_EQ(s.returned, g.b.taken);
			ASSERT_EQ(s.tokens, (s64)(s.got - s.returned) - s.charged +
				  s.refunded);
			ASSERT_EQ(s.tokens + g.b.tokens - t0,
				  (s64)(g.b.added - g.b.dropped) - s.charged + s.refunded);
		}
	}
}

/*
 * S1-16: 64 threads, each the owner of one local bucket (64 CPUs), race for
 * 10 tokens (rate 0) through bi_local_charge.  Each admits until refused.
 * Exactly 10 are admitted in each of 1000 rounds.  With local_max 1 every
 * admission needs its own dispense (10 successes + 64 refusals per round);
 * with a large local_max the first thread takes all 10 in one dispense.
 */
enum { RACE_THREADS = 64, RACE_ROUNDS = 1000 };

struct race {
	struct bi_global g;
	struct bi_local l[RACE_THREADS];
	int admitted[RACE_THREADS];
	pthread_barrier_t start, done;
};

struct race_arg {
	struct race *r;
	int cpu;
};

static void *race_thread(void *p)
{
	struct race_arg *a = p;
	struct race *r = a->r;
	u64 retry;
	int round;

	for (round = 0; round < RACE_ROUNDS; round++) {
		pthread_barrier_wait(&r->start);
		r->admitted[a->cpu] = 0;
		while (bi_local_charge(&r->l[a->cpu], &r->g, 1, true, 0, &retry))
			r->admitted[a->cpu]++;
		pthread_barrier_wait(&r->done);
	}
	return NULL;
}

static void race(struct __test_metadata *_metadata, s64 gmax,
		 u64 successes_per_round)
{
	static struct race r;
	struct race_arg args[RACE_THREADS];
	pthread_t th[RACE_THREADS];
	u64 slow, bios;
	int i, round, sum;

	pthread_barrier_init(&r.start, NULL, RACE_THREADS + 1);
	pthread_barrier_init(&r.done, NULL, RACE_THREADS + 1);
	for (i = 0; i < RACE_THREADS; i++) {
		args[i] = (struct race_arg){ .r = &r, .cpu = i };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, race_thread, &args[i]));
	}
	for (round = 0; round < RACE_ROUNDS; round++) {
		bi_global_init(&r.g, 0, gmax, 10, 0);
		for (i = 0; i < RACE_THREADS; i++)
			bi_local_init(&r.l[i], 0);
		pthread_barrier_wait(&r.start);
		pthread_barrier_wait(&r.done);
		sum = 0;
		slow = bios = 0;
		for (i = 0; i < RACE_THREADS; i++) {
			sum += r.admitted[i];
			slow += r.l[i].nr_slow;
			bios += r.l[i].nr_bios;
		}
		ASSERT_EQ(10, sum);
		ASSERT_EQ(10ULL, bios);
		ASSERT_EQ(0, r.g.b.tokens);
		/* the global-dispense ratio */
		ASSERT_EQ(slow, r.g.nr_requests);
		ASSERT_EQ((u64)RACE_THREADS, r.g.nr_refused);
		ASSERT_EQ(successes_per_round, r.g.nr_requests - r.g.nr_refused);
	}
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&r.start);
	pthread_barrier_destroy(&r.done);
}

TEST(s1_16_race_64_threads_one_token_per_dispense)
{
	race(_metadata, 10, 10);	/* local_max 1: 1 dispense per bio */
}

TEST(s1_16_race_64_threads_batched)
{
	race(_metadata, 1024, 1);	/* local_max 64: one batch of 10 */
}

/*
 * Steady state: 4 threads (CPUs) submit 4 KiB bios (2 units) on a shared
 * simulated clock and complete them on the same CPU (correction 2 -> 2 or
 * 2 -> 3; cross-CPU completions are covered by conservation_cross_cpu).
 * At most one global dispense per 32 bios per CPU.
 */
enum { SS_THREADS = 4, SS_BIOS = 200000 };

struct steady {
	struct bi_global g;
	struct bi_local l[SS_THREADS];
	u64 clock;
	int refused;
};

struct steady_arg {
	struct steady *s;
	int cpu;
};

static void *steady_thread(void *p)
{
	struct steady_arg *a = p;
	struct steady *s = a->s;
	struct bi_local *l = &s->l[a->cpu];
	u64 retry, now;
	int i;

	for (i = 0; i < SS_BIOS; i++) {
		now = __atomic_add_fetch(&s->clock, 1000, __ATOMIC_RELAXED);
		if (!bi_local_charge(l, &s->g, 2, true, now, &retry)) {
			__atomic_add_fetch(&s->refused, 1, __ATOMIC_RELAXED);
			continue;
		}
		bi_local_correct(l, &s->g, 2, 2 + (i & 1), NULL, now);
	}
	return NULL;
}

TEST(steady_state_dispense_ratio)
{
	static struct steady s;
	struct steady_arg args[SS_THREADS];
	pthread_t th[SS_THREADS];
	u64 bios = 0, slow = 0;
	int i;

	/* 10^8 units/s >> 4 CPUs x 2.5 units per us of simulated demand */
	bi_global_init(&s.g, 100000000ULL, 5000000, 5000000, 0);
	for (i = 0; i < SS_THREADS; i++)
		bi_local_init(&s.l[i], 0);
	for (i = 0; i < SS_THREADS; i++) {
		args[i] = (struct steady_arg){ .s = &s, .cpu = i };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, steady_thread, &args[i]));
	}
	for (i = 0; i < SS_THREADS; i++)
		pthread_join(th[i], NULL);
	ASSERT_EQ(0, s.refused);
	for (i = 0; i < SS_THREADS; i++) {
		ASSERT_EQ((u64)SS_BIOS, s.l[i].nr_bios);
		ASSERT_GE(s.l[i].nr_bios / 32, s.l[i].nr_slow);
		bios += s.l[i].nr_bios;
		slow += s.l[i].nr_slow;
	}
	TH_LOG("steady state: %llu bios, %llu global dispenses (1 per %llu)",
	       (unsigned long long)bios, (unsigned long long)slow,
	       (unsigned long long)(bios / (slow ? slow : 1)));
}

/*
 * min_batch: a burst after idle still takes the whole capacity (the last,
 * partial batch is taken while the global bucket drains), and under a
 * biting quota a CPU meets the global bucket once per whole batch.
 */
TEST(min_batch_burst_and_steady_state)
{
	struct bi_global g;
	struct bi_local l;
	u64 now = 0, retry, admitted = 0, end;

	bi_global_init(&g, 1000, 200, 200, 0);
	g.local_max = 64;
	g.min_batch = 64;
	bi_local_init(&l, 0);
	while (bi_local_charge(&l, &g, 1, true, now, &retry))
		admitted++;
	ASSERT_EQ(200ULL, admitted);		/* capacity, exactly */
	/* 10 s at QD1, retrying when told: 10,000 more, in batches of 64 */
	admitted = 0;
	g.nr_requests = g.nr_refused = 0;
	for (end = now + 10 * SEC; now < end;) {
		if (bi_local_charge(&l, &g, 1, true, now, &retry))
			admitted++;
		else
			now = retry > now ? retry : now + 1;
	}
	ASSERT_GE(admitted, 10000ULL - 64);
	ASSERT_LE(admitted, 10000ULL + 1);
	/* successful dispenses: about one per 64 bios */
	ASSERT_LE((g.nr_requests - g.nr_refused) * 60, admitted);
}

/*
 * The same lean global bucket (1000/s, batch 64, empty at t0): a bio of 2
 * units alone waits for its own shortfall, 2 ms; queued bios wait for a
 * whole batch, 64 ms, which then serves the 31 behind it without a global
 * contact.
 */
/* A lean global bucket: 1000/s, batch 64, empty at @t0. */
static void lean_bucket(struct bi_global *g, struct bi_local *l, u64 t0)
{
	bi_global_init(g, 1000, 200, 0, 0);
	g->local_max = 64;
	g->min_batch = 64;
	g->b.last_ns = t0;
	bi_local_init(l, t0);
}

TEST(bio_alone_waits_its_shortfall_a_queue_a_batch)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry, t0 = 5 * MS;
	int i;

	lean_bucket(&g, &l, t0);
	ASSERT_FALSE(bi_local_charge(&l, &g, 2, false, t0, &retry));
	ASSERT_EQ(t0 + 2 * MS, retry);
	ASSERT_FALSE(bi_local_charge(&l, &g, 2, false, t0 + 2 * MS - 1, &retry));
	ASSERT_TRUE(bi_local_charge(&l, &g, 2, false, t0 + 2 * MS, &retry));

	lean_bucket(&g, &l, t0);
	ASSERT_FALSE(bi_local_charge(&l, &g, 2, true, t0, &retry));
	ASSERT_EQ(t0 + 64 * MS, retry);
	ASSERT_FALSE(bi_local_charge(&l, &g, 2, true, t0 + 2 * MS, &retry));
	ASSERT_TRUE(bi_local_charge(&l, &g, 2, true, t0 + 64 * MS, &retry));
	for (i = 0; i < 31; i++)
		ASSERT_TRUE(bi_local_charge(&l, &g, 2, true, t0 + 64 * MS, &retry));
	ASSERT_EQ(2ULL, g.nr_requests);
}

/*
 * The same lean bucket: a refusal of queued bios (a wait for a batch of 64,
 * until 64 ms) does not hold a bio alone, which asks for its 2 tokens and
 * gets them at 2 ms (tenants under one parent share its key's local on a
 * CPU: a sibling's flood renewed the batch hold before a lone sibling's
 * read came up); the batch hold still holds the queue without a global
 * contact; a bio alone refused holds both, until its own shortfall is in.
 */
TEST(bio_alone_is_not_held_by_a_batch_wait)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry, t0 = 5 * MS;

	lean_bucket(&g, &l, t0);
	ASSERT_FALSE(bi_local_charge(&l, &g, 32, true, t0, &retry));
	ASSERT_EQ(t0 + 64 * MS, retry);
	ASSERT_TRUE(bi_local_charge(&l, &g, 2, false, t0 + 2 * MS, &retry));
	ASSERT_EQ(2ULL, g.nr_requests);
	/* the queue is still held, without asking */
	ASSERT_FALSE(bi_local_charge(&l, &g, 32, true, t0 + 3 * MS, &retry));
	ASSERT_EQ(t0 + 64 * MS, retry);
	ASSERT_EQ(2ULL, g.nr_requests);
	/* alone again, 1 token in: refused, held until its second is in */
	ASSERT_FALSE(bi_local_charge(&l, &g, 2, false, t0 + 3 * MS, &retry));
	ASSERT_EQ(t0 + 4 * MS, retry);
	ASSERT_EQ(3ULL, g.nr_requests);
	ASSERT_FALSE(bi_local_charge(&l, &g, 32, true, t0 + 3 * MS + MS / 2, &retry));
	ASSERT_EQ(t0 + 4 * MS, retry);
	ASSERT_FALSE(bi_local_charge(&l, &g, 2, false, t0 + 3 * MS + MS / 2, &retry));
	ASSERT_EQ(3ULL, g.nr_requests);
	ASSERT_TRUE(bi_local_charge(&l, &g, 2, false, t0 + 4 * MS, &retry));
}

/*
 * The same lean bucket shared by two CPUs (issue 18): CPU A's bio alone
 * takes what is there; CPU B's, asking before a batch's worth (min_batch
 * 64) came in since A's ask, waits as a queue does for its request (32
 * tokens: BI_DISPENSE_MIN_BIOS bios of a CPU with no demand yet), and so
 * does A's next, B having asked last; once A asked last, and again once
 * 64 tokens came in since the other CPU's ask, a bio alone takes what is
 * there.
 */
TEST(bio_alone_on_a_shared_trickle_waits_a_batch)
{
	struct bi_global g;
	struct bi_local a, b;
	u64 retry, t0 = 5 * MS;

	lean_bucket(&g, &a, t0);
	bi_local_init(&b, t0);
	/* A: 3 tokens came in, it takes them */
	ASSERT_TRUE(bi_local_charge(&a, &g, 1, false, t0 + 3 * MS, &retry));
	ASSERT_EQ(2, a.tokens);
	ASSERT_EQ(0, g.b.tokens);
	/* B, 2 ms later: shared, it waits until 32 are there */
	ASSERT_FALSE(bi_local_charge(&b, &g, 1, false, t0 + 5 * MS, &retry));
	ASSERT_EQ(t0 + 35 * MS, retry);
	ASSERT_EQ(2, g.b.tokens);
	/* A again, after B: shared too */
	ASSERT_TRUE(bi_local_charge(&a, &g, 2, false, t0 + 6 * MS, &retry));
	ASSERT_FALSE(bi_local_charge(&a, &g, 1, false, t0 + 6 * MS, &retry));
	ASSERT_EQ(t0 + 35 * MS, retry);
	ASSERT_EQ(3, g.b.tokens);
	/* A asks again at its retry: the last ask was its own, it takes 32 */
	ASSERT_TRUE(bi_local_charge(&a, &g, 1, false, t0 + 35 * MS, &retry));
	ASSERT_EQ(31, a.tokens);
	ASSERT_EQ(0, g.b.tokens);
	/* B 64 ms after A's ask: 64 came in since, alone again, takes 32 */
	ASSERT_TRUE(bi_local_charge(&b, &g, 1, false, t0 + 99 * MS, &retry));
	ASSERT_EQ(31, b.tokens);
	ASSERT_EQ(32, g.b.tokens);
	ASSERT_EQ(5ULL, g.nr_requests);
	ASSERT_EQ(2ULL, g.nr_refused);
}

/*
 * A shared trickle's wait is bounded as a queue's is: never more than half
 * the capacity (40 here: 20 tokens, not the request's 32); and a local
 * bucket draining a burst takes what is there even when shared.
 */
TEST(shared_trickle_wait_is_half_capacity_at_most_and_drains_as_is)
{
	struct bi_global g;
	struct bi_local a, b;
	u64 retry, t0 = 5 * MS;

	lean_bucket(&g, &a, t0);
	bi_global_set(&g, 1000, 40, t0);
	g.local_max = 64;
	bi_local_init(&b, t0);
	ASSERT_TRUE(bi_local_charge(&a, &g, 1, false, t0 + 3 * MS, &retry));
	ASSERT_FALSE(bi_local_charge(&b, &g, 1, false, t0 + 5 * MS, &retry));
	ASSERT_EQ(t0 + 23 * MS, retry);

	lean_bucket(&g, &a, t0);
	bi_local_init(&b, t0);
	ASSERT_TRUE(bi_local_charge(&a, &g, 1, false, t0 + 3 * MS, &retry));
	b.draining = 1;
	ASSERT_TRUE(bi_local_charge(&b, &g, 1, false, t0 + 4 * MS, &retry));
	ASSERT_EQ(0, b.tokens);
	ASSERT_EQ(0, g.b.tokens);
}

TEST_HARNESS_MAIN
