// SPDX-License-Identifier: GPL-2.0
/*
 * cli_test.c - the command-line tools on the host, without the module.
 *
 * stats --prometheus: prom.c's output for a fake snapshot of two devices
 * (the kernel tenant, cgroups by path, a removed one, a path that needs
 * escaping) passes `promtool check metrics` (Debian's, unpacked by
 * make deps under build/prometheus/) and says what the snapshot holds:
 * _total counters per direction, labels, a cumulative histogram in
 * seconds.  Then the conventions every tool keeps: --help, -h, --version,
 * -V exit 0; blkisoctl version without the module; usage errors exit 1;
 * JSON errors under -j; a word of digits is a cgroup id, anything else a
 * path.  Runs from the top of the tree (make unit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "../../tools/blkisoctl/prom.c"
#include "kselftest_harness.h"

#define PROMTOOL	"build/prometheus/usr/bin/promtool"
#define CTL		"build/tools/blkisoctl"
#define SIM		"build/tools/blkiso-sim"

static const char *fake_path(uint64_t cgid)
{
	switch (cgid) {
	case 0:
		return "kernel";
	case 100:
		return "/system.slice/db.service";
	case 101:
		return "/2024-batch/we\"ird\\";
	default:
		return NULL;	/* removed */
	}
}

struct fake {
	struct bdev dev[2];
	struct blkiso_ioc_stats st[2];
	struct blkiso_stats_rec recs[2][3];
	struct prom_dev pd[2];
};

/* Device "data": kernel, 100, 101; device "logs": 100, removed 555. */
static void fake_init(struct fake *f)
{
	struct blkiso_stats_rec *r;
	int d, k, b;

	memset(f, 0, sizeof(*f));
	strcpy(f->dev[0].name, "data");
	strcpy(f->dev[1].name, "logs");
	f->dev[1].minor = 1;
	f->st[0].count = f->st[0].total = 3;
	f->st[1].count = f->st[1].total = 2;
	f->st[1].queued = 7;
	f->st[1].alloc_failures = 2;
	f->recs[0][0].cgid = 0;
	f->recs[0][1].cgid = 100;
	f->recs[0][2].cgid = 101;
	f->recs[1][0].cgid = 100;
	f->recs[1][1].cgid = 555;
	for (d = 0; d < 2; d++) {
		for (k = 0; k < (int)f->st[d].count; k++) {
			r = &f->recs[d][k];
			r->stat[BLKISO_STAT_ARRIVED] = 1000 * (d + 1) + k;
			r->stat[BLKISO_STAT_RIOS] = 10 + k;
			r->stat[BLKISO_STAT_WIOS] = 20 + k;
			r->stat[BLKISO_STAT_RBYTES] = 4096 * (10 + k);
			r->stat[BLKISO_STAT_WBYTES] = 8192 * (20 + k);
			r->stat[BLKISO_STAT_COMPLETED] = 30 + 2 * k;
			/* the completions over buckets 3 (< 8 us) and 9 (< 512 us) */
			r->lat[3] = 10 + k;
			r->lat[9] = 20 + k;
			r->lat_sum_us = 10ULL * 5 + 20ULL * 300 + k;
			r->queued = k;
			r->flags = BLKISO_F_LATENCY | (k == 1 ? BLKISO_F_CONFIGURED : 0);
		}
		f->pd[d] = (struct prom_dev){ &f->dev[d], &f->st[d], f->recs[d] };
	}
	b = BLKISO_LAT_BUCKETS - 1;
	f->recs[1][1].lat[b] = 1;		/* one beyond 2^30 us */
	/* "data"'s 101 is counted only, on a device without feedback: no latency */
	r = &f->recs[0][2];
	memset(r->lat, 0, sizeof(r->lat));
	r->lat_sum_us = 0;
	r->flags = 0;
}

/* The exposition of the fake snapshot, in a file and in @buf. */
static void fake_expose(struct __test_metadata *_metadata, const char *file, char *buf,
			size_t size)
{
	struct fake f;
	FILE *out;
	size_t n;

	fake_init(&f);
	out = fopen(file, "w+");
	ASSERT_NE(NULL, out);
	prom_print(out, f.pd, 2, fake_path);
	rewind(out);
	n = fread(buf, 1, size - 1, out);
	buf[n] = '\0';
	fclose(out);
	ASSERT_LT(n, size - 1);
}

/* Run @cmd through sh with its stdout in @out: the exit status. */
static int run(char *out, size_t size, const char *cmd)
{
	FILE *p = popen(cmd, "r");
	size_t n;
	int st;

	if (!p)
		return -1;
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char buf[1 << 20];

TEST(prometheus_output_passes_promtool)
{
	const char *file = "build/unit/cli_test.prom";
	char out[8192];

	fake_expose(_metadata, file, buf, sizeof(buf));
	ASSERT_EQ(0, access(PROMTOOL, X_OK)) TH_LOG("no %s: run make deps", PROMTOOL);
	EXPECT_EQ(0, run(out, sizeof(out), PROMTOOL " check metrics < build/unit/cli_test.prom 2>&1"))
		TH_LOG("promtool: %s", out);
	EXPECT_STREQ("", out);
	/* and it is not lenient: a sample before its TYPE line is refused */
	EXPECT_NE(0, run(out, sizeof(out), "printf 'x_total 1\\n# TYPE x_total counter\\n' | "
			 PROMTOOL " check metrics 2>&1"));
	unlink(file);
}

TEST(prometheus_says_what_the_snapshot_holds)
{
	fake_expose(_metadata, "build/unit/cli_test2.prom", buf, sizeof(buf));
	unlink("build/unit/cli_test2.prom");
	/* counters with _total, the path next to the id, per direction */
	EXPECT_NE(NULL, strstr(buf, "# TYPE blkiso_ios_total counter\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_ios_total{device=\"data\",cgroup=\"/system.slice/"
				    "db.service\",cgroup_id=\"100\",direction=\"write\"} 21\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_bytes_total{device=\"data\",cgroup=\"kernel\","
				    "cgroup_id=\"0\",direction=\"read\"} 40960\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_arrived_total{device=\"logs\",cgroup=\"(removed)\","
				    "cgroup_id=\"555\"} 2001\n"));
	EXPECT_NE(NULL, strstr(buf, "cgroup=\"/2024-batch/we\\\"ird\\\\\""));
	EXPECT_NE(NULL, strstr(buf, "blkiso_configured{device=\"data\",cgroup=\"/system.slice/"
				    "db.service\",cgroup_id=\"100\"} 1\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_device_queued{device=\"logs\"} 7\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_device_alloc_failures_total{device=\"logs\"} 2\n"));
	/* the histogram: cumulative, in seconds, +Inf = _count, _sum in seconds */
	EXPECT_NE(NULL, strstr(buf, "# TYPE blkiso_latency_seconds histogram\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_latency_seconds_bucket{device=\"data\",cgroup=\"kernel\","
				    "cgroup_id=\"0\",le=\"4e-06\"} 0\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_latency_seconds_bucket{device=\"data\",cgroup=\"kernel\","
				    "cgroup_id=\"0\",le=\"8e-06\"} 10\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_latency_seconds_bucket{device=\"data\",cgroup=\"kernel\","
				    "cgroup_id=\"0\",le=\"0.000256\"} 10\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_latency_seconds_bucket{device=\"data\",cgroup=\"kernel\","
				    "cgroup_id=\"0\",le=\"0.000512\"} 30\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_latency_seconds_bucket{device=\"data\",cgroup=\"kernel\","
				    "cgroup_id=\"0\",le=\"+Inf\"} 30\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_latency_seconds_sum{device=\"data\",cgroup=\"kernel\","
				    "cgroup_id=\"0\"} 0.006050\n"));
	EXPECT_NE(NULL, strstr(buf, "blkiso_latency_seconds_count{device=\"data\",cgroup=\"kernel\","
				    "cgroup_id=\"0\"} 30\n"));
	/* the open last bucket counts in +Inf only */
	EXPECT_NE(NULL, strstr(buf, "cgroup_id=\"555\",le=\"536.870912\"} 32\n"));
	EXPECT_NE(NULL, strstr(buf, "cgroup_id=\"555\",le=\"+Inf\"} 33\n"));
	/* a tenant that keeps no latency has its counters and no histogram series */
	EXPECT_NE(NULL, strstr(buf, "blkiso_ios_total{device=\"data\",cgroup=\"/2024-batch/"
				    "we\\\"ird\\\\\",cgroup_id=\"101\",direction=\"read\"} 12\n"));
	EXPECT_EQ(NULL, strstr(buf, "cgroup_id=\"101\",le="));
	EXPECT_EQ(NULL, strstr(buf, "blkiso_latency_seconds_count{device=\"data\",cgroup=\"/2024-"));
}

/* Every tool answers --help, -h, --version and -V with status 0. */
TEST(help_and_version_everywhere)
{
	static const char * const tools[] = { CTL, SIM };
	static const char * const opts[] = { "--help", "-h", "--version", "-V" };
	char cmd[256], out[8192];
	unsigned int t, o;

	for (t = 0; t < 2; t++)
		for (o = 0; o < 4; o++) {
			snprintf(cmd, sizeof(cmd), "%s %s", tools[t], opts[o]);
			EXPECT_EQ(0, run(out, sizeof(out), cmd)) TH_LOG("%s", cmd);
			EXPECT_NE(NULL, strstr(out, o < 2 ? "usage:" : "0.2.0"))
				TH_LOG("%s: %s", cmd, out);
		}
	/* help after a command word too, as iproute2 takes it */
	EXPECT_EQ(0, run(out, sizeof(out), CTL " tenant set -h"));
	/* the tool's version without the module (none on the host) */
	EXPECT_EQ(0, run(out, sizeof(out), CTL " version"));
	EXPECT_NE(NULL, strstr(out, "blkisoctl 0.2.0")) TH_LOG("%s", out);
	EXPECT_EQ(0, run(out, sizeof(out), CTL " -j version"));
	EXPECT_NE(NULL, strstr(out, "\"tool\":\"0.2.0\"")) TH_LOG("%s", out);
}

TEST(usage_errors_and_json_errors)
{
	char out[8192];

	EXPECT_EQ(1, run(out, sizeof(out), CTL " frobnicate 2>&1"));
	EXPECT_EQ(1, run(out, sizeof(out), CTL " tenant del dev x 2>&1"));
	EXPECT_NE(NULL, strstr(out, "usage: tenant del dev DEV cgroup CGROUP")) TH_LOG("%s", out);
	EXPECT_EQ(1, run(out, sizeof(out), CTL " tenant get dev x dev y cgroup 1 2>&1"));
	EXPECT_NE(NULL, strstr(out, "dev given twice")) TH_LOG("%s", out);
	EXPECT_EQ(1, run(out, sizeof(out), CTL " tenant set dev x cgroup 1 2>&1"));
	EXPECT_EQ(1, run(out, sizeof(out), CTL " tenant show cgroup 1 2>&1"));
	EXPECT_EQ(1, run(out, sizeof(out), CTL " stats 2>&1"));
	EXPECT_EQ(1, run(out, sizeof(out), CTL " -n 0 top dev x 2>&1"));
	EXPECT_EQ(1, run(out, sizeof(out), CTL " attach dev 2>&1"));
	EXPECT_NE(NULL, strstr(out, "usage: attach dev DEV [name NAME]")) TH_LOG("%s", out);
	EXPECT_EQ(1, run(out, sizeof(out), CTL " detach dev x name y 2>&1"));
	EXPECT_EQ(1, run(out, sizeof(out), CTL " resize dev x name y 2>&1"));
	EXPECT_NE(NULL, strstr(out, "usage: resize dev NAME")) TH_LOG("%s", out);
	EXPECT_EQ(1, run(out, sizeof(out), CTL " device resize 2>&1"));
	EXPECT_EQ(3, run(out, sizeof(out), CTL " -j resize dev nosuchdev 2>/dev/null"));
	EXPECT_NE(NULL, strstr(out, "nosuchdev")) TH_LOG("%s", out);
	/* the keyword form reaches the command: here its "no such device" */
	EXPECT_EQ(3, run(out, sizeof(out), CTL " -j detach dev nosuchdev 2>/dev/null"));
	EXPECT_NE(NULL, strstr(out, "nosuchdev")) TH_LOG("%s", out);
	/* -j: the error is a JSON object on stdout, nothing on stderr */
	EXPECT_EQ(1, run(out, sizeof(out), CTL " -j tenant del dev x 2>/dev/null"));
	EXPECT_STREQ("{\"error\":\"usage: tenant del dev DEV cgroup CGROUP\"}\n", out);
	EXPECT_EQ(1, run(out, sizeof(out), CTL " tenant del dev x 2>/dev/null"));
	EXPECT_STREQ("", out);
	EXPECT_EQ(2, run(out, sizeof(out), SIM " 2>/dev/null"));
}

/* Digits only: an id; anything else, "2024-batch" too, a path. */
TEST(cgroup_words)
{
	char out[8192];

	EXPECT_EQ(3, run(out, sizeof(out), CTL " -j tenant get dev nosuchdev cgroup "
			 "2024-batch-nosuch 2>/dev/null"));
	EXPECT_NE(NULL, strstr(out, "no such cgroup (/sys/fs/cgroup/2024-batch-nosuch)"))
		TH_LOG("%s", out);
	/* an id is not looked up in the tree: the device is what is missing */
	EXPECT_EQ(3, run(out, sizeof(out), CTL " -j tenant get dev nosuchdev cgroup 2024 "
			 "2>/dev/null"));
	EXPECT_NE(NULL, strstr(out, "nosuchdev: no such dm device")) TH_LOG("%s", out);
	/* the old order still works the same way */
	EXPECT_EQ(3, run(out, sizeof(out), CTL " -j get 2024 nosuchdev 2>/dev/null"));
	EXPECT_NE(NULL, strstr(out, "nosuchdev: no such dm device")) TH_LOG("%s", out);
	EXPECT_EQ(2, run(out, sizeof(out), CTL " -j get 0 nosuchdev 2>/dev/null"));
}

TEST_HARNESS_MAIN
