// SPDX-License-Identifier: GPL-2.0
/*
 * classify.c - bio -> class, and the default admittance policies (S1-12,
 * S1-17, S1-18, A-17, A-20).  The rule syntax lives in grammar.c; this file
 * only evaluates rules.
 */
#include "classify.h"

#define BI_DEFAULT_HI_READ_MAX_BYTES	(64ULL << 10)
#define BI_DEFAULT_LO_MIN_BYTES		(512ULL << 10)

/* Ranks of S2: high priority = low rank; RT 1, BE/NONE 2, IDLE 3. */
#define BI_RANK_RT	1
#define BI_RANK_BE	2
#define BI_RANK_IDLE	3

void bi_rule_default(u32 index, struct bi_class_rule *rule)
{
	bi_memzero(rule, sizeof(*rule));	/* padding too: confs are memcmp()ed */
	rule->max_bytes = BI_RULE_OPEN_MAX;

	switch (index) {
	case 0:		/* RT ioprio -> HI */
		rule->used = 1;
		rule->class = BI_CLASS_HI;
		rule->prio_mask = 1U << BI_PRIO_RT;
		break;
	case 1:		/* IDLE ioprio -> LO */
		rule->used = 1;
		rule->class = BI_CLASS_LO;
		rule->prio_mask = 1U << BI_PRIO_IDLE;
		break;
	case 2:		/* sync reads of at most 64 KiB -> HI */
		rule->used = 1;
		rule->class = BI_CLASS_HI;
		rule->op_mask = 1U << BI_OP_READ;
		rule->sync = BI_RULE_SYNC_ONLY;
		rule->max_bytes = BI_DEFAULT_HI_READ_MAX_BYTES;
		break;
	case 3:		/* bios of at least 512 KiB -> LO */
		rule->used = 1;
		rule->class = BI_CLASS_LO;
		rule->min_bytes = BI_DEFAULT_LO_MIN_BYTES;
		break;
	default:
		break;
	}
}

void bi_rules_default(struct bi_rules *rules)
{
	u32 i;

	for (i = 0; i < BI_NR_RULES; i++)
		bi_rule_default(i, &rules->rule[i]);
	rules->default_class = BI_CLASS_MID;
}

/* IOPRIO_CLASS_NONE means "derived from the task's nice", i.e. BE. */
static u8 bi_effective_prio(u8 prio_class)
{
	if (prio_class == BI_PRIO_RT || prio_class == BI_PRIO_IDLE)
		return prio_class;
	return BI_PRIO_BE;	/* NONE, BE, and out-of-range values */
}

bool bi_rule_matches(const struct bi_class_rule *rule, const struct bi_io *io)
{
	bool sync = io->flags & BI_IO_SYNC;
	u8 op = io->op < BI_NR_OPS ? io->op : BI_OP_OTHER;

	if (!rule->used)
		return false;
	if (rule->op_mask && !(rule->op_mask & (1U << op)))
		return false;
	if (rule->prio_mask &&
	    !(rule->prio_mask & (1U << bi_effective_prio(io->prio_class))))
		return false;
	if (rule->sync == BI_RULE_SYNC_ONLY && !sync)
		return false;
	if (rule->sync == BI_RULE_ASYNC_ONLY && sync)
		return false;
	return io->bytes >= rule->min_bytes && io->bytes <= rule->max_bytes;
}

enum bi_class bi_classify(const struct bi_rules *rules, const struct bi_io *io)
{
	u32 i;

	if (bi_io_is_sys(io))
		return BI_CLASS_SYS;
	for (i = 0; i < BI_NR_RULES; i++)
		if (bi_rule_matches(&rules->rule[i], io))
			return rules->rule[i].class;
	return rules->default_class;
}

/*
 * high may draw on all three buckets, medium on two, low on one
 * (S1-12); SYS only on its own.  Deduct from the admitting bucket (S1-14),
 * delay when short, admit at one token (S0-06), no floor.
 */
void bi_policy_default(enum bi_class class, struct bi_policy *policy)
{
	u32 i;

	bi_memzero(policy, sizeof(*policy));
	policy->deduct = BI_DEDUCT_SAME;
	policy->action = BI_ACTION_DELAY;
	policy->min_tokens = 1;
	policy->floor_tokens = BI_NO_FLOOR;
	if (class == BI_CLASS_SYS) {
		policy->nr_buckets = 1;
		policy->bucket[0] = BI_CLASS_SYS;
		return;
	}
	for (i = class; i < BI_NR_CLASSES; i++)
		policy->bucket[policy->nr_buckets++] = (u8)i;
}

/* Priority rank P of S2 for a bio; a tenant's prio= overrides it. */
u8 bi_io_rank(const struct bi_io *io)
{
	switch (bi_effective_prio(io->prio_class)) {
	case BI_PRIO_RT:
		return BI_RANK_RT;
	case BI_PRIO_IDLE:
		return BI_RANK_IDLE;
	default:
		return BI_RANK_BE;
	}
}
