// SPDX-License-Identifier: GPL-2.0
/*
 * manycpu_test.c - one capped cgroup read from every CPU of a guest with 4
 * or more vCPUs (issue 18) (guest test): the cap holds, local buckets take
 * their tokens from the global bucket in batches, and no blkiso lock is
 * contended.
 *
 * Runs only with GUEST_FULL=1 in a deterministic guest with at least 4
 * present CPUs: make check-full boots one for it (run.sh -i -c 4, which
 * boots the guest with one online CPU and onlines the others before the
 * tests, as a deterministic boot that brings them up itself does not
 * finish in useful time).  Skips in check-all's guests (1 or 2 CPUs).
 * The figures for 4 and 8 vCPUs: selftests/bench/many-cpus.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "guest_util.h"
#include "kselftest_harness.h"

#define DM_NAME		"bimanycpu"
#define DM_DEV		"/dev/mapper/" DM_NAME
#define CG		"blkiso_manycpu"
#define NULLB		"nullb_manycpu"
#define TRACE		"/sys/kernel/tracing"
#define EVENT		TRACE "/events/lock/contention_begin"
#define RIOPS		8000

static void cleanup(void)
{
	gu_sh("echo 0 > " EVENT "/enable 2>/dev/null;"
	      " echo '!stacktrace' > " EVENT "/trigger 2>/dev/null;"
	      " pkill -KILL -x fio; sleep 0.2; dmsetup remove --retry " DM_NAME " 2>/dev/null");
	gu_cg_destroy(CG);
	gu_nullb_destroy(NULLB);
	gu_module_unload();
}

FIXTURE(manycpu) {
	bool set_up;	/* the device and the trace to undo */
};

FIXTURE_SETUP(manycpu)
{
	self->set_up = false;
}

FIXTURE_TEARDOWN(manycpu)
{
	if (self->set_up)
		cleanup();
}

/*
 * riops=8000: capacity 400 bios (burst_ms=50), so a local bucket's batch
 * is min(local_max 64, capacity / 4 = 100) = 64 bios and issue 18's one
 * global dispense per 32 bios is within reach (at riops=2000 the batch is
 * 25).  Four reads in flight per CPU, one fio job pinned to each.
 */
TEST_F_TIMEOUT(manycpu, cap_holds_across_cpus_without_lock_contention, GUEST_TIMEOUT)
{
	struct gu_nullb nb = { .name = NULLB, .size_mb = 1024 };
	char lower[64], dir[128], line[32], jobs[4096], out[64];
	long long bios, disp, c1, c2, ev, ev_blkiso;
	struct gu_fio_job job;
	unsigned long long cgid;
	double t0, t1, t2, rate;
	int ncpu, i, n = 0;
	struct gu_fio r;

	if (!getenv("GUEST_FULL"))
		SKIP(return, "make check-full's (GUEST_FULL=1)");
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), "ls -d /sys/devices/system/cpu/cpu[0-9]* | wc -l"));
	if (atoi(out) < 4)
		SKIP(return, "needs 4 present CPUs (%s): run.sh -i -c 4", out);
	if (gu_no_rate())
		SKIP(return, "%s", gu_no_rate());
	self->set_up = true;
	cleanup();
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_LE(4, ncpu);

	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_nullb_create(&nb, lower, sizeof(lower)));
	ASSERT_EQ(0, gu_sh("dmsetup create " DM_NAME " --table "
			   "\"0 $(blockdev --getsz %s) blkiso %s 0\"", lower, lower));
	ASSERT_EQ(0, gu_blkiso_dir(DM_NAME, dir, sizeof(dir)));
	ASSERT_EQ(0, gu_cg_create(CG));
	cgid = gu_cg_id(CG);
	ASSERT_NE(0ULL, cgid);
	snprintf(line, sizeof(line), "riops=%d", RIOPS);
	ASSERT_EQ(0, gu_tenant_set(dir, "/" CG, line));

	/* every contention of a spinlock, mutex or rwsem, with its stack */
	ASSERT_EQ(0, gu_sh("mountpoint -q " TRACE " || mount -t tracefs nodev " TRACE ";"
			   " echo 4096 > " TRACE "/buffer_size_kb && echo > " TRACE "/trace &&"
			   " echo stacktrace > " EVENT "/trigger && echo 1 > " EVENT "/enable"));
	for (i = 0; i < ncpu; i++)
		n += snprintf(jobs + n, sizeof(jobs) - n,
			      " --name=c%d --cpus_allowed=%d --filename=" DM_DEV " --direct=1"
			      " --rw=randread --bs=4k --ioengine=libaio --iodepth=4"
			      " --runtime=13 --time_based", i, i);
	ASSERT_LT(n, (int)sizeof(jobs));
	bios = gu_tenant_stat(dir, cgid, "arrived");
	disp = gu_tenant_stat(dir, cgid, "dispenses");
	ASSERT_EQ(0, gu_fio_start(&job, CG, "%s", jobs));
	/* the rate over 10 s of guest time from the 2nd second on */
	t0 = gu_now_s();
	while (gu_tenant_stat(dir, cgid, "completed") < 2 * RIOPS) {
		ASSERT_GT(t0 + 30, gu_now_s()) TH_LOG("no reads through blkiso");
		usleep(10000);
	}
	t1 = gu_now_s();
	c1 = gu_tenant_stat(dir, cgid, "completed");
	while ((t2 = gu_now_s()) < t1 + 10)
		usleep(10000);
	c2 = gu_tenant_stat(dir, cgid, "completed");
	ASSERT_EQ(0, gu_fio_wait(&job, &r));
	ASSERT_EQ(0, gu_sh("echo 0 > " EVENT "/enable && echo '!stacktrace' > " EVENT "/trigger"));
	bios = gu_tenant_stat(dir, cgid, "arrived") - bios;
	disp = gu_tenant_stat(dir, cgid, "dispenses") - disp;
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), "awk '/contention_begin:/ { n++; if (b) m++; b = 0 }"
			       " / => .*\\[blkiso\\]/ { b = 1 } END { if (b) m++; print n + 0, m + 0 }'"
			       " " TRACE "/trace"));
	ASSERT_EQ(2, sscanf(out, "%lld %lld", &ev, &ev_blkiso));
	rate = (c2 - c1) / (t2 - t1);
	TH_LOG("%d CPUs, riops=%d: %.1f completions/s over %.2f s, %lld bios, %lld global"
	       " dispenses (one per %.1f bios; issue 18's goal: 32), %lld lock contentions,"
	       " %lld of them in blkiso", ncpu, RIOPS, rate, t2 - t1, bios, disp,
	       disp ? (double)bios / disp : 0.0, ev, ev_blkiso);
	/* measured -0.7 % .. +0.01 % at 4 CPUs, -0.04 % at 8 */
	EXPECT_TRUE(values_close(rate, RIOPS, 3)) TH_LOG("rate %.1f", rate);
	/*
	 * issue 18's goal: measured one per 38.3 bios at 4 CPUs and 40.7 at
	 * 8 (many-cpus.sh), since a bio alone on its CPU waits for a batch
	 * while other CPUs share the lean global bucket (dispense.c); one per
	 * 21-24 before, when each took what had trickled in
	 */
	EXPECT_LE(disp * 32, bios) TH_LOG("%lld dispenses for %lld bios", disp, bios);
	/*
	 * measured 0 in blkiso at 4 and 8 CPUs (and 1-9 elsewhere: cgroup
	 * attach, kernfs, do_wait); at most one per 100 global dispenses
	 */
	EXPECT_LE(ev_blkiso * 100, disp) TH_LOG("%lld contentions in blkiso", ev_blkiso);
}

TEST_HARNESS_MAIN
