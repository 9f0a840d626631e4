/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctl_depth.h - the depth limit on tenants above their commitment while a
 * protected tenant misses its latency target (issue 20).
 *
 * Per device.  A protected tenant is one with a latency target; it is
 * judged on its own window and threshold (S2-16, struct bi_ovl_tenant), so
 * a flood's completions, which have no target and never miss, do not
 * dilute its misses.  While it misses, every tenant above its commitment
 * (S2-09: a best-effort flood with no line of its own included) may have
 * at most `limit` bios in flight: the device queue the protected tenant
 * waits behind stays short, and the flood keeps the rest of the device.
 *
 * Once per tick, with "a protected tenant missed in the newest tick"
 * (above its threshold) as the signal:
 *
 *   not limiting, missed    limit = half the deepest above-commit tenant's
 *                           in flight, or less in proportion when the
 *                           protected tenant's mean device latency is more
 *                           than twice its target (the queue ahead of it
 *                           must shrink that much): the episode starts
 *   limiting, missed        the limit missed: if it was reached by a raise
 *                           (the ceiling is known), limit - 1, and the
 *                           missing value becomes the ceiling; otherwise
 *                           halve it (or cut it in proportion, as above),
 *                           but not in the tick after a step
 *                           (its misses are the bios sent before it) nor
 *                           while the tenants' in flight is above it (bios
 *                           sent before the limit still drain): anti-windup
 *   limiting, nothing       hold: a protected bio stuck in a deep queue
 *   completed               completes late, and its tick is not clean
 *   limiting, clean         + 1 every release_ticks, once the protected
 *                           tenants completed enough bios since the last
 *                           miss or raise to show a miss at the strictest
 *                           one's threshold three times over (1 % missed:
 *                           300 bios; a victim of 1.5 bios a tick proves
 *                           nothing by two clean ticks), and only if those
 *                           bios left room for one more flood bio ahead
 *                           of them (headroom, below), up to one below the
 *                           ceiling; the ceiling itself is tried again
 *                           after probe_ns clean, twice as long after each
 *                           probe that missed (up to 8x: slow release, the
 *                           limit hovers just under the depth that misses,
 *                           seeds 002 and 003), and forgotten if it holds
 *   any                     the limit stays under the lower device's
 *                           slots (its queue depth, when known): at that
 *                           depth one flood holds every slot and a
 *                           protected bio waits a whole flood request,
 *                           which no latency before shows (at a limit of
 *                           one on a 2-slot disk a victim's reads take one
 *                           request flat, so headroom sees no queue)
 *   no protected tenant     limit off; a protected tenant counts while
 *                           it has I/O and for twice the quiet stretch
 *                           it had between its bios (at least
 *                           BI_DEPTH_QUIET_MIN ticks, at most
 *                           BI_DEPTH_QUIET_MAX; bi_depth_recent_tick()):
 *                           a QD1 victim at 80 IOPS on a 4 ms disk has
 *                           no I/O in a tick of 10 ms now and then, and
 *                           a limit let go for that tick lets a flood
 *                           queue what the victim then waits behind for
 *                           seconds
 *   limit not binding       (the above-commit tenants keep fewer than
 *                           half of it in flight) for probe_ns: limit off
 *
 * Headroom (seed 002's ideal-rate tracking: raise only while the minimum
 * slack is larger than a step costs).  Over the evidence, the protected
 * tenants' highest device latency W and lowest B, in permille of their
 * targets: the queue the limit lets ahead of them costs about (W - B) /
 * limit per bio of depth, so the raise is predicted to bring the highest
 * to W + (W - B) / limit; if that passes the target (1000), the raise
 * would cost misses (on a 2-slot disk, the depth that fills both slots
 * makes a victim's read wait a whole flood request), so the limit stays,
 * the evidence starts again, and the next window may find room (the
 * flood's bios got smaller, the victim slower).  The highest of the
 * evidence's 3 / miss_pct bios estimates the tenant's latency at that
 * percentile, which is what its target bounds (BI_DEPTH_EVIDENCE_MULT).
 *
 * Pace (seed 003's delays when the thread count hovers, S3-07/S3-08):
 * one bio of depth can be too coarse a step.  On a device whose
 * bandwidth, not its slots, is what the protected tenant waits behind
 * (8 slots x 200 us at 1000 MiB/s: one 128 KiB request in flight is
 * 550 MB/s, two are more than the device moves, and its queue stalls
 * everyone), the limit hovers at a depth that leaves the device half idle.
 * So where a raise missed, the limit goes back to that depth with a
 * pace: each bound tenant sends at most pace_ups work units a
 * second (a delay before its bio's slot is granted, bi_depth_pace_delay()),
 * starting at what the busiest moved at the lower depth.  Under a pace a miss is
 * judged as the target is, over many bios, not by a tick with one late bio
 * of twenty (at a p99 target, one tick in five): in each run of
 * evidence-many bios (300 at 1 %) at most half the late ones the
 * strictest miss_pct allows (1 of 300).  Half: the target bounds every
 * second of the tenant's, and its own time above the block layer adds to
 * what blkiso sees (a pace at the whole share let 1 s windows of a 700
 * IOPS victim pass 1.5x its solo p99 for 8.75 s in make bench's ratestep):
 *
 *   paced, over allowance   (or a tick's mean latency over twice the
 *                           target: a queue) pace - 1/8, not under where
 *                           it started, and 2x the evidence before the
 *                           next raise (up to 8x: slow release); at the
 *                           start pace already: no pace, the lower depth,
 *                           its ceiling the higher (tried again after
 *                           probe_ns, as above)
 *   paced, evidence in      + 1/8 until the first miss, + 1/16 after, and
 *   within allowance        only while the bound tenants moved at least
 *                           3/4 of the pace; below that the pace does not
 *                           bind (the depth holds them, or they ask less):
 *                           no pace, the depth without one stays, as a
 *                           raise: a miss before the next one comes back
 *                           to a pace, at what they moved under this one
 *                           (the pace was the smoothing that held: on a
 *                           bandwidth budget back-to-back bios spend a
 *                           window the paced ones leave room in)
 *
 * A raise the headroom rule holds back is not paced: it stays.  Pacing it
 * too (tried) ramped an eighth per 300 of the victim's bios from the depth
 * it was held at, slower than the depth's own raises: feedback_test's
 * 8-slot x 1 ms flood beside a 400 IOPS victim moved 28-29 % of its alone
 * rate in two runs of seven (67-71 % without).
 *
 * The limit counts bios, so that a bio must be one request at the lower
 * queue: a bound tenant's larger read or write is cut to its first request
 * (bi_depth_piece()), or one 1 MiB bio is eight 128 KiB requests or more,
 * the whole of an 8-slot device, at a limit of one.
 *
 * Scales: bios in flight; times in ns.
 */
#ifndef BLKISO_CTL_DEPTH_H
#define BLKISO_CTL_DEPTH_H

#include "bi_shim.h"

#define BI_DEPTH_OFF			0	/* limit value: no limit */
#define BI_DEPTH_RELEASE_TICKS_DEF	2
#define BI_DEPTH_PROBE_NS_DEF		BI_NSEC_PER_SEC
#define BI_DEPTH_PROBE_SHIFT_MAX	3	/* a failing probe waits up to 8x longer */
/*
 * The evidence a raise needs: this many times the bios that show one miss
 * at the strictest threshold (1 / miss_pct).  Their highest latency is the
 * headroom's estimate of the tenant's latency at its percentile; the
 * highest of n bios is under that percentile with probability
 * (1 - miss_pct)^n: 37 % for 1 / miss_pct bios, 5 % for three times as
 * many.  With one, a third of the windows would see room that is not there.
 */
#define BI_DEPTH_EVIDENCE_MULT		3

/* A tick's mean protected latency past this (permille of the target) is a queue */
#define BI_DEPTH_QUEUE_PERMILLE		2000
/* The pace (above): steps in fractions of itself, its binding test in percent */
#define BI_DEPTH_PACE_RAISE_SHIFT	4	/* + 1/16 per clean evidence, after a miss */
#define BI_DEPTH_PACE_RAMP_SHIFT	3	/* + 1/8 before one */
#define BI_DEPTH_PACE_CUT_SHIFT		3	/* - 1/8 per miss */
#define BI_DEPTH_PACE_BINDS_PCT		75	/* moved under 3/4 of it: it does not bind */
#define BI_DEPTH_PACE_ALLOW_DIV		2	/* half the late bios miss_pct allows a run */
#define BI_DEPTH_PACE_SHIFT_MAX		3	/* misses double the evidence, up to 8x */
/*
 * No pace under 1,000 units a second (2 MB/s: a 128 KiB bio every 64 ms):
 * a flood that slow asks little, and a spacing that long would hold its
 * bios for no one's gain
 */
#define BI_DEPTH_PACE_MIN_UPS		1000
/* The shortest span a throughput is measured over: two ticks of 10 ms */
#define BI_DEPTH_TPUT_MIN_NS		(20 * BI_NSEC_PER_MSEC)

/* A protected tenant's quiet ticks that still count as active (bi_depth_recent_tick()) */
#define BI_DEPTH_QUIET_MIN		2
#define BI_DEPTH_QUIET_MAX		64

/* Is a protected tenant active, between its bios too?  Per tenant. */
struct bi_depth_recent {
	u32 quiet;		/* ticks since it last had I/O */
	u32 gap;		/* its recent quiet stretches between bios, decaying max */
};

struct bi_depth_params {
	u32 release_ticks;	/* clean ticks (with protected completions) per + 1 */
	u64 probe_ns;		/* clean time before the ceiling is tried again */
};

/* One tick's inputs, folded by the caller. */
struct bi_depth_stats {
	bool protected_active;	/* some tenant with a latency target had I/O */
	bool missed;		/* one of them missed above its threshold in the tick */
	u32 completed;		/* their bios completed in the tick */
	u32 evidence;		/* completions a raise needs (BI_DEPTH_EVIDENCE_MULT) */
	u32 inflight_max;	/* deepest above-commit tenant's bios in flight now */
	u32 over_permille;	/* worst missing tenant's mean device latency / target */
	u32 lat_max_permille;	/* their highest device latency in the tick / target, 0 = none */
	u32 lat_min_permille;	/* their lowest / target, 0 = none */
	u32 slots;		/* the lower device's queue depth, 0 = unknown */
	u32 missed_ops;		/* the protected tenants' bios over their targets in the tick */
	u32 allow_permille;	/* the share of them the strictest one's miss_pct allows, 0 = none */
	u64 bound_units_max;	/* the most work units one above-commit tenant completed in the tick */
};

struct bi_depth {
	u32 limit;		/* output: bios in flight per above-commit tenant, 0 = none */
	u32 ceiling;		/* the lowest limit that missed since the last raise, 0 = none */
	u32 clean_ticks;	/* ticks since the last miss */
	u32 clean_ops;		/* protected completions since the last miss or raise */
	u64 ceiling_ns;		/* when the ceiling was set */
	u64 loose_ns;		/* when the limit stopped binding */
	u32 probe_shift;	/* probes of this ceiling that failed (backoff) */
	u32 probed;		/* the ceiling being tried again, 0 = none */
	u32 settle;		/* missed ticks to ignore after a step down */
	u32 worst_permille;	/* highest protected latency / target since the evidence began */
	u32 best_permille;	/* lowest, 0 = none */
	u64 held;		/* raises a lack of headroom held back (stats) */
	bool raised;		/* the last change was a raise */
	bool loose;		/* the above-commit tenants kept below the limit */
	u64 episodes;		/* limit switched on (stats) */
	u64 pace_ups;		/* output: work units a second per above-commit tenant, 0 = none */
	u64 pace_floor_ups;	/* where the pace started: the throughput one bio lower */
	u32 pace_shift;		/* its misses: evidence x 2^shift per raise */
	u32 pace_missed;	/* protected bios over target in the current run (pace_chunk) */
	u32 pace_chunk;		/* protected bios completed in it: a run is evidence-many */
	u64 below_ups;		/* busiest bound tenant's units/s before the raise; read only while raised */
	u64 tput_units;		/* per-tenant units completed since the limit or pace moved */
	u64 tput_ns;		/* over this long */
	u64 tick_ns;		/* the last tick's time, 0 = none yet */
	u64 paced;		/* pace episodes (stats) */
};

void bi_depth_params_init(struct bi_depth_params *p);
bool bi_depth_recent_tick(struct bi_depth_recent *r, bool io);
void bi_depth_init(struct bi_depth *d);
u32 bi_depth_tick(struct bi_depth *d, const struct bi_depth_params *p,
		  const struct bi_depth_stats *s, u64 now_ns);

/* The lower queue's request limits, in 512-byte sectors. */
struct bi_depth_lower {
	u32 max_sectors;	/* the largest request */
	u32 chunk_sectors;	/* requests end at its multiples, 0 = none */
	u32 block_sectors;	/* the logical block */
};

enum bi_depth_cut {
	BI_DEPTH_WHOLE,		/* one request already (or it cannot be cut) */
	BI_DEPTH_CUT,		/* send its first *piece sectors, the rest again */
};

enum bi_depth_cut bi_depth_piece(u64 sector, u32 sectors, const struct bi_depth_lower *q,
				 u32 *piece);

/*
 * May a tenant above its commitment with @inflight bios in flight send one
 * more?  Any context; @limit read once by the caller.
 */
static inline bool bi_depth_allows(u32 limit, u32 inflight)
{
	return limit == BI_DEPTH_OFF || inflight < limit;
}

/*
 * The pace's part of a bound tenant's next bio of @units: how long its
 * slot is held before it goes (0: now), and the tenant's next free time
 * *@next_ns moved past it.  No credit is kept for idle time: a pace is a
 * spacing, not a bucket.  Caller holds what serialises *@next_ns.
 */
static inline u64 bi_depth_pace_delay(u64 *next_ns, u64 units, u64 pace_ups, u64 now)
{
	u64 start = bi_max_u64(now, *next_ns);

	*next_ns = start + bi_mul_div_u64(units ? units : 1, BI_NSEC_PER_SEC, pace_ups);
	return start - now;
}

/*
 * Is a bio of @sectors of an above-commit tenant cut while the limit is
 * off?  Only where, whole, it would be more requests than the lower
 * device has slots (@max_sectors each, @slots of them, 0 = unknown: no):
 * then its requests queue below blkiso, and they still would once the
 * limit came on (2 slots x 4 ms: a 1 MiB read is nine requests, 18 ms).
 * Where it fits the slots it is dispatched at once, and cutting would cost
 * a .map per request for nothing (32 slots x 50 us: the victim's CPU).
 */
static inline bool bi_depth_cut_unbound(u32 sectors, u32 max_sectors, u32 slots)
{
	return slots && max_sectors && sectors > (u64)slots * max_sectors;
}

#endif /* BLKISO_CTL_DEPTH_H */
