// SPDX-License-Identifier: GPL-2.0
/*
 * agent_test.c - cluster-wide quotas in one guest (issue 22,
 * doc/cluster.md): one redis-server on 127.0.0.1, four blkiso devices
 * over null_blk standing for four hosts, each with its own blkiso-agent
 * (build/tools/blkiso-agent) leasing for one tenant (one cgroup) from
 * the same cluster bucket, and fio reading all four devices from the
 * cgroup.  The four devices' reads add up to the cluster quota (+-3 %,
 * after a 2 s ramp); with redis-server killed, the agents fail static at
 * quota / active hosts and the sum stays at the quota (+-5 %), which
 * `blkisoctl cluster` shows; with the agents killed, their leases lapse
 * within ttl_ms and the four floors remain (+-15 %).  Rates: the
 * deterministic mode only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest_util.h"
#include "kselftest_harness.h"

#define NR_HOSTS	4
#define CG		"blkiso_agent"
#define QUOTA		4000
#define FLOOR		10
#define PORT		6399
#define DIR		"/tmp/blkiso-agent-test"

FIXTURE(agent) {
	char lower[NR_HOSTS][64];
	char top[256];
	bool skip;		/* a setup's SKIP does not stop the body */
};

FIXTURE_SETUP(agent)
{
	const char *top = getenv("BLKISO_TOP");
	char name[32];
	int i;

	snprintf(self->top, sizeof(self->top), "%s", top ? top : ".");
	self->skip = true;
	if (gu_no_rate())
		SKIP(return, "%s", gu_no_rate());
	if (gu_sh("command -v redis-server >/dev/null"))
		SKIP(return, "no redis-server (make deps)");
	self->skip = false;
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_cg_create(CG));
	ASSERT_EQ(0, gu_sh("rm -rf " DIR " && mkdir -p " DIR));
	for (i = 0; i < NR_HOSTS; i++) {
		struct gu_nullb nb = { .size_mb = 256 };

		snprintf(name, sizeof(name), "nullb_ag%d", i);
		nb.name = name;
		ASSERT_EQ(0, gu_nullb_create(&nb, self->lower[i], sizeof(self->lower[i])));
		ASSERT_EQ(0, gu_sh("dmsetup create biag%d --table "
				   "\"0 $(blockdev --getsz %s) blkiso %s 0\"", i,
				   self->lower[i], self->lower[i]));
		ASSERT_EQ(0, gu_sh("printf '%%s\\n' 'host_id = h%d' 'redis = 127.0.0.1:%d' "
				   "'interval_ms = 500' 'ttl_ms = 1500' 'timeout_ms = 100' "
				   "'fail_static_ms = 60000' 'burst_ms = 500' "
				   "'tenant t dev=/dev/mapper/biag%d cgroup=/%s key=riops quota=%d floor=%d hosts=%d' "
				   "> " DIR "/agent%d.conf", i, PORT, i, CG, QUOTA, FLOOR,
				   NR_HOSTS, i));
	}
	/* the guest's loopback may be down: the traffic stays on it */
	gu_sh("ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up 2>/dev/null; true");
	ASSERT_EQ(0, gu_sh("redis-server --port %d --bind 127.0.0.1 --dir " DIR
			   " --save '' --appendonly no --daemonize yes --pidfile " DIR "/redis.pid"
			   " --logfile " DIR "/redis.log && for i in $(seq 100); do "
			   "redis-cli -p %d ping >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1",
			   PORT, PORT)) {
		gu_sh("cat " DIR "/redis.log >&2; ip addr >&2");
	}
	for (i = 0; i < NR_HOSTS; i++)
		ASSERT_EQ(0, gu_sh("%s/build/tools/blkiso-agent -c " DIR "/agent%d.conf -s "
				   DIR "/status%d > " DIR "/agent%d.log 2>&1 & echo $! > "
				   DIR "/agent%d.pid", self->top, i, i, i, i));
}

FIXTURE_TEARDOWN(agent)
{
	int i;

	if (self->skip)
		return;
	gu_sh("pkill -KILL -x fio 2>/dev/null; true");
	for (i = 0; i < NR_HOSTS; i++)
		gu_sh("kill $(cat " DIR "/agent%d.pid 2>/dev/null) 2>/dev/null; true", i);
	gu_sh("kill -9 $(cat " DIR "/redis.pid 2>/dev/null) 2>/dev/null; true");
	gu_sh("sleep 0.2");
	for (i = 0; i < NR_HOSTS; i++) {
		char name[32];

		gu_sh("dmsetup remove --retry biag%d 2>/dev/null", i);
		snprintf(name, sizeof(name), "nullb_ag%d", i);
		gu_nullb_destroy(name);
	}
	gu_cg_destroy(CG);
	gu_module_unload();
}

/* fio on the four devices from CG for @secs after 2 s of ramp: reads/s. */
static double cluster_iops(int secs)
{
	struct gu_fio r;

	if (gu_fio(CG, &r, "--direct=1 --rw=randread --bs=4k --ioengine=libaio --iodepth=4"
		   " --runtime=%d --ramp_time=2 --time_based --group_reporting"
		   " --name=h0 --filename=/dev/mapper/biag0 --name=h1 --filename=/dev/mapper/biag1"
		   " --name=h2 --filename=/dev/mapper/biag2 --name=h3 --filename=/dev/mapper/biag3",
		   secs) || r.errors)
		return -1;
	return r.read.iops;
}

TEST_F_TIMEOUT(agent, four_hosts_share_the_quota_and_fail_static, GUEST_TIMEOUT)
{
	unsigned long long granted[NR_HOSTS], all = 0;
	char status[2048], out[2048];
	double iops;

	if (self->skip)
		SKIP(return, "skipped by the setup");
	iops = cluster_iops(10);
	gu_read(DIR "/status0", status, sizeof(status));
	TH_LOG("4 hosts, cluster quota %d riops: %.0f reads/s (+-3 %%); host 0: %s", QUOTA, iops,
	       status);
	for (int h = 0; h < NR_HOSTS; h++) {
		const char *g;
		char p[64];

		snprintf(p, sizeof(p), DIR "/status%d", h);
		gu_read(p, status, sizeof(status));
		if (h)
			TH_LOG("host %d: %s", h, status);
		g = strstr(status, " granted=");
		granted[h] = g ? strtoull(g + 9, NULL, 10) : 0;
		all += granted[h];
	}
	EXPECT_TRUE(values_close(iops, QUOTA, 3));
	/*
	 * Equal demand, agents started together: each host its quarter of
	 * the grants (before the store's fair share one took 96 %)
	 */
	for (int h = 0; h < NR_HOSTS; h++) {
		double share = all ? 100.0 * granted[h] / all : 0;

		TH_LOG("host %d: granted %llu, %.1f %% of the cluster's grants (25 +-5 %%)", h,
		       (unsigned long long)granted[h], share);
		EXPECT_TRUE(share >= 20 && share <= 30);
	}
	ASSERT_EQ(0, gu_sh("kill -9 $(cat " DIR "/redis.pid)"));
	iops = cluster_iops(6);
	gu_read(DIR "/status0", status, sizeof(status));
	TH_LOG("redis-server killed: %.0f reads/s (fail static, +-5 %%); host 0: %s", iops, status);
	EXPECT_TRUE(values_close(iops, QUOTA, 5));
	EXPECT_NE(NULL, strstr(status, "source=fail-static"));
	/* blkisoctl cluster: the source and the kernel's live credit */
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), "%s/build/tools/blkisoctl cluster " DIR "/status0",
			       self->top));
	TH_LOG("blkisoctl cluster:\n%s", out);
	EXPECT_NE(NULL, strstr(out, "fail-static"));
	EXPECT_EQ(NULL, strstr(out, "no such tenant"));
	/* the agents killed: their leases lapse within ttl_ms, the floors remain */
	ASSERT_EQ(0, gu_sh("for i in 0 1 2 3; do kill -9 $(cat " DIR "/agent$i.pid); done; sleep 2"));
	iops = cluster_iops(6);
	/* 10 riops per device is coarse: +-15 % (the quota was 100x that) */
	TH_LOG("agents killed, 2 s later: %.1f reads/s (4 floors of %d, +-15 %%)", iops, FLOOR);
	EXPECT_TRUE(values_close(iops, NR_HOSTS * FLOOR, 15));
}

TEST_HARNESS_MAIN
