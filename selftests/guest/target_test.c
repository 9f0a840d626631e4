// SPDX-License-Identifier: GPL-2.0
/*
 * target_test.c - the blkiso dm target as a pass-through (guest test).
 *
 * Loads the module, maps a memory-backed null_blk device through a
 * "blkiso" table, and checks that data goes through intact (fio verify),
 * that the offset maps like dm-linear, that suspend/resume and a table
 * reload under fio lose nothing, that bad table lines are refused, and
 * that the module cannot go while a table uses it.
 */
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

FIXTURE_TEARDOWN(target)
{
	gu_sh("dmsetup remove --retry " DM_NAME " 2>/dev/null");
	gu_nullb_destroy("nullb_target");
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

TEST_F_TIMEOUT(target, module_pinned_while_in_use, GUEST_TIMEOUT)
{
	ASSERT_EQ(0, create(self->lower, 0, NULLB_SECTORS, ""));
	EXPECT_NE(0, gu_sh("rmmod blkiso 2>/dev/null"));
	ASSERT_EQ(0, gu_sh("dmsetup remove " DM_NAME));
	EXPECT_EQ(0, gu_module_unload());
	EXPECT_NE(0, access("/sys/kernel/blkiso", F_OK));
}

TEST_HARNESS_MAIN
