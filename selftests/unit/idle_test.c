// SPDX-License-Identifier: GPL-2.0
/*
 * idle_test.c - an idle tenant costs nothing and needs no timer (S4-04):
 * the core keeps no deadline that something periodic must serve.  With the
 * injected clock, a tenant left without a single call for a second, an
 * hour or a month is, at its next bio, exactly where the refill formula
 * puts it: a full burst and not one bio more, then the rate.
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

/* 4 KiB reads offered at @now until one is refused: admitted, and *@retry. */
static u64 burst(struct rig *r, u64 now, u64 *retry)
{
	struct bi_io io = { .op = BI_OP_READ, .bytes = 4096, .prio_class = BI_PRIO_BE };
	struct bi_charge ch;
	u64 n = 0;

	for (;;) {
		bi_meter_classify(&r->m, &io, &ch);
		if (!bi_meter_admit(&r->m, &r->cpu, &ch, now, retry))
			return n;
		bi_meter_complete(&r->m, &r->cpu, &ch, now);
		if (++n > 1000000)
			return n;
	}
}

/*
 * riops=100: the request bucket holds 5 (burst_limit auto = max(3, 5 %)),
 * a token every 10 ms, and the CPU's local bucket takes batches of 1.
 * runits=1000 with whole-cost admission: 50 units (50 ms), a 4 KiB read
 * costs 2 units, batches of 12 units (a quarter of the capacity; dispense.c)
 * refill in 12 ms.  After an idle gap of 1 s, 1 h or 30 days: the burst
 * exactly, then a refusal whose retry is one batch away, then bios at the
 * rate within one batch, and all of it identical whatever the gap.
 */
TEST(s4_04_no_idle_timers)
{
	static const struct { const char *line; u64 burst, retry_ns, rate, batch; } c[] = {
		{ "riops=100", 5, NS / 100, 100, 1 },
		{ "runits=1000 initial=exact", 25, 12 * NS / 1000, 500, 6 },
	};
	static const u64 gap[] = { NS, 3600 * NS, 30 * 86400 * NS };
	unsigned int i, g;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		u64 first_n = 0, first_wait = 0, first_rate = 0;

		for (g = 0; g < sizeof(gap) / sizeof(gap[0]); g++) {
			u64 retry, t, n, got, wait;
			struct rig r;

			ASSERT_EQ(0, rig_init(&r, c[i].line));
			burst(&r, 0, &retry);		/* drained at 0 */
			/* nothing at all until gap[g]: no tick, no reclaim */
			t = gap[g];
			got = burst(&r, t, &retry);
			wait = retry - t;
			EXPECT_EQ(c[i].burst, got) TH_LOG("%s, idle %llu s", c[i].line,
							(unsigned long long)(t / NS));
			EXPECT_LT(0ULL, wait);
			EXPECT_GE(c[i].retry_ns, wait) TH_LOG("%s", c[i].line);
			/* then the rate: one second of retries */
			for (n = 0; t < gap[g] + NS; ) {
				n += burst(&r, t, &retry);
				t = retry > t ? retry : t + 1;
			}
			EXPECT_LE(c[i].rate - c[i].batch, n) TH_LOG("%s", c[i].line);
			EXPECT_GE(c[i].rate + c[i].batch, n) TH_LOG("%s", c[i].line);
			if (!g) {
				first_n = got;
				first_wait = wait;
				first_rate = n;
				continue;
			}
			/* the length of the idle time changes nothing */
			EXPECT_EQ(first_n, got);
			EXPECT_EQ(first_wait, wait);
			EXPECT_EQ(first_rate, n);
		}
	}
}

TEST_HARNESS_MAIN
