// SPDX-License-Identifier: GPL-2.0
/*
 * writeback_test.c - buffered writes are charged to the cgroup that dirtied
 * them (guest test; doc/metering.md, "A bio's way").
 *
 * A filesystem (ext4 or xfs: the fixture's variants) on a blkiso device
 * over a memory-backed null_blk; cgroups with the memory and io
 * controllers (cgroup writeback needs both); vm.dirty_bytes fixed so that
 * the kernel's dirty throttling, not the guest's memory, bounds what a
 * capped writer has in flight.  Writeback rates are read from the tenants'
 * wbytes counters (counted at completion) over a steady window, after the
 * first dirty_bytes have gone.  Rates are asserted in the deterministic
 * mode only.  Only the attribution runs in make check / check-all: the
 * rate tests take 15-30 s of guest time each, so they need GUEST_FULL=1
 * (make check-full): one writer's accuracy, two writers, an O_DIRECT
 * victim beside a flood, the 30 s backpressure flood and the fsync latency
 * under a flood capped by blkiso and, the anchor, by io.max.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_util.h"
#include "kselftest_harness.h"

#define DM_NAME		"biwb"
#define DM_DEV		"/dev/mapper/" DM_NAME
#define MNT		"/mnt/wb"
#define CG		"blkiso_wb"
#define CGP		"/sys/fs/cgroup/" CG
#define MiB		(1024.0 * 1024.0)
/* the host's dirty limits for every test: small, so throttling bites early */
#define DIRTY_BYTES	(16 << 20)
#define DIRTY_BG_BYTES	(8 << 20)

#define NEED_ICOUNT() do { \
	if (gu_no_rate()) \
		SKIP(return, "%s", gu_no_rate()); \
} while (0)

/*
 * WB_ONLY (a part of a case's name) and WB_FS (ext4 or xfs) pick the long
 * cases to run, for a script that repeats one (selftests/bench/wb-fsync.sh).
 */
#define NEED_FULL() do { \
	const char *f = getenv("GUEST_FULL"); \
	const char *only = getenv("WB_ONLY"), *fs = getenv("WB_FS"); \
	if (!f || f[0] != '1') \
		SKIP(return, "a long run: make check-full (GUEST_FULL=1)"); \
	if ((only && !strstr(_metadata->name, only)) || (fs && strcmp(fs, variant->fs))) \
		SKIP(return, "not picked by WB_ONLY/WB_FS"); \
} while (0)

FIXTURE(wb) {
	char lower[64];
	char dir[128];
	char dirty[2][32];	/* vm.dirty_bytes, vm.dirty_background_bytes before */
};

FIXTURE_VARIANT(wb) {
	const char *fs;
};

FIXTURE_VARIANT_ADD(wb, ext4) { .fs = "ext4" };
FIXTURE_VARIANT_ADD(wb, xfs) { .fs = "xfs" };
FIXTURE_SETUP(wb)
{
	struct gu_nullb nb = { .name = "nullb_wb", .size_mb = 512, .memory_backed = true };

	gu_sh("pkill -KILL -x fio; umount " MNT " 2>/dev/null; "
	      "dmsetup remove --retry " DM_NAME " 2>/dev/null");
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_nullb_create(&nb, self->lower, sizeof(self->lower)));
	/* writeback bios of 2.5-11 MiB leave in 256 KiB pieces (chunk_bytes) */
	ASSERT_EQ(0, gu_sh("dmsetup create " DM_NAME " --table "
			   "\"0 $(blockdev --getsz %s) blkiso %s 0 1 chunk_bytes=256K\"",
			   self->lower, self->lower));
	ASSERT_EQ(0, gu_blkiso_dir(DM_NAME, self->dir, sizeof(self->dir)));
	mkdir(MNT, 0755);
	ASSERT_EQ(0, gu_mkfs_mount(variant->fs, DM_DEV, MNT));
	/*
	 * WB_JOURNAL_MB (selftests/bench/wb-fsync.sh): ext4's journal of that
	 * size.  jbd2 lets reserved credits reach an eighth of the journal, so
	 * a small one makes the fsync stall (doc/metering.md) come often.
	 * WB_MOUNT_OPTS: ext4 mounted again with these options added (e.g.
	 * nodioread_nolock), to measure the stall under another mount.
	 */
	if ((getenv("WB_JOURNAL_MB") || getenv("WB_MOUNT_OPTS")) && !strcmp(variant->fs, "ext4")) {
		const char *opts = getenv("WB_MOUNT_OPTS");

		ASSERT_EQ(0, gu_sh("umount " MNT));
		if (getenv("WB_JOURNAL_MB"))
			ASSERT_EQ(0, gu_sh("tune2fs -O ^has_journal " DM_DEV " >/dev/null && "
					   "tune2fs -J size=%d " DM_DEV " >/dev/null",
					   atoi(getenv("WB_JOURNAL_MB"))));
		ASSERT_EQ(0, gu_sh("mount -t ext4 -o " GU_EXT4_QUIET "%s%s " DM_DEV " " MNT,
				   opts ? "," : "", opts ? opts : ""));
		gu_sh("grep ' " MNT " ' /proc/mounts >&2");
	}
	/* cgroup writeback needs the memory controller beside io */
	ASSERT_EQ(0, gu_cg_create(CG "/a"));
	ASSERT_EQ(0, gu_cg_create(CG "/b"));
	ASSERT_EQ(0, gu_write("/sys/fs/cgroup/cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, gu_write(CGP "/cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, gu_read("/proc/sys/vm/dirty_bytes", self->dirty[0], sizeof(self->dirty[0])) < 0);
	ASSERT_EQ(0, gu_read("/proc/sys/vm/dirty_background_bytes", self->dirty[1],
			     sizeof(self->dirty[1])) < 0);
	ASSERT_EQ(0, gu_write("/proc/sys/vm/dirty_bytes", "%d", DIRTY_BYTES));
	ASSERT_EQ(0, gu_write("/proc/sys/vm/dirty_background_bytes", "%d", DIRTY_BG_BYTES));
}

FIXTURE_TEARDOWN(wb)
{
	gu_sh("pkill -KILL -x fio; sleep 0.2");
	gu_sh("umount " MNT " 2>/dev/null");
	gu_sh("dmsetup remove --retry " DM_NAME " 2>/dev/null");
	gu_cg_destroy(CG "/a");
	gu_cg_destroy(CG "/b");
	gu_cg_destroy(CG "/v");
	gu_cg_destroy(CG);
	gu_nullb_destroy("nullb_wb");
	gu_module_unload();
	/* a ratio of 0 ("0" bytes) restores the default ratios */
	if (atoll(self->dirty[0]))
		gu_write("/proc/sys/vm/dirty_bytes", "%s", self->dirty[0]);
	else
		gu_write("/proc/sys/vm/dirty_ratio", "20");
	if (atoll(self->dirty[1]))
		gu_write("/proc/sys/vm/dirty_background_bytes", "%s", self->dirty[1]);
	else
		gu_write("/proc/sys/vm/dirty_background_ratio", "10");
}

static long long wbytes(const char *dir, const char *cg)
{
	return gu_tenant_stat(dir, cg ? gu_cg_id(cg) : 0, "wbytes");
}

/*
 * Writeback rates (bytes/s, by wbytes) of the tenants of cgroups @cg[0..n),
 * each over at least @secs of guest time, measured from one completion to
 * another.  wbytes grows at completions, by whole bios: the filesystems'
 * writeback bios are 2.5-11 MiB, cut here to 256 KiB pieces (the fixture's
 * chunk_bytes); a window with fixed ends would still count a piece more or
 * less depending on where its ends fall.  Here each tenant's window opens
 * at a change of its counter and closes at the first change @secs or more
 * later, so it holds whole bios' spacing: what is left is the poll's
 * period (2 ms, at either end) and the difference between the sizes of the
 * two bios at the ends over the window's bytes.  Why a tenant falls
 * short: @empty[i], the share of the window's polls that found nothing of
 * it queued in blkiso ("queued": its cap had no bio to pass, the writer was
 * short of writeback).  While a bio waits, the cap's tokens go to it; while
 * none does, its bucket fills to its capacity (the burst, 50 ms of the
 * rate) and the refill beyond is lost, uncounted ("wunits_dropped" counts
 * only returns, refunds and retunes above capacity).  So a rate short by
 * more than @empty[i] is the meter's, one short by less is the writer's.
 * Returns 0, or -1 if a tenant completes nothing for 3 s (its rate is then
 * 0).
 */
static int wb_rates(const char *dir, const char * const *cg, int n, double secs,
		    double *rate, double *empty)
{
	static const char * const keys[] = { "wbytes", "queued" };
	long long prev[4], b0[4], v[2], polls[4] = { 0 }, idle[4] = { 0 };
	double t0[4], last[4], now;
	bool open[4] = { false };
	char path[4][256];
	int i, left = n;

	for (i = 0; i < n; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%llu/stats", dir, gu_cg_id(cg[i]));
		prev[i] = wbytes(dir, cg[i]);
		last[i] = gu_now_s();
		rate[i] = 0;
	}
	while (left) {
		usleep(2000);
		now = gu_now_s();
		for (i = 0; i < n; i++) {
			if (prev[i] < 0)
				continue;
			if (gu_stats_parse(path[i], keys, v, 2))
				return -1;
			if (open[i]) {
				polls[i]++;
				idle[i] += !v[1];
			}
			if (v[0] == prev[i]) {
				if (now - last[i] > 3)
					return -1;
				continue;
			}
			prev[i] = v[0];
			last[i] = now;
			if (!open[i]) {
				open[i] = true;
				b0[i] = v[0];
				t0[i] = now;
			} else if (now - t0[i] >= secs) {
				rate[i] = (v[0] - b0[i]) / (now - t0[i]);
				empty[i] = (double)idle[i] / polls[i];
				prev[i] = -1;	/* done */
				left--;
			}
		}
	}
	return 0;
}

/* A buffered writer in @cg: rewrites a @mb MiB file for @secs (fio, 64 KiB psync). */
static int writer_start(struct gu_fio_job *job, const char *cg, const char *name,
			int mb, int secs, const char *extra)
{
	return gu_fio_start(job, cg, "--name=%s --filename=" MNT "/%s --size=%dM"
			    " --rw=write --bs=64k --ioengine=psync --time_based"
			    " --runtime=%d %s", name, name, mb, secs, extra);
}

/*
 * A 64 MiB buffered dd from /a, then sync from the root cgroup: /a's
 * wbytes hold >= 95% of it; what the kernel tenant got (journal, log,
 * metadata no cgroup owns) stays under 5% of it.
 */
TEST_F_TIMEOUT(wb, buffered_dd_is_charged_to_its_cgroup, GUEST_TIMEOUT)
{
	const double wrote = 64 * MiB;
	long long a, k0, k;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG "/a", "wbps=1G"));
	k0 = wbytes(self->dir, NULL);
	ASSERT_EQ(0, gu_sh("sh -c 'echo $$ > " CGP "/a/cgroup.procs && "
			   "exec dd if=/dev/zero of=" MNT "/dd bs=1M count=64 2>/dev/null'"));
	ASSERT_EQ(0, gu_sh("sync"));
	a = wbytes(self->dir, "/" CG "/a");
	k = wbytes(self->dir, NULL) - k0;
	TH_LOG("%s: /a wbytes %lld, kernel %lld, of %.0f written", variant->fs, a, k, wrote);
	EXPECT_GE(a, 0.95 * wrote);
	EXPECT_LE(k, 0.05 * wrote);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * Buffered writers at once, each in its own cgroup with its own wbps cap
 * (/a 10M, /b 5M), on ext4 and xfs: each within 5% of its cap over
 * STEADY_SECS (10 s) of steady state (from 4 s: the first dirty_bytes and
 * the caps' bursts have gone by then), measured from completion to
 * completion (wb_rates()).  The filesystems' writeback bios are large
 * (ext4 2.5-4 MiB, xfs 5-11 MiB: a 10 s window held 8-20 of them), and a
 * window's bytes and its wait can differ by about one bio at its ends (a
 * bio charged without waiting, as the kernel waits on it, whose debt the
 * bios after it pay: doc/metering.md, "A bio's way"; the tokens the head
 * bio has gathered).  Uncut, over 10 s /b (5 MiB/s) came out 4.42 and 4.48
 * MiB/s in two of four runs on 6.1 while blkiso always had a bio of it
 * queued and its bucket dropped nothing; cut to 256 KiB pieces
 * (chunk_bytes) a piece is 0.5% of /b's 10 s.
 *
 * The cap can only be met while the kernel keeps each writer's writeback
 * coming: the dirty limits are 64M/8M here and each writer rewrites a
 * 128 MiB file (under 64M/32M, /a on 6.1 xfs once wrote back 9.312 MiB/s
 * with nothing of it queued 7.4% of the time: the flusher idle above the
 * background limit, as for the flood).  Under small limits the flusher
 * stops whenever the dirty pages fall under the background limit and
 * blkiso has nothing of the writer for longer than its cap's burst: one
 * writer under 8M (the backpressure flood below) had nothing queued 2-20%
 * of the time and once wrote back 7.2% short while its bucket lost the
 * unused tokens.  With two writers the kernel splits the limit between
 * them by their recent completions, which lags (measured under 16M: /a
 * 8.1-8.4 MiB/s), and a file smaller than its share of the limit is all
 * dirty, its rewrites no longer throttled (48 MiB files on xfs, 6.1: /a
 * 8.77).  The log says how many of their bios blkiso parked in the window,
 * the share of the window with nothing of them queued.
 */
#define STEADY_SECS	10
static void buffered_writers_get_their_caps(struct __test_metadata *_metadata,
					    FIXTURE_DATA(wb) *self,
					    const FIXTURE_VARIANT(wb) *variant, int n)
{
	static const char * const cg[] = { "/" CG "/a", "/" CG "/b" };
	static const char * const name[] = { "a", "b" };
	static const char * const line[] = { "wbps=10M initial=exact", "wbps=5M initial=exact" };
	static const int cap_mib[] = { 10, 5 };
	long long arrived[2], parked[2];
	double rate[2], empty[2];
	struct gu_fio_job job[2];
	struct gu_fio res;
	int i;

	ASSERT_EQ(0, gu_write("/proc/sys/vm/dirty_bytes", "%d", 64 << 20));
	/* an eighth, as the flood's: the flusher keeps the writers' backlog coming */
	ASSERT_EQ(0, gu_write("/proc/sys/vm/dirty_background_bytes", "%d", 8 << 20));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, gu_tenant_set(self->dir, cg[i], line[i]));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, writer_start(&job[i], cg[i] + 1, name[i], 128, STEADY_SECS + 10, ""));
	sleep(4);
	for (i = 0; i < n; i++) {
		arrived[i] = gu_tenant_stat(self->dir, gu_cg_id(cg[i]), "arrived");
		parked[i] = gu_tenant_stat(self->dir, gu_cg_id(cg[i]), "parked");
	}
	EXPECT_EQ(0, wb_rates(self->dir, cg, n, STEADY_SECS, rate, empty));
	for (i = 0; i < n; i++) {
		arrived[i] = gu_tenant_stat(self->dir, gu_cg_id(cg[i]), "arrived") - arrived[i];
		parked[i] = gu_tenant_stat(self->dir, gu_cg_id(cg[i]), "parked") - parked[i];
		TH_LOG("%s: %s %.3f MiB/s over %d s (cap %d); bios parked %lld of %lld; nothing"
		       " queued %.1f%% of the time", variant->fs, cg[i],
		       rate[i] / MiB, STEADY_SECS, cap_mib[i], parked[i], arrived[i],
		       empty[i] * 100);
		EXPECT_TRUE(values_close(rate[i], cap_mib[i] * MiB, 5));
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, gu_fio_wait(&job[i], &res));
		TH_LOG("%s: %s write(2) over the run %.3f MiB/s", variant->fs, cg[i],
		       res.write.bw_bytes / MiB);
		EXPECT_EQ(0, res.status);
	}
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/* The accuracy of one cap: a writer alone at wbps=10M, 10 MiB/s +-5% over 10 s. */
TEST_F_TIMEOUT(wb, one_buffered_writer_gets_its_cap, GUEST_TIMEOUT)
{
	NEED_ICOUNT();
	NEED_FULL();
	buffered_writers_get_their_caps(_metadata, self, variant, 1);
}

/* Two writers told apart: /a at wbps=10M and /b at 5M at once, each +-5% over 10 s. */
TEST_F_TIMEOUT(wb, two_buffered_writers_each_get_their_cap, GUEST_TIMEOUT)
{
	NEED_ICOUNT();
	NEED_FULL();
	buffered_writers_get_their_caps(_metadata, self, variant, 2);
}

/* What per_second() saw in a log besides the counts. */
struct lat_log {
	long long max_ns;	/* the slowest I/O */
	long long max_gap_ms;	/* the longest time without a completion */
	long long first_ms;	/* fio's stamp of the first completion */
	long long on_time_ms;	/* ... of the first one on fio's schedule */
	int secs;		/* whole seconds counted from it */
};

/*
 * Completions per second from fio's per-I/O latency log @path
 * (log_avg_msec=0: "ms, ns, ..." per I/O, stamped from fio's start) of a
 * job at @iops, into @per[0..@max_secs), the whole seconds from the first
 * completion on fio's schedule (the i-th at i / @iops from fio's start,
 * within 2 intervals) to the last.  fio's rate is kept from its start, and
 * in the deterministic mode its first read comes 2.6-2.8 s after it
 * (fio's own start-up): it is behind its schedule and catches up at full
 * speed (1,800-1,900 reads in its first second, then 500 a second), which
 * binned from the first read made the clumps measured before (mean
 * 63-72%, worst second 0) while no read took over 9 ms and no two
 * completions were more than 9 ms apart.  fio's averaged log
 * (log_avg_msec=1000) cannot show seconds either (7 or 8 rows for 10 s).
 * Returns the I/Os counted, or -1.
 */
static int per_second(const char *path, int iops, int max_secs, double *per,
		      struct lat_log *ll)
{
	long long ms, ns, prev = -1, start = -1;
	int i, n = 0, counted = 0;
	FILE *f;

	memset(ll, 0, sizeof(*ll));
	for (i = 0; i < max_secs; i++)
		per[i] = 0;
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%lld, %lld, %*[^\n]", &ms, &ns) == 2) {
		if (ns > ll->max_ns)
			ll->max_ns = ns;
		if (prev < 0)
			ll->first_ms = ms;
		else if (ms - prev > ll->max_gap_ms)
			ll->max_gap_ms = ms - prev;
		prev = ms;
		if (start < 0 && ms * iops <= (n + 2) * 1000LL)
			start = ms;
		n++;
		if (start >= 0 && ms - start < max_secs * 1000LL) {
			per[(ms - start) / 1000]++;
			counted++;
		}
	}
	fclose(f);
	if (start < 0)
		return -1;
	ll->on_time_ms = start;
	ll->secs = (prev - start) / 1000;	/* the last, partial second is left out */
	if (ll->secs > max_secs)
		ll->secs = max_secs;
	return counted;
}

/*
 * An O_DIRECT victim with an allocation beside the flood: /v reads 4 KiB at
 * 500 IOPS (fio's rate, alloc=500 strict) from the device under the
 * filesystem while /a floods the page cache at wbps=10M, for 13 s once the
 * flood has run 2 s: it gets >= 99% of its rate over the run, and its
 * isolation per second, min(1, reads completed in the second / 500) as
 * make bench's noisy scenario has it, is >= 99% (mean) over the whole
 * seconds from when fio is on its schedule (per_second(): fio's start-up
 * takes 2.6-2.8 s of it, so 13 s leave about 9 whole seconds).  ext4 only
 * (as the issue asks).  fio's log is kept in the run's out directory.
 */
TEST_F_TIMEOUT(wb, direct_victim_keeps_its_allocation_beside_a_flood, GUEST_TIMEOUT)
{
	enum { RUN = 13, IOPS = 500 };
	struct gu_fio_job jw, jv;
	struct gu_fio rw, rv;
	double reads[RUN], iso, sum = 0, worst = 1;
	struct lat_log ll;
	int n, i;

	NEED_ICOUNT();
	NEED_FULL();
	if (strcmp(variant->fs, "ext4"))
		SKIP(return, "ext4 only");
	ASSERT_EQ(0, gu_cg_create(CG "/v"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG "/a", "wbps=10M"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG "/v",
				   "alloc=500 alloc_metric=iops isolation=strict"));
	ASSERT_EQ(0, writer_start(&jw, CG "/a", "a", 48, RUN + 7, ""));
	sleep(2);
	unlink("/tmp/wbv_clat.1.log");
	ASSERT_EQ(0, gu_fio_start(&jv, CG "/v", "--name=v --filename=" DM_DEV " --direct=1"
				  " --readonly --rw=randread --bs=4k --ioengine=psync"
				  " --rate_iops=%d --runtime=%d --time_based"
				  " --write_lat_log=/tmp/wbv --log_avg_msec=0", IOPS, RUN));
	ASSERT_EQ(0, gu_fio_wait(&jv, &rv));
	ASSERT_EQ(0, gu_fio_wait(&jw, &rw));
	n = per_second("/tmp/wbv_clat.1.log", IOPS, RUN, reads, &ll);
	gu_sh("cp /tmp/wbv_clat.1.log \"$BLKISO_OUT\"/wb_victim_clat.log 2>/dev/null");
	for (i = 0; i < ll.secs; i++) {
		iso = reads[i] / IOPS < 1 ? reads[i] / IOPS : 1;
		sum += iso;
		if (iso < worst)
			worst = iso;
	}
	TH_LOG("victim %.1f IOPS of %d; on schedule from %.3f s (first read at %.3f s of fio's"
	       " time), then isolation per second over %d s: mean %.2f%%, worst %.2f%% (%d reads;"
	       " the slowest %.3f ms, the longest time without one %lld ms); writer wrote"
	       " %.3f MiB/s", rv.read.iops, IOPS, ll.on_time_ms / 1e3, ll.first_ms / 1e3,
	       ll.secs, ll.secs ? sum / ll.secs * 100 : 0, worst * 100, n, ll.max_ns / 1e6,
	       ll.max_gap_ms, rw.write.bw_bytes / MiB);
	EXPECT_EQ(0, rv.status);
	EXPECT_GE(rv.read.iops, 0.99 * IOPS);
	ASSERT_GE(ll.secs, 5);
	EXPECT_GE(sum / ll.secs, 0.99);
}

/* One counter of a cgroup's memory.stat, or -1. */
static long long memstat(const char *cg, const char *key)
{
	char out[64];

	if (gu_sh_out(out, sizeof(out), "awk '$1 == \"%s\" { print $2 }' " CGP "/%s/memory.stat",
		      key, cg) || !out[0])
		return -1;
	return atoll(out);
}

/*
 * What the sampler of cgroup @cg's dirty + writeback pages saw: the peak
 * of file_dirty + file_writeback (memory.stat), and how much it grew over
 * the last POOL_SECS before it stopped.
 */
struct dirty_pool {
	long long peak;
	long long grew;
};

#define POOL_SECS	20
#define POOL_RING	512	/* > POOL_SECS at one sample per 100 ms */

/*
 * Sample @cg's file_dirty + file_writeback every 100 ms in a child until
 * dirty_pool_end() stops it.  Returns the child's pid, or -1; @fd[0] reads
 * the result, closing @fd[1] stops it.
 */
static pid_t dirty_pool_start(const char *cg, int *fd)
{
	static long long ring[POOL_RING];
	static double at[POOL_RING];
	struct dirty_pool res = { 0, 0 };
	int out[2], stop[2];
	long long d, w;
	unsigned int n = 0, i;
	char c;
	pid_t pid;

	if (pipe(out))
		return -1;
	if (pipe(stop)) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	pid = fork();
	if (pid != 0) {
		close(out[1]);
		close(stop[0]);
		if (pid < 0) {
			close(out[0]);
			close(stop[1]);
		} else {
			fd[0] = out[0];
			fd[1] = stop[1];
		}
		return pid;
	}
	close(out[0]);
	close(stop[1]);
	fcntl(stop[0], F_SETFL, O_NONBLOCK);
	while (read(stop[0], &c, 1) < 0) {
		d = memstat(cg, "file_dirty");
		w = memstat(cg, "file_writeback");
		if (d >= 0 && w >= 0) {
			if (d + w > res.peak)
				res.peak = d + w;
			ring[n % POOL_RING] = d + w;
			at[n % POOL_RING] = gu_now_s();
			n++;
		}
		usleep(100 * 1000);
	}
	/* the newest sample at least POOL_SECS older than the last one */
	for (i = n - 1; n && i > 0 && n - i < POOL_RING; i--)
		if (at[(n - 1) % POOL_RING] - at[(i - 1) % POOL_RING] >= POOL_SECS) {
			res.grew = ring[(n - 1) % POOL_RING] - ring[(i - 1) % POOL_RING];
			break;
		}
	_exit(write(out[1], &res, sizeof(res)) == sizeof(res) ? 0 : 1);
}

static int dirty_pool_end(pid_t pid, int *fd, struct dirty_pool *res)
{
	int st, ret = 0;

	close(fd[1]);
	if (read(fd[0], res, sizeof(*res)) != sizeof(*res))
		ret = -1;
	close(fd[0]);
	waitpid(pid, &st, 0);
	return ret;
}

/*
 * Backpressure and accuracy: a 30 s buffered flood at wbps=10M in /a
 * (memory.max 128M, vm.dirty_bytes FLOOD_DIRTY, the background limit an
 * eighth of it) is slowed by dirty throttling.  Bound: /a's file_dirty + file_writeback stays under
 * vm.dirty_bytes plus 4 MiB (what writers may dirty past the limit between
 * two throttling checks); on 6.1 the memory cgroup's own dirty limit,
 * vm.dirty_bytes scaled by its share of the dirtyable memory, is far lower
 * (measured peaks: under 2 MiB), on 6.12 the peak reaches the global limit.
 * Nothing is OOM-killed; /a writes back 10 MiB/s +-5% over 10 s from 15 s,
 * measured from completion to completion (wb_rates()), and fio's write(2)
 * rate over the last 20 s is the cap +-10%.  That rate is the writeback rate plus what the pool of dirty
 * and writeback pages grew by over the same 20 s, which the sampler
 * measures and the log shows: up to the bound / 20 s, so the pool is kept
 * small here (under 16M on 6.12 it alone moved the write(2) rate by up to
 * 0.8 MiB/s, 8%).  The flusher stops whenever the dirty pages (not those
 * under writeback) fall under the background limit: at half the limit, as
 * before, up to 4 MiB stayed dirty in the page cache while blkiso ran out
 * of /a's bios (nothing queued 2-20% of the time), the cap's refill beyond
 * its burst was lost and the writeback came out short (9.280 MiB/s on 6.12
 * xfs, 8.929 on 6.12 ext4 with write(2) 8.784).  At an eighth the flusher
 * hands blkiso all but 1 MiB of the pool.
 */
#define FLOOD_DIRTY	(8 << 20)
TEST_F_TIMEOUT(wb, capped_flood_is_throttled_by_dirty_limits, GUEST_TIMEOUT)
{
	static const char * const cg[] = { "/" CG "/a" };
	struct dirty_pool pool = { -1, 0 };
	struct gu_fio_job j;
	struct gu_fio r;
	long long oom = -1;
	double rate, empty;
	char out[64];
	int fd[2];
	pid_t sampler;

	NEED_ICOUNT();
	NEED_FULL();
	ASSERT_EQ(0, gu_write("/proc/sys/vm/dirty_bytes", "%d", FLOOD_DIRTY));
	ASSERT_EQ(0, gu_write("/proc/sys/vm/dirty_background_bytes", "%d", FLOOD_DIRTY / 8));
	ASSERT_EQ(0, gu_write(CGP "/a/memory.max", "%d", 128 << 20));
	ASSERT_EQ(0, gu_tenant_set(self->dir, cg[0], "wbps=10M"));
	ASSERT_EQ(0, writer_start(&j, CG "/a", "a", 96, POOL_SECS, "--ramp_time=10"));
	sampler = dirty_pool_start("a", fd);
	ASSERT_LT(0, sampler);
	sleep(15);
	EXPECT_EQ(0, wb_rates(self->dir, cg, 1, 10, &rate, &empty));
	ASSERT_EQ(0, gu_fio_wait(&j, &r));
	EXPECT_EQ(0, dirty_pool_end(sampler, fd, &pool));
	if (!gu_sh_out(out, sizeof(out), "awk '$1 == \"oom_kill\" { print $2 }' "
		       CGP "/a/memory.events"))
		oom = atoll(out);
	TH_LOG("%s: peak dirty+writeback %.1f MiB, write(2) %.3f MiB/s (the pool grew %.1f MiB"
	       " in its last %d s: %+.3f MiB/s of it), writeback %.3f MiB/s (nothing queued"
	       " %.1f%% of the time), oom_kill %lld", variant->fs, pool.peak / MiB,
	       r.write.bw_bytes / MiB, pool.grew / MiB, POOL_SECS, pool.grew / MiB / POOL_SECS,
	       rate / MiB, empty * 100, oom);
	EXPECT_EQ(0, r.status);
	EXPECT_TRUE(values_close(rate, 10 * MiB, 5));
	EXPECT_EQ(0LL, oom);
	EXPECT_LE(0, pool.peak);
	EXPECT_LE(pool.peak, FLOOD_DIRTY + (4 << 20));
	EXPECT_TRUE(values_close(r.write.bw_bytes, 10 * MiB, 10));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The fsync in progress, shared by the victim and its watcher. */
struct fsync_now {
	volatile int idx;	/* -1: none */
	volatile double start;
};

#define FSYNC_SLOW_MS	30
#define FSYNC_SLOW_LOG	"/tmp/wb_fsync_slow.txt"

/* @pid's kernel stack (/proc/<pid>/stack) into @f. */
static void dump_stack(FILE *f, const char *pid, const char *what)
{
	char path[64], buf[4096];
	int n;

	snprintf(path, sizeof(path), "/proc/%.16s/stack", pid);
	n = gu_read(path, buf, sizeof(buf));
	fprintf(f, "-- %s (pid %s)\n%s", what, pid, n < 0 ? "(no stack)\n" : buf);
}

/* The victim's stack and every other task's in D state (uninterruptible). */
static void dump_waiters(FILE *f, pid_t victim, int idx, double ran)
{
	char vpid[16], path[64], stat[512], *state;
	struct dirent *de;
	DIR *d;

	fprintf(f, "== fsync %d has run %.1f ms\n", idx, ran * 1e3);
	snprintf(vpid, sizeof(vpid), "%d", (int)victim);
	dump_stack(f, vpid, "victim");
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || !strcmp(de->d_name, vpid))
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/stat", de->d_name);
		if (gu_read(path, stat, sizeof(stat)) < 0)
			continue;
		state = strrchr(stat, ')');
		if (state && state[1] == ' ' && state[2] == 'D') {
			state[3] = '\0';	/* "pid (comm) D" */
			dump_stack(f, de->d_name, stat);
		}
	}
	if (d)
		closedir(d);
	fflush(f);
}

/*
 * What a slow fsync waits on (the flake of issue 16: once 64 ms on 6.1
 * ext4): until killed, every 5 ms, one fsync that has run FSYNC_SLOW_MS
 * gets the kernel stacks of the victim and of every task in D state
 * written once to FSYNC_SLOW_LOG (tmpfs: a wait for the host would leap
 * the deterministic clock inside the fsync it looks at).  Logged, not
 * asserted.
 */
static pid_t fsync_watch(struct fsync_now *now, pid_t victim)
{
	pid_t pid = fork();
	int seen = -1;
	FILE *f;

	if (pid)
		return pid;
	f = fopen(FSYNC_SLOW_LOG, "w");
	if (!f)
		_exit(1);
	for (;;) {
		int idx = now->idx;
		double ran = gu_now_s() - now->start;

		if (idx >= 0 && idx != seen && ran * 1e3 >= FSYNC_SLOW_MS) {
			dump_waiters(f, victim, idx, ran);
			seen = idx;
		}
		usleep(5000);
	}
}

/*
 * In cgroup /v: @n times, create a file, write 4 KiB, fsync, close.  The
 * fsync latencies go to @lat (seconds), the stacks of slow ones to
 * FSYNC_SLOW_LOG (fsync_watch()).  Returns 0 on success.
 */
static int fsync_victim(int n, double *lat)
{
	struct fsync_now *now;
	int pipefd[2], i, st;
	pid_t pid, watcher;

	now = mmap(NULL, sizeof(*now), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		   -1, 0);
	if (now == MAP_FAILED || pipe(pipefd))
		return -1;
	now->idx = -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		static char buf[4096];
		char path[64];

		close(pipefd[0]);
		if (gu_write(CGP "/v/cgroup.procs", "0"))
			_exit(1);
		for (i = 0; i < n; i++) {
			double t;
			int fd;

			snprintf(path, sizeof(path), MNT "/v%d", i);
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf))
				_exit(2);
			t = gu_now_s();
			now->start = t;
			now->idx = i;
			if (fsync(fd))
				_exit(3);
			now->idx = -1;
			t = gu_now_s() - t;
			close(fd);
			if (write(pipefd[1], &t, sizeof(t)) != sizeof(t))
				_exit(4);
			usleep(20 * 1000);
		}
		_exit(0);
	}
	close(pipefd[1]);
	watcher = fsync_watch(now, pid);
	for (i = 0; i < n; i++)
		if (read(pipefd[0], &lat[i], sizeof(lat[i])) != sizeof(lat[i]))
			break;
	close(pipefd[0]);
	waitpid(pid, &st, 0);
	if (watcher > 0) {
		kill(watcher, SIGKILL);
		waitpid(watcher, NULL, 0);
	}
	munmap(now, sizeof(*now));
	return i == n && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* What a flood under a cap and the fsync victim beside it gave. */
struct fsync_flood {
	double p50, p99, max;	/* fsync latencies, seconds */
	int slow;		/* fsyncs of FSYNC_SLOW_MS or more */
	double wrote, secs;	/* /a's wbytes while the writer ran, over secs */
};

/*
 * /a floods the page cache for 14 s under the cap set by @cap (blkiso's or
 * io.max's); from 3 s in, fsync_victim() in /v does N fsyncs on the same
 * filesystem.  Fills @out; the slow fsyncs' stacks go to the run's out
 * directory as wb_fsync_slow_<fs>[_<tag>].txt.
 */
static void fsync_beside_flood(struct __test_metadata *_metadata, const char *dir,
			       const char *fs, const char *tag,
			       int (*cap)(const char *dir), struct fsync_flood *out)
{
	enum { N = 200, SECS = 14 };
	struct gu_fio_job j;
	struct gu_fio r;
	double lat[N], t0;
	long long w0;

	ASSERT_EQ(0, gu_cg_create(CG "/v"));
	ASSERT_EQ(0, cap(dir));
	w0 = wbytes(dir, "/" CG "/a");
	t0 = gu_now_s();
	ASSERT_EQ(0, writer_start(&j, CG "/a", "a", 64, SECS, ""));
	sleep(3);
	ASSERT_EQ(0, fsync_victim(N, lat));
	ASSERT_EQ(0, gu_fio_wait(&j, &r));
	out->wrote = wbytes(dir, "/" CG "/a") - w0;
	out->secs = gu_now_s() - t0;
	qsort(lat, N, sizeof(lat[0]), cmp_double);
	for (out->slow = 0; out->slow < N && lat[N - 1 - out->slow] * 1e3 >= FSYNC_SLOW_MS;
	     out->slow++)
		;
	out->p50 = lat[N / 2];
	out->p99 = lat[N * 99 / 100];
	out->max = lat[N - 1];
	gu_sh("cp " FSYNC_SLOW_LOG " \"$BLKISO_OUT\"/wb_fsync_slow_%s%s.txt 2>/dev/null", fs, tag);
	TH_LOG("%s: fsync p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d over %d ms (their"
	       " waiters' stacks: wb_fsync_slow_%s%s.txt in the run's out directory);"
	       " /a wrote back %.2f MiB in %.1f s", fs, out->p50 * 1e3, out->p99 * 1e3,
	       out->max * 1e3, out->slow, FSYNC_SLOW_MS, fs, tag, out->wrote / MiB, out->secs);
}

static int cap_by_blkiso(const char *dir)
{
	return gu_tenant_set(dir, "/" CG "/a", "wbps=1M");
}

/*
 * No priority inversion: while /a floods the page cache at wbps=1M, a
 * victim in /v doing fsync of small new files on the same filesystem
 * keeps fsync p99 <= 50 ms.  On ext4 (data=ordered) with dioread_nolock,
 * the default, no data is ordered (new blocks stay unwritten until their
 * write completes), so no commit waits for /a's data; mounted
 * nodioread_nolock, every commit would wait for /a's parked writeback,
 * which jbd2 waits on and does not write itself (up to 14 s measured with
 * WB_MOUNT_OPTS, doc/metering.md), so the case keeps the default mount.
 * What does stall it now and then (6.1 ext4: 2 of 22 runs, once 3.9 s):
 * each of /a's writeback I/Os holds a reserved journal handle until it
 * completes (the unwritten extent's conversion), /a's parked bios hold
 * them at its cap's pace, and once they reach half a transaction every
 * ext4_writepages() waits in add_transaction_credits(), the victim's fsync
 * too (doc/metering.md, "The fsync stall"; io.max's figures beside it: the
 * next case).
 */
TEST_F_TIMEOUT(wb, fsync_beside_a_capped_flood_is_not_stalled, GUEST_TIMEOUT)
{
	struct fsync_flood f;

	NEED_ICOUNT();
	NEED_FULL();
	fsync_beside_flood(_metadata, self->dir, variant->fs, "", cap_by_blkiso, &f);
	EXPECT_LE(f.p99, 0.050);
}

/* io.max's wbps=1M on /a for the blkiso device itself (blk-throttle above it) */
static int cap_by_iomax(const char *dir)
{
	struct stat st;

	/* /a stays a tenant, counted but not capped, for its wbytes */
	if (stat(DM_DEV, &st) || gu_tenant_set(dir, "/" CG "/a", "wbps=max"))
		return -1;
	return gu_write(CGP "/a/io.max", "%u:%u wbps=1048576", major(st.st_rdev),
			minor(st.st_rdev));
}

/*
 * The anchor beside the case above: the same flood and victim with the
 * writer capped by io.max (blk-throttle, wbps=1M on the blkiso device, /a
 * uncapped in blkiso).  blk-throttle holds the same writeback bios, and
 * with them ext4's reserved journal handles, so the same stall is
 * possible: the fsync latencies are logged for doc/metering.md, not
 * asserted (selftests/bench/wb-fsync.sh repeats both cases).  What is
 * asserted is that io.max's cap held, so the figures are those of a
 * capped writer: /a's writeback over the run within [0.5, 2] x 1 MiB/s
 * (uncapped, the memory-backed device takes it at hundreds of MiB/s;
 * blk-throttle passes ext4's 2.5-4 MiB bios whole, up to 4 s of the cap
 * each, hence the wide band).
 */
TEST_F_TIMEOUT(wb, fsync_beside_an_iomax_capped_flood, GUEST_TIMEOUT)
{
	struct fsync_flood f;

	NEED_ICOUNT();
	NEED_FULL();
	fsync_beside_flood(_metadata, self->dir, variant->fs, "_iomax", cap_by_iomax, &f);
	EXPECT_GE(f.wrote, 0.5 * MiB * f.secs);
	EXPECT_LE(f.wrote, 2 * MiB * f.secs);
}

TEST_HARNESS_MAIN
