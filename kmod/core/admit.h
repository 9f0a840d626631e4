/* SPDX-License-Identifier: GPL-2.0 */
/*
 * admit.h - admission over a tenant's class buckets: class policies
 * (seed 001 S1-12..S1-18, S1-25, S1-27, A-19, A-20).  Nested cgroups are
 * charged level by level in meter.c (bi_meter_admit_chain).
 *
 * Class policies: a tenant owns BI_NR_CLASSES buckets; a struct bi_policy
 * lists, in consult order, the buckets that may admit a bio of that class.
 * The first with tokens >= min admits; the charge goes to that bucket
 * (BI_DEDUCT_SAME) or spills from it down the rest of the list
 * (BI_DEDUCT_SPILL).  The bio's struct bi_ticket remembers which buckets were
 * charged and by how much, so the completion correction is right even if the
 * policy was edited in between (S1-25).
 *
 * Concurrency (every function): the caller holds the lock that serialises
 * the buckets involved (the meter's class lock).  Submission (process
 * context) and completion (hard IRQ) both call in here, so the kernel lock is
 * taken with irqsave.  Nothing sleeps or allocates.
 */
#ifndef BLKISO_ADMIT_H
#define BLKISO_ADMIT_H

#include "bi_shim.h"
#include "bucket.h"
#include "policy.h"

/* policy.min_tokens value meaning "the current initial deduction" (S0-30). */
#define BI_MIN_TOKENS_AUTO	S64_MAX
/* policy.min_tokens of a class that is charged but never held back. */
#define BI_MIN_TOKENS_NEVER	S64_MIN

enum bi_verdict {
	BI_VERDICT_ADMIT,
	BI_VERDICT_DELAY,	/* park; retry at bi_admit_ready_at_ns() */
	BI_VERDICT_REJECT,	/* policy action reject (S1-27) */
};

/* Per-bio record of a class-policy charge (lives in per_io_data). */
struct bi_ticket {
	s64 charged[BI_POLICY_MAX_BUCKETS];	/* per chain position */
	s64 floor_tokens;
	u8 chain[BI_POLICY_MAX_BUCKETS];	/* enum bi_class, admitting first */
	u8 nr;					/* 0 = not admitted */
	u8 deduct;				/* enum bi_deduct_mode */
};

bool bi_policy_valid(const struct bi_policy *p);
void bi_policy_priority(struct bi_policy *p, u8 cls);
enum bi_verdict bi_admit(struct bi_bucket *cls, const struct bi_policy *p,
			 s64 initial, u64 now_ns, struct bi_ticket *t);
s64 bi_ticket_total(const struct bi_ticket *t);
s64 bi_ticket_correct(struct bi_bucket *cls, struct bi_ticket *t, s64 actual,
		      const struct bi_deadband *db, u64 now_ns);
u64 bi_admit_ready_at_ns(struct bi_bucket *cls, const struct bi_policy *p,
			 s64 initial, u64 now_ns);

#endif /* BLKISO_ADMIT_H */
