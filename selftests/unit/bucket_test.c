// SPDX-License-Identifier: GPL-2.0
/*
 * bucket_test.c - the lazy token bucket (kmod/core/bucket.c): the catalogue's
 * TB-U tests for S0-05..S0-07, S0-23..S0-27, S0-31, S1-07, S1-08, S1-10,
 * S1-11, A-03, A-14, plus exactness over 10^6 s, blackout timing as a
 * property, and the accounting identity over random operation sequences.
 */
#include "bucket.h"
#include "policy.h"
#include "tokrng.h"
#include "kselftest_harness.h"

#define MS	BI_NSEC_PER_MSEC
#define SEC	BI_NSEC_PER_SEC

/* tokens - tokens0 == added - charged + refunded - dropped - given + taken */
static int64_t balance_delta(const struct bi_bucket *b)
{
	return (int64_t)(b->added - b->charged + b->refunded - b->dropped -
			 b->given + b->taken);
}

/* S0-23 / A-03: capacity as burst time; refill stops at capacity. */
TEST(s0_23_capacity_and_refill)
{
	struct bi_bucket b;
	u64 t0 = 10 * SEC;

	ASSERT_EQ(50ULL, bi_bucket_capacity(100, 500));
	ASSERT_EQ(5ULL, bi_bucket_capacity(100, BI_BURST_DEFAULT_MS));
	ASSERT_EQ(1ULL, bi_bucket_capacity(1, 50));	/* never below 1 */

	bi_bucket_init(&b, 100, 50, 0, 0);
	bi_bucket_refill(&b, t0);
	ASSERT_EQ(50, b.tokens);			/* after 10 s idle */
	ASSERT_EQ(50, bi_bucket_charge(&b, 50, BI_NO_FLOOR, t0));
	bi_bucket_refill(&b, t0 + 250 * MS);
	ASSERT_EQ(25, b.tokens);
	bi_bucket_refill(&b, t0 + 2 * SEC);
	ASSERT_EQ(50, b.tokens);
	ASSERT_EQ(0, balance_delta(&b) - 50);
}

/* S1-07: 20 tokens/s, at most 100. */
TEST(s1_07_accumulation)
{
	struct bi_bucket b;

	bi_bucket_init(&b, 20, 100, 0, 0);
	bi_bucket_refill(&b, 2 * SEC);
	ASSERT_EQ(40, b.tokens);
	bi_bucket_refill(&b, 10 * SEC);
	ASSERT_EQ(100, b.tokens);
	bi_bucket_refill(&b, 60 * SEC);
	ASSERT_EQ(100, b.tokens);
}

/*
 * S1-08: refill at random times (1 us - 50 ms jitter) for 100 s at 1000/s
 * equals a timer-driven reference bucket that adds one token per ms.
 */
TEST(s1_08_lazy_equals_timer)
{
	struct bi_bucket b;
	uint64_t rng = 8, t = 0;
	int64_t ref = 0;
	u64 tick;

	bi_bucket_init(&b, 1000, 1LL << 40, 0, 0);
	while (t < 100 * SEC) {
		t += tokrng_range(&rng, 1000, 50 * MS);
		bi_bucket_refill(&b, t < 100 * SEC ? t : 100 * SEC);
	}
	for (tick = MS; tick <= 100 * SEC; tick += MS)
		ref++;
	ASSERT_EQ(ref, b.tokens);			/* exact: 100,000 */
	ASSERT_EQ(100000, b.tokens);
}

/* S0-26: integer tokens, no drift: 3/s gives +1 at 0.5 s, 3000 in 1000 s. */
TEST(s0_26_integer_no_drift)
{
	struct bi_bucket b;
	u64 t;

	bi_bucket_init(&b, 3, 1LL << 40, 0, 0);
	bi_bucket_refill(&b, SEC / 2);
	ASSERT_EQ(1, b.tokens);
	for (t = SEC / 2; t <= 1000 * SEC; t += SEC / 2)
		bi_bucket_refill(&b, t);
	ASSERT_EQ(3000, b.tokens);
}

/* 10^6 simulated seconds at awkward rates, random access times: exact. */
TEST(a_14_million_seconds_exact)
{
	static const u64 rates[] = { 7, 1000000007ULL, BI_RATE_MAX_UNITS_PER_S / 10 };
	uint64_t rng = 14;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rates); i++) {
		struct bi_bucket b;
		u64 t = 0, end = 1000000ULL * SEC;

		bi_bucket_init(&b, rates[i], BI_TOKENS_LIMIT, 0, 0);
		while (t < end) {
			t += tokrng_range(&rng, 1, 120 * SEC);
			bi_bucket_refill(&b, t < end ? t : end);
		}
		ASSERT_EQ((int64_t)(rates[i] * 1000000ULL), b.tokens);
		ASSERT_EQ(0ULL, b.rem);
	}
}

/* Huge elapsed times and rates saturate at capacity without overflow. */
TEST(refill_extremes)
{
	struct bi_bucket b;

	bi_bucket_init(&b, U64_MAX, BI_TOKENS_LIMIT, -BI_TOKENS_LIMIT, 0);
	ASSERT_EQ(BI_RATE_MAX_UNITS_PER_S, b.rate);
	bi_bucket_refill(&b, U64_MAX);
	ASSERT_EQ(BI_TOKENS_LIMIT, b.tokens);
	bi_bucket_init(&b, 1, 10, 0, 5);
	bi_bucket_refill(&b, 3);			/* clock stepped back */
	ASSERT_EQ(0, b.tokens);
	ASSERT_EQ(5ULL, b.last_ns);
}

/* S0-05: request bucket, cap 100 rps, burst 3, full at t = 0. */
TEST(s0_05_request_bucket)
{
	struct bi_bucket b;
	int admitted = 0, i;
	u64 t;

	bi_bucket_init(&b, 100, BI_BURST_LIMIT_DEFAULT, BI_BURST_LIMIT_DEFAULT, 0);
	for (i = 0; i < 10; i++)
		admitted += bi_bucket_try_charge(&b, 1, 1, BI_NO_FLOOR, 0);
	ASSERT_EQ(3, admitted);
	ASSERT_EQ(10 * MS, bi_bucket_ready_at_ns(&b, 1, 0));
	ASSERT_FALSE(bi_bucket_admissible(&b, 1, 10 * MS - 1));
	ASSERT_TRUE(bi_bucket_try_charge(&b, 1, 1, BI_NO_FLOOR, 10 * MS));

	/* 1000 bios/s offered for 10 s: admitted = 1003 +- 1 */
	bi_bucket_init(&b, 100, 3, 3, 0);
	admitted = 0;
	for (t = 0; t < 10 * SEC; t += MS)
		admitted += bi_bucket_try_charge(&b, 1, 1, BI_NO_FLOOR, t);
	ASSERT_LE(1002, admitted);
	ASSERT_GE(1004, admitted);
}

/* S0-07: after >= 1 s idle a burst of 10 admits burst_limit; next at 1/cap. */
TEST(s0_07_burst_limit)
{
	struct bi_bucket b;
	int admitted = 0, i;
	u64 t0 = 5 * SEC / 2;

	bi_bucket_init(&b, 100, 3, 0, 0);
	for (i = 0; i < 10; i++)
		admitted += bi_bucket_try_charge(&b, 1, 1, BI_NO_FLOOR, t0);
	ASSERT_EQ(3, admitted);
	ASSERT_EQ(t0 + SEC / 100, bi_bucket_ready_at_ns(&b, 1, t0));
}

/* S0-06: minimum tokens incl. zero and negative (borrowing). */
TEST(s0_06_min_tokens_borrowing)
{
	struct bi_bucket b;
	int admitted = 0;

	bi_bucket_init(&b, 0, 100, 0, 0);
	while (bi_bucket_try_charge(&b, -20, 1, BI_NO_FLOOR, 0))
		admitted++;
	ASSERT_EQ(21, admitted);
	ASSERT_EQ(-21, b.tokens);

	bi_bucket_init(&b, 0, 100, 0, 0);
	ASSERT_FALSE(bi_bucket_try_charge(&b, 1, 1, BI_NO_FLOOR, 0));
	bi_bucket_init(&b, 0, 100, 4, 0);
	ASSERT_FALSE(bi_bucket_try_charge(&b, 5, 1, BI_NO_FLOOR, 0));
	ASSERT_EQ(4, b.tokens);
}

/* Negative floor: a charge never takes the balance below it (§10 floor). */
TEST(negative_floor)
{
	struct bi_bucket b;

	bi_bucket_init(&b, 0, 100, 5, 0);
	ASSERT_EQ(15, bi_bucket_charge(&b, 40, -10, 0));
	ASSERT_EQ(-10, b.tokens);
	ASSERT_EQ(0, bi_bucket_charge(&b, 1, -10, 0));
	ASSERT_EQ(-15, balance_delta(&b));
}

/* S0-24: initial deduction then correction. */
TEST(s0_24_initial_then_correct)
{
	struct bi_bucket b;

	bi_bucket_init(&b, 0, 100, 100, 0);
	bi_bucket_charge(&b, 2, BI_NO_FLOOR, 0);
	ASSERT_EQ(3, bi_bucket_correct(&b, 2, 5, NULL, BI_NO_FLOOR, 0));
	ASSERT_EQ(95, b.tokens);			/* 5 in total */
	bi_bucket_charge(&b, 2, BI_NO_FLOOR, 0);
	ASSERT_EQ(-1, bi_bucket_correct(&b, 2, 1, NULL, BI_NO_FLOOR, 0));
	ASSERT_EQ(94, b.tokens);			/* net 1 */
}

/* S0-25: 64 KiB writes with initial 1, correction at completion, dead-band. */
TEST(s0_25_completion_correction)
{
	struct bi_deadband db = { .pct = 10 };
	struct bi_bucket b;

	bi_bucket_init(&b, 0, 50, 50, 0);
	ASSERT_TRUE(bi_bucket_try_charge(&b, 1, 1, BI_NO_FLOOR, 0));
	ASSERT_EQ(49, b.tokens);
	bi_bucket_correct(&b, 1, 32, NULL, BI_NO_FLOOR, 0);
	ASSERT_EQ(18, b.tokens);
	ASSERT_TRUE(bi_bucket_try_charge(&b, 1, 1, BI_NO_FLOOR, 0));
	ASSERT_EQ(17, b.tokens);
	bi_bucket_correct(&b, 1, 32, NULL, BI_NO_FLOOR, 0);
	ASSERT_EQ(-14, b.tokens);
	ASSERT_FALSE(bi_bucket_try_charge(&b, 1, 1, BI_NO_FLOOR, 0));
	bi_bucket_set(&b, 100, 50, 0);
	ASSERT_TRUE(bi_bucket_try_charge(&b, 1, 1, BI_NO_FLOOR, 150 * MS));
	ASSERT_EQ(0, b.tokens);				/* -14 + 15 = 1, admitted */

	bi_bucket_init(&b, 0, 100, 50, 0);
	ASSERT_EQ(0, bi_bucket_correct(&b, 32, 34, &db, BI_NO_FLOOR, 0));
	ASSERT_EQ(50, b.tokens);
	ASSERT_EQ(8, bi_bucket_correct(&b, 32, 40, &db, BI_NO_FLOOR, 0));
	ASSERT_EQ(42, b.tokens);
	ASSERT_EQ(-30, bi_bucket_correct(&b, 32, 2, &db, BI_NO_FLOOR, 0));
	ASSERT_EQ(72, b.tokens);
	/* absolute dead-band */
	db = (struct bi_deadband){ .units = 4 };
	ASSERT_EQ(0, bi_bucket_correct(&b, 1, 4, &db, BI_NO_FLOOR, 0));
	ASSERT_EQ(4, bi_bucket_correct(&b, 1, 5, &db, BI_NO_FLOOR, 0));
}

/* Refunds stop at capacity; the rest is dropped and accounted. */
TEST(refund_capped)
{
	struct bi_bucket b;

	bi_bucket_init(&b, 0, 10, 8, 0);
	ASSERT_EQ(2, bi_bucket_refund(&b, 5, 0));
	ASSERT_EQ(10, b.tokens);
	ASSERT_EQ(3ULL, b.dropped);
	ASSERT_EQ(2, balance_delta(&b));
}

/* Charges and refunds of zero or less change nothing and count nothing. */
TEST(zero_and_negative_amounts_change_nothing)
{
	struct bi_bucket b;

	bi_bucket_init(&b, 0, 10, 5, 0);
	ASSERT_EQ(0, bi_bucket_charge(&b, 0, BI_NO_FLOOR, 0));
	ASSERT_EQ(0, bi_bucket_charge(&b, -3, BI_NO_FLOOR, 0));
	ASSERT_EQ(0, bi_bucket_refund(&b, 0, 0));
	ASSERT_EQ(0, bi_bucket_refund(&b, -3, 0));
	ASSERT_EQ(5, b.tokens);
	ASSERT_EQ(0ULL, b.charged);
	ASSERT_EQ(0ULL, b.refunded);
	ASSERT_EQ(0ULL, b.dropped);
	/* a refund that exactly fills the bucket drops nothing */
	ASSERT_EQ(5, bi_bucket_refund(&b, 5, 0));
	ASSERT_EQ(10, b.tokens);
	ASSERT_EQ(0ULL, b.dropped);
}

/*
 * S0-31: a new rate applies from the moment it is set; what the old rate
 * earned until then is kept (1000/s for 1 s, then 10/s for 1 s: 1010).
 */
TEST(set_keeps_what_the_old_rate_earned)
{
	struct bi_bucket b;

	bi_bucket_init(&b, 1000, 100000, 0, 0);
	bi_bucket_set(&b, 10, 100000, SEC);
	ASSERT_EQ(1000, b.tokens);
	bi_bucket_refill(&b, 2 * SEC);
	ASSERT_EQ(1010, b.tokens);
}

/*
 * a bucket that fills forgets the fraction of a token it had: after
 * a charge, the next token takes a whole 1/rate (3/s: 333,333,334 ns).
 */
TEST(full_bucket_forgets_the_fraction)
{
	struct bi_bucket b;
	u64 t0 = 1400 * MS;

	bi_bucket_init(&b, 3, 2, 0, 0);
	bi_bucket_refill(&b, SEC / 2);		/* 1.5 tokens: 1 and a half */
	ASSERT_EQ(1, b.tokens);
	bi_bucket_refill(&b, t0);		/* full at 2 */
	ASSERT_EQ(2, b.tokens);
	ASSERT_EQ(2, bi_bucket_charge(&b, 2, BI_NO_FLOOR, t0));
	bi_bucket_refill(&b, t0 + 333333333);
	ASSERT_EQ(0, b.tokens);
	bi_bucket_refill(&b, t0 + 333333334);
	ASSERT_EQ(1, b.tokens);
}

/*
 * ready_at far away: at 1 unit/s, a debt of 9,223,372,036 units ends
 * exactly that many seconds (plus one for the minimum) later; one unit
 * more and the time no longer fits the nanosecond clock's range the code
 * allows (half of 2^64 ns): never.
 */
TEST(ready_at_far_future)
{
	struct bi_bucket b;

	bi_bucket_init(&b, 1, BI_TOKENS_LIMIT, -9223372036LL, 0);
	ASSERT_EQ(9223372037ULL * SEC, bi_bucket_ready_at_ns(&b, 1, 0));
	bi_bucket_init(&b, 1, BI_TOKENS_LIMIT, -9223372037LL, 0);
	ASSERT_EQ(U64_MAX, bi_bucket_ready_at_ns(&b, 1, 0));
}

/* S0-25: corrections of 2^40 units or more are never inside a <= 100 % band. */
TEST(deadband_saturates)
{
	struct bi_deadband db = { .units = 0, .pct = 100 };

	ASSERT_FALSE(bi_deadband_skip(&db, 1LL << 41, 3LL << 39));
	ASSERT_TRUE(bi_deadband_skip(&db, 1LL << 39, 1LL << 38));
}

/* S0-27: -500 at 1000 units/s, min 1: first admission at 501 ms. */
TEST(s0_27_negative_recovery)
{
	struct bi_bucket b;

	bi_bucket_init(&b, 1000, 50, -500, 0);
	ASSERT_EQ(501 * MS, bi_bucket_ready_at_ns(&b, 1, 0));
	ASSERT_FALSE(bi_bucket_admissible(&b, 1, 501 * MS - 1));
	ASSERT_TRUE(bi_bucket_admissible(&b, 1, 501 * MS));
}

/* S1-11 / A-09: 10/s at -100: blackout ends at 10.1 s (min 1), 10.0 s (min 0). */
TEST(s1_11_blackout)
{
	struct bi_bucket b;

	bi_bucket_init(&b, 10, 100, -100, 0);
	ASSERT_EQ(10100 * MS, bi_bucket_ready_at_ns(&b, 1, 0));
	ASSERT_EQ(10000 * MS, bi_bucket_ready_at_ns(&b, 0, 0));
	ASSERT_EQ(U64_MAX, bi_bucket_ready_at_ns(&b, 101, 0));	/* above capacity */
	bi_bucket_set(&b, 0, 100, 0);
	ASSERT_EQ(U64_MAX, bi_bucket_ready_at_ns(&b, 1, 0));	/* rate 0 */
}

/* S1-10: thresholds: a moving-average minimum of 32, and a negative one. */
TEST(s1_10_thresholds)
{
	struct bi_bucket b;

	bi_bucket_init(&b, 0, 100, 31, 0);
	ASSERT_FALSE(bi_bucket_try_charge(&b, 32, 32, BI_NO_FLOOR, 0));
	bi_bucket_init(&b, 0, 100, -9, 0);
	ASSERT_TRUE(bi_bucket_try_charge(&b, -10, 1, BI_NO_FLOOR, 0));
	bi_bucket_init(&b, 0, 100, -11, 0);
	ASSERT_FALSE(bi_bucket_try_charge(&b, -10, 1, BI_NO_FLOOR, 0));
}

/* S0-31: retune halves the rate and the capacity; admitted work halves. */
TEST(s0_31_retune)
{
	struct bi_bucket b;
	u64 t, got1 = 0, got2 = 0;

	bi_bucket_init(&b, 10000, (s64)bi_bucket_capacity(10000, 50), 500, 0);
	ASSERT_EQ(500, b.max_tokens);
	for (t = 0; t < SEC; t += MS)		/* a greedy tenant, 32-unit bios */
		while (bi_bucket_try_charge(&b, 32, 32, BI_NO_FLOOR, t))
			got1 += 32;
	bi_bucket_retune(&b, 5000, 50, SEC);
	ASSERT_EQ(250, b.max_tokens);
	ASSERT_GE(250, b.tokens);
	for (t = SEC; t < 2 * SEC; t += MS)
		while (bi_bucket_try_charge(&b, 32, 32, BI_NO_FLOOR, t))
			got2 += 32;
	/* within one capacity of rate * 1 s */
	ASSERT_LE(10000ULL - 500, got1);
	ASSERT_GE(10000ULL + 500, got1);
	ASSERT_LE(5000ULL - 250, got2);
	ASSERT_GE(5000ULL + 250, got2);
	/* clamp on a smaller capacity is accounted as dropped */
	bi_bucket_init(&b, 0, 100, 100, 0);
	bi_bucket_set(&b, 0, 40, 0);
	ASSERT_EQ(40, b.tokens);
	ASSERT_EQ(60ULL, b.dropped);
}

/*
 * Blackout timing as a property: for random balances, rates, remainders and
 * minimums, ready_at is the first ns at which the bucket admits.
 */
TEST(ready_at_is_exact)
{
	uint64_t rng = 27;
	int i;

	for (i = 0; i < 20000; i++) {
		struct bi_bucket b, c;
		s64 min = tokrng_range(&rng, -50, 60);
		u64 rate = tokrng_range(&rng, 1, i & 1 ? 1000 : 3000000000LL);
		u64 now = tokrng_range(&rng, 0, 1000 * SEC), r;

		bi_bucket_init(&b, rate, 60, tokrng_range(&rng, -100000, 60), 0);
		bi_bucket_refill(&b, tokrng_range(&rng, 0, 999999));	/* a remainder */
		r = bi_bucket_ready_at_ns(&b, min, now);
		ASSERT_NE(U64_MAX, r);
		c = b;
		ASSERT_TRUE(bi_bucket_admissible(&c, min, r));
		if (r > now) {
			c = b;
			ASSERT_FALSE(bi_bucket_admissible(&c, min, r - 1));
		}
	}
}

/* added - charged + refunded - dropped = balance change, random sequences. */
TEST(conservation_random)
{
	uint64_t rng = 2024;
	int round, i;

	for (round = 0; round < 200; round++) {
		struct bi_bucket b;
		s64 t0 = tokrng_range(&rng, -1000, 1000);
		u64 now = 0;

		bi_bucket_init(&b, tokrng_range(&rng, 0, 100000),
			       tokrng_range(&rng, 1, 5000), t0, 0);
		t0 = b.tokens;
		for (i = 0; i < 500; i++) {
			s64 x = tokrng_range(&rng, 0, 700);

			now += tokrng_range(&rng, 0, 20 * MS);
			switch (tokrng_next(&rng) % 6) {
			case 0:
				bi_bucket_charge(&b, x, i & 1 ? BI_NO_FLOOR : -300, now);
				break;
			case 1:
				bi_bucket_refund(&b, x, now);
				break;
			case 2:
				bi_bucket_correct(&b, tokrng_range(&rng, 1, 64), x, NULL,
						  BI_NO_FLOOR, now);
				break;
			case 3:
				bi_bucket_try_charge(&b, tokrng_range(&rng, -50, 50), x,
						     BI_NO_FLOOR, now);
				break;
			case 4:
				bi_bucket_retune(&b, tokrng_range(&rng, 0, 100000),
						 tokrng_range(&rng, 1, 1000), now);
				break;
			default:
				bi_bucket_refill(&b, now);
			}
			ASSERT_LE(b.tokens, b.max_tokens);
			ASSERT_EQ(b.tokens - t0, balance_delta(&b));
		}
	}
}

TEST_HARNESS_MAIN
