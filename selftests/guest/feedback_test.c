// SPDX-License-Identifier: GPL-2.0
/*
 * feedback_test.c - the feedback controllers in the kernel (guest test):
 * the per-device tick, its stats ring, the overload multiplier and the
 * pollable overloaded attribute, slots and delay for an allocation, and
 * work-conserving isolation.
 *
 * The lower device is a null_blk with timer completions (irqmode=2): a
 * fixed completion latency and a fixed queue depth, so it behaves like
 * blkiso-sim's device model (Q slots of L each).  Decisions are read from
 * the rings (/sys/kernel/blkiso/dm-N/ring and <id>/ring): one record per
 * tick with the multiplier, the detector's state, and per tenant the slot
 * limit, the delay, the mode and the completions of the tick.  Rates are
 * taken from the ring's completions over its tick times, so they measure
 * exactly the ticks the controller saw.  Rate assertions run in the
 * deterministic mode only (icount); the multiplier's tick-by-tick steps
 * depend on no rate and run in both modes.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guest_util.h"
#include "kselftest_harness.h"

#define DM_NAME		"bifeedback"
#define DM_DEV		"/dev/mapper/" DM_NAME
#define CG_A		"blkiso_fb_a"
#define CG_B		"blkiso_fb_b"
#define NULLB		"nullb_fb"

#define NEED_ICOUNT() do { \
	if (gu_no_rate()) \
		SKIP(return, "%s", gu_no_rate()); \
} while (0)

#define ISO_DELAY	1	/* struct gu_tick.mode */
#define ISO_RELAXED	3	/* BLKISO_ISO_RELAXED: work-conserving, not overloaded */

static int tenant_ring(const char *dir, unsigned long long cgid, struct gu_tick *r, int max)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%llu/ring", dir, cgid);
	return gu_ring_read(path, r, max);
}

/* The device's latest tick number, and its time (us). */
static unsigned long long dev_seq(const char *dir)
{
	struct gu_tick r;

	return gu_ring_last(dir, &r) ? 0 : r.seq;
}

static unsigned long long dev_time_us(const char *dir)
{
	struct gu_tick r;

	return gu_ring_last(dir, &r) ? 0 : r.time_us;
}

/* Poll (no sleeping on the clock: it leaps in icount mode) until tick @seq. */
static int wait_seq(const char *dir, unsigned long long seq, int timeout_s)
{
	int i;

	for (i = 0; i < timeout_s * 100; i++) {
		if (dev_seq(dir) >= seq)
			return 0;
		usleep(10 * 1000);
	}
	return -1;
}

FIXTURE(fb) {
	char lower[64];
	char dir[128];
	unsigned long long a, b;
};

/*
 * A device of @qd slots of @lat_us each (0: completions at once), at most
 * @mbps MiB/s (0: no bound), blkiso over it, cgroups A and B.
 */
static int make_dev_mbps(FIXTURE_DATA(fb) *self, unsigned int qd, unsigned long lat_us,
			 unsigned int mbps, const char *devline)
{
	struct gu_nullb nb = { .name = NULLB, .size_mb = 1024, .queue_depth = qd,
			       .irqmode = lat_us ? 2 : 0, .completion_nsec = lat_us * 1000,
			       .mbps = mbps };

	if (gu_nullb_create(&nb, self->lower, sizeof(self->lower)) ||
	    gu_sh("echo 1 > /sys/block/" NULLB "/queue/nomerges 2>/dev/null; "
		  "dmsetup create " DM_NAME " --table "
		  "\"0 $(blockdev --getsz %s) blkiso %s 0\"", self->lower, self->lower) ||
	    gu_blkiso_dir(DM_NAME, self->dir, sizeof(self->dir)))
		return -1;
	if (devline) {
		char path[192];

		snprintf(path, sizeof(path), "%s/conf", self->dir);
		if (gu_write(path, "%s", devline))
			return -1;
	}
	return 0;
}

static int make_dev(FIXTURE_DATA(fb) *self,
		    unsigned int qd, unsigned long lat_us, const char *devline)
{
	return make_dev_mbps(self, qd, lat_us, 0, devline);
}

FIXTURE_SETUP(fb)
{
	gu_sh("pkill -KILL -x fio; dmsetup remove --retry " DM_NAME " 2>/dev/null");
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_cg_create(CG_A));
	ASSERT_EQ(0, gu_cg_create(CG_B));
	self->a = gu_cg_id(CG_A);
	self->b = gu_cg_id(CG_B);
	ASSERT_NE(0ULL, self->a);
	ASSERT_NE(0ULL, self->b);
}

FIXTURE_TEARDOWN(fb)
{
	gu_sh("pkill -KILL -x fio; sleep 0.2");
	gu_sh("dmsetup remove --retry " DM_NAME " 2>/dev/null");
	gu_cg_destroy(CG_A);
	gu_cg_destroy(CG_B);
	gu_nullb_destroy(NULLB);
	gu_module_unload();
}

/*
 * Completions per second over records [from, to] of a ring, from the end
 * of record from - 1 to the end of record to (the ticks' own times).
 */
static double ring_rate(const struct gu_tick *r, int from, int to)
{
	unsigned long long sum = 0;
	int i;

	for (i = from; i <= to; i++)
		sum += r[i].completed;
	return sum * 1e6 / (double)(r[to].time_us - r[from - 1].time_us);
}

/*
 * The ring ticks at tick_ms and the tenant's record shows its traffic: the
 * completions of the ring add up to the tenant's completed counter.  The
 * device's window is 2 ticks, so the tenant leaves the tick's active list
 * (and its ring gets no more records) a few ticks after its last
 * completion: its ring then holds well under 16 records however late the
 * test reads it.  With the default window (10 ticks) it stayed on for 12
 * idle ticks, and a read about 1 s of guest time late (the deterministic
 * clock leaps while the guest waits for the host) found a full ring whose
 * oldest record, the first tick's completions, had been overwritten.
 */
TEST_F_TIMEOUT(fb, ring_records_every_tick, GUEST_TIMEOUT)
{
	struct gu_tick r[GU_TICKS_MAX];
	unsigned long long s0;
	long long before, after;
	struct gu_fio f;
	int n, i, sum = 0;

	ASSERT_EQ(0, make_dev(self, 64, 100, "tick_ms=100 window_ticks=2"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "riops=200"));
	s0 = dev_seq(self->dir);
	ASSERT_EQ(0, wait_seq(self->dir, s0 + 2, 30));
	before = gu_tenant_stat(self->dir, self->a, "completed");
	ASSERT_EQ(0, gu_fio(CG_A, &f, "--name=r --filename=" DM_DEV " --direct=1"
			    " --rw=randread --bs=4k --ioengine=psync --number_ios=100"));
	/* two more ticks: the last completions are in a record */
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 2, 30));
	after = gu_tenant_stat(self->dir, self->a, "completed");
	n = tenant_ring(self->dir, self->a, r, GU_TICKS_MAX);
	ASSERT_GT(n, 1);
	/* a full ring may have lost its oldest records: no sum to compare */
	ASSERT_LT(n, 16) TH_LOG("full ring: seq %llu to %llu", r[0].seq, r[n - 1].seq);
	for (i = 1; i < n; i++)
		ASSERT_EQ(r[i - 1].seq + 1, r[i].seq);	/* active: every tick */
	for (i = 0; i < n; i++)
		sum += r[i].completed;
	if (after - before != sum)
		for (i = 0; i < n; i++)
			TH_LOG("record %d: seq %llu time_us %llu completed %u", i,
			       r[i].seq, r[i].time_us, r[i].completed);
	/* 100 bios at 200/s: 0.5 s, well inside the ring's 16 ticks of 100 ms */
	EXPECT_EQ(after - before, sum) TH_LOG("counter %lld, ring %d", after - before, sum);
	EXPECT_EQ(100, after - before);
}

/*
 * Wait in poll(2) on the open attribute @fd until it changes (POLLPRI, as
 * sysfs_notify wakes it) or @timeout_ms; then read its value.  *@at_us: the
 * wake-up time on the monotonic clock (the ring's clock).  Returns the
 * value read, or -1.
 */
static int poll_attr(int fd, int timeout_ms, unsigned long long *at_us)
{
	struct pollfd p = { .fd = fd, .events = POLLPRI | POLLERR };
	struct timespec ts;
	char buf[8] = "";

	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*at_us = ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
	if (pread(fd, buf, sizeof(buf) - 1, 0) < 1)
		return -1;
	return atoi(buf);
}

/*
 * Overload (seed 002): every bio misses its 1 ms target on a 3 ms device.
 * The first overloaded tick adds T to the multiplier; once the misses have
 * left the window the multiplier holds for K ticks, then falls by R a tick.
 */
TEST_F_TIMEOUT(fb, overload_multiplier_adds_t_holds_k_falls_r, GUEST_TIMEOUT)
{
	const unsigned int T = 20, R = 5, K = 3;
	struct gu_tick r[GU_TICKS_MAX];
	unsigned long long up_us;
	struct gu_fio_job job;
	char path[192], buf[8];
	int fd, n, i, first = -1, last = -1;
	struct gu_fio f;

	ASSERT_EQ(0, make_dev(self, 64, 3000,
			      "overload=damped window_ticks=3 overload_pct=10 mult_up=20 "
			      "mult_down=5 holdoff_ticks=3 tick_ms=100"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "latency_us=1000"));
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 2, 30));
	snprintf(path, sizeof(path), "%s/overloaded", self->dir);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, pread(fd, buf, sizeof(buf) - 1, 0));	/* arm the poll */
	ASSERT_EQ(0, gu_fio_start(&job, CG_A, "--name=o --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=psync --runtime=1 --time_based"));
	/*
	 * The rise, read from the ring at the flip: read only at the end, a
	 * long episode and the idle tail after it could leave no tick before
	 * the first overloaded one in the device's 64 records.
	 */
	ASSERT_EQ(1, poll_attr(fd, 20000, &up_us));
	close(fd);
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 1, 30));
	snprintf(path, sizeof(path), "%s/ring", self->dir);
	n = gu_ring_read(path, r, GU_TICKS_MAX);
	for (i = 0; i < n && first < 0; i++)
		if (r[i].flags & GU_TICK_OVERLOADED)
			first = i;
	ASSERT_GT(first, 0) TH_LOG("no tick before the first overloaded one: first %d of %d",
				   first, n);
	EXPECT_EQ(0, r[first - 1].mult);
	EXPECT_EQ(T, r[first].mult) TH_LOG("first overloaded tick: M %u", r[first].mult);
	EXPECT_GT(r[first].missed, 0);
	ASSERT_EQ(0, gu_fio_wait(&job, &f));
	/* idle: the window empties, K ticks of hold, then M falls to 0 */
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 30, 60));
	n = gu_ring_read(path, r, GU_TICKS_MAX);
	ASSERT_GT(n, 10);
	for (i = 0; i < n; i++)
		if (r[i].flags & GU_TICK_OVERLOADED)
			last = i;
	ASSERT_GE(last, 0) TH_LOG("the episode's end is not in the ring");
	ASSERT_LT(last + (int)K + 2, n);
	for (i = 1; i <= (int)K; i++)
		EXPECT_EQ(r[last].mult, r[last + i].mult) TH_LOG("hold tick %d", i);
	for (i = last + K + 1; i < n && r[i - 1].mult; i++)
		EXPECT_EQ(r[i - 1].mult - (r[i - 1].mult < R ? r[i - 1].mult : R), r[i].mult)
			TH_LOG("tick %llu: M %u after %u", r[i].seq, r[i].mult, r[i - 1].mult);
	EXPECT_EQ(0, r[n - 1].mult);
	/* victims were held while M was up, and every bio still completed */
	EXPECT_EQ(0, f.status);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * S2-06: dm-N/overloaded is 0 or 1, and a poll(2) on it wakes when the
 * detector's state flips: at the first overloaded tick of a load whose
 * bios miss their 1 ms target on a 3 ms device, and at the first calm tick
 * after it.  The wake-up comes within 2 ticks (200 ms) of the tick the
 * ring records as the flip; the stats line carries the state, the
 * transitions and the window's minimum slack (S2-19).
 */
TEST_F_TIMEOUT(fb, overloaded_attribute_wakes_pollers, GUEST_TIMEOUT)
{
	unsigned long long up_us = 0, down_us = 0, t_up = 0, t_down = 0;
	struct gu_tick r[GU_TICKS_MAX];
	struct gu_fio_job job;
	struct gu_fio f;
	char path[192], buf[64], stats[1024], *tr;
	int fd, n, i, up, down;

	ASSERT_EQ(0, make_dev(self, 64, 3000, "window_ticks=3 overload_pct=10 tick_ms=100"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "latency_us=1000"));
	snprintf(path, sizeof(path), "%s/overloaded", self->dir);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, pread(fd, buf, sizeof(buf) - 1, 0));	/* arm the poll */
	EXPECT_EQ('0', buf[0]);
	ASSERT_EQ(0, gu_fio_start(&job, CG_A, "--name=o --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=psync --runtime=1 --time_based"));
	up = poll_attr(fd, 20000, &up_us);
	down = poll_attr(fd, 30000, &down_us);
	ASSERT_EQ(0, gu_fio_wait(&job, &f));
	close(fd);
	snprintf(path, sizeof(path), "%s/ring", self->dir);
	n = gu_ring_read(path, r, GU_TICKS_MAX);
	for (i = 1; i < n; i++) {
		bool was = r[i - 1].flags & GU_TICK_OVERLOADED;
		bool is = r[i].flags & GU_TICK_OVERLOADED;

		if (!was && is && !t_up)
			t_up = r[i].time_us;
		if (was && !is && t_up && !t_down)
			t_down = r[i].time_us;
	}
	TH_LOG("overloaded: woke with %d %.1f ms after the tick that set it, "
	       "with %d %.1f ms after the tick that cleared it", up,
	       (double)(up_us - t_up) / 1000, down, (double)(down_us - t_down) / 1000);
	EXPECT_EQ(1, up);
	EXPECT_EQ(0, down);
	ASSERT_NE(0ULL, t_up) TH_LOG("no overloaded tick in the ring");
	ASSERT_NE(0ULL, t_down);
	EXPECT_GE(up_us, t_up);
	EXPECT_LE(up_us, t_up + 200000);
	EXPECT_GE(down_us, t_down);
	EXPECT_LE(down_us, t_down + 200000);
	snprintf(path, sizeof(path), "%s/stats", self->dir);
	ASSERT_LT(0, gu_read(path, stats, sizeof(stats)));
	EXPECT_NE(NULL, strstr(stats, " overloaded=0 ")) TH_LOG("%s", stats);
	tr = strstr(stats, " state_transitions=");
	ASSERT_NE(NULL, tr) TH_LOG("%s", stats);
	EXPECT_LE(2, atoi(tr + 19)) TH_LOG("%s", stats);	/* up and down, at least */
	EXPECT_NE(NULL, strstr(stats, " slack_min_us=")) TH_LOG("%s", stats);
}

/*
 * Slots and delay (seed 003): a 500 IOPS allocation on a device of 7 ms
 * slots (one slot = 143 IOPS, so 500 needs 3.5 of them: slots alone cannot
 * hold it), the tenant offering 1000, is held at 500 +-5 % with fewer slots
 * than its starting 32 and a delay; a second tenant keeps >= 95 % of its
 * 300 allocation.  blkiso-sim on the same numbers: 501-504 IOPS, 4 slots,
 * 958 us.
 */
TEST_F_TIMEOUT(fb, slots_and_delay_hold_an_allocation, GUEST_TIMEOUT)
{
	struct gu_tick ra[GU_TICKS_MAX], rb[GU_TICKS_MAX];
	struct gu_fio_job ja, jb;
	struct gu_fio fa, fb_;
	unsigned long long s0;
	double a, b;
	int na, nb;

	NEED_ICOUNT();
	ASSERT_EQ(0, make_dev(self, 10, 7000, NULL));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A,
				   "alloc=500 alloc_metric=iops isolation=strict"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_B,
				   "alloc=300 alloc_metric=iops isolation=strict"));
	s0 = dev_seq(self->dir);
	ASSERT_EQ(0, gu_fio_start(&ja, CG_A, "--name=a --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=libaio --iodepth=32"
				  " --rate_iops=1000 --runtime=16 --time_based"));
	ASSERT_EQ(0, gu_fio_start(&jb, CG_B, "--name=b --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=libaio --iodepth=16"
				  " --rate_iops=300 --runtime=16 --time_based"));
	/* 12 s in: the last 16 ticks (1.6 s) of each tenant */
	ASSERT_EQ(0, wait_seq(self->dir, s0 + 120, 120));
	na = tenant_ring(self->dir, self->a, ra, GU_TICKS_MAX);
	nb = tenant_ring(self->dir, self->b, rb, GU_TICKS_MAX);
	ASSERT_EQ(0, gu_fio_wait(&ja, &fa));
	ASSERT_EQ(0, gu_fio_wait(&jb, &fb_));
	ASSERT_EQ(16, na);
	ASSERT_EQ(16, nb);
	a = ring_rate(ra, 1, na - 1);
	b = ring_rate(rb, 1, nb - 1);
	EXPECT_TRUE(values_close(a, 500, 5)) TH_LOG("A %.1f IOPS", a);
	EXPECT_GE(b, 0.95 * 300) TH_LOG("B %.1f IOPS", b);
	EXPECT_LT(ra[na - 1].slots, 32) TH_LOG("A slots %u", ra[na - 1].slots);
	EXPECT_GT(ra[na - 1].delay_us, 0) TH_LOG("A mode %u", ra[na - 1].mode);
	EXPECT_EQ(ISO_DELAY, ra[na - 1].mode);
	TH_LOG("A %.1f IOPS, %u slots, delay %llu us; B %.1f IOPS", a, ra[na - 1].slots,
	       ra[na - 1].delay_us, b);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * A strict allocation far below a fast device's speed, for a tenant that
 * submits one bio at a time: one slot alone would not slow it, so the
 * slot carries the delay of a one-slot cycle at the allocation.  200 IOPS
 * +-5 % over the last 1.5 s of a 6 s run (the tenant offers ~20,000).
 */
TEST_F_TIMEOUT(fb, strict_allocation_holds_a_qd1_tenant_on_a_fast_device, GUEST_TIMEOUT)
{
	struct gu_tick r[GU_TICKS_MAX];
	struct gu_fio_job ja;
	struct gu_fio fa;
	unsigned long long s0;
	double a;
	int n;

	NEED_ICOUNT();
	ASSERT_EQ(0, make_dev(self, 64, 0, NULL));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A,
				   "alloc=200 alloc_metric=iops isolation=strict"));
	s0 = dev_seq(self->dir);
	ASSERT_EQ(0, gu_fio_start(&ja, CG_A, "--name=a --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=psync --runtime=8 --time_based"));
	ASSERT_EQ(0, wait_seq(self->dir, s0 + 60, 120));
	n = tenant_ring(self->dir, self->a, r, GU_TICKS_MAX);
	ASSERT_EQ(0, gu_fio_wait(&ja, &fa));
	ASSERT_EQ(16, n);
	a = ring_rate(r, 1, n - 1);
	TH_LOG("%.1f IOPS, %u slots, delay %llu us, mode %u", a, r[n - 1].slots,
	       r[n - 1].delay_us, r[n - 1].mode);
	EXPECT_TRUE(values_close(a, 200, 5));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * Work-conserving isolation (S3-18): alone on an idle device, a tenant
 * with a 300 IOPS allocation runs at its offered 1000; a second tenant
 * flooding the device (no allocation, queue depth 64 on 10 slots) makes
 * it overloaded, and within 2 s the first is back at its allocation,
 * +-5 % (the tolerance, S3-18), measured from 2 s to 4.5 s after
 * overload began (single seconds are logged: 282-308 measured).  The device
 * runs the overload gate (overload=damped): against an unlimited flood, an
 * allocation alone cannot be met (the flood's queue makes every slot
 * slow); the gate holds the flood's bios as victims.  Its multiplier falls
 * between episodes and lets the flood's queue grow back for a few ticks;
 * the paced delay and the slots for the latency ride that out.
 * blkiso-sim on the same scenario (tools/sim/scenarios/work_conserving.sim):
 * 297-303 IOPS in every second from 2 s after the flood began.
 */
TEST_F_TIMEOUT(fb, work_conserving_returns_to_allocation_under_overload, GUEST_TIMEOUT)
{
	struct gu_tick r[GU_TICKS_MAX], d[GU_TICKS_MAX], all[64] = { 0 };
	struct gu_fio_job ja, jb;
	struct gu_fio fa, fb_;
	unsigned long long s0, over_seq = 0, held_ios = 0, held_us = 0;
	char path[192];
	double alone, later;
	int n, nd = 0, i, k, released = 0;

	NEED_ICOUNT();
	ASSERT_EQ(0, make_dev(self, 10, 7000, "overload=damped"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A,
				   "alloc=300 alloc_metric=iops isolation=wc"));
	s0 = dev_seq(self->dir);
	ASSERT_EQ(0, gu_fio_start(&ja, CG_A, "--name=a --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=libaio --iodepth=32"
				  " --rate_iops=1000 --runtime=13 --time_based"));
	ASSERT_EQ(0, wait_seq(self->dir, s0 + 30, 60));
	n = tenant_ring(self->dir, self->a, r, GU_TICKS_MAX);
	ASSERT_EQ(16, n);
	alone = ring_rate(r, 1, n - 1);
	EXPECT_GT(alone, 1.5 * 300) TH_LOG("alone: %.1f IOPS", alone);

	s0 = dev_seq(self->dir);
	ASSERT_EQ(0, gu_fio_start(&jb, CG_B, "--name=b --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=libaio --iodepth=64"
				  " --runtime=8 --time_based"));
	/* the first overloaded tick after the flood began */
	snprintf(path, sizeof(path), "%s/ring", self->dir);
	for (i = 0; i < 3000 && !over_seq; i++) {
		nd = gu_ring_read(path, d, GU_TICKS_MAX);
		for (k = 0; k < nd; k++)
			if (d[k].seq > s0 && (d[k].flags & GU_TICK_OVERLOADED)) {
				over_seq = d[k].seq;
				break;
			}
		if (!over_seq)
			usleep(10 * 1000);
	}
	ASSERT_NE(0ULL, over_seq) TH_LOG("the flood never overloaded the device");
	/*
	 * A's ticks from overload to 4.5 s after, gathered from reads of its
	 * 16-tick ring every 1.2 s; asserted from 2 s to 4.5 s (750 bios at
	 * 300/s, so that a few ticks' victim decisions do not decide it).
	 */
	for (k = 12; k <= 48; k += 12) {
		ASSERT_EQ(0, wait_seq(self->dir, over_seq + k, 60));
		n = tenant_ring(self->dir, self->a, r, GU_TICKS_MAX);
		ASSERT_EQ(16, n);
		for (i = 0; i < n; i++)
			if (r[i].seq >= over_seq && r[i].seq < over_seq + 64)
				all[r[i].seq - over_seq] = r[i];
	}
	ASSERT_EQ(0, gu_fio_wait(&jb, &fb_));
	ASSERT_EQ(0, gu_fio_wait(&ja, &fa));
	for (i = 1; i <= 45; i++)
		ASSERT_EQ(over_seq + i, all[i].seq) TH_LOG("tick %d after overload missing", i);
	for (i = 0; i < 4; i++)
		TH_LOG("second %d after overload: %.1f IOPS (slots %u, delay %llu us, mode %u)",
		       i + 1, ring_rate(all, 10 * i + 1, 10 * i + 10), all[10 * i + 10].slots,
		       all[10 * i + 10].delay_us, all[10 * i + 10].mode);
	/*
	 * A's rate over the intervals in which it was held: a damped
	 * overload episode may end for a tick or a few while the flood
	 * misses less (mode RELAXED: A may take what it wants, and its fio,
	 * behind its 1000/s, sends its backlog at once); such an interval and
	 * the one after it are left out.  Most of them must count.
	 */
	for (i = 21; i <= 45; i++) {
		if (all[i - 1].mode == ISO_RELAXED || all[i].mode == ISO_RELAXED ||
		    all[i - 2].mode == ISO_RELAXED) {
			released++;
			continue;
		}
		held_ios += all[i].completed;
		held_us += all[i].time_us - all[i - 1].time_us;
	}
	ASSERT_LE(released, 8) TH_LOG("%d of 25 intervals released: the overload did not last", released);
	later = held_ios * 1e6 / (double)held_us;
	TH_LOG("alone %.1f IOPS; 2-4.5 s after overload: %.1f IOPS held (%d of 25 intervals released)",
	       alone, later, released);
	EXPECT_TRUE(values_close(later, 300, 5));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/* The last tenant record's flags, after at least @ticks more device ticks. */
static unsigned int flags_after(FIXTURE_DATA(fb) *self, unsigned long long cgid, int ticks)
{
	struct gu_tick r[GU_TICKS_MAX];
	int n;

	if (wait_seq(self->dir, dev_seq(self->dir) + ticks, 60))
		return ~0U;
	n = tenant_ring(self->dir, cgid, r, GU_TICKS_MAX);
	return n > 0 ? r[n - 1].flags : ~0U;
}

#define TICK_REQUEST	4	/* BLKISO_TICK_REQUEST: request tokens in force */

/*
 * Tick by tick, up to @ticks device ticks: the tenant's last flags once
 * its request flag is @want (or the last seen when it never is).
 */
static unsigned int request_flag_within(FIXTURE_DATA(fb) *self, unsigned long long cgid,
					unsigned int want, int ticks)
{
	unsigned int fl = ~0U;
	int i;

	for (i = 0; i < ticks; i++) {
		fl = flags_after(self, cgid, 1);
		if (fl != ~0U && (fl & TICK_REQUEST) == want)
			break;
	}
	return fl;
}

/*
 * fio with @args in cgroup @cg (tenant @cgid) in the background, and poll
 * until its I/O flows: @n more completions than before it started (a cold
 * fio may take seconds to start on a loaded host).
 */
static int start_flowing(FIXTURE_DATA(fb) *self, struct gu_fio_job *j, const char *cg,
			 unsigned long long cgid, const char *args, long long n)
{
	long long since = gu_tenant_stat(self->dir, cgid, "completed");
	int i;

	if (gu_fio_start(j, cg, "%s", args))
		return -1;
	for (i = 0; i < 6000; i++) {
		if (gu_tenant_stat(self->dir, cgid, "completed") >= since + n)
			return 0;
		usleep(10 * 1000);
	}
	return -1;
}

/*
 * mode=auto (S0-33) in the kernel: the tick's selector picks request
 * tokens for bios of one size (CV 0) under a committed rate of at least
 * 1000 units/s, work tokens when the work per bio varies (CV > 0.5: 4 KiB
 * and 256 KiB reads half and half, CV ~0.97), and work tokens always
 * under a committed rate below 1000 units/s.  Each choice shows in the
 * tenant's ring (flag 4) within 3 s of flowing I/O (the window halves
 * every tick) and changes the buckets: in work mode the work cap holds the
 * tenant's units (+-5 % over 3 s, deterministic mode only).
 */
TEST_F_TIMEOUT(fb, mode_auto_switches_between_request_and_work_tokens, GUEST_TIMEOUT)
{
	unsigned long long t0, t1;
	long long u0, u1;
	struct gu_fio_job j;
	struct gu_fio f;
	unsigned int fl;
	double ups;

	ASSERT_EQ(0, make_dev(self, 16, 100, NULL));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "runits=8000 mode=auto"));
	/* no completions yet: work mode, as bi_mode_init() starts */
	fl = flags_after(self, self->a, 2);
	ASSERT_NE(~0U, fl);
	EXPECT_EQ(0U, fl & TICK_REQUEST);

	/* one size: request tokens */
	ASSERT_EQ(0, start_flowing(self, &j, CG_A, self->a, "--name=u --filename=" DM_DEV
				   " --direct=1 --rw=randread --bs=4k --ioengine=libaio"
				   " --iodepth=4 --runtime=4 --time_based", 100));
	fl = request_flag_within(self, self->a, TICK_REQUEST, 30);
	EXPECT_EQ((unsigned int)TICK_REQUEST, fl & TICK_REQUEST) TH_LOG("flags %#x", fl);
	ASSERT_EQ(0, gu_fio_wait(&j, &f));
	EXPECT_EQ(0ULL, f.errors);

	/*
	 * Sizes that vary: work tokens, and the work cap holds (measured over
	 * 3 s once switched: until then the request cap, set for 4 KiB bios,
	 * lets 256 KiB ones through at its request rate, S0-34).
	 */
	ASSERT_EQ(0, start_flowing(self, &j, CG_A, self->a, "--name=m --filename=" DM_DEV
				   " --direct=1 --rw=randread --bssplit=4k/50:256k/50"
				   " --ioengine=libaio --iodepth=4 --runtime=8 --time_based", 20));
	fl = request_flag_within(self, self->a, 0, 30);
	EXPECT_EQ(0U, fl & TICK_REQUEST) TH_LOG("flags %#x", fl);
	u0 = gu_tenant_stat(self->dir, self->a, "runits");
	t0 = dev_time_us(self->dir);
	fl = flags_after(self, self->a, 30);
	u1 = gu_tenant_stat(self->dir, self->a, "runits");
	t1 = dev_time_us(self->dir);
	EXPECT_EQ(0U, fl & TICK_REQUEST) TH_LOG("flags %#x", fl);
	ASSERT_EQ(0, gu_fio_wait(&j, &f));
	EXPECT_EQ(0ULL, f.errors);
	ASSERT_LT(t0, t1);
	ups = (u1 - u0) * 1e6 / (double)(t1 - t0);
	TH_LOG("mixed sizes under runits=8000, in work mode: %.0f units/s", ups);
	if (!gu_no_rate())
		EXPECT_TRUE(values_close(ups, 8000, 5)) TH_LOG("%.0f units/s", ups);

	/* a committed rate below 1000 units/s: work tokens even for one size */
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "runits=500"));
	ASSERT_EQ(0, start_flowing(self, &j, CG_A, self->a, "--name=s --filename=" DM_DEV
				   " --direct=1 --rw=randread --bs=4k --ioengine=libaio"
				   " --iodepth=4 --runtime=3 --time_based", 20));
	fl = flags_after(self, self->a, 15);
	EXPECT_EQ(0U, fl & TICK_REQUEST) TH_LOG("flags %#x", fl);
	ASSERT_EQ(0, gu_fio_wait(&j, &f));
	EXPECT_EQ(0ULL, f.errors);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/* The device's tick_tenants (the tenants its tick visits), or -1. */
static long long tick_tenants(const char *dir)
{
	static const char * const key[] = { "tick_tenants" };
	char path[192];
	long long v;

	snprintf(path, sizeof(path), "%s/stats", dir);
	return gu_stats_parse(path, key, &v, 1) ? -1 : v;
}

/* Tenant @cgid's counter @key per second over the next @ticks device ticks. */
static double stat_rate(FIXTURE_DATA(fb) *self, unsigned long long cgid, const char *key,
			int ticks)
{
	unsigned long long t0, t1;
	long long c0, c1;

	c0 = gu_tenant_stat(self->dir, cgid, key);
	t0 = dev_time_us(self->dir);
	if (wait_seq(self->dir, dev_seq(self->dir) + ticks, 60))
		return -1;
	c1 = gu_tenant_stat(self->dir, cgid, key);
	t1 = dev_time_us(self->dir);
	return t1 > t0 ? (c1 - c0) * 1e6 / (double)(t1 - t0) : -1;
}

/* The seq of tenant @cgid's newest ring record (0: none). */
static unsigned long long tenant_last_seq(FIXTURE_DATA(fb) *self, unsigned long long cgid)
{
	struct gu_tick r[GU_TICKS_MAX];
	int n = tenant_ring(self->dir, cgid, r, GU_TICKS_MAX);

	return n > 0 ? r[n - 1].seq : 0;
}

/*
 * The tick visits only the tenants active since it last ran (issue 14).
 * A (runits=4000 mode=request: a request-rate controller on reads) and B
 * (riops=300) read for 3 s, then stop: once idle and at rest both leave
 * the device's active list (tick_tenants 0, within 20 s), and for 50
 * ticks neither ring gets a record (the tick does nothing for them).
 * Then the same reads again: both are ticked again every tick (their
 * rings' records consecutive) and, in the deterministic mode, B is held at
 * 300 IOPS and A at the units/s it had before it idled (+-5 %), under its
 * cap: the controller resumed where it was.
 */
TEST_F_TIMEOUT(fb, idle_tenants_leave_the_tick_and_resume_where_they_were, GUEST_TIMEOUT)
{
	/* stopped (SIGINT) once measured: a loaded host may start fio late */
	const char *job_a = "--name=a --filename=" DM_DEV " --direct=1 --rw=randread"
			    " --bs=4k --ioengine=libaio --iodepth=4 --runtime=120 --time_based";
	const char *job_b = "--name=b --filename=" DM_DEV " --direct=1 --rw=randread"
			    " --bs=4k --ioengine=psync --runtime=120 --time_based";
	struct gu_tick r[GU_TICKS_MAX];
	unsigned long long last_a, last_b, s0;
	double ua[2], iob[2];
	struct gu_fio_job ja, jb;
	struct gu_fio fa, fb_;
	int round, i, n;

	ASSERT_EQ(0, make_dev(self, 16, 100, NULL));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "runits=4000 mode=request"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_B, "riops=300"));
	for (round = 0; round < 2; round++) {
		ASSERT_EQ(0, gu_fio_start(&ja, CG_A, "%s", job_a));
		ASSERT_EQ(0, start_flowing(self, &jb, CG_B, self->b, job_b, 20));
		ASSERT_EQ(0, gu_wait_stat(self->dir, self->a, "completed",
					  gu_tenant_stat(self->dir, self->a, "completed") + 20,
					  60000));
		EXPECT_LE(2, tick_tenants(self->dir));
		ua[round] = stat_rate(self, self->a, "runits", 20);
		iob[round] = stat_rate(self, self->b, "completed", 10);
		n = tenant_ring(self->dir, self->a, r, GU_TICKS_MAX);
		ASSERT_LT(8, n);
		for (i = 1; i < n; i++)
			EXPECT_EQ(r[i - 1].seq + 1, r[i].seq) TH_LOG("round %d", round);
		EXPECT_NE(0ULL, r[n - 1].rcap) TH_LOG("A's request-rate controller is off");
		gu_sh("pkill -INT -x fio");
		gu_fio_wait(&ja, &fa);	/* its status after SIGINT: not asserted */
		gu_fio_wait(&jb, &fb_);
		EXPECT_EQ(0ULL, fa.errors);
		EXPECT_EQ(0ULL, fb_.errors);
		for (i = 0; i < 2000 && tick_tenants(self->dir) != 0; i++)
			usleep(10 * 1000);
		ASSERT_EQ(0, tick_tenants(self->dir)) TH_LOG("idle tenants still ticked");
		if (round)
			break;
		last_a = tenant_last_seq(self, self->a);
		last_b = tenant_last_seq(self, self->b);
		s0 = dev_seq(self->dir);
		ASSERT_EQ(0, wait_seq(self->dir, s0 + 50, 60));
		EXPECT_EQ(last_a, tenant_last_seq(self, self->a));
		EXPECT_EQ(last_b, tenant_last_seq(self, self->b));
		EXPECT_EQ(0, tick_tenants(self->dir));
	}
	TH_LOG("A %.0f units/s before idling, %.0f after; B %.1f IOPS, %.1f", ua[0], ua[1],
	       iob[0], iob[1]);
	if (!gu_no_rate()) {
		EXPECT_TRUE(values_close(ua[1], ua[0], 5));
		EXPECT_GE(4000 * 1.05, ua[1]);
		EXPECT_TRUE(values_close(iob[0], 300, 5));
		EXPECT_TRUE(values_close(iob[1], 300, 5));
	}
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * Bios the feedback gates hold (waiting for a slot, delayed, held as
 * victims) end exactly once whatever happens meanwhile: allocations
 * changed and removed, the gate switched off and on, suspend/resume, a
 * reload, and a deferred remove while they wait.  Both modes.
 */
TEST_F_TIMEOUT(fb, held_bios_survive_reconfiguration_suspend_and_remove, GUEST_TIMEOUT)
{
	static const char * const lines[] = {
		"alloc=50", "alloc=none", "alloc=300 isolation=wc", "alloc=100 isolation=strict",
	};
	char conf[192], objects[128];
	struct gu_fio_job ja, jb;
	struct gu_fio fa, fb_;
	long long queued = 0;
	int i;

	ASSERT_EQ(0, make_dev(self, 4, 3000, "overload=damped tick_ms=50 window_ticks=3"));
	snprintf(conf, sizeof(conf), "%s/conf", self->dir);
	/*
	 * 10 IOPS, well under what A's QD32 does on the slowest guest (a
	 * debug kernel on a loaded host moved 25 IOPS, under the 100 this
	 * line had, so nothing was held), so that the strict allocation
	 * holds its bios from the start.
	 */
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A,
				   "alloc=10 alloc_metric=iops isolation=strict latency_us=1000"));
	ASSERT_EQ(0, gu_fio_start(&ja, CG_A, "--name=a --filename=" DM_DEV " --direct=1"
				  " --rw=randrw --bs=4k --ioengine=libaio --iodepth=32"
				  " --runtime=8 --time_based"));
	ASSERT_EQ(0, gu_fio_start(&jb, CG_B, "--name=b --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=64k --ioengine=libaio --iodepth=32"
				  " --runtime=8 --time_based"));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->a, "completed", 20, 60000));
	for (i = 0; i < 8; i++) {
		long long q = gu_tenant_stat(self->dir, self->a, "queued");

		if (q > queued)
			queued = q;
		ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, lines[i % 4]));
		ASSERT_EQ(0, gu_write(conf, "%s", i & 1 ? "overload=off" : "overload=damped"));
		ASSERT_EQ(0, gu_sh("dmsetup suspend " DM_NAME " && dmsetup resume " DM_NAME));
		ASSERT_EQ(0, gu_sh("dmsetup table " DM_NAME " | dmsetup reload " DM_NAME
				   " && dmsetup resume " DM_NAME));
		usleep(200 * 1000);
	}
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "alloc=20 alloc_metric=iops"));
	usleep(300 * 1000);
	/* remove while bios wait: it completes when the last one has ended */
	ASSERT_EQ(0, gu_sh("dmsetup remove --deferred " DM_NAME));
	ASSERT_EQ(0, gu_fio_wait(&ja, &fa));
	ASSERT_EQ(0, gu_fio_wait(&jb, &fb_));
	EXPECT_EQ(0, fa.status);
	EXPECT_EQ(0, fb_.status);
	EXPECT_EQ(0ULL, fa.errors + fb_.errors);
	TH_LOG("A: %llu bios, B: %llu bios, A's most held at once %lld",
	       fa.read.ios + fa.write.ios, fb_.read.ios, queued);
	EXPECT_GT(queued, 0) TH_LOG("no bio was ever held: the test tests nothing");
	for (i = 0; i < 500 && !gu_sh("dmsetup info " DM_NAME " >/dev/null 2>&1"); i++)
		usleep(10 * 1000);
	EXPECT_NE(0, gu_sh("dmsetup info " DM_NAME " >/dev/null 2>&1"));
	ASSERT_LT(0, gu_read("/sys/kernel/blkiso/objects", objects, sizeof(objects)));
	EXPECT_NE(NULL, strstr(objects, "parked=0")) TH_LOG("%s", objects);
}

/*
 * The S3 keys of a tenant, one test each, each showing the key's documented
 * effect in the module (doc/grammar.md, tenant keys): two tenants with
 * the same allocation in one boot, one with the key set and one without,
 * read from their rings.  The device is 10 slots of 7 ms (one slot ~143
 * IOPS), as in slots_and_delay_hold_an_allocation.
 */
#define ISO_SLOTS	0	/* struct gu_tick.mode: slot limit only */
#define ISO_ALLOC	"alloc=500 alloc_metric=iops isolation=strict"

/* fio in @cg, reads at @iops over @secs s, started until its I/O flows. */
static int read_at(FIXTURE_DATA(fb) *self, struct gu_fio_job *j, const char *cg,
		   unsigned long long cgid, unsigned int iops, unsigned int secs)
{
	char args[256];

	snprintf(args, sizeof(args), "--name=%s --filename=" DM_DEV " --direct=1"
		 " --rw=randread --bs=4k --ioengine=libaio --iodepth=32"
		 " --rate_iops=%u --runtime=%u --time_based", cg, iops, secs);
	return start_flowing(self, j, cg, cgid, args, 10);
}

/*
 * A (tenant line ISO_ALLOC @a) and B (@b) read at @iops each on a device of
 * 10 slots of 7 ms for 8 s; their rings' last 16 ticks, 6 s in, into @ra
 * and @rb.  0, or -1.
 */
static int settle_pair(FIXTURE_DATA(fb) *self, const char *a, const char *b,
		       unsigned int iops, struct gu_tick *ra, struct gu_tick *rb)
{
	struct gu_fio_job ja, jb;
	struct gu_fio fa, fb_;
	int na, nb, ea, eb;

	if (make_dev(self, 10, 7000, NULL) ||
	    gu_tenant_set(self->dir, "/" CG_A, a) || gu_tenant_set(self->dir, "/" CG_B, b) ||
	    read_at(self, &ja, CG_A, self->a, iops, 8))
		return -1;
	if (read_at(self, &jb, CG_B, self->b, iops, 8)) {
		gu_fio_wait(&ja, &fa);
		return -1;
	}
	wait_seq(self->dir, dev_seq(self->dir) + 60, 120);
	na = tenant_ring(self->dir, self->a, ra, GU_TICKS_MAX);
	nb = tenant_ring(self->dir, self->b, rb, GU_TICKS_MAX);
	ea = gu_fio_wait(&ja, &fa);
	eb = gu_fio_wait(&jb, &fb_);
	return ea || eb || na != 16 || nb != 16 ? -1 : 0;
}

/*
 * S3-07, delay_mode: once the slots alone cannot hold the allocation, spread
 * (A) holds every slot for delta = n / alloc - S, single (B) one slot for
 * delta = 1 / (alloc - (n - 1) / S) - S, S = 1 / r_pt the service time of a
 * slot.  Both tenants offer 1000 IOPS; both are held at their 500 (+-5 %,
 * the last 1.5 s of 6 s) in the delay mode; A's delta and slots give S, which
 * must be the device's 7 ms (+0..7 %: the path's own time), and B's slots
 * and delta, at that S, carry the allocation as the single formula has them:
 * (n - 1) / S + 1 / (S + delta) within 5 % of 500.  Checked as a rate, not
 * as a delay: with (n - 1) / S close to the allocation the delay the formula
 * gives moves ~12 % for each 1 % of S, and S comes from A's delta, which
 * moves in steps of delay_step_us (6.12, deterministic: A 6 slots of 4,957
 * or 4,857 us, S = 7,043 or 7,143 us; B 4 slots of 6,471 us in both, the
 * formula's delay 6,463 or 5,356 us, its rate 499.9 or 493.5 IOPS).  B held
 * with the spread delta instead, n / alloc - S (857 us), would carry 545.
 */
TEST_F_TIMEOUT(fb, s3_07_single_delay_mode_puts_a_larger_delay_on_one_slot, GUEST_TIMEOUT)
{
	struct gu_tick ra[GU_TICKS_MAX], rb[GU_TICKS_MAX];
	const int na = 16, nb = 16;
	double a, b, svc, single, carried;

	NEED_ICOUNT();
	ASSERT_EQ(0, settle_pair(self, ISO_ALLOC " delay_mode=spread",
				 ISO_ALLOC " delay_mode=single", 1000, ra, rb));
	a = ring_rate(ra, 1, na - 1);
	b = ring_rate(rb, 1, nb - 1);
	TH_LOG("spread: %.1f IOPS, %u slots, delay %llu us; single: %.1f IOPS, %u slots, "
	       "delay %llu us", a, ra[na - 1].slots, ra[na - 1].delay_us, b,
	       rb[nb - 1].slots, rb[nb - 1].delay_us);
	EXPECT_TRUE(values_close(a, 500, 5));
	EXPECT_TRUE(values_close(b, 500, 5));
	EXPECT_EQ(ISO_DELAY, ra[na - 1].mode);
	EXPECT_EQ(ISO_DELAY, rb[nb - 1].mode);
	svc = ra[na - 1].slots * 1e6 / 500 - ra[na - 1].delay_us;
	single = 1e6 / (500 - (rb[nb - 1].slots - 1) * 1e6 / svc) - svc;
	carried = (rb[nb - 1].slots - 1) * 1e6 / svc + 1e6 / (svc + rb[nb - 1].delay_us);
	TH_LOG("service time %.0f us; single delta %.0f us by the formula; B's slots and "
	       "delta carry %.1f IOPS", svc, single, carried);
	EXPECT_GE(svc, 7000);
	EXPECT_LE(svc, 7500);
	EXPECT_TRUE(values_close(carried, 500, 5));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * S3-12, reduce_below_alloc=1: above the allocation the slots are cut one
 * at a time (S3-04) until usage is under it, and never added back: A, at 8
 * slots offering 800 IOPS against 500, settles at 3 slots (3 x ~142 = ~426
 * IOPS, below the band) with no delay; B, the same without the key, stops
 * at the slots the allocation needs and delays them, held at 500 +-5 %.
 * hover_ms is out of reach for both: a usage crossing the band back and
 * forth would otherwise bring delays after 1 s (S3-08) whatever the key.
 */
TEST_F_TIMEOUT(fb, s3_12_reduce_below_alloc_settles_under_the_allocation, GUEST_TIMEOUT)
{
	struct gu_tick ra[GU_TICKS_MAX], rb[GU_TICKS_MAX];
	const int na = 16, nb = 16;
	double a, b;
	int i;

	NEED_ICOUNT();
	ASSERT_EQ(0, settle_pair(self, ISO_ALLOC " slots=8 hover_ms=600000 reduce_below_alloc=1",
				 ISO_ALLOC " slots=8 hover_ms=600000", 800, ra, rb));
	a = ring_rate(ra, 1, na - 1);
	b = ring_rate(rb, 1, nb - 1);
	TH_LOG("reduce_below_alloc=1: %.1f IOPS, %u slots, delay %llu us, mode %u; "
	       "0: %.1f IOPS, %u slots, delay %llu us, mode %u", a, ra[na - 1].slots,
	       ra[na - 1].delay_us, ra[na - 1].mode, b, rb[nb - 1].slots,
	       rb[nb - 1].delay_us, rb[nb - 1].mode);
	for (i = 0; i < na; i++) {
		EXPECT_EQ(3U, ra[i].slots) TH_LOG("tick %llu", ra[i].seq);
		EXPECT_EQ(0ULL, ra[i].delay_us) TH_LOG("tick %llu", ra[i].seq);
		EXPECT_EQ(ISO_SLOTS, ra[i].mode) TH_LOG("tick %llu", ra[i].seq);
	}
	EXPECT_LT(a, 0.97 * 500);	/* under the band: the tenant settled below */
	EXPECT_GT(a, 0.75 * 500);
	EXPECT_TRUE(values_close(b, 500, 5));
	EXPECT_EQ(ISO_DELAY, rb[nb - 1].mode);
	EXPECT_GT(rb[nb - 1].slots, 3U);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * S3-13, smoothing_pct: the usage the controller compares with the
 * allocation is an average whose newest tick weighs smoothing_pct %.  A
 * (100: no smoothing) and B (20) read at 300 IOPS for 1 s, then stop: in
 * every tick of their rings the usage is usage' + alpha x (rate - usage'),
 * rate the tick's completions over its time, alpha = smoothing_pct x 1024 /
 * 100 / 1024; A's falls to 0 in the first idle tick, B's decays by 20 % a
 * tick.  Deterministic mode: with 2 vCPUs on a loaded host a tenant's
 * reads may end more than its ring's 16 ticks before they are read
 * (each ring is read 6 ticks after its own tenant's reads end).
 */
TEST_F_TIMEOUT(fb, s3_13_smoothing_pct_weighs_the_newest_tick, GUEST_TIMEOUT)
{
	static const unsigned int pct[2] = { 100, 20 };
	struct gu_tick r[2][GU_TICKS_MAX];
	struct gu_fio_job j[2];
	struct gu_fio f;
	int n[2], i, k, idle;

	NEED_ICOUNT();
	ASSERT_EQ(0, make_dev(self, 10, 7000, NULL));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, ISO_ALLOC " smoothing_pct=100"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_B, ISO_ALLOC " smoothing_pct=20"));
	ASSERT_EQ(0, read_at(self, &j[0], CG_A, self->a, 300, 1));
	ASSERT_EQ(0, read_at(self, &j[1], CG_B, self->b, 300, 1));
	/*
	 * Each ring read 6 ticks after its own reads end: B may start seconds
	 * after A (the deterministic clock leaps while fio starts over 9p), and
	 * A's last busy tick would be out of its 16 records by B's end.
	 */
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, gu_fio_wait(&j[k], &f));
		ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 6, 60));
		n[k] = tenant_ring(self->dir, k ? self->b : self->a, r[k], GU_TICKS_MAX);
	}
	for (k = 0; k < 2; k++) {
		double alpha = (pct[k] * 1024 / 100) / 1024.0;

		ASSERT_EQ(16, n[k]);
		for (i = 1, idle = 0; i < n[k]; i++) {
			const struct gu_tick *t = &r[k][i], *p = &r[k][i - 1];
			double rate = t->completed * 1e6 / (double)(t->time_us - p->time_us);
			double want = p->usage + alpha * (rate - p->usage);

			ASSERT_EQ(p->seq + 1, t->seq);
			EXPECT_LE(t->usage > want ? t->usage - want : want - t->usage,
				  2 + 0.01 * rate)
				TH_LOG("smoothing_pct=%u tick %llu: %u done, rate %.1f, usage %llu "
				       "(want %.1f)", pct[k], t->seq, t->completed, rate, t->usage,
				       want);
			if (!t->completed && p->completed)
				idle = i;
		}
		ASSERT_GT(idle, 0) TH_LOG("no idle tick after the reads");
		TH_LOG("smoothing_pct=%u: usage %llu in the last busy tick, %llu in the "
		       "first idle one", pct[k], r[k][idle - 1].usage, r[k][idle].usage);
		if (pct[k] == 100) {
			EXPECT_EQ(0ULL, r[k][idle].usage);
		} else {
			EXPECT_GT(r[k][idle].usage, r[k][idle - 1].usage / 2);
		}
	}
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * S3-14, predictive=1: a usage rising towards the allocation, whose
 * smoothed slope predicts a crossing within 10 ticks, gets a delay before
 * it crosses.  A (predictive) and B (not) rise from idle to 450 IOPS, under
 * their 500: A shows a delay in a tick whose usage is still under 500, B
 * never has one (measured: A from the first full tick of its rise, at
 * usage 142: 4 slots, 957 us).  Deterministic mode: B must stay under the band.
 * A's ring is read 10 ticks after its reads flow, before B's fio starts:
 * read after B's, as it was, it held A's idle ticks before the rise by a
 * margin of about 2 ticks (16 records), which a clock leap while B's fio
 * started (the guest waiting for the host) used up.
 */
TEST_F_TIMEOUT(fb, s3_14_predictive_delays_a_rising_usage_before_it_crosses, GUEST_TIMEOUT)
{
	struct gu_tick ra[GU_TICKS_MAX], rb[GU_TICKS_MAX];
	struct gu_fio_job ja, jb;
	struct gu_fio fa, fb_;
	int na, nb, i, early = -1;

	NEED_ICOUNT();
	ASSERT_EQ(0, make_dev(self, 10, 7000, NULL));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, ISO_ALLOC " predictive=1"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_B, ISO_ALLOC " predictive=0"));
	ASSERT_EQ(0, read_at(self, &ja, CG_A, self->a, 450, 3));
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 10, 60));
	na = tenant_ring(self->dir, self->a, ra, GU_TICKS_MAX);
	ASSERT_EQ(0, read_at(self, &jb, CG_B, self->b, 450, 3));
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 10, 60));
	nb = tenant_ring(self->dir, self->b, rb, GU_TICKS_MAX);
	ASSERT_EQ(0, gu_fio_wait(&ja, &fa));
	ASSERT_EQ(0, gu_fio_wait(&jb, &fb_));
	for (i = 0; i < na; i++)
		if (early < 0 && ra[i].delay_us && ra[i].usage < 500)
			early = i;
	ASSERT_LE(0, early) TH_LOG("no delay before the crossing");
	TH_LOG("predictive=1: delay %llu us on %u slots at usage %llu", ra[early].delay_us,
	       ra[early].slots, ra[early].usage);
	EXPECT_EQ(0U, ra[0].completed) TH_LOG("the ring does not begin idle");
	for (i = 0; i < nb; i++) {
		EXPECT_EQ(0ULL, rb[i].delay_us) TH_LOG("predictive=0 tick %llu: usage %llu",
						      rb[i].seq, rb[i].usage);
		EXPECT_LT(rb[i].usage, 500ULL);
	}
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/* The index of the record of tick @seq in a tenant's ring, or -1. */
static int ring_at_seq(const struct gu_tick *r, int n, unsigned long long seq)
{
	int i;

	for (i = 0; i < n; i++)
		if (r[i].seq == seq)
			return i;
	return -1;
}

/* The index of the last record with a completion or a miss, or 0. */
static int last_busy(const struct gu_tick *r, int n)
{
	int i, last = 0;

	for (i = 0; i < n; i++)
		if (r[i].completed || r[i].miss_pm)
			last = i;
	return last;
}

/*
 * S2-16, a tenant's window_ticks: the tenant's own miss fraction is taken
 * over its own window, and with its own threshold (miss_pct) it drives the
 * device's overloaded state.  The device's own detector is off (overload_pct
 * =100: a fraction never above 100 %).  A (window_ticks=2) and B (8), both
 * with a 1 ms target on a 3 ms device (every bio misses) and miss_pct=50,
 * read for 1 s: each tenant's miss fraction is 1000 permille until exactly
 * its window after its last completion, then 0; and the device is
 * overloaded in exactly the ticks where one of them is above 50 %.
 * Deterministic mode (the rings' 16 ticks must still hold the reads).
 */
TEST_F_TIMEOUT(fb, s2_16_tenant_window_ticks_times_its_own_overload, GUEST_TIMEOUT)
{
	static const unsigned int win[2] = { 2, 8 };
	struct gu_tick r[2][GU_TICKS_MAX], d[GU_TICKS_MAX];
	unsigned long long id[2] = { self->a, self->b };
	const char *cg[2] = { CG_A, CG_B };
	struct gu_fio_job j[2];
	struct gu_fio f;
	char path[192], line[96];
	int n[2], nd, i, k, last, checked = 0;

	NEED_ICOUNT();
	ASSERT_EQ(0, make_dev(self, 64, 3000, "overload_pct=100 tick_ms=100"));
	for (k = 0; k < 2; k++) {
		snprintf(line, sizeof(line), "latency_us=1000 miss_pct=50 window_ticks=%u", win[k]);
		ASSERT_EQ(0, gu_tenant_set(self->dir, k ? "/" CG_B : "/" CG_A, line));
	}
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, start_flowing(self, &j[k], cg[k], id[k], "--name=w --filename="
					   DM_DEV " --direct=1 --rw=randread --bs=4k"
					   " --ioengine=psync --runtime=1 --time_based", 10));
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, gu_fio_wait(&j[k], &f));
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 11, 60));
	snprintf(path, sizeof(path), "%s/ring", self->dir);
	nd = gu_ring_read(path, d, GU_TICKS_MAX);
	for (k = 0; k < 2; k++) {
		/*
		 * Once its window has drained and it idled two ticks, a tenant
		 * leaves the tick's active list and its ring gets no records
		 * (a gap in the seqs): the ring may hold fewer than 16.
		 */
		n[k] = tenant_ring(self->dir, id[k], r[k], GU_TICKS_MAX);
		for (last = -1, i = 0; i < n[k]; i++)
			if (r[k][i].completed)
				last = i;
		ASSERT_LE(0, last) TH_LOG("window_ticks=%u: no completion in the ring", win[k]);
		ASSERT_LT(last + (int)win[k], n[k]);
		/* ticked every tick while its window held misses */
		ASSERT_EQ(r[k][last].seq + win[k], r[k][last + win[k]].seq);
		for (i = last; i < last + (int)win[k]; i++)
			EXPECT_EQ(1000U, r[k][i].miss_pm)
				TH_LOG("window_ticks=%u, tick %d after the last completion",
				       win[k], i - last);
		EXPECT_EQ(0U, r[k][last + win[k]].miss_pm) TH_LOG("window_ticks=%u", win[k]);
	}
	/* the device's state, tick by tick, is A's or B's signal */
	for (i = 0; i < nd; i++) {
		bool want = false, known = true;

		for (k = 0; k < 2; k++) {
			int at = ring_at_seq(r[k], n[k], d[i].seq);

			if (at >= 0)
				want |= r[k][at].miss_pm > 500;
			else if (d[i].seq < r[k][0].seq || d[i].seq < r[k][last_busy(r[k], n[k])].seq)
				known = false;	/* before its ring, or a gap while busy */
			/* else: off the active list after its window: at rest, 0 */
		}
		if (!known)
			continue;
		EXPECT_EQ(want, !!(d[i].flags & GU_TICK_OVERLOADED)) TH_LOG("tick %llu", d[i].seq);
		checked++;
	}
	EXPECT_LE(12, checked);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/* The device's counter @key in dm-N/stats, or -1. */
static long long dev_stat(const char *dir, const char *key)
{
	const char * const keys[] = { key };
	char path[192];
	long long v;

	snprintf(path, sizeof(path), "%s/stats", dir);
	return gu_stats_parse(path, keys, &v, 1) ? -1 : v;
}

/* What one run of depth_limit_case() measured. */
struct depth_run {
	double alone, beside;	/* B's bytes/s alone and beside A (pieces: not bios) */
	long long rios, rbytes;	/* B's completed reads and bytes while bound */
	struct gu_fio fa;	/* A's fio */
};

/*
 * Tenant @cgid's completions and misses over the next @ticks ticks of the
 * device, summed from its ring (16 ticks), read every 8 ticks as they
 * pass, and, if @span_us, the time those ticks covered, from their own
 * times (tick_ms is rounded up to whole jiffies: 10 ms is 12 at HZ=250).
 * Returns the number of ticks seen (fewer when the reader fell 16
 * behind), or -1 on a timeout.
 */
static int ring_sum(FIXTURE_DATA(fb) *self, unsigned long long cgid, int ticks,
		    unsigned long long *done, unsigned long long *missed,
		    unsigned long long *span_us)
{
	struct gu_tick r[GU_TICKS_MAX];
	unsigned long long next = dev_seq(self->dir) + 1, end = next + ticks - 1, at;
	unsigned long long first_us = 0, last_us = 0, first_seq = 0;
	int n, i, seen = 0;

	*done = *missed = 0;
	for (;;) {
		at = dev_seq(self->dir);
		n = tenant_ring(self->dir, cgid, r, GU_TICKS_MAX);
		for (i = 0; i < n; i++) {
			if (r[i].seq < next || r[i].seq > end)
				continue;
			*done += r[i].completed;
			*missed += r[i].missed;
			next = r[i].seq + 1;
			if (!seen++) {
				first_us = r[i].time_us;
				first_seq = r[i].seq;
			}
			last_us = r[i].time_us;
		}
		if (at >= end)
			break;
		if (wait_seq(self->dir, at + 8 < end ? at + 8 : end, 60))
			return -1;
	}
	/*
	 * @seen ticks of the mean interval between the first and the last
	 * seen (the first one's completions came in the interval before it;
	 * a tick missed by a late reader counts in neither @done nor the span)
	 */
	if (span_us)
		*span_us = seen > 1 ? (last_us - first_us) * seen / (next - 1 - first_seq) : 0;
	return seen;
}

/*
 * Issue 20's depth limit (depth_limit=1, doc/controllers.md "Depth
 * limit") on the slot-bound shape: 8 slots x 1 ms; A a 4k QD1 reader at
 * 400 IOPS with an allocation and a 1.5 ms latency target (miss_pct=1),
 * B an unconfigured flood (@flood: fio's job) that keeps the device's
 * queue full (alone it moves what 8,000 requests a second can).  Without
 * the limit A's bios wait behind the flood's queue: A's own ring showed
 * 37 % of its bios missed (6.1 -i: 178 and 185 of 480 with the 128k
 * flood, 149 and 170 with the 1 MiB one, depth_limit=0), and with it 1 to
 * 3 of 480.  (The shape was 8 slots x 250 us, A at 2,000 IOPS and 400 us,
 * until CI's twenty-third-session run: there the guest's CPU, not the
 * device, bounded the flood, so A missed under 1 % with no limit at all
 * (2 to 13 of 2,400) and whether the limit ever came on was chance.)
 * Both modes: the limit comes on while both run (depth_episodes >= 1)
 * and the ledger holds.  Deterministic mode: from 2 s on the limit is in
 * force (1..7: one below the 8 slots), A missed at most 2 % of its bios over DEPTH_TICKS ticks
 * (its own ring, summed as the ticks pass), A keeps 400 IOPS +-5 % (fio).
 * The span is long because the limit finds the depth that misses by
 * trying it: a try costs at most one tick of A's bios at that depth (4 of
 * its 480), and a try comes at most once a second under a known ceiling
 * (doc/controllers.md).  In the ordinary mode on a loaded host A's
 * device latency swings whatever B does and the limit holds B at one bio
 * (6.1, 2 vCPUs: limit 1, 10 to 18 of 480 missed; logged, not asserted).
 */
#define DEPTH_TICKS	100
static void depth_limit_case(struct __test_metadata *_metadata, FIXTURE_DATA(fb) *self,
			     const char *flood, struct depth_run *out)
{
	struct gu_fio_job ja, jb;
	struct gu_fio fb_;
	unsigned long long done, missed, t0, t1;
	long long limit, rios, rbytes;
	int n;

	ASSERT_EQ(0, make_dev(self, 8, 1000, "depth_limit=1 tick_ms=10 window_ticks=5"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "alloc=500 alloc_metric=iops "
				   "isolation=wc latency_us=1500 miss_pct=1"));
	ASSERT_EQ(0, start_flowing(self, &jb, CG_B, self->b, flood, 100));
	out->alone = stat_rate(self, self->b, "rbytes", 50);
	EXPECT_EQ(0, dev_stat(self->dir, "depth_episodes")) TH_LOG("a limit with no victim");
	ASSERT_EQ(0, start_flowing(self, &ja, CG_A, self->a, "--name=a --filename=" DM_DEV
				   " --direct=1 --rw=randread --bs=4k --ioengine=psync"
				   " --rate_iops=400 --runtime=4 --time_based", 10));
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 200, 60));
	rios = gu_tenant_stat(self->dir, self->b, "rios");
	rbytes = gu_tenant_stat(self->dir, self->b, "rbytes");
	t0 = dev_time_us(self->dir);
	n = ring_sum(self, self->a, DEPTH_TICKS, &done, &missed, NULL);
	ASSERT_LE(0, n);
	t1 = dev_time_us(self->dir);
	out->rbytes = gu_tenant_stat(self->dir, self->b, "rbytes") - rbytes;
	out->beside = t1 > t0 ? out->rbytes * 1e6 / (double)(t1 - t0) : -1;
	out->rios = gu_tenant_stat(self->dir, self->b, "rios") - rios;
	limit = dev_stat(self->dir, "depth_limit");
	ASSERT_EQ(0, gu_fio_wait(&ja, &out->fa));
	ASSERT_EQ(0, gu_fio_wait(&jb, &fb_));
	TH_LOG("B alone %.1f MB/s, beside A %.1f (%.0f KiB a read); limit %lld, episodes %lld; "
	       "A %.1f IOPS, p99 %.0f us, %llu of %llu missed in %d ticks",
	       out->alone / 1e6, out->beside / 1e6, out->rios ? out->rbytes / 1024.0 / out->rios : 0,
	       limit, dev_stat(self->dir, "depth_episodes"), out->fa.read.iops,
	       out->fa.read.clat_p99_ns / 1e3, missed, done, n);
	EXPECT_EQ(0ULL, fb_.errors);
	EXPECT_EQ(0ULL, out->fa.errors);
	EXPECT_LE(1, dev_stat(self->dir, "depth_episodes"));
	EXPECT_EQ(8, dev_stat(self->dir, "lower_slots"));	/* the limit's top: 7 */
	EXPECT_TRUE(gu_ledger_ok(self->dir));
	if (!gu_icount())
		return;
	EXPECT_LE(DEPTH_TICKS * 9 / 10, n) TH_LOG("the ring was read too late");
	EXPECT_LE(1, limit);
	EXPECT_GE(7, limit);	/* one below the 8 slots at most */
	EXPECT_LE(1000 * missed, 20 * done);
	EXPECT_TRUE(values_close(out->fa.read.iops, 400, 5));
}

/*
 * S3-18 and issue 20 (the mid-run rate step, doc/bench.md "ratestep"): a
 * work-conserving allocation is enforced in an overload episode only when
 * other tenants' misses are in it.  A, allocated 1,000 IOPS, reads at twice
 * that with a latency target below the device's 250 us, so every one of its
 * bios misses and its own misses keep the device in an episode; B, an
 * unconfigured flood, is judged on no latency.  The room an episode makes
 * is A's own: A keeps its 2,000 IOPS (+-5 %, fio, deterministic mode).
 * Before this rule its controller held it at its allocation in DELAY
 * (blkiso-sim, the same shape: 1,750 of 2,800 IOPS after a step; sim_test
 * wc_allocation_not_held_by_own_misses).  The depth limit binds B meanwhile.
 */
TEST_F_TIMEOUT(fb, wc_allocation_not_held_by_own_misses, GUEST_TIMEOUT)
{
	struct gu_tick r[GU_TICKS_MAX];
	struct gu_fio_job ja, jb;
	struct gu_fio fa, fb_;
	int n, k, delay = 0;

	NEED_ICOUNT();
	ASSERT_EQ(0, make_dev(self, 8, 250, "depth_limit=1 tick_ms=10 window_ticks=5"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "alloc=1000 alloc_metric=iops "
				   "isolation=wc latency_us=100 miss_pct=1"));
	ASSERT_EQ(0, start_flowing(self, &jb, CG_B, self->b, "--name=b --filename=" DM_DEV
				   " --direct=1 --rw=randread --bs=128k --ioengine=libaio"
				   " --iodepth=64 --runtime=6 --time_based", 100));
	ASSERT_EQ(0, start_flowing(self, &ja, CG_A, self->a, "--name=a --filename=" DM_DEV
				   " --direct=1 --rw=randread --bs=4k --ioengine=psync"
				   " --rate_iops=2000 --runtime=4 --time_based", 10));
	/* A's 16 newest ticks, 2 s into its run */
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 200, 60));
	n = tenant_ring(self->dir, self->a, r, GU_TICKS_MAX);
	for (k = 0; k < n; k++)
		delay += r[k].mode == 1;	/* BI_ISO_DELAY */
	ASSERT_EQ(0, gu_fio_wait(&ja, &fa));
	ASSERT_EQ(0, gu_fio_wait(&jb, &fb_));
	TH_LOG("A %.1f IOPS (allocated 1000), p99 %.0f us; its last %d ticks: %d in DELAY; "
	       "depth episodes %lld",
	       fa.read.iops, fa.read.clat_p99_ns / 1e3, n, delay,
	       dev_stat(self->dir, "depth_episodes"));
	EXPECT_EQ(0ULL, fa.errors);
	EXPECT_EQ(0ULL, fb_.errors);
	EXPECT_LE(1, dev_stat(self->dir, "depth_episodes")) TH_LOG("A's misses never counted");
	EXPECT_TRUE(values_close(fa.read.iops, 2000, 5));
	EXPECT_EQ(0, delay);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * A flood of 128k reads at QD64 (two requests each at null_blk's 255
 * sectors: cut in two while bound): B moves at least half the bytes it
 * moved alone (6.1 -i: 91 %, 490 -> 448 MB/s with the limit at 7; on
 * the former 250 us shape 70 % in bios before the cut, 14,747 -> 10,386
 * IOPS, the limit at 3; 88 % in blkiso-sim, slotbound_depth.sim).
 */
TEST_F_TIMEOUT(fb, depth_limit_bounds_an_unconfigured_flood, GUEST_TIMEOUT)
{
	struct depth_run d;

	depth_limit_case(_metadata, self, "--name=b --filename=" DM_DEV " --direct=1"
			 " --rw=randread --bs=128k --ioengine=libaio --iodepth=64"
			 " --runtime=8 --time_based", &d);
	if (gu_icount())
		EXPECT_GE(d.beside, d.alone / 2);
}

/*
 * A flood of 1 MiB io_uring reads at QD32 (REQ_NOWAIT; each eight of the
 * lower queue's 128 KiB requests, the whole device): while the limit binds
 * B, its reads reach the device cut to one request each (a NOWAIT one is
 * cut too, its pieces and its rest without the flag: fio, which stops at
 * an error, fails if a rest is refused or goes down whole with the flag
 * after its first pieces did, e.g. after the limit let go), so its
 * reads completed from 2 s on average at most 192 KiB (128 KiB, and a
 * margin for a whole read sent before a tick that let go: 1 MiB uncut),
 * and A's bounds hold as with the 128k flood.
 */
TEST_F_TIMEOUT(fb, depth_limit_cuts_a_nowait_flood_of_large_reads, GUEST_TIMEOUT)
{
	struct depth_run d;

	depth_limit_case(_metadata, self, "--name=b --filename=" DM_DEV " --direct=1"
			 " --rw=randread --bs=1M --ioengine=io_uring --iodepth=32"
			 " --runtime=8 --time_based", &d);
	if (!gu_icount())
		return;	/* on a loaded host B's 8 s may end before the window */
	ASSERT_LT(0, d.rios);
	EXPECT_GE(192 * 1024 * d.rios, d.rbytes) TH_LOG("%lld bytes in %lld reads", d.rbytes, d.rios);
}

/*
 * The depth limit's pace (ctl_depth.h, "Pace") on the bench's ssd shape:
 * 8 slots x 200 us, 1000 MiB/s.  The device's bandwidth, not its slots,
 * is what A waits behind: null_blk stops its queue for the rest of a 1 ms
 * budget once it is spent.  One of B's 128 KiB requests in flight moves
 * about 55 % of the device; two, more than it moves, and A waits out the
 * budget's millisecond.  The limit without a pace hovered at one (B at
 * 557 MB/s in the bench, 59 % of blkiso's best static cap); with it the
 * limit goes to two and B is spaced at what one moved, faster while A's
 * misses stay within what its 1 % allows.  A: 4k QD1 reads at 2,000 IOPS,
 * allocated 2,500 with a 400 us target (its device latency alone is
 * ~220 us).  Deterministic mode, over 200 ticks from 3 s on (the pace's
 * ramp): the pace came on, A missed at most 2 % of its bios (its ring), A
 * keeps its rate (+-5 %, fio), and B moves at least 70 % of what it moved
 * alone (with the module before the pace: 54 %, 6.1 -i; with it 96 %).
 * Both modes: no error, the ledger holds; the figures only in the
 * deterministic one.
 */
TEST_F_TIMEOUT(fb, depth_limit_paces_a_flood_on_a_bandwidth_bound_device, GUEST_TIMEOUT)
{
	unsigned long long done, missed, t0, t1;
	struct gu_fio_job ja, jb;
	struct gu_fio fa, fb_;
	double alone, beside;
	long long rbytes, pace;
	int n;

	ASSERT_EQ(0, make_dev_mbps(self, 8, 200, 1000, "depth_limit=1 tick_ms=10 window_ticks=5"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "alloc=2500 alloc_metric=iops "
				   "isolation=wc latency_us=400 miss_pct=1"));
	ASSERT_EQ(0, start_flowing(self, &jb, CG_B, self->b, "--name=b --filename=" DM_DEV
				   " --direct=1 --rw=randread --bs=1M --ioengine=io_uring"
				   " --iodepth=32 --runtime=12 --time_based", 100));
	alone = stat_rate(self, self->b, "rbytes", 50);
	ASSERT_EQ(0, start_flowing(self, &ja, CG_A, self->a, "--name=a --filename=" DM_DEV
				   " --direct=1 --rw=randread --bs=4k --ioengine=psync"
				   " --rate_iops=2000 --runtime=8 --time_based", 10));
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 300, 60));
	rbytes = gu_tenant_stat(self->dir, self->b, "rbytes");
	t0 = dev_time_us(self->dir);
	n = ring_sum(self, self->a, 200, &done, &missed, NULL);
	ASSERT_LE(0, n);
	t1 = dev_time_us(self->dir);
	beside = t1 > t0 ? (gu_tenant_stat(self->dir, self->b, "rbytes") - rbytes) * 1e6 /
			   (double)(t1 - t0) : -1;
	pace = dev_stat(self->dir, "depth_pace_ups");
	ASSERT_EQ(0, gu_fio_wait(&ja, &fa));
	ASSERT_EQ(0, gu_fio_wait(&jb, &fb_));
	TH_LOG("B alone %.1f MB/s, beside A %.1f (%.0f %%); pace %lld units/s at the end, "
	       "paced %lld, episodes %lld; A %.1f IOPS, p99 %.0f us, %llu of %llu missed in %d ticks",
	       alone / 1e6, beside / 1e6, alone > 0 ? 100 * beside / alone : 0, pace,
	       dev_stat(self->dir, "depth_paced"), dev_stat(self->dir, "depth_episodes"),
	       fa.read.iops, fa.read.clat_p99_ns / 1e3, missed, done, n);
	EXPECT_EQ(0ULL, fa.errors);
	EXPECT_EQ(0ULL, fb_.errors);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
	if (!gu_icount())
		return;	/* the ordinary mode (the debug kernel's): the bios' way only */
	EXPECT_LE(180, n) TH_LOG("the ring was read too late");
	EXPECT_LE(1, dev_stat(self->dir, "depth_paced"));
	EXPECT_LE(1000 * missed, 20 * done);
	EXPECT_TRUE(values_close(fa.read.iops, 2000, 5));
	EXPECT_GE(beside, alone * 0.70);
}

/*
 * The slow shape (2 slots x 4 ms) with the bench's depth-limit line: B,
 * unconfigured, reads 1 MiB with io_uring at QD128 for @a_secs + 3 s; A
 * reads 4k with psync at @iops for @a_secs, allocated @alloc IOPS with a
 * 6 ms target (1.5x the device).  Returns 0 once both flow and 100 ticks
 * (1 s) have passed for the flood's queue to drain and the limit to settle.
 */
static int slow_flood_and_victim(FIXTURE_DATA(fb) *self, struct gu_fio_job *ja,
				 struct gu_fio_job *jb, int alloc, int iops, int a_secs)
{
	char line[128], args[256];

	if (make_dev(self, 2, 4000, "depth_limit=1 tick_ms=10 window_ticks=5"))
		return -1;
	snprintf(line, sizeof(line), "alloc=%d alloc_metric=iops isolation=wc "
		 "latency_us=6000 miss_pct=1", alloc);
	if (gu_tenant_set(self->dir, "/" CG_A, line))
		return -1;
	snprintf(args, sizeof(args), "--name=b --filename=" DM_DEV " --direct=1 --rw=randread"
		 " --bs=1M --ioengine=io_uring --iodepth=128 --runtime=%d --time_based",
		 a_secs + 3);
	if (start_flowing(self, jb, CG_B, self->b, args, 20))
		return -1;
	snprintf(args, sizeof(args), "--name=a --filename=" DM_DEV " --direct=1 --rw=randread"
		 " --bs=4k --ioengine=psync --rate_iops=%d --runtime=%d --time_based",
		 iops, a_secs);
	if (start_flowing(self, ja, CG_A, self->a, args, 10))
		return -1;
	return wait_seq(self->dir, dev_seq(self->dir) + 100, 60);
}

/*
 * Issue 20, the slow shape (2 slots x 4 ms, doc/bench.md): a 1 MiB read
 * of the flood is nine of null_blk's requests, 18 ms whole on two slots,
 * longer than a tick, so B has ticks without a completion.  B stays
 * active (it has bios in flight) and so above its commitment, bound and
 * cut: before this, the tick took B for idle in those ticks and let its
 * reads go whole, each on both slots (the bench's slow run: the limit at
 * 1 for 3 s, the neighbour at 68 MB/s, twice what one request at a time
 * moves, and the victim's reads waiting a whole request: 4 to 8 ms, a
 * third of them over the target).  A: 4k QD1 psync reads at 150 IOPS,
 * allocated 190, target 6 ms (1.5x the device).  Deterministic mode: B's
 * reads while A runs average at most 192 KiB (cut to 127.5 KiB, and a
 * margin for a read sent whole before the limit came on), and over 200
 * ticks from 1 s after A flows (its own ring, timed by the ticks' own
 * times) A misses at most 2 % of its bios and completes at least 95 % of
 * its 150 IOPS (without a policy 43 % of its rate).  Not fio's rate over
 * its whole run: A's first reads wait
 * behind the flood's whole reads queued below blkiso before the limit came
 * on (doc/bench.md, the eighteenth session's slow runs), up to 2.3 s of the
 * device (128 reads x 9 requests x 4 ms / 2 slots), and how many of them
 * are there depends on when fio, started over 9p, sends A's first read
 * (6.1 -i: 150, 140.1 and, in CI, 121.2 IOPS over fio's 5 s, each time
 * with 360 reads in the ring's 200 ticks; logged, not asserted).
 * B at QD128, as the bench's flood.  Not a test of the fix alone: main's
 * module (0740807) passes it too, at QD32 and at QD128 (6.1 -i: B's reads
 * 114 KiB on average, 2 of A's 360 bios missed), so here B was bound in
 * most ticks before the change as well; only A's fio p99 differed (8,028
 * and 7,832 us against 4,620-6,980 with the change, too close to assert).
 * What the bench's slow run showed (B's reads whole for the whole run)
 * this case does not reproduce; it guards the binding and the cut on a
 * shape whose reads outlast a tick.  Both modes: no error, the ledger holds.
 */
TEST_F_TIMEOUT(fb, depth_limit_binds_a_flood_whose_reads_outlast_a_tick, GUEST_TIMEOUT)
{
	struct gu_fio_job ja, jb;
	struct gu_fio fa, fb_;
	unsigned long long done, missed, span_us;
	long long rios, rbytes, limit;
	double ring_iops;
	int n;

	ASSERT_EQ(0, slow_flood_and_victim(self, &ja, &jb, 190, 150, 5));
	rios = gu_tenant_stat(self->dir, self->b, "rios");
	rbytes = gu_tenant_stat(self->dir, self->b, "rbytes");
	n = ring_sum(self, self->a, 200, &done, &missed, &span_us);
	ASSERT_LE(0, n);
	limit = dev_stat(self->dir, "depth_limit");
	rios = gu_tenant_stat(self->dir, self->b, "rios") - rios;
	rbytes = gu_tenant_stat(self->dir, self->b, "rbytes") - rbytes;
	ASSERT_EQ(0, gu_fio_wait(&ja, &fa));
	ASSERT_EQ(0, gu_fio_wait(&jb, &fb_));
	ring_iops = span_us ? done * 1e6 / span_us : 0;
	TH_LOG("B %lld reads, %.0f KiB a read; limit %lld, episodes %lld, held %lld; "
	       "A %.1f IOPS (fio), p99 %.0f us, %llu of %llu missed in %d ticks (%.3f s: %.1f IOPS)",
	       rios, rios ? rbytes / 1024.0 / rios : 0, limit,
	       dev_stat(self->dir, "depth_episodes"), dev_stat(self->dir, "depth_held"),
	       fa.read.iops, fa.read.clat_p99_ns / 1e3, missed, done, n, span_us / 1e6,
	       ring_iops);
	EXPECT_EQ(0ULL, fb_.errors);
	EXPECT_EQ(0ULL, fa.errors);
	EXPECT_LE(1, dev_stat(self->dir, "depth_episodes"));
	/* the limit's top is one below the lower queue's 2 slots */
	EXPECT_EQ(2, dev_stat(self->dir, "lower_slots"));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
	if (!gu_icount())
		return;
	EXPECT_LE(180, n) TH_LOG("the ring was read too late");
	EXPECT_EQ(1, limit);	/* while A runs: never the 2 that fills both slots */
	ASSERT_LT(0, rios);
	EXPECT_GE(192 * 1024 * rios, rbytes);
	EXPECT_LE(1000 * missed, 20 * done);
	EXPECT_LE(0.95 * 150, ring_iops);
}

/*
 * Issue 20, the slow shape with a sparse victim (ratestep's R/2 there): A
 * reads 4k at 40 IOPS, QD1, so most 10 ms ticks see neither a completion
 * of A nor a bio of A in flight.  The limit counts A as active between
 * its bios (for twice its quiet stretches, bi_depth_recent_tick()); before
 * that, each such tick let the limit go, B's QD128 of 1 MiB reads went
 * down in that tick and A's next read waited behind them (the bench's
 * ratestep on slow: about 4 episodes a second, p99 2.5x at 80 IOPS and
 * 4.0x at 40).  Over 200 ticks from 1 s after A flows: the limit did not
 * start again (at most one more episode) and, deterministic mode, A
 * missed at most 2.5 % of its bios (2 of its 80), the limit at 1.
 */
TEST_F_TIMEOUT(fb, depth_limit_holds_a_sparse_victim_between_its_bios, GUEST_TIMEOUT)
{
	struct gu_fio_job ja, jb;
	struct gu_fio fa, fb_;
	unsigned long long done, missed, span_us;
	long long episodes, limit;
	int n;

	ASSERT_EQ(0, slow_flood_and_victim(self, &ja, &jb, 50, 40, 6));
	episodes = dev_stat(self->dir, "depth_episodes");
	n = ring_sum(self, self->a, 200, &done, &missed, &span_us);
	ASSERT_LE(0, n);
	limit = dev_stat(self->dir, "depth_limit");
	episodes = dev_stat(self->dir, "depth_episodes") - episodes;
	ASSERT_EQ(0, gu_fio_wait(&ja, &fa));
	ASSERT_EQ(0, gu_fio_wait(&jb, &fb_));
	TH_LOG("A %.1f IOPS (fio), p99 %.0f us, %llu of %llu missed in %d ticks; "
	       "limit %lld, %lld episodes in them", fa.read.iops, fa.read.clat_p99_ns / 1e3,
	       missed, done, n, limit, episodes);
	EXPECT_EQ(0ULL, fb_.errors);
	EXPECT_EQ(0ULL, fa.errors);
	EXPECT_LE(episodes, 1);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
	if (!gu_icount())
		return;
	EXPECT_LE(180, n) TH_LOG("the ring was read too late");
	ASSERT_LT(0ULL, done);
	EXPECT_EQ(1, limit);
	EXPECT_LE(1000 * missed, 25 * done);
}

/*
 * A tenant the depth limit does not bind (a device without the limit, the
 * fast shape: 32 slots x 50 us) reading and writing 1 MiB with io_uring at
 * QD32: REQ_NOWAIT bios of eight of the lower queue's requests each.  6.1's
 * lower queue refuses a REQ_NOWAIT bio it would split (BLK_STS_AGAIN, an
 * error of blkiso's completion) and io_uring sends it again from a worker
 * thread, so without blkiso_nowait_unsplit() every one of B's bios was an
 * error here on 6.1.  Both modes: at least 100 reads and 100 writes, none
 * with an error in blkiso's counter, none in fio's.
 */
TEST_F_TIMEOUT(fb, nowait_bios_the_lower_queue_would_split_are_not_refused, GUEST_TIMEOUT)
{
	struct gu_fio_job jb;
	struct gu_fio f;
	long long rios, wios, errors;

	ASSERT_EQ(0, make_dev(self, 32, 50, NULL));
	ASSERT_EQ(0, start_flowing(self, &jb, CG_B, self->b, "--name=b --filename=" DM_DEV
				   " --direct=1 --rw=randrw --bs=1M --ioengine=io_uring"
				   " --iodepth=32 --runtime=2 --time_based", 100));
	ASSERT_EQ(0, gu_fio_wait(&jb, &f));
	rios = gu_tenant_stat(self->dir, self->b, "rios");
	wios = gu_tenant_stat(self->dir, self->b, "wios");
	errors = gu_tenant_stat(self->dir, self->b, "errors");
	TH_LOG("B: %lld reads, %lld writes, %lld with an error in blkiso; fio %llu errors",
	       rios, wios, errors, f.errors);
	EXPECT_LE(100, rios);
	EXPECT_LE(100, wios);
	EXPECT_EQ(0, errors);
	EXPECT_EQ(0ULL, f.errors);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/* What cut_case() measured of B's reads from a tick after it flowed. */
struct cut_run {
	long long rios, rbytes, errors, episodes;
	unsigned long long fio_errors;
};

static void cut_case(struct __test_metadata *_metadata, FIXTURE_DATA(fb) *self,
		     unsigned int slots, unsigned int lat_us, struct cut_run *out)
{
	struct gu_fio_job jb;
	struct gu_fio f;

	ASSERT_EQ(0, make_dev(self, slots, lat_us, "depth_limit=1 tick_ms=10 window_ticks=5"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG_A, "alloc=400 alloc_metric=iops "
				   "isolation=wc latency_us=1500 miss_pct=1"));
	ASSERT_EQ(0, start_flowing(self, &jb, CG_B, self->b, "--name=b --filename=" DM_DEV
				   " --direct=1 --rw=randread --bs=1M --ioengine=io_uring"
				   " --iodepth=32 --runtime=3 --time_based", 100));
	/* from a tick after B flows: the tick marks it above its commitment */
	ASSERT_EQ(0, wait_seq(self->dir, dev_seq(self->dir) + 2, 60));
	out->rios = gu_tenant_stat(self->dir, self->b, "rios");
	out->rbytes = gu_tenant_stat(self->dir, self->b, "rbytes");
	ASSERT_EQ(0, gu_fio_wait(&jb, &f));
	out->rios = gu_tenant_stat(self->dir, self->b, "rios") - out->rios;
	out->rbytes = gu_tenant_stat(self->dir, self->b, "rbytes") - out->rbytes;
	out->errors = gu_tenant_stat(self->dir, self->b, "errors");
	out->episodes = dev_stat(self->dir, "depth_episodes");
	out->fio_errors = f.errors;
	TH_LOG("%u slots: B %lld reads, %.0f KiB a read, %lld with an error in blkiso, "
	       "fio %llu errors; episodes %lld", slots, out->rios,
	       out->rios ? out->rbytes / 1024.0 / out->rios : 0, out->errors, f.errors,
	       out->episodes);
	EXPECT_EQ(0, out->episodes);
	EXPECT_EQ(0, out->errors);
	EXPECT_EQ(0ULL, out->fio_errors);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
	ASSERT_LE(100, out->rios);
}

/*
 * On a device with the depth limit, a tenant above its commitment has its
 * reads cut to one lower request while the limit is off too, where whole
 * they would be more requests than the device has slots
 * (doc/controllers.md, "Cut before the limit comes on"): a whole 1 MiB read
 * sent while the limit was off keeps queueing its nine requests below
 * blkiso once it comes on (the slow shape's first second, twenty-seventh
 * session).  2 slots x 4 ms (the slow shape), A configured (an allocation
 * and a latency target) but idle, so the limit never comes on; B, no line,
 * 1 MiB io_uring reads at QD32 (REQ_NOWAIT: cut with their rests noted,
 * never refused).  Each is cut into 127.5 KiB pieces until its rest fits
 * the 2 slots (seven pieces and a rest of 131.5 KiB: 128 KiB a read).
 * Both modes: no episode, B's reads after it flows average at most 192 KiB
 * (whole they are 1,024), no error in blkiso or fio, the ledger holds.
 */
TEST_F_TIMEOUT(fb, a_flood_is_cut_before_the_limit_comes_on, GUEST_TIMEOUT)
{
	struct cut_run r;

	cut_case(_metadata, self, 2, 4000, &r);
	EXPECT_GE(192 * 1024 * r.rios, r.rbytes);
}

/*
 * The same on 32 slots x 50 us, where a 1 MiB read (nine requests) fits
 * the slots: not cut while the limit is off (cutting would only cost a
 * .map per request: on the fast shape the victim's CPU).  Both modes: B's
 * reads average at least 1,000 KiB (whole), no error, no episode.
 */
TEST_F_TIMEOUT(fb, a_flood_that_fits_the_slots_goes_whole, GUEST_TIMEOUT)
{
	struct cut_run r;

	cut_case(_metadata, self, 32, 50, &r);
	EXPECT_LE(1000LL * 1024 * r.rios, r.rbytes);
}

TEST_HARNESS_MAIN
