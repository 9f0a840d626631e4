// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso-sim - try a blkiso policy on a simulated device before deploying it.
 *
 *   blkiso-sim [-j] [-q] [-b] [-d DURATION] [-w SECONDS] SCENARIO.sim
 *   blkiso-sim -h | --help | -V | --version
 *
 * Reads a scenario (doc/sim.md), runs it through the decision core and
 * prints per tenant per second and in total IOPS, MB/s and mean/p50/p99
 * latency, as a table or as JSON (-j).  -q prints the totals only, -b adds
 * the benchmark figures (controller bytes per tenant, tick cost).
 * Exit status: 0 ok, 1 bad scenario or run failure, 2 usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim_engine.h"

struct out_ctx {
	bool json;
	bool quiet;
	bool first;
};

static void on_second(struct sim *s, u32 second, void *arg)
{
	struct out_ctx *o = arg;

	if (o->quiet)
		return;
	sim_print_second(stdout, s, second, o->json, o->first);
	o->first = false;
}

#define SIM_VERSION	"0.2.0"

static void usage(FILE *f)
{
	fprintf(f, "usage: blkiso-sim [-j] [-q] [-b] [-d DURATION] [-w SECONDS] SCENARIO.sim\n"
		"  -j  JSON output\n  -q  totals only\n"
		"  -b  benchmark figures on stderr\n  -d  override the duration (e.g. 20s)\n"
		"  -w  leave the first SECONDS (whole) out of the totals\n"
		"  -h, --help  this text;  -V, --version  the version\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct out_ctx o = { false, false, true };
	const char *dur = NULL;
	unsigned long warmup = 0;
	char *end;
	bool bench = false;
	struct sim s;
	int c;

	while ((c = getopt_long(argc, argv, "jqbd:w:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = true;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'b':
			bench = true;
			break;
		case 'd':
			dur = optarg;
			break;
		case 'w':
			warmup = strtoul(optarg, &end, 10);
			if (*end || end == optarg || warmup > 86400) {
				usage(stderr);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("blkiso-sim %s\n", SIM_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	sim_init(&s);
	if (sim_load_file(&s, argv[optind])) {
		fprintf(stderr, "blkiso-sim: %s: %s\n", argv[optind], s.err);
		sim_free(&s);
		return 1;
	}
	if (dur) {
		char line[64];

		snprintf(line, sizeof(line), "duration %s", dur);
		if (sim_apply_line(&s, line, 0)) {
			fprintf(stderr, "blkiso-sim: -d: %s\n", s.err);
			sim_free(&s);
			return 2;
		}
	}
	s.warmup_ns = (u64)warmup * BI_NSEC_PER_SEC;
	if (s.warmup_ns >= s.duration_ns) {
		fprintf(stderr, "blkiso-sim: -w %lu: not shorter than the run\n", warmup);
		sim_free(&s);
		return 2;
	}
	s.on_second = on_second;
	s.on_second_arg = &o;
	if (o.json)
		printf("{\"scenario\":\"%s\",\"seconds\":[", argv[optind]);
	if (sim_run(&s)) {
		fprintf(stderr, "blkiso-sim: %s\n", s.err);
		sim_free(&s);
		return 1;
	}
	if (o.json) {
		printf("],\n");
		sim_print_totals(stdout, &s, true);
		printf("}\n");
	} else {
		sim_print_totals(stdout, &s, false);
	}
	if (bench)
		fprintf(stderr, "bench: tenants %u, controller state %zu bytes/tenant, "
			"ticks %llu, tenant updates/tick %.1f, tick cost %.1f us "
			"(%.1f ns per tenant update), events %llu\n",
			s.nr_tenants, sim_tenant_ctl_bytes(), (unsigned long long)s.ticks,
			s.ticks ? (double)s.tick_tenant_updates / s.ticks : 0,
			s.ticks ? s.tick_ns_spent / 1e3 / s.ticks : 0,
			s.tick_tenant_updates ?
			(double)s.tick_ns_spent / s.tick_tenant_updates : 0,
			(unsigned long long)s.events);
	sim_free(&s);
	return 0;
}
