// SPDX-License-Identifier: GPL-2.0
/*
 * meter_test.c - blkiso meters a cgroup's I/O through the target (guest test).
 *
 * Each test maps a null_blk device through a blkiso table, makes a cgroup,
 * gives it a quota through /sys/kernel/blkiso/dm-N/tenant and drives fio or
 * direct preadv2() calls from inside the cgroup.  Rates are asserted with
 * the tolerance stated at each call; asserted rates stay far below the
 * device's capacity (>20k IOPS even under TCG), so the quota is what bites.
 * The deterministic mode (make vm-run ICOUNT=1) makes them exact; the
 * margins hold under ordinary TCG too.  Waits poll for a condition rather
 * than sleep: in deterministic mode the guest clock jumps while the guest
 * waits for the host (9p), so program start-up takes seconds of guest time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_util.h"
#include "kselftest_harness.h"

#define DM_NAME		"bimeter"
#define DM_DEV		"/dev/mapper/" DM_NAME
#define CG		"blkiso_meter"
#define UNIT_BYTES	2048.0
/* dm-crypt above blkiso (dm_crypt_above_*) */
#define CRYPT_NAME	"bimcrypt"
#define CRYPT_DEV	"/dev/mapper/" CRYPT_NAME
/* a_loop_devices_io_is_its_cgroups */
#define LOOP_MNT	"/tmp/bi_meter_loop"

/* Rates and capacities are asserted in the deterministic mode only. */
#define NEED_ICOUNT() do { \
	if (gu_no_rate()) \
		SKIP(return, "%s", gu_no_rate()); \
} while (0)

FIXTURE(meter) {
	char lower[64];
	char dir[128];
	unsigned long long cgid;
};

/* blkiso over a new null_blk shaped as @nb (named nullb_meter). */
static int dev_create(FIXTURE_DATA(meter) *self, const struct gu_nullb *nb)
{
	if (gu_nullb_create(nb, self->lower, sizeof(self->lower)) ||
	    gu_sh("dmsetup create " DM_NAME " --table "
		  "\"0 $(blockdev --getsz %s) blkiso %s 0\"", self->lower, self->lower))
		return -1;
	return gu_blkiso_dir(DM_NAME, self->dir, sizeof(self->dir));
}

/* The test's device made again over a null_blk shaped as @nb. */
static int dev_remake(FIXTURE_DATA(meter) *self, const struct gu_nullb *nb)
{
	if (gu_sh("dmsetup remove --retry " DM_NAME) || gu_nullb_destroy("nullb_meter"))
		return -1;
	return dev_create(self, nb);
}

FIXTURE_SETUP(meter)
{
	struct gu_nullb nb = { .name = "nullb_meter", .size_mb = 4096 };

	/* A test killed by its timeout skips its teardown: clean up here. */
	gu_sh("pkill -KILL -x fio; dmsetup remove --retry " CRYPT_NAME " 2>/dev/null;"
	      " dmsetup remove --retry " DM_NAME " 2>/dev/null");
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, dev_create(self, &nb));
	ASSERT_EQ(0, gu_cg_create(CG));
	self->cgid = gu_cg_id(CG);
	ASSERT_NE(0ULL, self->cgid);
}

FIXTURE_TEARDOWN(meter)
{
	/* A test that failed half-way may leave its fio behind. */
	gu_sh("pkill -KILL -x fio; sleep 0.2");
	gu_sh("for l in /sys/block/loop*/loop/backing_file; do grep -q " LOOP_MNT " $l"
	      " 2>/dev/null && losetup -d /dev/$(basename $(dirname $(dirname $l))); done;"
	      " umount " LOOP_MNT " 2>/dev/null");
	gu_sh("dmsetup remove --retry " CRYPT_NAME " 2>/dev/null");
	gu_sh("dmsetup remove --retry " DM_NAME " 2>/dev/null");
	gu_cg_destroy(CG "/a");
	gu_cg_destroy(CG "/b");
	gu_cg_destroy(CG);
	gu_nullb_destroy("nullb_meter");
	gu_module_unload();
}

/* fio in the test cgroup: randread at @bs, @engine/@qd, for @secs. */
static int fio_read(struct gu_fio *r, const char *bs, const char *engine, int qd, int secs)
{
	return gu_fio(CG, r, "--name=m --filename=" DM_DEV " --direct=1 --rw=randread"
		      " --bs=%s --ioengine=%s --iodepth=%d --runtime=%d --time_based",
		      bs, engine, qd, secs);
}

TEST_F_TIMEOUT(meter, riops_holds_within_2pct, GUEST_TIMEOUT)
{
	struct gu_fio r;

	NEED_ICOUNT();

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=1000"));
	ASSERT_EQ(0, fio_read(&r, "4k", "psync", 1, 10));
	/* 1000/s, plus a 50 ms burst spread over 10 s (+0.5%): within 2% */
	EXPECT_TRUE(values_close(r.read.iops, 1000, 2)) TH_LOG("IOPS %.1f", r.read.iops);
}

TEST_F_TIMEOUT(meter, work_units_hold_within_3pct_at_every_block_size, GUEST_TIMEOUT)
{
	static const char * const sizes[] = { "4k", "64k", "1M" };
	unsigned int i;
	struct gu_fio r;

	NEED_ICOUNT();

	/* 10,000 units/s of 2 KiB = 20.48 MB/s whatever the block size */
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "runits=10000 initial=exact"));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, fio_read(&r, sizes[i], "libaio", 4, 10));
		EXPECT_TRUE(values_close(r.read.bw_bytes, 10000 * UNIT_BYTES, 3))
			TH_LOG("bs %s: %.0f B/s", sizes[i], r.read.bw_bytes);
	}
}

TEST_F_TIMEOUT(meter, bytes_cap_is_enforced_like_io_max, GUEST_TIMEOUT)
{
	struct gu_fio r;

	NEED_ICOUNT();

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "rbps=8M initial=exact"));
	ASSERT_EQ(0, fio_read(&r, "64k", "libaio", 8, 10));
	EXPECT_TRUE(values_close(r.read.bw_bytes, 8 << 20, 3)) TH_LOG("%.0f B/s", r.read.bw_bytes);
}

/*
 * In the cgroup: @n back-to-back preadv2(RWF_NOWAIT) reads.  Returns how
 * many got EAGAIN (@first_again: how many succeeded before the first one).
 */
static int nowait_reads(int n, int *first_again);

TEST_F_TIMEOUT(meter, burst_after_idle_is_capacity, GUEST_TIMEOUT)
{
	int ok_before_again = -1;

	NEED_ICOUNT();
	/*
	 * A request bucket's capacity is its burst limit: after idling, 200
	 * reads pass at once and the next one is refused (NOWAIT shows where
	 * the burst ends); plus what refills while they run (~10 us each at
	 * 1000/s: 2-3), within one bio.
	 */
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=1000 burst_limit=200"));
	sleep(1);
	ASSERT_LE(0, nowait_reads(400, &ok_before_again));
	TH_LOG("burst after idle: %d reads", ok_before_again);
	EXPECT_GE(ok_before_again, 199);
	EXPECT_LE(ok_before_again, 205);
}

/*
 * The requests one 1 MiB bio becomes at the lower device (what riops
 * counts): split at its max_sectors, as bi_split_count() does.
 */
static unsigned int requests_per_1m(const char *lower)
{
	char path[128], buf[32];
	unsigned int kb;

	snprintf(path, sizeof(path), "/sys/block/%s/queue/max_sectors_kb",
		 strrchr(lower, '/') ? strrchr(lower, '/') + 1 : lower);
	if (gu_read(path, buf, sizeof(buf)) < 0 || sscanf(buf, "%u", &kb) != 1 || !kb)
		return 0;
	return (1024 + kb - 1) / kb;
}

/*
 * A tenant capped in bytes has a read of more lower requests than half the
 * lower device's slots cut, a request at a time until the rest fits, each
 * piece charged and paced on its own (blkiso_cap_cut()): on 8 slots a
 * 1 MiB read of N requests arrives as N - 4 pieces and a rest of 4
 * requests, psync and io_uring alike (REQ_NOWAIT: its rest loses the flag
 * and none fails), and the byte cap's rate holds; under riops the same
 * reads arrive whole (a piece would count as a request); on the fixture's
 * 64 slots they arrive whole under rbps too.
 */
TEST_F_TIMEOUT(meter, a_byte_cap_paces_large_reads_request_by_request, GUEST_TIMEOUT)
{
	struct gu_nullb nb = { .name = "nullb_meter", .size_mb = 4096, .queue_depth = 8 };
	static const char * const engines[] = { "psync", "io_uring" };
	unsigned int reqs = requests_per_1m(self->lower);
	long long before, after;
	struct gu_fio r;
	char line[32];
	int i;

	NEED_ICOUNT();
	ASSERT_LT(4U, reqs);
	/* the fixture's 64 slots: a 1 MiB read fits in half of them */
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "rbps=20M"));
	before = gu_tenant_stat(self->dir, self->cgid, "arrived");
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=m --filename=" DM_DEV " --direct=1"
			    " --rw=read --bs=1M --size=10M --ioengine=psync"));
	after = gu_tenant_stat(self->dir, self->cgid, "arrived");
	EXPECT_EQ(10LL, after - before);
	/* the same device on 8 slots */
	ASSERT_EQ(0, dev_remake(self, &nb));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "rbps=20M"));
	for (i = 0; i < 2; i++) {
		before = gu_tenant_stat(self->dir, self->cgid, "arrived");
		ASSERT_EQ(0, gu_fio(CG, &r, "--name=m --filename=" DM_DEV " --direct=1"
				    " --rw=read --bs=1M --size=40M --ioengine=%s --iodepth=8",
				    engines[i]));
		after = gu_tenant_stat(self->dir, self->cgid, "arrived");
		TH_LOG("8 slots, rbps=20M, %s: 40 reads of 1 MiB (%u requests) arrived as %lld bios, %.1f MiB/s",
		       engines[i], reqs, after - before, r.read.bw_bytes / 1048576);
		EXPECT_EQ(0ULL, r.errors);
		EXPECT_EQ(40LL * (reqs - 4 + 1), after - before);
		/* 20 MiB/s, and the 50 ms burst over 2 s: within 5 % */
		EXPECT_TRUE(values_close(r.read.bw_bytes, 20.0 * 1048576, 5));
	}
	snprintf(line, sizeof(line), "riops=%u", 40 * reqs);
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, line));
	before = gu_tenant_stat(self->dir, self->cgid, "arrived");
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=m --filename=" DM_DEV " --direct=1"
			    " --rw=read --bs=1M --size=40M --ioengine=psync"));
	after = gu_tenant_stat(self->dir, self->cgid, "arrived");
	TH_LOG("8 slots, %s: 40 reads of 1 MiB arrived as %lld bios", line, after - before);
	EXPECT_EQ(40LL, after - before);
}

/*
 * A cut REQ_NOWAIT read through a suspend.  dm core refuses a REQ_NOWAIT
 * bio while the device is suspended, and the rest of one blkiso cut
 * reaches it with the flag after the first piece went down: the read
 * ended with EAGAIN in the completion's context, where io_uring cannot
 * send it again, and fio failed (6.1 -i, before the fix: 3 runs of 4 with
 * six suspends each; a 256 KiB read, not cut, never).  Now a device
 * suspending cuts no REQ_NOWAIT bio or rest: whole, it is refused before
 * any part went down and io_uring sends it again.  1 MiB io_uring reads at
 * QD32 under rbps=400M (cut to half the 8 slots), six suspends and
 * resumes: no error, both modes.
 */
TEST_F_TIMEOUT(meter, a_cut_nowait_read_survives_a_suspend, GUEST_TIMEOUT)
{
	struct gu_nullb nb = { .name = "nullb_meter", .size_mb = 1024, .queue_depth = 8,
			       .irqmode = 2, .completion_nsec = 200000 };
	struct gu_fio_job j;
	struct gu_fio r;
	int i;

	ASSERT_EQ(0, dev_remake(self, &nb));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "rbps=400M"));
	ASSERT_EQ(0, gu_fio_start(&j, CG, "--name=m --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=1M --ioengine=io_uring --iodepth=32"
				  " --runtime=3 --time_based"));
	usleep(500 * 1000);
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(0, gu_sh("dmsetup suspend " DM_NAME));
		usleep(50 * 1000);
		ASSERT_EQ(0, gu_sh("dmsetup resume " DM_NAME));
		usleep(200 * 1000);
	}
	ASSERT_EQ(0, gu_fio_wait(&j, &r));
	TH_LOG("rbps=400M, 1 MiB io_uring QD32, six suspends: %.1f MiB/s, %llu errors",
	       r.read.bw_bytes / 1048576, r.errors);
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_LT(0, gu_tenant_stat(self->dir, self->cgid, "rios"));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

TEST_F_TIMEOUT(meter, io_uring_1m_through_biting_quota_completes, GUEST_TIMEOUT)
{
	unsigned int reqs = requests_per_1m(self->lower);
	struct gu_fio r;
	char line[32];

	NEED_ICOUNT();

	/* On 6.1, io.max makes exactly this fail with EAGAIN. */
	ASSERT_NE(0U, reqs);
	snprintf(line, sizeof(line), "riops=%u", 50 * reqs);
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, line));
	ASSERT_EQ(0, fio_read(&r, "1M", "io_uring", 32, 5));
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_TRUE(values_close(r.read.iops, 50, 10))
		TH_LOG("IOPS %.1f of 1 MiB (riops=%u: %u requests each)", r.read.iops,
		       50 * reqs, reqs);
}

/*
 * @n 4 KiB direct reads from a child in the test cgroup, with preadv2 flags
 * @rwf; returns how many failed with @err, and *@first the index of the
 * first (-1 if none).
 */
static int refused_reads(int n, int rwf, int err, int *first)
{
	int pipefd[2], pid, res[2] = { 0, -1 }, i, fd;
	static char buf[4096] __attribute__((aligned(4096)));
	struct iovec iov = { buf, sizeof(buf) };

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (!pid) {
		if (gu_write("/sys/fs/cgroup/" CG "/cgroup.procs", "0"))
			_exit(1);
		fd = open(DM_DEV, O_RDONLY | O_DIRECT);
		for (i = 0; fd >= 0 && i < n; i++) {
			if (preadv2(fd, &iov, 1, (off_t)i * 4096, rwf) < 0 && errno == err) {
				if (!res[0]++)
					res[1] = i;
			}
		}
		if (write(pipefd[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(fd < 0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], res, sizeof(res)) != sizeof(res))
		res[0] = -1;
	close(pipefd[0]);
	waitpid(pid, NULL, 0);
	if (first)
		*first = res[1];
	return res[0];
}

static int nowait_reads(int n, int *first_again)
{
	return refused_reads(n, RWF_NOWAIT, EAGAIN, first_again);
}

/*
 * Device key reject_mode=1: a bio the caps refuse fails with EIO at
 * once instead of waiting.  riops=10 holds a burst of 3: of 50 back-to-back
 * blocking reads at least 40 fail (a few pass on the burst and on what
 * refills while they run); with reject_mode=0 they would all wait, 5 s.
 */
TEST_F_TIMEOUT(meter, reject_mode_fails_a_throttled_bio, GUEST_TIMEOUT)
{
	char path[192];
	int eio, first = -1;

	snprintf(path, sizeof(path), "%s/conf", self->dir);
	ASSERT_EQ(0, gu_write(path, "reject_mode=1"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=10"));
	eio = refused_reads(50, 0, EIO, &first);
	TH_LOG("reject_mode=1 riops=10: %d of 50 blocking reads failed with EIO, first at %d",
	       eio, first);
	EXPECT_GE(eio, 40);
	EXPECT_LE(first, 10);
	ASSERT_EQ(0, gu_write(path, "reject_mode=0"));
	EXPECT_EQ(0, refused_reads(2, 0, EIO, NULL));
}

TEST_F_TIMEOUT(meter, nowait_gets_eagain_and_is_counted, GUEST_TIMEOUT)
{
	long long before, after;
	int again;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=10"));
	before = gu_tenant_stat(self->dir, self->cgid, "rejected_nowait");
	again = nowait_reads(200, NULL);
	after = gu_tenant_stat(self->dir, self->cgid, "rejected_nowait");
	/* 200 back-to-back reads against a 10/s bucket: almost all refused */
	EXPECT_GE(again, 150);
	EXPECT_EQ(again, after - before) TH_LOG("EAGAIN %d, counted %lld", again, after - before);
}

/*
 * A bio that queues behind its class's parked bios is not charged, so no
 * class policy refused it: it must park, whatever its per-bio data held
 * before (dm does not clear it).  Tenant /b's class policy rejects its
 * reads (hi.action=reject; direct reads are of the hi class): each such
 * charge is flagged BI_CHARGE_REJECT, and the flag stays in the freed
 * bio's per-bio data.  /a's reads wait behind riops=10 meanwhile (a cap
 * that bites even on the slow debug kernel), in bios of the same device.
 * Before the fix .map read the flag of a charge it never made, so /a's
 * queued reads failed with EIO now and then (on the debug kernel, whose
 * KASAN writes into freed objects, from the first second:
 * doc/robustness.md).  /a: no error, nothing rejected; /b: its reads
 * rejected (so the flag was set), counted.
 */
TEST_F_TIMEOUT(meter, queued_bio_never_takes_a_rejected_bios_verdict, GUEST_TIMEOUT)
{
	unsigned long long ida, idb;
	struct gu_fio_job ja, jb;
	struct gu_fio ra, rb;

	ASSERT_EQ(0, gu_cg_create(CG "/a"));
	ASSERT_EQ(0, gu_cg_create(CG "/b"));
	ida = gu_cg_id(CG "/a");
	idb = gu_cg_id(CG "/b");
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG "/a", "riops=10"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG "/b", "hi.units=20 hi.action=reject"));
	ASSERT_EQ(0, gu_fio_start(&ja, CG "/a", "--name=a --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=libaio --iodepth=32"
				  " --runtime=6 --time_based"));
	ASSERT_EQ(0, gu_wait_stat(self->dir, ida, "queued", 8, 60000));
	ASSERT_EQ(0, gu_fio_start(&jb, CG "/b", "--name=b --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=psync --numjobs=2"
				  " --continue_on_error=all --runtime=4 --time_based"));
	ASSERT_EQ(0, gu_fio_wait(&jb, &rb));
	gu_fio_wait(&ja, &ra);	/* its status is asserted below, after the log */
	TH_LOG("/a: status %d, errors %llu, rejected %lld, dispatched %lld; "
	       "/b: %llu errors, rejected %lld",
	       ra.status, ra.errors, gu_tenant_stat(self->dir, ida, "rejected"),
	       gu_tenant_stat(self->dir, ida, "dispatched"), rb.errors,
	       gu_tenant_stat(self->dir, idb, "rejected"));
	EXPECT_EQ(0, ra.status);
	EXPECT_EQ(0ULL, ra.errors);
	EXPECT_EQ(0, gu_tenant_stat(self->dir, ida, "rejected"));
	EXPECT_LT(0, gu_tenant_stat(self->dir, ida, "dispatched"));
	EXPECT_LT(100, gu_tenant_stat(self->dir, idb, "rejected"));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

TEST_F_TIMEOUT(meter, quota_survives_reload_and_suspend_with_parked_bios, GUEST_TIMEOUT)
{
	char conf[512], conf2[512], path[256];
	struct gu_fio_job job;
	struct gu_fio r;
	struct timespec t0, t1;
	double secs;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=20"));
	snprintf(path, sizeof(path), "%s/%llu/conf", self->dir, self->cgid);
	ASSERT_LT(0, gu_read(path, conf, sizeof(conf)));
	/* 64 bios in flight against 20/s: most of them parked */
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=p --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=libaio --iodepth=64"
				  " --runtime=4 --time_based"));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "queued", 10, 60000));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(0, gu_sh("dmsetup suspend " DM_NAME));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	EXPECT_LT(secs, 2.0) TH_LOG("suspend took %.2fs", secs);
	EXPECT_EQ(0, gu_tenant_stat(self->dir, self->cgid, "queued"));
	EXPECT_LT(0, gu_tenant_stat(self->dir, self->cgid, "debt"));
	EXPECT_EQ(0, gu_sh("dmsetup resume " DM_NAME));
	EXPECT_EQ(0, gu_sh("dmsetup table " DM_NAME " | dmsetup reload " DM_NAME));
	EXPECT_EQ(0, gu_sh("dmsetup resume " DM_NAME));
	ASSERT_EQ(0, gu_fio_wait(&job, &r));
	EXPECT_EQ(0ULL, r.errors);
	ASSERT_LT(0, gu_read(path, conf2, sizeof(conf2)));
	EXPECT_STREQ(conf, conf2);
	/* every bio that arrived completed exactly once */
	EXPECT_EQ(gu_tenant_stat(self->dir, self->cgid, "arrived"),
		  gu_tenant_stat(self->dir, self->cgid, "completed"));
}

TEST_F_TIMEOUT(meter, deferred_remove_completes_when_fio_exits, GUEST_TIMEOUT)
{
	struct gu_fio_job job;
	struct gu_fio r;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=100"));
	/*
	 * fio must still hold the device when dmsetup asks for its removal:
	 * on the debug kernel its 2 s had run out by then (the device was
	 * already gone at the check below), so it runs 20 s there.
	 */
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=d --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=libaio --iodepth=16"
				  " --runtime=%d --time_based", gu_debug_kernel() ? 20 : 2));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "arrived", 1, 60000));
	ASSERT_EQ(0, gu_sh("dmsetup remove --deferred " DM_NAME));
	/* still there while fio holds it open (dmsetup drops the node at once) */
	EXPECT_EQ(0, gu_sh("dmsetup info " DM_NAME " >/dev/null 2>&1"));
	ASSERT_EQ(0, gu_fio_wait(&job, &r));
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_NE(0, gu_sh("dmsetup info " DM_NAME " >/dev/null 2>&1"));
}

TEST_F_TIMEOUT(meter, completion_correction_borrows_and_blacks_out, GUEST_TIMEOUT)
{
	struct gu_fio r;
	long long tokens;

	NEED_ICOUNT();
	/*
	 * Seed-faithful initial=1, asked for (the default, exact, waits for
	 * the whole cost): a 1 MiB read is admitted for 1 unit and corrected
	 * to its 512 at completion, so the bucket (capacity 50 at 1000
	 * units/s) goes about 462 into debt (borrowing, S0-27), and the next
	 * read waits until the balance is back to 1 (~0.46 s blackout).
	 */
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "runits=1000 initial=1"));
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=one --filename=" DM_DEV " --direct=1"
			    " --rw=read --bs=1M --ioengine=psync --number_ios=1 --size=1M"));
	tokens = gu_tenant_stat(self->dir, self->cgid, "runits_tokens");
	TH_LOG("balance after one 1 MiB read: %lld", tokens);
	EXPECT_LE(tokens, 50 - 512 + 10);
	EXPECT_GE(tokens, 50 - 512 - 1);
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=two --filename=" DM_DEV " --direct=1"
			    " --rw=read --bs=1M --ioengine=psync --number_ios=2 --size=2M"));
	/* the first of the two waits out the blackout: 0.4 s or more */
	TH_LOG("two reads: max latency %.0f ms", r.read.clat_p99_ns / 1e6);
	EXPECT_GE(r.read.clat_p99_ns, 400e6);
	EXPECT_LE(gu_tenant_stat(self->dir, self->cgid, "runits_tokens"), 0);
}

TEST_F_TIMEOUT(meter, high_class_reads_keep_their_quota_under_low_class_writes, GUEST_TIMEOUT)
{
	struct gu_fio r;

	NEED_ICOUNT();
	/*
	 * One tenant, two classes: 4 KiB sync reads are HI (2000 units/s =
	 * 1000 IOPS), 1 MiB writes are LO (5000 units/s = 10.24 MB/s).  The
	 * reads are offered at their quota, the writes flood their own bucket.
	 */
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "hi.units=2000 lo.units=5000 initial=exact"));
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=hi --filename=" DM_DEV " --direct=1 --rw=randread"
			    " --bs=4k --ioengine=psync --rate_iops=1000 --runtime=10 --time_based"
			    " --name=lo --filename=" DM_DEV " --direct=1 --rw=randwrite --bs=1M"
			    " --ioengine=libaio --iodepth=4 --runtime=10 --time_based"));
	TH_LOG("HI reads %.1f IOPS, LO writes %.0f B/s", r.read.iops, r.write.bw_bytes);
	EXPECT_GE(r.read.iops, 0.95 * 1000);
	EXPECT_TRUE(values_close(r.write.bw_bytes, 5000 * UNIT_BYTES, 5));
}

/*
 * S1-24 with io.max nesting: the parent has @units units/s; child A offers
 * 1000 units/s (4 KiB at 500/s), child B floods with 64 KiB: A keeps its
 * 1000, B gets the rest (+-5%).
 */
static void children_share(struct __test_metadata *_metadata, const char *dir, double units)
{
	struct gu_fio_job ja, jb;
	struct gu_fio ra, rb;
	char line[64];

	snprintf(line, sizeof(line), "runits=%.0f initial=exact", units);
	ASSERT_EQ(0, gu_cg_create(CG "/a"));
	ASSERT_EQ(0, gu_cg_create(CG "/b"));
	ASSERT_EQ(0, gu_tenant_set(dir, "/" CG, line));
	ASSERT_EQ(0, gu_fio_start(&ja, CG "/a", "--name=a --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=psync --rate_iops=500"
				  " --runtime=10 --time_based"));
	ASSERT_EQ(0, gu_fio_start(&jb, CG "/b", "--name=b --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=64k --ioengine=libaio --iodepth=4"
				  " --runtime=10 --time_based"));
	ASSERT_EQ(0, gu_fio_wait(&ja, &ra));
	ASSERT_EQ(0, gu_fio_wait(&jb, &rb));
	TH_LOG("parent %.0f: A %.0f units/s, B %.0f units/s", units,
	       ra.read.bw_bytes / UNIT_BYTES, rb.read.bw_bytes / UNIT_BYTES);
	EXPECT_TRUE(values_close(ra.read.bw_bytes, 1000 * UNIT_BYTES, 5));
	EXPECT_TRUE(values_close(rb.read.bw_bytes, (units - 1000) * UNIT_BYTES, 5));
	EXPECT_TRUE(values_close(ra.read.bw_bytes + rb.read.bw_bytes, units * UNIT_BYTES, 5));
	gu_cg_destroy(CG "/a");
	gu_cg_destroy(CG "/b");
}

TEST_F_TIMEOUT(meter, children_share_their_parents_quota, GUEST_TIMEOUT)
{
	NEED_ICOUNT();
	children_share(_metadata, self->dir, 10000);
}

/*
 * The same at 5,120 units/s, where the parent's batch (a quarter of its
 * 256-unit burst: 64 units) is two of B's reads and B keeps four queued:
 * B's dispatch pass, refused a batch, held the parent's local bucket on
 * this CPU until the batch would be in, A's lone read came next in the
 * pass and was held as well, and by then B's pass took the whole batch
 * first, again and again (dispense.c: a batch wait no longer holds a bio
 * alone).
 */
TEST_F_TIMEOUT(meter, a_lone_child_is_not_held_by_its_siblings_batch, GUEST_TIMEOUT)
{
	NEED_ICOUNT();
	children_share(_metadata, self->dir, 5120);
}

TEST_F_TIMEOUT(meter, removed_cgroups_tenant_is_freed_after_it_drains, GUEST_TIMEOUT)
{
	char path[256];
	unsigned long long id;
	struct gu_fio r;
	int waited;

	ASSERT_EQ(0, gu_cg_create(CG "/a"));
	id = gu_cg_id(CG "/a");
	ASSERT_EQ(0, gu_fio(CG "/a", &r, "--name=x --filename=" DM_DEV " --direct=1"
			    " --rw=randread --bs=4k --ioengine=psync --number_ios=100 --size=64M"));
	snprintf(path, sizeof(path), "%s/%llu", self->dir, id);
	ASSERT_EQ(0, access(path, F_OK));
	ASSERT_EQ(100, gu_tenant_stat(self->dir, id, "completed"));
	ASSERT_EQ(0, gu_cg_destroy(CG "/a"));
	/* the collector runs every 5 s: gone within two of its periods, +5 s */
	for (waited = 0; waited < 15000 && !access(path, F_OK); waited += 100)
		usleep(100 * 1000);
	TH_LOG("tenant directory gone after %d ms", waited);
	EXPECT_NE(0, access(path, F_OK));
	/* the device still works, its other tenants intact */
	ASSERT_EQ(0, gu_fio("", &r, "--name=y --filename=" DM_DEV " --direct=1"
			    " --rw=randread --bs=4k --ioengine=psync --number_ios=10 --size=64M"));
	EXPECT_EQ(10, gu_tenant_stat(self->dir, 1, "completed"));
}

TEST_F_TIMEOUT(meter, tracepoints_match_the_counters, GUEST_TIMEOUT)
{
	static const char *const ev[] = { "charge", "park", "dispatch", "complete" };
	long long n[4];
	char out[64];
	struct gu_fio r;
	unsigned int i;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=100"));
	ASSERT_EQ(0, gu_sh("cd /sys/kernel/tracing && echo > trace && echo 1 > events/blkiso/enable"));
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=t --filename=" DM_DEV " --direct=1 --rw=randread"
			    " --bs=4k --ioengine=libaio --iodepth=8 --number_ios=200 --size=64M"));
	ASSERT_EQ(0, gu_sh("echo 0 > /sys/kernel/tracing/events/blkiso/enable"));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, gu_sh_out(out, sizeof(out), "grep -c 'blkiso_%s: .*cgid=%llu ' "
				       "/sys/kernel/tracing/trace", ev[i], self->cgid));
		n[i] = atoll(out);
	}
	TH_LOG("events: charge %lld park %lld dispatch %lld complete %lld", n[0], n[1], n[2], n[3]);
	EXPECT_EQ(gu_tenant_stat(self->dir, self->cgid, "admitted"), n[0]);
	EXPECT_EQ(gu_tenant_stat(self->dir, self->cgid, "parked"), n[1]);
	EXPECT_EQ(gu_tenant_stat(self->dir, self->cgid, "dispatched"), n[2]);
	EXPECT_EQ(200, n[3]);
	EXPECT_EQ(200, n[0] + n[2]);
	EXPECT_LT(0, n[1]);	/* the quota bit: some were parked */
}

/* Per-CPU local buckets: needs the ordinary mode with 2 vCPUs. */
TEST_F_TIMEOUT(meter, per_cpu_buckets_hold_the_quota_across_cpus, GUEST_TIMEOUT)
{
	long long bios, disp;
	struct gu_fio r;
	double burst;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 vCPUs (the ordinary mode)");
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=2000"));
	/* two jobs pinned to CPU 0 and CPU 1 in one cgroup */
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=c0 --cpus_allowed=0 --filename=" DM_DEV
			    " --direct=1 --rw=randread --bs=4k --ioengine=libaio --iodepth=4"
			    " --runtime=10 --time_based --name=c1 --cpus_allowed=1"
			    " --filename=" DM_DEV " --direct=1 --rw=randread --bs=4k"
			    " --ioengine=libaio --iodepth=4 --runtime=10 --time_based"));
	/*
	 * The rate not on the debug kernel, whose checks can keep the guest
	 * below 2000 reads/s (1,266 in one boot; it has 2 CPUs since it boots
	 * on q35); the burst's upper bound below holds at any speed.
	 */
	if (!gu_debug_kernel()) {
		EXPECT_TRUE(values_close(r.read.iops, 2000, 3)) TH_LOG("IOPS %.1f", r.read.iops);
	}
	bios = gu_tenant_stat(self->dir, self->cgid, "arrived");
	disp = gu_tenant_stat(self->dir, self->cgid, "dispenses");
	TH_LOG("2 CPUs, riops=2000: %.1f IOPS, %lld bios, %lld global dispenses",
	       r.read.iops, bios, disp);
	/*
	 * A CPU whose bios queue behind one another takes a batch of 25
	 * (capacity 100 / 4) per global dispense, but a bio that finds
	 * nothing of its class waiting takes only its own shortfall (issue
	 * 15: a lone bio waits its own cost, not a batch's), and with four
	 * reads in flight per CPU many do: measured one dispense per 12 bios
	 * (was one per 20 and better before that change; issue 18 asks for
	 * 1/32).  Asserted: at most one per 8 bios.  Not on the debug
	 * kernel, where fewer bios find others waiting (one per 5.8 in a
	 * boot that reached the cap, one per 45 in one that stayed below).
	 */
	if (!gu_debug_kernel()) {
		EXPECT_LE(disp * 8, bios) TH_LOG("%lld dispenses for %lld bios", disp, bios);
	}

	/*
	 * After idling, a burst on both CPUs: at most capacity + 2 x local_max
	 * = 100 + 2 x 64 bios pass at once.  Estimated from how long 600 bios
	 * take at 2000/s: burst = 600 - 2000 x runtime, +-20 (10 ms of timing).
	 */
	sleep(2);
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=b0 --cpus_allowed=0 --filename=" DM_DEV
			    " --direct=1 --rw=randread --bs=4k --ioengine=psync --number_ios=300"
			    " --size=64M --name=b1 --cpus_allowed=1 --filename=" DM_DEV
			    " --direct=1 --rw=randread --bs=4k --ioengine=psync --number_ios=300"
			    " --size=64M"));
	burst = 600 - 2000 * r.read.runtime_ms / 1000;
	TH_LOG("burst after idle: %.0f bios (runtime %.0f ms)", burst, r.read.runtime_ms);
	/*
	 * Only the bound is asserted: a slow guest makes the run longer and
	 * the estimate smaller, never larger (the burst itself is checked
	 * exactly in the deterministic mode, burst_after_idle_is_capacity).
	 */
	EXPECT_LE(burst, 100 + 2 * 64 + 20) TH_LOG("burst %.0f (runtime %.0f ms)", burst, r.read.runtime_ms);
}

/*
 * dm-crypt above blkiso (LUKS on a blkiso device, or on an LV over one):
 * dm-crypt's workers (kcryptd) encrypt a write and send the ciphertext in
 * new bios, which carry the worker's cgroup, the root: blkiso charges them
 * to the kernel tenant, as io.max under dm-crypt would.  With dm-crypt's
 * no_write_workqueue (cryptsetup --perf-no_write_workqueue) the writer's
 * own context encrypts and sends them, and they are the writer's, its cap
 * included.  Reads are the reader's either way (dm-crypt clones them with
 * their cgroup).  4 MiB of O_DIRECT 64k writes and reads by CG, counted
 * exactly in both tables; then, with no_write_workqueue and wbps=1M, 2 MiB
 * of CG's writes take at least 1.5 s (a lower bound: it holds on any
 * host).  doc/metering.md, "Which stacks keep attribution".
 */
static int crypt_create(bool writer_context)
{
	return gu_sh("dmsetup create " CRYPT_NAME " --table \"0 "
		     "$(blockdev --getsz " DM_DEV ") crypt aes-cbc-plain64 "
		     "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
		     " 0 " DM_DEV " 0%s\"", writer_context ? " 1 no_write_workqueue" : "");
}

/* CG writes 4 MiB through the crypt device in 64k O_DIRECT writes, then reads them: 0 if no error */
static int crypt_write_read_4m(void)
{
	static const char * const rw[] = { "write", "read" };
	struct gu_fio r;
	int i;

	for (i = 0; i < 2; i++)
		if (gu_fio(CG, &r, "--name=%s --filename=" CRYPT_DEV " --direct=1 --rw=%s"
			   " --bs=64k --size=4M --ioengine=psync", rw[i], rw[i]) || r.errors)
			return -1;
	return 0;
}

/* the kernel tenant's @key: 0 while it has none */
static long long kernel_stat(const char *dir, const char *key)
{
	long long v = gu_tenant_stat(dir, 0, key);

	return v < 0 ? 0 : v;
}

TEST_F_TIMEOUT(meter, dm_crypt_above_charges_the_writer_with_no_write_workqueue, GUEST_TIMEOUT)
{
	long long w0, k0, r0;
	struct gu_fio r;

	if (gu_sh("modprobe dm_crypt 2>/dev/null"))
		SKIP(return, "no dm-crypt in this kernel (the debug kernel has none)");
	/* no_write_workqueue: the writer's */
	ASSERT_EQ(0, crypt_create(true));
	ASSERT_EQ(0, crypt_write_read_4m());
	EXPECT_EQ(4LL << 20, gu_tenant_stat(self->dir, self->cgid, "wbytes"));
	EXPECT_EQ(4LL << 20, gu_tenant_stat(self->dir, self->cgid, "rbytes"));
	EXPECT_EQ(0, kernel_stat(self->dir, "wbytes"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "wbps=1M"));
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=c --filename=" CRYPT_DEV " --direct=1 --rw=write"
			    " --bs=64k --size=2M --ioengine=psync"));
	TH_LOG("2 MiB of writes at wbps=1M through dm-crypt: %.0f ms", r.write.runtime_ms);
	EXPECT_LE(1500, r.write.runtime_ms);
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "wbps=max"));

	/* dm-crypt's own workers: the kernel tenant's writes, the reader's reads */
	ASSERT_EQ(0, gu_sh("dmsetup remove " CRYPT_NAME));
	ASSERT_EQ(0, crypt_create(false));
	w0 = gu_tenant_stat(self->dir, self->cgid, "wbytes");
	r0 = gu_tenant_stat(self->dir, self->cgid, "rbytes");
	k0 = kernel_stat(self->dir, "wbytes");
	ASSERT_EQ(0, crypt_write_read_4m());
	EXPECT_EQ(w0, gu_tenant_stat(self->dir, self->cgid, "wbytes"));
	EXPECT_EQ(4LL << 20, kernel_stat(self->dir, "wbytes") - k0);
	EXPECT_EQ(4LL << 20, gu_tenant_stat(self->dir, self->cgid, "rbytes") - r0);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * Polled reads (io_uring's IOPOLL, fio --hipri) keep their cap.  A polled
 * bio that must wait is parked as any other: refused with EAGAIN, dm core
 * would send it again from its own worker thread (dm_handle_requeue()),
 * whose bios are the kernel tenant's, so before this a riops=200 tenant
 * read 67,000 IOPS polled (each read refused once, then passed as the
 * kernel's).  4 KiB QD8 at riops=200 within 3 % (the 50 ms burst is
 * +1.25 % of 4 s) and 1 MiB QD8 at rbps=20M within 5 % (80 reads, one is
 * 1.25 %), both polled; no bio refused; the kernel tenant reads nothing;
 * the ledger holds.  Skipped where the device does not poll.
 */
TEST_F_TIMEOUT(meter, polled_reads_keep_their_cap, GUEST_TIMEOUT)
{
	char poll[8] = "";
	struct gu_fio r;
	long long k0;

	NEED_ICOUNT();
	gu_sh_out(poll, sizeof(poll), "cat /sys/block/dm-$(dmsetup info -c --noheadings"
		  " -o minor " DM_NAME ")/queue/io_poll");
	if (strcmp(poll, "1"))
		SKIP(return, "the device does not poll (a lower queue without poll queues)");
	k0 = kernel_stat(self->dir, "rios");
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=200"));
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=p --filename=" DM_DEV " --direct=1 --rw=randread"
			    " --bs=4k --ioengine=io_uring --hipri=1 --iodepth=8 --runtime=4"
			    " --time_based"));
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_TRUE(values_close(r.read.iops, 200, 3)) TH_LOG("polled 4k: %.1f IOPS", r.read.iops);
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=max rbps=20M"));
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=p --filename=" DM_DEV " --direct=1 --rw=randread"
			    " --bs=1M --ioengine=io_uring --hipri=1 --iodepth=8 --runtime=4"
			    " --time_based"));
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_TRUE(values_close(r.read.bw_bytes, 20.0 * 1048576, 5))
		TH_LOG("polled 1M: %.0f B/s", r.read.bw_bytes);
	EXPECT_EQ(0, gu_tenant_stat(self->dir, self->cgid, "rejected_nowait"));
	EXPECT_EQ(k0, kernel_stat(self->dir, "rios"));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * A loop device's I/O is its cgroup's (a container's image file on a
 * filesystem on blkiso): loop's worker for a cgroup carries the cgroup
 * (kthread_associate_blkcg()), and a kernel thread's bio that carries a
 * cgroup other than the root is that cgroup's, as under io.max (before:
 * the kernel tenant's, past every cap), its REQ_SYNC direct writes too
 * (before: written at once as a write the kernel waits on).  ext4 on
 * blkiso, a 16 MiB image file, a loop device over it in direct-I/O mode
 * (LOOP_SET_DIRECT_IO: no page cache between): CG reads 4 MiB of the loop
 * device, and blkiso counts them (to 64 KiB of metadata) for CG and less
 * than 64 KiB for the kernel tenant (the mount makes no I/O of its own, but
 * a root kernel thread's stray read is not what this checks; before, all
 * 4 MiB were the kernel tenant's); under rbps=1M wbps=1M, CG's 2 MiB read and 2 MiB
 * write of the loop device take at least 1.5 s each (2 s less the burst; a
 * bound that holds anywhere).
 */
TEST_F_TIMEOUT(meter, a_loop_devices_io_is_its_cgroups, GUEST_TIMEOUT)
{
	struct gu_nullb nb = { .name = "nullb_meter", .size_mb = 256, .memory_backed = true };
	long long k0, r0, dk, dr;
	char loop[64] = "";
	struct gu_fio r;
	int fd;

	ASSERT_EQ(0, dev_remake(self, &nb));
	ASSERT_EQ(0, gu_sh("mkdir -p " LOOP_MNT " && modprobe loop"));
	ASSERT_EQ(0, gu_mkfs_mount("ext4", DM_DEV, LOOP_MNT));
	ASSERT_EQ(0, gu_sh("dd if=/dev/zero of=" LOOP_MNT "/img bs=1M count=16 status=none"
			   " && sync"));
	/* busybox's losetup: no --show, no --direct-io */
	ASSERT_EQ(0, gu_sh_out(loop, sizeof(loop), "l=$(losetup -f) && losetup $l "
			       LOOP_MNT "/img && echo $l"));
	ASSERT_EQ(0, strncmp(loop, "/dev/loop", 9)) TH_LOG("losetup: %s", loop);
	fd = open(loop, O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl(fd, LOOP_SET_DIRECT_IO, 1)) TH_LOG("LOOP_SET_DIRECT_IO: %s",
							     strerror(errno));
	close(fd);
	k0 = kernel_stat(self->dir, "rbytes");
	r0 = gu_tenant_stat(self->dir, self->cgid, "rbytes");
	r0 = r0 < 0 ? 0 : r0;
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=l --filename=%s --direct=1 --rw=read --bs=64k"
			    " --size=4M --ioengine=psync", loop));
	dk = kernel_stat(self->dir, "rbytes") - k0;
	dr = gu_tenant_stat(self->dir, self->cgid, "rbytes") - r0;
	TH_LOG("4 MiB read through %s: the tenant %lld B, the kernel tenant %lld B", loop, dr, dk);
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_LE(4LL << 20, dr);
	EXPECT_GE((4LL << 20) + (64 << 10), dr);
	EXPECT_GT(64 << 10, dk);
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "rbps=1M wbps=1M"));
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=l --filename=%s --direct=1 --rw=read --bs=64k"
			    " --size=2M --offset=8M --ioengine=psync", loop));
	TH_LOG("2 MiB read through %s at rbps=1M: %.0f ms", loop, r.read.runtime_ms);
	EXPECT_LE(1500, r.read.runtime_ms);
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=l --filename=%s --direct=1 --rw=write --bs=64k"
			    " --size=2M --offset=12M --ioengine=psync", loop));
	TH_LOG("2 MiB write through %s at wbps=1M: %.0f ms", loop, r.write.runtime_ms);
	EXPECT_LE(1500, r.write.runtime_ms);
	gu_sh("losetup -d %s; umount " LOOP_MNT, loop);
}

TEST_F_TIMEOUT(meter, bad_lines_are_refused_and_change_nothing, GUEST_TIMEOUT)
{
	static const char * const bad[] = {
		"riops=12x", "riops=-1", "riops=0x10", "nosuchkey=1", "riops=1 riops=2",
		"riops=99999999999999999999999", "rbps=10Q", "burst_ms=0",
	};
	char before[512], after[512], path[256];
	unsigned int i;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=1000 wbps=1M"));
	snprintf(path, sizeof(path), "%s/%llu/conf", self->dir, self->cgid);
	ASSERT_LT(0, gu_read(path, before, sizeof(before)));
	/* refused with the parser's cause: EINVAL, ERANGE for a number too large */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int want = strstr(bad[i], "9999") ? -ERANGE : -EINVAL;
		int r1 = gu_tenant_set(self->dir, "/" CG, bad[i]);
		int r2 = gu_write(path, "%s", bad[i]);

		if (!strcmp(bad[i], "burst_ms=0"))	/* a malformed or a range error */
			want = r1 == -ERANGE ? -ERANGE : -EINVAL;
		EXPECT_EQ(want, r1) TH_LOG("%s", bad[i]);
		EXPECT_EQ(want, r2) TH_LOG("%s", bad[i]);
	}
	EXPECT_EQ(-ENOENT, gu_tenant_set(self->dir, "/no/such/cgroup", "riops=1"));
	ASSERT_LT(0, gu_read(path, after, sizeof(after)));
	EXPECT_STREQ(before, after);
}

TEST_HARNESS_MAIN
