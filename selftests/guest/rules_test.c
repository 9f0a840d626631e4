// SPDX-License-Identifier: GPL-2.0
/*
 * rules_test.c - device-level rules: quotas that follow cgroup paths
 * (kmod/blkiso_rules.c; guest test).
 *
 * A "container" cgroup is removed and made again 50 times (rmdir + mkdir:
 * a new cgroup id each life) under a glob rule, with direct reads in every
 * life: each life's tenant must carry the rule's quota from its first bio
 * (the tenants' counters add up to every read issued) and the reads must
 * run at the quota.  Then the specificity order, a tenant line beating
 * the rules, bad rules refused, and rules surviving a table reload.  The
 * reads come from a forked child that joins the cgroup and calls preadv2()
 * (no fio start-up per life), so a run stays well under a minute.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_util.h"
#include "kselftest_harness.h"

#define DM_NAME		"birules"
#define DM_DEV		"/dev/mapper/" DM_NAME
#define CG		"blkiso_rules"
#define LIVES		50
#define READS		100	/* per life */
#define RIOPS		1000	/* the rule's cap */
#define CTL		"$BLKISO_TOP/build/tools/blkisoctl"

FIXTURE(rules) {
	char lower[64];
	char dir[128];
};

FIXTURE_SETUP(rules)
{
	struct gu_nullb nb = { .name = "nullb_rules", .size_mb = 256 };

	gu_sh("dmsetup remove --retry " DM_NAME " 2>/dev/null");
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_nullb_create(&nb, self->lower, sizeof(self->lower)));
	ASSERT_EQ(0, gu_sh("dmsetup create " DM_NAME " --table "
			   "\"0 $(blockdev --getsz %s) blkiso %s 0\"", self->lower, self->lower));
	ASSERT_EQ(0, gu_blkiso_dir(DM_NAME, self->dir, sizeof(self->dir)));
	ASSERT_EQ(0, gu_cg_create(CG));
}

FIXTURE_TEARDOWN(rules)
{
	static const char *const cgs[] = { "ctr", "ctr-a", "ctr-b", "other", "noio",
					    "ctr/inner", "noio/leaf" };
	char name[64];
	int i;

	gu_sh("dmsetup remove --retry " DM_NAME " 2>/dev/null");
	for (i = sizeof(cgs) / sizeof(cgs[0]) - 1; i >= 0; i--) {
		snprintf(name, sizeof(name), CG "/%s", cgs[i]);
		gu_cg_destroy(name);
	}
	gu_cg_destroy(CG);
	gu_nullb_destroy("nullb_rules");
	gu_module_unload();
}

static int rule(const char *dir, const char *line)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/rule", dir);
	return gu_write(path, "%s", line);
}

/*
 * @n direct 4 KiB reads from inside cgroup @cg (a forked child joins it);
 * the seconds they took, or -1.
 */
static double reads_in(const char *cg, int n)
{
	int pfd[2], status;
	double secs = -1;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct timespec t0, t1;
		char path[256];
		struct iovec iov;
		void *buf;
		double s;
		int fd, i;

		close(pfd[0]);
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cgroup.procs", cg);
		if (gu_write(path, "0") || posix_memalign(&buf, 4096, 4096))
			_exit(1);
		fd = open(DM_DEV, O_RDONLY | O_DIRECT);
		if (fd < 0)
			_exit(1);
		iov.iov_base = buf;
		iov.iov_len = 4096;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < n; i++)
			if (preadv2(fd, &iov, 1, (off_t)(i % 1024) * 4096, 0) != 4096)
				_exit(1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		s = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (write(pfd[1], &s, sizeof(s)) != sizeof(s))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], &secs, sizeof(secs)) != sizeof(secs))
		secs = -1;
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return secs;
}

/* The tenant's conf line of cgroup @cg (waits for its directory). */
static int tenant_conf(const char *dir, const char *cg, char *buf, size_t size)
{
	char path[256];
	int i;

	snprintf(path, sizeof(path), "%s/%llu/conf", dir, gu_cg_id(cg));
	for (i = 0; i < 100 && access(path, F_OK); i++)
		usleep(10 * 1000);
	return gu_read(path, buf, size) > 0 ? 0 : -1;
}

/* The conf line of cgroup @cg's tenant starts with @want (says what it is if not). */
static bool conf_starts(const char *dir, const char *cg, const char *want)
{
	char conf[512];

	if (tenant_conf(dir, cg, conf, sizeof(conf)))
		return false;
	if (strncmp(conf, want, strlen(want)))
		fprintf(stderr, "# %s: \"%s\", want \"%s...\"\n", cg, conf, want);
	return !strncmp(conf, want, strlen(want));
}

TEST_F_TIMEOUT(rules, restarted_container_is_under_its_rule_from_its_first_bio, GUEST_TIMEOUT)
{
	char line[128];
	long long sum = 0, done, parked = 0;
	double secs, total = 0, rate;
	unsigned long long id;
	int life;

	if (gu_no_rate())
		SKIP(return, "%s", gu_no_rate());
	/* burst_limit=1: a new life's full bucket is one read, not 5 % */
	snprintf(line, sizeof(line), "/" CG "/ctr* riops=%d burst_limit=1", RIOPS);
	ASSERT_EQ(0, rule(self->dir, line));
	for (life = 0; life < LIVES; life++) {
		ASSERT_EQ(0, gu_cg_create(CG "/ctr"));
		id = gu_cg_id(CG "/ctr");
		secs = reads_in(CG "/ctr", READS);
		ASSERT_LT(0, secs) TH_LOG("life %d: the reads failed", life);
		total += secs;
		/* every read of this life was counted by its own, ruled tenant */
		done = gu_tenant_stat(self->dir, id, "completed");
		EXPECT_EQ(READS, done) TH_LOG("life %d: tenant %llu counted %lld", life, id, done);
		sum += done;
		parked += gu_tenant_stat(self->dir, id, "parked");
		if (life == 0) {
			char conf[512];

			ASSERT_EQ(0, tenant_conf(self->dir, CG "/ctr", conf, sizeof(conf)));
			EXPECT_NE(NULL, strstr(conf, "riops=1000 ")) TH_LOG("%s", conf);
		}
		ASSERT_EQ(0, gu_cg_destroy(CG "/ctr"));
	}
	EXPECT_EQ((long long)LIVES * READS, sum);
	EXPECT_LT(LIVES * (READS - 5), parked);
	/*
	 * One read per life passes at once (the bucket of one), the other 99
	 * at 1000/s: 100 reads in 99 ms, +1 %.  Within 3 %.
	 */
	rate = LIVES * READS / total;
	TH_LOG("%d lives x %d reads: %.1f reads/s against a rule of %d", LIVES, READS,
	       rate, RIOPS);
	EXPECT_TRUE(values_close(rate, RIOPS, 3));
}

TEST_F_TIMEOUT(rules, most_specific_rule_wins_and_a_tenant_line_beats_them, GUEST_TIMEOUT)
{
	char buf[4096], path[256];

	ASSERT_EQ(0, rule(self->dir, "/" CG "/** riops=100"));
	ASSERT_EQ(0, rule(self->dir, "/" CG "/ctr-* riops=200"));
	ASSERT_EQ(0, rule(self->dir, "/" CG "/ctr-a riops=300"));
	ASSERT_EQ(0, gu_cg_create(CG "/ctr-a"));
	ASSERT_EQ(0, gu_cg_create(CG "/ctr-b"));
	ASSERT_EQ(0, gu_cg_create(CG "/other"));
	ASSERT_LT(0, reads_in(CG "/ctr-a", 1));
	ASSERT_LT(0, reads_in(CG "/ctr-b", 1));
	ASSERT_LT(0, reads_in(CG "/other", 1));
	EXPECT_TRUE(conf_starts(self->dir, CG "/ctr-a", "riops=300 "));
	EXPECT_TRUE(conf_starts(self->dir, CG "/ctr-b", "riops=200 "));
	EXPECT_TRUE(conf_starts(self->dir, CG "/other", "riops=100 "));
	ASSERT_EQ(0, gu_sh_out(buf, sizeof(buf), CTL " tenant list dev " DM_NAME));
	EXPECT_NE(NULL, strstr(buf, " rule ")) TH_LOG("%s", buf);
	/* the parent is not "below" itself: no tenant was made for it */
	snprintf(path, sizeof(path), "%s/%llu", self->dir, gu_cg_id(CG));
	EXPECT_NE(0, access(path, F_OK));

	/* a tenant line beats every rule, and rule changes leave it alone */
	ASSERT_EQ(0, gu_tenant_set(self->dir, "/" CG "/ctr-b", "wiops=50"));
	EXPECT_TRUE(conf_starts(self->dir, CG "/ctr-b", "riops=max wiops=50 "));
	ASSERT_EQ(0, rule(self->dir, "/" CG "/ctr-* riops=250"));
	EXPECT_TRUE(conf_starts(self->dir, CG "/ctr-b", "riops=max wiops=50 "));
	/* tenant_del hands it back to the rules */
	snprintf(path, sizeof(path), "%s/tenant_del", self->dir);
	ASSERT_EQ(0, gu_write(path, "/" CG "/ctr-b"));
	EXPECT_TRUE(conf_starts(self->dir, CG "/ctr-b", "riops=250 "));
	/* a rule's quota is not a tenant line: tenant_del refuses it */
	EXPECT_EQ(-ENOENT, gu_write(path, "/" CG "/ctr-b"));

	/* removing a rule: the next best takes its tenants */
	ASSERT_EQ(0, rule(self->dir, "del /" CG "/ctr-a"));
	EXPECT_TRUE(conf_starts(self->dir, CG "/ctr-a", "riops=250 "));
	ASSERT_EQ(0, rule(self->dir, "del /" CG "/**"));
	EXPECT_TRUE(conf_starts(self->dir, CG "/other", "riops=max "));

	snprintf(path, sizeof(path), "%s/rules", self->dir);
	ASSERT_LT(0, gu_read(path, buf, sizeof(buf)));
	EXPECT_STREQ("/" CG "/ctr-* riops=250 wiops=max rbps=max wbps=max runits=max wunits=max",
		     buf);
}

TEST_F_TIMEOUT(rules, bad_rules_are_refused_and_change_nothing, GUEST_TIMEOUT)
{
	char before[4096], after[4096], path[256], line[64];
	int i, ret = 0;

	ASSERT_EQ(0, rule(self->dir, "/a riops=1"));
	snprintf(path, sizeof(path), "%s/rules", self->dir);
	ASSERT_LT(0, gu_read(path, before, sizeof(before)));
	EXPECT_EQ(-EINVAL, rule(self->dir, "relative riops=1"));
	EXPECT_EQ(-EINVAL, rule(self->dir, "/a/**x riops=1"));
	EXPECT_EQ(-EINVAL, rule(self->dir, "/a riops=12x"));
	EXPECT_EQ(-EINVAL, rule(self->dir, "/a"));		/* no key */
	EXPECT_EQ(-EINVAL, rule(self->dir, "del /a extra"));
	EXPECT_EQ(-ENOENT, rule(self->dir, "del /nothing"));
	ASSERT_LT(0, gu_read(path, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	/* 64 rules per device; the 65th is refused */
	for (i = 1; i < 64 && !ret; i++) {
		snprintf(line, sizeof(line), "/r%d riops=%d", i, i);
		ret = rule(self->dir, line);
	}
	EXPECT_EQ(0, ret);
	EXPECT_EQ(-ENOSPC, rule(self->dir, "/r64 riops=64"));
	/* replacing one still works at the limit */
	EXPECT_EQ(0, rule(self->dir, "/r1 riops=2"));
}

TEST_F_TIMEOUT(rules, rules_survive_a_table_reload, GUEST_TIMEOUT)
{
	char before[4096], after[4096], path[256], conf[512];

	ASSERT_EQ(0, rule(self->dir, "/" CG "/ctr* wbps=1M"));
	ASSERT_EQ(0, gu_sh("dmsetup message " DM_NAME " 0 rule /" CG "/other riops=77"));
	snprintf(path, sizeof(path), "%s/rules", self->dir);
	ASSERT_LT(0, gu_read(path, before, sizeof(before)));
	EXPECT_NE(NULL, strstr(before, "/" CG "/other riops=77 "));
	ASSERT_EQ(0, gu_sh("dmsetup table " DM_NAME " | dmsetup reload " DM_NAME));
	ASSERT_EQ(0, gu_sh("dmsetup resume " DM_NAME));
	ASSERT_LT(0, gu_read(path, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	/* and a cgroup born after the reload gets its rule */
	ASSERT_EQ(0, gu_cg_create(CG "/ctr"));
	ASSERT_EQ(0, gu_cg_create(CG "/ctr/inner"));
	ASSERT_LT(0, reads_in(CG "/ctr/inner", 1));
	/* the reads came from a child cgroup: the matched parent got its tenant */
	ASSERT_EQ(0, tenant_conf(self->dir, CG "/ctr", conf, sizeof(conf)));
	EXPECT_NE(NULL, strstr(conf, "wbps=1048576 ")) TH_LOG("%s", conf);
	ASSERT_EQ(0, gu_sh("dmsetup message " DM_NAME " 0 rule del /" CG "/other"));
	ASSERT_LT(0, gu_read(path, after, sizeof(after)));
	EXPECT_EQ(NULL, strstr(after, "/other"));
}

TEST_F_TIMEOUT(rules, blkisoctl_rules_save_and_apply, GUEST_TIMEOUT)
{
	char out[8192], again[8192];

	ASSERT_EQ(0, gu_cg_create(CG "/other"));
	ASSERT_EQ(0, gu_sh(CTL " rule add dev " DM_NAME " '/" CG "/ctr-*' riops=200"));
	EXPECT_EQ(2, gu_sh(CTL " rule add dev " DM_NAME " relative riops=1 2>/dev/null"));
	EXPECT_EQ(3, gu_sh(CTL " rule del dev " DM_NAME " /nothing 2>/dev/null"));
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), CTL " -j rule list dev " DM_NAME));
	EXPECT_NE(NULL, strstr(out, "\"glob\":\"/" CG "/ctr-*\",\"line\":\"riops=200 "))
		TH_LOG("%s", out);
	ASSERT_EQ(0, gu_sh(CTL " tenant set dev " DM_NAME " cgroup /" CG "/other wiops=33"));
	ASSERT_EQ(0, gu_sh(CTL " device set dev " DM_NAME " tick_ms=50"));
	ASSERT_EQ(0, gu_sh(CTL " save " DM_NAME " > /tmp/rules-saved.conf"));
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), "tail -n +2 /tmp/rules-saved.conf"));
	EXPECT_NE(NULL, strstr(out, "device " DM_NAME " tick_ms=50\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "rule " DM_NAME " /" CG "/ctr-* riops=200 wiops=max"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "tenant " DM_NAME " /" CG "/other riops=max wiops=33 "))
		TH_LOG("%s", out);
	/* forget it all, then apply the saved file: the same configuration */
	ASSERT_EQ(0, gu_sh(CTL " rule del dev " DM_NAME " '/" CG "/ctr-*'"));
	ASSERT_EQ(0, gu_sh(CTL " tenant del dev " DM_NAME " cgroup /" CG "/other"));
	ASSERT_EQ(0, gu_sh(CTL " device set dev " DM_NAME " tick_ms=default"));
	ASSERT_EQ(0, gu_sh_out(again, sizeof(again), CTL " save " DM_NAME " | tail -n +2"));
	EXPECT_EQ(NULL, strstr(again, "rule ")) TH_LOG("%s", again);
	ASSERT_EQ(0, gu_sh(CTL " apply /tmp/rules-saved.conf"));
	ASSERT_EQ(0, gu_sh_out(again, sizeof(again), CTL " save " DM_NAME " | tail -n +2"));
	EXPECT_STREQ(out, again);
	unlink("/tmp/rules-saved.conf");
}

TEST_F_TIMEOUT(rules, missing_io_controller_on_the_path_is_warned, GUEST_TIMEOUT)
{
	char out[4096];

	/* noio (+io from its parent) does not pass it on: leaf's bios go to noio */
	ASSERT_EQ(0, gu_cg_create(CG "/noio"));
	ASSERT_EQ(0, mkdir("/sys/fs/cgroup/" CG "/noio/leaf", 0755));
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), CTL " tenant set dev " DM_NAME
			       " cgroup /" CG "/noio/leaf riops=5 2>&1"));
	EXPECT_NE(NULL, strstr(out, "/sys/fs/cgroup/" CG "/noio/cgroup.subtree_control lacks +io"))
		TH_LOG("%s", out);
	ASSERT_EQ(0, gu_write("/sys/fs/cgroup/" CG "/noio/cgroup.subtree_control", "+io"));
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), CTL " tenant set dev " DM_NAME
			       " cgroup /" CG "/noio/leaf riops=6 2>&1"));
	EXPECT_EQ(NULL, strstr(out, "warning")) TH_LOG("%s", out);
	/* apply warns the same way */
	ASSERT_EQ(0, gu_write("/sys/fs/cgroup/" CG "/noio/cgroup.subtree_control", "-io"));
	ASSERT_EQ(0, gu_sh("echo 'tenant " DM_NAME " /" CG "/noio/leaf riops=7' > /tmp/rules-noio.conf"));
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), CTL " apply /tmp/rules-noio.conf 2>&1"));
	EXPECT_NE(NULL, strstr(out, "noio/cgroup.subtree_control lacks +io")) TH_LOG("%s", out);
	unlink("/tmp/rules-noio.conf");
}

TEST_HARNESS_MAIN
