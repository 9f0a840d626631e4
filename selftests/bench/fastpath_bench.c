// SPDX-License-Identifier: GPL-2.0
/*
 * fastpath_bench.c - the per-bio cost of the token engine's fast path, for
 * callgrind: bench_loop() runs N bios through a CPU's local bucket (charge
 * 1 unit at submission, correction to 2 units at completion: a 4 KiB bio
 * with the seed's initial deduction of 1), on a clock advancing 1 us per
 * bio.  selftests/bench/fastpath.sh collects instructions inside bench_loop
 * only (--toggle-collect) and divides by N.  The loop includes the rare
 * slow paths (global dispenses, demand-interval roll-overs); their count is
 * printed so the report can separate them.
 */
#include <stdio.h>
#include <stdlib.h>
#include "dispense.h"

static struct bi_global g;
static struct bi_local l;

BI_NOINLINE unsigned long bench_loop(unsigned long n, u64 *now)
{
	unsigned long admitted = 0, i;
	u64 retry;

	for (i = 0; i < n; i++) {
		*now += 1000;
		if (bi_local_charge(&l, &g, 1, true, *now, &retry)) {
			bi_local_correct(&l, &g, 1, 2, NULL, *now);
			admitted++;
		}
	}
	return admitted;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	unsigned long admitted;
	u64 now = 0;

	/* 10^7 units/s, 1 s burst: never the bottleneck at 2 units per us */
	bi_global_init(&g, 10000000ULL, 10000000, 10000000, 0);
	bi_local_init(&l, 0);
	admitted = bench_loop(n, &now);
	printf("{\"bios\": %lu, \"admitted\": %lu, \"global_dispenses\": %llu}\n",
	       n, admitted, (unsigned long long)l.nr_slow);
	return admitted == n ? 0 : 1;
}
