// SPDX-License-Identifier: GPL-2.0
/*
 * target_test.c - the blkiso dm target as a pass-through (guest test).
 *
 * Loads the module, maps a memory-backed null_blk device through a
 * "blkiso" table, and checks that data goes through intact (fio verify),
 * that the offset maps like dm-linear, that suspend/resume and a table
 * reload under fio lose nothing, that bad table lines are refused, that
 * a disk of 4 KiB logical blocks is cut in whole blocks, and that the
 * module cannot go while a table uses it.  Over a real
 * multi-queue driver too (the nvme fixture: QEMU's NVMe controller,
 * selftests/vm/run.sh -N; its cases skip when the guest has none).
 */
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest_util.h"
#include "kselftest_harness.h"

#define DM_NAME		"bitest"
#define DM_DEV		"/dev/mapper/" DM_NAME
#define NULLB_MB	128
#define NULLB_SECTORS	(NULLB_MB * 2048ULL)

FIXTURE(target) {
	char lower[64];
};

FIXTURE_SETUP(target)
{
	struct gu_nullb nb = {
		.name = "nullb_target", .size_mb = NULLB_MB, .memory_backed = true,
	};

	/* A test killed by its timeout skips its teardown: clean up here. */
	gu_sh("pkill -KILL -x fio; dmsetup remove --retry " DM_NAME " 2>/dev/null");
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_nullb_create(&nb, self->lower, sizeof(self->lower)));
}

#define CG_4KN		"blkiso_t4kn"
#define NULLB_4KN	"nullb_4kn"

FIXTURE_TEARDOWN(target)
{
	gu_sh("dmsetup remove --retry " DM_NAME " 2>/dev/null");
	gu_nullb_destroy("nullb_target");
	/* four_kib_logical_blocks_are_cut_whole's: none elsewhere */
	gu_nullb_destroy(NULLB_4KN);
	gu_cg_destroy(CG_4KN);
	gu_module_unload();
}

static int create(const char *lower, unsigned long long offset,
		  unsigned long long len, const char *extra)
{
	return gu_sh("dmsetup create " DM_NAME " --table '0 %llu blkiso %s %llu%s'",
		     len, lower, offset, extra);
}

TEST_F_TIMEOUT(target, create_table_status_remove, GUEST_TIMEOUT)
{
	char out[256], want[256];

	ASSERT_EQ(0, create(self->lower, 0, NULLB_SECTORS, ""));
	ASSERT_EQ(0, access(DM_DEV, F_OK));
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), "dmsetup table " DM_NAME));
	snprintf(want, sizeof(want), "0 %llu blkiso ", NULLB_SECTORS);
	EXPECT_EQ(0, strncmp(out, want, strlen(want))) TH_LOG("table: %s", out);
	ASSERT_EQ(0, gu_sh("blockdev --getsz " DM_DEV " | grep -qx %llu", NULLB_SECTORS));
	ASSERT_EQ(0, gu_sh("dmsetup remove " DM_NAME));
	ASSERT_NE(0, access(DM_DEV, F_OK));
}

TEST_F_TIMEOUT(target, fio_verify_through_target, GUEST_TIMEOUT)
{
	struct gu_fio r;

	ASSERT_EQ(0, create(self->lower, 0, NULLB_SECTORS, ""));
	ASSERT_EQ(0, gu_fio("", &r, "--name=v --filename=" DM_DEV " --direct=1 "
			    "--ioengine=psync --rw=randwrite --bs=4k --size=32M "
			    "--verify=crc32c --do_verify=1 --verify_fatal=1"));
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_EQ(32ULL << 20, r.write.io_bytes);
	EXPECT_EQ(32ULL << 20, r.read.io_bytes);
}

TEST_F_TIMEOUT(target, offset_maps_like_linear, GUEST_TIMEOUT)
{
	/* A block written at sector 0 of the mapping lands at sector 2048. */
	ASSERT_EQ(0, create(self->lower, 2048, NULLB_SECTORS - 2048, ""));
	ASSERT_EQ(0, gu_sh("head -c 4096 /dev/urandom > /tmp/blk && "
			   "dd if=/tmp/blk of=" DM_DEV " bs=4096 count=1 oflag=direct 2>/dev/null"));
	ASSERT_EQ(0, gu_sh("dd if=%s bs=512 skip=2048 count=8 iflag=direct 2>/dev/null | "
			   "cmp -s - /tmp/blk", self->lower));
}

TEST_F_TIMEOUT(target, suspend_resume_and_reload_under_fio, GUEST_TIMEOUT)
{
	struct gu_fio_job job;
	struct gu_fio r;
	int i;

	ASSERT_EQ(0, create(self->lower, 0, NULLB_SECTORS, ""));
	ASSERT_EQ(0, gu_fio_start(&job, "", "--name=v --filename=" DM_DEV
				  " --direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite"
				  " --bs=4k --size=48M --verify=crc32c --do_verify=1"
				  " --verify_fatal=1"));
	for (i = 0; i < 3; i++) {
		usleep(300 * 1000);
		EXPECT_EQ(0, gu_sh("dmsetup suspend " DM_NAME));
		usleep(100 * 1000);
		EXPECT_EQ(0, gu_sh("dmsetup resume " DM_NAME));
		/* A table swap, as lvextend does: reload, then resume. */
		EXPECT_EQ(0, gu_sh("dmsetup table " DM_NAME " | dmsetup reload " DM_NAME));
		EXPECT_EQ(0, gu_sh("dmsetup resume " DM_NAME));
	}
	ASSERT_EQ(0, gu_fio_wait(&job, &r));
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_EQ(48ULL << 20, r.write.io_bytes);
	EXPECT_EQ(48ULL << 20, r.read.io_bytes);
}

/*
 * A disk of 4 KiB logical blocks (as many NVMe drives): the mapping
 * shows the disk's block size, a table whose offset is not whole blocks
 * is refused (dm core checks it through the target's iterate_devices),
 * and a cut keeps whole blocks.  chunk_bytes=6K rounds down to one 4 KiB
 * block here (blkiso_chunk(): whole logical blocks), so every bio of a
 * verified write and read-back of 4k-1m blocks under a biting cap
 * reaches the disk as 4 KiB pieces: the tenant counts exactly 16 MiB /
 * 4 KiB of them each way, no byte is lost or misplaced (fio verify), and
 * the ledger holds.
 */
TEST_F_TIMEOUT(target, four_kib_logical_blocks_are_cut_whole, GUEST_TIMEOUT)
{
	struct gu_nullb nb = {
		.name = NULLB_4KN, .size_mb = NULLB_MB, .blocksize = 4096,
		.memory_backed = true,
	};
	char lower[64], dir[128], path[192];
	unsigned long long cgid;
	struct gu_fio r;

	ASSERT_EQ(0, gu_nullb_create(&nb, lower, sizeof(lower)));
	ASSERT_NE(0, create(lower, 1, NULLB_SECTORS - 8, "")) TH_LOG("an offset inside a block");
	ASSERT_EQ(0, create(lower, 8, NULLB_SECTORS - 8, ""));
	EXPECT_EQ(0, gu_sh("blockdev --getss " DM_DEV " | grep -qx 4096"));
	ASSERT_EQ(0, gu_blkiso_dir(DM_NAME, dir, sizeof(dir)));
	snprintf(path, sizeof(path), "%s/conf", dir);
	ASSERT_EQ(0, gu_write(path, "chunk_bytes=6K"));
	ASSERT_EQ(0, gu_cg_create(CG_4KN));
	cgid = gu_cg_id(CG_4KN);
	ASSERT_NE(0ULL, cgid);
	ASSERT_EQ(0, gu_tenant_set(dir, "/" CG_4KN, "rbps=16M wbps=16M"));
	ASSERT_EQ(0, gu_fio(CG_4KN, &r, "--name=v --filename=" DM_DEV " --direct=1"
			    " --ioengine=libaio --iodepth=8 --rw=randwrite --bsrange=4k-1m"
			    " --size=16M --verify=crc32c --do_verify=1 --verify_fatal=1"));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_EQ(16ULL << 20, r.write.io_bytes);
	EXPECT_EQ(16ULL << 20, r.read.io_bytes);
	EXPECT_EQ(16LL << 20, gu_tenant_stat(dir, cgid, "wbytes"));
	EXPECT_EQ(16LL << 20, gu_tenant_stat(dir, cgid, "rbytes"));
	EXPECT_EQ(4096, gu_tenant_stat(dir, cgid, "wios"));
	EXPECT_EQ(4096, gu_tenant_stat(dir, cgid, "rios"));
	EXPECT_TRUE(gu_ledger_ok(dir));
}

TEST_F_TIMEOUT(target, bad_table_lines_are_refused, GUEST_TIMEOUT)
{
	static const char * const bad[] = {
		"",			/* no offset */
		" abc",			/* offset not a number */
		" -1",			/* negative offset */
		" 0 2 a=1",		/* count says 2, one follows */
		" 0 1",			/* count says 1, none follows */
		" 0 1 nosuchkey=1",	/* unknown parameter */
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[128];

		snprintf(line, sizeof(line), "0 %llu blkiso %s%s", NULLB_SECTORS,
			 self->lower, bad[i]);
		EXPECT_NE(0, gu_sh("dmsetup create " DM_NAME " --table '%s' 2>/dev/null",
				   line)) TH_LOG("accepted: %s", line);
		EXPECT_NE(0, access(DM_DEV, F_OK));
		gu_sh("dmsetup remove " DM_NAME " 2>/dev/null");
	}
	/* Bad lines leave nothing behind: a good one still works. */
	ASSERT_EQ(0, create(self->lower, 0, NULLB_SECTORS, " 0"));
}

/*
 * A reload whose table names the device itself (blktests dm/001's
 * mistake) would send every bio back into .map for ever: it is refused
 * (by blkiso's constructor on 6.1, by the kernel's holder check from 6.2
 * on), the live table stays, and after resume data still goes through
 * (bounded by timeout(1): a loop would hang the writer).
 */
TEST_F_TIMEOUT(target, a_reload_onto_itself_is_refused, GUEST_TIMEOUT)
{
	char before[256], after[256], why[256] = "";

	ASSERT_EQ(0, create(self->lower, 0, NULLB_SECTORS, ""));
	ASSERT_EQ(0, gu_sh_out(before, sizeof(before), "dmsetup table " DM_NAME));
	ASSERT_EQ(0, gu_sh("dmsetup suspend " DM_NAME));
	EXPECT_NE(0, gu_sh("dmsetup reload " DM_NAME " --table '0 %llu blkiso "
			   DM_DEV " 0' 2>/dev/null", NULLB_SECTORS));
	EXPECT_NE(0, gu_sh("dmsetup reload " DM_NAME " --table '0 %llu blkiso "
			   DM_DEV " 0 1 tick_ms=10' 2>/dev/null", NULLB_SECTORS));
	ASSERT_EQ(0, gu_sh("dmsetup resume " DM_NAME));
	gu_sh_out(why, sizeof(why), "dmesg | grep -i 'device-mapper: table' | tail -n 1");
	TH_LOG("refused: %s", why);
	ASSERT_EQ(0, gu_sh_out(after, sizeof(after), "dmsetup table " DM_NAME));
	EXPECT_STREQ(before, after);
	EXPECT_EQ(0, gu_sh("timeout 30 dd if=/dev/urandom of=/tmp/bi_self bs=64k count=16"
			   " status=none && timeout 30 dd if=/tmp/bi_self of=" DM_DEV
			   " bs=64k oflag=direct status=none && timeout 30 cmp -n 1048576"
			   " /tmp/bi_self " DM_DEV));
	gu_sh("rm -f /tmp/bi_self");
}

TEST_F_TIMEOUT(target, module_pinned_while_in_use, GUEST_TIMEOUT)
{
	ASSERT_EQ(0, create(self->lower, 0, NULLB_SECTORS, ""));
	EXPECT_NE(0, gu_sh("rmmod blkiso 2>/dev/null"));
	ASSERT_EQ(0, gu_sh("dmsetup remove " DM_NAME));
	EXPECT_EQ(0, gu_module_unload());
	EXPECT_NE(0, access("/sys/kernel/blkiso", F_OK));
}

#define NVME_DEV	"/dev/nvme0n1"
#define NVME_DM		"binvme"
#define NVME_CG		"blkiso_nvme"
#define NVME_DM_DEV	"/dev/mapper/" NVME_DM

/*
 * blkiso over /dev/nvme0n1: the real nvme driver, one hardware queue per
 * CPU, completions from its interrupt handler on whichever CPU the queue's
 * vector targets, not from a timer of null_blk's.
 */
FIXTURE(nvme) {
	char dir[128];
	unsigned long long cgid;
};

FIXTURE_SETUP(nvme)
{
	if (access(NVME_DEV, F_OK))
		SKIP(return, "no " NVME_DEV " (selftests/vm/run.sh -N SIZE attaches one)");
	gu_sh("pkill -KILL -x fio; dmsetup remove --retry " NVME_DM " 2>/dev/null");
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_sh("echo none > /sys/block/nvme0n1/queue/scheduler"));
	ASSERT_EQ(0, gu_sh("dmsetup create " NVME_DM " --table "
			   "\"0 $(blockdev --getsz " NVME_DEV ") blkiso " NVME_DEV " 0\""));
	ASSERT_EQ(0, gu_blkiso_dir(NVME_DM, self->dir, sizeof(self->dir)));
	ASSERT_EQ(0, gu_cg_create(NVME_CG));
	self->cgid = gu_cg_id(NVME_CG);
	ASSERT_NE(0ULL, self->cgid);
}

FIXTURE_TEARDOWN(nvme)
{
	if (access(NVME_DEV, F_OK))
		return;
	gu_sh("pkill -KILL -x fio; sleep 0.2");
	gu_sh("dmsetup remove --retry " NVME_DM " 2>/dev/null");
	gu_cg_destroy(NVME_CG);
	gu_module_unload();
}

/* Field @i (0-based) of /sys/block/nvme0n1/stat. */
static long long nvme_stat(int i)
{
	char out[64];

	if (gu_sh_out(out, sizeof(out), "awk '{ print $%d }' /sys/block/nvme0n1/stat", i + 1))
		return -1;
	return atoll(out);
}

/*
 * Interrupts of the nvme driver's I/O queue @q (1-based: nvme0q0 is the
 * admin queue), all CPUs: each I/O queue has its own vector, so a queue
 * that completed requests has interrupts of its own.
 */
static long long nvme_queue_irqs(int q)
{
	char out[64];

	if (gu_sh_out(out, sizeof(out), "awk '$NF == \"nvme0q%d\" { for (i = 2; i <= NF; i++)"
		      " if ($i ~ /^[0-9]+$/) n += $i } END { print n + 0 }' /proc/interrupts", q))
		return -1;
	return atoll(out);
}

TEST_F_TIMEOUT(nvme, bios_through_the_nvme_driver_complete_once_counts_exact, GUEST_TIMEOUT)
{
	long long rd0[2], wr0[2], q0[2] = { 0, 0 }, q1[2] = { 0, 0 };
	glob_t g;
	int nq, q;
	struct gu_fio r;

	/* 6.1's harness runs the body even when the setup skipped */
	if (access(NVME_DEV, F_OK))
		SKIP(return, "no " NVME_DEV " (selftests/vm/run.sh -N SIZE attaches one)");
	ASSERT_EQ(0, glob("/sys/block/nvme0n1/mq/*", 0, NULL, &g));
	nq = g.gl_pathc;
	globfree(&g);
	TH_LOG("%d hardware queue(s), %ld CPU(s)", nq, sysconf(_SC_NPROCESSORS_ONLN));

	/* reads completed + merged, writes completed + merged, before */
	rd0[0] = nvme_stat(0), rd0[1] = nvme_stat(1);
	wr0[0] = nvme_stat(4), wr0[1] = nvme_stat(5);
	for (q = 0; q < nq && q < 2; q++)
		q0[q] = nvme_queue_irqs(q + 1);
	/*
	 * Two jobs, one per CPU (split), each writing then verifying its own
	 * 16 MiB: with 2 CPUs they submit on both hardware queues.
	 */
	ASSERT_EQ(0, gu_fio(NVME_CG, &r, "--name=v --filename=" NVME_DM_DEV " --direct=1"
			    " --ioengine=libaio --iodepth=8 --rw=randwrite --bs=4k --size=16M"
			    " --numjobs=2 --offset_increment=16M --cpus_allowed=0-%ld"
			    " --cpus_allowed_policy=split --verify=crc32c --do_verify=1"
			    " --verify_fatal=1", sysconf(_SC_NPROCESSORS_ONLN) - 1));
	EXPECT_EQ(0ULL, r.errors);
	ASSERT_EQ(8192ULL, r.write.ios);
	ASSERT_EQ(8192ULL, r.read.ios);

	/* Every bio blkiso saw arrived once and completed once. */
	EXPECT_TRUE(gu_ledger_ok(self->dir));
	EXPECT_EQ(16384, gu_tenant_stat(self->dir, self->cgid, "arrived"));
	EXPECT_EQ(16384, gu_tenant_stat(self->dir, self->cgid, "completed"));
	/* ... and reached the nvme disk once: a request or merged into one. */
	EXPECT_EQ(8192, nvme_stat(0) - rd0[0] + nvme_stat(1) - rd0[1]);
	EXPECT_EQ(8192, nvme_stat(4) - wr0[0] + nvme_stat(5) - wr0[1]);
	for (q = 0; q < nq && q < 2; q++) {
		q1[q] = nvme_queue_irqs(q + 1);
		TH_LOG("nvme0q%d: %lld interrupts", q + 1, q1[q] - q0[q]);
	}
	/*
	 * Several CPUs, one job on each: both I/O queues completed blkiso's
	 * bios (at least 100 interrupts each of the 16,384 requests'; with
	 * coalescing one interrupt may complete several).
	 */
	if (nq >= 2 && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		EXPECT_GT(q1[0] - q0[0], 100);
		EXPECT_GT(q1[1] - q0[1], 100);
	}
}

TEST_F_TIMEOUT(nvme, riops_cap_holds_over_nvme_within_2pct, GUEST_TIMEOUT)
{
	struct gu_fio r;
	int busy, st;

	if (access(NVME_DEV, F_OK))
		SKIP(return, "no " NVME_DEV " (selftests/vm/run.sh -N SIZE attaches one)");
	if (gu_no_rate())
		SKIP(return, "%s", gu_no_rate());
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" NVME_CG, "riops=1000"));
	/*
	 * The vCPU kept busy: the device answers in host time, and an idle
	 * guest's clock would leap over it (a loaded host: 50 IOPS read).
	 */
	busy = gu_busy_start();
	ASSERT_GT(busy, 0);
	st = gu_fio(NVME_CG, &r, "--name=m --filename=" NVME_DM_DEV " --direct=1"
		    " --rw=randread --bs=4k --ioengine=libaio --iodepth=16"
		    " --runtime=5 --time_based");
	gu_busy_stop(busy);
	ASSERT_EQ(0, st);
	EXPECT_EQ(0ULL, r.errors);
	/* 1000/s plus a 50 ms burst over 5 s (+1%): within 2% */
	EXPECT_TRUE(values_close(r.read.iops, 1000, 2)) TH_LOG("IOPS %.1f", r.read.iops);
	EXPECT_TRUE(gu_ledger_ok(self->dir));
}

TEST_HARNESS_MAIN
