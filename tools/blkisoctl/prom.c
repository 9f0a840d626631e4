// SPDX-License-Identifier: GPL-2.0
/*
 * prom.c - stats --prometheus: STATS snapshots in the Prometheus text
 * exposition format (version 0.0.4), for node_exporter's textfile
 * collector or any scraper of a file.  Every sample of one metric family
 * is printed together, after its HELP and TYPE lines, as the format wants.
 * Labels: device (the dm name), cgroup (its path below /sys/fs/cgroup,
 * "kernel" for the kernel tenant, "(removed)" once gone), cgroup_id, and
 * direction ("read", "write") where a counter is kept per direction.
 * Latency is a histogram in seconds from the kernel's microsecond buckets.
 */
#include <inttypes.h>
#include <stdio.h>

#include "blkisoctl.h"

/* A label value with \, " and newline escaped. */
static void label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void dev_labels(FILE *f, const struct bdev *dev)
{
	fputs("device=\"", f);
	label_value(f, dev->name);
	fputc('"', f);
}

static void tenant_labels(FILE *f, const struct bdev *dev, uint64_t cgid,
			  const char *(*path)(uint64_t cgid))
{
	const char *p = path(cgid);

	dev_labels(f, dev);
	fputs(",cgroup=\"", f);
	label_value(f, p ? p : "(removed)");
	fprintf(f, "\",cgroup_id=\"%" PRIu64 "\"", cgid);
}

/* Tenant counters without a direction: stat index, name, help. */
static const struct {
	int stat;
	const char *name, *help;
} counters[] = {
	{ BLKISO_STAT_ARRIVED, "blkiso_arrived_total", "Bios that reached the target." },
	{ BLKISO_STAT_ADMITTED, "blkiso_admitted_total", "Bios passed at once." },
	{ BLKISO_STAT_PARKED, "blkiso_parked_total", "Bios held on the tenant's queue." },
	{ BLKISO_STAT_DISPATCHED, "blkiso_dispatched_total",
	  "Bios released from the tenant's queue." },
	{ BLKISO_STAT_DEBT, "blkiso_debt_total", "Bios released unpaid while suspending." },
	{ BLKISO_STAT_REJECTED_NOWAIT, "blkiso_rejected_nowait_total",
	  "REQ_NOWAIT bios that would have waited (EAGAIN)." },
	{ BLKISO_STAT_REJECTED, "blkiso_rejected_total", "Bios failed by reject mode (EIO)." },
	{ BLKISO_STAT_ERRORS, "blkiso_errors_total", "Bios completed with an error." },
};

/* Counters per direction: read index, write index, name, help. */
static const struct {
	int rstat, wstat;
	const char *name, *help;
} dir_counters[] = {
	{ BLKISO_STAT_RIOS, BLKISO_STAT_WIOS, "blkiso_ios_total", "Bios completed." },
	{ BLKISO_STAT_RBYTES, BLKISO_STAT_WBYTES, "blkiso_bytes_total", "Bytes completed." },
	{ BLKISO_STAT_RUNITS, BLKISO_STAT_WUNITS, "blkiso_units_total",
	  "Cost units completed (the device's unit_bytes)." },
};

static void histogram(FILE *f, const struct prom_dev *d, unsigned int n,
		      const char *(*path)(uint64_t cgid))
{
	unsigned int i, k, b;

	family(f, "blkiso_latency_seconds", "histogram",
	       "Bio latency, arrival at the target to completion.");
	for (i = 0; i < n; i++) {
		for (k = 0; k < d[i].st->count; k++) {
			const struct blkiso_stats_rec *r = &d[i].recs[k];
			uint64_t cum = 0;

			/* no series for a tenant that keeps no latency (counted only) */
			if (!(r->flags & BLKISO_F_LATENCY))
				continue;
			/* bucket b: below 2^b us; the last one is open-ended (+Inf) */
			for (b = 0; b < BLKISO_LAT_BUCKETS; b++) {
				cum += r->lat[b];
				fputs("blkiso_latency_seconds_bucket{", f);
				tenant_labels(f, d[i].dev, r->cgid, path);
				if (b < BLKISO_LAT_BUCKETS - 1)
					fprintf(f, ",le=\"%.9g\"} %" PRIu64 "\n",
						(double)(1ULL << b) / 1e6, cum);
				else
					fprintf(f, ",le=\"+Inf\"} %" PRIu64 "\n", cum);
			}
			fputs("blkiso_latency_seconds_sum{", f);
			tenant_labels(f, d[i].dev, r->cgid, path);
			fprintf(f, "} %" PRIu64 ".%06u\n", (uint64_t)r->lat_sum_us / 1000000,
				(unsigned int)(r->lat_sum_us % 1000000));
			fputs("blkiso_latency_seconds_count{", f);
			tenant_labels(f, d[i].dev, r->cgid, path);
			fprintf(f, "} %" PRIu64 "\n", cum);
		}
	}
}

void prom_print(FILE *f, const struct prom_dev *d, unsigned int n,
		const char *(*path)(uint64_t cgid))
{
	static const char * const dirs[] = { "read", "write" };
	unsigned int c, i, k, w;

	for (c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		family(f, counters[c].name, "counter", counters[c].help);
		for (i = 0; i < n; i++)
			for (k = 0; k < d[i].st->count; k++) {
				fprintf(f, "%s{", counters[c].name);
				tenant_labels(f, d[i].dev, d[i].recs[k].cgid, path);
				fprintf(f, "} %llu\n",
					(unsigned long long)d[i].recs[k].stat[counters[c].stat]);
			}
	}
	for (c = 0; c < sizeof(dir_counters) / sizeof(dir_counters[0]); c++) {
		family(f, dir_counters[c].name, "counter", dir_counters[c].help);
		for (i = 0; i < n; i++)
			for (k = 0; k < d[i].st->count; k++)
				for (w = 0; w < 2; w++) {
					int s = w ? dir_counters[c].wstat : dir_counters[c].rstat;

					fprintf(f, "%s{", dir_counters[c].name);
					tenant_labels(f, d[i].dev, d[i].recs[k].cgid, path);
					fprintf(f, ",direction=\"%s\"} %llu\n", dirs[w],
						(unsigned long long)d[i].recs[k].stat[s]);
				}
	}
	family(f, "blkiso_queued", "gauge", "Bios of the tenant parked now.");
	for (i = 0; i < n; i++)
		for (k = 0; k < d[i].st->count; k++) {
			fputs("blkiso_queued{", f);
			tenant_labels(f, d[i].dev, d[i].recs[k].cgid, path);
			fprintf(f, "} %u\n", d[i].recs[k].queued);
		}
	family(f, "blkiso_configured", "gauge", "1 if the tenant has a quota, 0 if counted only.");
	for (i = 0; i < n; i++)
		for (k = 0; k < d[i].st->count; k++) {
			fputs("blkiso_configured{", f);
			tenant_labels(f, d[i].dev, d[i].recs[k].cgid, path);
			fprintf(f, "} %d\n", !!(d[i].recs[k].flags & BLKISO_F_CONFIGURED));
		}
	histogram(f, d, n, path);
	family(f, "blkiso_device_tenants", "gauge", "Tenants of the device.");
	for (i = 0; i < n; i++) {
		fputs("blkiso_device_tenants{", f);
		dev_labels(f, d[i].dev);
		fprintf(f, "} %u\n", d[i].st->total);
	}
	family(f, "blkiso_device_queued", "gauge", "Bios parked on the device now.");
	for (i = 0; i < n; i++) {
		fputs("blkiso_device_queued{", f);
		dev_labels(f, d[i].dev);
		fprintf(f, "} %u\n", d[i].st->queued);
	}
	family(f, "blkiso_device_draining", "gauge", "1 while the device suspends.");
	for (i = 0; i < n; i++) {
		fputs("blkiso_device_draining{", f);
		dev_labels(f, d[i].dev);
		fprintf(f, "} %u\n", d[i].st->draining);
	}
	family(f, "blkiso_device_alloc_failures_total", "counter",
	       "Bios passed unmetered for want of memory.");
	for (i = 0; i < n; i++) {
		fputs("blkiso_device_alloc_failures_total{", f);
		dev_labels(f, d[i].dev);
		fprintf(f, "} %llu\n", (unsigned long long)d[i].st->alloc_failures);
	}
}
