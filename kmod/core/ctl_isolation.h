/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctl_isolation.h - the isolation controller of seed 003 (S3-04..S3-18).
 *
 * Per tenant and device, a gateway limits the tenant's in-flight bios to n
 * slots (seed 003's "threads", A-30) and may hold a bio for a delay between
 * "slot available" and dispatch (S3-11).  Once per evaluation (every
 * eval_ticks ticks) the controller compares the smoothed usage with the
 * allocation (S3-13):
 *
 *   SLOTS  above: n -> ceil(n_target), n_target = n - (r - alloc) / r_pt
 *          (S3-06, A-29); if even ceil(n_target) stays above the band,
 *          keep it and switch to DELAY instead of under-using with one
 *          slot less (S3-05 remedy 1).  Without prediction, n -= 1 (S3-04).
 *          below and slot-limited: n += 1; if n + 1 would overshoot, DELAY
 *          with n + 1 (remedy 2).  Usage flipping across the band for
 *          hover_ms: DELAY with the higher n (S3-08).
 *   DELAY  S3-09: above -> more delay, at the maximum -> delay 0 and n - 1;
 *          below -> less delay; at 0 and still below -> n + 1.  Paced,
 *          every tick: the device's latency past half the hold, or the
 *          tick's rate below the band -> the slots for the allocation at
 *          that latency or rate, plus one (deviation).
 *   ABUSE  usage >= abuse_factor x alloc: n = 1 until it falls below (S3-15).
 *
 * Delays (S3-07): spread mode holds every slot for delta = n / alloc - 1 /
 * r_pt; single mode holds one slot for delta = 1 / (alloc - (n - 1) r_pt)
 * - 1 / r_pt.  Spread delays are paced (deviation): the slot cycle delta
 * stands for, 1 / r_pt + delta, gives each bio a turn (n per cycle) counted
 * from the last bio's, rather than a hold added after each completion, so
 * a device that queues longer than its service time shortens the holds at
 * once, and one that speeds up again cannot push the tenant above the
 * cycle's rate.
 * Slots are handed out highest index first, so the delayed low slots are
 * only used by a tenant that fills all of its n slots.
 * Lowering n never aborts in-flight bios: new ones wait (S3-10).
 * Work-conserving mode applies limits only while the device is overloaded
 * (S3-18).  Predictive mode starts the delay before a predicted crossing
 * (S3-14).  Small reads get a capped delay; the rest is charged to the next
 * large bio (S3-16).
 *
 * Per-slot usage r_pt is measured against the service time (the lowest
 * device latency, slowly drifting up), not the mean latency, so that a
 * congested device does not inflate the slot target.
 *
 * Above the band means above it by the usage and also by a second usage
 * smoothed over a window of at least window_bios (64) bios at the
 * allocation's rate (up to 1 s), against a band of at least
 * BI_ISO_BAND_BIOS bios' step of it: at a few bios a tick the +-3 % band
 * was finer than one bio, and a QD1 tenant well below its allocation
 * catching up after a wait crossed it and was delayed.
 *
 * Scales: usage and allocation in the tenant's metric per second (bios or
 * work units, A-31); times in ns; alpha x1024; fractions in permille.
 */
#ifndef BLKISO_CTL_ISOLATION_H
#define BLKISO_CTL_ISOLATION_H

#include "bi_shim.h"

#define BI_ISO_MAX_SLOTS	64	/* slot bitmap is one u64 */

/* Catalogue A-32 and section 10 defaults. */
#define BI_ISO_N_MAX_DEF		32
#define BI_ISO_ALPHA_FP_DEF		307	/* 0.3 per tick */
#define BI_ISO_TOL_PERMILLE_DEF		30	/* band: alloc +-3 % */
#define BI_ISO_EVAL_TICKS_DEF		2
#define BI_ISO_DELAY_STEP_NS_DEF	(100 * BI_NSEC_PER_USEC)
#define BI_ISO_DELAY_CAP_NS		(50 * BI_NSEC_PER_MSEC)
#define BI_ISO_SLOT_DELAY_CAP_NS	(1000 * BI_NSEC_PER_MSEC)	/* one-slot cycle */
#define BI_ISO_HOVER_NS_DEF		(1000 * BI_NSEC_PER_MSEC)
#define BI_ISO_ABUSE_PERMILLE_DEF	2000	/* 2 x allocation */
#define BI_ISO_SMALL_DELAY_NS_DEF	(200 * BI_NSEC_PER_USEC)
#define BI_ISO_SMALL_UNITS_DEF		8	/* <= 16 KiB is a small read */
#define BI_ISO_BIG_UNITS_DEF		512	/* >= 1 MiB is a big bio */
#define BI_ISO_HORIZON_TICKS_DEF	10	/* S3-14: predict 1 s ahead */
/*
 * S3-13's history, never shorter than the signal's granularity: a tenant
 * is above its allocation only if also above it over a window (1 / alpha
 * ticks) that holds at least this many bios at the allocation's rate, so
 * that a catch-up of a few bios after a wait moves it by a few percent at
 * most, at any rate per tick ...
 */
#define BI_ISO_WINDOW_BIOS_DEF		64
#define BI_ISO_WINDOW_MAX_NS		(1000 * BI_NSEC_PER_MSEC)	/* ... up to 1 s */
/* and the band is never finer than this many bios' step of that usage */
#define BI_ISO_BAND_BIOS		2

enum bi_iso_mode {
	BI_ISO_SLOTS,		/* slot limit only */
	BI_ISO_DELAY,		/* slot limit plus delay */
	BI_ISO_ABUSE,		/* one slot */
	BI_ISO_RELAXED,		/* work-conserving and device not overloaded */
};

enum bi_iso_delay_mode {
	BI_ISO_SPREAD,		/* delta on every slot */
	BI_ISO_SINGLE,		/* a larger delta on one slot */
};

/* Flags of one bio for bi_iso_slot_get(). */
#define BI_ISO_IO_SMALL_READ	(1U << 0)
#define BI_ISO_IO_BIG		(1U << 1)

struct bi_iso_params {
	u64 alloc;			/* allocation, metric/s; 0 = no isolation */
	u64 delay_step_ns;		/* S3-12 incremental delay */
	u64 delay_max_ns;		/* 0 = min(2 x device latency, 50 ms) */
	u64 hover_ns;			/* S3-08 time before delays */
	u64 small_delay_ns;		/* S3-16 cap for small reads */
	u64 tick_ns;			/* assumed for the first tick */
	u32 alpha_fp;			/* S3-13 smoothing */
	u32 tol_permille;		/* band around the allocation */
	u32 n_max;			/* slots when unconstrained, <= 64 */
	u32 eval_ticks;			/* ticks between evaluations */
	u32 abuse_permille;		/* S3-15; 0 = off */
	u32 horizon_ticks;		/* S3-14 */
	u32 window_bios;		/* usage window >= this many bios; 0 = alpha only */
	u8 delay_mode;			/* enum bi_iso_delay_mode */
	bool strict;			/* S3-18: false = work-conserving */
	bool predict_underuse;		/* S3-05 remedy 1 / proportional steps */
	bool reduce_below_alloc;	/* S3-12: never add slots back */
	bool predictive;		/* S3-14 */
	bool metric_units;		/* alloc in work units/s: a bio is many */
};

/* One tick of one tenant's completions, folded by the caller. */
struct bi_iso_stats {
	u64 done;		/* completed, in the allocation metric */
	u64 ops;		/* bios completed */
	u64 units;		/* their work units (S3-16 mean size) */
	u64 dev_ns;		/* sum of their device latencies */
	u64 dev_min_ns;		/* lowest of them; 0 = not measured (use the mean) */
};

struct bi_iso {
	u64 usage;		/* smoothed usage, metric/s */
	u64 usage_win;		/* usage over a window of window_bios bios (S3-13) */
	u64 win_band;		/* its band's half-width around alloc, metric/s */
	u32 win_alpha_fp;	/* its smoothing this tick */
	s64 slope;		/* smoothed usage change per tick */
	u64 r_pt;		/* usage per busy slot, metric/s */
	u64 lat_ns;		/* smoothed device latency */
	u64 floor_ns;		/* service-time estimate: drifting minimum latency */
	u64 delay_ns;		/* output: delta */
	u64 debt_ns;		/* S3-16 delay owed by the next large bio */
	u64 pace_ns;		/* paced spread delays: the last bio's turn */
	u64 lat_last_ns;	/* mean device latency of the last tick */
	u64 units_fp;		/* smoothed units per bio, x1024 */
	u64 slot_busy;		/* bitmap of in-flight slots */
	u64 last_ns;
	u64 out_since_ns;	/* start of the current hovering episode */
	u64 last_flip_ns;
	u64 prev_usage;		/* before the last slot change (S3-06 approach 2) */
	u64 slot_changes;	/* statistic */
	u32 n;			/* output: slot limit */
	u32 prev_n;
	u32 inflight;
	u32 big_inflight;
	u32 refused;		/* slot requests refused since the last tick */
	u32 pace_units;		/* that bio's units (its share of the cycle) */
	u32 ticks;		/* since the last evaluation */
	u8 mode;		/* output: enum bi_iso_mode */
	s8 last_sign;		/* side of the band last seen */
	u8 flips;		/* band crossings in this episode */
	bool slot_limited;	/* refused during the last evaluation period */
	u8 ramp;		/* ticks after a change of n or delta: a ramp */
};

void bi_iso_params_init(struct bi_iso_params *p, u64 alloc);
void bi_iso_init(struct bi_iso *t, const struct bi_iso_params *p);
void bi_iso_tick(struct bi_iso *t, const struct bi_iso_params *p,
		 const struct bi_iso_stats *s, bool dev_overloaded, u64 now_ns);
int bi_iso_slot_get(struct bi_iso *t, const struct bi_iso_params *p,
		    u32 units, u32 io_flags, u64 now_ns, u64 *delay_ns);
void bi_iso_slot_put(struct bi_iso *t, int slot, u32 io_flags);
u32 bi_iso_limit(const struct bi_iso *t, const struct bi_iso_params *p);

/* S3-06 / A-29 pieces, exported for tests and the tool. */
u64 bi_iso_rpt_avg(u64 usage, u32 n);
u64 bi_iso_rpt_marginal(u64 r_before, u64 r_after, u32 n_before, u32 n_after);
u64 bi_iso_n_target_fp(u32 n, u64 usage, u64 target, u64 r_pt);
u64 bi_iso_compute_delay_ns(u8 delay_mode, u32 n, u64 alloc, u64 r_pt);

#endif /* BLKISO_CTL_ISOLATION_H */
