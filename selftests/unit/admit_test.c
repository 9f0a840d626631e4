// SPDX-License-Identifier: GPL-2.0
/*
 * admit_test.c - admission over bucket sets (kmod/core/admit.c): class
 * policies S1-12..S1-15, S1-25, S1-27, A-17, A-19, A-20, S0-30, with the
 * catalogue's numbers (chains of nested tenants: meter_test.c); plus ticket
 * conservation over random admissions, edits and corrections.
 */
#include "admit.h"
#include "tokrng.h"
#include "kselftest_harness.h"

#define MS	BI_NSEC_PER_MSEC
#define SEC	BI_NSEC_PER_SEC

/* Seed 001's bucket names mapped onto class buckets: X = MID, Y = LO. */
#define X	BI_CLASS_MID
#define Y	BI_CLASS_LO

static void set_tokens(struct bi_bucket *cls, s64 sys, s64 hi, s64 mid, s64 lo)
{
	bi_bucket_init(&cls[BI_CLASS_SYS], 0, 1000, sys, 0);
	bi_bucket_init(&cls[BI_CLASS_HI], 0, 1000, hi, 0);
	bi_bucket_init(&cls[BI_CLASS_MID], 0, 1000, mid, 0);
	bi_bucket_init(&cls[BI_CLASS_LO], 0, 1000, lo, 0);
}

static struct bi_policy pol(u8 deduct, s64 min, int n, u8 b0, u8 b1)
{
	struct bi_policy p = {
		.nr_buckets = n, .bucket = { b0, b1 }, .deduct = deduct,
		.action = BI_ACTION_DELAY, .min_tokens = min,
		.floor_tokens = BI_NO_FLOOR,
	};
	return p;
}

/* S1-12 / A-20: high [H, M, L], medium [M, L], low [L]. */
TEST(s1_12_priority_buckets)
{
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_policy hi, mid, lo;
	struct bi_ticket t;

	bi_policy_priority(&hi, BI_CLASS_HI);
	bi_policy_priority(&mid, BI_CLASS_MID);
	bi_policy_priority(&lo, BI_CLASS_LO);
	ASSERT_EQ(3, hi.nr_buckets);
	ASSERT_EQ(2, mid.nr_buckets);
	ASSERT_EQ(1, lo.nr_buckets);
	set_tokens(cls, 0, 1, 1, 0);			/* L drained */
	ASSERT_EQ(BI_VERDICT_DELAY, bi_admit(cls, &lo, 1, 0, &t));
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &mid, 1, 0, &t));
	ASSERT_EQ(BI_CLASS_MID, t.chain[0]);		/* via M */
	ASSERT_EQ(BI_VERDICT_DELAY, bi_admit(cls, &mid, 1, 0, &t));	/* M drained */
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &hi, 1, 0, &t));
	ASSERT_EQ(BI_CLASS_HI, t.chain[0]);		/* via H */
}

/* S1-13: truth table A iff Y >= 1; B iff X >= 1 or Y >= 1; C iff X >= 1. */
TEST(s1_13_truth_table)
{
	struct bi_policy a = pol(BI_DEDUCT_SAME, 1, 1, Y, 0);
	struct bi_policy b = pol(BI_DEDUCT_SAME, 1, 2, X, Y);
	struct bi_policy c = pol(BI_DEDUCT_SAME, 1, 1, X, 0);
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_ticket t;
	int x, y;

	for (x = 0; x <= 1; x++)
		for (y = 0; y <= 1; y++) {
			set_tokens(cls, 0, 0, x, y);
			ASSERT_EQ(y ? BI_VERDICT_ADMIT : BI_VERDICT_DELAY,
				  bi_admit(cls, &a, 1, 0, &t));
			set_tokens(cls, 0, 0, x, y);
			ASSERT_EQ(x || y ? BI_VERDICT_ADMIT : BI_VERDICT_DELAY,
				  bi_admit(cls, &b, 1, 0, &t));
			set_tokens(cls, 0, 0, x, y);
			ASSERT_EQ(x ? BI_VERDICT_ADMIT : BI_VERDICT_DELAY,
				  bi_admit(cls, &c, 1, 0, &t));
		}
}

/* S1-14: same-bucket deduction: X = 5, Y = 5, B via X, cost 12 -> X = -7. */
TEST(s1_14_same_bucket)
{
	struct bi_policy b = pol(BI_DEDUCT_SAME, 1, 2, X, Y);
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_ticket t;

	set_tokens(cls, 0, 0, 5, 5);
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &b, 12, 0, &t));
	ASSERT_EQ(-7, cls[X].tokens);
	ASSERT_EQ(5, cls[Y].tokens);
	/* the same through initial 1 + correction */
	set_tokens(cls, 0, 0, 5, 5);
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &b, 1, 0, &t));
	ASSERT_EQ(11, bi_ticket_correct(cls, &t, 12, NULL, 0));
	ASSERT_EQ(-7, cls[X].tokens);
	ASSERT_EQ(5, cls[Y].tokens);
}

/* S1-15: spill: X = 10, Y = 10, B cost 25 via X -> X 9; then X 0, Y -5. */
TEST(s1_15_spill)
{
	struct bi_policy a = pol(BI_DEDUCT_SAME, 1, 1, Y, 0);
	struct bi_policy b = pol(BI_DEDUCT_SPILL, 1, 2, X, Y);
	struct bi_policy c = pol(BI_DEDUCT_SAME, 1, 1, X, 0);
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_ticket t;

	set_tokens(cls, 0, 0, 10, 10);
	bi_bucket_set(&cls[X], 10, 1000, 0);		/* X refills at 10/s */
	bi_bucket_set(&cls[Y], 10, 1000, 0);
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &b, 1, 0, &t));
	ASSERT_EQ(9, cls[X].tokens);
	ASSERT_EQ(24, bi_ticket_correct(cls, &t, 25, NULL, 0));
	ASSERT_EQ(0, cls[X].tokens);
	ASSERT_EQ(-5, cls[Y].tokens);
	/* C: one X token away (100 ms); A: until Y >= 1 (600 ms) */
	ASSERT_EQ(100 * MS, bi_admit_ready_at_ns(cls, &c, 1, 0));
	ASSERT_EQ(600 * MS, bi_admit_ready_at_ns(cls, &a, 1, 0));
	ASSERT_EQ(100 * MS, bi_admit_ready_at_ns(cls, &b, 1, 0));
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &c, 1, 100 * MS, &t));
	ASSERT_EQ(BI_VERDICT_DELAY, bi_admit(cls, &a, 1, 600 * MS - 1, &t));
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &a, 1, 600 * MS, &t));
	/* a refund goes back to the bucket that went furthest (Y) first */
	set_tokens(cls, 0, 0, 10, 10);
	bi_admit(cls, &b, 1, 0, &t);
	bi_ticket_correct(cls, &t, 25, NULL, 0);
	ASSERT_EQ(-20, bi_ticket_correct(cls, &t, 5, NULL, 0));
	ASSERT_EQ(5, cls[X].tokens);
	ASSERT_EQ(10, cls[Y].tokens);
	ASSERT_EQ(5, bi_ticket_total(&t));
}

/*
 * S1-25: what bi_policy_valid() accepts: one to three distinct classes,
 * either deduction, either action, a floor of zero or below.
 */
TEST(policy_validity)
{
	struct bi_policy p = pol(BI_DEDUCT_SPILL, 1, 2, X, Y);

	ASSERT_TRUE(bi_policy_valid(&p));
	p.action = BI_ACTION_REJECT;
	ASSERT_TRUE(bi_policy_valid(&p));
	p.floor_tokens = 0;
	ASSERT_TRUE(bi_policy_valid(&p));
	p.floor_tokens = 1;
	ASSERT_FALSE(bi_policy_valid(&p));
	p.floor_tokens = -5;
	p.nr_buckets = 3;
	p.bucket[2] = BI_CLASS_HI;
	ASSERT_TRUE(bi_policy_valid(&p));
	p.bucket[2] = Y;			/* a class twice */
	ASSERT_FALSE(bi_policy_valid(&p));
	p.bucket[2] = BI_NR_CLASSES;
	ASSERT_FALSE(bi_policy_valid(&p));
	p = pol(BI_DEDUCT_SAME, 1, 0, X, Y);
	ASSERT_FALSE(bi_policy_valid(&p));
	p = pol(BI_DEDUCT_SPILL + 1, 1, 1, X, 0);
	ASSERT_FALSE(bi_policy_valid(&p));
	p = pol(BI_DEDUCT_SAME, 1, 1, X, 0);
	p.action = BI_ACTION_REJECT + 1;
	ASSERT_FALSE(bi_policy_valid(&p));
	ASSERT_FALSE(bi_policy_valid(NULL));
}

/* S1-15: a spill over all three classes; the ticket's total is what was taken. */
TEST(spill_over_three_classes)
{
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_policy p = pol(BI_DEDUCT_SPILL, 1, 3, BI_CLASS_HI, X);
	struct bi_ticket t;

	p.bucket[2] = Y;
	set_tokens(cls, 0, 10, 10, 10);
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &p, 35, 0, &t));
	ASSERT_EQ(3, t.nr);
	ASSERT_EQ(35, bi_ticket_total(&t));
	ASSERT_EQ(-5, cls[Y].tokens);
	ASSERT_EQ(-5, bi_ticket_correct(cls, &t, 30, NULL, 0));
	ASSERT_EQ(30, bi_ticket_total(&t));
	ASSERT_EQ(0, cls[Y].tokens);
}

/*
 * S0-25 at its smallest: a completion one token dearer or cheaper than the
 * charge moves the bucket by that one token, both ways.
 */
TEST(one_token_corrections_reach_the_bucket)
{
	struct bi_policy b = pol(BI_DEDUCT_SAME, 1, 1, X, X);
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_ticket t;

	set_tokens(cls, 0, 0, 5, 5);
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &b, 8, 0, &t));
	ASSERT_EQ(-3, cls[X].tokens);
	EXPECT_EQ(1, bi_ticket_correct(cls, &t, 9, NULL, 0));
	EXPECT_EQ(-4, cls[X].tokens);
	EXPECT_EQ(-1, bi_ticket_correct(cls, &t, 8, NULL, 0));
	EXPECT_EQ(-3, cls[X].tokens);
	EXPECT_EQ(8, bi_ticket_total(&t));
}

/* A chain through every class bucket counts exactly its own charges. */
TEST(a_full_chain_totals_its_charges)
{
	struct bi_policy p = pol(BI_DEDUCT_SPILL, 1, BI_POLICY_MAX_BUCKETS,
				 BI_CLASS_SYS, BI_CLASS_HI);
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_ticket t;

	p.bucket[2] = X;
	p.bucket[3] = Y;
	p.floor_tokens = -1000;
	set_tokens(cls, 10, 10, 10, 10);
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &p, 35, 0, &t));
	ASSERT_EQ(BI_POLICY_MAX_BUCKETS, t.nr);
	EXPECT_EQ(35, bi_ticket_total(&t));
	EXPECT_EQ(0, bi_ticket_correct(cls, &t, 35, NULL, 0));
	EXPECT_EQ(5, cls[Y].tokens);
}

/* A policy consults its own buckets only: a full SYS bucket admits no LO bio. */
TEST(no_bucket_beyond_the_policy)
{
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_policy lo;
	struct bi_ticket t;

	bi_policy_priority(&lo, BI_CLASS_LO);
	set_tokens(cls, 100, 0, 0, 0);
	ASSERT_EQ(BI_VERDICT_DELAY, bi_admit(cls, &lo, 1, 0, &t));
	ASSERT_EQ(0, t.nr);
	ASSERT_EQ(U64_MAX, bi_admit_ready_at_ns(cls, &lo, 1, 0));
	ASSERT_EQ(100, cls[BI_CLASS_SYS].tokens);
}

/* primary then secondary; S0-30: min auto = the initial deduction. */
TEST(a_19_order_and_s0_30_min_auto)
{
	struct bi_policy b = pol(BI_DEDUCT_SAME, 1, 2, Y, X);
	struct bi_policy au = pol(BI_DEDUCT_SAME, BI_MIN_TOKENS_AUTO, 1, X, 0);
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_ticket t;

	set_tokens(cls, 0, 0, 10, 10);
	bi_admit(cls, &b, 1, 0, &t);
	ASSERT_EQ(Y, t.chain[0]);			/* primary first */
	set_tokens(cls, 0, 0, 31, 0);
	ASSERT_EQ(BI_VERDICT_DELAY, bi_admit(cls, &au, 32, 0, &t));
	set_tokens(cls, 0, 0, 32, 0);
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &au, 32, 0, &t));
	ASSERT_EQ(0, cls[X].tokens);
}

/* S1-27 / A-18: per-class action; A-17: the SYS class is never held back. */
TEST(s1_27_action_and_sys_class)
{
	struct bi_policy r = pol(BI_DEDUCT_SAME, 1, 1, X, 0);
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_policy sys;
	struct bi_ticket t;

	set_tokens(cls, -100, 0, 0, 0);
	ASSERT_EQ(BI_VERDICT_DELAY, bi_admit(cls, &r, 1, 0, &t));
	r.action = BI_ACTION_REJECT;
	ASSERT_EQ(BI_VERDICT_REJECT, bi_admit(cls, &r, 1, 0, &t));
	ASSERT_EQ(0, t.nr);
	bi_policy_priority(&sys, BI_CLASS_SYS);
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &sys, 1, 0, &t));
	ASSERT_EQ(-101, cls[BI_CLASS_SYS].tokens);	/* charged all the same */
}

/* S1-25: policies validated; a runtime edit does not misdirect corrections. */
TEST(s1_25_runtime_edit)
{
	struct bi_policy p = pol(BI_DEDUCT_SPILL, 1, 2, X, Y);
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_policy bad;
	struct bi_ticket t;

	ASSERT_TRUE(bi_policy_valid(&p));
	bad = p;
	bad.nr_buckets = 0;
	ASSERT_FALSE(bi_policy_valid(&bad));
	bad = p;
	bad.bucket[1] = X;				/* listed twice */
	ASSERT_FALSE(bi_policy_valid(&bad));
	bad = p;
	bad.bucket[1] = BI_NR_CLASSES;
	ASSERT_FALSE(bi_policy_valid(&bad));
	bad = p;
	bad.deduct = 7;
	ASSERT_FALSE(bi_policy_valid(&bad));

	set_tokens(cls, 0, 0, 10, 10);
	ASSERT_EQ(BI_VERDICT_ADMIT, bi_admit(cls, &p, 1, 0, &t));
	p = pol(BI_DEDUCT_SAME, 1, 1, BI_CLASS_HI, 0);	/* edited in flight */
	bi_ticket_correct(cls, &t, 25, NULL, 0);
	ASSERT_EQ(0, cls[X].tokens);
	ASSERT_EQ(-5, cls[Y].tokens);
	ASSERT_EQ(0, cls[BI_CLASS_HI].tokens);
}

/*
 * Conservation: random policies (edited at random), admissions and
 * corrections: the buckets lose exactly what the tickets hold.
 */
TEST(ticket_conservation_random)
{
	enum { NT = 16 };
	uint64_t rng = 1625;
	int round, i;

	for (round = 0; round < 100; round++) {
		struct bi_bucket cls[BI_NR_CLASSES];
		struct bi_ticket tk[NT] = { 0 };
		struct bi_policy p;
		s64 lost = 0, held = 0;
		u64 now = 0;
		int c;

		for (c = 0; c < BI_NR_CLASSES; c++)
			bi_bucket_init(&cls[c], tokrng_range(&rng, 0, 5000),
				       BI_TOKENS_LIMIT, tokrng_range(&rng, -50, 50), 0);
		for (i = 0; i < 400; i++) {
			struct bi_ticket *t = &tk[tokrng_next(&rng) % NT];

			now += tokrng_range(&rng, 0, 5 * MS);
			if (!t->nr) {
				p = pol(tokrng_next(&rng) & 1, tokrng_range(&rng, -20, 5),
					1, tokrng_next(&rng) % BI_NR_CLASSES, 0);
				if (tokrng_next(&rng) & 1) {
					p.nr_buckets = 2;
					p.bucket[1] = (p.bucket[0] + 1) % BI_NR_CLASSES;
				}
				ASSERT_TRUE(bi_policy_valid(&p));
				bi_admit(cls, &p, tokrng_range(&rng, 0, 40), now, t);
			} else {
				bi_ticket_correct(cls, t, tokrng_range(&rng, 0, 600), NULL, now);
				if (tokrng_next(&rng) & 1) {
					held += bi_ticket_total(t);	/* retired */
					*t = (struct bi_ticket){ 0 };
				}
			}
		}
		for (c = 0; c < BI_NR_CLASSES; c++) {
			ASSERT_EQ(0ULL, cls[c].dropped);
			lost += (s64)(cls[c].charged - cls[c].refunded);
		}
		for (i = 0; i < NT; i++)
			held += bi_ticket_total(&tk[i]);
		ASSERT_EQ(lost, held);
	}
}

TEST_HARNESS_MAIN
