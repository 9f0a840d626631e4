// SPDX-License-Identifier: GPL-2.0
/*
 * sim_output.c - blkiso-sim's results, as a table or as JSON.
 *
 * One job: print per tenant per second and in total the fields a guest run
 * reports too (doc/sim.md): iops, mbps (10^6 bytes/s), lat_mean_us,
 * lat_p50_us, lat_p99_us (submit -> completion), plus the core's state
 * (throttled bios, slot limit, delay, request cap, multiplier), so that one
 * scenario run both ways can be compared field by field.
 */
#include "sim_engine.h"

static double mbps(u64 bytes, double secs)
{
	return secs > 0 ? (double)bytes / 1e6 / secs : 0;
}

static void tenant_fields(FILE *f, struct sim *s, struct sim_tenant *t,
			  const struct sim_stats *st, double secs, bool json)
{
	double iops = secs > 0 ? (double)st->ios / secs : 0;
	double mean = sim_hist_mean_ns(&st->lat) / 1e3;
	double p50 = sim_hist_pct_ns(&st->lat, 500) / 1e3;
	double p99 = sim_hist_pct_ns(&st->lat, 990) / 1e3;
	u32 slots = t->conf.alloc ? bi_iso_limit(&t->iso, &t->iso_p) : 0;
	double delay = t->conf.alloc && t->iso.mode == BI_ISO_DELAY ?
		       t->iso.delay_ns / 1e3 : 0;
	double cap = t->conf.mode == BI_MODE_REQUEST ?
		     t->rate[BI_DIR_READ].cap_mrps / 1e3 : 0;

	(void)s;
	if (json) {
		fprintf(f, "{\"name\":\"%s\",\"cgroup\":\"%s\",\"ios\":%llu,\"iops\":%.1f,"
			"\"read_iops\":%.1f,\"write_iops\":%.1f,"
			"\"mbps\":%.3f,\"lat_mean_us\":%.1f,\"lat_p50_us\":%.1f,"
			"\"lat_p99_us\":%.1f,\"throttled\":%llu,\"rejected\":%llu,\"slots\":%u,"
			"\"delay_us\":%.1f,\"delay_ticks\":%llu,\"cap_rps\":%.3f}",
			t->name, t->cgroup, (unsigned long long)st->ios, iops,
			secs > 0 ? st->ios_dir[BI_DIR_READ] / secs : 0,
			secs > 0 ? st->ios_dir[BI_DIR_WRITE] / secs : 0,
			mbps(st->bytes, secs), mean, p50, p99,
			(unsigned long long)st->throttled,
			(unsigned long long)st->rejected, slots, delay,
			(unsigned long long)st->delay_ticks, cap);
		return;
	}
	fprintf(f, "%-12s %9.1f %8.3f %11.1f %10.1f %10.1f %9llu %5u %9.1f %9.3f\n",
		t->name, iops, mbps(st->bytes, secs), mean, p50, p99,
		(unsigned long long)st->throttled, slots, delay, cap);
}

static void header(FILE *f, const char *first)
{
	fprintf(f, "%6s %-12s %9s %8s %11s %10s %10s %9s %5s %9s %9s\n", first,
		"tenant", "iops", "MB/s", "lat_mean_us", "lat_p50_us", "lat_p99_us",
		"throttled", "slots", "delay_us", "cap_rps");
}

/*
 * One simulated second (@second counts from 0: the interval [second,
 * second + 1) s).  JSON: one object of the "seconds" array; @first says
 * whether a comma is needed.
 */
void sim_print_second(FILE *f, struct sim *s, u32 second, bool json, bool first)
{
	u32 i;

	if (json) {
		fprintf(f, "%s{\"t\":%u,\"device\":{\"iops\":%llu,\"mbps\":%.3f,"
			"\"multiplier\":%u,\"overloaded\":%s,\"miss_permille\":%u,"
			"\"depth_limit\":%u,\"depth_pace_ups\":%llu},\"tenants\":[",
			first ? "" : ",\n", second + 1,
			(unsigned long long)s->dev_ios_sec, mbps(s->dev_bytes_sec, 1),
			s->ovl.m, s->ovl.overloaded ? "true" : "false", s->ovl.miss_permille,
			s->depth.limit, (unsigned long long)s->depth.pace_ups);
		for (i = 0; i < s->nr_tenants; i++) {
			if (i)
				fputc(',', f);
			tenant_fields(f, s, &s->tenants[i], s->tenants[i].sec, 1, true);
		}
		fputs("]}", f);
		return;
	}
	if (first)
		header(f, "time");
	for (i = 0; i < s->nr_tenants; i++) {
		fprintf(f, "%6u ", second + 1);
		tenant_fields(f, s, &s->tenants[i], s->tenants[i].sec, 1, false);
	}
}

/* Whole-run totals (rates over the duration). */
void sim_print_totals(FILE *f, struct sim *s, bool json)
{
	double secs = (s->duration_ns - s->warmup_ns) / 1e9;
	u32 i;

	if (json) {
		fprintf(f, "\"totals\":{\"duration_s\":%.3f,\"device\":{\"iops\":%.1f,"
			"\"mbps\":%.3f,\"state_transitions\":%llu},\"tenants\":[",
			secs, s->dev_ios / secs, mbps(s->dev_bytes, secs),
			(unsigned long long)s->ovl.transitions);
		for (i = 0; i < s->nr_tenants; i++) {
			if (i)
				fputc(',', f);
			tenant_fields(f, s, &s->tenants[i], s->tenants[i].total, secs, true);
		}
		fputs("]}", f);
		return;
	}
	fprintf(f, "\ntotals over %.1f s: device %.1f IOPS %.3f MB/s, %llu overload transitions\n",
		secs, s->dev_ios / secs, mbps(s->dev_bytes, secs),
		(unsigned long long)s->ovl.transitions);
	header(f, "");
	for (i = 0; i < s->nr_tenants; i++) {
		fprintf(f, "%6s ", "total");
		tenant_fields(f, s, &s->tenants[i], s->tenants[i].total, secs, false);
	}
}
