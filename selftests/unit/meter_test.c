// SPDX-License-Identifier: GPL-2.0
/*
 * meter_test.c - a tenant's admission through its throttle keys (meter.c):
 * caps hold over simulated time, io.max-style caps combine, refusals leave
 * nothing charged, system-class bios are never held back, completions
 * correct the charge, an idle tenant needs no timer (S4-04).  Then the
 * class stage (seed 001) and chains of nested tenants (S1-19..S1-24): rates
 * hold, refusals at any stage or level change nothing, corrections land
 * where the charge went, and tokens are conserved along a chain under
 * random traffic.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "meter_rig.h"
#include "kselftest_harness.h"
#include "tokrng.h"

#define NS	BI_NSEC_PER_SEC

static struct bi_io io_of(u8 op, u64 bytes, u8 flags)
{
	return (struct bi_io){ .op = op, .bytes = bytes, .flags = flags,
			       .prio_class = BI_PRIO_BE };
}

/*
 * Local buckets take batches (min_batch: local_max, at most a quarter of
 * the capacity; dispense.c), so a run may end with up to one batch not yet
 * handed out: lower bounds allow one batch less.  riops=1000: capacity 50,
 * batch 12; runits=10000: 500 and 125; runits=5000: 250 and 62; riops=100:
 * 5 and 1.
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

/*
 * A closed loop at queue depth @qd whose retries come @late_ns after the
 * time the meter names (a dispatcher's timer and work item are never
 * exact); bios admitted per second go to @per_s[0..secs).
 */
static void run_late(struct rig *r, struct bi_io io, u64 secs, u64 late_ns,
		     u64 *per_s)
{
	u64 now = 0, end = secs * NS, retry;
	struct bi_charge ch;

	memset(per_s, 0, secs * sizeof(*per_s));
	while (now < end) {
		bi_meter_classify(&r->m, &io, &ch);
		if (bi_meter_admit(&r->m, &r->cpu, &ch, now, &retry)) {
			bi_meter_complete(&r->m, &r->cpu, &ch, now);
			per_s[now / NS]++;
		} else {
			now = (retry > now ? retry : now + 1) + late_ns;
		}
	}
}

/*
 * A waiting local bucket asks for at most a quarter of the capacity, so a
 * dispatcher that is late by 5 ms (a tenth of burst_ms) loses no rate, and
 * bios leave one by one rather than in batches: every 1 s window after the
 * first (the starting burst) holds the rate within one bio.  Before, the
 * batch was the whole capacity: 5 ms late dropped ~9 % at riops=1000, and
 * riops=10 (capacity 3) released bios three at a time (9 or 12 a second).
 */
TEST(late_retries_lose_no_rate_and_bios_leave_evenly)
{
	static const struct { const char *line; u64 bytes, rate; } c[] = {
		{ "riops=1000", 4096, 1000 },
		{ "riops=10", 4096, 10 },
		{ "mode=request riops=50", 65536, 50 },
		{ "runits=1600 initial=exact", 65536, 50 },
		{ "runits=10240 initial=exact", 1 << 20, 20 },
	};
	u64 per_s[10];
	unsigned int i, s;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct rig r;

		ASSERT_EQ(0, rig_init(&r, c[i].line));
		run_late(&r, io_of(BI_OP_READ, c[i].bytes, 0), 10, 5 * NS / 1000, per_s);
		for (s = 1; s < 10; s++) {
			TH_LOG("%s: second %u: %llu", c[i].line, s,
			       (unsigned long long)per_s[s]);
			EXPECT_LE(per_s[s] * 100, c[i].rate * 102 + 100);
			EXPECT_GE(per_s[s] * 100 + 100, c[i].rate * 98);
		}
	}
}

/* Offer @io at @now, retry 1 ms after each time named; when it passed. */
static u64 admit_waiting(struct rig *r, struct bi_io io, u64 now)
{
	struct bi_charge ch;
	u64 retry;

	bi_meter_classify(&r->m, &io, &ch);
	while (!bi_meter_admit(&r->m, &r->cpu, &ch, now, &retry))
		now = (retry > now ? retry : now + 1) + NS / 1000;
	bi_meter_complete(&r->m, &r->cpu, &ch, now);
	return now;
}

/*
 * The default (initial=exact) holds a bio until the bucket covers its whole
 * cost, io.max's way: from a full bucket (burst_ms=50 of the rate) a bio of
 * B bytes under a cap of R bytes/s passes after (B - burst) / R, and once
 * the burst is spent, B / R: a single 4 KiB bio too (3.9 ms at 1 MiB/s, not
 * a dispense batch's 12.5 ms: a bio alone waits for its own shortfall,
 * dispense.c), and 64 of them in a row.  Retries 1 ms late, as a
 * dispatcher's; +-2 % and that 1 ms.  With initial=1 the same 1 MiB bio
 * passes at once.
 */
TEST(default_waits_for_the_whole_cost)
{
	static const u64 size[] = { 4096, 1 << 20, 4 << 20 };
	u64 rate = 1 << 20, burst = rate / 20, late = NS / 1000;
	unsigned int i, j, k, n;

	for (i = 0; i < sizeof(size) / sizeof(size[0]); i++) {
		struct bi_io prime = io_of(BI_OP_WRITE, 1 << 20, 0);
		struct bi_io io = io_of(BI_OP_WRITE, size[i], 0);
		u64 now = 0, start, want;
		struct rig r;

		ASSERT_EQ(0, rig_init(&r, "wbps=1M"));
		/* k 0: from the full bucket; k 1, 2: after a 1 MiB bio spent it */
		for (k = 0; k < 3; k++) {
			n = k == 2 && size[i] < 65536 ? 64 : 1;
			if (k)
				now = admit_waiting(&r, prime, now);
			start = now;
			for (j = 0; j < n; j++)
				now = admit_waiting(&r, io, now);
			want = k ? n * size[i] * NS / rate :
			       (size[i] > burst ? (size[i] - burst) * NS / rate : 0);
			TH_LOG("%u x %llu bytes, %s: waited %llu us, want %llu us", n,
			       (unsigned long long)size[i], k ? "next" : "first",
			       (unsigned long long)(now - start) / 1000,
			       (unsigned long long)want / 1000);
			EXPECT_LE(now - start, want + want / 50 + late);
			EXPECT_GE(now - start + want / 50 + late, want);
		}
	}
	{
		struct bi_io io = io_of(BI_OP_WRITE, 1 << 20, 0);
		struct bi_charge ch;
		struct rig r;
		u64 retry;

		ASSERT_EQ(0, rig_init(&r, "wbps=1M initial=1"));
		bi_meter_classify(&r.m, &io, &ch);
		EXPECT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	}
}

/*
 * riops/wiops count the bios the lower device sees: a 1 MiB write the
 * lower queue splits into 256 (max_sectors_kb=4) costs 256 under wiops=256,
 * so from the full bucket (burst_limit auto: 12) it waits (256 - 12) / 256
 * s and the next one 1 s (+-2 % and a batch), as io.max on that device.
 */
TEST(request_keys_count_the_lower_devices_bios)
{
	struct bi_io io = io_of(BI_OP_WRITE, 1 << 20, 0);
	u64 now, t1;
	struct rig r;

	io.lower_bios = 256;
	ASSERT_EQ(0, rig_init(&r, "wiops=256"));
	now = admit_waiting(&r, io, 0);
	t1 = admit_waiting(&r, io, now);
	TH_LOG("first %llu us, next %llu us", (unsigned long long)now / 1000,
	       (unsigned long long)(t1 - now) / 1000);
	EXPECT_TRUE(now >= NS * 244 / 256 * 98 / 100 && now <= NS * 244 / 256 * 102 / 100 + NS / 80);
	EXPECT_TRUE(t1 - now >= NS * 98 / 100 && t1 - now <= NS * 102 / 100 + NS / 80);
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

/*
 * mode=request: the work cap is the rate controller's target, not a
 * bucket; the request key starts at C x b (S0-13) and follows
 * bi_meter_set_request_rate().
 */
TEST(request_mode_caps_requests_at_the_controllers_rate)
{
	struct rig r;
	u64 n;

	/* C = 10,000 units/s, b = 0.3: 3,000 requests/s, whatever the size */
	ASSERT_EQ(0, rig_init(&r, "runits=10000 mode=request"));
	EXPECT_FALSE(r.m.cfg->key_on & (1U << BI_KEY_RUNITS));
	EXPECT_TRUE(r.m.cfg->key_on & (1U << BI_KEY_RREQS));
	EXPECT_EQ(150, r.m.key[BI_KEY_RREQS].b.max_tokens);	/* 5 % of the cap */
	n = run_qd1(&r, io_of(BI_OP_READ, 1 << 20, 0), 10);
	/* 30,000 + a 5 % burst (150), within one local batch */
	EXPECT_LE(n, 30000 + 150 + 1);
	EXPECT_GE(n, 30000 + 150 - 300);
	/* the controller's cap: 100/s from now on */
	bi_meter_set_request_rate(&r.m, BI_DIR_READ, 100, 10 * NS);
	bi_meter_init_cpu(&r.cpu, 10 * NS);	/* drop this CPU's leftover batch */
	{
		u64 now = 10 * NS, end = 20 * NS, m = 0, retry;
		struct bi_io io = io_of(BI_OP_READ, 4096, 0);
		struct bi_charge ch;

		while (now < end) {
			bi_meter_classify(&r.m, &io, &ch);
			if (bi_meter_admit(&r.m, &r.cpu, &ch, now, &retry)) {
				bi_meter_complete(&r.m, &r.cpu, &ch, now);
				m++;
			} else {
				now = retry > now ? retry : now + 1;
			}
		}
		/* 10 s at 100/s, plus what the global bucket held (<= 150) */
		EXPECT_LE(m, 1000 + 150 + 1);
		EXPECT_GE(m, 1000 - 10);
	}
	/* a cap under one request a second still refills one a second */
	bi_meter_set_request_rate(&r.m, BI_DIR_READ, 0, 20 * NS);
	EXPECT_EQ(1ULL, r.m.key[BI_KEY_RREQS].b.rate);
	/* writes have no cap: no key at all */
	EXPECT_FALSE(bi_meter_capped(&r.m, BI_DIR_WRITE));
	/* so does the start: C x 0.3 of 3 units/s is under 1 request/s */
	ASSERT_EQ(0, rig_init(&r, "runits=3 mode=request"));
	EXPECT_EQ(1ULL, r.m.key[BI_KEY_RREQS].b.rate);
}

/*
 * mode=auto (S0-33): the meter configures the mechanism its selector chose
 * (auto_active, set by the tick): work keys until it picks request tokens,
 * then the request key at the request-mode start, and back.
 */
TEST(mode_auto_configures_the_selected_mechanism)
{
	struct rig r;

	ASSERT_EQ(0, rig_init(&r, "runits=10000 mode=auto"));
	EXPECT_TRUE(r.m.cfg->key_on & (1U << BI_KEY_RUNITS));
	EXPECT_FALSE(r.m.cfg->key_on & (1U << BI_KEY_RREQS));
	r.m.auto_active = BI_MODE_REQUEST;
	bi_meter_configure(&r.m, &r.conf, &r.dev, NS);
	EXPECT_FALSE(r.m.cfg->key_on & (1U << BI_KEY_RUNITS));
	EXPECT_TRUE(r.m.cfg->key_on & (1U << BI_KEY_RREQS));
	/* C = 10,000 units/s, b = 0.3: the request key starts at 3,000/s */
	EXPECT_EQ(3000ULL, r.m.key[BI_KEY_RREQS].b.rate);
	r.m.auto_active = BI_MODE_WORK;
	bi_meter_configure(&r.m, &r.conf, &r.dev, 2 * NS);
	EXPECT_TRUE(r.m.cfg->key_on & (1U << BI_KEY_RUNITS));
	EXPECT_FALSE(r.m.cfg->key_on & (1U << BI_KEY_RREQS));
	/* a configured mode wins over the selector's */
	ASSERT_EQ(0, rig_init(&r, "runits=10000 mode=work"));
	r.m.auto_active = BI_MODE_REQUEST;
	bi_meter_configure(&r.m, &r.conf, &r.dev, NS);
	EXPECT_TRUE(r.m.cfg->key_on & (1U << BI_KEY_RUNITS));
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
	struct bi_io meta = io_of(BI_OP_READ, 4096, BI_IO_META);
	struct bi_chain_charge cc;
	struct bi_charge ch;
	u64 retry;
	s64 tokens;

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
	EXPECT_EQ(1, bi_charge_initial(&ch, BI_KEY_WREQS));
	/* the one-level fast path (no class stage) forces it too */
	tokens = r.cpu.local[BI_KEY_WREQS].tokens + r.m.key[BI_KEY_WREQS].b.tokens;
	ASSERT_TRUE(bi_meter_admit_one(&r.m, &r.cpu, &fua, 2, &cc, 0, &retry));
	EXPECT_EQ(1, cc.depth);
	EXPECT_EQ(BI_CLASS_SYS, cc.lvl[0].cls);
	EXPECT_EQ(tokens - 1, r.cpu.local[BI_KEY_WREQS].tokens + r.m.key[BI_KEY_WREQS].b.tokens);
	/* a forced bio is charged the initial deduction in force (S0-24) */
	ASSERT_EQ(0, rig_init(&r, "wunits=1000 initial=fixed:64"));
	memset(&ch, 0, sizeof(ch));
	bi_meter_classify(&r.m, &fua, &ch);
	bi_meter_force(&r.m, &r.cpu, &ch, 0);
	EXPECT_EQ(1U << BI_KEY_WUNITS, ch.keys);
	EXPECT_EQ(64, bi_charge_initial(&ch, BI_KEY_WUNITS));
	EXPECT_EQ(64ULL, r.cpu.local[BI_KEY_WUNITS].charged);
	/* a forced read charges the read keys only, whatever the write keys hold */
	ASSERT_EQ(0, rig_init(&r, "runits=1000 wunits=1000 wiops=10"));
	memset(&ch, 0, sizeof(ch));
	bi_meter_classify(&r.m, &meta, &ch);
	bi_meter_force(&r.m, &r.cpu, &ch, 0);
	EXPECT_EQ(1U << BI_KEY_RUNITS, ch.keys);
	EXPECT_EQ(2ULL, r.cpu.local[BI_KEY_RUNITS].charged);
	EXPECT_EQ(0ULL, r.cpu.local[BI_KEY_WUNITS].charged);
	EXPECT_EQ(0ULL, r.cpu.local[BI_KEY_WREQS].charged);
}

TEST(initial_one_is_corrected_at_completion)
{
	struct rig r;
	struct bi_io io = io_of(BI_OP_WRITE, 1 << 20, 0);
	struct bi_charge ch;
	u64 retry;
	s64 before, after;

	ASSERT_EQ(0, rig_init(&r, "wunits=100000 initial=1"));
	before = r.cpu.local[BI_KEY_WUNITS].tokens + r.m.key[BI_KEY_WUNITS].b.tokens;
	bi_meter_classify(&r.m, &io, &ch);
	ASSERT_EQ(512ULL, ch.units);
	ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	EXPECT_EQ(1, bi_charge_initial(&ch, BI_KEY_WUNITS));
	bi_meter_complete(&r.m, &r.cpu, &ch, 0);
	after = r.cpu.local[BI_KEY_WUNITS].tokens + r.m.key[BI_KEY_WUNITS].b.tokens;
	EXPECT_EQ(before - 512, after);
}

/*
 * initial=ewma (S0-24, S0-29): bios are charged the tick's estimate of a
 * bio's units, starting at 1, and corrected at completion.  Ten 1 MiB
 * writes (512 units) in a tick move it to 512; a tick whose mean is
 * 17 % off (600) leaves it there under adapt_pct=25 and moves it under
 * adapt_pct=10.  initial=exact and initial=1 ignore the tick.
 */
TEST(initial_ewma_follows_the_tick)
{
	struct bi_io io = io_of(BI_OP_WRITE, 1 << 20, 0);
	struct bi_sample ten = { .n = 10, .units = 5120 };
	struct bi_sample off = { .n = 10, .units = 6000 };
	static const char *const line[] = { "wunits=100000 initial=ewma",
					    "wunits=100000 initial=ewma adapt_pct=10" };
	struct bi_charge ch;
	u64 retry;
	struct rig r;
	int i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rig_init(&r, line[i]));
		bi_meter_classify(&r.m, &io, &ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
		EXPECT_EQ(1, bi_charge_initial(&ch, BI_KEY_WUNITS));
		bi_meter_complete(&r.m, &r.cpu, &ch, 0);
		bi_meter_adapt_tick(&r.m, &ten);
		bi_meter_classify(&r.m, &io, &ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
		EXPECT_EQ(512, bi_charge_initial(&ch, BI_KEY_WUNITS));
		bi_meter_adapt_tick(&r.m, &off);
		EXPECT_EQ(i ? 600 : 512, r.m.ewma_init);
		/* a reconfiguration keeps the estimate */
		ASSERT_EQ(0, bi_conf_merge(&r.conf, "wunits=50000", 12, NULL));
		bi_meter_configure(&r.m, &r.conf, &r.dev, 0);
		EXPECT_EQ(i ? 600 : 512, r.m.ewma_init);
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rig_init(&r, i ? "wunits=100000 initial=1" : "wunits=100000"));
		bi_meter_adapt_tick(&r.m, &ten);
		bi_meter_classify(&r.m, &io, &ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
		EXPECT_EQ(i ? 1 : 512, bi_charge_initial(&ch, BI_KEY_WUNITS));
	}
}

/*
 * S4-04: an idle tenant costs nothing and needs no timer: the core keeps
 * no deadline that something periodic must serve.  With the injected
 * clock, a tenant left without a single call for a second, an hour or a
 * month is, at its next bio, exactly where the refill formula puts it: a
 * full burst and not one bio more, then the rate.
 */
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

/*
 * S0-31 at the meter: a cap changed at the instant the tenant is drained
 * keeps the drained balance (nothing passes at once), where a new key
 * would start full; and the one-level fast path (bi_meter_admit_one)
 * leaves its completion to bi_meter_complete_chain, which corrects it.
 */
TEST(retune_keeps_a_drained_balance_and_admit_one_completes)
{
	struct rig r;
	struct bi_chain_charge cc;
	struct bi_meter *mp;
	struct bi_meter_cpu *cp;
	struct bi_io io = io_of(BI_OP_WRITE, 1 << 20, 0);
	u64 retry;
	s64 before, after;

	ASSERT_EQ(0, rig_init(&r, "riops=1000"));
	ASSERT_LE(50ULL, burst(&r, 0, &retry));
	ASSERT_EQ(0, bi_conf_merge(&r.conf, "riops=20", 8, NULL));
	bi_meter_configure(&r.m, &r.conf, &r.dev, 0);
	EXPECT_EQ(0ULL, burst(&r, 0, &retry));
	/* past the 100 ms hold: 101 ms of 20/s, not a fresh burst of 3 */
	EXPECT_EQ(2ULL, burst(&r, 101 * BI_NSEC_PER_MSEC, &retry));

	ASSERT_EQ(0, rig_init(&r, "wunits=100000 initial=1"));
	mp = &r.m;
	cp = &r.cpu;
	before = r.cpu.local[BI_KEY_WUNITS].tokens + r.m.key[BI_KEY_WUNITS].b.tokens;
	ASSERT_TRUE(bi_meter_admit_one(&r.m, &r.cpu, &io, 512, &cc, 0, &retry));
	EXPECT_EQ(1, cc.depth);
	bi_meter_complete_chain(&mp, &cp, &cc, 0);
	after = r.cpu.local[BI_KEY_WUNITS].tokens + r.m.key[BI_KEY_WUNITS].b.tokens;
	EXPECT_EQ(before - 512, after);
	EXPECT_EQ(0, cc.depth);
}

/*
 * bi_chain_settled: .end_io skips the completion of a charge it says is
 * settled, so completing such a charge must change nothing (meter and
 * local buckets byte for byte); a bio charged 1 at admission (initial=1)
 * is not settled, and its completion does change the balance.
 */
TEST(a_settled_charge_completes_without_a_change)
{
	struct rig r;
	struct bi_chain_charge cc;
	struct bi_io rd = io_of(BI_OP_READ, 4096, 0);
	struct bi_io wr = io_of(BI_OP_WRITE, 1 << 20, 0);
	struct bi_meter m0;
	struct bi_meter_cpu cpu0;
	u64 retry;

	ASSERT_EQ(0, rig_init(&r, "riops=1000 runits=100000"));
	ASSERT_TRUE(bi_meter_admit_one(&r.m, &r.cpu, &rd, 1, &cc, 0, &retry));
	ASSERT_TRUE(bi_meter_admit_data_dir(&r.m, &r.cpu, 1, 1, &cc, 0, BI_DIR_READ));
	ASSERT_TRUE(bi_chain_settled(&cc));
	m0 = r.m;
	cpu0 = r.cpu;
	bi_meter_complete_fast(&r.m, &r.cpu, &cc.lvl[0], BI_NSEC_PER_MSEC);
	EXPECT_EQ(0, memcmp(&m0, &r.m, sizeof(m0)));
	EXPECT_EQ(0, memcmp(&cpu0, &r.cpu, sizeof(cpu0)));

	ASSERT_EQ(0, rig_init(&r, "wunits=100000 initial=1"));
	ASSERT_TRUE(bi_meter_admit_one(&r.m, &r.cpu, &wr, 512, &cc, 0, &retry));
	EXPECT_FALSE(bi_chain_settled(&cc));
	cpu0 = r.cpu;
	bi_meter_complete_fast(&r.m, &r.cpu, &cc.lvl[0], 0);
	EXPECT_EQ(cpu0.local[BI_KEY_WUNITS].tokens - 511,
		  r.cpu.local[BI_KEY_WUNITS].tokens);
}

/*
 * Issue 18: a direction whose charge is the plainest (both keys capped,
 * initial=exact, no class stage) is marked in the configuration's exact2,
 * and bi_meter_admit_exact() admits it as bi_meter_admit_data_dir() does:
 * the same answer and the same local buckets, byte for byte, over a random
 * run whose refusals both rigs then pass through the general admission;
 * the charge data_dir records is the settled one admit_exact stands for.
 * The same for one key (exact1, bi_meter_admit_exact1()): the work key
 * alone and the request key alone.
 */
TEST(an_exact_admission_is_the_data_dir_one)
{
	static const struct { const char *line; u8 exact2, r1, w1; } cfgs[] = {
		{ "riops=1000 runits=100000", 1U << BI_DIR_READ, 0, 0 },
		{ "riops=1000 runits=100000 wiops=10 wunits=100", 3, 0, 0 },
		{ "riops=1000 runits=100000 initial=1", 0, 0, 0 },
		{ "riops=1000 runits=100000 initial=fixed:4", 0, 0, 0 },
		{ "riops=1000", 0, 1U << BI_KEY_RREQS, 0 },
		{ "runits=1000", 0, 1U << BI_KEY_RUNITS, 0 },
		{ "riops=1000 wbps=1M", 0, 1U << BI_KEY_RREQS, 1U << BI_KEY_WUNITS },
		{ "riops=1000 runits=100 wiops=5", 1U << BI_DIR_READ, 0, 1U << BI_KEY_WREQS },
		{ "riops=1000 initial=1", 0, 0, 0 },
		{ "hi.units=2000 riops=100 runits=5000", 0, 0, 0 },
		{ "hi.units=2000 riops=100", 0, 0, 0 },
	};
	const u8 both = (1U << BI_KEY_RUNITS) | (1U << BI_KEY_RREQS);
	const struct { const char *line; u8 keys; } runs[] = {
		{ "riops=100000 runits=10000000", both },
		{ "runits=1000000", 1U << BI_KEY_RUNITS },
		{ "riops=80000", 1U << BI_KEY_RREQS },
	};
	struct bi_io rd = io_of(BI_OP_READ, 4096, 0);
	struct bi_chain_charge cc, cc2;
	u64 now, retry, seed = 18, n_ok, n_no;
	struct rig a, b;
	unsigned int i, j;

	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		ASSERT_EQ(0, rig_init(&a, cfgs[i].line));
		EXPECT_EQ(cfgs[i].exact2, bi_meter_cfg(&a.m)->exact2);
		EXPECT_EQ(cfgs[i].r1, bi_meter_cfg(&a.m)->exact1[BI_DIR_READ]);
		EXPECT_EQ(cfgs[i].w1, bi_meter_cfg(&a.m)->exact1[BI_DIR_WRITE]);
	}
	for (j = 0; j < sizeof(runs) / sizeof(runs[0]); j++) {
		ASSERT_EQ(0, rig_init(&a, runs[j].line));
		ASSERT_EQ(0, rig_init(&b, runs[j].line));
		now = n_ok = n_no = 0;
		for (i = 0; i < 20000; i++) {
			u32 units = (u32)tokrng_range(&seed, 1, 64);
			u32 reqs = (u32)tokrng_range(&seed, 1, 3);
			bool x, y;

			now += (u64)tokrng_range(&seed, 0, 40000);
			if (runs[j].keys == both)
				x = bi_meter_admit_exact(&a.cpu, units, reqs, now, BI_DIR_READ);
			else if (runs[j].keys == 1U << BI_KEY_RUNITS)
				x = bi_meter_admit_exact1(&a.cpu, BI_KEY_RUNITS, units, now);
			else
				x = bi_meter_admit_exact1(&a.cpu, BI_KEY_RREQS, reqs, now);
			y = bi_meter_admit_data_dir(&b.m, &b.cpu, units, reqs, &cc, now,
						    BI_DIR_READ);
			ASSERT_EQ(y, x);
			if (y) {
				n_ok++;
				ASSERT_TRUE(bi_chain_settled(&cc));
				EXPECT_EQ(units, cc.lvl[0].units);
				EXPECT_EQ((s64)units, cc.lvl[0].init);
				EXPECT_EQ(reqs, cc.lvl[0].reqs);
				EXPECT_EQ(runs[j].keys, cc.lvl[0].keys);
				EXPECT_EQ(BI_CLASS_MID, cc.lvl[0].cls);
			} else {
				n_no++;
				rd.bytes = (u64)units * 512;
				x = bi_meter_admit_one(&a.m, &a.cpu, &rd, units, &cc2, now, &retry);
				y = bi_meter_admit_one(&b.m, &b.cpu, &rd, units, &cc, now, &retry);
				ASSERT_EQ(y, x);
			}
			ASSERT_EQ(0, memcmp(&a.cpu, &b.cpu, sizeof(a.cpu)));
		}
		/* both ways were taken many times */
		EXPECT_GT(n_ok, 1000) TH_LOG("%s", runs[j].line);
		EXPECT_GT(n_no, 100) TH_LOG("%s", runs[j].line);
	}
}

/*
 * Issue 18: the configuration's precomputed capped bits and unit rounding
 * (.map reads them on every bio) say what the key bits, the class stage
 * and the cost model say, for every line and unit size, and for a meter
 * no line configured yet.
 */
static bool capped_by_keys(const struct bi_meter_cfg *c, u8 dir)
{
	u8 mask = dir == BI_DIR_READ ?
		(1U << BI_KEY_RUNITS) | (1U << BI_KEY_RREQS) :
		(1U << BI_KEY_WUNITS) | (1U << BI_KEY_WREQS);

	return (c->key_on & mask) || c->cls_on;
}

TEST(capped_bits_and_unit_rounding_follow_the_configuration)
{
	static const char *const lines[] = {
		"", "riops=10", "wiops=10", "runits=100", "wunits=100 riops=5",
		"hi.units=2000", "hi.units=2000 wiops=3", "rbps=1M wbps=1M",
	};
	static const u32 base[] = { 1, 512, 4096, 65536, 1U << 20, 0xfffffe00U };
	unsigned int i, shift, w, j, capped_seen = 0;
	const struct bi_meter_cfg *c;
	struct rig a;
	u8 dir;

	bi_meter_init(&a.m, 0);
	c = bi_meter_cfg(&a.m);
	for (dir = 0; dir <= BI_NR_DIRS; dir++)
		EXPECT_FALSE(bi_meter_cfg_capped(c, dir));
	EXPECT_EQ(bi_bio_data_units(&c->cost, false, 4097), bi_meter_cfg_data_units(c, false, 4097));
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		ASSERT_EQ(0, rig_init(&a, lines[i]));
		c = bi_meter_cfg(&a.m);
		/* any other bio (BI_NR_DIRS) is held as a write is */
		for (dir = 0; dir <= BI_NR_DIRS; dir++) {
			EXPECT_EQ(capped_by_keys(c, dir), bi_meter_cfg_capped(c, dir));
			capped_seen += bi_meter_cfg_capped(c, dir);
		}
	}
	EXPECT_GT(capped_seen, 8);
	for (shift = BI_UNIT_SHIFT_MIN; shift <= BI_UNIT_SHIFT_MAX; shift++) {
		for (w = 1; w <= 3; w += 2) {
			ASSERT_EQ(0, rig_init(&a, "riops=10"));
			a.dev.cost.unit_shift = shift;
			a.dev.cost.write_unit_weight = w;
			bi_meter_configure(&a.m, &a.conf, &a.dev, 0);
			c = bi_meter_cfg(&a.m);
			for (j = 0; j < sizeof(base) / sizeof(base[0]); j++) {
				u32 b = base[j];

				EXPECT_EQ(bi_bio_data_units(&c->cost, false, b),
					  bi_meter_cfg_data_units(c, false, b));
				EXPECT_EQ(bi_bio_data_units(&c->cost, true, b),
					  bi_meter_cfg_data_units(c, true, b));
				EXPECT_EQ(bi_bio_data_units(&c->cost, false, b + 1),
					  bi_meter_cfg_data_units(c, false, b + 1));
			}
		}
	}
}

/*
 * S0-25: a correction smaller than deadband units is skipped: a 1 MiB
 * write charged 1 at admission and 512 at completion with deadband=600
 * keeps only the 1; with deadband=511 the 511 more are charged.
 */
TEST(deadband_skips_small_corrections)
{
	static const struct { const char *line; s64 cost; } c[] = {
		{ "wunits=100000 initial=1 deadband=600", 1 },
		{ "wunits=100000 initial=1 deadband=511", 512 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct rig r;
		struct bi_io io = io_of(BI_OP_WRITE, 1 << 20, 0);
		struct bi_charge ch;
		u64 retry;
		s64 before, after;

		ASSERT_EQ(0, rig_init(&r, c[i].line));
		before = r.cpu.local[BI_KEY_WUNITS].tokens + r.m.key[BI_KEY_WUNITS].b.tokens;
		bi_meter_classify(&r.m, &io, &ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
		bi_meter_complete(&r.m, &r.cpu, &ch, 0);
		after = r.cpu.local[BI_KEY_WUNITS].tokens + r.m.key[BI_KEY_WUNITS].b.tokens;
		EXPECT_EQ(before - c[i].cost, after) TH_LOG("%s", c[i].line);
	}
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

/* ---- class stage (seed 001, S1-12..S1-18, A-19, A-20) ---- */

/* Bring every global and class bucket up to @now (test side, one thread). */
static void touch(struct bi_meter *m, u64 now)
{
	int i;

	for (i = 0; i < BI_NR_KEYS; i++)
		bi_bucket_refill(&m->key[i].b, now);
	for (i = 0; i < BI_NR_CLASSES; i++)
		bi_bucket_refill(&m->cls[i], now);
}

struct snap {
	s64 key[BI_NR_KEYS];
	s64 cls[BI_NR_CLASSES];
};

static void snap_take(struct snap *s, const struct bi_meter *m,
		      const struct bi_meter_cpu *cpu, int nr_cpus)
{
	int i, c;

	/* what an idle CPU gives back and the global drops counts as kept */
	for (i = 0; i < BI_NR_KEYS; i++) {
		s->key[i] = m->key[i].b.tokens + (s64)m->key[i].b.dropped;
		for (c = 0; c < nr_cpus; c++)
			s->key[i] += cpu[c].local[i].tokens;
	}
	for (i = 0; i < BI_NR_CLASSES; i++)
		s->cls[i] = m->cls[i].tokens;
}

static bool snap_equal(const struct snap *a, const struct snap *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/*
 * A bio the device never took (BLK_STS_AGAIN from below) gives back all it
 * was charged: class ticket and both keys, exactly.
 */
TEST(refund_gives_back_every_charge)
{
	struct rig r;
	struct bi_io rd = io_of(BI_OP_READ, 65536, BI_IO_SYNC);
	struct bi_charge ch;
	struct snap a, b;
	u64 retry;

	ASSERT_EQ(0, rig_init(&r, "hi.units=2000 riops=100 runits=5000"));
	bi_meter_classify(&r.m, &rd, &ch);
	ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	snap_take(&a, &r.m, &r.cpu, 1);
	bi_meter_classify(&r.m, &rd, &ch);
	ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	ASSERT_NE(0, ch.ticket.nr);
	snap_take(&b, &r.m, &r.cpu, 1);
	EXPECT_FALSE(snap_equal(&a, &b));
	bi_meter_refund(&r.m, &r.cpu, &ch, 0);
	snap_take(&b, &r.m, &r.cpu, 1);
	EXPECT_TRUE(snap_equal(&a, &b));
	EXPECT_EQ(0, ch.keys);
	EXPECT_EQ(0, ch.ticket.nr);
}

/*
 * Admit @io (completing each with @complete) until the meter refuses one;
 * returns how many it admitted, 100 if it never refused.
 */
static int admit_until_refused(struct rig *r, const struct bi_io *io, bool complete)
{
	struct bi_charge ch;
	u64 retry;
	int i;

	for (i = 0; i < 100; i++) {
		bi_meter_classify(&r->m, io, &ch);
		if (!bi_meter_admit(&r->m, &r->cpu, &ch, 0, &retry))
			break;
		if (complete)
			bi_meter_complete(&r->m, &r->cpu, &ch, 0);
	}
	return i;
}

/*
 * A refused admission gives back exactly what it took and nothing more,
 * whichever key refuses and whatever the charge record held before (the
 * kernel's record is on the stack, not zeroed): the work key refusing
 * first (runits drained), and the request key refusing after the work key
 * admitted (riops=10: a burst of 3).  Every key's tokens, global and
 * local, are what they were.
 */
TEST(a_refusal_gives_back_only_what_it_took)
{
	struct rig r;
	struct bi_io rd = io_of(BI_OP_READ, 65536, 0);
	struct bi_chain_charge cc;
	struct bi_charge ch;
	struct snap a, b;
	u64 retry;
	int i;

	ASSERT_EQ(0, rig_init(&r, "runits=10000"));
	ASSERT_LT(admit_until_refused(&r, &rd, true), 100);
	snap_take(&a, &r.m, &r.cpu, 1);
	memset(&cc, 0xff, sizeof(cc));
	cc.queue = false;
	ASSERT_FALSE(bi_meter_admit_one(&r.m, &r.cpu, &rd, 32, &cc, 0, &retry));
	snap_take(&b, &r.m, &r.cpu, 1);
	EXPECT_TRUE(snap_equal(&a, &b));
	EXPECT_EQ(0, cc.lvl[0].keys);
	bi_meter_classify(&r.m, &rd, &ch);
	ASSERT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	snap_take(&b, &r.m, &r.cpu, 1);
	EXPECT_TRUE(snap_equal(&a, &b));

	ASSERT_EQ(0, rig_init(&r, "riops=10 runits=100000"));
	for (i = 0; i < 3; i++) {
		bi_meter_classify(&r.m, &rd, &ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	}
	snap_take(&a, &r.m, &r.cpu, 1);
	bi_meter_classify(&r.m, &rd, &ch);
	ASSERT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	snap_take(&b, &r.m, &r.cpu, 1);
	EXPECT_TRUE(snap_equal(&a, &b));
}

/*
 * a key's local share is local_max_pct (6 %) of its capacity, but at
 * least two batches of 32 small (4 KiB) bios and at most the capacity; a
 * waiting local bucket's batch is that share, at most a quarter of the
 * capacity and at most a lump: 250 us of the rate or two batches of 32
 * small bios, the larger.  runits=10000: capacity 500 units, 6 % is 30,
 * two batches of 4 KiB (2 units) 128, a quarter 125: batch 125 (250 us is
 * 2); wunits=100000: 5000, 300, a lump 128 (250 us is 25); riops=1000:
 * capacity 50 (5 %), two batches 64 -> 50, a quarter 12; rbps=1600000000
 * (781,250 units/s): capacity 39,062, 6 % 2,343, a lump 195 (250 us: less
 * than one 1 MiB read, which waits for its own cost); wunits=4000000: a
 * lump of 1,000 (250 us); a batch is at least 1.
 */
TEST(a_36_local_share_of_each_key)
{
	struct rig r;

	ASSERT_EQ(0, rig_init(&r, "runits=10000 riops=1000"));
	EXPECT_EQ(128, r.m.key[BI_KEY_RUNITS].local_max);
	EXPECT_EQ(125, r.m.key[BI_KEY_RUNITS].min_batch);
	EXPECT_EQ(50, r.m.key[BI_KEY_RREQS].local_max);
	EXPECT_EQ(12, r.m.key[BI_KEY_RREQS].min_batch);
	ASSERT_EQ(0, rig_init(&r, "wunits=100000"));
	EXPECT_EQ(300, r.m.key[BI_KEY_WUNITS].local_max);
	EXPECT_EQ(128, r.m.key[BI_KEY_WUNITS].min_batch);
	ASSERT_EQ(0, rig_init(&r, "rbps=1600000000"));
	EXPECT_EQ(2343, r.m.key[BI_KEY_RUNITS].local_max);
	EXPECT_EQ(195, r.m.key[BI_KEY_RUNITS].min_batch);
	ASSERT_EQ(0, rig_init(&r, "wunits=4000000"));
	EXPECT_EQ(12000, r.m.key[BI_KEY_WUNITS].local_max);
	EXPECT_EQ(1000, r.m.key[BI_KEY_WUNITS].min_batch);
	/* riops=10: a burst of 3, the whole of it local; a quarter is 0: batches of 1 */
	ASSERT_EQ(0, rig_init(&r, "riops=10"));
	EXPECT_EQ(3, r.m.key[BI_KEY_RREQS].local_max);
	EXPECT_EQ(1, r.m.key[BI_KEY_RREQS].min_batch);
}

/*
 * A bio let through without asking (bi_meter_force: draining, debt) is
 * charged to its class even when the class stage would refuse it: the
 * class bucket goes into debt by the bio's cost and the ticket says so.
 */
TEST(a_forced_bio_is_charged_past_a_drained_class)
{
	struct rig r;
	struct bi_io rd = io_of(BI_OP_READ, 65536, BI_IO_SYNC);
	struct bi_charge ch;
	s64 before;

	ASSERT_EQ(0, rig_init(&r, "hi.units=2000 mid.units=2000 lo.units=2000"));
	ASSERT_LT(admit_until_refused(&r, &rd, false), 100);
	bi_meter_classify(&r.m, &rd, &ch);
	before = r.m.cls[ch.cls].tokens;
	bi_meter_force(&r.m, &r.cpu, &ch, 0);
	EXPECT_NE(0, ch.ticket.nr);
	EXPECT_EQ(before - 32, r.m.cls[ch.cls].tokens);
}

/*
 * A completion corrects the keys the bio was charged and no other: under
 * riops alone with initial=1, the work key (not capped) keeps its tokens
 * and its accounting (charged, refunded), which blkiso-sim and the fuzzers
 * check for conservation.
 */
TEST(a_completion_corrects_only_the_charged_keys)
{
	struct rig r;
	struct bi_io rd = io_of(BI_OP_READ, 65536, 0);
	struct bi_local w0;
	struct bi_charge ch;
	u64 retry;

	ASSERT_EQ(0, rig_init(&r, "riops=100 initial=1"));
	w0 = r.cpu.local[BI_KEY_RUNITS];
	bi_meter_classify(&r.m, &rd, &ch);
	ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	EXPECT_EQ(1U << BI_KEY_RREQS, ch.keys);
	bi_meter_complete(&r.m, &r.cpu, &ch, 0);
	EXPECT_EQ(w0.tokens, r.cpu.local[BI_KEY_RUNITS].tokens);
	EXPECT_EQ(w0.charged, r.cpu.local[BI_KEY_RUNITS].charged);
	EXPECT_EQ(w0.refunded, r.cpu.local[BI_KEY_RUNITS].refunded);
}

/*
 * bi_meter_admit_one() is bi_meter_admit_chain() for one level: from a
 * charge record full of garbage (the kernel's is on the stack), the same
 * verdict and the same record (depth, direction, class, units, requests,
 * initial, keys, flags, an empty ticket), and the same tokens taken.
 */
TEST(admit_one_fills_the_record_as_the_chain_does)
{
	struct bi_io wr = io_of(BI_OP_WRITE, 65536, 0);
	struct bi_chain_charge one, chain;
	struct bi_meter *mp;
	struct bi_meter_cpu *cp;
	struct rig a, b;
	struct bi_charge *x = &one.lvl[0], *y = &chain.lvl[0];
	u64 retry;

	ASSERT_EQ(0, rig_init(&a, "wunits=10000 wiops=100 initial=fixed:4"));
	ASSERT_EQ(0, rig_init(&b, "wunits=10000 wiops=100 initial=fixed:4"));
	memset(&one, 0xff, sizeof(one));
	memset(&chain, 0xff, sizeof(chain));
	one.queue = chain.queue = false;
	mp = &b.m;
	cp = &b.cpu;
	ASSERT_TRUE(bi_meter_admit_one(&a.m, &a.cpu, &wr, 32, &one, 0, &retry));
	ASSERT_TRUE(bi_meter_admit_chain(&mp, &cp, 1, &wr, &chain, 0, &retry));
	EXPECT_EQ(chain.depth, one.depth);
	EXPECT_EQ(y->dir, x->dir);
	EXPECT_EQ(BI_CLASS_MID, x->cls);
	EXPECT_EQ(y->cls, x->cls);
	EXPECT_EQ(y->units, x->units);
	EXPECT_EQ(y->reqs, x->reqs);
	EXPECT_EQ(y->init, x->init);
	EXPECT_EQ(4, x->init);
	EXPECT_EQ(y->keys, x->keys);
	EXPECT_EQ(y->flags, x->flags);
	EXPECT_EQ(0, x->ticket.nr);
	EXPECT_EQ(b.cpu.local[BI_KEY_WUNITS].charged, a.cpu.local[BI_KEY_WUNITS].charged);
	EXPECT_EQ(b.cpu.local[BI_KEY_WREQS].charged, a.cpu.local[BI_KEY_WREQS].charged);
}

TEST(class_policies_as_applied)
{
	struct rig r;
	struct bi_io io = io_of(BI_OP_READ, 4096, BI_IO_SYNC);
	struct bi_charge ch;
	u64 retry;

	/* no class rate: no class stage, the fast path as before */
	ASSERT_EQ(0, rig_init(&r, "runits=10000"));
	EXPECT_EQ(0, r.m.cfg->cls_on);
	bi_meter_classify(&r.m, &io, &ch);
	ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	EXPECT_EQ(0, ch.ticket.nr);
	/* hi and lo rated: HI consults [hi, lo] (unrated mid skipped), MID is free */
	ASSERT_EQ(0, rig_init(&r, "hi.units=2000 lo.units=5000"));
	EXPECT_EQ(1, r.m.cfg->cls_on);
	EXPECT_EQ((1U << BI_CLASS_HI) | (1U << BI_CLASS_LO), r.m.cls_rated);
	ASSERT_EQ(2, r.m.policy[BI_CLASS_HI].nr_buckets);
	EXPECT_EQ(BI_CLASS_HI, r.m.policy[BI_CLASS_HI].bucket[0]);
	EXPECT_EQ(BI_CLASS_LO, r.m.policy[BI_CLASS_HI].bucket[1]);
	EXPECT_EQ(0, r.m.policy[BI_CLASS_MID].nr_buckets);
	ASSERT_EQ(1, r.m.policy[BI_CLASS_LO].nr_buckets);
	EXPECT_EQ(0, r.m.policy[BI_CLASS_SYS].nr_buckets);
	EXPECT_EQ(100, r.m.cls[BI_CLASS_HI].max_tokens);	/* 50 ms of 2000/s */
	EXPECT_EQ(250, r.m.cls[BI_CLASS_LO].max_tokens);
	EXPECT_TRUE(bi_meter_capped(&r.m, BI_DIR_READ));
	/* a MID bio (128 KiB read) passes the class stage free */
	io = io_of(BI_OP_READ, 128 << 10, BI_IO_SYNC);
	bi_meter_classify(&r.m, &io, &ch);
	ASSERT_EQ(BI_CLASS_MID, ch.cls);
	ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	EXPECT_EQ(0, ch.ticket.nr);
	/* min_tokens=auto stays symbolic; SYS is never held back */
	ASSERT_EQ(0, rig_init(&r, "sys.units=10 mid.units=100 min_tokens=auto"));
	EXPECT_EQ(BI_MIN_TOKENS_AUTO, r.m.policy[BI_CLASS_MID].min_tokens);
	EXPECT_EQ(BI_MIN_TOKENS_NEVER, r.m.policy[BI_CLASS_SYS].min_tokens);
	/* hi.units alone caps HI: mid and lo have no rate to lend */
	ASSERT_EQ(0, rig_init(&r, "hi.units=2000 initial=exact"));
	ASSERT_EQ(1, r.m.policy[BI_CLASS_HI].nr_buckets);
	{
		u64 n = run_qd1(&r, io_of(BI_OP_READ, 4096, BI_IO_SYNC), 10);

		/* 20,000 units + 100 of burst, within one bio */
		EXPECT_LE(n * 2, 20000 + 100 + 2);
		EXPECT_GE(n * 2 + 2, 20000 + 100);
	}
}

TEST(system_class_bucket_charged_never_holds)
{
	struct rig r;
	struct bi_io fua = io_of(BI_OP_WRITE, 65536, BI_IO_FUA);
	struct bi_charge ch;
	u64 retry;
	int i;

	ASSERT_EQ(0, rig_init(&r, "sys.units=100 initial=exact"));
	/* capacity 5; 100 FUA bios of 32 units, all at t = 0 */
	for (i = 0; i < 100; i++) {
		bi_meter_classify(&r.m, &fua, &ch);
		ASSERT_EQ(BI_CLASS_SYS, ch.cls);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
		bi_meter_complete(&r.m, &r.cpu, &ch, 0);
	}
	EXPECT_EQ(5 - 100 * 32, r.m.cls[BI_CLASS_SYS].tokens);
	bi_meter_classify(&r.m, &fua, &ch);
	bi_meter_force(&r.m, &r.cpu, &ch, 0);
	EXPECT_EQ(5 - 101 * 32, r.m.cls[BI_CLASS_SYS].tokens);
}

/*
 * Seed 001 in one tenant: 4 KiB sync reads (HI) offered at their class rate
 * (2000 units/s = 1000 IOPS, jittered arrivals, FIFO backlog) while 1 MiB
 * writes (LO) flood at queue depth 1.  Reads keep >= 95 % of their rate,
 * writes get their bucket's rate: 10 s x 5000 units/s + 250 of burst,
 * within one bio (initial=1: a write is admitted on 1 token, then charged
 * its 512).
 */
TEST(class_hi_reads_keep_rate_under_lo_write_flood)
{
	struct rig r;
	struct bi_io rd = io_of(BI_OP_READ, 4096, BI_IO_SYNC);
	struct bi_io wr = io_of(BI_OP_WRITE, 1 << 20, 0);
	u64 end = 10 * NS, rnext = 0, rsched = 0, wnext = 0, retry;
	u64 nr = 0, nw = 0, offered = 0, seed = 42;
	struct bi_charge ch;

	ASSERT_EQ(0, rig_init(&r, "hi.units=2000 lo.units=5000"));
	while (1) {
		bool read = rnext <= wnext;
		u64 now = read ? rnext : wnext;

		if (now >= end)
			break;
		bi_meter_classify(&r.m, read ? &rd : &wr, &ch);
		ASSERT_EQ(read ? BI_CLASS_HI : BI_CLASS_LO, ch.cls);
		if (bi_meter_admit(&r.m, &r.cpu, &ch, now, &retry)) {
			ASSERT_NE(0, ch.ticket.nr);
			bi_meter_complete(&r.m, &r.cpu, &ch, now);
			if (read) {
				nr++;
				/* next arrival: uniform 0..2 ms, mean 1 ms */
				rsched += (u64)tokrng_range(&seed, 0, 2 * BI_NSEC_PER_MSEC);
				rnext = rsched > now ? rsched : now;
			} else {
				nw++;
			}
		} else if (read) {
			rnext = retry > now ? retry : now + 1;
		} else {
			wnext = retry > now ? retry : now + 1;
		}
	}
	for (offered = 0, seed = 42, rsched = 0; rsched < end; offered++)
		rsched += (u64)tokrng_range(&seed, 0, 2 * BI_NSEC_PER_MSEC);
	TH_LOG("reads %llu of %llu offered, writes %llu", (unsigned long long)nr,
	       (unsigned long long)offered, (unsigned long long)nw);
	EXPECT_GE(nr * 100, 95 * 10000ULL);
	EXPECT_LE(nr, offered);
	EXPECT_LE(nw * 512, 50000 + 250 + 512);
	EXPECT_GE(nw * 512 + 512, 50000 + 250);
}

/* A refusal by the class stage, or by a key after it, changes no bucket. */
/*
 * Class rates keep io.max's contract too: under the default initial=exact
 * (min_tokens=auto) a class bio waits until its class bucket covers its
 * whole cost, instead of passing on one token and borrowing the rest.
 * hi.units=2000 (capacity 100): 50 4 KiB sync reads spend the burst; the
 * next (2 units) waits 1 ms and leaves the bucket at 0, not below.  With
 * min_tokens=1 asked for, it passes after one token's 0.5 ms and borrows
 * 1: borrowing is there when it is asked for.
 */
TEST(class_bio_waits_for_its_whole_cost)
{
	struct bi_io rd = io_of(BI_OP_READ, 4096, BI_IO_SYNC);
	static const char *const line[] = { "hi.units=2000", "hi.units=2000 min_tokens=1" };
	const u64 want[] = { NS / 1000, NS / 2000 };
	const s64 left[] = { 0, -1 };
	struct bi_charge ch;
	u64 retry = 0;
	struct rig r;
	int i, j;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rig_init(&r, line[i]));
		for (j = 0; j < 50; j++) {
			bi_meter_classify(&r.m, &rd, &ch);
			ASSERT_EQ(BI_CLASS_HI, ch.cls);
			ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
		}
		EXPECT_EQ(0, r.m.cls[BI_CLASS_HI].tokens);
		bi_meter_classify(&r.m, &rd, &ch);
		ASSERT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
		EXPECT_EQ(want[i], retry);
		bi_meter_classify(&r.m, &rd, &ch);
		EXPECT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, want[i] - 1, &retry));
		bi_meter_classify(&r.m, &rd, &ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, want[i], &retry));
		EXPECT_EQ(left[i], r.m.cls[BI_CLASS_HI].tokens);
	}
}

TEST(class_refusal_leaves_every_bucket_unchanged)
{
	struct rig r;
	struct bi_io wr = io_of(BI_OP_WRITE, 1 << 20, 0);
	struct bi_io rd = io_of(BI_OP_READ, 4096, BI_IO_SYNC);
	struct bi_chain_charge cc = { .queue = false };
	struct bi_charge ch;
	struct snap a, b;
	u64 retry = 0, now = 0, ready;
	int i;

	ASSERT_EQ(0, rig_init(&r, "hi.units=2000 lo.units=5000 wunits=100000 initial=exact"));
	bi_meter_classify(&r.m, &wr, &ch);
	ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, now, &retry));
	EXPECT_EQ(250 - 512, r.m.cls[BI_CLASS_LO].tokens);
	snap_take(&a, &r.m, &r.cpu, 1);
	bi_meter_classify(&r.m, &wr, &ch);
	ASSERT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, now, &retry));
	snap_take(&b, &r.m, &r.cpu, 1);
	EXPECT_TRUE(snap_equal(&a, &b));
	EXPECT_EQ(0, ch.ticket.nr);
	EXPECT_EQ(0, ch.keys);
	EXPECT_EQ(0, ch.flags & BI_CHARGE_REJECT);
	/*
	 * retry: when LO covers the bio (min_tokens=auto under exact), capped
	 * at its capacity: 250 tokens again, 512 tokens at 5000/s
	 */
	ready = bi_bucket_ready_at_ns(&r.m.cls[BI_CLASS_LO], 250, now);
	EXPECT_EQ(ready, retry);
	EXPECT_EQ(512 * NS / 5000, retry);
	bi_meter_classify(&r.m, &wr, &ch);
	EXPECT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, retry - 1, &now));
	bi_meter_classify(&r.m, &wr, &ch);
	EXPECT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, retry, &now));

	/* class stage admits, the request key (burst 3) refuses: undone */
	ASSERT_EQ(0, rig_init(&r, "hi.units=2000 riops=10 initial=exact"));
	for (i = 0; i < 3; i++) {
		bi_meter_classify(&r.m, &rd, &ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	}
	EXPECT_EQ(100 - 3 * 2, r.m.cls[BI_CLASS_HI].tokens);
	snap_take(&a, &r.m, &r.cpu, 1);
	bi_meter_classify(&r.m, &rd, &ch);
	ASSERT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	snap_take(&b, &r.m, &r.cpu, 1);
	EXPECT_TRUE(snap_equal(&a, &b));
	EXPECT_EQ(0, ch.ticket.nr);
	EXPECT_GT(retry, 0);
	EXPECT_LE(retry, NS / 10 + 1);

	/*
	 * A floor forgives part of a charge: HI at 0 with min 0 and floor -1
	 * admits a 2-unit bio but loses only 1; the undo gives back that 1.
	 */
	ASSERT_EQ(0, rig_init(&r, "hi.units=2000 hi.min=0 hi.floor=-1 riops=10 initial=exact"));
	for (i = 0; i < 3; i++) {
		bi_meter_classify(&r.m, &rd, &ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	}
	r.m.cls[BI_CLASS_HI].tokens = 0;
	snap_take(&a, &r.m, &r.cpu, 1);
	bi_meter_classify(&r.m, &rd, &ch);
	ASSERT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	snap_take(&b, &r.m, &r.cpu, 1);
	EXPECT_TRUE(snap_equal(&a, &b));
	EXPECT_EQ(0, r.m.cls[BI_CLASS_HI].tokens);

	/* action=reject says so (S1-27) */
	ASSERT_EQ(0, rig_init(&r, "lo.units=5000 lo.action=reject initial=exact"));
	bi_meter_classify(&r.m, &wr, &ch);
	ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	bi_meter_classify(&r.m, &wr, &ch);
	ASSERT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	EXPECT_EQ(BI_CHARGE_REJECT, ch.flags & BI_CHARGE_REJECT);
	/* the verdict is the bio's: classified again, refused by a cap, it waits */
	ASSERT_EQ(0, rig_init(&r, "wunits=10 initial=exact"));
	bi_meter_classify(&r.m, &wr, &ch);
	ASSERT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	EXPECT_EQ(0, ch.flags & BI_CHARGE_REJECT);
	/* the same through the module's one-level entry, the record reused */
	cc.lvl[0].flags = BI_CHARGE_REJECT;
	ASSERT_FALSE(bi_meter_admit_one(&r.m, &r.cpu, &wr, bi_io_units(&r.dev.cost, &wr),
					&cc, 0, &retry));
	EXPECT_EQ(0, cc.lvl[0].flags & BI_CHARGE_REJECT);
}

/*
 * initial=1: the completion charges the rest of the bio to the class bucket
 * that admitted it, even after the policy changed in flight (S1-25).
 */
TEST(class_correction_lands_on_admitting_bucket)
{
	struct rig r;
	struct bi_io rd = io_of(BI_OP_READ, 65536, BI_IO_SYNC);	/* HI, 32 units */
	struct bi_charge ch;
	u64 retry;
	int i;

	ASSERT_EQ(0, rig_init(&r, "hi.units=2000 lo.units=5000 initial=1"));
	/* 4 reads via HI: 100 -> 4 -> admitted on 4 -> -28 */
	for (i = 0; i < 4; i++) {
		bi_meter_classify(&r.m, &rd, &ch);
		ASSERT_EQ(BI_CLASS_HI, ch.cls);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
		ASSERT_EQ(1, ch.ticket.nr);
		ASSERT_EQ(BI_CLASS_HI, ch.ticket.chain[0]);
		EXPECT_EQ(1, ch.ticket.charged[0]);
		bi_meter_complete(&r.m, &r.cpu, &ch, 0);
	}
	EXPECT_EQ(100 - 4 * 32, r.m.cls[BI_CLASS_HI].tokens);
	EXPECT_EQ(250, r.m.cls[BI_CLASS_LO].tokens);
	/* HI is dry: the fifth is admitted via LO, charged 1 */
	bi_meter_classify(&r.m, &rd, &ch);
	ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	ASSERT_EQ(1, ch.ticket.nr);
	EXPECT_EQ(BI_CLASS_LO, ch.ticket.chain[0]);
	EXPECT_EQ(249, r.m.cls[BI_CLASS_LO].tokens);
	/* the policy changes in flight: HI may no longer use LO */
	ASSERT_EQ(0, bi_conf_merge(&r.conf, "hi.policy=hi", 12, NULL));
	bi_meter_configure(&r.m, &r.conf, &r.dev, 0);
	ASSERT_EQ(1, r.m.policy[BI_CLASS_HI].nr_buckets);
	bi_meter_complete(&r.m, &r.cpu, &ch, 0);
	EXPECT_EQ(250 - 32, r.m.cls[BI_CLASS_LO].tokens);
	EXPECT_EQ(100 - 4 * 32, r.m.cls[BI_CLASS_HI].tokens);
	EXPECT_EQ(0, ch.ticket.nr);
	/* and now HI bios wait for HI */
	bi_meter_classify(&r.m, &rd, &ch);
	EXPECT_FALSE(bi_meter_admit(&r.m, &r.cpu, &ch, 0, &retry));
	EXPECT_EQ(29 * NS / 2000, retry);
}

/* ---- hierarchy (S1-19..S1-24, A-21, A-22): io.max semantics ---- */

#define NR_SIM_CPUS	2

struct tnode {
	struct bi_tenant_conf conf;
	struct bi_meter m;
	struct bi_meter_cpu cpu[NR_SIM_CPUS];
};

static int tnode_init(struct tnode *t, const struct bi_dev_conf *dev, const char *line)
{
	int c;

	bi_meter_init(&t->m, 0);
	for (c = 0; c < NR_SIM_CPUS; c++)
		bi_meter_init_cpu(&t->cpu[c], 0);
	if (bi_conf_parse(&t->conf, line, strlen(line), NULL))
		return -1;
	bi_meter_configure(&t->m, &t->conf, dev, 0);
	return 0;
}

/* One stream of bios through a chain, innermost tenant first. */
struct drv {
	struct tnode *node[BI_METER_MAX_DEPTH];
	u8 depth;
	struct bi_io io;
	u64 period_ns;		/* open loop, one bio per period; 0 = flood */
	u64 lat_ns;		/* flood: device time per bio, queue depth 1 */
	u64 next_ns, sched_ns;
	u64 n, units;
};

static void drv_ptrs(struct drv *d, int cpu, struct bi_meter **m,
		     struct bi_meter_cpu **mc)
{
	int i;

	for (i = 0; i < d->depth; i++) {
		m[i] = &d->node[i]->m;
		mc[i] = &d->node[i]->cpu[cpu];
	}
}

/*
 * Run the streams on one CPU for @secs: the earliest stream goes next, ties
 * to the stream served the fewest units.  An admitted bio completes at
 * once; a flooding stream offers its next one lat_ns later (queue depth 1),
 * an open-loop stream at its next arrival, or at once if it has a backlog
 * (arrivals do not wait for completions).  A refused bio is retried when
 * the meter says.
 */
static void run_drivers(struct drv *d, int nd, u64 secs)
{
	struct bi_meter *m[BI_METER_MAX_DEPTH];
	struct bi_meter_cpu *mc[BI_METER_MAX_DEPTH];
	struct bi_chain_charge cc = { .queue = false };
	u64 end = secs * NS, retry;

	while (1) {
		int i, best = 0;
		u64 now;

		for (i = 1; i < nd; i++)
			if (d[i].next_ns < d[best].next_ns ||
			    (d[i].next_ns == d[best].next_ns && d[i].units < d[best].units))
				best = i;
		now = d[best].next_ns;
		if (now >= end)
			break;
		drv_ptrs(&d[best], 0, m, mc);
		if (bi_meter_admit_chain(m, mc, d[best].depth, &d[best].io, &cc, now, &retry)) {
			d[best].n++;
			d[best].units += cc.lvl[0].units;
			bi_meter_complete_chain(m, mc, &cc, now);
			d[best].next_ns = now + d[best].lat_ns;
			if (d[best].period_ns) {
				d[best].sched_ns += d[best].period_ns;
				if (d[best].sched_ns > d[best].next_ns)
					d[best].next_ns = d[best].sched_ns;
			}
		} else {
			d[best].next_ns = retry > now ? retry : now + 1;
		}
	}
}

static struct drv drv_of(struct tnode *child, struct tnode *parent, u64 bytes,
			 u64 period_ns)
{
	return (struct drv){ .node = { child, parent }, .depth = 2,
			     .io = io_of(BI_OP_READ, bytes, BI_IO_SYNC),
			     .period_ns = period_ns,
			     .lat_ns = period_ns ? 0 : 50 * BI_NSEC_PER_USEC };
}

/*
 * S1-24 with io.max semantics: parent runits=10000 over children A and B
 * with no caps of their own.  A offers 1000 units/s (4 KiB every 2 ms) and
 * gets it; B floods and gets the rest, 9000 units/s; both flood and the
 * parent still holds 10,000 units/s.  +-5 % over 10 s.
 */
TEST(s1_24_siblings_share_the_parent)
{
	struct bi_dev_conf dev;
	struct tnode *p = calloc(3, sizeof(*p)), *a = p + 1, *b = p + 2;
	struct drv d[2];
	u64 total;

	ASSERT_NE(NULL, p);
	bi_dev_conf_init(&dev);
	ASSERT_EQ(0, tnode_init(p, &dev, "runits=10000"));
	ASSERT_EQ(0, tnode_init(a, &dev, ""));
	ASSERT_EQ(0, tnode_init(b, &dev, ""));
	d[0] = drv_of(a, p, 4096, 2 * BI_NSEC_PER_MSEC);
	d[1] = drv_of(b, p, 65536, 0);
	run_drivers(d, 2, 10);
	TH_LOG("A %llu units, B %llu units", (unsigned long long)d[0].units,
	       (unsigned long long)d[1].units);
	EXPECT_GE(d[0].units * 100, 95 * 10000ULL);
	EXPECT_LE(d[0].units, 10000ULL);
	EXPECT_GE(d[1].units * 100, 95 * 90000ULL);
	EXPECT_LE(d[1].units * 100, 105 * 90000ULL);
	total = d[0].units + d[1].units;
	EXPECT_LE(total, 100000 + 500 + 32);

	/* both flood */
	ASSERT_EQ(0, tnode_init(p, &dev, "runits=10000"));
	ASSERT_EQ(0, tnode_init(a, &dev, ""));
	ASSERT_EQ(0, tnode_init(b, &dev, ""));
	d[0] = drv_of(a, p, 4096, 0);
	d[1] = drv_of(b, p, 65536, 0);
	run_drivers(d, 2, 10);
	total = d[0].units + d[1].units;
	TH_LOG("both flood: A %llu units, B %llu units", (unsigned long long)d[0].units,
	       (unsigned long long)d[1].units);
	EXPECT_GE(total * 100, 95 * 100000ULL);
	EXPECT_LE(total * 100, 105 * 100000ULL);
	EXPECT_LE(total, 100000 + 500 + 32);
	EXPECT_GT(d[0].units, 0);
	EXPECT_GT(d[1].units, 0);
	free(p);
}

/* A child's own cap still bites under a generous parent (io.max: both hold). */
TEST(s1_19_child_cap_holds_under_generous_parent)
{
	struct bi_dev_conf dev;
	struct tnode *p = calloc(3, sizeof(*p)), *a = p + 1, *b = p + 2;
	struct drv d[2];

	ASSERT_NE(NULL, p);
	bi_dev_conf_init(&dev);
	ASSERT_EQ(0, tnode_init(p, &dev, "runits=100000"));
	ASSERT_EQ(0, tnode_init(a, &dev, "runits=2000"));
	ASSERT_EQ(0, tnode_init(b, &dev, ""));
	d[0] = drv_of(a, p, 4096, 0);
	d[1] = drv_of(b, p, 65536, 0);
	run_drivers(d, 2, 10);
	TH_LOG("A %llu units, B %llu units", (unsigned long long)d[0].units,
	       (unsigned long long)d[1].units);
	/* A: 20,000 + 100 of burst, within one bio, less one batch */
	EXPECT_LE(d[0].units, 20000 + 100 + 2);
	EXPECT_GE(d[0].units + 128 + 2, 20000ULL + 100);
	/* B takes the parent's rest */
	EXPECT_GE((d[0].units + d[1].units) * 100, 95 * 1000000ULL);
	EXPECT_LE(d[0].units + d[1].units, 1000000 + 5000 + 32);
	free(p);
}

/* Refused at the parent, nothing stays charged at the child. */
TEST(refusal_at_parent_leaves_child_unchanged)
{
	struct bi_dev_conf dev;
	struct tnode *p = calloc(2, sizeof(*p)), *c = p + 1;
	struct bi_meter *m[2] = { &c->m, &p->m };
	struct bi_meter_cpu *mc[2] = { &c->cpu[0], &p->cpu[0] };
	struct bi_io rd = io_of(BI_OP_READ, 4096, BI_IO_SYNC);
	struct bi_chain_charge cc = { .queue = false };
	struct snap a, b, pa, pb;
	u64 retry = 0, now = 0;
	int i;

	ASSERT_NE(NULL, p);
	bi_dev_conf_init(&dev);
	ASSERT_EQ(0, tnode_init(c, &dev, "runits=50000 riops=5000 hi.units=5000"));
	ASSERT_EQ(0, tnode_init(p, &dev, "riops=10"));
	for (i = 0; i < 3; i++) {
		ASSERT_TRUE(bi_meter_admit_chain(m, mc, 2, &rd, &cc, now, &retry));
		EXPECT_EQ(2, cc.depth);
		EXPECT_EQ(1, cc.lvl[0].ticket.nr);
		EXPECT_EQ((1U << BI_KEY_RUNITS) | (1U << BI_KEY_RREQS), cc.lvl[0].keys);
		EXPECT_EQ(1U << BI_KEY_RREQS, cc.lvl[1].keys);
		bi_meter_complete_chain(m, mc, &cc, now);
	}
	EXPECT_EQ(250 - 3 * 2, c->m.cls[BI_CLASS_HI].tokens);
	snap_take(&a, &c->m, c->cpu, NR_SIM_CPUS);
	snap_take(&pa, &p->m, p->cpu, NR_SIM_CPUS);
	ASSERT_FALSE(bi_meter_admit_chain(m, mc, 2, &rd, &cc, now, &retry));
	snap_take(&b, &c->m, c->cpu, NR_SIM_CPUS);
	snap_take(&pb, &p->m, p->cpu, NR_SIM_CPUS);
	EXPECT_TRUE(snap_equal(&a, &b));
	EXPECT_TRUE(snap_equal(&pa, &pb));
	EXPECT_EQ(0, cc.depth);
	EXPECT_EQ(0, cc.lvl[0].keys);
	EXPECT_EQ(0, cc.lvl[0].ticket.nr);
	/* retry is the parent's: a request token at 10/s */
	EXPECT_EQ(NS / 10, retry);
	/* a flush is forced through both levels */
	rd = io_of(BI_OP_WRITE, 4096, BI_IO_FUA);
	ASSERT_TRUE(bi_meter_admit_chain(m, mc, 2, &rd, &cc, now, &retry));
	EXPECT_EQ(BI_CLASS_SYS, cc.lvl[1].cls);
	EXPECT_EQ(2, cc.depth);
	/* a chain of one is the tenant alone */
	rd = io_of(BI_OP_READ, 4096, BI_IO_SYNC);
	ASSERT_TRUE(bi_meter_admit_chain(m, mc, 1, &rd, &cc, now, &retry));
	EXPECT_EQ(1, cc.depth);
	free(p);
}

/*
 * A chain of @depth tenants, innermost first, configured by @lines on a
 * default device; @m and @mc filled for CPU 0.  NULL if a line is refused.
 */
static struct tnode *chain_make(int depth, const char *const *lines,
				struct bi_meter **m, struct bi_meter_cpu **mc)
{
	struct tnode *n = calloc(depth, sizeof(*n));
	struct bi_dev_conf dev;
	int i;

	bi_dev_conf_init(&dev);
	for (i = 0; n && i < depth; i++) {
		if (tnode_init(&n[i], &dev, lines[i])) {
			free(n);
			return NULL;
		}
		m[i] = &n[i].m;
		mc[i] = &n[i].cpu[0];
	}
	return n;
}

/* A level's work-key balance: its global bucket and every CPU's local. */
static s64 level_units(const struct tnode *n)
{
	struct snap s;

	snap_take(&s, &n->m, n->cpu, NR_SIM_CPUS);
	return s.key[BI_KEY_RUNITS];
}

/*
 * S1-06 / A-21: one bio along a chain of three tenants (child, parent,
 * grandparent) is charged its cost at every level, each level's balance
 * (global plus local) falling by exactly that; a refund gives every level
 * its cost back, and a bio forced along the chain is charged at every
 * level.
 */
TEST(s1_06_chain_charge)
{
	static const char *const lines[] = { "runits=50000", "runits=20000", "runits=10000" };
	struct bi_meter *m[3];
	struct bi_meter_cpu *mc[3];
	struct tnode *n = chain_make(3, lines, m, mc);
	struct bi_io rd = io_of(BI_OP_READ, 65536, BI_IO_SYNC);
	struct bi_chain_charge cc = { .queue = false };
	s64 before[3];
	u64 retry = 0;
	int i;

	ASSERT_NE(NULL, n);
	for (i = 0; i < 3; i++)
		before[i] = level_units(&n[i]);
	ASSERT_TRUE(bi_meter_admit_chain(m, mc, 3, &rd, &cc, 0, &retry));
	ASSERT_EQ(3, cc.depth);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(1U << BI_KEY_RUNITS, cc.lvl[i].keys);
		EXPECT_EQ(32, cc.lvl[i].init);
		EXPECT_EQ(before[i] - 32, level_units(&n[i]));
	}
	/* refunded (BLK_STS_AGAIN from below), every level gets it back */
	bi_meter_refund_chain(m, mc, &cc, 0);
	EXPECT_EQ(0, cc.depth);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(before[i], level_units(&n[i]));
	/* forced (draining, debt), every level is charged without asking */
	bi_meter_force_chain(m, mc, 3, &rd, &cc, 0);
	ASSERT_EQ(3, cc.depth);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(before[i] - 32, level_units(&n[i]));
	free(n);
}

/*
 * "charged again on processing" is the completion correction, on
 * every level the bio was charged: under initial=1 each level takes 1 at
 * admission and the other 31 units of a 64 KiB read at completion.
 */
TEST(a_22_chain_correction)
{
	static const char *const lines[] = { "runits=50000 initial=1", "runits=20000 initial=1" };
	struct bi_meter *m[2];
	struct bi_meter_cpu *mc[2];
	struct tnode *n = chain_make(2, lines, m, mc);
	struct bi_io rd = io_of(BI_OP_READ, 65536, BI_IO_SYNC);
	struct bi_chain_charge cc = { .queue = false };
	s64 before[2];
	u64 retry = 0;
	int i;

	ASSERT_NE(NULL, n);
	for (i = 0; i < 2; i++)
		before[i] = level_units(&n[i]);
	ASSERT_TRUE(bi_meter_admit_chain(m, mc, 2, &rd, &cc, 0, &retry));
	for (i = 0; i < 2; i++)
		EXPECT_EQ(before[i] - 1, level_units(&n[i]));
	bi_meter_complete_chain(m, mc, &cc, 0);
	for (i = 0; i < 2; i++)
		EXPECT_EQ(before[i] - 32, level_units(&n[i]));
	free(n);
}

/*
 * S1-21: a debt anywhere in the chain blacks the child out until that
 * level recovers.  The parent (runits=1000, initial=1: 50 tokens) takes a
 * 1 MiB read's 512 units at completion and owes 462; the child has
 * tokens to spare, yet its next 4 KiB read waits until the parent's
 * balance is back at 1 unit: 463 ms at 1000 units/s (tolerance 1 ms:
 * the negative cache may wake it early once).
 */
TEST(s1_21_chain_blackout)
{
	static const char *const lines[] = { "runits=100000", "runits=1000 initial=1" };
	struct bi_meter *m[2];
	struct bi_meter_cpu *mc[2];
	struct tnode *n = chain_make(2, lines, m, mc);
	struct bi_io big = io_of(BI_OP_READ, 1 << 20, BI_IO_SYNC);
	struct bi_io rd = io_of(BI_OP_READ, 4096, BI_IO_SYNC);
	struct bi_chain_charge cc = { .queue = false };
	u64 retry = 0, now = 0;

	ASSERT_NE(NULL, n);
	ASSERT_TRUE(bi_meter_admit_chain(m, mc, 2, &big, &cc, 0, &retry));
	bi_meter_complete_chain(m, mc, &cc, 0);
	while (!bi_meter_admit_chain(m, mc, 2, &rd, &cc, now, &retry)) {
		ASSERT_GT(retry, now);
		now = retry;
	}
	TH_LOG("first admission after the debt at %llu us",
	       (unsigned long long)(now / 1000));
	EXPECT_GE(now, 462 * BI_NSEC_PER_MSEC);
	EXPECT_LE(now, 464 * BI_NSEC_PER_MSEC);
	free(n);
}

/*
 * Conservation along a 3-level chain with two children, random bios on two
 * CPUs (completions on either), forced bios, idle stretches that the next
 * charge reclaims: every refused
 * admission changes nothing at any level, and at the end every key and
 * class bucket has consumed exactly the units (or requests) of the bios it
 * admitted, and its bucket accounting closes.
 */
#define CONS_NODES	4
#define CONS_INFLIGHT	64

struct cons_bio {
	struct bi_chain_charge cc;
	int child;
};

static void cons_ptrs(struct tnode *n, int child, int cpu, struct bi_meter **m,
		      struct bi_meter_cpu **mc)
{
	/* node 0 = root, 1 = mid, 2 and 3 = children of mid */
	int path[3] = { child, 1, 0 }, i;

	for (i = 0; i < 3; i++) {
		m[i] = &n[path[i]].m;
		mc[i] = &n[path[i]].cpu[cpu];
	}
}

TEST(chain_conserves_tokens_random)
{
	static const char *const lines[CONS_NODES] = {
		"runits=30000 wunits=25000 lo.units=8000",
		"runits=15000 wiops=800 initial=exact",
		"hi.units=3000 mid.units=2000 lo.units=4000 mid.policy=mid,lo mid.deduct=spill wunits=20000 riops=2000",
		"wunits=6000 hi.units=1000",
	};
	static const u64 sizes[] = { 512, 4096, 16384, 65536, 262144, 1 << 20 };
	struct tnode *n = calloc(CONS_NODES, sizeof(*n));
	struct cons_bio *fl = calloc(CONS_INFLIGHT, sizeof(*fl));
	u64 exp_key[CONS_NODES][BI_NR_KEYS] = { { 0 } }, exp_cls[CONS_NODES] = { 0 };
	s64 init_key[CONS_NODES][BI_NR_KEYS], init_cls[CONS_NODES][BI_NR_CLASSES];
	struct bi_meter *m[3];
	struct bi_meter_cpu *mc[3];
	struct bi_dev_conf dev;
	u64 seed = 0x5eed, now = 0, retry, refused = 0, admitted = 0;
	int nfl = 0, step, i, k, c, lv;

	ASSERT_NE(NULL, n);
	ASSERT_NE(NULL, fl);
	bi_dev_conf_init(&dev);
	for (i = 0; i < CONS_NODES; i++) {
		ASSERT_EQ(0, tnode_init(&n[i], &dev, lines[i]));
		for (k = 0; k < BI_NR_KEYS; k++)
			init_key[i][k] = n[i].m.key[k].b.tokens;
		for (c = 0; c < BI_NR_CLASSES; c++)
			init_cls[i][c] = n[i].m.cls[c].tokens;
	}
	for (step = 0; step < 40000; step++) {
		int op = (int)tokrng_range(&seed, 0, 99);
		int cpu = (int)tokrng_range(&seed, 0, NR_SIM_CPUS - 1);

		now += (u64)tokrng_range(&seed, 0, 200 * BI_NSEC_PER_USEC);
		if (op < 60 && nfl < CONS_INFLIGHT) {
			struct cons_bio *cb = &fl[nfl];
			struct bi_io io;
			struct snap before[CONS_NODES], after;
			int kind = (int)tokrng_range(&seed, 0, 9);
			bool ok;

			io = io_of(kind < 5 ? BI_OP_READ : BI_OP_WRITE,
				   sizes[tokrng_range(&seed, 0, 5)],
				   kind == 9 ? BI_IO_FUA : (kind & 1 ? BI_IO_SYNC : 0));
			io.prio_class = (u8)tokrng_range(&seed, BI_PRIO_NONE, BI_PRIO_IDLE);
			cb->child = (int)tokrng_range(&seed, 2, 3);
			cons_ptrs(n, cb->child, cpu, m, mc);
			for (i = 0; i < CONS_NODES; i++) {
				touch(&n[i].m, now);
				snap_take(&before[i], &n[i].m, n[i].cpu, NR_SIM_CPUS);
			}
			if (op < 5) {
				bi_meter_force_chain(m, mc, 3, &io, &cb->cc, now);
				ok = true;
			} else {
				ok = bi_meter_admit_chain(m, mc, 3, &io, &cb->cc, now, &retry);
			}
			if (!ok) {
				refused++;
				ASSERT_GE(retry, now);
				for (i = 0; i < CONS_NODES; i++) {
					snap_take(&after, &n[i].m, n[i].cpu, NR_SIM_CPUS);
					ASSERT_TRUE(snap_equal(&before[i], &after))
						TH_LOG("step %d node %d", step, i);
				}
				continue;
			}
			admitted++;
			ASSERT_EQ(3, cb->cc.depth);
			for (lv = 0; lv < 3; lv++) {
				const struct bi_charge *ch = &cb->cc.lvl[lv];
				int node = lv == 0 ? cb->child : 1 - (lv - 1);

				for (k = 0; k < BI_NR_KEYS; k++)
					if (ch->keys & (1U << k))
						exp_key[node][k] += bi_key_is_units((u8)k) ?
								    ch->units : 1;
				if (ch->ticket.nr)
					exp_cls[node] += ch->units;
			}
			nfl++;
		} else if (op < 90 && nfl) {
			int j = (int)tokrng_range(&seed, 0, nfl - 1);

			cons_ptrs(n, fl[j].child, cpu, m, mc);
			bi_meter_complete_chain(m, mc, &fl[j].cc, now);
			fl[j] = fl[--nfl];
		} else {
			/* an idle stretch: the next charge reclaims lazily */
			now += (BI_LOCAL_IDLE_TICKS + 1) * BI_DISPENSE_TICK_NS;
		}
	}
	while (nfl) {
		cons_ptrs(n, fl[nfl - 1].child, 0, m, mc);
		bi_meter_complete_chain(m, mc, &fl[--nfl].cc, now);
	}
	TH_LOG("admitted %llu, refused %llu", (unsigned long long)admitted,
	       (unsigned long long)refused);
	EXPECT_GT(refused, 1000);
	EXPECT_GT(admitted, 1000);
	for (i = 0; i < CONS_NODES; i++) {
		s64 used_cls = 0;

		for (k = 0; k < BI_NR_KEYS; k++) {
			const struct bi_global *g = &n[i].m.key[k];
			s64 used = 0, tokens = g->b.tokens;

			for (c = 0; c < NR_SIM_CPUS; c++) {
				used += (s64)(n[i].cpu[c].local[k].charged -
					      n[i].cpu[c].local[k].refunded);
				tokens += n[i].cpu[c].local[k].tokens;
			}
			EXPECT_EQ((s64)exp_key[i][k], used) TH_LOG("node %d key %d", i, k);
			EXPECT_EQ(tokens - init_key[i][k],
				  (s64)(g->b.added - g->b.dropped) - used)
				TH_LOG("node %d key %d", i, k);
		}
		for (c = 0; c < BI_NR_CLASSES; c++) {
			const struct bi_bucket *b = &n[i].m.cls[c];

			used_cls += (s64)(b->charged - b->refunded);
			EXPECT_EQ(b->tokens - init_cls[i][c],
				  (s64)(b->added - b->charged + b->refunded - b->dropped));
		}
		EXPECT_EQ((s64)exp_cls[i], used_cls) TH_LOG("node %d", i);
	}
	free(n);
	free(fl);
}

/*
 * Configuration publication (struct bi_meter_cfg): two tenant lines and two
 * device lines that differ in every published field, so that a mix of the
 * two shows in any pair of fields.
 */
struct pub_line {
	const char *tenant, *device;
	u8 key_on;
	s64 wfixed;
	u32 db_units;
	u8 unit_shift;
};

static const struct pub_line pub_lines[2] = {
	{ "rbps=1M initial=1 deadband=7", "unit_bytes=4096",
	  1U << BI_KEY_RUNITS, 1, 7, 12 },
	{ "riops=50 wiops=60 initial=exact deadband=9", "unit_bytes=8192",
	  (1U << BI_KEY_RREQS) | (1U << BI_KEY_WREQS), 0, 9, 13 },
};

static int pub_configure(struct bi_meter *m, int which)
{
	struct bi_tenant_conf conf;
	struct bi_dev_conf dev;
	const struct pub_line *l = &pub_lines[which];

	bi_dev_conf_init(&dev);
	if (bi_dev_conf_merge(&dev, l->device, strlen(l->device), NULL) ||
	    bi_conf_parse(&conf, l->tenant, strlen(l->tenant), NULL))
		return -1;
	bi_meter_configure(m, &conf, &dev, 0);
	return 0;
}

/* Which line @c is wholly, or -1 for a mix. */
static int pub_which(const struct bi_meter_cfg *c)
{
	int i;

	for (i = 0; i < 2; i++)
		if (c->key_on == pub_lines[i].key_on && c->wfixed == pub_lines[i].wfixed &&
		    c->db.units == pub_lines[i].db_units &&
		    c->cost.unit_shift == pub_lines[i].unit_shift && !c->cls_on)
			return i;
	return -1;
}

/*
 * bi_meter_configure() fills the slot that is not published and publishes
 * it: what a reader loaded before stays whole and unchanged, the new one is
 * the new line whole, and the next configuration reuses the first slot.
 */
TEST(configure_publishes_the_other_slot_and_leaves_the_loaded_one_whole)
{
	struct bi_meter m;
	const struct bi_meter_cfg *a, *b;
	struct bi_meter_cfg snap;

	bi_meter_init(&m, 0);
	ASSERT_EQ(0, pub_configure(&m, 0));
	a = bi_meter_cfg(&m);
	ASSERT_EQ(0, pub_which(a));
	memcpy(&snap, a, sizeof(snap));
	ASSERT_EQ(0, pub_configure(&m, 1));
	b = bi_meter_cfg(&m);
	ASSERT_NE(a, b);
	EXPECT_EQ(0, memcmp(a, &snap, sizeof(snap)));
	EXPECT_EQ(1, pub_which(b));
	/* the new caps' buckets were ready before it was published */
	EXPECT_EQ(50ULL, m.key[BI_KEY_RREQS].b.rate);
	EXPECT_EQ(60ULL, m.key[BI_KEY_WREQS].b.rate);
	ASSERT_EQ(0, pub_configure(&m, 0));
	EXPECT_EQ(a, bi_meter_cfg(&m));
	EXPECT_EQ(0, pub_which(a));
}

struct pub_reader {
	struct bi_meter *m;
	int stop;
	u64 sections;		/* read sections ended (the writer's grace period) */
	u64 seen[2], mixed;
};

static void *pub_reader_fn(void *arg)
{
	struct pub_reader *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		/* one read-side section: one load, every field of that copy */
		int w = pub_which(bi_meter_cfg(r->m));

		if (w < 0)
			r->mixed++;
		else
			r->seen[w]++;
		__atomic_store_n(&r->sections, r->sections + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * A reader on another thread never sees a mix of two configurations while
 * the writer publishes one after the other, 20,000 times, waiting between
 * two publications for the reader to end a section (the grace period the
 * kernel waits for with cond_synchronize_rcu_expedited()).  On a loaded
 * machine each hand-off may wait for a whole scheduler slice: the writer
 * stops after 10 s if it has published at least 2,000 times (with the slot
 * rewritten in place, 20,000 publications showed 30,348 mixes, more than
 * one per publication), so the test ends inside the harness's timeout.
 */
TEST(a_reader_sees_the_old_or_the_new_configuration_never_a_mix)
{
	struct bi_meter m;
	struct pub_reader r = { .m = &m };
	pthread_t th;
	struct timespec t0, t;
	u64 start;
	int i;

	bi_meter_init(&m, 0);
	ASSERT_EQ(0, pub_configure(&m, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, pub_reader_fn, &r));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 1; i <= 20000; i++) {
		if (i > 2000 && !(i % 256)) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec >= 10)
				break;
		}
		ASSERT_EQ(0, pub_configure(&m, i & 1));
		start = __atomic_load_n(&r.sections, __ATOMIC_ACQUIRE);
		/* two ends: the section under way may have begun before the store */
		while (__atomic_load_n(&r.sections, __ATOMIC_ACQUIRE) < start + 2)
			sched_yield();
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(th, NULL));
	TH_LOG("%d publications, %llu + %llu reads", i - 1,
	       (unsigned long long)r.seen[0], (unsigned long long)r.seen[1]);
	EXPECT_EQ(0ULL, r.mixed);
	EXPECT_GT(r.seen[0], 0ULL);
	EXPECT_GT(r.seen[1], 0ULL);
}

/*
 * The class stage is one lock's (cls_lock): its buckets and policies are
 * configured, charged, corrected and refunded under it, since classes are
 * shared by every CPU (no per-CPU part).  Each of those calls, run on a
 * thread while the test holds the lock, has not returned 200 ms later and
 * returns once the lock is released.  A call that skipped the lock would
 * return within microseconds; one not scheduled for 200 ms could hide that,
 * never fail a correct build.
 */
enum cls_call { CLS_CONFIGURE, CLS_ADMIT, CLS_COMPLETE, CLS_REFUND, CLS_NR,
		KEY_REQUEST_RATE = CLS_NR };

struct cls_job {
	struct rig *r;
	struct bi_charge ch;
	enum cls_call what;
	int done;
};

static void *cls_job_fn(void *arg)
{
	struct cls_job *j = arg;
	u64 retry;

	switch (j->what) {
	case CLS_CONFIGURE:
		bi_meter_configure(&j->r->m, &j->r->conf, &j->r->dev, 0);
		break;
	case CLS_ADMIT:
		bi_meter_admit(&j->r->m, &j->r->cpu, &j->ch, 0, &retry);
		break;
	case CLS_COMPLETE:
		bi_meter_complete(&j->r->m, &j->r->cpu, &j->ch, 0);
		break;
	case KEY_REQUEST_RATE:
		bi_meter_set_request_rate(&j->r->m, BI_DIR_READ, 50, 0);
		break;
	default:
		bi_meter_refund(&j->r->m, &j->r->cpu, &j->ch, 0);
		break;
	}
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(the_class_stage_waits_for_its_lock)
{
	struct timespec wait = { 0, 200 * 1000 * 1000 };
	struct bi_io rd = io_of(BI_OP_READ, 65536, BI_IO_SYNC);
	struct cls_job j;
	unsigned long flags;
	pthread_t th;
	struct rig r;
	u64 retry;
	int what;

	for (what = 0; what < CLS_NR; what++) {
		ASSERT_EQ(0, rig_init(&r, "hi.units=2000 runits=5000"));
		j = (struct cls_job){ .r = &r, .what = what };
		bi_meter_classify(&r.m, &rd, &j.ch);
		if (what == CLS_COMPLETE || what == CLS_REFUND) {
			ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &j.ch, 0, &retry));
			ASSERT_NE(0, j.ch.ticket.nr);
		}
		flags = bi_lock_irqsave(&r.m.cls_lock);
		ASSERT_EQ(0, pthread_create(&th, NULL, cls_job_fn, &j));
		nanosleep(&wait, NULL);
		EXPECT_EQ(0, __atomic_load_n(&j.done, __ATOMIC_ACQUIRE)) TH_LOG("call %d", what);
		bi_unlock_irqrestore(&r.m.cls_lock, flags);
		ASSERT_EQ(0, pthread_join(th, NULL));
		EXPECT_EQ(1, j.done);
	}
}

/* Is the thread of @j still inside its call 200 ms later? */
static bool cls_job_waits(struct cls_job *j)
{
	struct timespec wait = { 0, 200 * 1000 * 1000 };

	nanosleep(&wait, NULL);
	return !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE);
}

/*
 * The same for the other two places a lock guards: a key's global bucket,
 * retuned by the rate controller's new request rate under the key's lock;
 * and the class stage's undo when a key refuses a bio the classes admitted.
 * For the undo the test holds the request key's lock first: the bio passes
 * the class stage (its bucket's charge moves), waits at the key's lock;
 * the test takes the class lock and lets the key refuse: the undo waits.
 */
TEST(key_retunes_and_class_undo_wait_for_their_locks)
{
	struct bi_io rd = io_of(BI_OP_READ, 4096, BI_IO_SYNC);
	struct bi_global *g;
	unsigned long kf, cf;
	struct cls_job j;
	pthread_t th;
	struct rig r;
	u64 retry, charged;
	int i;

	ASSERT_EQ(0, rig_init(&r, "riops=10"));
	j = (struct cls_job){ .r = &r, .what = KEY_REQUEST_RATE };
	g = &r.m.key[BI_KEY_RREQS];
	kf = bi_lock_irqsave(&g->lock);
	ASSERT_EQ(0, pthread_create(&th, NULL, cls_job_fn, &j));
	EXPECT_TRUE(cls_job_waits(&j));
	bi_unlock_irqrestore(&g->lock, kf);
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(50ULL, g->b.rate);

	ASSERT_EQ(0, rig_init(&r, "hi.units=2000 riops=10"));
	for (i = 0; i < 3; i++) {
		bi_meter_classify(&r.m, &rd, &j.ch);
		ASSERT_TRUE(bi_meter_admit(&r.m, &r.cpu, &j.ch, 0, &retry));
	}
	j = (struct cls_job){ .r = &r, .what = CLS_ADMIT };
	bi_meter_classify(&r.m, &rd, &j.ch);
	ASSERT_EQ(BI_CLASS_HI, j.ch.cls);
	g = &r.m.key[BI_KEY_RREQS];
	charged = __atomic_load_n(&r.m.cls[BI_CLASS_HI].charged, __ATOMIC_ACQUIRE);
	kf = bi_lock_irqsave(&g->lock);
	ASSERT_EQ(0, pthread_create(&th, NULL, cls_job_fn, &j));
	while (__atomic_load_n(&r.m.cls[BI_CLASS_HI].charged, __ATOMIC_ACQUIRE) == charged)
		sched_yield();
	cf = bi_lock_irqsave(&r.m.cls_lock);
	bi_unlock_irqrestore(&g->lock, kf);
	EXPECT_TRUE(cls_job_waits(&j));
	bi_unlock_irqrestore(&r.m.cls_lock, cf);
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, j.ch.ticket.nr);			/* refused, the class charge undone */
	EXPECT_EQ(r.m.cls[BI_CLASS_HI].max_tokens - 6, r.m.cls[BI_CLASS_HI].tokens);
}

TEST_HARNESS_MAIN
