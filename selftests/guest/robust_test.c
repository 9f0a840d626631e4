// SPDX-License-Identifier: GPL-2.0
/*
 * robust_test.c - blkiso loses nothing and lets nobody in (guest test,
 * issue 7; doc/robustness.md).
 *
 * Every test ends by checking the ledger of every tenant and of the device
 * (gu_ledger_ok(): arrived = admitted + dispatched + rejected_nowait +
 * rejected + queued, and once idle completed = admitted + dispatched).
 * Faults: reconfiguration under load, suspend/reload/deferred remove with
 * parked bios, a killed workload whose cgroup is removed, rmmod while in
 * use, the lower device powered off under load, an error-injecting lower
 * device (dm-flakey).  Filesystems on top (ext4, xfs).  Bad input on every
 * interface and a deterministic fuzz run of the conf files.  Permissions.
 * Leaks at teardown.  Each bound is stated at its assertion.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include <linux/blkiso.h>

#include "guest_util.h"
#include "kselftest_harness.h"

#define DM_NAME		"birob"
#define DM_DEV		"/dev/mapper/" DM_NAME
#define CG		"blkiso_rob"
#define NULLB		"nullb_rob"
#define MNT		"/mnt/rob"
#define CG_ROOT		"/sys/fs/cgroup"

/* Wait for @pid at most @secs; -2 on timeout (then it is killed). */
static int wait_bounded(int pid, double secs, double *took)
{
	double t0 = gu_now_s();
	int st;

	for (;;) {
		int r = waitpid(pid, &st, WNOHANG);

		if (r == pid) {
			*took = gu_now_s() - t0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		if (r < 0)
			return -1;
		if (gu_now_s() - t0 > secs) {
			*took = gu_now_s() - t0;
			return -2;
		}
		usleep(20 * 1000);
	}
}

/* Run the shell command @cmd: its exit status, its wall time in *@secs. */
static int sh_timed(const char *cmd, double *secs)
{
	double t0 = gu_now_s();
	int st = gu_sh("%s", cmd);

	*secs = gu_now_s() - t0;
	return st;
}

/* A number in a fio JSON file (fio notes before the JSON are skipped). */
static double fio_json_file_num(const char *file, const char *path)
{
	static char buf[1 << 20];
	double v = -1;
	FILE *f = fopen(file, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	if (!strchr(buf, '{') || gu_json_num(strchr(buf, '{'), path, &v))
		return -1;
	return v;
}

/* A refused line's errno: the parser's cause (EINVAL, ERANGE, E2BIG). */
static bool parse_error(int ret)
{
	return ret == -EINVAL || ret == -ERANGE || ret == -E2BIG;
}

static int count_dm_dirs(void)
{
	char out[64];

	if (gu_sh_out(out, sizeof(out), "ls -d /sys/kernel/blkiso/dm-* 2>/dev/null | wc -l"))
		return -1;
	return atoi(out);
}

FIXTURE(robust) {
	char lower[64];
	char dir[128];
	unsigned long long cgid;
	long long sectors;
};

static void cleanup_all(void)
{
	gu_sh("for c in " CG_ROOT "/" CG "/*/ " CG_ROOT "/" CG "/; do "
	      "[ -f $c/cgroup.kill ] && echo 1 > $c/cgroup.kill; done 2>/dev/null; "
	      "pkill -KILL -x fio; sleep 0.2; "
	      "umount " MNT " 2>/dev/null; "
	      "for d in " DM_NAME "_r " DM_NAME " " DM_NAME "_pw " DM_NAME "_sd " DM_NAME "_fl " DM_NAME "_2 birob_bad; do "
	      "dmsetup remove --retry $d 2>/dev/null; done; "
	      "dmsetup remove --retry flk_rob 2>/dev/null; "
	      "for c in w f k m a b c; do rmdir " CG_ROOT "/" CG "/$c 2>/dev/null; done; "
	      "rmdir " CG_ROOT "/" CG " 2>/dev/null; true");
	gu_nullb_destroy(NULLB "_pw");
	gu_nullb_destroy(NULLB "_fl");
	gu_sh("rmmod scsi_debug 2>/dev/null");
}

FIXTURE_SETUP(robust)
{
	struct gu_nullb nb = { .name = NULLB, .size_mb = 1024, .memory_backed = true };
	char out[64];

	/* A test killed by its timeout skips its teardown: clean up here. */
	cleanup_all();
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_nullb_create(&nb, self->lower, sizeof(self->lower)));
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), "blockdev --getsz %s", self->lower));
	self->sectors = atoll(out);
	ASSERT_EQ(0, gu_sh("dmsetup create " DM_NAME " --table \"0 %lld blkiso %s 0\"",
			   self->sectors, self->lower));
	ASSERT_EQ(0, gu_blkiso_dir(DM_NAME, self->dir, sizeof(self->dir)));
	ASSERT_EQ(0, gu_cg_create(CG));
	self->cgid = gu_cg_id(CG);
	ASSERT_NE(0ULL, self->cgid);
	mkdir(MNT, 0755);
}

FIXTURE_TEARDOWN(robust)
{
	cleanup_all();
	gu_nullb_destroy(NULLB);
	gu_module_unload();
}

/* ---- 2. faults ---- */

TEST_F_TIMEOUT(robust, reconfigure_every_200ms_under_load, GUEST_TIMEOUT)
{
	static const int rates[2] = { 200, 2000 };
	int i, good = 0, n = 0, st;
	struct gu_fio_job job;
	struct gu_fio r;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=2000"));
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=rc --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=libaio --iodepth=16"
				  " --runtime=6 --time_based"));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "completed", 100, 60000));
	/*
	 * 20 changes, one every 200 ms.  The rate in the second half of each
	 * period (100-200 ms after the change, i.e. from the second tick on)
	 * must be the new one r, within [0.6 r - 100, 1.4 r + 100] per second
	 * (the 100/s slack covers the new burst and a carried local batch):
	 * 200/s -> 20..380, 2000/s -> 1100..2900.
	 */
	for (i = 0; i < 20; i++) {
		int rate = rates[i & 1];
		long long c1, c2;
		double t1, t2, got;

		ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, rate == 200 ? "riops=200" :
					   "riops=2000"));
		usleep(100 * 1000);
		c1 = gu_tenant_stat(self->dir, self->cgid, "completed");
		t1 = gu_now_s();
		usleep(100 * 1000);
		c2 = gu_tenant_stat(self->dir, self->cgid, "completed");
		t2 = gu_now_s();
		got = (c2 - c1) / (t2 - t1);
		n++;
		if (got >= rate * 0.6 - 100 && got <= rate * 1.4 + 100)
			good++;
		else
			TH_LOG("period %d: riops=%d, measured %.0f/s over %.0f ms", i, rate, got,
			       (t2 - t1) * 1e3);
	}
	st = gu_fio_wait(&job, &r);
	EXPECT_EQ(0, st);
	EXPECT_EQ(0ULL, r.errors);
	TH_LOG("%d of %d periods at the new rate from the 2nd tick on", good, n);
	/*
	 * Not on the debug kernel: its checks keep the guest below 2000
	 * reads/s (finding 3 of doc/robustness.md); there fio's status, the
	 * ledger and the kernel's reports count.
	 */
	if (!gu_no_rate()) {
		EXPECT_EQ(n, good);
	} else if (!gu_debug_kernel()) {
		EXPECT_GE(good, n * 3 / 4);
	}
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

TEST_F_TIMEOUT(robust, suspend_resume_reload_with_parked_bios_keep_the_ledger, GUEST_TIMEOUT)
{
	struct gu_fio_job job;
	struct gu_fio r;
	double secs;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=20 wiops=20"));
	/*
	 * fio must still submit after the second resume: 4 s are enough on
	 * Debian's kernels; on the debug kernel each dmsetup step takes
	 * seconds, and fio had stopped before the reload (no bio queued in
	 * 60 s), so it runs 30 s there.
	 */
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=p --filename=" DM_DEV " --direct=1"
				  " --rw=randrw --bs=4k --ioengine=libaio --iodepth=64"
				  " --runtime=%d --time_based", gu_debug_kernel() ? 30 : 4));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "queued", 10, 60000));
	EXPECT_EQ(0, sh_timed("dmsetup suspend " DM_NAME, &secs));
	/* suspend never waits behind the 20/s quota: < 2 s for 64 parked bios */
	EXPECT_LT(secs, 2.0) TH_LOG("suspend took %.2fs", secs);
	EXPECT_EQ(0, gu_tenant_stat(self->dir, self->cgid, "queued"));
	EXPECT_LT(0, gu_tenant_stat(self->dir, self->cgid, "debt"));
	EXPECT_EQ(0, gu_sh("dmsetup resume " DM_NAME));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "queued", 10, 60000));
	EXPECT_EQ(0, gu_sh("dmsetup table " DM_NAME " | dmsetup reload " DM_NAME));
	EXPECT_EQ(0, gu_sh("dmsetup resume " DM_NAME));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "queued", 10, 60000));
	EXPECT_EQ(0, gu_sh("dmsetup suspend " DM_NAME " && dmsetup resume " DM_NAME));
	ASSERT_EQ(0, gu_fio_wait(&job, &r));
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

TEST_F_TIMEOUT(robust, deferred_remove_with_parked_bios_ends_every_bio, GUEST_TIMEOUT)
{
	struct gu_fio_job job;
	double took;
	int st;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=50"));
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=d --filename=" DM_DEV " --direct=1"
				  " --rw=randread --bs=4k --ioengine=libaio --iodepth=32"
				  " --runtime=3 --time_based"));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "queued", 10, 60000));
	ASSERT_EQ(0, gu_sh("dmsetup remove --deferred " DM_NAME));
	/* fio runs out its 3 s at 50/s, then the last 32 bios drain: <= 15 s */
	st = wait_bounded(job.pid, 15, &took);
	EXPECT_EQ(0, st) TH_LOG("fio: status %d after %.1fs", st, took);
	/* gone once its last opener closed it, with its sysfs directory */
	EXPECT_NE(0, gu_sh("dmsetup info " DM_NAME " >/dev/null 2>&1"));
	EXPECT_NE(0, access(self->dir, F_OK));
	EXPECT_EQ(0, count_dm_dirs());
}

/*
 * The other ways dmsetup stops a device with bios parked (LVM suspends
 * without flushing; an admin tears down a device still open): a
 * `suspend --noflush` is as prompt as a flushing one and leaves nothing
 * parked, and `wipe_table` (what `dmsetup remove --force` does to an open
 * device: an error table in blkiso's place) ends every parked bio and
 * takes blkiso's directory with the table, while fio still holds the
 * device; fio then sees EIO, runs out its time and exits, and the
 * device can be removed.
 */
TEST_F_TIMEOUT(robust, noflush_suspend_and_wiped_table_with_parked_bios, GUEST_TIMEOUT)
{
	int runtime = gu_debug_kernel() ? 60 : 15;
	struct gu_fio_job job;
	struct gu_fio r;
	double t0, secs;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=20 wiops=20"));
	t0 = gu_now_s();
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=w --filename=" DM_DEV " --direct=1"
				  " --rw=randrw --bs=4k --ioengine=libaio --iodepth=64"
				  " --runtime=%d --time_based --continue_on_error=all",
				  runtime));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "queued", 10, 60000));
	EXPECT_EQ(0, sh_timed("dmsetup suspend --noflush " DM_NAME, &secs));
	EXPECT_LT(secs, 2.0) TH_LOG("suspend --noflush took %.2fs", secs);
	EXPECT_EQ(0, gu_tenant_stat(self->dir, self->cgid, "queued"));
	EXPECT_EQ(0, gu_sh("dmsetup resume " DM_NAME));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "queued", 10, 60000));
	EXPECT_EQ(0, sh_timed("dmsetup wipe_table " DM_NAME, &secs));
	EXPECT_LT(secs, 5.0) TH_LOG("wipe_table took %.2fs", secs);
	EXPECT_NE(0, access(self->dir, F_OK));
	EXPECT_EQ(0, gu_sh("dmsetup table " DM_NAME " | grep -q ' error'"));
	/* fio was still running: the error table fails the rest of its I/O */
	EXPECT_LT(gu_now_s() - t0, runtime - 2.0);
	ASSERT_EQ(0, gu_fio_wait(&job, &r));
	secs = gu_now_s() - t0;
	TH_LOG("fio: status %d, error %llu (its first errno), ended %.1fs after its start",
	       r.status, r.errors, secs);
	EXPECT_EQ((unsigned long long)EIO, r.errors);
	EXPECT_LT(secs, runtime + 10.0);
	EXPECT_EQ(0, gu_sh("dmsetup remove " DM_NAME));
	EXPECT_EQ(0, count_dm_dirs());
}

TEST_F_TIMEOUT(robust, killed_workload_and_removed_cgroup_lose_nothing, GUEST_TIMEOUT)
{
	unsigned long long id;
	struct gu_fio_job job;
	char path[256];
	double took, t0;
	int st;

	ASSERT_EQ(0, gu_cg_create(CG "/k"));
	id = gu_cg_id(CG "/k");
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG "/k", "riops=20 wiops=20"));
	ASSERT_EQ(0, gu_fio_start(&job, CG "/k", "--name=k --filename=" DM_DEV " --direct=1"
				  " --rw=randrw --bs=4k --ioengine=libaio --iodepth=64"
				  " --runtime=60 --time_based"));
	ASSERT_EQ(0, gu_wait_stat(self->dir, id, "queued", 30, 60000));
	/*
	 * SIGKILL every process of the cgroup with ~60 bios parked; exit
	 * waits for its aio: 64 bios at 20/s drain in ~3.2 s; bound 15 s.
	 */
	t0 = gu_now_s();
	ASSERT_EQ(0, gu_cg_kill(CG "/k", 15000));
	st = wait_bounded(job.pid, 15, &took);
	TH_LOG("fio killed: cgroup empty after %.1fs, status %d", gu_now_s() - t0, st);
	EXPECT_EQ(128 + 9, st);
	EXPECT_EQ(0, gu_wait_stat(self->dir, id, "completed", 1, 1));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
	snprintf(path, sizeof(path), "%s/%llu", self->dir, id);
	ASSERT_EQ(0, access(path, F_OK));
	ASSERT_EQ(0, gu_cg_destroy(CG "/k"));
	/* collected within ~2 periods of 5 s, + 5 s */
	t0 = gu_now_s();
	while (gu_now_s() - t0 < 15 && !access(path, F_OK))
		usleep(100 * 1000);
	TH_LOG("tenant directory gone after %.1fs", gu_now_s() - t0);
	EXPECT_NE(0, access(path, F_OK));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

TEST_F_TIMEOUT(robust, rmmod_refused_in_use_then_no_leaks, GUEST_TIMEOUT)
{
	const char *no_objects = "devices=0 tenants=0 parked=0 bio_ext=0 ext_failures=0 tenant_pcpu=0 ";
	struct gu_fio r;
	char out[4096];
	int i;

	/* traffic from three cgroups and the kernel tenant on two devices */
	ASSERT_EQ(0, gu_sh("dmsetup create " DM_NAME "_2 --table \"0 %lld blkiso %s 0\"",
			   self->sectors / 2, self->lower));
	ASSERT_EQ(0, gu_cg_create(CG "/a"));
	ASSERT_EQ(0, gu_cg_create(CG "/b"));
	ASSERT_EQ(0, gu_cg_create(CG "/c"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG "/a", "riops=500"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "wiops=300"));
	for (i = 0; i < 3; i++) {
		const char *cg = i == 0 ? CG "/c" : i == 1 ? CG "/a" : CG "/b";

		EXPECT_EQ(0, gu_fio(cg, &r, "--name=l --filename=" DM_DEV " --direct=1"
				    " --rw=randrw --bs=4k --ioengine=psync --number_ios=200"
				    " --size=64M --name=l2 --filename=/dev/mapper/" DM_NAME "_2"
				    " --direct=1 --rw=randread --bs=4k --ioengine=psync"
				    " --number_ios=100 --size=64M"));
	}
	EXPECT_EQ(0, gu_sh("dd if=/dev/zero of=" DM_DEV " bs=64k count=16 2>/dev/null; sync"));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
	gu_sh("dmesg -c > /dev/null");
	/* refused while a table uses the target */
	EXPECT_NE(0, gu_sh("rmmod blkiso 2>/dev/null"));
	EXPECT_EQ(0, access("/sys/module/blkiso", F_OK));
	EXPECT_EQ(2, count_dm_dirs());
	ASSERT_EQ(0, gu_sh("dmsetup remove " DM_NAME "_2 && dmsetup remove " DM_NAME));
	/* every device directory goes with its last table */
	EXPECT_EQ(0, count_dm_dirs());
	/* and every device state, tenant and parked bio with it */
	EXPECT_EQ(0, gu_read("/sys/kernel/blkiso/objects", out, sizeof(out)) < 0);
	/* the counts (the object sizes after them are constants) */
	EXPECT_EQ(0, strncmp(no_objects, out, strlen(no_objects))) TH_LOG("objects: %s", out);
	EXPECT_EQ(0, gu_sh("rmmod blkiso"));
	EXPECT_NE(0, access("/sys/kernel/blkiso", F_OK));
	gu_sh_out(out, sizeof(out), "dmesg | grep -iE 'Objects remaining|leak|kmem_cache|"
		  "blkiso.*(warn|error|fail)' | head -5");
	EXPECT_STREQ("", out);
	gu_cg_destroy(CG "/a");
	gu_cg_destroy(CG "/b");
	gu_cg_destroy(CG "/c");
}

TEST_F_TIMEOUT(robust, lower_device_powered_off_under_load, GUEST_TIMEOUT)
{
	struct gu_nullb nb = { .name = NULLB "_pw", .size_mb = 512 };
	char lower[64], dir[128];
	struct gu_fio_job job;
	long long errors;
	double took;
	int st;

	ASSERT_EQ(0, gu_nullb_create(&nb, lower, sizeof(lower)));
	ASSERT_EQ(0, gu_sh("dmsetup create " DM_NAME "_pw --table "
			   "\"0 $(blockdev --getsz %s) blkiso %s 0\"", lower, lower));
	ASSERT_EQ(0, gu_blkiso_dir(DM_NAME "_pw", dir, sizeof(dir)));
	ASSERT_EQ(0, gu_tenant_set(dir, "/" CG, "riops=50 wiops=50"));
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=pw --filename=/dev/mapper/" DM_NAME "_pw"
				  " --direct=1 --rw=randrw --bs=4k --ioengine=libaio --iodepth=32"
				  " --runtime=20 --time_based --continue_on_error=all"));
	ASSERT_EQ(0, gu_wait_stat(dir, self->cgid, "queued", 10, 60000));
	ASSERT_EQ(0, gu_write("/sys/kernel/config/nullb/" NULLB "_pw/power", "0"));
	/*
	 * Every bio ends: fio (continue_on_error) runs out its 20 s with
	 * errors, then the parked bios drain at 50/s: fio ends within 40 s.
	 */
	st = wait_bounded(job.pid, 40, &took);
	TH_LOG("fio: status %d after %.1fs", st, took);
	EXPECT_NE(-2, st);
	if (st == -2)
		gu_cg_kill(CG, 5000);
	errors = gu_tenant_stat(dir, self->cgid, "errors");
	TH_LOG("tenant errors %lld, completed %lld", errors,
	       gu_tenant_stat(dir, self->cgid, "completed"));
	EXPECT_LT(0, errors);
	EXPECT_TRUE(gu_ledger_ok(dir));
	/*
	 * Nothing is parked any more: the removal waits for no bio.  A removal
	 * that waited for one would hang; 10 s leaves room for a loaded host
	 * (dmsetup and udev over 9p: once 5.0 s in the ordinary mode).
	 */
	EXPECT_EQ(0, sh_timed("dmsetup remove " DM_NAME "_pw", &took));
	TH_LOG("dmsetup remove: %.2fs", took);
	EXPECT_LT(took, 10.0);
	EXPECT_NE(0, access(dir, F_OK));
}

TEST_F_TIMEOUT(robust, scsi_lower_deleted_under_load, GUEST_TIMEOUT)
{
	char sd[32], dir[128], path[128];
	struct gu_fio_job job;
	long long errors;
	double took;
	int st, ret;

	ret = gu_scsi_debug_blkiso("dev_size_mb=64 ndelay=20000", DM_NAME "_sd", sd, sizeof(sd));
	if (ret == GU_NO_SD_MOD)
		SKIP(return, GU_NO_SD_MOD_WHY);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, gu_blkiso_dir(DM_NAME "_sd", dir, sizeof(dir)));
	ASSERT_EQ(0, gu_tenant_set(dir, "/" CG, "riops=50 wiops=50"));
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=sd --filename=/dev/mapper/" DM_NAME "_sd"
				  " --direct=1 --rw=randrw --bs=4k --ioengine=libaio --iodepth=32"
				  " --runtime=10 --time_based --continue_on_error=all"));
	ASSERT_EQ(0, gu_wait_stat(dir, self->cgid, "queued", 10, 60000));
	snprintf(path, sizeof(path), "/sys/block/%s/device/delete", sd);
	ASSERT_EQ(0, gu_write(path, "1")) TH_LOG("%s", path);
	/* as with null_blk: fio runs out its 10 s with errors, ends within 30 s */
	st = wait_bounded(job.pid, 30, &took);
	TH_LOG("%s deleted: fio status %d after %.1fs", sd, st, took);
	EXPECT_NE(-2, st);
	if (st == -2)
		gu_cg_kill(CG, 5000);
	errors = gu_tenant_stat(dir, self->cgid, "errors");
	TH_LOG("tenant errors %lld, completed %lld", errors,
	       gu_tenant_stat(dir, self->cgid, "completed"));
	EXPECT_LT(0, errors);
	EXPECT_TRUE(gu_ledger_ok(dir));
	EXPECT_EQ(0, sh_timed("dmsetup remove " DM_NAME "_sd", &took));
	TH_LOG("dmsetup remove: %.2fs", took);
	EXPECT_LT(took, 10.0);	/* as above */
	EXPECT_NE(0, access(dir, F_OK));
	EXPECT_EQ(0, gu_sh("rmmod scsi_debug"));
}

TEST_F_TIMEOUT(robust, flakey_lower_errors_are_counted_exactly, GUEST_TIMEOUT)
{
	struct gu_nullb nb = { .name = NULLB "_fl", .size_mb = 512 };
	char lower[64], dir[128];
	struct gu_fio_job job;
	long long errors, completed;
	double fio_err;
	struct gu_fio r;

	ASSERT_EQ(0, gu_nullb_create(&nb, lower, sizeof(lower)));
	ASSERT_EQ(0, gu_sh("modprobe dm-flakey"));
	/* up 1 s, down 1 s: every bio fails while down */
	ASSERT_EQ(0, gu_sh("dmsetup create flk_rob --table "
			   "\"0 $(blockdev --getsz %s) flakey %s 0 1 1\"", lower, lower));
	ASSERT_EQ(0, gu_sh("dmsetup create " DM_NAME "_fl --table "
			   "\"0 $(blockdev --getsz /dev/mapper/flk_rob) blkiso /dev/mapper/flk_rob 0\""));
	ASSERT_EQ(0, gu_blkiso_dir(DM_NAME "_fl", dir, sizeof(dir)));
	ASSERT_EQ(0, gu_tenant_set(dir, "/" CG, "riops=400 wiops=400"));
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=fl --filename=/dev/mapper/" DM_NAME "_fl"
				  " --direct=1 --rw=randrw --bs=4k --ioengine=libaio --iodepth=16"
				  " --runtime=4 --time_based --continue_on_error=all"));
	gu_fio_wait(&job, &r);
	fio_err = fio_json_file_num(job.json, "jobs/total_err");
	errors = gu_tenant_stat(dir, self->cgid, "errors");
	completed = gu_tenant_stat(dir, self->cgid, "completed");
	TH_LOG("fio total_err %.0f, tenant errors %lld of %lld completed, parked %lld",
	       fio_err, errors, completed, gu_tenant_stat(dir, self->cgid, "parked"));
	EXPECT_LT(0, errors);
	EXPECT_LT(errors, completed);
	/* one bio per 4 KiB I/O: the tenant's errors are fio's */
	EXPECT_EQ((long long)fio_err, errors);
	EXPECT_TRUE(gu_ledger_ok(dir));
	EXPECT_EQ(0, gu_sh("dmsetup remove " DM_NAME "_fl && dmsetup remove flk_rob"));
}

TEST_F_TIMEOUT(robust, table_swaps_and_two_segments_under_load, GUEST_TIMEOUT)
{
	long long half = self->sectors / 2;
	/*
	 * The caps must bite and fio must still run after each table step:
	 * the debug kernel's guest completes fewer than 200 reads and writes
	 * a second (no bio queued in 60 s), and its dmsetup steps take
	 * seconds.
	 */
	const char *caps = gu_debug_kernel() ? "riops=20 wiops=20" : "riops=200 wiops=200";
	int secs = gu_debug_kernel() ? 30 : 6;
	char path[256], name[128];
	struct gu_fio_job job;
	struct gu_fio r;

	/* two blkiso segments share the device's tenants and quotas */
	ASSERT_EQ(0, gu_sh("dmsetup reload " DM_NAME " --table \"0 %lld blkiso %s 0\n"
			   "%lld %lld blkiso %s %lld\" && dmsetup resume " DM_NAME,
			   half, self->lower, half, self->sectors - half, self->lower, half));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, caps));
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=sw --filename=" DM_DEV " --direct=1"
				  " --rw=randrw --bs=4k --ioengine=libaio --iodepth=32"
				  " --runtime=%d --time_based", secs));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "queued", 10, 60000));
	/* rename with parked bios: the directory, its name and the quota follow */
	EXPECT_EQ(0, gu_sh("dmsetup rename " DM_NAME " " DM_NAME "_r"));
	snprintf(path, sizeof(path), "%s/name", self->dir);
	EXPECT_LT(0, gu_read(path, name, sizeof(name)));
	EXPECT_STREQ(DM_NAME "_r", name);
	EXPECT_EQ(0, gu_sh("dmsetup rename " DM_NAME "_r " DM_NAME));
	EXPECT_LT(0, gu_read(path, name, sizeof(name)));
	EXPECT_STREQ(DM_NAME, name);
	EXPECT_EQ(0, gu_wait_stat(self->dir, self->cgid, "queued", 10, 60000));
	/* back to one segment with parked bios */
	EXPECT_EQ(0, gu_sh("dmsetup reload " DM_NAME " --table \"0 %lld blkiso %s 0\" && "
			   "dmsetup resume " DM_NAME, self->sectors, self->lower));
	ASSERT_EQ(0, gu_fio_wait(&job, &r));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
	EXPECT_LT(0, gu_tenant_stat(self->dir, self->cgid, "debt"));

	/*
	 * blkiso -> linear -> blkiso under load: the device state goes with
	 * its last table (after dm drained it) and comes back empty.
	 */
	ASSERT_EQ(0, gu_fio_start(&job, CG, "--name=sw2 --filename=" DM_DEV " --direct=1"
				  " --rw=randrw --bs=4k --ioengine=libaio --iodepth=32"
				  " --runtime=%d --time_based", secs * 2 / 3));
	ASSERT_EQ(0, gu_wait_stat(self->dir, self->cgid, "queued", 10, 60000));
	EXPECT_EQ(0, gu_sh("dmsetup reload " DM_NAME " --table \"0 %lld linear %s 0\" && "
			   "dmsetup resume " DM_NAME, self->sectors, self->lower));
	EXPECT_EQ(0, count_dm_dirs());
	usleep(500 * 1000);
	EXPECT_EQ(0, gu_sh("dmsetup reload " DM_NAME " --table \"0 %lld blkiso %s 0\" && "
			   "dmsetup resume " DM_NAME, self->sectors, self->lower));
	EXPECT_EQ(1, count_dm_dirs());
	ASSERT_EQ(0, gu_fio_wait(&job, &r));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/* ---- 3. filesystems on top ---- */

TEST_F_TIMEOUT(robust, ext4_fsync_and_metadata_not_starved_by_capped_writer, GUEST_TIMEOUT)
{
	struct gu_fio_job jw, jf;
	struct gu_fio rw, rf;
	double p99, secs;
	int st;

	ASSERT_EQ(0, gu_mkfs_mount("ext4", DM_DEV, MNT));
	ASSERT_EQ(0, gu_cg_create(CG "/w"));
	ASSERT_EQ(0, gu_cg_create(CG "/f"));
	ASSERT_EQ(0, gu_cg_create(CG "/m"));
	/*
	 * The default initial=exact: with initial=1 each 64 KiB write would
	 * be admitted for one unit and corrected at completion, so the first
	 * QD x 64 KiB (1 MiB) would pass on credit (borrowing) and the 8 s
	 * average would be up to 12% over the cap.
	 */
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG "/w", "wbps=2M"));
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG "/m", "wbps=2M wiops=100"));
	/* the writer saturates its 2 MB/s with direct 64 KiB writes, QD 16 */
	ASSERT_EQ(0, gu_fio_start(&jw, CG "/w", "--name=w --directory=" MNT " --size=64M"
				  " --direct=1 --rw=randwrite --bs=64k --ioengine=libaio"
				  " --iodepth=16 --runtime=8 --time_based"));
	ASSERT_EQ(0, gu_wait_stat(self->dir, gu_cg_id(CG "/w"), "queued", 8, 60000));
	/* a small fsync-heavy job: 4 KiB appends, fsync after each */
	ASSERT_EQ(0, gu_fio_start(&jf, CG "/f", "--name=f --directory=" MNT " --size=1M"
				  " --rw=write --bs=4k --fsync=1 --ioengine=psync"));
	/*
	 * Metadata-heavy, inside a capped cgroup (wbps=2M wiops=100): 2000
	 * creates, sync, 2000 unlinks, sync.  Bound: 60 s.
	 */
	st = sh_timed("echo $$ > " CG_ROOT "/" CG "/m/cgroup.procs && mkdir -p " MNT "/md && "
		      "cd " MNT "/md && for i in $(seq 2000); do : > f$i; done && sync && "
		      "rm -f f* && sync", &secs);
	EXPECT_EQ(0, st);
	TH_LOG("2000 creates + 2000 unlinks + 2 syncs: %.2fs", secs);
	EXPECT_LT(secs, 60.0);
	ASSERT_EQ(0, gu_fio_wait(&jf, &rf));
	ASSERT_EQ(0, gu_fio_wait(&jw, &rw));
	EXPECT_EQ(0ULL, rw.errors);
	EXPECT_EQ(0ULL, rf.errors);
	p99 = fio_json_file_num(jf.json, "sync/lat_ns/percentile/99.000000");
	TH_LOG("writer %.0f B/s (cap 2 MiB/s); fsync p99 %.2f ms over 256 fsyncs",
	       rw.write.bw_bytes, p99 / 1e6);
	/* the writer is held to its cap (+10% for the burst) */
	EXPECT_LE(rw.write.bw_bytes, 2 * 1048576 * 1.10);
	/*
	 * fsync (flush/FUA/meta: the system class) never waits behind it: p99
	 * < 20 ms deterministic (measured ~3 ms), < 250 ms with 2 vCPUs under
	 * TCG (measured 16-65 ms); a parked 64 KiB write waits ~31 ms per bio
	 * of backlog, so starvation behind the writer's queue would show as
	 * hundreds of ms.  Not on the debug kernel, whose ext4 under KASAN
	 * and lockdep is slow by itself (455 ms with the writer below its
	 * cap, 1.4 MB/s): its reports and the ledger count there.
	 */
	EXPECT_LT(0, p99);
	if (!gu_debug_kernel()) {
		EXPECT_LT(p99, gu_no_rate() ? 250e6 : 20e6);
	}
	EXPECT_EQ(0, gu_sh("umount " MNT));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

static void fio_verify_on(struct __test_metadata *_metadata, const char *dir, const char *fs)
{
	struct gu_fio r;

	ASSERT_EQ(0, gu_mkfs_mount(fs, DM_DEV, MNT));
	ASSERT_EQ(0, gu_cg_create(CG "/w"));
	ASSERT_EQ(0, gu_tenant_set(dir, "/" CG "/w", "wbps=4M riops=2000"));
	/* direct (charged to the cgroup) and buffered (writeback: to its owner) */
	EXPECT_EQ(0, gu_fio(CG "/w", &r, "--name=vd --directory=" MNT " --size=8M"
			    " --direct=1 --rw=randwrite --bs=4k --ioengine=libaio --iodepth=8"
			    " --verify=crc32c --do_verify=1 --verify_fatal=1"
			    " --name=vb --directory=" MNT " --size=8M --direct=0 --rw=write"
			    " --bs=64k --ioengine=psync --verify=crc32c --do_verify=1"
			    " --verify_fatal=1 --end_fsync=1"));
	EXPECT_EQ(0ULL, r.errors);
	TH_LOG("%s: verify ok, wrote %llu bytes", fs, r.write.io_bytes);
	EXPECT_EQ(0, gu_sh("umount " MNT));
	EXPECT_TRUE(gu_ledger_ok(dir));
}

TEST_F_TIMEOUT(robust, ext4_fio_verify_passes_under_quota, GUEST_TIMEOUT)
{
	fio_verify_on(_metadata, self->dir, "ext4");
}

TEST_F_TIMEOUT(robust, xfs_fio_verify_passes_under_quota, GUEST_TIMEOUT)
{
	if (gu_sh("command -v mkfs.xfs >/dev/null") ||
	    gu_sh("modprobe crc32c_generic && modprobe libcrc32c && modprobe xfs"))
		SKIP(return, "no mkfs.xfs or no xfs module");
	fio_verify_on(_metadata, self->dir, "xfs");
}

/* ---- 4. bad input ---- */

/* Everything a bad input could change: device and tenant lines, table. */
static void snapshot(const char *dir, unsigned long long cgid, char *buf, size_t size)
{
	char a[1024], b[1024], c[512], p[256];

	snprintf(p, sizeof(p), "%s/conf", dir);
	gu_read(p, a, sizeof(a));
	snprintf(p, sizeof(p), "%s/%llu/conf", dir, cgid);
	gu_read(p, b, sizeof(b));
	gu_sh_out(c, sizeof(c), "dmsetup table " DM_NAME "; ls %s | tr '\\n' ' '", dir);
	snprintf(buf, size, "%s|%s|%s", a, b, c);
}

TEST_F_TIMEOUT(robust, bad_input_on_every_interface_is_refused_and_changes_nothing,
	       GUEST_TIMEOUT)
{
	/* malformed, overflowing, zero, negative, duplicate, unknown, empty */
	static const char * const bad_tenant[] = {
		"riops", "riops=", "riops=12x", "riops=1 2", "=5", "riops==1",
		"riops=99999999999999999999", "rbps=2000P", "riops=1099511627777",
		"riops=0", "wbps=0", "riops=-1", "floor=5", "riops=1 riops=2",
		"nosuchkey=1", "hi.policy=hi,hi", "r0=hi:huge", "sys.min=5",
		"raise_ticks=2 lower_ticks=3", "burst_ms=0", "burst_ms=60001",
	};
	static const char * const bad_dev[] = {
		"unit_bytes", "unit_bytes=3K", "tick_ms=0", "tick_ms=-1",
		"tick_ms=99999999999999999999", "tick_ms=1 tick_ms=2", "nosuch=1",
		"reject_mode=2", "chunk_bytes=5000", "mult_up=1 mult_down=2",
	};
	char before[4096], after[4096], path[256], tconf[256], bin[256];
	const char *top = getenv("BLKISO_TOP");
	unsigned int i;
	int st, dirs;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=1000 wbps=1M"));
	ASSERT_EQ(0, gu_sh("dmsetup message " DM_NAME " 0 device tick_ms=100"));
	snprintf(tconf, sizeof(tconf), "%s/%llu/conf", self->dir, self->cgid);
	snapshot(self->dir, self->cgid, before, sizeof(before));
	dirs = count_dm_dirs();

	for (i = 0; i < sizeof(bad_tenant) / sizeof(bad_tenant[0]); i++) {
		const char *l = bad_tenant[i];

		/* sysfs: the tenant file and the tenant's conf file */
		EXPECT_TRUE(parse_error(gu_tenant_set(self->dir, "/" CG, l))) TH_LOG("tenant: %s", l);
		EXPECT_TRUE(parse_error(gu_write(tconf, "%s", l))) TH_LOG("conf: %s", l);
		/* dm message */
		EXPECT_NE(0, gu_sh("dmsetup message " DM_NAME " 0 tenant /" CG " '%s' "
				   "2>/dev/null", l)) TH_LOG("message: %s", l);
		/* ioctl, through blkisoctl: exit 2 = bad input */
		if (top) {
			snprintf(bin, sizeof(bin), "%s/build/tools/blkisoctl", top);
			st = gu_sh("%s set /" CG " " DM_NAME " '%s' >/dev/null 2>&1", bin, l);
			EXPECT_EQ(2, st) TH_LOG("blkisoctl set: %s", l);
		}
	}
	for (i = 0; i < sizeof(bad_dev) / sizeof(bad_dev[0]); i++) {
		const char *l = bad_dev[i];

		snprintf(path, sizeof(path), "%s/conf", self->dir);
		EXPECT_TRUE(parse_error(gu_write(path, "%s", l))) TH_LOG("dev conf: %s", l);
		EXPECT_NE(0, gu_sh("dmsetup message " DM_NAME " 0 device '%s' 2>/dev/null", l))
			TH_LOG("message device: %s", l);
		/* the table line: a new device and a reload both refuse it */
		EXPECT_NE(0, gu_sh("dmsetup create birob_bad --table \"0 %lld blkiso %s 0 1 %s\""
				   " 2>/dev/null", self->sectors, self->lower, l)) TH_LOG("%s", l);
		EXPECT_NE(0, gu_sh("dmsetup reload " DM_NAME " --table \"0 %lld blkiso %s 0 1 %s\""
				   " 2>/dev/null", self->sectors, self->lower, l)) TH_LOG("%s", l);
		gu_sh("dmsetup remove birob_bad 2>/dev/null");
	}
	/* cgroups: unknown path, zero id, junk, overflowing id, kernel by bad name */
	EXPECT_EQ(-ENOENT, gu_tenant_set(self->dir, "/no/such/cgroup", "riops=1"));
	EXPECT_EQ(-EINVAL, gu_tenant_set(self->dir, "0", "riops=1"));
	EXPECT_EQ(-EINVAL, gu_tenant_set(self->dir, "12abc", "riops=1"));
	EXPECT_EQ(-EINVAL, gu_tenant_set(self->dir, "99999999999999999999999", "riops=1"));
	EXPECT_EQ(-EINVAL, gu_tenant_set(self->dir, "", ""));
	/*
	 * An id that names no cgroup (the guest's ids are small): refused,
	 * as the ioctl refuses it.  Taken, it made a tenant that the
	 * collector unhashed at once while its sysfs directory stayed, and
	 * the next write met "duplicate filename" (the debug kernel's fuzzer).
	 */
	EXPECT_EQ(-ENOENT, gu_tenant_set(self->dir, "999999999", "riops=1"));
	EXPECT_NE(0, gu_sh("dmsetup message " DM_NAME " 0 tenant 999999999 riops=1"
			   " 2>/dev/null"));
	/* dm messages of the wrong shape */
	EXPECT_NE(0, gu_sh("dmsetup message " DM_NAME " 0 bogus x=1 2>/dev/null"));
	EXPECT_NE(0, gu_sh("dmsetup message " DM_NAME " 0 tenant 2>/dev/null"));
	/* table lines of the wrong shape */
	EXPECT_NE(0, gu_sh("dmsetup create birob_bad --table \"0 8 blkiso %s\" 2>/dev/null",
			   self->lower));
	EXPECT_NE(0, gu_sh("dmsetup create birob_bad --table \"0 8 blkiso %s -1\" 2>/dev/null",
			   self->lower));
	EXPECT_NE(0, gu_sh("dmsetup create birob_bad --table \"0 8 blkiso %s 0 2 tick_ms=5\""
			   " 2>/dev/null", self->lower));
	EXPECT_NE(0, gu_sh("dmsetup create birob_bad --table \"0 8 blkiso %s 0 x\" 2>/dev/null",
			   self->lower));
	EXPECT_NE(0, gu_sh("dmsetup create birob_bad --table \"0 8 blkiso /dev/nosuch 0\""
			   " 2>/dev/null"));
	gu_sh("dmsetup remove birob_bad 2>/dev/null");
	/* blkisoctl: unknown cgroup (3), unknown device (3) */
	if (top) {
		EXPECT_EQ(3, gu_sh("%s/build/tools/blkisoctl set /no/such " DM_NAME " riops=1"
				   " >/dev/null 2>&1", top));
		EXPECT_EQ(3, gu_sh("%s/build/tools/blkisoctl set /" CG " nosuchdev riops=1"
				   " >/dev/null 2>&1", top));
	}
	snapshot(self->dir, self->cgid, after, sizeof(after));
	EXPECT_STREQ(before, after);
	/* failed table loads leave no device state behind */
	EXPECT_EQ(dirs, count_dm_dirs());
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/*
 * A reload whose table is refused (here: its lower device does not exist)
 * must not change the live device's configuration either.
 */
TEST_F_TIMEOUT(robust, refused_reload_with_good_params_changes_nothing, GUEST_TIMEOUT)
{
	char before[1024], after[1024], path[256];

	snprintf(path, sizeof(path), "%s/conf", self->dir);
	ASSERT_LE(0, gu_read(path, before, sizeof(before)));
	EXPECT_NE(0, gu_sh("dmsetup reload " DM_NAME " --table \"0 %lld blkiso /dev/nosuch 0"
			   " 1 tick_ms=7\" 2>/dev/null", self->sectors));
	ASSERT_LE(0, gu_read(path, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	/* a reload that is loaded but never resumed: cleared, nothing applies */
	EXPECT_EQ(0, gu_sh("dmsetup reload " DM_NAME " --table \"0 %lld blkiso %s 0 1"
			   " tick_ms=9\" && dmsetup clear " DM_NAME, self->sectors, self->lower));
	ASSERT_LE(0, gu_read(path, after, sizeof(after)));
	EXPECT_STREQ(before, after);
}

/* A small deterministic generator (xorshift64*). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static const char * const tenant_keys[] = {
	"riops", "wiops", "rbps", "wbps", "runits", "wunits", "alloc", "alloc_metric",
	"isolation", "mode", "burst_ms", "burst_limit", "initial", "min_tokens", "floor",
	"deadband", "latency_us", "prio", "slots", "lower_ticks", "raise_ticks",
	"safety_pct", "adapt_pct", "miss_pct", "ideal_us", "hover_ms", "delay_step_us",
	"delay_max_us", "abuse_pct", "hi.units", "mid.units", "lo.units", "sys.units",
	"hi.policy", "mid.policy", "lo.policy", "hi.deduct", "lo.deduct", "hi.min",
	"mid.min", "lo.floor", "hi.action", "lo.action", "rdef", "r0", "r1", "r3", "r7",
	"default", "sys.min",
};
static const char * const dev_keys[] = {
	"unit_bytes", "discard_units", "write_unit_weight", "rw_read_factor", "tick_ms",
	"reject_mode", "window_ticks", "overload_pct", "mult_up", "mult_down",
	"holdoff_ticks", "ideal_us", "ideal_band_us", "chunk_bytes", "shed_bytes",
	"local_max_pct", "dispense_threshold", "hold_ms", "refill_hist",
};
static const char * const words[] = {
	"max", "none", "auto", "inherit", "units", "iops", "wc", "strict", "work",
	"request", "1", "ewma", "exact", "same", "spill", "delay", "reject", "hi", "mid",
	"lo", "hi,mid,lo", "mid,lo", "lo,hi", "hi,hi", "hi:rt", "lo:idle",
	"hi:read,sync,-65536", "lo:524288-", "mid:write,async", "hi:be,4k-64k", "none",
	"lo:1-2-3", "hi:", "", "0x10", "+5", "1e3",
};

static void gen_value(char *v, size_t size)
{
	static const char sfx[] = "KMGTPkx";

	switch (rnd() % 8) {
	case 0:
		snprintf(v, size, "%llu", (unsigned long long)(rnd() % 100));
		break;
	case 1:
		snprintf(v, size, "%llu", (unsigned long long)(rnd() % 100000));
		break;
	case 2:
		snprintf(v, size, "%llu%c", (unsigned long long)(rnd() % 2000),
			 sfx[rnd() % (sizeof(sfx) - 1)]);
		break;
	case 3:
		snprintf(v, size, "-%llu", (unsigned long long)(rnd() % 1000));
		break;
	case 4:
		snprintf(v, size, "%llu", (unsigned long long)rnd() >> (rnd() % 64));
		break;
	case 5:
	case 6:
		snprintf(v, size, "%s", words[rnd() % (sizeof(words) / sizeof(words[0]))]);
		break;
	default: {
		size_t n = rnd() % 8, i;

		for (i = 0; i < n && i + 1 < size; i++)
			v[i] = 33 + rnd() % 94;
		v[i] = '\0';
	}
	}
}

static void gen_line(char *l, size_t size, const char * const *keys, size_t nkeys)
{
	size_t n = 0;
	unsigned int r = rnd() % 20;
	int tokens = r < 12 ? 1 : r < 17 ? 2 : 3 + rnd() % 2, i;
	char v[64];

	l[0] = '\0';
	for (i = 0; i < tokens && n + 80 < size; i++) {
		unsigned int kind = rnd() % 20;

		if (i)
			l[n++] = rnd() % 8 ? ' ' : '\t';
		gen_value(v, sizeof(v));
		if (kind < 18)
			n += snprintf(l + n, size - n, "%s=%s", keys[rnd() % nkeys], v);
		else if (kind == 18)
			n += snprintf(l + n, size - n, "%s", keys[rnd() % nkeys]);
		else
			n += snprintf(l + n, size - n, "%s", v);
	}
}

/* Returns the number of lines accepted; fails the test on a property. */
static int fuzz_file(struct __test_metadata *_metadata, const char *path,
		     const char * const *keys, size_t nkeys, int nlines)
{
	char line[512], before[1024], after[1024], again[1024];
	int i, ret, accepted = 0, bad = 0;

	for (i = 0; i < nlines && bad < 10; i++) {
		gen_line(line, sizeof(line), keys, nkeys);
		if (gu_read(path, before, sizeof(before)) < 0) {
			bad++;
			continue;
		}
		ret = gu_write(path, "%s", line);
		if (gu_read(path, after, sizeof(after)) < 0) {
			bad++;
			continue;
		}
		if (ret) {
			if (!parse_error(ret) || strcmp(before, after)) {
				bad++;
				TH_LOG("refused \"%s\" (%d) but changed \"%s\" -> \"%s\"", line, ret,
				       before, after);
			}
			continue;
		}
		accepted++;
		/* the canonical line parses again to itself */
		ret = gu_write(path, "%s", after);
		if (ret || gu_read(path, again, sizeof(again)) < 0 || strcmp(after, again)) {
			bad++;
			TH_LOG("accepted \"%s\": canonical \"%s\" rewritten (%d) gives \"%s\"",
			       line, after, ret, again);
		}
	}
	EXPECT_EQ(0, bad);
	return accepted;
}

TEST_F_TIMEOUT(robust, fuzzed_conf_lines_round_trip_or_change_nothing, GUEST_TIMEOUT)
{
	char path[256];
	int acc;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=1000"));
	snprintf(path, sizeof(path), "%s/%llu/conf", self->dir, self->cgid);
	acc = fuzz_file(_metadata, path, tenant_keys,
			sizeof(tenant_keys) / sizeof(tenant_keys[0]), 3000);
	TH_LOG("tenant conf: 3000 lines, %d accepted", acc);
	EXPECT_LT(50, acc);
	snprintf(path, sizeof(path), "%s/conf", self->dir);
	acc = fuzz_file(_metadata, path, dev_keys, sizeof(dev_keys) / sizeof(dev_keys[0]),
			1000);
	TH_LOG("device conf: 1000 lines, %d accepted", acc);
	EXPECT_LT(20, acc);
	/* the device still works */
	EXPECT_EQ(0, gu_sh("dd if=" DM_DEV " of=/dev/null bs=4k count=16 iflag=direct "
			   "2>/dev/null"));
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

/* ---- 5. permissions ---- */

static int drop_cap_sys_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0))
		return -1;
	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_SYS_ADMIN / 32].effective &= ~(1U << (CAP_SYS_ADMIN % 32));
	d[CAP_SYS_ADMIN / 32].permitted &= ~(1U << (CAP_SYS_ADMIN % 32));
	d[CAP_SYS_ADMIN / 32].inheritable &= ~(1U << (CAP_SYS_ADMIN % 32));
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

/*
 * In a child, as @who (0: nobody, 1: root without CAP_SYS_ADMIN): the
 * errno of each write (0 if it succeeded), then whether reads worked.
 */
static int child_writes(const char *dir, unsigned long long cgid, int who, int *err, int n)
{
	char files[4][256], buf[2048];
	int pipefd[2], pid, i, res[5] = { 0 };

	/*
	 * Relative to the device directory, entered as root: the guest's
	 * initramfs root directory is 0700, so an absolute path would fail
	 * for nobody before it reached sysfs.
	 */
	snprintf(files[0], sizeof(files[0]), "tenant");
	snprintf(files[1], sizeof(files[1]), "%llu/conf", cgid);
	snprintf(files[2], sizeof(files[2]), "conf");
	snprintf(files[3], sizeof(files[3]), "%llu/stats", cgid);
	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (!pid) {
		if (chdir(dir))
			_exit(1);
		if (who == 0 ? setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534)
			     : drop_cap_sys_admin())
			_exit(1);
		for (i = 0; i < 3; i++) {
			const char *l = i == 0 ? "/" CG " riops=7" : i == 1 ? "riops=7" : "tick_ms=7";
			int fd = open(files[i], O_WRONLY);

			if (fd < 0)
				res[i] = errno;
			else if (write(fd, l, strlen(l)) < 0)
				res[i] = errno;
			if (fd >= 0)
				close(fd);
		}
		res[3] = gu_read(files[3], buf, sizeof(buf));
		if (res[3] > 0)
			res[3] = strstr(buf, "arrived=") ? 1 : -1000;
		res[4] = gu_read("stats", buf, sizeof(buf));
		if (res[4] > 0)
			res[4] = 1;
		if (write(pipefd[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], res, sizeof(res)) != sizeof(res))
		res[3] = -1;
	close(pipefd[0]);
	waitpid(pid, NULL, 0);
	for (i = 0; i < n && i < 5; i++)
		err[i] = res[i];
	return 0;
}

TEST_F_TIMEOUT(robust, writes_need_root_and_cap_sys_admin_reads_do_not, GUEST_TIMEOUT)
{
	char before[4096], after[4096];
	int e[5], i;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=1000"));
	snapshot(self->dir, self->cgid, before, sizeof(before));
	/* nobody: the files are 0600/0200 root, so open() fails with EACCES */
	ASSERT_EQ(0, child_writes(self->dir, self->cgid, 0, e, 5));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(EACCES, e[i]) TH_LOG("nobody, file %d: %s", i, strerror(e[i]));
	EXPECT_EQ(1, e[3]);	/* tenant stats readable */
	EXPECT_EQ(1, e[4]);	/* device stats readable */
	/* root without CAP_SYS_ADMIN: opens, the write fails with EPERM */
	ASSERT_EQ(0, child_writes(self->dir, self->cgid, 1, e, 5));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(EPERM, e[i]) TH_LOG("no CAP_SYS_ADMIN, file %d: %s", i, strerror(e[i]));
	EXPECT_EQ(1, e[3]);
	EXPECT_EQ(1, e[4]);
	snapshot(self->dir, self->cgid, after, sizeof(after));
	EXPECT_STREQ(before, after);
}

TEST_HARNESS_MAIN
