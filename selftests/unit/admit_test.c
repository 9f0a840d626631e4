// SPDX-License-Identifier: GPL-2.0
/*
 * admit_test.c - admission over bucket sets (kmod/core/admit.c): class
 * policies S1-12..S1-15, S1-25, S1-27, A-17, A-19, A-20, S0-30, and
 * hierarchies S1-06, S1-19..S1-24, A-21, A-22, with the catalogue's numbers;
 * plus ticket conservation over random admissions, edits and corrections.
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

/* S0-28 over a policy: incremental chunk charges follow the spill chain. */
TEST(ticket_incremental)
{
	struct bi_policy p = pol(BI_DEDUCT_SPILL, 1, 2, X, Y);
	struct bi_bucket cls[BI_NR_CLASSES];
	struct bi_ticket t;

	set_tokens(cls, 0, 0, 40, 100);
	bi_admit(cls, &p, 1, 0, &t);
	ASSERT_EQ(31, bi_ticket_charge_to(cls, &t, 32, 0));
	ASSERT_EQ(8, cls[X].tokens);
	ASSERT_EQ(32, bi_ticket_charge_to(cls, &t, 64, 0));
	ASSERT_EQ(0, cls[X].tokens);
	ASSERT_EQ(76, cls[Y].tokens);
	ASSERT_EQ(0, bi_ticket_charge_to(cls, &t, 60, 0));	/* never refunds */
	ASSERT_EQ(0, bi_ticket_correct(cls, &t, 64, NULL, 0));
}

/* S1-06: one bio along [class -> cgroup -> device] decrements all three. */
TEST(s1_06_chain_charge)
{
	struct bi_hnode dev = { .parent = NULL };
	struct bi_hnode cg = { .parent = &dev };
	struct bi_hnode cl = { .parent = &cg };
	struct bi_hticket t;

	bi_bucket_init(&dev.b, 0, 1000, 1000, 0);
	bi_bucket_init(&cg.b, 0, 100, 100, 0);
	bi_bucket_init(&cl.b, 0, 50, 50, 0);
	ASSERT_TRUE(bi_hier_valid(&cl));
	ASSERT_TRUE(bi_hier_admit(&cl, BI_HIER_STRICT, 1, 32, BI_NO_FLOOR, 0, &t));
	ASSERT_EQ(968, dev.b.tokens);
	ASSERT_EQ(68, cg.b.tokens);
	ASSERT_EQ(18, cl.b.tokens);
}

static void xy(struct bi_hnode *x, struct bi_hnode *y, s64 tx, s64 ty, u64 rate)
{
	*x = (struct bi_hnode){ .parent = NULL };
	*y = (struct bi_hnode){ .parent = x };
	bi_bucket_init(&x->b, rate, 30, tx, 0);
	bi_bucket_init(&y->b, rate, 5, ty, 0);
}

/* S1-19: parent X max 30, child Y max 5, both full: 30 shared, not 35. */
TEST(s1_19_shared_parent)
{
	struct bi_hnode x, y;
	struct bi_hticket t;
	int a = 0, b = 0;

	xy(&x, &y, 30, 5, 0);
	while (bi_hier_admit(&y, BI_HIER_STRICT, 1, 1, BI_NO_FLOOR, 0, &t))
		a++;
	ASSERT_EQ(5, a);
	ASSERT_EQ(25, x.b.tokens);
	while (bi_hier_admit(&x, BI_HIER_STRICT, 1, 1, BI_NO_FLOOR, 0, &t))
		b++;
	ASSERT_EQ(25, b);
	ASSERT_EQ(30, a + b);
}

/* S1-20 / A-21: child charges parent, parent charge spares child; strict. */
TEST(s1_20_deduction_rules)
{
	struct bi_hnode x, y;
	struct bi_hticket t;

	xy(&x, &y, 30, 5, 0);
	ASSERT_TRUE(bi_hier_admit(&y, BI_HIER_STRICT, 1, 2, BI_NO_FLOOR, 0, &t));
	ASSERT_EQ(28, x.b.tokens);
	ASSERT_EQ(3, y.b.tokens);
	xy(&x, &y, 30, 5, 0);
	ASSERT_EQ(35, bi_hier_charge(&x, 35, BI_NO_FLOOR, 0));
	ASSERT_EQ(-5, x.b.tokens);
	ASSERT_EQ(5, y.b.tokens);
	ASSERT_FALSE(bi_hier_admit(&y, BI_HIER_STRICT, 1, 1, BI_NO_FLOOR, 0, &t));
	/* relaxed: the child's own tokens admit it (charging the parent) */
	ASSERT_TRUE(bi_hier_admit(&y, BI_HIER_RELAXED, 1, 1, BI_NO_FLOOR, 0, &t));
	ASSERT_EQ(&y, t.from);
	ASSERT_EQ(-6, x.b.tokens);
	ASSERT_EQ(4, y.b.tokens);
}

/* S1-21: X = -5 at 10/s, Y = 5: first Y-class admission at 0.6 s. */
TEST(s1_21_hier_blackout)
{
	struct bi_hnode x, y;
	struct bi_hticket t;

	xy(&x, &y, -5, 5, 10);
	ASSERT_EQ(600 * MS, bi_hier_ready_at_ns(&y, BI_HIER_STRICT, 1, 0));
	ASSERT_FALSE(bi_hier_admit(&y, BI_HIER_STRICT, 1, 1, BI_NO_FLOOR,
				   600 * MS - 1, &t));
	ASSERT_TRUE(bi_hier_admit(&y, BI_HIER_STRICT, 1, 1, BI_NO_FLOOR,
				  600 * MS, &t));
	xy(&x, &y, -5, 0, 10);
	ASSERT_EQ(100 * MS, bi_hier_ready_at_ns(&y, BI_HIER_RELAXED, 1, 0));
}

/* S1-23: group accumulation 10/s over X 0/30 and Y 0/5. */
TEST(s1_23_group_rate)
{
	struct bi_hnode x, y;

	xy(&x, &y, 0, 0, 0);
	bi_hier_group_rate(&y, 10, 0);
	bi_bucket_refill(&x.b, SEC);
	bi_bucket_refill(&y.b, SEC);
	ASSERT_EQ(10, x.b.tokens);
	ASSERT_EQ(5, y.b.tokens);
	bi_bucket_refill(&x.b, 3 * SEC);
	bi_bucket_refill(&y.b, 3 * SEC);
	ASSERT_EQ(30, x.b.tokens);
	ASSERT_EQ(5, y.b.tokens);
}

/* "again upon processing" is the correction, along the same path. */
TEST(a_22_hier_correction)
{
	struct bi_hnode x, y;
	struct bi_hticket t;

	xy(&x, &y, 30, 5, 0);
	ASSERT_TRUE(bi_hier_admit(&y, BI_HIER_STRICT, 1, 1, BI_NO_FLOOR, 0, &t));
	ASSERT_EQ(9, bi_hier_correct(&t, 10, NULL, 0));
	ASSERT_EQ(20, x.b.tokens);
	ASSERT_EQ(-5, y.b.tokens);
	ASSERT_EQ(-8, bi_hier_correct(&t, 2, NULL, 0));
	ASSERT_EQ(28, x.b.tokens);
	ASSERT_EQ(3, y.b.tokens);
}

/*
 * S1-24: siblings A, B (50/s each) under P (100/s = their sum, A-22),
 * relaxed admission.  A alone, greedy: ~100/s.  A at 10/s, B greedy:
 * B ~90/s.  Strict (io.max semantics): B at its own 50/s.  10 s, 1 ms steps;
 * tolerance one capacity of each bucket involved.
 */
static void siblings(u8 mode, bool a_greedy, bool b_on, int *na, int *nb)
{
	struct bi_hnode p = { .parent = NULL }, a = { .parent = &p },
			b = { .parent = &p };
	struct bi_hticket t;
	u64 now;

	bi_bucket_init(&p.b, 100, 10, 0, 0);
	bi_bucket_init(&a.b, 50, 5, 0, 0);
	bi_bucket_init(&b.b, 50, 5, 0, 0);
	*na = *nb = 0;
	for (now = MS; now <= 10 * SEC; now += MS) {
		if (a_greedy || now % (100 * MS) == 0)
			while (bi_hier_admit(&a, mode, 1, 1, BI_NO_FLOOR, now, &t) &&
			       ++*na && a_greedy)
				;
		while (b_on && bi_hier_admit(&b, mode, 1, 1, BI_NO_FLOOR, now, &t))
			++*nb;
	}
}

TEST(s1_24_sibling_sharing)
{
	int na, nb;

	siblings(BI_HIER_RELAXED, true, false, &na, &nb);
	ASSERT_LE(1000 - 15, na);
	ASSERT_GE(1000 + 15, na);
	siblings(BI_HIER_RELAXED, false, true, &na, &nb);
	ASSERT_EQ(100, na);
	ASSERT_LE(900 - 15, nb);
	ASSERT_GE(900 + 15, nb);
	siblings(BI_HIER_STRICT, false, true, &na, &nb);
	ASSERT_LE(500 - 15, nb);
	ASSERT_GE(500 + 15, nb);
}

/*
 * Conservation: random policies (edited at random), admissions, chunk
 * charges and corrections: the buckets lose exactly what the tickets hold.
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
			} else if (tokrng_next(&rng) % 3 == 0) {
				bi_ticket_charge_to(cls, t, tokrng_range(&rng, 0, 600), now);
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
