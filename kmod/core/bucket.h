/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bucket.h - the lazy token bucket (seed 000 S0-22..S0-31, seed 001 S1-04..S1-11).
 *
 * One bucket holds a signed whole-token balance, a capacity and a refill
 * rate in units per second.  Refill is computed on access from the time
 * elapsed since the last access; the fraction of a token not yet earned is
 * kept in a remainder so that no token is ever lost or invented, however
 * the accesses are spaced (S0-26, A-14).  The same bucket serves work mode
 * (cost = work units) and request mode (cost = 1, capacity = burst limit).
 *
 * Accounting identity, checked by the tests and the fuzzer:
 *   tokens - tokens_at_init == added - charged + refunded - dropped
 *                              - given + taken
 * (given/taken: tokens moved to and from per-CPU local buckets, dispense.c).
 *
 * Concurrency (all functions): the caller serialises every access to one
 * bucket (tenant lock, or the global key lock in dispense.c).  Nothing here
 * sleeps or allocates, so any context (process, softirq, hard IRQ) may call
 * it while holding that lock.
 */
#ifndef BLKISO_BUCKET_H
#define BLKISO_BUCKET_H

#include "bi_shim.h"

/* Above this, ns * rate products could leave 64 bits (20 TB/s of 2 KiB units). */
#define BI_RATE_MAX_UNITS_PER_S	10000000000ULL
/* Balances and capacities stay inside +-2^60 so that no sum overflows s64. */
#define BI_TOKENS_LIMIT		((s64)1 << 60)
/* Seed 000 default burst: capacity = 5 % of a second of rate (A-03, §10). */
#define BI_BURST_DEFAULT_MS	50
/* Seed 000 request-bucket burst limit (S0-05, S0-07). */
#define BI_BURST_LIMIT_DEFAULT	3

struct bi_bucket {
	s64 tokens;		/* whole tokens; negative = borrowed (S0-27) */
	s64 max_tokens;		/* capacity: refill and refunds stop here */
	u64 rate;		/* refill, units per second */
	u64 last_ns;		/* time up to which refill has been computed */
	u64 rem;		/* fraction of the next token, x BI_NSEC_PER_SEC */
	/* accounting, monotonic */
	u64 added;		/* by refill */
	u64 charged;		/* by admissions and corrections */
	u64 refunded;		/* by corrections that returned tokens */
	u64 dropped;		/* above capacity: refunds, returns, retune clamps */
	u64 given;		/* dispensed to local buckets */
	u64 taken;		/* returned from local buckets */
};

/* Correction dead-band (S0-25): skip a correction smaller than both limits. */
struct bi_deadband {
	u32 units;		/* absolute, in units; 0 = no absolute limit */
	u32 pct;		/* percent of the initial deduction; 0 = none */
};

u64 bi_bucket_capacity(u64 rate, u64 burst_ms);
void bi_bucket_init(struct bi_bucket *b, u64 rate, s64 max_tokens, s64 tokens,
		    u64 now_ns);
void bi_bucket_refill(struct bi_bucket *b, u64 now_ns);
void bi_bucket_set(struct bi_bucket *b, u64 rate, s64 max_tokens, u64 now_ns);
void bi_bucket_retune(struct bi_bucket *b, u64 rate, u64 burst_ms, u64 now_ns);
bool bi_bucket_admissible(struct bi_bucket *b, s64 min_tokens, u64 now_ns);
s64 bi_bucket_charge(struct bi_bucket *b, s64 cost, s64 floor_tokens, u64 now_ns);
s64 bi_bucket_refund(struct bi_bucket *b, s64 n, u64 now_ns);
bool bi_bucket_try_charge(struct bi_bucket *b, s64 min_tokens, s64 cost,
			  s64 floor_tokens, u64 now_ns);
bool bi_deadband_skip(const struct bi_deadband *db, s64 initial, s64 diff);
s64 bi_bucket_correct(struct bi_bucket *b, s64 initial, s64 actual,
		      const struct bi_deadband *db, s64 floor_tokens, u64 now_ns);
u64 bi_bucket_ready_at_ns(struct bi_bucket *b, s64 min_tokens, u64 now_ns);

#endif /* BLKISO_BUCKET_H */
