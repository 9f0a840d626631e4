/* SPDX-License-Identifier: GPL-2.0 */
/*
 * classify.h - which class a bio belongs to (S1-12, S1-17, S1-18, A-17,
 *
 *
 * One locked rule comes first and cannot be changed: flushes and bios with
 * FUA, PREFLUSH or META go to BI_CLASS_SYS, which is charged but never
 * delayed, so filesystem journals are not priority-inverted.  Then a
 * small ordered table of tenant rules over (op, size band, sync flag, ioprio
 * class) is searched, first match wins; no match gives the default class.
 * The rules are part of the tenant configuration (grammar keys r0..r7 and
 * rdef, doc/grammar.md), so operators can change them at run time.
 *
 * Default table (why: latency-sensitive I/O is high, bulk I/O is low):
 *   r0  RT ioprio                        -> HI
 *   r1  IDLE ioprio                      -> LO
 *   r2  sync read of at most 64 KiB      -> HI
 *   r3  any bio of at least 512 KiB      -> LO
 *   otherwise                            -> MID
 */
#ifndef BLKISO_CLASSIFY_H
#define BLKISO_CLASSIFY_H

#include "bi_shim.h"
#include "io.h"
#include "policy.h"

#define BI_NR_RULES		8

/* Sync condition of a rule. */
enum bi_rule_sync {
	BI_RULE_SYNC_ANY,
	BI_RULE_SYNC_ONLY,	/* "sync": BI_IO_SYNC set */
	BI_RULE_ASYNC_ONLY,	/* "async": BI_IO_SYNC clear */
};

/* Largest size-band bound: bios are at most 4 GiB (bi_size is 32 bits). */
#define BI_RULE_BYTES_MAX	(1ULL << 32)
#define BI_RULE_OPEN_MAX	U64_MAX		/* band without an upper bound */

/* Ops a rule can name (flushes never reach the table: they are SYS). */
#define BI_RULE_OPS_ALL	((1U << BI_OP_READ) | (1U << BI_OP_WRITE) | \
			 (1U << BI_OP_DISCARD) | (1U << BI_OP_WRITE_ZEROES) | \
			 (1U << BI_OP_OTHER))
/* ioprio classes a rule can name; "be" also matches IOPRIO_CLASS_NONE. */
#define BI_RULE_PRIOS_ALL	((1U << BI_PRIO_RT) | (1U << BI_PRIO_BE) | \
				 (1U << BI_PRIO_IDLE))

/*
 * One rule.  All its conditions must hold; within one condition the listed
 * values are alternatives (op_mask = read|write matches either).  A mask of
 * 0 means "any" (the grammar stores a full mask as 0).  The size band is
 * inclusive at both ends.
 */
struct bi_class_rule {
	u8 used;		/* 0: empty slot, never matches */
	u8 class;		/* enum bi_class: HI, MID or LO (never SYS) */
	u8 op_mask;		/* 1 << enum bi_op; 0 = any */
	u8 prio_mask;		/* 1 << enum bi_prio_class; 0 = any */
	u8 sync;		/* enum bi_rule_sync */
	u64 min_bytes;		/* 0 = no lower bound */
	u64 max_bytes;		/* BI_RULE_OPEN_MAX = no upper bound */
};

struct bi_rules {
	struct bi_class_rule rule[BI_NR_RULES];
	u8 default_class;	/* enum bi_class when no rule matches */
};

/*
 * Concurrency contract: bi_classify() and bi_rule_matches() read *rules
 * only and may run in any context (submission, or re-evaluation from the
 * dispatch work item); the caller guarantees *rules is not rewritten during
 * the call (the glue publishes a new configuration by RCU or under the
 * tenant lock).  The *_default() helpers write only their output and are
 * called with it privately owned.
 */
void bi_rules_default(struct bi_rules *rules);
void bi_rule_default(u32 index, struct bi_class_rule *rule);
bool bi_rule_matches(const struct bi_class_rule *rule, const struct bi_io *io);

/*
 * The locked rule: flushes and FUA/PREFLUSH/META bios are charged to
 * SYS and never delayed, and so are the writes the kernel waits on
 * (BI_IO_KERNEL_WAITS).  Not configurable, so no tenant rule can route
 * journal writes, or the data a journal commit waits for, behind bulk I/O
 * (S1-17 "locked defaults").
 */
static inline bool bi_io_is_sys(const struct bi_io *io)
{
	return io->op == BI_OP_FLUSH ||
	       (io->flags & (BI_IO_FUA | BI_IO_PREFLUSH | BI_IO_META |
			     BI_IO_KERNEL_WAITS));
}

enum bi_class bi_classify(const struct bi_rules *rules, const struct bi_io *io);
void bi_policy_default(enum bi_class class, struct bi_policy *policy);
u8 bi_io_rank(const struct bi_io *io);

#endif /* BLKISO_CLASSIFY_H */
