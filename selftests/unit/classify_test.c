// SPDX-License-Identifier: GPL-2.0
/*
 * classify_test.c - bio classification and admittance policies
 * (kmod/core/classify.c, conf.c): S1-12, S1-13, S1-17, S1-18, A-17, A-20,
 * Rules are set through the grammar, as an operator would.
 */
#include <string.h>
#include "classify.h"
#include "conf.h"
#include "kselftest_harness.h"

#define KiB	1024ULL
#define MiB	(1024ULL * 1024)

static struct bi_io mkio(u8 op, u64 bytes, u8 flags, u8 prio)
{
	struct bi_io io = {
		.bytes = bytes, .op = op, .flags = flags, .prio_class = prio,
	};

	return io;
}

static enum bi_class cls(const struct bi_tenant_conf *c, u8 op, u64 bytes,
			 u8 flags, u8 prio)
{
	struct bi_io io = mkio(op, bytes, flags, prio);

	return bi_classify(&c->rules, &io);
}

static int tparse(struct bi_tenant_conf *c, const char *line)
{
	struct bi_parse_err err;
	int rc = bi_conf_parse(c, line, strlen(line), &err);

	if (rc)
		fprintf(stderr, "parse '%s': %s\n", line, err.msg);
	return rc;
}

/* flush, FUA, PREFLUSH, META and kernel-waited writes are SYS whatever the rules say. */
TEST(a_17_sys_is_locked)
{
	struct bi_tenant_conf c;
	struct bi_parse_err err;

	bi_tenant_conf_init(&c);
	ASSERT_EQ(0, tparse(&c, "r0=lo r1=lo rdef=lo"));
	ASSERT_EQ(BI_CLASS_SYS, cls(&c, BI_OP_FLUSH, 0, 0, BI_PRIO_IDLE));
	ASSERT_EQ(BI_CLASS_SYS, cls(&c, BI_OP_WRITE, 4 * KiB, BI_IO_FUA, BI_PRIO_BE));
	ASSERT_EQ(BI_CLASS_SYS, cls(&c, BI_OP_WRITE, 1 * MiB, BI_IO_PREFLUSH, BI_PRIO_IDLE));
	ASSERT_EQ(BI_CLASS_SYS, cls(&c, BI_OP_READ, 4 * KiB, BI_IO_META, BI_PRIO_RT));
	ASSERT_EQ(BI_CLASS_LO, cls(&c, BI_OP_WRITE, 4 * KiB, BI_IO_SYNC, BI_PRIO_RT));
	/* a write the kernel waits on (jbd2's ordered data, swap) */
	ASSERT_EQ(BI_CLASS_SYS, cls(&c, BI_OP_WRITE, 64 * KiB,
				    BI_IO_SYNC | BI_IO_KERNEL_WAITS, BI_PRIO_IDLE));
	/* No rule may target SYS, and the SYS policy cannot be edited (-EPERM). */
	ASSERT_EQ(-BI_EINVAL, bi_conf_merge(&c, "r2=sys", 6, &err));
	ASSERT_EQ(BI_PE_BAD_RULE, err.code);
	ASSERT_EQ(-BI_EPERM, bi_conf_merge(&c, "sys.policy=hi", 13, &err));
	ASSERT_EQ(BI_PE_LOCKED, err.code);
	ASSERT_EQ(-BI_EPERM, bi_conf_merge(&c, "sys.action=reject", 17, &err));
	ASSERT_EQ(-BI_EINVAL, bi_conf_merge(&c, "rdef=sys", 8, &err));
}

/* The documented default table. */
TEST(default_rules)
{
	struct bi_tenant_conf c;

	bi_tenant_conf_init(&c);
	/* r0: RT -> HI, even for a 1 MiB async write */
	ASSERT_EQ(BI_CLASS_HI, cls(&c, BI_OP_WRITE, 1 * MiB, 0, BI_PRIO_RT));
	/* r1: IDLE -> LO, even for a small sync read */
	ASSERT_EQ(BI_CLASS_LO, cls(&c, BI_OP_READ, 4 * KiB, BI_IO_SYNC, BI_PRIO_IDLE));
	/* r2: sync reads <= 64 KiB -> HI; NONE counts as BE */
	ASSERT_EQ(BI_CLASS_HI, cls(&c, BI_OP_READ, 4 * KiB, BI_IO_SYNC, BI_PRIO_BE));
	ASSERT_EQ(BI_CLASS_HI, cls(&c, BI_OP_READ, 64 * KiB, BI_IO_SYNC, BI_PRIO_NONE));
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_READ, 64 * KiB + 1, BI_IO_SYNC, BI_PRIO_BE));
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_READ, 4 * KiB, 0, BI_PRIO_BE));
	/* r3: >= 512 KiB -> LO */
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_WRITE, 512 * KiB - 1, 0, BI_PRIO_BE));
	ASSERT_EQ(BI_CLASS_LO, cls(&c, BI_OP_WRITE, 512 * KiB, 0, BI_PRIO_BE));
	ASSERT_EQ(BI_CLASS_LO, cls(&c, BI_OP_READ, 1 * MiB, BI_IO_SYNC, BI_PRIO_NONE));
	/* rest -> MID */
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_WRITE, 4 * KiB, BI_IO_SYNC, BI_PRIO_BE));
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_DISCARD, 0, 0, BI_PRIO_NONE));
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_OTHER, 0, 0, BI_PRIO_NONE));
	/* out-of-range op/prio values are handled as OTHER / BE, no UB */
	ASSERT_EQ(BI_CLASS_MID, cls(&c, 200, 4 * KiB, 0, 77));
}

/* bi_rules_default() sets every field itself (the meter's rules before a line). */
TEST(rules_default_from_garbage)
{
	struct bi_rules r;
	struct bi_io io = mkio(BI_OP_WRITE, 4 * KiB, 0, BI_PRIO_BE);
	unsigned int i;

	memset(&r, 0xa5, sizeof(r));
	bi_rules_default(&r);
	ASSERT_EQ(BI_CLASS_MID, r.default_class);
	for (i = 4; i < BI_NR_RULES; i++)
		ASSERT_FALSE(r.rule[i].used);
	ASSERT_EQ(BI_CLASS_MID, bi_classify(&r, &io));
	io = mkio(BI_OP_READ, 4 * KiB, BI_IO_SYNC, BI_PRIO_BE);
	ASSERT_EQ(BI_CLASS_HI, bi_classify(&r, &io));
}

/*
 * S1-17 (d): rules "write -> class 2, read >= 256 KiB -> class 3, else 1",
 * 20 synthetic bios.  Class ids 1, 2, 3 are HI, MID, LO.
 */
TEST(s1_17_rule_table)
{
	static const struct {
		u8 op;
		u64 bytes;
		u8 flags, prio;
		enum bi_class want;
	} bios[20] = {
		{ BI_OP_WRITE, 4 * KiB, 0, BI_PRIO_BE, BI_CLASS_MID },
		{ BI_OP_WRITE, 1 * MiB, 0, BI_PRIO_BE, BI_CLASS_MID },
		{ BI_OP_WRITE, 0, 0, BI_PRIO_RT, BI_CLASS_MID },
		{ BI_OP_WRITE, 256 * KiB, BI_IO_SYNC, BI_PRIO_IDLE, BI_CLASS_MID },
		{ BI_OP_WRITE, 4 * KiB, BI_IO_FUA, BI_PRIO_BE, BI_CLASS_SYS },
		{ BI_OP_READ, 4 * KiB, 0, BI_PRIO_BE, BI_CLASS_HI },
		{ BI_OP_READ, 256 * KiB - 1, 0, BI_PRIO_BE, BI_CLASS_HI },
		{ BI_OP_READ, 256 * KiB, 0, BI_PRIO_BE, BI_CLASS_LO },
		{ BI_OP_READ, 1 * MiB, BI_IO_SYNC, BI_PRIO_RT, BI_CLASS_LO },
		{ BI_OP_READ, 4 * MiB, 0, BI_PRIO_IDLE, BI_CLASS_LO },
		{ BI_OP_READ, 0, 0, BI_PRIO_NONE, BI_CLASS_HI },
		{ BI_OP_READ, 512, BI_IO_SYNC, BI_PRIO_RT, BI_CLASS_HI },
		{ BI_OP_READ, 64 * KiB, BI_IO_META, BI_PRIO_BE, BI_CLASS_SYS },
		{ BI_OP_DISCARD, 1 * MiB, 0, BI_PRIO_BE, BI_CLASS_HI },
		{ BI_OP_WRITE_ZEROES, 1 * MiB, 0, BI_PRIO_BE, BI_CLASS_HI },
		{ BI_OP_FLUSH, 0, 0, BI_PRIO_BE, BI_CLASS_SYS },
		{ BI_OP_OTHER, 0, 0, BI_PRIO_BE, BI_CLASS_HI },
		{ BI_OP_READ, 300 * KiB, 0, BI_PRIO_BE, BI_CLASS_LO },
		{ BI_OP_WRITE, 8 * KiB, BI_IO_PREFLUSH, BI_PRIO_BE, BI_CLASS_SYS },
		{ BI_OP_READ, 128 * KiB, BI_IO_SYNC, BI_PRIO_IDLE, BI_CLASS_HI },
	};
	struct bi_tenant_conf c;
	u32 i;

	bi_tenant_conf_init(&c);
	ASSERT_EQ(0, tparse(&c, "r0=mid:write r1=lo:read,256K- r2=none r3=none rdef=hi"));
	for (i = 0; i < 20; i++) {
		EXPECT_EQ(bios[i].want, cls(&c, bios[i].op, bios[i].bytes,
					    bios[i].flags, bios[i].prio)) {
			TH_LOG("bio %u", i);
		}
	}
}

/* Rule conditions: alternatives within a kind, conjunction across kinds. */
TEST(rule_conditions)
{
	struct bi_tenant_conf c;

	bi_tenant_conf_init(&c);
	ASSERT_EQ(0, tparse(&c, "r0=hi:read,discard,async,be,idle,4K-8K r1=none r2=none r3=none"));
	ASSERT_EQ(BI_CLASS_HI, cls(&c, BI_OP_READ, 4 * KiB, 0, BI_PRIO_BE));
	ASSERT_EQ(BI_CLASS_HI, cls(&c, BI_OP_DISCARD, 8 * KiB, 0, BI_PRIO_IDLE));
	ASSERT_EQ(BI_CLASS_HI, cls(&c, BI_OP_READ, 6 * KiB, 0, BI_PRIO_NONE));
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_WRITE, 4 * KiB, 0, BI_PRIO_BE));	/* op */
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_READ, 4 * KiB, BI_IO_SYNC, BI_PRIO_BE)); /* sync */
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_READ, 4 * KiB, 0, BI_PRIO_RT));	/* prio */
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_READ, 4 * KiB - 1, 0, BI_PRIO_BE)); /* band */
	ASSERT_EQ(BI_CLASS_MID, cls(&c, BI_OP_READ, 8 * KiB + 1, 0, BI_PRIO_BE));
	/* first match wins */
	ASSERT_EQ(0, tparse(&c, "r0=lo:write r1=hi:write"));
	ASSERT_EQ(BI_CLASS_LO, cls(&c, BI_OP_WRITE, 4 * KiB, 0, BI_PRIO_RT));
	/* listing every op is the same as listing none */
	ASSERT_EQ(0, tparse(&c, "r5=hi:read,write,discard,wzero,other"));
	ASSERT_EQ(0, c.rules.rule[5].op_mask);
	ASSERT_EQ(0, tparse(&c, "r5=hi:rt,be,idle"));
	ASSERT_EQ(0, c.rules.rule[5].prio_mask);
}

/* A-20 / S1-12: default admittance policies. */
TEST(a_20_default_policies)
{
	struct bi_policy p;

	bi_policy_default(BI_CLASS_HI, &p);
	ASSERT_EQ(3, p.nr_buckets);
	ASSERT_EQ(BI_CLASS_HI, p.bucket[0]);
	ASSERT_EQ(BI_CLASS_MID, p.bucket[1]);
	ASSERT_EQ(BI_CLASS_LO, p.bucket[2]);
	ASSERT_EQ(BI_DEDUCT_SAME, p.deduct);
	ASSERT_EQ(BI_ACTION_DELAY, p.action);
	ASSERT_EQ(1, p.min_tokens);
	ASSERT_EQ(BI_NO_FLOOR, p.floor_tokens);
	bi_policy_default(BI_CLASS_MID, &p);
	ASSERT_EQ(2, p.nr_buckets);
	ASSERT_EQ(BI_CLASS_MID, p.bucket[0]);
	ASSERT_EQ(BI_CLASS_LO, p.bucket[1]);
	bi_policy_default(BI_CLASS_LO, &p);
	ASSERT_EQ(1, p.nr_buckets);
	ASSERT_EQ(BI_CLASS_LO, p.bucket[0]);
	bi_policy_default(BI_CLASS_SYS, &p);
	ASSERT_EQ(1, p.nr_buckets);
	ASSERT_EQ(BI_CLASS_SYS, p.bucket[0]);
}

/* S1-13/S1-18: a policy set through the grammar resolves to struct bi_policy. */
TEST(s1_18_policy_from_conf)
{
	struct bi_tenant_conf c;
	struct bi_policy p;

	bi_tenant_conf_init(&c);
	bi_conf_policy(&c, BI_CLASS_MID, 7, &p);
	ASSERT_EQ(2, p.nr_buckets);
	ASSERT_EQ(7, p.min_tokens);	/* min_tokens=auto: the initial deduction */
	/* class B of S1-13: admitted via X or Y -> "lo,mid", spill (S1-15) */
	ASSERT_EQ(0, tparse(&c, "min_tokens=-100 floor=-200 mid.policy=lo,mid mid.deduct=spill "
			    "mid.min=0 lo.floor=-150 lo.action=reject"));
	bi_conf_policy(&c, BI_CLASS_MID, 0, &p);
	ASSERT_EQ(2, p.nr_buckets);
	ASSERT_EQ(BI_CLASS_LO, p.bucket[0]);
	ASSERT_EQ(BI_CLASS_MID, p.bucket[1]);
	ASSERT_EQ(BI_DEDUCT_SPILL, p.deduct);
	ASSERT_EQ(0, p.min_tokens);
	ASSERT_EQ(-200, p.floor_tokens);		/* inherited */
	bi_conf_policy(&c, BI_CLASS_LO, 0, &p);
	ASSERT_EQ(-100, p.min_tokens);			/* inherited */
	ASSERT_EQ(-150, p.floor_tokens);
	ASSERT_EQ(BI_ACTION_REJECT, p.action);
	bi_conf_policy(&c, BI_CLASS_SYS, 0, &p);	/* fixed, min/floor inherited */
	ASSERT_EQ(BI_CLASS_SYS, p.bucket[0]);
	ASSERT_EQ(BI_ACTION_DELAY, p.action);
	ASSERT_EQ(-100, p.min_tokens);
	/* S0-30: min_tokens=auto takes the caller's current initial deduction */
	ASSERT_EQ(0, tparse(&c, "min_tokens=auto"));
	bi_conf_policy(&c, BI_CLASS_HI, 32, &p);
	ASSERT_EQ(32, p.min_tokens);
	ASSERT_EQ(BI_NO_FLOOR, p.floor_tokens);
	/* a list shorter than the class's default: hi consults hi alone */
	ASSERT_EQ(0, tparse(&c, "hi.policy=hi"));
	bi_conf_policy(&c, BI_CLASS_HI, 0, &p);
	ASSERT_EQ(1, p.nr_buckets);
	ASSERT_EQ(BI_CLASS_HI, p.bucket[0]);
}

/* S1-18 (d): a policy "file" loads, and its dump is identical. */
TEST(s1_18_policy_dump_identical)
{
	static const char policy[] =
		"riops=max wiops=max rbps=max wbps=max runits=max wunits=max "
		"min_tokens=0 hi.units=300 hi.policy=hi,lo hi.deduct=spill hi.min=-100 "
		"mid.units=200 mid.policy=lo,mid mid.action=reject lo.units=100 "
		"lo.floor=-1000 rdef=lo r1=none r3=lo:read,write,1048576- "
		"r4=hi:write,sync,-4096";
	struct bi_tenant_conf c;
	char out[BI_CONF_LINE_MAX];

	bi_tenant_conf_init(&c);
	ASSERT_EQ(0, tparse(&c, policy));
	ASSERT_EQ((int)strlen(policy), bi_conf_format(&c, out, sizeof(out)));
	ASSERT_STREQ(policy, out);
}

/* rank from ioprio (RT 1, BE/NONE 2, IDLE 3) and the prio= override (S2-16). */
TEST(a_25_rank)
{
	struct bi_tenant_conf c;
	struct bi_io io = mkio(BI_OP_READ, 4096, 0, BI_PRIO_RT);

	bi_tenant_conf_init(&c);
	ASSERT_EQ(1, bi_conf_rank(&c, &io));
	io.prio_class = BI_PRIO_BE;
	ASSERT_EQ(2, bi_conf_rank(&c, &io));
	io.prio_class = BI_PRIO_NONE;
	ASSERT_EQ(2, bi_conf_rank(&c, &io));
	io.prio_class = BI_PRIO_IDLE;
	ASSERT_EQ(3, bi_conf_rank(&c, &io));
	ASSERT_EQ(0, tparse(&c, "prio=1"));
	ASSERT_EQ(1, bi_conf_rank(&c, &io));
}

TEST_HARNESS_MAIN
