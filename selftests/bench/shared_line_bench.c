// SPDX-License-Identifier: GPL-2.0
/*
 * shared_line_bench.c - what a configured tenant's latency histogram costs
 * when its completions run on several CPUs (issue 18): .end_io makes two
 * lock-prefixed adds on the tenant's shared counters (a histogram bucket and
 * the latency sum, struct blkiso_lat in its feedback state), cache lines that move to
 * whichever CPU completes next.  Guests under TCG have no caches to
 * measure, so this runs on the host: THREADS threads pinned one per CPU,
 * each doing ITERS "completions" of GAP steps of a dependent multiply-add
 * chain (the rest of a bio's path: no memory traffic) then the two adds,
 * in three layouts: each thread on lines of its own (per-CPU counters),
 * shared with the bucket and the sum on two lines (struct blkiso_lat
 * today: 64-bit buckets, the sum 256 bytes after the first), and
 * shared on one line.  Each layout runs ROUNDS times, alternated, and the
 * fastest round counts (other load on the host only adds time).  Prints ns
 * per completion for each and the shared layouts' extra cost per
 * completion at that completion rate.
 *
 *   shared_line_bench [THREADS [GAP [ITERS [ROUNDS]]]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS	64
#define LAT_BUCKETS	32	/* BLKISO_LAT_BUCKETS */

struct ctr {			/* the histogram and its sum, one tenant's */
	uint64_t lat[LAT_BUCKETS];	/* lat[7]: bytes 56-63, line 0 */
	uint64_t lat_sum;		/* byte 256, line 4 */
	uint64_t one_line_sum;		/* beside lat[7]: see worker() */
} __attribute__((aligned(64)));

static struct ctr shared_ctr;
static struct ctr own_ctr[MAX_THREADS];
static unsigned long iters, gap, rounds;
static int nthreads, ncpus;
static pthread_barrier_t start;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

enum layout { OWN, SHARED_TWO_LINES, SHARED_ONE_LINE };

struct arg {
	int id;
	enum layout layout;
	uint64_t ns;
};

static void *worker(void *p)
{
	struct arg *a = p;
	struct ctr *c = a->layout == OWN ? &own_ctr[a->id] : &shared_ctr;
	/* the sum on lat[7]'s line (lat[6]) or a line of its own */
	uint64_t *sum = a->layout == SHARED_ONE_LINE ? &c->lat[6] : &c->lat_sum;
	cpu_set_t set;
	uint64_t t0, x = (uint64_t)a->id + 1;
	unsigned long i, k;

	CPU_ZERO(&set);
	CPU_SET(a->id % ncpus, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(&start);
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		for (k = 0; k < gap; k++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
		/* a latency of ~100 us: bucket 7, as .end_io's fls64(us) */
		__atomic_fetch_add(&c->lat[7], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(sum, 100000 + (i & 1023), __ATOMIC_RELAXED);
	}
	a->ns = now_ns() - t0;
	return NULL;
}

static double run(enum layout layout)
{
	pthread_t th[MAX_THREADS];
	struct arg a[MAX_THREADS];
	double sum = 0;
	int i;

	pthread_barrier_init(&start, NULL, nthreads);
	for (i = 0; i < nthreads; i++) {
		a[i] = (struct arg){ .id = i, .layout = layout };
		pthread_create(&th[i], NULL, worker, &a[i]);
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		sum += (double)a[i].ns / iters;
	}
	pthread_barrier_destroy(&start);
	return sum / nthreads;	/* ns per completion, per thread */
}

int main(int argc, char **argv)
{
	double best[3] = { 1e30, 1e30, 1e30 }, t;
	unsigned long r;
	int l;

	nthreads = argc > 1 ? atoi(argv[1]) : 2;
	gap = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	iters = argc > 3 ? strtoul(argv[3], NULL, 0) : 2000000;
	rounds = argc > 4 ? strtoul(argv[4], NULL, 0) : 5;
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (nthreads < 1 || nthreads > MAX_THREADS || !iters || !rounds) {
		fprintf(stderr, "usage: shared_line_bench [THREADS [GAP [ITERS [ROUNDS]]]]\n");
		return 2;
	}
	for (r = 0; r < rounds; r++)
		for (l = OWN; l <= SHARED_ONE_LINE; l++) {
			t = run(l);
			best[l] = t < best[l] ? t : best[l];
		}
	printf("{\"threads\": %d, \"cpus\": %d, \"gap\": %lu, \"iters\": %lu, \"rounds\": %lu, "
	       "\"own_ns\": %.1f, \"shared_two_lines_ns\": %.1f, \"shared_one_line_ns\": %.1f, "
	       "\"two_lines_cost_ns\": %.1f, \"one_line_cost_ns\": %.1f}\n",
	       nthreads, ncpus, gap, iters, rounds, best[OWN], best[SHARED_TWO_LINES],
	       best[SHARED_ONE_LINE], best[SHARED_TWO_LINES] - best[OWN],
	       best[SHARED_ONE_LINE] - best[OWN]);
	return 0;
}
