/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dispense.h - per-CPU local buckets fed from a global bucket per throttle
 * key (seed 004, S4-02..S4-11, A-33..A-38).
 *
 * The global bucket (struct bi_global) is a lazy bucket.c bucket under its
 * own lock.  Each CPU keeps a struct bi_local per key: a plain balance the
 * owning CPU charges without atomics or locks.  When the local balance
 * cannot cover a bio, the CPU asks the global bucket for a batch sized by
 * its recent demand (claims 10-12), under the global lock; if the global
 * bucket has too little it says so, the CPU throttles the bio and remembers
 * the refusal for hold_ns (claims 2 and 3) so that repeated misses do not
 * hammer the global lock.
 *
 * Concurrency contract (kernel; user-space tests emulate a CPU by a thread
 * that owns one struct bi_local):
 *
 *  entry point            context               caller must
 *  bi_local_charge(_slow) submission (process)  run on the local's CPU with
 *  bi_local_hit, _take    or dispatcher work    preemption and IRQs off
 *  bi_local_correct,      completion (hard IRQ  run on the completing CPU's
 *  bi_local_return_excess possible)             local with IRQs off
 *  bi_local_reclaim       as bi_local_charge    (called by its slow path)
 *  bi_global_dispense,    any                   nothing: these take the
 *  bi_global_put                                global lock (irqsave)
 *  bi_global_init         configuration         exclude the users
 *  bi_global_set/restart, configuration         nothing: they hold the
 *  bi_global_tune
 *                                               global lock
 *  bi_local_init          CPU bring-up/key      own the local
 *
 * IRQs are off on the local paths because a completion on the same CPU may
 * interrupt a submission; the global lock is taken irqsave for the same
 * reason.  No path writes a cache line shared with another CPU except under
 * the global lock.
 *
 * Over-admission bound: tokens parked in local buckets were already
 * taken out of the global bucket, which refills behind them; so at most
 * global max + nr_cpus * local_max tokens can be spent in a burst, i.e. at
 * most nr_cpus * local_max beyond a single bucket.  local_max defaults to
 * global max / 16 and a local idle for more than one tick returns its
 * balance at the next reclaim.
 */
#ifndef BLKISO_DISPENSE_H
#define BLKISO_DISPENSE_H

#include "bi_shim.h"
#include "bucket.h"
#include "lease.h"

/* x of claims 12/20: intervals in the linearly weighted demand average (§10) */
#define BI_DEMAND_INTERVALS		4
/*
 * a local balance unused for this many demand intervals (1 s) goes
 * back to the global bucket.  Long enough that a CPU stalled under a flood
 * (a busy host descheduling a guest's vCPU) keeps its batch.
 */
#define BI_LOCAL_IDLE_TICKS		10
/* local_max = global max >> this (max/16, §10) */
#define BI_LOCAL_MAX_SHIFT		4
/* a dispense asks for at least this many bios' worth (<= 1 per 32 bios) */
#define BI_DISPENSE_MIN_BIOS		32
/* demand interval and hold interval default to the 100 ms tick (§10) */
#define BI_DISPENSE_TICK_NS		(100 * BI_NSEC_PER_MSEC)

struct bi_local;

struct bi_global {
	struct bi_lock lock;
	struct bi_bucket b;		/* lazy refill, capacity, accounting */
	s64 threshold;			/* dispense iff available > this */
	s64 local_max;			/* cap of each local balance */
	s64 min_batch;			/* dispense whole batches of this; 0 = any */
	u64 hold_ns;			/* throttle hold after a refusal (claim 3) */
	u64 tick_ns;			/* demand interval (claims 11/12) */
	u32 gen;			/* bumped by each retune: older holds lapse */
	u64 nr_requests;		/* dispense requests received */
	u64 nr_refused;			/* answered "insufficient" */
	/* the last local bucket that asked (compared, never read through) */
	const struct bi_local *last_by;
	u64 last_added;			/* b.added at its ask */
	struct bi_lease lease;		/* leased credit, after the bucket's own */
};

/*
 * A local bucket's narrowed fields (issue 18: 32 bytes a key a CPU, 4 keys
 * in a tenant's per-CPU area).  Demand is kept as 12-bit codes: an 8-bit
 * mantissa shifted by a 4-bit exponent, exact below 256 units, else
 * rounded to the nearest of 128-255 << e (within 1/256), saturating at
 * BI_DEMAND_MAX.  Demand only sizes a batch request, which local_max caps
 * too; a demand above BI_DEMAND_MAX units an interval (4 GB at the smallest
 * 512-byte unit) asks for BI_DEMAND_MAX at least, still >= 32 bios' worth.
 */
#define BI_DEMAND_CODE_BITS	12
#define BI_DEMAND_MANT_BITS	8
#define BI_DEMAND_EXP_MAX	15
#define BI_DEMAND_MAX		(255ULL << BI_DEMAND_EXP_MAX)
/*
 * The hold end is kept in units of 2^BI_HOLD_SHIFT ns (16 ns) after the
 * start of the demand interval under way, in 32 bits: 68.7 s, more than
 * the longest hold (dispense_hold_ms <= 60,000) plus one interval.
 */
#define BI_HOLD_SHIFT		4
/* the idle count saturates here: above BI_LOCAL_IDLE_TICKS, in 4 bits */
#define BI_LOCAL_IDLE_MAX	15

struct bi_local {
	s64 tokens;			/* may go negative by completion charges */
	u64 interval_end_ns;		/* end of the current demand interval */
	/*
	 * the balance plus the current interval's demand, modulo 2^32: the
	 * slow paths move it with every change of the balance that is not a
	 * charge, so the demand is flow_base - tokens (bi_local_cur_units())
	 * and a charge writes the balance alone.  Exact while an interval's
	 * demand on one CPU stays below 2^32 units (2 TB at 512-byte units
	 * in 100 ms: no device moves that); beyond, it wraps, which only
	 * sizes one interval's batches smaller.
	 */
	u32 flow_base;
	/*
	 * negative-cache entry (claims 2, 3): the hold ends hold_rel <<
	 * BI_HOLD_SHIFT ns after the current interval's start; 0 = none
	 */
	u32 hold_rel;
	/* [i] = interval i back, [0] = most recent: bi_local_demand() */
	u64 demand_codes : 4 * BI_DEMAND_CODE_BITS;
	u64 hold_gen : 8;		/* low bits of the gen the hold was computed under */
	/* closed demand intervals since the last use, saturating */
	u64 idle : 4;
	u64 used : 1;			/* a use in the interval under way besides demand */
	u64 draining : 1;		/* the global still held tokens after our last batch */
	u64 hold_batch : 1;		/* the hold was a wait for a batch (queued bios) */
#if BI_LOCAL_ACCT
	/* accounting, owner CPU only: user-space builds (bi_shim.h) */
	u64 got;			/* from the global bucket */
	u64 returned;			/* to the global bucket */
	u64 charged;
	u64 refunded;
	u64 nr_bios;			/* admitted */
	u64 nr_slow;			/* global contacts */
	u64 nr_held;			/* throttled by the negative cache */
#endif
};

/*
 * Add @n to the local bucket's accounting field @f; nothing where the
 * struct has none (the kernel: 56 bytes less per key per CPU).
 */
#if BI_LOCAL_ACCT
#define bi_local_acct(l, f, n)	((l)->f += (u64)(n))
#else
#define bi_local_acct(l, f, n)	((void)(l))
#endif

void bi_global_init(struct bi_global *g, u64 rate, s64 max_tokens, s64 tokens,
		    u64 now_ns);
void bi_global_restart(struct bi_global *g, u64 rate, s64 max_tokens, s64 tokens,
		       u64 now_ns);
void bi_global_set(struct bi_global *g, u64 rate, s64 max_tokens, u64 now_ns);
void bi_global_tune(struct bi_global *g, bool restart, u64 rate, s64 max_tokens,
		    s64 local_max, s64 min_batch, u64 hold_ns, u64 now_ns);
s64 bi_global_dispense(struct bi_global *g, s64 want, s64 least, s64 need,
		       u64 now_ns, u64 *retry_ns, s64 *left);
void bi_global_put(struct bi_global *g, s64 n, u64 now_ns);

void bi_local_init(struct bi_local *l, u64 now_ns);
u64 bi_demand_wavg(const u64 *demand, int x);
u32 bi_demand_encode(u64 units);
u64 bi_local_demand(const struct bi_local *l, int i);
void bi_local_set_demand(struct bi_local *l, int i, u64 units);
u64 bi_local_hold_until(const struct bi_local *l, const struct bi_global *g);
s64 bi_local_request_size(struct bi_local *l, const struct bi_global *g,
			  s64 cost);
bool bi_local_charge_slow(struct bi_local *l, struct bi_global *g, s64 cost,
			  bool queue, u64 now_ns, u64 *retry_ns);
void bi_local_return_excess(struct bi_local *l, struct bi_global *g, u64 now_ns);
bool bi_local_reclaim(struct bi_local *l, struct bi_global *g, u64 now_ns);

/*
 * The hit of bi_local_charge(), in two steps for callers that charge
 * several keys all or nothing: can this CPU's balance cover @cost without
 * the slow path (and within the current demand interval)?  Then take it.
 */
static inline bool bi_local_hit(const struct bi_local *l, s64 cost, u64 now_ns)
{
	return cost >= 0 && l->tokens >= cost && now_ns < l->interval_end_ns;
}

/*
 * The current interval's demand: what was charged since it began (a
 * charge is the use that keeps a balance from being reclaimed: != 0).
 */
static inline u32 bi_local_cur_units(const struct bi_local *l)
{
	return l->flow_base - (u32)l->tokens;
}

/*
 * The balance changes by @n for another reason than a charge (a dispense,
 * a refund, a hand-back): the demand stays.
 */
static inline void bi_local_move(struct bi_local *l, s64 n)
{
	l->tokens += n;
	l->flow_base += (u32)n;
}

/* Writes the balance alone: its demand is the balance's flow, no time. */
static inline void bi_local_take(struct bi_local *l, s64 cost)
{
	l->tokens -= cost;
	bi_local_acct(l, charged, cost);
	bi_local_acct(l, nr_bios, 1);
}

/*
 * bi_local_charge - charge @cost (the initial deduction) to this CPU's local
 * bucket; on a miss, fetch a batch from the global bucket (S4-05).  Returns
 * true if admitted; otherwise *@retry_ns is when to try again.  @queue: more
 * bios wait behind this one (the caller's FIFO), so a lean global bucket is
 * waited on for a whole batch (g->min_batch) that serves them all; a bio
 * alone waits only for its own shortfall (io.max's wait: its cost over the
 * rate).  The hit is inline (it is on every bio's way), the miss out of line.
 * Context: submission or dispatcher, on the local's CPU, IRQs off.
 */
static inline bool bi_local_charge(struct bi_local *l, struct bi_global *g,
				   s64 cost, bool queue, u64 now_ns, u64 *retry_ns)
{
	if (bi_likely(bi_local_hit(l, cost, now_ns))) {
		bi_local_take(l, cost);
		return true;
	}
	return bi_local_charge_slow(l, g, cost, queue, now_ns, retry_ns);
}

/*
 * Is a correction @diff != 0 of a charge @initial due, past the dead-band
 * @db (S0-25)?  Inline: the common dead-band of none costs one test.
 */
static inline bool bi_correction_due(const struct bi_deadband *db, s64 initial, s64 diff)
{
	return !((db->units | db->pct) && bi_deadband_skip(db, initial, diff));
}

/*
 * bi_local_apply - apply a completion correction @diff that is due (not
 * zero, past the dead-band): @diff > 0 charges more, @diff < 0 refunds.
 * A charge only lowers the balance, so only a refund can push it above
 * local_max and hand the excess back to the global bucket (under its lock,
 * out of line); a negative balance is paid from the next dispense.  Returns
 * the correction applied.
 * Context: as bi_local_correct.
 */
static inline s64 bi_local_apply(struct bi_local *l, struct bi_global *g,
				 s64 diff, u64 now_ns)
{
	if (diff > 0) {
		diff = bi_min_s64(diff, BI_TOKENS_LIMIT + l->tokens);
		bi_local_acct(l, charged, diff);
		l->tokens -= diff;		/* demand, as a charge */
		return diff;
	}
	diff = bi_max_s64(diff, -BI_TOKENS_LIMIT);
	bi_local_acct(l, refunded, -diff);
	bi_local_move(l, -diff);
	l->used = 1;			/* a refund is use, with no demand */
	if (bi_unlikely(l->tokens > g->local_max))
		bi_local_return_excess(l, g, now_ns);
	return diff;
}

/*
 * bi_local_correct - completion correction (S0-25) on the completing CPU's
 * local bucket, which need not be the one charged at submission: a local
 * balance is just this CPU's share of the key's tokens, so conservation
 * holds either way.  A correction inside the dead-band @db (may be NULL)
 * is skipped; else bi_local_apply().  Returns the correction (> 0 charged,
 * < 0 refunded).  Inline: it runs at every completion.
 * Context: completion (hard IRQ possible), on the local's CPU, IRQs off.
 */
static inline s64 bi_local_correct(struct bi_local *l, struct bi_global *g,
				   s64 initial, s64 actual,
				   const struct bi_deadband *db, u64 now_ns)
{
	s64 diff = actual - initial;

	if (!diff || (db && !bi_correction_due(db, initial, diff)))
		return 0;
	return bi_local_apply(l, g, diff, now_ns);
}

#endif /* BLKISO_DISPENSE_H */
