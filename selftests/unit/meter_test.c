// SPDX-License-Identifier: GPL-2.0
/*
 * meter_test.c - a tenant's admission through its throttle keys (meter.c):
 * caps hold over simulated time, io.max-style caps combine, refusals leave
 * nothing charged, system-class bios are never held back, completions
 * correct the charge.
 */
#include <string.h>

#include "meter.h"
#include "kselftest_harness.h"

#define NS	BI_NSEC_PER_SEC

struct rig {
	struct bi_tenant_conf conf;
	struct bi_dev_conf dev;
	struct bi_meter m;
	struct bi_meter_cpu cpu;
};

static int rig_init(struct rig *r, const char *line)
{
	bi_dev_conf_init(&r->dev);
	bi_meter_init(&r->m, 0);
	bi_meter_init_cpu(&r->cpu, 0);
	if (bi_conf_parse(&r->conf, line, strlen(line), NULL))
		return -1;
	bi_meter_configure(&r->m, &r->conf, &r->dev, 0);
	return 0;
}

static struct bi_io io_of(u8 op, u64 bytes, u8 flags)
{
	return (struct bi_io){ .op = op, .bytes = bytes, .flags = flags,
			       .prio_class = BI_PRIO_BE };
}

/*
 * Local buckets take whole batches (local_max, dispense.c min_batch), so a
 * run may end with up to one batch not yet handed out: lower bounds allow
 * one batch less.  riops=1000: capacity 50, batch 50; runits=10000: 500 and
 * 128; runits=5000: 250 and 128; riops=100: 5 and 5.
 */

/*
 * A closed loop at queue depth 1: a bio is offered as soon as the previous
 * one was admitted and completed; a refused bio is retried at the time the
 * meter names.  Returns the bios admitted in [0, secs).
 */
static u64 run_qd1(struct rig *r, struct bi_io io, u64 secs)
{
	u64 now = 0, end = secs * NS, n = 0, retry;
	struct bi_charge ch;

	while (now < end) {
		bi_meter_classify(&r->m, &io, &ch);
		if (bi_meter_admit(&r->m, &r->cpu, &ch, now, &retry)) {
			bi_meter_complete(&r->m, &r->cpu, &ch, now);
			n++;
		} else {
			now = retry > now ? retry : now + 1;
		}
	}
	return n;
}

TEST(uncapped_tenant_is_never_charged)
{
	struct rig r;
	struct bi_io io = io_of(BI_OP_READ, 4096, 0);
	struct bi_charge ch;
	u64 retry;
	int i;

	ASSERT_EQ(0, rig_init(&r, "wiops=10"));
	EXPECT_FALSE(bi_meter_capped(&r.m, BI_DIR_READ));
	EXPECT_TRUE(bi_meter_capped(&r.m, BI_DIR_WRITE));
	for (i = 0; i < 100000; i++) {
		bi_meter_classify(&r.m, &io, &ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
		ASSERT_EQ(0, ch.keys);
	}
}

TEST(riops_holds_over_ten_seconds)
{
	struct rig r;

	ASSERT_EQ(0, rig_init(&r, "riops=1000"));
	/* 10 s at 1000/s plus the starting burst (5% = 50), +1, -one batch */
	u64 n = run_qd1(&r, io_of(BI_OP_READ, 4096, 0), 10);

	EXPECT_LE(n, 10000 + 50 + 1);
	EXPECT_GE(n, 10000 + 50 - 50);
}

TEST(runits_hold_at_every_block_size)
{
	static const u64 sizes[] = { 4096, 65536, 1 << 20 };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		struct rig r;
		u64 units = sizes[i] / 2048, n;

		ASSERT_EQ(0, rig_init(&r, "runits=10000 initial=exact"));
		n = run_qd1(&r, io_of(BI_OP_READ, sizes[i], 0), 10);
		/* 100,000 units + 500 of burst, within one bio */
		EXPECT_LE(n * units, 100000 + 500 + units) TH_LOG("bs %llu", (unsigned long long)sizes[i]);
		EXPECT_GE(n * units + units, 100000 + 500 - 128 - units);
	}
}

TEST(bytes_cap_becomes_units_and_tighter_cap_wins)
{
	struct rig r;
	u64 n;

	/* rbps 20M = 10240 units/s; runits 5000 is tighter */
	ASSERT_EQ(0, rig_init(&r, "rbps=20M runits=5000 initial=exact"));
	n = run_qd1(&r, io_of(BI_OP_READ, 65536, 0), 10);
	EXPECT_LE(n * 32, 50000 + 250 + 32);
	EXPECT_GE(n * 32 + 32, 50000 + 250 - 128 - 32);
	/* riops=100 beats a generous unit cap */
	ASSERT_EQ(0, rig_init(&r, "riops=100 runits=100000"));
	n = run_qd1(&r, io_of(BI_OP_READ, 4096, 0), 10);
	EXPECT_LE(n, 1000 + 5 + 1);
	EXPECT_GE(n, 1000 + 5 - 5);
}

TEST(refused_admission_charges_nothing)
{
	struct rig r;
	struct bi_io io = io_of(BI_OP_READ, 65536, 0);
	struct bi_charge ch;
	u64 retry = 0, now = 0;
	s64 before;
	int i;

	/* The unit key would admit; the request key (burst 3) refuses the 4th. */
	ASSERT_EQ(0, rig_init(&r, "riops=10 runits=100000 initial=exact"));
	for (i = 0; i < 3; i++) {
		bi_meter_classify(&r.m, &io, &ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, now, &retry));
	}
	before = r.cpu.local[BI_KEY_RUNITS].tokens + r.m.key[BI_KEY_RUNITS].b.tokens;
	bi_meter_classify(&r.m, &io, &ch);
	ASSERT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, now, &retry));
	EXPECT_EQ(0, ch.keys);
	EXPECT_EQ(before, r.cpu.local[BI_KEY_RUNITS].tokens + r.m.key[BI_KEY_RUNITS].b.tokens);
	/* The retry time is when the request key has a token again: 100 ms. */
	EXPECT_GT(retry, now);
	EXPECT_LE(retry, now + NS / 10 + 1);
}

TEST(system_class_is_charged_but_never_held)
{
	struct rig r;
	struct bi_io data = io_of(BI_OP_WRITE, 4096, 0);
	struct bi_io fua = io_of(BI_OP_WRITE, 4096, BI_IO_FUA);
	struct bi_charge ch;
	u64 retry;

	ASSERT_EQ(0, rig_init(&r, "wiops=10"));
	while (1) {
		bi_meter_classify(&r.m, &data, &ch);
		if (!bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry))
			break;
	}
	bi_meter_classify(&r.m, &fua, &ch);
	ASSERT_EQ(BI_CLASS_SYS, ch.cls);
	bi_meter_force(&r.m, &r.cpu, &ch, 0);
	EXPECT_EQ(1U << BI_KEY_WREQS, ch.keys);
	EXPECT_EQ(1, ch.initial[BI_KEY_WREQS]);
}

TEST(initial_one_is_corrected_at_completion)
{
	struct rig r;
	struct bi_io io = io_of(BI_OP_WRITE, 1 << 20, 0);
	struct bi_charge ch;
	u64 retry;
	s64 before, after;

	ASSERT_EQ(0, rig_init(&r, "wunits=100000"));
	before = r.cpu.local[BI_KEY_WUNITS].tokens + r.m.key[BI_KEY_WUNITS].b.tokens;
	bi_meter_classify(&r.m, &io, &ch);
	ASSERT_EQ(512ULL, ch.units);
	ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	EXPECT_EQ(1, ch.initial[BI_KEY_WUNITS]);
	bi_meter_complete(&r.m, &r.cpu, &ch, 0);
	after = r.cpu.local[BI_KEY_WUNITS].tokens + r.m.key[BI_KEY_WUNITS].b.tokens;
	EXPECT_EQ(before - 512, after);
}

TEST(retune_keeps_balance_and_new_rate_applies)
{
	struct rig r;
	u64 n;

	ASSERT_EQ(0, rig_init(&r, "riops=1000"));
	n = run_qd1(&r, io_of(BI_OP_READ, 4096, 0), 1);
	EXPECT_GE(n, 1050ULL - 50);
	ASSERT_EQ(0, bi_conf_merge(&r.conf, "riops=200", 9, NULL));
	bi_meter_configure(&r.m, &r.conf, &r.dev, 0);
	EXPECT_EQ(200ULL, r.m.key[BI_KEY_RREQS].b.rate);
}

TEST_HARNESS_MAIN
