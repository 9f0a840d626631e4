// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - stats and top: every tenant of a device from one STATS ioctl,
 * as a table or JSON; top repeats it every second and shows rates.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blkisoctl.h"

/* JSON and table names of enum blkiso_stat_id, as in the sysfs files. */
static const char * const stat_names[BLKISO_STAT_NR] = {
	"arrived", "admitted", "parked", "dispatched", "debt", "rejected_nowait",
	"rejected", "completed", "errors", "rios", "wios", "rbytes", "wbytes",
	"runits", "wunits",
};

void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static const char *nl(void)
{
	return opt.pretty ? "\n" : "";
}

static const char *ind(int level)
{
	static const char spaces[] = "        ";

	return opt.pretty ? spaces + sizeof(spaces) - 1 - 2 * level : "";
}

static void cgid_str(uint64_t cgid, char *buf, size_t size)
{
	if (cgid)
		snprintf(buf, size, "%" PRIu64, cgid);
	else
		snprintf(buf, size, "kernel");
}

static void print_json(const struct bdev *dev, const struct blkiso_ioc_stats *st,
		       const struct blkiso_stats_rec *r)
{
	unsigned int i, k;

	printf("{%s%s\"device\":", nl(), ind(1));
	json_str(dev->name);
	printf(",%s%s\"major\":%u,\"minor\":%u,\"total\":%u,\"queued\":%u,"
	       "\"draining\":%u,\"alloc_failures\":%llu,%s%s\"tenants\":[",
	       nl(), ind(1), dev->major, dev->minor, st->total, st->queued, st->draining,
	       (unsigned long long)st->alloc_failures, nl(), ind(1));
	for (i = 0; i < st->count; i++) {
		printf("%s%s%s{\"cgid\":%" PRIu64 ",\"kernel\":%s,\"configured\":%s",
		       i ? "," : "", nl(), ind(2), (uint64_t)r[i].cgid,
		       r[i].cgid ? "false" : "true",
		       r[i].flags & BLKISO_F_CONFIGURED ? "true" : "false");
		for (k = 0; k < BLKISO_STAT_NR; k++)
			printf(",\"%s\":%llu", stat_names[k], (unsigned long long)r[i].stat[k]);
		printf(",\"queued\":%u,\"p50_us\":%llu,\"p99_us\":%llu}", r[i].queued,
		       (unsigned long long)r[i].p50_us, (unsigned long long)r[i].p99_us);
	}
	printf("%s%s]%s}\n", nl(), ind(1), nl());
}

static void print_table(const struct blkiso_ioc_stats *st, const struct blkiso_stats_rec *r)
{
	char id[24];
	unsigned int i;

	printf("%-12s %10s %10s %8s %10s %6s %12s %12s %6s %8s %8s\n", "CGROUP", "ARRIVED",
	       "ADMITTED", "PARKED", "COMPLETED", "ERRORS", "RBYTES", "WBYTES", "QUEUED",
	       "P50_US", "P99_US");
	for (i = 0; i < st->count; i++) {
		cgid_str(r[i].cgid, id, sizeof(id));
		printf("%-12s %10llu %10llu %8llu %10llu %6llu %12llu %12llu %6u %8llu %8llu\n",
		       id, (unsigned long long)r[i].stat[BLKISO_STAT_ARRIVED],
		       (unsigned long long)r[i].stat[BLKISO_STAT_ADMITTED],
		       (unsigned long long)r[i].stat[BLKISO_STAT_PARKED],
		       (unsigned long long)r[i].stat[BLKISO_STAT_COMPLETED],
		       (unsigned long long)r[i].stat[BLKISO_STAT_ERRORS],
		       (unsigned long long)r[i].stat[BLKISO_STAT_RBYTES],
		       (unsigned long long)r[i].stat[BLKISO_STAT_WBYTES], r[i].queued,
		       (unsigned long long)r[i].p50_us, (unsigned long long)r[i].p99_us);
	}
}

static int snapshot(const char *arg, struct bdev *dev, struct blkiso_ioc_stats *st,
		    struct blkiso_stats_rec **recs)
{
	int ret = open_ctl();

	if (ret)
		return ret;
	ret = ioc_stats(dev, st, recs);
	return ret ? ioc_fail(arg, ret, NULL) : BX_OK;
}

int cmd_stats(int argc, char **argv)
{
	struct blkiso_ioc_stats st;
	struct blkiso_stats_rec *r;
	struct bdev dev;
	int ret;

	if (argc != 1) {
		err("usage: stats DEV");
		return BX_USAGE;
	}
	ret = resolve_dev(argv[0], &dev);
	if (!ret)
		ret = snapshot(argv[0], &dev, &st, &r);
	if (ret)
		return ret;
	if (opt.json)
		print_json(&dev, &st, r);
	else
		print_table(&st, r);
	free(r);
	return BX_OK;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const struct blkiso_stats_rec *find_rec(const struct blkiso_stats_rec *r,
					       unsigned int n, uint64_t cgid)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (r[i].cgid == cgid)
			return &r[i];
	return NULL;
}

/* One screen: per-tenant rates over the last interval of @secs. */
static void print_rates(const struct blkiso_ioc_stats *st, const struct blkiso_stats_rec *r,
			const struct blkiso_stats_rec *old, unsigned int nold, double secs)
{
	static const int keys[] = { BLKISO_STAT_RIOS, BLKISO_STAT_WIOS, BLKISO_STAT_RBYTES,
				    BLKISO_STAT_WBYTES, BLKISO_STAT_PARKED };
	double rate[5];
	unsigned int i, k;
	char id[24];

	if (!opt.json && isatty(STDOUT_FILENO))
		printf("\033[H\033[2J");
	if (opt.json)
		printf("{\"interval_s\":%.3f,\"tenants\":[", secs);
	else
		printf("%-12s %10s %10s %12s %12s %10s %6s %8s\n", "CGROUP", "R_IOPS", "W_IOPS",
		       "R_BPS", "W_BPS", "PARKED/S", "QUEUED", "P99_US");
	for (i = 0; i < st->count; i++) {
		const struct blkiso_stats_rec *o = find_rec(old, nold, r[i].cgid);

		for (k = 0; k < 5; k++)
			rate[k] = (r[i].stat[keys[k]] - (o ? o->stat[keys[k]] : 0)) / secs;
		cgid_str(r[i].cgid, id, sizeof(id));
		if (opt.json)
			printf("%s{\"cgid\":%llu,\"riops\":%.1f,\"wiops\":%.1f,\"rbps\":%.0f,"
			       "\"wbps\":%.0f,\"parked_per_s\":%.1f,\"queued\":%u,\"p99_us\":%llu}",
			       i ? "," : "", (unsigned long long)r[i].cgid, rate[0], rate[1],
			       rate[2], rate[3], rate[4], r[i].queued,
			       (unsigned long long)r[i].p99_us);
		else
			printf("%-12s %10.1f %10.1f %12.0f %12.0f %10.1f %6u %8llu\n", id, rate[0],
			       rate[1], rate[2], rate[3], rate[4], r[i].queued,
			       (unsigned long long)r[i].p99_us);
	}
	if (opt.json)
		printf("]}\n");
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int cmd_top(int argc, char **argv)
{
	struct blkiso_stats_rec *old = NULL, *cur;
	struct blkiso_ioc_stats st;
	unsigned int nold = 0;
	double t0, t1;
	struct bdev dev;
	long shown = 0;
	int ret;

	if (argc != 1) {
		err("usage: top DEV [-n COUNT]");
		return BX_USAGE;
	}
	ret = resolve_dev(argv[0], &dev);
	if (!ret)
		ret = snapshot(argv[0], &dev, &st, &old);
	if (ret)
		return ret;
	nold = st.count;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = now_s();
	while (!stop && (!opt.count || shown < opt.count)) {
		sleep(1);
		if (stop)
			break;
		ret = snapshot(argv[0], &dev, &st, &cur);
		if (ret)
			break;
		t1 = now_s();
		print_rates(&st, cur, old, nold, t1 > t0 ? t1 - t0 : 1);
		free(old);
		old = cur;
		nold = st.count;
		t0 = t1;
		shown++;
	}
	free(old);
	return ret;
}
