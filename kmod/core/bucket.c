// SPDX-License-Identifier: GPL-2.0
/*
 * bucket.c - the lazy token bucket: exact refill, charge at submission,
 * correction at completion, borrowing, blackout timing, retune.
 *
 * Refill (S1-08, S4-04 claim 18): added = min(rate * dt, max - tokens), done
 * on every access, never by a timer.  rate * dt is split into whole seconds
 * and the sub-second rest so that the product stays inside 64 bits for rates
 * up to BI_RATE_MAX_UNITS_PER_S, and the fraction of a token not yet earned
 * stays in rem (x 1e9), so a bucket read every microsecond and one read once
 * a day hold exactly the same balance (S0-26, A-14).  A full bucket stops
 * generating (S0-23) and forgets its fraction.
 *
 * Every function takes now_ns and refills first, so a charge or a refund is
 * applied to the balance as of now: refilling after a charge would let a
 * full bucket earn tokens it had no room for.
 *
 * Concurrency: see bucket.h; the caller serialises access to one bucket.
 */
#include "bucket.h"

static s64 clamp_tokens(s64 v)
{
	return bi_max_s64(bi_min_s64(v, BI_TOKENS_LIMIT), -BI_TOKENS_LIMIT);
}

/* Capacity as burst time (S0-23, A-03): rate * burst_ms / 1000, at least 1. */
u64 bi_bucket_capacity(u64 rate, u64 burst_ms)
{
	u64 cap;

	rate = bi_min_u64(rate, BI_RATE_MAX_UNITS_PER_S);
	burst_ms = bi_min_u64(burst_ms, 1000000);	/* 1000 s: no overflow */
	cap = rate * burst_ms / 1000;
	return bi_min_u64(bi_max_u64(cap, 1), (u64)BI_TOKENS_LIMIT);
}

/*
 * bi_bucket_init - set up a bucket holding @tokens (clamped to capacity).
 * Context: any; the bucket is not yet visible to others.
 */
void bi_bucket_init(struct bi_bucket *b, u64 rate, s64 max_tokens, s64 tokens,
		    u64 now_ns)
{
	*b = (struct bi_bucket){ 0 };
	b->rate = bi_min_u64(rate, BI_RATE_MAX_UNITS_PER_S);
	b->max_tokens = clamp_tokens(max_tokens);
	b->tokens = bi_min_s64(clamp_tokens(tokens), b->max_tokens);
	b->last_ns = now_ns;
}

/*
 * bi_bucket_refill - bring the balance up to date at @now_ns.
 * Context: any, bucket serialised by the caller.  A clock that steps back
 * (two CPUs' readings racing for the lock) adds nothing and keeps last_ns.
 */
void bi_bucket_refill(struct bi_bucket *b, u64 now_ns)
{
	u64 elapsed, secs, sub, add, room;

	if (now_ns <= b->last_ns)
		return;
	elapsed = now_ns - b->last_ns;
	b->last_ns = now_ns;
	if (b->tokens >= b->max_tokens) {
		b->rem = 0;
		return;
	}
	if (!b->rate)
		return;
	room = (u64)(b->max_tokens - b->tokens);
	secs = elapsed / BI_NSEC_PER_SEC;
	sub = elapsed % BI_NSEC_PER_SEC;
	/* secs > room / rate implies secs * rate > room: full, skip the product */
	if (secs && secs > room / b->rate)
		goto full;
	/* sub < 1e9 and rate <= 1e10: sub * rate + rem < 2^64 */
	sub = sub * b->rate + b->rem;
	add = secs * b->rate + sub / BI_NSEC_PER_SEC;
	if (add >= room)
		goto full;
	b->rem = sub % BI_NSEC_PER_SEC;
	b->tokens += add;
	b->added += add;
	return;
full:
	b->tokens = b->max_tokens;
	b->added += room;
	b->rem = 0;
}

/*
 * bi_bucket_set - change rate and capacity (S0-31).  Tokens earned at the old
 * rate up to @now_ns are kept; a balance above the new capacity is clamped
 * (counted as dropped).  The fraction in rem is rate-independent and kept.
 */
void bi_bucket_set(struct bi_bucket *b, u64 rate, s64 max_tokens, u64 now_ns)
{
	bi_bucket_refill(b, now_ns);
	b->rate = bi_min_u64(rate, BI_RATE_MAX_UNITS_PER_S);
	b->max_tokens = clamp_tokens(max_tokens);
	if (b->tokens > b->max_tokens) {
		b->dropped += (u64)(b->tokens - b->max_tokens);
		b->tokens = b->max_tokens;
		b->rem = 0;
	}
}

/* bi_bucket_retune - new rate, capacity = rate * burst_ms (S0-31, A-03). */
void bi_bucket_retune(struct bi_bucket *b, u64 rate, u64 burst_ms, u64 now_ns)
{
	bi_bucket_set(b, rate, (s64)bi_bucket_capacity(rate, burst_ms), now_ns);
}

/* bi_bucket_admissible - tokens >= min after refill (S0-06, S1-10). */
bool bi_bucket_admissible(struct bi_bucket *b, s64 min_tokens, u64 now_ns)
{
	bi_bucket_refill(b, now_ns);
	return b->tokens >= min_tokens;
}

/*
 * bi_bucket_charge - deduct @cost (clamped to >= 0), never below
 * @floor_tokens (BI_NO_FLOOR = unbounded borrowing).  A charge the floor cuts
 * short is forgiven, not remembered.  Returns what was deducted.
 */
s64 bi_bucket_charge(struct bi_bucket *b, s64 cost, s64 floor_tokens, u64 now_ns)
{
	s64 lim = bi_max_s64(floor_tokens, -BI_TOKENS_LIMIT);
	s64 take;

	bi_bucket_refill(b, now_ns);
	cost = bi_min_s64(bi_max_s64(cost, 0), BI_TOKENS_LIMIT);
	if (b->tokens <= lim)
		return 0;
	take = bi_min_s64(cost, b->tokens - lim);
	b->tokens -= take;
	b->charged += (u64)take;
	return take;
}

/*
 * bi_bucket_refund - give back @n tokens (clamped to >= 0); the part above
 * capacity is dropped, as refill would drop it (S1-04).  Returns what the
 * balance gained.
 */
s64 bi_bucket_refund(struct bi_bucket *b, s64 n, u64 now_ns)
{
	s64 room;

	bi_bucket_refill(b, now_ns);
	n = bi_min_s64(bi_max_s64(n, 0), BI_TOKENS_LIMIT);
	b->refunded += (u64)n;
	room = bi_max_s64(b->max_tokens - b->tokens, 0);
	if (n > room) {
		b->dropped += (u64)(n - room);
		n = room;
	}
	b->tokens += n;
	return n;
}

/*
 * bi_bucket_try_charge - admit iff tokens >= @min_tokens, then deduct @cost
 * in the same step so no other bio is admitted on the same tokens (S1-10).
 */
bool bi_bucket_try_charge(struct bi_bucket *b, s64 min_tokens, s64 cost,
			  s64 floor_tokens, u64 now_ns)
{
	if (!bi_bucket_admissible(b, min_tokens, now_ns))
		return false;
	bi_bucket_charge(b, cost, floor_tokens, now_ns);
	return true;
}

/*
 * bi_deadband_skip - true if a correction of @diff after an initial deduction
 * of @initial lies inside the dead-band (S0-25): smaller than db->units and
 * smaller than db->pct percent of @initial.  A zero dead-band never skips.
 */
bool bi_deadband_skip(const struct bi_deadband *db, s64 initial, s64 diff)
{
	/* 2^40 units (2 PiB) and 10^5 %: the products below stay in 64 bits */
	u64 lim = 1ULL << 40;
	u64 d = bi_min_u64((u64)bi_abs_s64(bi_max_s64(diff, -BI_TOKENS_LIMIT)), lim);
	u64 init = bi_min_u64((u64)bi_max_s64(initial, 0), lim);
	u64 pct;

	if (!db || (!db->units && !db->pct))
		return false;
	pct = bi_min_u64(db->pct, 100000);
	if (d >= db->units && d * 100 >= pct * init)
		return false;
	return true;
}

/*
 * bi_bucket_correct - completion correction (S0-25, A-08): deduct
 * actual - initial more, or refund initial - actual, unless inside the
 * dead-band.  Returns the correction applied (> 0 charged, < 0 refunded).
 */
s64 bi_bucket_correct(struct bi_bucket *b, s64 initial, s64 actual,
		      const struct bi_deadband *db, s64 floor_tokens, u64 now_ns)
{
	s64 diff;

	initial = clamp_tokens(initial);
	actual = clamp_tokens(actual);
	diff = actual - initial;
	if (!diff || bi_deadband_skip(db, initial, diff))
		return 0;
	if (diff > 0)
		return bi_bucket_charge(b, diff, floor_tokens, now_ns);
	return -bi_bucket_refund(b, -diff, now_ns);
}

/*
 * bi_bucket_ready_at_ns - earliest time >= @now_ns at which the balance will
 * be >= @min_tokens with no further charges: the end of a blackout (S0-27,
 * S1-11).  U64_MAX if never (rate 0, or min above capacity).  The dispatcher
 * arms its timer at this time.
 *
 * need tokens arrive once t * rate + rem >= need * 1e9.  With need - 1 =
 * q * rate + r this is t = q * 1e9 + ceil((r * 1e9 + 1e9 - rem) / rate), all
 * in 64 bits since r < rate <= BI_RATE_MAX_UNITS_PER_S.
 */
u64 bi_bucket_ready_at_ns(struct bi_bucket *b, s64 min_tokens, u64 now_ns)
{
	u64 need, q, r, t;

	bi_bucket_refill(b, now_ns);
	if (b->tokens >= min_tokens)
		return now_ns;
	if (min_tokens > b->max_tokens || !b->rate)
		return U64_MAX;
	now_ns = bi_max_u64(now_ns, b->last_ns);
	need = (u64)(min_tokens - b->tokens);
	q = (need - 1) / b->rate;
	r = (need - 1) % b->rate;
	if (q > U64_MAX / BI_NSEC_PER_SEC / 2)
		return U64_MAX;
	t = q * BI_NSEC_PER_SEC +
	    bi_div_round_up_u64(r * BI_NSEC_PER_SEC + BI_NSEC_PER_SEC - b->rem, b->rate);
	if (t > U64_MAX - now_ns)
		return U64_MAX;
	return now_ns + t;
}
