// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - stats, top and ring: every tenant of a device from one STATS
 * ioctl, as a table, JSON or the Prometheus text format (of every blkiso
 * device when none is named); top repeats it every second and shows rates
 * with each tenant's latest feedback decisions; ring prints the feedback
 * tick's records (RING ioctl) of the device or of one tenant.
 */
#include <errno.h>
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

void json_str_or_null(const char *s)
{
	if (s)
		json_str(s);
	else
		fputs("null", stdout);
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
		printf("%s%s%s{\"cgid\":%" PRIu64 ",\"cgroup\":", i ? "," : "", nl(), ind(2),
		       (uint64_t)r[i].cgid);
		json_str_or_null(cgroup_path(r[i].cgid));
		printf(",\"kernel\":%s,\"configured\":%s", r[i].cgid ? "false" : "true",
		       r[i].flags & BLKISO_F_CONFIGURED ? "true" : "false");
		for (k = 0; k < BLKISO_STAT_NR; k++)
			printf(",\"%s\":%llu", stat_names[k], (unsigned long long)r[i].stat[k]);
		printf(",\"queued\":%u", r[i].queued);
		/* a tenant without latency figures (counted only): null, not 0 */
		if (!(r[i].flags & BLKISO_F_LATENCY)) {
			printf(",\"p50_us\":null,\"p99_us\":null,\"lat_sum_us\":null,"
			       "\"lat_hist\":null}");
			continue;
		}
		printf(",\"p50_us\":%llu,\"p99_us\":%llu,\"lat_sum_us\":%llu,\"lat_hist\":[",
		       (unsigned long long)r[i].p50_us, (unsigned long long)r[i].p99_us,
		       (unsigned long long)r[i].lat_sum_us);
		for (k = 0; k < BLKISO_LAT_BUCKETS; k++)
			printf("%s%llu", k ? "," : "", (unsigned long long)r[i].lat[k]);
		printf("]}");
	}
	printf("%s%s]%s}\n", nl(), ind(1), nl());
}

/* A tenant's path for a table column. */
static const char *path_col(uint64_t cgid)
{
	const char *p = cgroup_path(cgid);

	return p ? p : "(removed)";
}

/*
 * A latency figure @us of @r for a column or a JSON value: if @r keeps
 * none, "-" (null in JSON), as the columns of a tenant without slots.
 */
static void lat_col(const struct blkiso_stats_rec *r, uint64_t us, char *buf, size_t size)
{
	if (r->flags & BLKISO_F_LATENCY)
		snprintf(buf, size, "%llu", (unsigned long long)us);
	else
		snprintf(buf, size, "%s", opt.json ? "null" : "-");
}

static void print_table(const struct blkiso_ioc_stats *st, const struct blkiso_stats_rec *r)
{
	char id[24], p50[24], p99[24];
	unsigned int i;

	printf("%-12s %10s %10s %8s %10s %6s %12s %12s %6s %8s %8s %s\n", "ID", "ARRIVED",
	       "ADMITTED", "PARKED", "COMPLETED", "ERRORS", "RBYTES", "WBYTES", "QUEUED",
	       "P50_US", "P99_US", "CGROUP");
	for (i = 0; i < st->count; i++) {
		cgid_str(r[i].cgid, id, sizeof(id));
		lat_col(&r[i], r[i].p50_us, p50, sizeof(p50));
		lat_col(&r[i], r[i].p99_us, p99, sizeof(p99));
		printf("%-12s %10llu %10llu %8llu %10llu %6llu %12llu %12llu %6u %8s %8s %s\n",
		       id, (unsigned long long)r[i].stat[BLKISO_STAT_ARRIVED],
		       (unsigned long long)r[i].stat[BLKISO_STAT_ADMITTED],
		       (unsigned long long)r[i].stat[BLKISO_STAT_PARKED],
		       (unsigned long long)r[i].stat[BLKISO_STAT_COMPLETED],
		       (unsigned long long)r[i].stat[BLKISO_STAT_ERRORS],
		       (unsigned long long)r[i].stat[BLKISO_STAT_RBYTES],
		       (unsigned long long)r[i].stat[BLKISO_STAT_WBYTES], r[i].queued,
		       p50, p99, path_col(r[i].cgid));
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

/* "dev DEV" or "DEV" alone; @optional: none at all is fine (NULL). */
static int dev_arg(const char *usage, int argc, char **argv, bool optional, const char **dev)
{
	if (argc == 2 && !strcmp(argv[0], "dev"))
		argc--, argv++;
	*dev = argc == 1 ? argv[0] : NULL;
	if (argc > 1 || (!argc && !optional)) {
		err("usage: %s", usage);
		return BX_USAGE;
	}
	return BX_OK;
}

/* stats --prometheus [DEV]: the one device, or every blkiso device. */
static int stats_prometheus(const char *name)
{
	struct prom_dev *pd = NULL;
	struct blkiso_ioc_stats *st = NULL;
	struct bdev *devs = NULL;
	unsigned int n = 0, i;
	int ret;

	if (name) {
		devs = calloc(1, sizeof(*devs));
		n = 1;
		ret = devs ? resolve_dev(name, devs) : BX_OTHER;
	} else {
		ret = list_devices(&devs, &n);
	}
	if (!ret && n)
		ret = open_ctl();
	if (!ret && n) {
		pd = calloc(n, sizeof(*pd));
		st = calloc(n, sizeof(*st));
		if (!pd || !st)
			ret = BX_OTHER;
	}
	for (i = 0; !ret && i < n; i++) {
		struct blkiso_stats_rec *r;
		int e = ioc_stats(&devs[i], &st[i], &r);

		if (e) {
			ret = ioc_fail(devs[i].name, e, NULL);
			break;
		}
		pd[i] = (struct prom_dev){ &devs[i], &st[i], r };
	}
	if (!ret)
		prom_print(stdout, pd, n, cgroup_path);
	for (i = 0; pd && i < n; i++)
		free((void *)pd[i].recs);
	free(pd);
	free(st);
	free(devs);
	return ret;
}

int cmd_stats(int argc, char **argv)
{
	struct blkiso_ioc_stats st;
	struct blkiso_stats_rec *r;
	const char *name;
	struct bdev dev;
	int ret;

	ret = dev_arg("stats [--prometheus] dev DEV", argc, argv, opt.prometheus, &name);
	if (ret)
		return ret;
	if (opt.prometheus)
		return stats_prometheus(name);
	ret = resolve_dev(name, &dev);
	if (!ret)
		ret = snapshot(name, &dev, &st, &r);
	if (ret)
		return ret;
	if (opt.json)
		print_json(&dev, &st, r);
	else
		print_table(&st, r);
	free(r);
	return BX_OK;
}

/* Words of enum blkiso_iso_mode, as doc/controllers.md names the modes. */
static const char * const iso_modes[] = {
	[BLKISO_ISO_SLOTS] = "slots", [BLKISO_ISO_DELAY] = "delay",
	[BLKISO_ISO_ABUSE] = "abuse", [BLKISO_ISO_RELAXED] = "relaxed",
	[BLKISO_ISO_NONE] = "none",
};

static const char *iso_mode_str(unsigned int mode, char *buf, size_t size)
{
	if (mode < sizeof(iso_modes) / sizeof(iso_modes[0]))
		return iso_modes[mode];
	snprintf(buf, size, "mode%u", mode);
	return buf;
}

/* The BLKISO_TICK_* flags as words ("overloaded,above"), "" for none. */
static const char *tick_flags_str(unsigned int flags, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	if (flags & BLKISO_TICK_OVERLOADED)
		n += snprintf(buf + n, size - n, "overloaded");
	if (flags & BLKISO_TICK_ABOVE)
		n += snprintf(buf + n, size - n, "%sabove", n ? "," : "");
	if (flags & BLKISO_TICK_REQUEST)
		n += snprintf(buf + n, size - n, "%srequest", n ? "," : "");
	flags &= ~(BLKISO_TICK_OVERLOADED | BLKISO_TICK_ABOVE | BLKISO_TICK_REQUEST);
	if (flags && n < size)
		snprintf(buf + n, size - n, "%s%#x", n ? "," : "", flags);
	return buf;
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

/*
 * The latest tick record of the device and of every tenant of @st (one
 * RING call each, capacity 1): what top shows of the feedback loop.
 * has[i] is false if tenant i has no record (or vanished meanwhile).  A
 * tenant with an allocation has a record every tick, so its slots, delay
 * and mode are current; one without has "none" in any record.
 */
static void latest_ticks(const struct bdev *dev, const struct blkiso_ioc_stats *st,
			 const struct blkiso_stats_rec *r, struct blkiso_tick_rec *devrec,
			 bool *dev_has, struct blkiso_tick_rec *recs, bool *has)
{
	unsigned int i, n;

	*dev_has = !ioc_ring(dev, NULL, devrec, 1, &n) && n;
	for (i = 0; i < st->count; i++) {
		uint64_t cgid = r[i].cgid;

		has[i] = !ioc_ring(dev, &cgid, &recs[i], 1, &n) && n;
	}
}

/* One screen: per-tenant rates over the last interval of @secs. */
static void print_rates(const struct bdev *dev, const struct blkiso_ioc_stats *st,
			const struct blkiso_stats_rec *r, const struct blkiso_stats_rec *old,
			unsigned int nold, double secs)
{
	static const int keys[] = { BLKISO_STAT_RIOS, BLKISO_STAT_WIOS, BLKISO_STAT_RBYTES,
				    BLKISO_STAT_WBYTES, BLKISO_STAT_PARKED };
	struct blkiso_tick_rec devrec, *tr = calloc(st->count + 1, sizeof(*tr));
	bool dev_has, *has = calloc(st->count + 1, sizeof(*has));
	char id[24], md[16], slots[16], delay[24], p99[24];
	double rate[5];
	unsigned int i, k;

	if (!tr || !has) {
		free(tr);
		free(has);
		return;
	}
	latest_ticks(dev, st, r, &devrec, &dev_has, tr, has);
	if (!opt.json && isatty(STDOUT_FILENO))
		printf("\033[H\033[2J");
	if (opt.json) {
		printf("{\"interval_s\":%.3f,", secs);
		if (dev_has)
			printf("\"seq\":%llu,\"mult\":%u,\"miss_pm\":%u,\"overloaded\":%s,",
			       (unsigned long long)devrec.seq, devrec.mult, devrec.miss_permille,
			       devrec.flags & BLKISO_TICK_OVERLOADED ? "true" : "false");
		printf("\"tenants\":[");
	} else {
		if (dev_has)
			printf("tick %llu  mult %u  miss_pm %u%s\n",
			       (unsigned long long)devrec.seq, devrec.mult, devrec.miss_permille,
			       devrec.flags & BLKISO_TICK_OVERLOADED ? "  overloaded" : "");
		printf("%-12s %10s %10s %12s %12s %10s %6s %8s %5s %8s %-7s %s\n", "ID",
		       "R_IOPS", "W_IOPS", "R_BPS", "W_BPS", "PARKED/S", "QUEUED", "P99_US",
		       "SLOTS", "DELAY_US", "MODE", "CGROUP");
	}
	for (i = 0; i < st->count; i++) {
		const struct blkiso_stats_rec *o = find_rec(old, nold, r[i].cgid);
		bool alloc = has[i] && tr[i].iso_mode != BLKISO_ISO_NONE;

		for (k = 0; k < 5; k++)
			rate[k] = (r[i].stat[keys[k]] - (o ? o->stat[keys[k]] : 0)) / secs;
		cgid_str(r[i].cgid, id, sizeof(id));
		if (alloc) {
			snprintf(slots, sizeof(slots), "%u", tr[i].slots);
			snprintf(delay, sizeof(delay), "%llu",
				 (unsigned long long)(tr[i].delay_ns / 1000));
		} else {
			snprintf(slots, sizeof(slots), "%s", opt.json ? "null" : "-");
			snprintf(delay, sizeof(delay), "%s", opt.json ? "null" : "-");
		}
		lat_col(&r[i], r[i].p99_us, p99, sizeof(p99));
		if (opt.json) {
			printf("%s{\"cgid\":%llu,\"cgroup\":", i ? "," : "",
			       (unsigned long long)r[i].cgid);
			json_str_or_null(cgroup_path(r[i].cgid));
			printf(",\"riops\":%.1f,\"wiops\":%.1f,\"rbps\":%.0f,"
			       "\"wbps\":%.0f,\"parked_per_s\":%.1f,\"queued\":%u,\"p99_us\":%s,"
			       "\"slots\":%s,\"delay_us\":%s,\"mode\":", rate[0], rate[1], rate[2], rate[3],
			       rate[4], r[i].queued, p99, slots, delay);
			if (has[i])
				printf("\"%s\"}", iso_mode_str(tr[i].iso_mode, md, sizeof(md)));
			else
				printf("null}");
		} else {
			printf("%-12s %10.1f %10.1f %12.0f %12.0f %10.1f %6u %8s %5s %8s %-7s %s\n",
			       id, rate[0], rate[1], rate[2], rate[3], rate[4], r[i].queued,
			       p99, slots, delay,
			       has[i] ? iso_mode_str(tr[i].iso_mode, md, sizeof(md)) : "-",
			       path_col(r[i].cgid));
		}
	}
	if (opt.json)
		printf("]}\n");
	fflush(stdout);
	free(tr);
	free(has);
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
	const char *name;
	double t0, t1;
	struct bdev dev;
	long shown = 0;
	int ret;

	ret = dev_arg("top [-n COUNT] dev DEV", argc, argv, false, &name);
	if (ret)
		return ret;
	ret = resolve_dev(name, &dev);
	if (!ret)
		ret = snapshot(name, &dev, &st, &old);
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
		ret = snapshot(name, &dev, &st, &cur);
		if (ret)
			break;
		t1 = now_s();
		print_rates(&dev, &st, cur, old, nold, t1 > t0 ? t1 - t0 : 1);
		free(old);
		old = cur;
		nold = st.count;
		t0 = t1;
		shown++;
	}
	free(old);
	return ret;
}

/* A request-rate cap (milli-requests/s) in requests/s: "-" or null if none. */
static void cap_str(uint64_t mrps, bool json, char *buf, size_t size)
{
	if (!mrps)
		snprintf(buf, size, "%s", json ? "null" : "-");
	else if (json)
		snprintf(buf, size, "%" PRIu64 ".%03u", mrps / 1000, (unsigned int)(mrps % 1000));
	else
		snprintf(buf, size, "%.1f", mrps / 1000.0);
}

/*
 * Time of a record in ms relative to the newest one (0 for the newest,
 * negative before it), from the tick's CLOCK_MONOTONIC time.
 */
static double rel_ms(const struct blkiso_tick_rec *r, const struct blkiso_tick_rec *newest)
{
	return ((double)r->time_ns - (double)newest->time_ns) / 1e6;
}

static void print_ring_json(const struct blkiso_tick_rec *r, unsigned int n, bool tenant)
{
	char fl[64], md[16], rc[32], wc[32];
	unsigned int i;

	printf("[");
	for (i = 0; i < n; i++) {
		const char *f = tick_flags_str(r[i].flags, fl, sizeof(fl));

		printf("%s%s%s{\"seq\":%llu,\"time_us\":%llu,\"time_ms\":%.3f,\"completed\":%u,"
		       "\"missed\":%u,\"miss_pm\":%u,\"mult\":%u,\"flags\":[", i ? "," : "", nl(),
		       ind(1), (unsigned long long)r[i].seq,
		       (unsigned long long)(r[i].time_ns / 1000), rel_ms(&r[i], &r[n - 1]),
		       r[i].completed, r[i].missed, r[i].miss_permille, r[i].mult);
		/* the words, each a string */
		while (*f) {
			size_t len = strcspn(f, ",");

			printf("\"%.*s\"%s", (int)len, f, f[len] ? "," : "");
			f += len + (f[len] ? 1 : 0);
		}
		printf("],\"victims\":%u", r[i].victims);
		if (tenant) {
			cap_str(r[i].rcap_mrps, true, rc, sizeof(rc));
			cap_str(r[i].wcap_mrps, true, wc, sizeof(wc));
			printf(",\"usage\":%llu,\"slots\":%u,\"inflight\":%u,\"delay_us\":%llu,"
			       "\"mode\":\"%s\",\"rcap_rps\":%s,\"wcap_rps\":%s",
			       (unsigned long long)r[i].usage, r[i].slots, r[i].inflight,
			       (unsigned long long)(r[i].delay_ns / 1000),
			       iso_mode_str(r[i].iso_mode, md, sizeof(md)), rc, wc);
		}
		printf("}");
	}
	printf("%s]\n", n ? nl() : "");
}

static void print_ring_table(const struct blkiso_tick_rec *r, unsigned int n, bool tenant)
{
	char fl[64], md[16], rc[32], wc[32];
	unsigned int i;

	printf("%8s %9s %9s %6s %7s %5s %-16s %7s", "SEQ", "TIME_MS", "COMPLETED", "MISSED",
	       "MISS_PM", "MULT", "FLAGS", "VICTIMS");
	if (tenant)
		printf(" %8s %5s %8s %8s %-7s %10s %10s", "USAGE", "SLOTS", "INFLIGHT",
		       "DELAY_US", "MODE", "RCAP_RPS", "WCAP_RPS");
	printf("\n");
	for (i = 0; i < n; i++) {
		tick_flags_str(r[i].flags, fl, sizeof(fl));
		printf("%8llu %9.1f %9u %6u %7u %5u %-16s %7u", (unsigned long long)r[i].seq,
		       rel_ms(&r[i], &r[n - 1]), r[i].completed, r[i].missed,
		       r[i].miss_permille, r[i].mult, fl[0] ? fl : "-", r[i].victims);
		if (tenant) {
			cap_str(r[i].rcap_mrps, false, rc, sizeof(rc));
			cap_str(r[i].wcap_mrps, false, wc, sizeof(wc));
			printf(" %8llu %5u %8u %8llu %-7s %10s %10s",
			       (unsigned long long)r[i].usage, r[i].slots, r[i].inflight,
			       (unsigned long long)(r[i].delay_ns / 1000),
			       iso_mode_str(r[i].iso_mode, md, sizeof(md)), rc, wc);
		}
		printf("\n");
	}
}

int cmd_ring(int argc, char **argv)
{
	struct blkiso_tick_rec recs[RING_MAX];
	unsigned int n;
	struct bdev dev;
	struct sel sel;
	uint64_t cgid;
	int ret;

	ret = take_selectors(&argc, &argv, &sel);
	if (ret)
		return ret;
	if (!sel.keywords && argc >= 1 && argc <= 2) {
		/* the old order: DEV [CGROUP] */
		sel.dev = argv[0];
		sel.cgroup = argc == 2 ? argv[1] : NULL;
		argc = 0;
	}
	if (argc || !sel.dev) {
		err("usage: ring dev DEV [cgroup CGROUP]");
		return BX_USAGE;
	}
	ret = resolve_dev(sel.dev, &dev);
	if (!ret && sel.cgroup)
		ret = resolve_cgroup(sel.cgroup, &cgid);
	if (!ret)
		ret = open_ctl();
	if (ret)
		return ret;
	ret = ioc_ring(&dev, sel.cgroup ? &cgid : NULL, recs, RING_MAX, &n);
	if (ret == -ENOENT && sel.cgroup) {
		err("%s: no tenant on %s (it has done no I/O and has no quota)", sel.cgroup,
		    sel.dev);
		return BX_NOTFOUND;
	}
	if (ret)
		return ioc_fail(sel.dev, ret, NULL);
	if (opt.json)
		print_ring_json(recs, n, sel.cgroup != NULL);
	else
		print_ring_table(recs, n, sel.cgroup != NULL);
	return BX_OK;
}
