/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy.h - classes and their admittance policies (seed 001, S1-12..S1-18).
 *
 * Every bio is classified into one of a fixed set of classes.  Each class
 * has an admittance policy: an ordered list of the tenant's class buckets to
 * consult, how to deduct (from the admitting bucket, or spilling over the
 * list), the minimum tokens needed, and what to do when it cannot admit.
 * The classifier and the grammar fill these; the bucket engine applies them.
 */
#ifndef BLKISO_POLICY_H
#define BLKISO_POLICY_H

#include "bi_shim.h"

enum bi_class {
	BI_CLASS_SYS,		/* flush, FUA, PREFLUSH, META: charged, never delayed */
	BI_CLASS_HI,
	BI_CLASS_MID,
	BI_CLASS_LO,
	BI_NR_CLASSES,
};

/* A tenant has one bucket per class; a policy names them by enum bi_class. */
#define BI_POLICY_MAX_BUCKETS	BI_NR_CLASSES

enum bi_deduct_mode {
	BI_DEDUCT_SAME,		/* charge the whole cost to the bucket that admitted (A-19 strategy 1) */
	BI_DEDUCT_SPILL,	/* take what each bucket has, in order, rest from the last (strategy 2) */
};

enum bi_action {
	BI_ACTION_DELAY,	/* park the bio until it is admissible (default, A-18) */
	BI_ACTION_REJECT,	/* fail it (test reject mode; NOWAIT bios always get AGAIN) */
};

#define BI_NO_FLOOR	S64_MIN	/* no negative floor on a bucket's balance */

struct bi_policy {
	u8 nr_buckets;				/* 1..BI_POLICY_MAX_BUCKETS */
	u8 bucket[BI_POLICY_MAX_BUCKETS];	/* enum bi_class, in consult order */
	u8 deduct;				/* enum bi_deduct_mode */
	u8 action;				/* enum bi_action */
	s64 min_tokens;				/* admit iff tokens >= min; <= 0 lets it borrow */
	s64 floor_tokens;			/* balance never below this; BI_NO_FLOOR = none */
};

#endif /* BLKISO_POLICY_H */
