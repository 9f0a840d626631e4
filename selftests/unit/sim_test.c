// SPDX-License-Identifier: GPL-2.0
/*
 * sim_test.c - end-to-end scenarios of blkiso-sim (doc/sim.md): the real
 * bucket core and controllers on a simulated device, with the catalogue's
 * expectations (S3-01, S3-05, S2-15, S0-17, S3-22).  The scenarios are the
 * files in tools/sim/scenarios/, so the tool and the tests run the same
 * thing.  The engine is compiled in here (the Makefile links unit tests
 * against the core only).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../tools/sim/sim_scenario.c"
#include "../../tools/sim/sim_device.c"
#include "../../tools/sim/sim_engine.c"
#include "kselftest_harness.h"

#define MAX_SECONDS	64
#define MAX_TENANTS	4

struct capture {
	double iops[MAX_SECONDS][MAX_TENANTS];
	double lat_mean_us[MAX_SECONDS][MAX_TENANTS];
	double p99_us[MAX_SECONDS][MAX_TENANTS];
	u64 cap_mrps[MAX_SECONDS][MAX_TENANTS];
	u64 slot_changes[MAX_SECONDS][MAX_TENANTS];
	u32 nr_seconds;
};

static void capture_second(struct sim *s, u32 second, void *arg)
{
	struct capture *c = arg;
	u32 i;

	if (second >= MAX_SECONDS)
		return;
	for (i = 0; i < s->nr_tenants && i < MAX_TENANTS; i++) {
		struct sim_tenant *t = &s->tenants[i];

		c->iops[second][i] = (double)t->sec->ios;
		c->lat_mean_us[second][i] = sim_hist_mean_ns(&t->sec->lat) / 1e3;
		c->p99_us[second][i] = sim_hist_pct_ns(&t->sec->lat, 990) / 1e3;
		c->cap_mrps[second][i] = t->rate[BI_DIR_READ].cap_mrps;
		c->slot_changes[second][i] = t->iso.slot_changes;
	}
	c->nr_seconds = second + 1;
}

/*
 * tools/sim/scenarios/@name, found from the working directory (make runs
 * tests from the top) or from the binary (build/unit/ -> ../../).
 */
static int load(struct sim *s, const char *name)
{
	char path[2 * PATH_MAX], exe[PATH_MAX];
	ssize_t n;

	sim_init(s);
	snprintf(path, sizeof(path), "tools/sim/scenarios/%s", name);
	if (access(path, R_OK)) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			*strrchr(exe, '/') = '\0';
			snprintf(path, sizeof(path), "%s/../../tools/sim/scenarios/%s", exe, name);
		}
	}
	if (sim_load_file(s, path)) {
		fprintf(stderr, "%s: %s\n", path, s->err);
		return -1;
	}
	return 0;
}

static int run(struct sim *s, const char *name, struct capture *c)
{
	if (load(s, name))
		return -1;
	memset(c, 0, sizeof(*c));
	s->on_second = capture_second;
	s->on_second_arg = c;
	return sim_run(s);
}

static double total_iops(struct sim *s, u32 tenant)
{
	return s->tenants[tenant].total->ios / (s->duration_ns / 1e9);
}

/* |seen - want| <= pct % of want */
static bool within_pct(double want, double seen, double pct)
{
	double d = seen - want;

	return (d < 0 ? -d : d) <= want * pct / 100;
}

/*
 * S3-01 noisy neighbour: 1400 IOPS device, A allocated 600, B 800, B
 * floods at 3000: A >= 570, A mean latency <= 1.2x solo, B <= 840 (strict).
 */
TEST(noisy_neighbour)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim solo, s;
	double solo_lat, lat;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run(&solo, "noisy_solo.sim", c));
	solo_lat = sim_hist_mean_ns(&solo.tenants[0].total->lat) / 1e3;
	ASSERT_EQ(0, run(&s, "noisy_neighbour.sim", c));
	lat = sim_hist_mean_ns(&s.tenants[0].total->lat) / 1e3;
	TH_LOG("A %.1f IOPS %.0f us (solo %.0f us), B %.1f IOPS",
	       total_iops(&s, 0), lat, solo_lat, total_iops(&s, 1));
	ASSERT_GE(total_iops(&s, 0), 570);
	ASSERT_LE(lat, 1.2 * solo_lat);
	ASSERT_LE(total_iops(&s, 1), 840);
	sim_free(&solo);
	sim_free(&s);
	free(c);
}

/*
 * S3-05 under-use avoidance: 750 IOPS at 100 IOPS per slot settles at 8
 * slots plus a delay, 750 +-5 %, <= 2 slot changes in the last 30 s.
 */
TEST(underuse_avoidance)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;
	double sum = 0;
	u32 i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run(&s, "underuse.sim", c));
	ASSERT_EQ(40, c->nr_seconds);
	for (i = 10; i < 40; i++)
		sum += c->iops[i][0];
	TH_LOG("n %u delay %llu ns, %.1f IOPS over the last 30 s, %llu slot changes",
	       s.tenants[0].iso.n, (unsigned long long)s.tenants[0].iso.delay_ns,
	       sum / 30, (unsigned long long)(c->slot_changes[39][0] - c->slot_changes[9][0]));
	ASSERT_EQ(8, s.tenants[0].iso.n);
	ASSERT_EQ(BI_ISO_DELAY, s.tenants[0].iso.mode);
	ASSERT_GT(s.tenants[0].iso.delay_ns, 0);
	ASSERT_TRUE(within_pct(750, sum / 30, 5));
	ASSERT_LE(c->slot_changes[39][0] - c->slot_changes[9][0], 2);
	sim_free(&s);
	free(c);
}

/*
 * S2-15 oscillation at 150 % offered load: the damped controller makes
 * <= 20 % of the naive controller's state transitions and keeps
 * throughput >= 85 % of the device's 4000 IOPS.
 */
TEST(oscillation)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim naive, damped;
	double thr;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run(&naive, "oscillation_naive.sim", c));
	ASSERT_EQ(0, run(&damped, "oscillation_damped.sim", c));
	thr = damped.dev_ios / (damped.duration_ns / 1e9);
	TH_LOG("transitions naive %llu damped %llu, damped %.0f IOPS",
	       (unsigned long long)naive.ovl.transitions,
	       (unsigned long long)damped.ovl.transitions, thr);
	ASSERT_GE(naive.ovl.transitions, 20);
	ASSERT_LE(damped.ovl.transitions * 5, naive.ovl.transitions);
	ASSERT_GE(thr, 0.85 * 4000);
	sim_free(&naive);
	sim_free(&damped);
	free(c);
}

/*
 * S0-17 rate cap convergence: C = 100 units/s; requests of 2 KB keep the
 * cap at 100 rps; after the switch to 100 KB at 5 s the cap is 2 rps
 * +-10 % within 3 s, and stays there.
 */
TEST(rate_cap_convergence)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;
	u32 i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run(&s, "rate_cap.sim", c));
	ASSERT_EQ(10, c->nr_seconds);
	/* c->cap_mrps[k] is the cap at the end of second k, i.e. at k + 1 s */
	ASSERT_TRUE(within_pct(100000, c->cap_mrps[4][0], 10));
	for (i = 7; i < 10; i++) {
		TH_LOG("cap at %u s: %llu mrps", i + 1, (unsigned long long)c->cap_mrps[i][0]);
		ASSERT_TRUE(within_pct(2000, c->cap_mrps[i][0], 10));
	}
	sim_free(&s);
	free(c);
}

/*
 * S3-22 victim recovery: B turns abusive at 5 s; A (600) is back within
 * +-5 % of its allocation in <= 2 s and stays there.
 */
TEST(victim_recovery)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;
	u32 i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run(&s, "victim_recovery.sim", c));
	ASSERT_EQ(12, c->nr_seconds);
	ASSERT_TRUE(within_pct(600, c->iops[3][0], 5));
	for (i = 7; i < 12; i++) {
		TH_LOG("A at [%u, %u) s: %.0f IOPS, %.0f us", i, i + 1, c->iops[i][0],
		       c->lat_mean_us[i][0]);
		ASSERT_TRUE(within_pct(600, c->iops[i][0], 5));
	}
	ASSERT_LE(c->iops[11][1], 840);
	sim_free(&s);
	free(c);
}

static int run_text(struct sim *s, const char *text, struct capture *c)
{
	sim_init(s);
	if (sim_load_string(s, text)) {
		fprintf(stderr, "%s\n", s->err);
		return -1;
	}
	memset(c, 0, sizeof(*c));
	s->on_second = capture_second;
	s->on_second_arg = c;
	return sim_run(s);
}

/*
 * S0-19: read cap 300 rps and write cap 100 rps on one tenant, a 50/50
 * mix offered unthrottled: reads 300 +-5 %, writes 100 +-5 %, independently.
 */
TEST(per_direction_caps)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;
	double secs;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run_text(&s, "duration 5s\ndevice slots=64 latency_us=100\n"
			      "tenant A mode=request riops=300 wiops=100\n"
			      "workload A rate=1000 iodepth=100000 read=50 bs=4k\n", c));
	secs = s.duration_ns / 1e9;
	TH_LOG("reads %.1f/s writes %.1f/s", s.tenants[0].total->ios_dir[BI_DIR_READ] / secs,
	       s.tenants[0].total->ios_dir[BI_DIR_WRITE] / secs);
	ASSERT_TRUE(within_pct(300, s.tenants[0].total->ios_dir[BI_DIR_READ] / secs, 5));
	ASSERT_TRUE(within_pct(100, s.tenants[0].total->ios_dir[BI_DIR_WRITE] / secs, 5));
	sim_free(&s);
	free(c);
}

/*
 * The simulator admits through the module's meter (bi_meter_admit_one), so
 * a cap keeps io.max's contract there too: one 1 MiB write at a time under
 * wbps=1M (closed loop, depth 1) waits for its whole cost, 1 s each from
 * the second on (the first spends the 50 ms burst): mean latency 1 s
 * +-5 %, 1 write/s.  With initial=1 (charge-then-correct) a write passes
 * on one unit and the next pays its debt: the first passes at once, so
 * the first second completes two writes.
 */
TEST(caps_wait_for_the_whole_cost_as_in_the_module)
{
	struct capture *c = calloc(1, sizeof(*c));
	static const char *const quota[] = { "wbps=1M", "wbps=1M initial=1" };
	struct sim s;
	char text[256];
	int i;

	ASSERT_NE(NULL, c);
	for (i = 0; i < 2; i++) {
		snprintf(text, sizeof(text), "duration 6s\ndevice slots=8 latency_us=100\n"
			 "tenant A %s\nworkload A iodepth=1 read=0 bs=1m\n", quota[i]);
		ASSERT_EQ(0, run_text(&s, text, c));
		TH_LOG("%s: first second %.0f writes, latency %.3f s; last %.0f, %.3f s",
		       quota[i], c->iops[0][0], c->lat_mean_us[0][0] / 1e6,
		       c->iops[5][0], c->lat_mean_us[5][0] / 1e6);
		if (!i) {
			EXPECT_TRUE(within_pct(0.95e6, c->lat_mean_us[0][0], 5));
			EXPECT_TRUE(within_pct(1e6, c->lat_mean_us[5][0], 5));
			EXPECT_EQ(1, c->iops[5][0]);
		} else {
			EXPECT_EQ(2, c->iops[0][0]);
		}
		sim_free(&s);
	}
	free(c);
}

/*
 * S0-35: device cap 1000 rps, tenant caps 600, two unthrottled tenants:
 * each <= 600 (+5 %), the sum <= 1000 (+5 %).
 */
TEST(device_cap)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;
	double a, b;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run_text(&s, "duration 5s\ndevice slots=64 latency_us=100 cap_rps=1000\n"
			      "tenant A mode=request riops=600\ntenant B mode=request riops=600\n"
			      "workload A rate=2000 iodepth=64 bs=4k\n"
			      "workload B rate=2000 iodepth=64 bs=4k\n", c));
	a = total_iops(&s, 0);
	b = total_iops(&s, 1);
	TH_LOG("A %.1f B %.1f IOPS", a, b);
	ASSERT_LE(a, 630);
	ASSERT_LE(b, 630);
	ASSERT_LE(a + b, 1050);
	ASSERT_GE(a + b, 950);
	sim_free(&s);
	free(c);
}

/*
 * Strict allocations far below a fast device's speed, for a tenant that
 * submits one bio at a time (abuse mode: one slot, plus the one-slot
 * delay): 200 IOPS, and in work units 10 MiB/s of 1 MiB reads (5120
 * units/s: the delay is per bio, a mean bio's units long, ~100 ms, above
 * A-32's 50 ms).  Over the last 5 s, +-5 %.
 */
TEST(strict_allocation_on_a_fast_device)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;
	double a = 0, b = 0;
	u32 i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run_text(&s, "duration 10s\ndevice slots=64 latency_us=20\n"
			      "tenant A alloc=200 alloc_metric=iops isolation=strict\n"
			      "tenant B alloc=5120 alloc_metric=units isolation=strict\n"
			      "workload A iodepth=1 bs=4k\n"
			      "workload B iodepth=1 bs=1m\n", c));
	for (i = 5; i < 10; i++) {
		a += c->iops[i][0] / 5;
		b += c->iops[i][1] / 5;
	}
	TH_LOG("A %.1f IOPS, B %.2f IOPS (%.2f MiB/s)", a, b, b);
	ASSERT_TRUE(within_pct(200, a, 5));
	ASSERT_TRUE(within_pct(10, b, 5));
	sim_free(&s);
	free(c);
}

/*
 * S3-18 work-conserving: a tenant allocated 500 IOPS runs device-limited
 * (above 500) while the device copes, and returns to <= 525 once a second
 * tenant's load makes the device overloaded.
 */
TEST(work_conserving_isolation)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;
	u32 i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run_text(&s, "duration 12s\ndevice slots=14 latency_us=10000\n"
			      "tenant name=A alloc=500 alloc_metric=iops isolation=wc latency_us=100000\n"
			      "tenant name=B latency_us=15000\n"
			      "workload A iodepth=14 bs=4k\n"
			      "at 5s workload B iodepth=14 bs=4k\n", c));
	ASSERT_GT(c->iops[3][0], 1000);
	for (i = 7; i < 12; i++) {
		TH_LOG("A at [%u, %u) s: %.0f IOPS", i, i + 1, c->iops[i][0]);
		ASSERT_LE(c->iops[i][0], 525);
	}
	sim_free(&s);
	free(c);
}

/*
 * S3-18 work-conserving return (work_conserving.sim, the guest test's
 * scenario): A, allocated 300 and offering 1000, runs above 300 alone; a
 * flood from 3 s overloads the device, and from 2 s later every second of
 * A is 300 +-5 %, through the multiplier's later episodes.
 */
TEST(work_conserving_return_within_5pct)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;
	u32 i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run(&s, "work_conserving.sim", c));
	ASSERT_GT(c->iops[2][0], 900);
	for (i = 5; i < 12; i++) {
		TH_LOG("A at [%u, %u) s: %.0f IOPS", i, i + 1, c->iops[i][0]);
		ASSERT_TRUE(within_pct(300, c->iops[i][0], 5));
	}
	sim_free(&s);
	free(c);
}

/*
 * S2-18: Q = 3, L = 1 ms (3000 IOPS) offered 6000 IOPS: with the overload
 * controller (damped plus ideal rate, rank 1) the p99 latency of admitted
 * bios stays at the 3 ms target (+-5 %: histogram resolution) and the
 * throughput >= 2700 IOPS, after a 4 s start.
 */
TEST(worked_scenario_overload)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;
	u32 i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run_text(&s, "duration 20s\ndevice slots=3 latency_us=1000\n"
			      "devconf mult_up=10 mult_down=2 holdoff_ticks=3 window_ticks=1 reject_mode=1\n"
			      "overload ideal\ntenant name=A latency_us=3000\n"
			      "workload A rate=6000 iodepth=64 bs=4k prio=rt\n", c));
	for (i = 4; i < 20; i++) {
		ASSERT_GE(c->iops[i][0], 2700);
		ASSERT_LE(c->p99_us[i][0], 3000 * 1.05);
	}
	TH_LOG("%.0f IOPS, p99 %.0f us in the last second", c->iops[19][0], c->p99_us[19][0]);
	sim_free(&s);
	free(c);
}

/*
 * S0-17 (TB-F form): C = 10,000 units/s in request mode; 2 KiB bios keep the
 * cap at 10,000 +-10 %; after the switch to 100 KiB the cap reaches 200
 * +-10 % within 3 s and the bandwidth stays at 20.48 MB/s +-10 %.
 */
TEST(rate_cap_convergence_large)
{
	struct capture *c = calloc(1, sizeof(*c));
	double sum = 0;
	struct sim s;
	u32 i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run_text(&s, "duration 10s\ndevice slots=64 latency_us=100\n"
			      "tenant A mode=request riops=10000 runits=10000\n"
			      "workload A iodepth=32 bs=2k\n"
			      "at 5s workload A iodepth=32 bs=100k\n", c));
	ASSERT_TRUE(within_pct(10000000, c->cap_mrps[4][0], 10));
	for (i = 7; i < 10; i++) {
		ASSERT_TRUE(within_pct(200000, c->cap_mrps[i][0], 10));
		sum += c->iops[i][0];
	}
	/*
	 * 200 rps x 102400 B, over the last 3 s: queued bios leave in the
	 * meter's dispense batches (64 requests, 0.32 s at 200/s), as in the
	 * module, so a single second holds 192 or 224.
	 */
	ASSERT_TRUE(within_pct(20.48, sum / 3 * 102400 / 1e6, 10));
	sim_free(&s);
	free(c);
}

/*
 * S0-21: a tenant's 1 MiB reads overload the device next to another's
 * 4 KiB reads.  With large-read shedding the 4 KiB p99 stays <= 2x its
 * unloaded baseline; without, it is > 5x.
 */
TEST(large_read_shedding)
{
	static const char *const fmt =
		"duration 5s\ndevice slots=4 latency_us=100 per_kib_ns=10000\n"
		"overload %s\ntenant big latency_us=20000\ntenant small latency_us=2000\n"
		"workload small rate=200 iodepth=16 bs=4k\n%s";
	struct capture *c = calloc(1, sizeof(*c));
	double base, shed, none;
	char text[512];
	struct sim s;

	ASSERT_NE(NULL, c);
	snprintf(text, sizeof(text), fmt, "off", "");
	ASSERT_EQ(0, run_text(&s, text, c));
	base = sim_hist_pct_ns(&s.tenants[1].total->lat, 990);
	sim_free(&s);
	snprintf(text, sizeof(text), fmt, "shed", "workload big iodepth=8 bs=1m\n");
	ASSERT_EQ(0, run_text(&s, text, c));
	shed = sim_hist_pct_ns(&s.tenants[1].total->lat, 990);
	ASSERT_GT(s.tenants[0].total->ios, 100);	/* the large reads still run */
	sim_free(&s);
	snprintf(text, sizeof(text), fmt, "off", "workload big iodepth=8 bs=1m\n");
	ASSERT_EQ(0, run_text(&s, text, c));
	none = sim_hist_pct_ns(&s.tenants[1].total->lat, 990);
	sim_free(&s);
	TH_LOG("4 KiB p99: baseline %.0f us, shedding %.0f us, none %.0f us",
	       base / 1e3, shed / 1e3, none / 1e3);
	ASSERT_LE(shed, 2 * base);
	ASSERT_GT(none, 5 * base);
	free(c);
}

/*
 * mode=auto is wired to the selector of tokadapt.c (S0-33): uniform 4 KiB at
 * a high committed rate runs on request tokens, a 4k/1m mix on work tokens.
 */
TEST(auto_mode_selection)
{
	static const char *const mix[] = { "4k", "4k:1,1m:1" };
	u8 want[] = { BI_MODE_REQUEST, BI_MODE_WORK };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		char text[256];
		struct sim s;

		snprintf(text, sizeof(text),
			 "duration 2s\ndevice slots=64 latency_us=100\n"
			 "tenant A mode=auto runits=100000 riops=60000\n"
			 "workload A iodepth=4 bs=%s\n", mix[i]);
		sim_init(&s);
		ASSERT_EQ(0, sim_load_string(&s, text));
		ASSERT_EQ(0, sim_run(&s));
		ASSERT_EQ(want[i], s.tenants[0].ms.active);
		ASSERT_GT(s.tenants[0].total->ios, 100);
		sim_free(&s);
	}
}

/* Quota lines go through the shared grammar: its errors name the token. */
/*
 * Issue 20 (slotbound_depth.sim): the victim's misses are 0.4 % of the
 * device's completions, so the device's window never sees them
 * (slotbound_damped.sim: the victim at 124 of 2,400 IOPS).  With
 * depth_limit=1 it is judged on its own window and the flood's bios in
 * flight are bounded: from 1 s every second the victim is at 2,400 +-1 %
 * with its solo p99 (252 us; 1.5x = 378), and the flood keeps >= 80 % of
 * the device (32,000 128k bios/s; measured 28,000, the limit at 7 of 8).
 */
/*
 * Issue 20's depth-limit scenarios, seconds [@from, @to): the victim
 * (tenant 0) at @rate +-1 %, its p99 within @p99_us, the flood (tenant 1)
 * at @flood_min a second or more.
 */
static void depth_seconds_hold(struct __test_metadata *_metadata, const struct capture *c,
			       u32 from, u32 to, double rate, double p99_us, double flood_min)
{
	u32 i;

	for (i = from; i < to; i++) {
		TH_LOG("[%u, %u) s: victim %.0f IOPS p99 %.0f us, flood %.0f a second",
		       i, i + 1, c->iops[i][0], c->p99_us[i][0], c->iops[i][1]);
		ASSERT_TRUE(within_pct(rate, c->iops[i][0], 1));
		ASSERT_LE(c->p99_us[i][0], p99_us);
		ASSERT_GE(c->iops[i][1], flood_min);
	}
}

TEST(depth_limit_on_a_slot_bound_device)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run(&s, "slotbound_damped.sim", c));
	ASSERT_LT(c->iops[3][0], 240);
	sim_free(&s);
	ASSERT_EQ(0, run(&s, "slotbound_depth.sim", c));
	depth_seconds_hold(_metadata, c, 1, c->nr_seconds, 2400, 378, 25600);
	TH_LOG("limit %u at the end", s.depth.limit);
	ASSERT_GE(s.depth.episodes, 1U);
	sim_free(&s);
	free(c);
}

/*
 * null_blk's mbps= (sim_device.c): 1000 MiB/s is 1,048,000 bytes a 1 ms
 * window, seven 128 KiB reads (the eighth is refused until the next one):
 * a flood alone moves exactly 7,000 a second; one read in flight at a time
 * 5,000 (200 us each, under the budget).  A 4k read beside eight of them
 * waits for the next window, behind the read refused before it.
 */
TEST(a_bandwidth_budget_as_null_blk_has_it)
{
	static const char *const base =
		"duration 3s\n"
		"device slots=8 latency_us=200 mbps=1000\n"
		"tenant name=N cgroup=/n\n"
		"tenant name=V cgroup=/v\n";
	static const char *const wl[] = {
		"workload N iodepth=256 bs=128k\n",
		"workload N iodepth=1 bs=128k\n",
		"workload N iodepth=8 bs=128k\nworkload V rate=1000 iodepth=1 bs=4k\n",
	};
	struct capture *c = calloc(1, sizeof(*c));
	char text[512];
	struct sim s;
	u32 i;

	ASSERT_NE(NULL, c);
	for (i = 0; i < 3; i++) {
		sim_init(&s);
		snprintf(text, sizeof(text), "%s%s", base, wl[i]);
		ASSERT_EQ(0, sim_load_string(&s, text));
		memset(c, 0, sizeof(*c));
		s.on_second = capture_second;
		s.on_second_arg = c;
		ASSERT_EQ(0, sim_run(&s));
		TH_LOG("%u: N %.0f a second, V p99 %.0f us", i, c->iops[2][0], c->p99_us[2][1]);
		ASSERT_EQ(i == 1 ? 5000 : 7000, c->iops[2][0]);
		if (i == 2) {
			/* behind the refused read at the FIFO's head: one or two windows */
			ASSERT_GT(c->p99_us[2][1], 1000);
			ASSERT_LE(c->p99_us[2][1], 2 * 1000 + 200 + 100);
		}
		sim_free(&s);
	}
	free(c);
}

/*
 * Issue 20's ssd shape (bandwidth_depth.sim): the depth limit goes 1 -> 2,
 * the raise misses, and the pace holds 2.  When the pace stops binding it
 * goes as a raise, so a miss after it paces again rather than dropping to
 * one bio (~655 MB/s): after the first two seconds the victim at its rate,
 * p99 within its 306 us target, the flood at >= 90 % of the device's 7,000
 * (before that rule: 733 MB/s, 5,600, over the run).
 */
TEST(depth_limit_paces_a_flood_on_a_bandwidth_budget)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run(&s, "bandwidth_depth.sim", c));
	depth_seconds_hold(_metadata, c, 2, c->nr_seconds, 3000, 306, 6300);
	ASSERT_GE(s.depth.paced, 1ULL);
	sim_free(&s);
	free(c);
}

/*
 * Issue 20's ratestep on the same shape (ratestep_depth.sim): at 2,800
 * IOPS the victim is above its 1,750 allocation and bound too.  The pace
 * follows the busiest bound tenant: with their mean (the victim's 11 MB/s
 * halving the flood's) a pace that held the flood looked unbinding, went,
 * and came back at the mean, lower each time: the flood fell to 20-60 MB/s
 * after the doubling.  Every second from the third: the victim at its rate
 * +-1 %, p99 within its 330 us target, the flood >= 6,300 reads a second.
 */
TEST(depth_limit_paces_the_flood_not_the_mean_across_a_rate_step)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run(&s, "ratestep_depth.sim", c));
	ASSERT_EQ(12U, c->nr_seconds);
	depth_seconds_hold(_metadata, c, 2, 4, 1400, 330, 6300);
	depth_seconds_hold(_metadata, c, 4, 8, 2800, 330, 6300);
	depth_seconds_hold(_metadata, c, 8, 12, 700, 330, 6300);
	sim_free(&s);
	free(c);
}

/*
 * S3-18 and issue 20 (doc/bench.md "ratestep"): a victim allocated 1,750
 * IOPS (isolation=wc) whose rate steps from 1,400 to 2,800 beside an
 * unconfigured flood, under depth_limit=1.  Its latency target is below the
 * device's, so its bios miss and its own misses keep the device in an
 * episode.  The episode holds no other tenant's misses, so its allocation
 * is not enforced: from 1 s after the step it runs at 2,800 +-1 % (before
 * the rule: 1,750, held in DELAY).  B judged on a latency of its own and
 * missing it would hold it (work_conserving_isolation).
 */
TEST(wc_allocation_not_held_by_own_misses)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct sim s;
	u32 i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, run_text(&s, "duration 8s\n"
			      "devconf tick_ms=10 window_ticks=5 depth_limit=1\n"
			      "device slots=8 latency_us=200\n"
			      "tenant name=V cgroup=/v alloc=1750 alloc_metric=iops isolation=wc "
			      "latency_us=150 miss_pct=1\n"
			      "tenant name=N cgroup=/n\n"
			      "workload V rate=1400 iodepth=1 bs=4k\n"
			      "workload N iodepth=128 bs=1M\n"
			      "at 3s workload V rate=2800 iodepth=1 bs=4k\n", c));
	ASSERT_GT(s.ovl.transitions, 0);
	for (i = 4; i < 8; i++) {
		TH_LOG("V at [%u, %u) s: %.0f IOPS", i, i + 1, c->iops[i][0]);
		ASSERT_TRUE(within_pct(2800, c->iops[i][0], 1));
	}
	sim_free(&s);
	free(c);
}

TEST(scenario_errors)
{
	struct sim s;

	sim_init(&s);
	ASSERT_NE(0, sim_load_string(&s, "tenant A riops=12x\n"));
	ASSERT_NE(NULL, strstr(s.err, "riops"));
	sim_free(&s);
	sim_init(&s);
	ASSERT_NE(0, sim_load_string(&s, "device slots=4\nworkload B rate=10\n"));
	ASSERT_NE(NULL, strstr(s.err, "line 2"));
	sim_free(&s);
	sim_init(&s);
	ASSERT_EQ(0, sim_load_string(&s, "tenant name=A cgroup=/x alloc=600 alloc_metric=iops\n"
				     "workload A rate=100 bs=4k:3,64k:1 read=70\n"
				     "clone A 3\nat 1s workload A.2 iodepth=4\n"));
	ASSERT_EQ(4, s.nr_tenants);
	ASSERT_EQ(600, s.tenants[3].conf.alloc);
	ASSERT_EQ(2, s.tenants[0].wl.nr_bs);
	ASSERT_EQ(1, s.nr_phases);
	sim_free(&s);
}

TEST_HARNESS_MAIN
