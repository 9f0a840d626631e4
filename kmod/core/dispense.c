// SPDX-License-Identifier: GPL-2.0
/*
 * dispense.c - global/local token dispensing (seed 004): the per-CPU fast
 * path, the global slow path, demand-sized batches, the negative cache and
 * hold interval, and the return of idle local tokens.
 *
 * The fast path (bi_local_charge hit, bi_local_correct without overflow;
 * both inline in dispense.h) touches only the CPU's own struct bi_local: no
 * lock, no atomic.  Every transfer between a local and the global bucket
 * happens under the global lock and is counted on both sides (local
 * got/returned, global given/taken), so tokens are conserved whichever CPU
 * completes a bio.
 *
 * Concurrency: see the contract table in dispense.h.
 */
#include "dispense.h"

/*
 * bi_global_init - set up a key's global bucket: lazy refill at @rate up to
 * @max_tokens, dispense threshold 0, hold and demand interval one tick.
 * Context: configuration, before any CPU uses the key (bi_global_restart
 * for a key in use).
 */
void bi_global_init(struct bi_global *g, u64 rate, s64 max_tokens, s64 tokens,
		    u64 now_ns)
{
	*g = (struct bi_global){ 0 };
	bi_lock_init(&g->lock);
	bi_bucket_init(&g->b, rate, max_tokens, tokens, now_ns);
	g->local_max = bi_max_s64(g->b.max_tokens >> BI_LOCAL_MAX_SHIFT, 1);
	g->hold_ns = BI_DISPENSE_TICK_NS;
	g->tick_ns = BI_DISPENSE_TICK_NS;
}

/* A fresh bucket as bi_global_init() sets it, the lock kept.  Lock held. */
static void bi_global_restart_locked(struct bi_global *g, u64 rate,
				     s64 max_tokens, s64 tokens, u64 now_ns)
{
	bi_bucket_init(&g->b, rate, max_tokens, tokens, now_ns);
	g->threshold = 0;
	g->local_max = bi_max_s64(g->b.max_tokens >> BI_LOCAL_MAX_SHIFT, 1);
	g->min_batch = 0;
	g->hold_ns = BI_DISPENSE_TICK_NS;
	g->tick_ns = BI_DISPENSE_TICK_NS;
	g->gen++;
	bi_lease_init(&g->lease);
}

/* New rate and capacity, the balance kept (S0-31).  Lock held. */
static void bi_global_set_locked(struct bi_global *g, u64 rate, s64 max_tokens,
				 u64 now_ns)
{
	if (rate != g->b.rate)
		g->gen++;
	bi_bucket_set(&g->b, rate, max_tokens, now_ns);
	g->local_max = bi_max_s64(g->b.max_tokens >> BI_LOCAL_MAX_SHIFT, 1);
}

/*
 * bi_global_restart - a live key that was uncapped is capped again: the
 * bucket starts afresh as bi_global_init() sets it, under the global lock,
 * which is never initialised again (a completion charged under an earlier
 * cap may hold it: bi_local_return_excess).  The dispense counters are
 * kept and the generation moves on, so older holds lapse; leased credit
 * (lease.h) is dropped with the old cap.
 * Context: configuration; takes the global lock.
 */
void bi_global_restart(struct bi_global *g, u64 rate, s64 max_tokens, s64 tokens,
		       u64 now_ns)
{
	unsigned long flags = bi_lock_irqsave(&g->lock);

	bi_global_restart_locked(g, rate, max_tokens, tokens, now_ns);
	bi_unlock_irqrestore(&g->lock, flags);
}

/*
 * bi_global_set - retune rate and capacity (S0-31); local_max follows.
 * A new rate makes every CPU's negative-cache entry lapse (gen), so bios
 * waiting on the old rate's timing ask again at once: what they gathered
 * stays theirs, the rest comes at the new rate.
 * Context: configuration or tick; takes the global lock.
 */
void bi_global_set(struct bi_global *g, u64 rate, s64 max_tokens, u64 now_ns)
{
	unsigned long flags = bi_lock_irqsave(&g->lock);

	bi_global_set_locked(g, rate, max_tokens, now_ns);
	bi_unlock_irqrestore(&g->lock, flags);
}

/*
 * bi_global_tune - a key's whole configuration in one section of its lock:
 * restarted full (@restart, as bi_global_restart with @max_tokens tokens)
 * or retuned (bi_global_set), with the given local share, batch and
 * negative-cache hold (S4-07, dispense_hold_ms), so
 * that no CPU ever sees the new rate with the old share, or the default
 * share bi_global_set() computes in between.
 * Context: configuration or tick; takes the global lock.
 */
void bi_global_tune(struct bi_global *g, bool restart, u64 rate, s64 max_tokens,
		    s64 local_max, s64 min_batch, u64 hold_ns, u64 now_ns)
{
	unsigned long flags = bi_lock_irqsave(&g->lock);

	if (restart)
		bi_global_restart_locked(g, rate, max_tokens, max_tokens, now_ns);
	else
		bi_global_set_locked(g, rate, max_tokens, now_ns);
	g->local_max = local_max;
	g->min_batch = min_batch;
	g->hold_ns = hold_ns;
	bi_unlock_irqrestore(&g->lock, flags);
}

/*
 * The global side of claims 1/5 (S4-02, S4-04): refill lazily, then if
 * available > threshold, and at least @least is available, hand out up to
 * @want tokens, else answer "insufficient" (0).  @by: the local bucket
 * asking for a bio alone (NULL: none named); while the trickle is shared,
 * i.e. the ask before this one came from another local bucket and fewer
 * than a batch's tokens came in since, such a bio is not alone on the key
 * and waits for @shared_least, as queued bios do (bi_local_charge_slow).
 */
static s64 global_dispense(struct bi_global *g, const struct bi_local *by,
			   s64 want, s64 least, s64 shared_least, s64 need,
			   u64 now_ns, u64 *retry_ns, s64 *left)
{
	unsigned long flags = bi_lock_irqsave(&g->lock);
	struct bi_bucket *b = &g->b;
	s64 n = 0, own, credit, rest;

	bi_bucket_refill(b, now_ns);
	bi_lease_expire(&g->lease, now_ns);
	g->nr_requests++;
	if (by) {
		if (shared_least > least && g->last_by && g->last_by != by &&
		    b->added - g->last_added < (u64)g->min_batch) {
			least = shared_least;
			need = bi_max_s64(need, least);
		}
		g->last_by = by;
		g->last_added = b->added;
	}
	want = bi_min_s64(want, BI_TOKENS_LIMIT);
	/* the bucket's own tokens first, then leased credit (lease.h) */
	own = bi_max_s64(b->tokens - g->threshold, 0);
	credit = g->lease.tokens;
	if (want > 0 && own + credit > 0 && own + credit >= least) {
		n = bi_min_s64(want, own);
		b->tokens -= n;
		b->given += (u64)n;
		n += bi_lease_take(&g->lease, want - n, now_ns);
	} else {
		g->nr_refused++;
	}
	if (retry_ns) {
		/* ask again when the rest, or one capacity's worth, is there */
		rest = bi_min_s64(need - n, bi_max_s64(b->max_tokens - g->threshold, 1));
		*retry_ns = rest > 0 ? bi_bucket_ready_at_ns(b, g->threshold + rest, now_ns)
				     : now_ns;
	}
	if (left)
		*left = b->tokens - g->threshold + g->lease.tokens;
	bi_unlock_irqrestore(&g->lock, flags);
	return n;
}

/*
 * bi_global_dispense - global_dispense() for no local bucket in particular:
 * with leased credit (lease.h) handed out after the bucket's own tokens and
 * counted towards @least.  If less than @need was handed out, *@retry_ns is
 * when the rest could be had (U64_MAX: never by refill alone); *@left (if
 * given) is what the global bucket still holds above its threshold.  With a
 * negative threshold the global balance may go below zero (borrowing,
 * S0-06).
 * Context: any; takes the global lock (irqsave).
 */
s64 bi_global_dispense(struct bi_global *g, s64 want, s64 least, s64 need,
		       u64 now_ns, u64 *retry_ns, s64 *left)
{
	return global_dispense(g, NULL, want, least, least, need, now_ns,
			       retry_ns, left);
}

/*
 * bi_global_put - a local bucket hands back @n tokens (n < 0: hands over its
 * debt).  Tokens above capacity are dropped.  Context: any; takes the lock.
 */
void bi_global_put(struct bi_global *g, s64 n, u64 now_ns)
{
	unsigned long flags = bi_lock_irqsave(&g->lock);
	struct bi_bucket *b = &g->b;
	s64 room;

	bi_bucket_refill(b, now_ns);
	if (n >= 0) {
		b->taken += (u64)n;
		room = bi_max_s64(b->max_tokens - b->tokens, 0);
		if (n > room) {
			b->dropped += (u64)(n - room);
			n = room;
		}
	} else {
		n = bi_max_s64(n, -BI_TOKENS_LIMIT - b->tokens);
		b->given += (u64)-n;
	}
	b->tokens += n;
	bi_unlock_irqrestore(&g->lock, flags);
}

/* bi_local_init - empty local bucket.  Context: the owner, or before use. */
void bi_local_init(struct bi_local *l, u64 now_ns)
{
	*l = (struct bi_local){ 0 };
	l->interval_end_ns = now_ns + BI_DISPENSE_TICK_NS;
}

/*
 * bi_demand_wavg - linearly weighted average of the last @x intervals'
 * demand, demand[0] the most recent, claims 12/20:
 * (x * tar_1 + (x - 1) * tar_2 + ... + 1 * tar_x) / (1 + 2 + ... + x).
 */
u64 bi_demand_wavg(const u64 *demand, int x)
{
	u64 sum = 0, wsum = 0;
	int i;

	for (i = 0; i < x; i++) {
		sum += (u64)(x - i) * bi_min_u64(demand[i], 1ULL << 56);
		wsum += (u64)(x - i);
	}
	return wsum ? sum / wsum : 0;
}

/*
 * bi_demand_encode - @units as a 12-bit demand code (dispense.h): exact
 * below 256, else the nearest 8-bit mantissa m (128..255) times 2^e,
 * saturating at BI_DEMAND_MAX.  Slow path only (a rotation, a test).
 */
u32 bi_demand_encode(u64 units)
{
	u32 e = 0;
	u64 m = units;

	while (m >> BI_DEMAND_MANT_BITS) {
		e++;
		m = units >> e;
	}
	if (e && ((units >> (e - 1)) & 1)) {
		/* round to nearest: 255.5 << e rounds up to 128 << (e + 1) */
		if (++m >> BI_DEMAND_MANT_BITS) {
			e++;
			m >>= 1;
		}
	}
	if (e > BI_DEMAND_EXP_MAX)
		return (BI_DEMAND_EXP_MAX << BI_DEMAND_MANT_BITS) | 255;
	return (e << BI_DEMAND_MANT_BITS) | (u32)m;
}

/* The demand of the interval @i back ([0] = most recent), in units. */
u64 bi_local_demand(const struct bi_local *l, int i)
{
	u32 code = (u32)(l->demand_codes >> (i * BI_DEMAND_CODE_BITS)) &
		   ((1U << BI_DEMAND_CODE_BITS) - 1);

	return (u64)(code & 255) << (code >> BI_DEMAND_MANT_BITS);
}

/* Set the demand of the interval @i back to @units (encoded, dispense.h). */
void bi_local_set_demand(struct bi_local *l, int i, u64 units)
{
	u64 shift = (u64)i * BI_DEMAND_CODE_BITS;
	u64 mask = (((u64)1 << BI_DEMAND_CODE_BITS) - 1) << shift;

	l->demand_codes = (l->demand_codes & ~mask) |
			  ((u64)bi_demand_encode(units) << shift);
}

/* Start of the demand interval under way: the hold's base. */
static u64 local_interval_start(const struct bi_local *l, const struct bi_global *g)
{
	return l->interval_end_ns - bi_min_u64(g->tick_ns, l->interval_end_ns);
}

/* When the negative-cache entry ends (0: none). */
u64 bi_local_hold_until(const struct bi_local *l, const struct bi_global *g)
{
	if (!l->hold_rel)
		return 0;
	return local_interval_start(l, g) + ((u64)l->hold_rel << BI_HOLD_SHIFT);
}

/*
 * Hold until @until (at or before the interval's start: no hold),
 * rounded up to the unit, so the hold never ends before the global can
 * cover the bio, and cut to what 32 bits hold (68.7 s after the start,
 * above the longest hold: a cut hold would only ask early once).
 */
static void local_set_hold(struct bi_local *l, const struct bi_global *g, u64 until)
{
	u64 start = local_interval_start(l, g);
	/* a clock behind the interval (a caller's stale time): no hold */
	u64 rel = until > start ? until - start : 0;

	rel = (rel >> BI_HOLD_SHIFT) + !!(rel & ((1U << BI_HOLD_SHIFT) - 1));
	l->hold_rel = (u32)bi_min_u64(rel, U32_MAX);
	l->hold_gen = (u8)g->gen;
}

/*
 * bi_local_request_size - how many tokens to ask for (S4-09): the weighted
 * recent demand (or the current interval's, if higher), at least
 * BI_DISPENSE_MIN_BIOS bios' worth, capped so the
 * local balance stays within local_max (the fraction of the global maximum,
 * claims 10/21), but never less than this bio needs.
 */
s64 bi_local_request_size(struct bi_local *l, const struct bi_global *g,
			  s64 cost)
{
	s64 need = cost - l->tokens;
	u64 demand[BI_DEMAND_INTERVALS];
	s64 want;
	int i;

	for (i = 0; i < BI_DEMAND_INTERVALS; i++)
		demand[i] = bi_local_demand(l, i);
	want = (s64)bi_demand_wavg(demand, BI_DEMAND_INTERVALS);

	/*
	 * The demand of the interval under way: a new or busier CPU ramps up
	 * geometrically instead of asking for the same small batch again.
	 */
	want = bi_max_s64(want, (s64)bi_local_cur_units(l));
	if (cost < ((s64)1 << 50))
		want = bi_max_s64(want, cost * BI_DISPENSE_MIN_BIOS);
	want = bi_min_s64(want, g->local_max - l->tokens);
	return bi_max_s64(want, need);
}

/*
 * Close the demand intervals that ended before @now_ns (owner CPU only):
 * the history shifts by the k intervals that passed, the idle count
 * restarts at the k - 1 empty ones if the closed interval had a
 * use, else grows by k, and the hold keeps its end (its base moved on;
 * one that ended is dropped).
 */
static void local_rotate(struct bi_local *l, const struct bi_global *g,
			 u64 now_ns)
{
	u64 tick = bi_max_u64(g->tick_ns, 1), k, until;
	u32 cur = bi_local_cur_units(l);
	int i;

	if (now_ns < l->interval_end_ns)
		return;
	k = (now_ns - l->interval_end_ns) / tick + 1;
	until = bi_local_hold_until(l, g);
	for (i = BI_DEMAND_INTERVALS - 1; i > 0; i--)
		bi_local_set_demand(l, i, (u64)i >= k ? bi_local_demand(l, i - k) : 0);
	bi_local_set_demand(l, 0, k == 1 ? cur : 0);
	if (k > 1 && k <= BI_DEMAND_INTERVALS)
		bi_local_set_demand(l, (int)k - 1, cur);
	if (cur || l->used)
		l->idle = bi_min_u64(k - 1, BI_LOCAL_IDLE_MAX);
	else
		l->idle = bi_min_u64(l->idle + k, BI_LOCAL_IDLE_MAX);
	l->used = 0;
	l->flow_base = (u32)l->tokens;
	/* end + k x tick <= now + tick: no overflow in 584 years of uptime */
	l->interval_end_ns += k * tick;
	l->hold_rel = 0;
	if (until > local_interval_start(l, g))
		local_set_hold(l, g, until);
}

/*
 * bi_local_charge_slow - bi_local_charge() when the local balance cannot
 * cover @cost or a demand interval ended: close the interval, then charge
 * locally, or throttle by the negative cache, or fetch a batch.
 * Context: as bi_local_charge.
 */
bool bi_local_charge_slow(struct bi_local *l, struct bi_global *g, s64 cost,
			  bool queue, u64 now_ns, u64 *retry_ns)
{
	u64 retry = now_ns, hold;
	s64 got, want, need, least, batch, half, left = 0;

	cost = bi_min_s64(bi_max_s64(cost, 0), BI_TOKENS_LIMIT);
	/*
	 * A-36, lazily and on this CPU (no cross-CPU call): a balance unused
	 * for BI_LOCAL_IDLE_TICKS goes back to the global bucket before this
	 * CPU spends again, where a full bucket drops it: tokens taken long
	 * ago do not add to a refilled burst on their own CPU.  The fast path
	 * cannot spend them: it needs the current demand interval, which ends
	 * within a tick of the last use.  Rotates the demand interval too.
	 */
	bi_local_reclaim(l, g, now_ns);
	if (l->tokens >= cost)
		goto admit;
	/*
	 * claims 2/3: a recent refusal on this CPU throttles without asking,
	 * unless the key was retuned since (gen: read without the lock, a
	 * stale value costs one early or one held retry), or the refusal was
	 * a wait for a batch and this bio is alone: it asks for its own
	 * shortfall, which comes long before a batch.  Tenants under one
	 * parent share its key's local on a CPU, and a sibling's flood,
	 * refused a batch at every dispatch pass, renewed the hold before a
	 * lone sibling's 4 KiB read came up in the pass: with batches of 64
	 * units, two of the flood's reads, that read waited for the flood's
	 * batches for good (the guest's meter_test
	 * a_lone_child_is_not_held_by_its_siblings_batch: 1 units/s of 1000).
	 */
	if (now_ns < bi_local_hold_until(l, g) && l->hold_gen == (u8)g->gen &&
	    (queue || !l->hold_batch)) {
		bi_local_acct(l, nr_held, 1);
		*retry_ns = bi_local_hold_until(l, g);
		return false;
	}
	bi_local_acct(l, nr_slow, 1);
	want = bi_local_request_size(l, g, cost);
	need = cost - l->tokens;
	/*
	 * A wait never asks for more than half the capacity: a bucket waited
	 * on until it is (nearly) full drops what it refills while the waiter
	 * is late (a dispatcher's timer and work item), which cuts the rate;
	 * a bio dearer than that gathers it in several loads.
	 */
	half = bi_max_s64((g->b.max_tokens - g->threshold) / 2, 1);
	least = 1;
	batch = 1;
	if (g->min_batch && !l->draining) {
		/*
		 * With g->min_batch set and bios queued behind this one, take
		 * a batch or wait for one (claims 10-12): under a biting quota
		 * the global bucket never holds much, and taking what trickles
		 * in would send nearly every queued bio through the global
		 * lock and the dispatcher's timer.  min_batch is at most a
		 * quarter of the capacity (meter.c), so bios leave in lumps no
		 * larger than that.  A bio alone (!@queue) waits for its own
		 * shortfall only: one 4 KiB bio at 1 MiB/s waits 3.9 ms, not a
		 * batch's 12.5 ms.  Only while a burst is draining a
		 * well-filled global bucket (it still held tokens after this
		 * CPU's last batch) is the remainder taken as it is, so a
		 * burst gets the whole capacity.  A bio alone on this CPU
		 * is not alone on the key while other CPUs share the lean
		 * bucket's trickle (global_dispense()): taking what trickled
		 * in since the other CPU's ask would contact the global lock
		 * every few bios on each CPU (issue 18, QD4 on 4-8 CPUs).
		 */
		batch = bi_max_s64(bi_min_s64(want, g->min_batch),
				   bi_min_s64(need, half));
		batch = bi_max_s64(bi_min_s64(batch, half), 1);
		if (queue)
			least = batch;
	}
	need = bi_max_s64(least, bi_min_s64(need, half));
	got = global_dispense(g, l, want, least, batch, need, now_ns, &retry, &left);
	l->draining = got > 0 && left > 0;
	bi_local_move(l, got);
	bi_local_acct(l, got, got);
	if (got > 0)		/* gathering for a waiting bio is use */
		l->used = 1;
	if (l->tokens >= cost)
		goto admit;
	/*
	 * a short dispense stays here for the retry.  The hold (claim 3)
	 * ends no later than the global bucket can cover this bio: holding
	 * past that lets the bucket fill to capacity and drop tokens, which
	 * would cut the rate (a 100 ms hold with a 50 ms burst halves it).
	 */
	hold = g->hold_ns > U64_MAX - now_ns ? U64_MAX : now_ns + g->hold_ns;
	hold = bi_min_u64(hold, retry);
	local_set_hold(l, g, hold);
	l->hold_batch = least > 1;
	*retry_ns = hold;
	return false;
admit:
	bi_local_take(l, cost);
	return true;
}

/*
 * bi_local_return_excess - a refund pushed the local balance above
 * local_max (bi_local_correct): hand back the excess.
 * Context: as bi_local_correct; takes the global lock.
 */
void bi_local_return_excess(struct bi_local *l, struct bi_global *g, u64 now_ns)
{
	s64 excess = l->tokens - g->local_max;

	bi_local_move(l, -excess);
	bi_local_acct(l, returned, excess);
	bi_global_put(g, excess, now_ns);
}

/*
 * bi_local_reclaim - a local bucket unused for more than
 * BI_LOCAL_IDLE_TICKS demand intervals hands its balance (or its debt) back
 * to the global bucket; the slow path of a charge calls it first.  Returns true if it handed anything back.
 * Context: as bi_local_charge (on the local's CPU, IRQs off).
 */
bool bi_local_reclaim(struct bi_local *l, struct bi_global *g, u64 now_ns)
{
	s64 n = l->tokens;

	local_rotate(l, g, now_ns);
	if (!n || bi_local_cur_units(l) || l->used || l->idle < BI_LOCAL_IDLE_TICKS)
		return false;
	bi_local_move(l, -n);
	if (n > 0)
		bi_local_acct(l, returned, n);
	else
		bi_local_acct(l, got, -n);
	bi_global_put(g, n, now_ns);
	return true;
}
