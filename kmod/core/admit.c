// SPDX-License-Identifier: GPL-2.0
/*
 * admit.c - admission of one bio over a set of buckets: class policies with
 * same-bucket or spill deduction, and hierarchies with strict or relaxed
 * admission.  The buckets themselves are bucket.c's.
 *
 * Concurrency: see admit.h; the caller serialises the buckets involved.
 */
#include "admit.h"

/* Spill deduction stops non-last buckets here (S1-15: "e.g. zero"). */
#define BI_SPILL_THRESHOLD_TOKENS	0

/* bi_policy_valid - reject a policy the admission code cannot apply (S1-25). */
bool bi_policy_valid(const struct bi_policy *p)
{
	int i, j;

	if (!p || p->nr_buckets < 1 || p->nr_buckets > BI_POLICY_MAX_BUCKETS)
		return false;
	if (p->deduct > BI_DEDUCT_SPILL || p->action > BI_ACTION_REJECT)
		return false;
	for (i = 0; i < p->nr_buckets; i++) {
		if (p->bucket[i] >= BI_NR_CLASSES)
			return false;
		for (j = 0; j < i; j++)
			if (p->bucket[j] == p->bucket[i])
				return false;
	}
	return p->floor_tokens <= 0;
}

/*
 * bi_policy_priority - the "priority" shortcut (S1-12, S1-26, A-20): class
 * HI consults [HI, MID, LO], MID [MID, LO], LO [LO], SYS [SYS]; same-bucket
 * deduction, min 1, delay, no floor.  SYS is charged but never held back.
 */
void bi_policy_priority(struct bi_policy *p, u8 cls)
{
	int i;

	*p = (struct bi_policy){
		.deduct = BI_DEDUCT_SAME,
		.action = BI_ACTION_DELAY,
		.min_tokens = 1,
		.floor_tokens = BI_NO_FLOOR,
	};
	if (cls == BI_CLASS_SYS || cls >= BI_NR_CLASSES) {
		p->nr_buckets = 1;
		p->bucket[0] = BI_CLASS_SYS;
		p->min_tokens = BI_MIN_TOKENS_NEVER;
		return;
	}
	for (i = cls; i < BI_NR_CLASSES; i++)
		p->bucket[p->nr_buckets++] = i;
}

static s64 policy_min(const struct bi_policy *p, s64 initial)
{
	return p->min_tokens == BI_MIN_TOKENS_AUTO ? initial : p->min_tokens;
}

/*
 * A bucket never holds more than its capacity: a minimum above it (a bio
 * dearer than the burst under min_tokens=auto) waits for a full bucket and
 * takes the rest as debt, which the class's next bios wait for.
 */
static s64 bucket_min(const struct bi_bucket *b, s64 min)
{
	return bi_min_s64(min, bi_max_s64(b->max_tokens, 1));
}

/*
 * Charge @amount along the ticket's chain starting at position @pos: every
 * bucket but the last gives only what it holds above the spill threshold, the
 * last takes the rest down to the floor (S1-15).  A same-mode ticket has a
 * chain of one.
 */
static void chain_charge(struct bi_bucket *cls, struct bi_ticket *t, s64 amount,
			 u64 now_ns)
{
	int pos;

	for (pos = 0; pos < t->nr && amount > 0; pos++) {
		struct bi_bucket *b = &cls[t->chain[pos]];
		s64 take = amount;

		if (pos < t->nr - 1) {
			bi_bucket_refill(b, now_ns);
			take = bi_min_s64(amount, bi_max_s64(b->tokens -
					  BI_SPILL_THRESHOLD_TOKENS, 0));
			if (!take)
				continue;
		}
		bi_bucket_charge(b, take, t->floor_tokens, now_ns);
		t->charged[pos] += take;
		amount -= take;
	}
}

/* Refund @amount, last-charged bucket first (it went furthest into debt). */
static void chain_refund(struct bi_bucket *cls, struct bi_ticket *t, s64 amount,
			 u64 now_ns)
{
	int pos;

	for (pos = t->nr - 1; pos >= 0 && amount > 0; pos--) {
		s64 give = bi_min_s64(amount, t->charged[pos]);

		if (give <= 0)
			continue;
		bi_bucket_refund(&cls[t->chain[pos]], give, now_ns);
		t->charged[pos] -= give;
		amount -= give;
	}
}

/*
 * bi_admit - admit a bio of class policy @p against the tenant's class
 * buckets @cls[BI_NR_CLASSES], deducting @initial (S0-24) on admission.
 * Buckets are consulted in policy order; the first holding >= min admits
 * .  On BI_VERDICT_ADMIT, @t records the charge for the completion.
 * Context: submission (process) or the dispatcher's work item; tenant lock.
 */
enum bi_verdict bi_admit(struct bi_bucket *cls, const struct bi_policy *p,
			 s64 initial, u64 now_ns, struct bi_ticket *t)
{
	s64 min = policy_min(p, initial);
	int i, j;

	*t = (struct bi_ticket){ .floor_tokens = p->floor_tokens,
				 .deduct = p->deduct };
	for (i = 0; i < p->nr_buckets; i++) {
		if (!bi_bucket_admissible(&cls[p->bucket[i]],
					  bucket_min(&cls[p->bucket[i]], min), now_ns))
			continue;
		if (p->deduct == BI_DEDUCT_SPILL)
			for (j = i; j < p->nr_buckets; j++)
				t->chain[t->nr++] = p->bucket[j];
		else
			t->chain[t->nr++] = p->bucket[i];
		chain_charge(cls, t, bi_max_s64(initial, 0), now_ns);
		return BI_VERDICT_ADMIT;
	}
	return p->action == BI_ACTION_REJECT ? BI_VERDICT_REJECT : BI_VERDICT_DELAY;
}

/* bi_ticket_total - what the bio has been charged so far. */
s64 bi_ticket_total(const struct bi_ticket *t)
{
	s64 sum = 0;
	int pos;

	for (pos = 0; pos < t->nr; pos++)
		sum += t->charged[pos];
	return sum;
}

/*
 * bi_ticket_correct - completion correction (S0-25): charge or refund the
 * difference between @actual and what the bio has been charged, along the
 * ticket's chain, unless inside the dead-band.  Returns the correction
 * (> 0 charged, < 0 refunded).  Context: completion (hard IRQ possible);
 * tenant lock.
 */
s64 bi_ticket_correct(struct bi_bucket *cls, struct bi_ticket *t, s64 actual,
		      const struct bi_deadband *db, u64 now_ns)
{
	s64 total = bi_ticket_total(t);
	s64 diff = bi_min_s64(bi_max_s64(actual, 0), BI_TOKENS_LIMIT) - total;

	if (!t->nr || !diff || bi_deadband_skip(db, total, diff))
		return 0;
	if (diff > 0)
		chain_charge(cls, t, diff, now_ns);
	else
		chain_refund(cls, t, -diff, now_ns);
	return diff;
}

/*
 * bi_admit_ready_at_ns - earliest time a bio of policy @p becomes admissible
 * with no other charges: the earliest over the policy's buckets.  U64_MAX if
 * none ever will.  Context: dispatcher (timer arming); tenant lock.
 */
u64 bi_admit_ready_at_ns(struct bi_bucket *cls, const struct bi_policy *p,
			 s64 initial, u64 now_ns)
{
	s64 min = policy_min(p, initial);
	u64 t = U64_MAX;
	int i;

	for (i = 0; i < p->nr_buckets; i++)
		t = bi_min_u64(t, bi_bucket_ready_at_ns(&cls[p->bucket[i]],
							 bucket_min(&cls[p->bucket[i]], min),
							 now_ns));
	return t;
}
