// SPDX-License-Identifier: GPL-2.0
/*
 * lease_test.c - leased credit in the module (guest test; issue 22,
 * doc/cluster.md): BLKISO_IOC_LEASE and the lease sysfs files on a blkiso
 * device over null_blk.  The ioctl's checks (version, key, flags,
 * reserved, range, an uncapped key, no tenant) refuse and change nothing;
 * a query needs no privilege, a lease does; the sysfs line does what the
 * ioctl does; unused credit is taken back (BLKISO_LEASE_F_RETURN).  In the deterministic mode, rates: a tenant capped at
 * riops=100 (its floor) with a lease of 2000 requests admits the floor
 * plus the whole lease (the burst of 5 does not clip it), and after the
 * deadline the floor alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/blkiso.h>

#include "guest_util.h"
#include "kselftest_harness.h"

#define DM_NAME		"bilease"
#define DM_DEV		"/dev/mapper/" DM_NAME
#define CG		"blkiso_lease"

FIXTURE(lease) {
	char lower[64];
	char dir[128];
	unsigned int major, minor;
	unsigned long long cgid;
	int fd;
};

FIXTURE_SETUP(lease)
{
	struct gu_nullb nb = { .name = "nullb_lease", .size_mb = 1024 };
	struct stat st;

	self->fd = -1;
	gu_sh("dmsetup remove --retry " DM_NAME " 2>/dev/null");
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_nullb_create(&nb, self->lower, sizeof(self->lower)));
	ASSERT_EQ(0, gu_sh("dmsetup create " DM_NAME " --table "
			   "\"0 $(blockdev --getsz %s) blkiso %s 0\"", self->lower, self->lower));
	ASSERT_EQ(0, gu_blkiso_dir(DM_NAME, self->dir, sizeof(self->dir)));
	ASSERT_EQ(0, stat(DM_DEV, &st));
	self->major = major(st.st_rdev);
	self->minor = minor(st.st_rdev);
	ASSERT_EQ(0, gu_cg_create(CG));
	self->cgid = gu_cg_id(CG);
	ASSERT_NE(0ULL, self->cgid);
	self->fd = open(BLKISO_DEV_PATH, O_RDONLY);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(lease)
{
	if (self->fd >= 0)
		close(self->fd);
	gu_sh("pkill -KILL -x fio 2>/dev/null; true");
	gu_sh("dmsetup remove --retry " DM_NAME " 2>/dev/null");
	gu_cg_destroy(CG);
	gu_nullb_destroy("nullb_lease");
	gu_module_unload();
}

static void lease_arg(struct blkiso_ioc_lease *a, const struct _test_data_lease *s,
		      __u32 key, __u64 tokens, __u32 ttl_ms)
{
	memset(a, 0, sizeof(*a));
	a->hdr.size = sizeof(*a);
	a->hdr.version = BLKISO_IOCTL_VERSION;
	a->major = s->major;
	a->minor = s->minor;
	a->cgid = s->cgid;
	a->key = key;
	a->tokens = tokens;
	a->ttl_ms = ttl_ms;
}

static int ioc(int fd, struct blkiso_ioc_lease *a)
{
	return ioctl(fd, BLKISO_IOC_LEASE, a) ? errno : 0;
}

TEST_F_TIMEOUT(lease, ioctl_checks_refuse_and_change_nothing, GUEST_TIMEOUT)
{
	struct blkiso_ioc_lease a;
	char path[256], buf[512];
	int pid, st;

	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=100"));
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 100, 1000);
	a.hdr.version = 3;
	EXPECT_EQ(EINVAL, ioc(self->fd, &a));
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 100, 1000);
	a.flags = 2;
	EXPECT_EQ(EINVAL, ioc(self->fd, &a));
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 100, 1000);
	a.reserved = 1;
	EXPECT_EQ(EINVAL, ioc(self->fd, &a));
	lease_arg(&a, self, BLKISO_LEASE_NR_KEYS, 100, 1000);
	EXPECT_EQ(EINVAL, ioc(self->fd, &a));
	lease_arg(&a, self, BLKISO_LEASE_WIOS, 100, 1000);
	EXPECT_EQ(EINVAL, ioc(self->fd, &a));
	TH_LOG("uncapped key: %s", a.msg);
	EXPECT_NE(NULL, strstr(a.msg, "no cap"));
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 100, 0);
	EXPECT_EQ(ERANGE, ioc(self->fd, &a));
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 1ULL << 49, 1000);
	EXPECT_EQ(ERANGE, ioc(self->fd, &a));
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 100, 3600001);
	EXPECT_EQ(ERANGE, ioc(self->fd, &a));
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 100, 1000);
	a.cgid = self->cgid + 1000000;
	EXPECT_EQ(ENOENT, ioc(self->fd, &a));
	/* nothing was leased */
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 0, 0);
	ASSERT_EQ(0, ioc(self->fd, &a));
	EXPECT_EQ(0ULL, a.nr_leases);
	EXPECT_EQ(0ULL, a.left);

	/* a lease, then a query without privilege; a lease needs it */
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 5000, 60000);
	ASSERT_EQ(0, ioc(self->fd, &a));
	EXPECT_EQ(5000ULL, a.left);
	EXPECT_LE(a.ttl_left_ms, 60000ULL);
	EXPECT_GE(a.ttl_left_ms, 59000ULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct blkiso_ioc_lease q;

		if (setuid(65534))
			_exit(10);
		lease_arg(&q, self, BLKISO_LEASE_RIOS, 0, 0);
		if (ioc(self->fd, &q) || q.left != 5000)
			_exit(11);
		lease_arg(&q, self, BLKISO_LEASE_RIOS, 1, 1000);
		_exit(ioc(self->fd, &q) == EPERM ? 0 : 12);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("child status %d", st);

	/* sysfs parity: the device's lease file, the tenant's lease file */
	snprintf(path, sizeof(path), "%s/lease", self->dir);
	EXPECT_EQ(0, gu_write(path, "/%s riops 700 30000", CG));
	EXPECT_NE(0, gu_write(path, "/%s wiops 700 30000", CG));
	EXPECT_NE(0, gu_write(path, "/%s riops 700", CG));
	EXPECT_NE(0, gu_write(path, "/%s riops 700 0", CG));
	EXPECT_NE(0, gu_write(path, "/%s bogus 700 30000", CG));
	snprintf(path, sizeof(path), "%s/%llu/lease", self->dir, self->cgid);
	ASSERT_EQ(0, gu_read(path, buf, sizeof(buf)) < 0);
	TH_LOG("%s: %s", path, buf);
	EXPECT_NE(NULL, strstr(buf, "riops.left=5700 "));
	EXPECT_NE(NULL, strstr(buf, "riops.granted=5700 "));
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 0, 0);
	ASSERT_EQ(0, ioc(self->fd, &a));
	EXPECT_EQ(2ULL, a.nr_leases);
	EXPECT_LE(a.ttl_left_ms, 30000ULL);
	/* unused credit taken back */
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 700, 0);
	a.flags = BLKISO_LEASE_F_RETURN;
	ASSERT_EQ(0, ioc(self->fd, &a));
	EXPECT_EQ(5000ULL, a.left);
	EXPECT_EQ(700ULL, a.returned);
	EXPECT_EQ(0ULL, a.spent);
}

/* fio QD4 4 KiB random reads in CG for @secs: the reads done. */
static unsigned long long reads(int secs)
{
	struct gu_fio r;

	if (gu_fio(CG, &r, "--name=l --filename=" DM_DEV " --direct=1 --rw=randread"
		   " --bs=4k --ioengine=libaio --iodepth=4 --runtime=%d --time_based", secs))
		return 0;
	if (r.errors)
		return 0;
	return r.read.ios;
}

TEST_F_TIMEOUT(lease, floor_plus_lease_then_floor, GUEST_TIMEOUT)
{
	struct blkiso_ioc_lease a;
	unsigned long long n;

	if (gu_no_rate())
		SKIP(return, "%s", gu_no_rate());
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG, "riops=100"));
	/* 2000 requests for 4 s; fio runs 4 s from its start, past the deadline */
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 2000, 4000);
	ASSERT_EQ(0, ioc(self->fd, &a));
	n = reads(4);
	TH_LOG("4 s with a lease of 2000 over riops=100: %llu reads (expect 2400 +- 2 %%)", n);
	EXPECT_TRUE(values_close(n, 2400, 2));
	lease_arg(&a, self, BLKISO_LEASE_RIOS, 0, 0);
	ASSERT_EQ(0, ioc(self->fd, &a));
	TH_LOG("left %llu spent %llu expired %llu", a.left, a.spent, a.expired);
	EXPECT_EQ(0ULL, a.left);
	EXPECT_EQ(2000ULL, a.spent + a.expired);
	EXPECT_GE(a.spent, 1990ULL);
	n = reads(3);
	TH_LOG("3 s after the deadline: %llu reads (expect 300 +- 3 %%)", n);
	EXPECT_TRUE(values_close(n, 300, 3));
}

TEST_HARNESS_MAIN
