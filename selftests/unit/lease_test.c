// SPDX-License-Identifier: GPL-2.0
/*
 * lease_test.c - leased credit on a throttle key (kmod/core/lease.c, the
 * hook in dispense.c): a lease adds to the key's credit until its
 * deadline and lapses lazily; the bucket's own tokens go first; the
 * burst does not clip the credit; a tenant admits its cap (the floor)
 * plus its leases over simulated time and falls back to the floor when a
 * lease expires; bad leases change nothing; a lease lifts a CPU's hold.
 */
#include <string.h>

#include "meter_rig.h"
#include "lease.h"
#include "kselftest_harness.h"

#define NS	BI_NSEC_PER_SEC
#define MS	BI_NSEC_PER_MSEC

/* Add, spend, expire at the deadline (not before), and the counters. */
TEST(lease_adds_spends_and_lapses_lazily)
{
	struct bi_lease l;
	struct bi_lease_state st;

	bi_lease_init(&l);
	bi_lease_add(&l, 100, 50 * MS, 0);
	ASSERT_EQ(30, bi_lease_take(&l, 30, 10 * MS));
	bi_lease_state(&l, 10 * MS, &st);
	EXPECT_EQ(70, st.tokens);
	EXPECT_EQ(40 * MS, st.ttl_left_ns);
	/* a second lease adds and moves the whole credit's deadline */
	bi_lease_add(&l, 50, 50 * MS, 20 * MS);
	bi_lease_state(&l, 20 * MS, &st);
	EXPECT_EQ(120, st.tokens);
	EXPECT_EQ(50 * MS, st.ttl_left_ns);
	EXPECT_EQ(150ULL, st.granted);
	EXPECT_EQ(2ULL, st.nr_leases);
	/* one nanosecond before the deadline it is all there, at it none */
	EXPECT_EQ(120, bi_lease_take(&l, 1000, 70 * MS - 1));
	bi_lease_add(&l, 10, 5 * MS, 80 * MS);
	EXPECT_EQ(0, bi_lease_take(&l, 10, 85 * MS));
	bi_lease_state(&l, 85 * MS, &st);
	EXPECT_EQ(0, st.tokens);
	EXPECT_EQ(0ULL, st.ttl_left_ns);
	EXPECT_EQ(10ULL, st.expired);
	EXPECT_EQ(150ULL, st.spent);
	/* a lease of 0 tokens is a query: the deadline does not move */
	bi_lease_add(&l, 7, 10 * MS, 100 * MS);
	bi_lease_add(&l, 0, 1000 * MS, 105 * MS);
	bi_lease_state(&l, 105 * MS, &st);
	EXPECT_EQ(5 * MS, st.ttl_left_ns);
	EXPECT_EQ(7, st.tokens);
	/* past its deadline and not yet taken from, it reads lapsed all the same */
	bi_lease_state(&l, 120 * MS, &st);
	EXPECT_EQ(0, st.tokens);
	EXPECT_EQ(0ULL, st.ttl_left_ns);
	EXPECT_EQ(17ULL, st.expired);
}

/* The global bucket hands out its own tokens first, then credit. */
TEST(dispense_own_tokens_first_then_credit_unclipped_by_burst)
{
	struct bi_global g;
	struct bi_lease_state st;
	u64 retry;

	/* rate 0, capacity 10 holding 4: a lease of 1000 is not clipped */
	bi_global_init(&g, 0, 10, 4, 0);
	bi_global_lease(&g, 1000, NS, 0, &st);
	EXPECT_EQ(1000, st.tokens);
	ASSERT_EQ(6, bi_global_dispense(&g, 6, 1, 6, 0, &retry, NULL));
	EXPECT_EQ(0, g.b.tokens);
	EXPECT_EQ(998, g.lease.tokens);
	ASSERT_EQ(500, bi_global_dispense(&g, 500, 1, 500, 0, &retry, NULL));
	EXPECT_EQ(498, g.lease.tokens);
	/* @least counts the credit: 498 >= 400 */
	ASSERT_EQ(498, bi_global_dispense(&g, 600, 400, 600, 0, &retry, NULL));
	/* past the deadline: insufficient, and the credit is gone */
	bi_global_lease(&g, 50, 10 * MS, 0, NULL);
	ASSERT_EQ(0, bi_global_dispense(&g, 10, 1, 10, 10 * MS, &retry, NULL));
	EXPECT_EQ(50ULL, g.lease.expired);
	EXPECT_EQ(1000ULL, g.lease.spent);	/* the 4 were the bucket's own */
}

/*
 * A capped tenant (meter_rig.h) on a simulated clock: a closed loop at QD1
 * from @from to @to; the bios admitted.
 */
static u64 run(struct rig *r, u64 from, u64 to)
{
	struct bi_io io = { .op = BI_OP_READ, .bytes = 4096, .prio_class = BI_PRIO_BE };
	u64 now = from, n = 0, retry;
	struct bi_charge ch;

	while (now < to) {
		bi_meter_classify(&r->m, &io, &ch);
		if (bi_meter_admit(&r->m, &r->cpu, &ch, now, &retry)) {
			bi_meter_complete(&r->m, &r->cpu, &ch, now);
			n++;
			now += 10 * 1000;	/* 10 us a bio: far above the cap */
		} else {
			now = retry > now ? retry : now + 1;
		}
	}
	return n;
}

/*
 * riops=100 is the floor.  A lease of 1000 for 1 s admits 100 + 1000 in
 * that second (plus the starting burst of 5, and at most one local batch
 * more); the next second, the lease expired, admits the floor again; a
 * lease left unused past its deadline admits nothing later.
 */
TEST(tenant_admits_floor_plus_lease_then_floor)
{
	struct bi_lease_state st;
	struct rig r;
	u64 n;

	ASSERT_EQ(0, rig_init(&r, "riops=100"));
	ASSERT_EQ(BI_LEASE_OK, bi_meter_lease(&r.m, BI_KEY_RREQS, 1000, NS, 0, &st));
	n = run(&r, 0, NS);
	TH_LOG("second 0 with a lease of 1000: %llu", (unsigned long long)n);
	EXPECT_GE(n, 1100ULL);
	EXPECT_LE(n, 1105ULL);
	n = run(&r, NS, 2 * NS);
	TH_LOG("second 1, lease expired: %llu", (unsigned long long)n);
	EXPECT_GE(n, 99ULL);
	EXPECT_LE(n, 101ULL + 5);
	/* 2000 leased for 100 ms at 2 s, the tenant idle until 3 s */
	ASSERT_EQ(BI_LEASE_OK, bi_meter_lease(&r.m, BI_KEY_RREQS, 2000, 100 * MS, 2 * NS, &st));
	n = run(&r, 3 * NS, 4 * NS);
	TH_LOG("second 3, the lease lapsed unused: %llu", (unsigned long long)n);
	EXPECT_LE(n, 101ULL + 5);
	bi_meter_lease(&r.m, BI_KEY_RREQS, 0, 0, 4 * NS, &st);
	EXPECT_EQ(2000ULL, st.expired);
	EXPECT_EQ(1000ULL, st.spent);
}

/* Bad leases are refused and change nothing. */
TEST(bad_leases_change_nothing)
{
	struct bi_lease_state st;
	struct rig r;

	ASSERT_EQ(0, rig_init(&r, "riops=100"));
	EXPECT_EQ(BI_LEASE_UNCAPPED, bi_meter_lease(&r.m, BI_KEY_WREQS, 10, NS, 0, &st));
	EXPECT_EQ(BI_LEASE_UNCAPPED, bi_meter_lease(&r.m, BI_KEY_RUNITS, 10, NS, 0, &st));
	EXPECT_EQ(BI_LEASE_RANGE, bi_meter_lease(&r.m, BI_NR_KEYS, 10, NS, 0, &st));
	EXPECT_EQ(BI_LEASE_RANGE, bi_meter_lease(&r.m, BI_KEY_RREQS, -1, NS, 0, &st));
	EXPECT_EQ(BI_LEASE_RANGE, bi_meter_lease(&r.m, BI_KEY_RREQS, 10, 0, 0, &st));
	EXPECT_EQ(BI_LEASE_RANGE, bi_meter_lease(&r.m, BI_KEY_RREQS,
						 BI_LEASE_TOKENS_MAX + 1, NS, 0, &st));
	EXPECT_EQ(BI_LEASE_RANGE, bi_meter_lease(&r.m, BI_KEY_RREQS, 10,
						 BI_LEASE_TTL_MAX_NS + 1, 0, &st));
	EXPECT_EQ(0ULL, r.m.key[BI_KEY_RREQS].lease.nr_leases);
	EXPECT_EQ(0, r.m.key[BI_KEY_RREQS].lease.tokens);
	/* uncapping and capping again drops the credit */
	ASSERT_EQ(BI_LEASE_OK, bi_meter_lease(&r.m, BI_KEY_RREQS, 10, NS, 0, &st));
	ASSERT_EQ(0, bi_conf_merge(&r.conf, "riops=max", 9, NULL));
	bi_meter_configure(&r.m, &r.conf, &r.dev, 0);
	ASSERT_EQ(0, bi_conf_merge(&r.conf, "riops=100", 9, NULL));
	bi_meter_configure(&r.m, &r.conf, &r.dev, 0);
	EXPECT_EQ(0, r.m.key[BI_KEY_RREQS].lease.tokens);
}

/* A CPU held after a refusal asks again at once when a lease arrives. */
TEST(lease_lifts_a_hold)
{
	struct bi_global g;
	struct bi_local l;
	u64 retry;

	bi_global_init(&g, 1, 10, 0, 0);
	bi_local_init(&l, 0);
	ASSERT_FALSE(bi_local_charge(&l, &g, 5, false, 1 * MS, &retry));
	ASSERT_FALSE(bi_local_charge(&l, &g, 5, false, 2 * MS, &retry));
	EXPECT_EQ(1ULL, l.nr_held);
	bi_global_lease(&g, 100, NS, 3 * MS, NULL);
	ASSERT_TRUE(bi_local_charge(&l, &g, 5, false, 3 * MS, &retry));
}

/* Unused credit taken back: counted as returned, never as spent. */
TEST(unused_credit_is_returned)
{
	struct bi_lease_state st;
	struct rig r;

	ASSERT_EQ(0, rig_init(&r, "riops=100"));
	ASSERT_EQ(BI_LEASE_OK, bi_meter_lease(&r.m, BI_KEY_RREQS, 300, NS, 0, &st));
	ASSERT_EQ(BI_LEASE_OK, bi_meter_lease_return(&r.m, BI_KEY_RREQS, 1000, 10 * MS, &st));
	EXPECT_EQ(0, st.tokens);
	EXPECT_EQ(300ULL, st.returned);
	EXPECT_EQ(0ULL, st.spent);
	EXPECT_EQ(0ULL, st.expired);
	EXPECT_EQ(BI_LEASE_UNCAPPED, bi_meter_lease_return(&r.m, BI_KEY_WREQS, 1, 0, &st));
	EXPECT_EQ(BI_LEASE_RANGE, bi_meter_lease_return(&r.m, BI_KEY_RREQS, -1, 0, &st));
	/* 0 tokens is a query (doc/ioctl.md): accepted, nothing moves */
	EXPECT_EQ(BI_LEASE_OK, bi_meter_lease_return(&r.m, BI_KEY_RREQS, 0, 0, &st));
	EXPECT_EQ(300ULL, st.returned);
	/* only the floor is left: one second admits about 100 */
	EXPECT_LE(run(&r, 10 * MS, NS + 10 * MS), 106ULL);
}

TEST_HARNESS_MAIN
