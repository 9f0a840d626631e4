/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkiso.h - what the files of kmod/ share: devices, tenants, per-bio state.
 *
 * A struct blkiso_dev is one dm device using the blkiso target.  It lives in
 * a registry keyed by the dm device's dev_t, not in a table instance, so
 * `dmsetup reload` + `resume` of a table with a blkiso segment, and renames,
 * keep every tenant, quota and rule: each table instance (struct
 * blkiso_target) holds a reference.  A table without one drops them.  A struct blkiso_tenant is one cgroup's metering on one device
 * (kmod/core/meter.c does the arithmetic); the "kernel" tenant takes the
 * bios kernel threads submit (writeback, deferred work, stacked targets).
 *
 * Lifetimes.  A device lives while a table uses it (dev->users, under the
 * registry mutex); the ioctls reach it under that mutex, sysfs through its
 * kobject (kobject_del waits for running handlers), dm hooks through their
 * table.  A tenant is in the hash and the list from its creation until its
 * cgroup is removed; then the collector (blkiso_dev.c) unhashes it and
 * removes its sysfs directory, and frees it once all of these are gone:
 *  - bios: every bio that found it counts itself arrived inside the RCU
 *    read-side section of its lookup (a counted-only tenant's bio that
 *    passes at once: arrived and admitted in one count, BLKISO_LO_PASSED,
 *    still in that section), and completed (or rejected) as its
 *    last access to it; a bio charging it as an ancestor level (blkiso_level(),
 *    io.max nesting: a child's parked bio charges the parent) adds one to
 *    its per-CPU ->held in that section and takes it back as its last
 *    access.  No shared atomic on the I/O path: after a grace period that
 *    follows the unhash no bio can find it, so the per-CPU sums only fall,
 *    and the collector reads them with IRQs on, one tenant at a time;
 *  - RCU readers (the hash, the list, the parent links: the links to it
 *    are cleared before the free) and the tick, the dispatcher and the
 *    stats walk (under dev->lock or RCU): the free comes a grace period
 *    after it left the list;
 *  - sleeping users (configuration, ioctls, the sysfs work): they find and
 *    use a tenant within one dev->conf_mutex section (the collector
 *    unhashes and unlists under it), or hold a kobject reference; the
 *    collector's free is a kobject_put, the memory goes with the last one.
 * The kernel tenant and the tenants of live cgroups leave only with their
 * device, after its work items are flushed and every bio has ended.
 *
 * Configuration.  Writers (tenant and device lines through sysfs, dm
 * messages and ioctls, rules, the tick's mode switch) are serialised by
 * dev->conf_mutex.  What the I/O path reads without that mutex is published
 * so that a reader sees the old or the new configuration, never a mix:
 *  - a tenant's meter settings (caps in force, initial deduction, dead
 *    band, cost model, class rules: struct bi_meter_cfg, kmod/core/meter.h,
 *    in the tenant's struct blkiso_quota) by an RCU pointer swap of an
 *    immutable copy.  The meter keeps two; the writer fills the
 *    unpublished one and publishes it with one release store
 *    (blkiso_meter_configure()).  Readers load the pointer once per
 *    charge, correction or classification inside an RCU read-side section
 *    (.map runs with preemption or IRQs off, the dispatcher and .end_io
 *    with IRQs off: each is one), so
 *    the copy they use stays whole; the writer reuses a copy only a grace
 *    period after it was replaced (cond_synchronize_rcu_expedited(): only
 *    a tenant reconfigured twice within one grace period waits);
 *  - each key's and class's bucket (rate, capacity, local share, batch)
 *    retuned whole under its own lock, a newly capped one before the copy
 *    that names it is published;
 *  - the device line (dev->conf) and a tenant's line (its quota's conf) stored
 *    under dev->lock, where the dispatcher and the gates read them; a
 *    lockless reader reads one word of them (READ_ONCE).
 * RCU rather than a seqcount: a seqcount reader retries, and an admission
 * that has charged per-CPU buckets cannot be retried; an RCU reader costs
 * the I/O path one pointer load and no shared write, and .map is a
 * read-side section already.  Two copies in place rather than an allocation
 * per change keep the freestanding core free of allocation, at the price of
 * a rare wait on the configuration path.
 *
 * Memory (doc/metering.md, "Memory").  Every bio carries struct blkiso_bio
 * (96 bytes at most): what every bio needs from .map to .end_io, and a
 * one-level charge without a class ticket; a nested chain's further levels
 * and a charge that does not fit go to a struct blkiso_bio_ext taken from a
 * mempool only by the bios that need one.  The fields .map reads on every
 * bio share no cache line with those parking and dispenses write (struct
 * blkiso_dev, struct blkiso_tenant, bi_meter.key[]).  A tenant (from a
 * kmem_cache of its own) gets its per-CPU area (struct
 * blkiso_tenant_pcpu: counters, local buckets) and its
 * own quota (struct blkiso_quota: its line and the meter that line makes,
 * caps, classes, the two published configurations) only when a line
 * first configures it; until then it is counted in its shared atomic set
 * (struct blkiso_tenant_ctr, at the tenant's end, 32-bit halves carried into
 * a 64-bit set allocated at the first carry) and
 * reads the device's quota_none, which caps nothing.  Every count goes to
 * one of the two and every reader adds both, so the change, with bios in
 * flight or parked, loses or doubles no count; both are published (release
 * stores) before the caps that use them, loaded once per use, and kept
 * until the tenant is freed (blkiso_tenant_quota_get()), so a reader
 * never sees them vanish.  Its feedback state (struct blkiso_fb: the
 * controllers, held lists, ring) follows the same rule: allocated when a
 * line configures it, or at its next bio once its device's feedback
 * counts every tenant (dev->fb_all: overload gate, depth limit, an
 * allocation), published initialised, kept until it is freed; NULL (most
 * counted-only tenants) means nothing of the tick's, and every reader
 * (.map's gates, .end_io's tick inputs, the dispatcher, the rings) loads
 * it once and treats NULL as "no slot gate, nothing held, no record".
 *
 * Lock order: blkiso_devs_mutex -> dev->conf_mutex -> the rule set's
 * path_lock (.map creating tenants) -> dev->lock -> (a tenant's fb->lock |
 * a meter's key and class locks).  The spinlocks are taken with IRQs off
 * (completions take dev->lock, fb->lock and the meter locks).  Sysfs
 * handlers take dev->conf_mutex, so kobject_del (which waits for them) is
 * never called under it.
 */
#ifndef BLKISO_H
#define BLKISO_H

#include <linux/bio.h>
#include <linux/cgroup.h>
#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "core/conf.h"
#include "core/feedback.h"
#include "core/meter.h"
#include "core/tokadapt.h"
#include <linux/blkiso.h>

#define BLKISO_VERSION		"0.2.0"

/*
 * pb->slot of a bio that passed the slot gate for the depth limit alone
 * (issue 20: no allocation, so no isolation slot): above every isolation
 * slot index, it counts only in the tenant's depth_inflight.
 */
#define BLKISO_SLOT_DEPTH	BI_ISO_MAX_SLOTS

/*
 * Issue 20: the rests of REQ_NOWAIT bios the depth limit cut
 * (blkiso_depth_cut()).  dm core sends the rest of a bio cut by
 * dm_accept_partial_bio() through .map again from the submitting task's
 * own bio list (the original bio, trimmed, still REQ_NOWAIT), so a rest
 * is known by its task and its first sector, whenever it comes.  An
 * entry is claimed with cmpxchg on @task and then read and freed only by
 * that task: no lock.  BLKISO_NW_RESTS bounds the tasks cutting such a
 * bio at once; with none free the bio is refused whole as before.
 */
#define BLKISO_NW_RESTS		32
/* a task's own entry this old was never consumed (its rest never came) */
#define BLKISO_NW_REST_STALE	(60 * HZ)

struct blkiso_nw_rest {
	struct task_struct *task;	/* the submitter; NULL: free */
	sector_t sector;		/* where the rest begins, lower device */
	unsigned long stamp;		/* jiffies at the cut */
};


/* The end of a device's queue of tenants for the sysfs work (->sysfs_next). */
#define BLKISO_SYSFS_LAST	((struct blkiso_tenant *)1)

/* The kernel tenant's id: cgroup ids start at 1 (the root). */
#define BLKISO_KERNEL_CGID	0ULL

/* Per-tenant counters, per CPU, folded when read. */
enum blkiso_stat {
	BLKISO_ARRIVED,		/* bios seen by .map */
	BLKISO_ADMITTED,	/* passed at once */
	BLKISO_PARKED,		/* held on the tenant's queue */
	BLKISO_DISPATCHED,	/* released from the queue */
	BLKISO_DEBT,		/* released unpaid (suspend drain) */
	BLKISO_REJECTED_NOWAIT,	/* REQ_NOWAIT that would wait: BLK_STS_AGAIN */
	BLKISO_REJECTED,	/* reject mode: BLK_STS_IOERR */
	BLKISO_COMPLETED,	/* rios + wios (folded, not counted per CPU) */
	BLKISO_ERRORS,		/* completed with an error status */
	BLKISO_RIOS,
	BLKISO_WIOS,
	BLKISO_RBYTES,
	BLKISO_WBYTES,
	BLKISO_RUNITS,
	BLKISO_WUNITS,
	BLKISO_NR_STATS,
};

/*
 * What .end_io's out-of-line part keeps for the feedback tick when a
 * tenant's controllers need it (blkiso_feedback_extremes()): per CPU in
 * struct blkiso_fb_cpu, or under fb->lock in a counted-only tenant's
 * struct blkiso_fb_shared.
 */
struct blkiso_fb_ext {
	u64 lat_min_ns;		/* device latency extremes of tick lat_seq */
	u64 lat_max_ns;
	u64 units_sq;		/* mode=auto: sum of squared units per bio */
	u32 lat_seq;
};

/*
 * Per-CPU inputs of the feedback tick (kmod/blkiso_feedback.c); the bios
 * the buckets throttled are counted when parked, in the shared set.
 */
struct blkiso_fb_cpu {
	u64 dev_ns;		/* sum of device latencies, dispatch -> completion */
	u64 missed;		/* completions over the tenant's latency target */
	struct blkiso_fb_ext ext;
};

/*
 * The counters a configured tenant keeps per CPU: those every bio's fast
 * path adds to (arrived and admitted in .map, rios..wunits in .end_io).
 * The others count slow paths that take a lock anyway (parked, dispatched,
 * debt, rejected, errors) and are kept in the shared set only, for every
 * tenant ("completed" is the sum of rios and wios): issue 18, per-CPU
 * bytes.  The index of @s in the per-CPU array, or -1; a constant where
 * @s is.
 */
#define BLKISO_NR_PCPU_STATS	(2 + BLKISO_WUNITS + 1 - BLKISO_RIOS)

static __always_inline int blkiso_pcpu_stat(enum blkiso_stat s)
{
	switch (s) {
	case BLKISO_ARRIVED:
		return 0;
	case BLKISO_ADMITTED:
		return 1;
	case BLKISO_RIOS ... BLKISO_WUNITS:
		return 2 + s - BLKISO_RIOS;
	default:
		return -1;
	}
}

/*
 * A configured tenant's per-CPU area, at most, on each CPU (BUILD_BUG_ON in
 * blkiso_tenant.c; no locks in it, so the debug kernel's is the same): the
 * four keys' local buckets (4 x 32, struct bi_local's narrowed fields), the
 * fast path's counters (64), the ancestor holds (8) and the feedback tick's
 * inputs (48): 248.  Was 1,000, then 440 (issue 18).
 */
#define BLKISO_TENANT_PCPU_MAX_BYTES	256

struct blkiso_tenant_pcpu {
	struct bi_meter_cpu meter;
	u64 stat[BLKISO_NR_PCPU_STATS];	/* index: blkiso_pcpu_stat() */
	/*
	 * Bios of descendant tenants charging this one as an ancestor level
	 * (blkiso_level()): taken in .map, dropped at their end.  Per CPU (one
	 * CPU's count may go negative); only their sum means anything.
	 */
	long held;
	struct blkiso_fb_cpu fb;
};

/*
 * The shared set keeps its counters in 32 bits (issue 18: a counted-only
 * tenant's bytes), all but rios and wios: .end_io's count of one of those
 * is a bio's last access to its tenant (the lifetime rule at the top),
 * after which nothing may touch it, a carry included; they stay 64-bit.
 * "completed" is never stored.  The index of @s among the 32-bit ones, or -1; a
 * constant where @s is.  rbytes and wbytes are kept there in 512-byte
 * sectors: every bio that reaches .map has a size in whole sectors (dm core
 * gives each clone to_bytes() of a sector count; an empty flush has none).
 */
#define BLKISO_NR_LO_STATS	13

/*
 * And one that is no enum blkiso_stat: bios of a tenant without a per-CPU
 * area or a feedback state that passed .map at once with no cap on their
 * way, each counted once for both its arrival and its admission (issue 18:
 * one atomic where there were two).  Every reader adds it into both
 * (blkiso_ctr_stats()); nothing else reads it.
 */
#define BLKISO_LO_PASSED	(BLKISO_NR_LO_STATS - 1)

static __always_inline int blkiso_lo_stat(enum blkiso_stat s)
{
	switch (s) {
	case BLKISO_ARRIVED ... BLKISO_REJECTED:
		return s;
	case BLKISO_ERRORS:
		return BLKISO_REJECTED + 1;
	case BLKISO_RBYTES ... BLKISO_WUNITS:
		return BLKISO_REJECTED + 2 + s - BLKISO_RBYTES;
	default:
		return -1;
	}
}

/* The shared set's 32-bit halves: those counters. */
#define BLKISO_NR_LO		BLKISO_NR_LO_STATS

/*
 * A tenant's counters while it has no per-CPU area (counted only: no line
 * configures it, so no local buckets and no ancestor holds): the same
 * counters as struct blkiso_tenant_pcpu's, shared by the CPUs, added to
 * with atomics.  They stay when the area comes (a bio counted here at
 * arrival may complete on the area): readers add both.  The slow paths'
 * counters are only here (not per CPU: issue 18's per-CPU bytes).  What
 * only the feedback tick reads is in the feedback state (struct
 * blkiso_fb_shared), which most counted-only tenants do not have, and so
 * is the latency histogram (struct blkiso_lat).
 *
 * Issue 18: the counters are 32-bit here (@lo); one that reaches
 * BLKISO_CARRY_AT moves that much into the tenant's 64-bit set (struct
 * blkiso_ctr_hi), allocated at the first such carry of any of them, so
 * every exported counter stays exact and monotone.  The set's 64-bit
 * members (rios and wios, the 64-bit set's pointer) are the tenant's own,
 * so that its flags follow the halves with no padding between: a
 * counted-only tenant in 256 bytes.  Only ever in a struct blkiso_tenant
 * (blkiso_ctr_carry() finds it from its set).
 */
struct blkiso_tenant_ctr {
	/* a count is lo[i] plus ctr_hi->n[i]; index: blkiso_lo_stat() */
	atomic_t lo[BLKISO_NR_LO];
};

/*
 * A 32-bit half carries at this count: its top bit, which the add's own
 * flags give (atomic_add_negative(): one branch more per add).  A carry
 * moves the half's multiples of it and keeps the rest, so the arrivals'
 * sampling (their low bits) does not move.  A half that reaches it is
 * still 2^31 below its wrap: if the set's GFP_ATOMIC allocation fails, the
 * half goes on counting and the next add retries.  Settable at build time
 * only, to a power of two, so that a test build carries every few bios; one
 * below BLKISO_LAT_SAMPLE_MAX moves the sampled arrivals at each carry of
 * the arrivals' count (a test build only: the histogram stays an estimate).
 */
#ifndef BLKISO_CARRY_AT
#define BLKISO_CARRY_AT		(1U << 31)
#endif

/*
 * The 64-bit halves.  A carry (the 32-bit half lowered, the 64-bit one
 * raised) is a write section of @seq under blkiso_ctr_carry_lock, so a
 * reader (with @seq) never sees a count in neither half nor in both.
 */
struct blkiso_ctr_hi {
	seqcount_spinlock_t seq;
	u64 n[BLKISO_NR_LO];		/* under blkiso_ctr_carry_lock */
};

void blkiso_ctr_carry(struct blkiso_tenant_ctr *c, atomic_t *lo);
struct blkiso_tenant;
void blkiso_ctr_carry_passed(struct blkiso_tenant *t);

/* Add 1 to @c's 32-bit half @i, carrying it as blkiso_ctr_add(): its new 32 bits. */
static __always_inline u32 blkiso_ctr_inc_return(struct blkiso_tenant_ctr *c,
						 unsigned int i)
{
	u32 n = atomic_inc_return(&c->lo[i]);

	/* at the default, a test of the top bit */
	if (unlikely(n >= BLKISO_CARRY_AT))
		blkiso_ctr_carry(c, &c->lo[i]);
	return n;
}

/*
 * Add @n to a 32-bit half @lo of a set: has it reached BLKISO_CARRY_AT?
 * Then the caller carries it (blkiso_ctr_carry()).  Any context.
 */
static __always_inline bool blkiso_ctr_add_test(atomic_t *lo, u32 n)
{
#if BLKISO_CARRY_AT == (1U << 31)
	return atomic_add_negative(n, lo);
#else
	return (u32)atomic_add_return(n, lo) >= BLKISO_CARRY_AT;
#endif
}

/* Add @n to @c's 32-bit half @i, carrying it at BLKISO_CARRY_AT. Any context. */
static __always_inline void blkiso_ctr_add(struct blkiso_tenant_ctr *c, unsigned int i,
					   u32 n)
{
	if (unlikely(blkiso_ctr_add_test(&c->lo[i], n)))
		blkiso_ctr_carry(c, &c->lo[i]);
}

/*
 * The feedback tick's inputs that a tenant without a per-CPU area adds to
 * in its feedback state (issue 18: allocated with it, so a counted-only
 * tenant without one carries none of them): counted from the state's
 * publication on, which is when the tick starts differencing them
 * (blkiso_fb_publish_locked()).  Bios the buckets throttled are counted
 * here for every tenant (a bio parks under the device lock anyway).  The
 * extremes are under fb->lock (only a device in overload=ideal asks a
 * counted-only tenant for them).
 */
struct blkiso_fb_shared {
	atomic64_t dev_ns;
	atomic64_t missed;
	atomic64_t throttled[BI_NR_DIRS];
	struct blkiso_fb_ext ext;	/* under fb->lock */
};

/* Ticks kept in the stats rings (sysfs "ring" files, BLKISO_IOC_RING). */
#define BLKISO_RING_DEV		64
#define BLKISO_RING_TENANT	16

/* Folded counters the tick differences, tick to tick. */
enum blkiso_fb_ctr {
	BLKISO_FB_OPS,
	BLKISO_FB_ROPS,
	BLKISO_FB_WOPS,
	BLKISO_FB_RUNITS,
	BLKISO_FB_WUNITS,
	BLKISO_FB_DEV_NS,
	BLKISO_FB_MISSED,
	BLKISO_FB_RTHROTTLED,
	BLKISO_FB_WTHROTTLED,
	BLKISO_FB_UNITS_SQ,
	BLKISO_FB_ARRIVED,	/* with the two below: is anything in flight? */
	BLKISO_FB_REFUSED,	/* rejected, with or without REQ_NOWAIT */
	BLKISO_FB_NR,
};

/*
 * A tenant's latency histogram (arrival to completion; bucket i below 2^i
 * us, the uapi's BLKISO_LAT_BUCKETS) and their sum, and the sampling that
 * times its bios where no controller needs each one (blkiso_lat_sample()):
 * in its feedback state (issue 18: a counted-only tenant in 256 bytes), so
 * a tenant has latency figures from the moment its bios are timed, which
 * is when it has that state: a line configures it, or its device's
 * feedback counts every tenant.  A counted-only tenant of any other device
 * has its counters and no latency figures (BLKISO_F_LATENCY unset), as
 * io.stat has none for a cgroup io.latency does not configure.
 */
struct blkiso_lat {
	atomic64_t bucket[BLKISO_LAT_BUCKETS];
	atomic64_t sum_ns;
	/*
	 * 1 bio in mask + 1 is timed; the low bits of jiffies at the
	 * sampled arrival that last steered it.  Plain racy accesses: a
	 * heuristic.
	 */
	u16 stamp;
	u8 mask;
};

/*
 * A tenant's feedback state (issue 18: apart from the tenant, allocated
 * only when it needs one: blkiso_fb_get()).  The slot gate (iso,
 * slot_wait's count) is under lock, taken by dispatch, .map and .end_io
 * (IRQs off); the held lists are under the device lock (lock nests inside
 * it); the rest belongs to the tick (device lock held).
 */
struct blkiso_fb {
	struct blkiso_tenant *tenant;	/* whose it is */
	spinlock_t lock;
	struct bi_iso iso;
	struct bi_iso_params iso_p;
	/*
	 * .map reads these four in one load (@map_flags, BLKISO_FB_MAP_*:
	 * issue 18); each is written on its own, as a byte.
	 */
	union {
		struct {
			bool iso_on;	/* has an allocation: every bio takes a slot */
			/* issue 20: above its commitment while the device's depth limit is on */
			bool depth_on;
			bool time_all;	/* every bio timed (blkiso_fb_times_all()) */
			/*
			 * issue 20: above its commitment on a device with the
			 * depth limit, on or not: a bio of more requests than
			 * the lower device has slots is cut to one, so that
			 * none queues below blkiso when the limit comes on
			 */
			bool cut_on;
		};
		u32 map_flags;
	};
	u32 depth_inflight;		/* bios sent through the slot gate, fb lock */
	u64 pace_next_ns;		/* issue 20: the depth limit's pace, next free time, fb lock */
	bool above;			/* above its commitment (S2-09), per tick */
	bool extremes;			/* .end_io's out-of-line part: extremes, squares */
	bool mode_auto;			/* mode=auto: .end_io sums squared units */
	bool mode_changed;		/* the selector switched at this tick */
	struct bi_modesel ms;		/* mode=auto's selector (S0-33) */
	struct bi_sample mode_win;	/* its decaying window of completions */
	u8 rate_on;			/* bit per direction: request-mode controller */
	struct bi_ovl_tenant ovl;
	struct bi_depth_recent depth_recent;	/* issue 20: active between its bios */
	struct bi_rate_ctl rate[BI_NR_DIRS];
	struct bi_rate_params rate_p[BI_NR_DIRS];
	u64 target_ns;			/* latency target (latency_us) */
	struct bio_list slot_wait;	/* charged, waiting for a slot (FIFO) */
	struct bio_list timed;		/* held until their release time */
	unsigned int nr_slot_wait;	/* under lock as well */
	unsigned int nr_timed;
	u32 victims;			/* held as victims in this tick */
	u64 others_tick;		/* other tenants last missed (bi_fb_wc_held()) */
	u64 prev[BLKISO_FB_NR];		/* folded counters at the last tick */
	u64 d[BLKISO_FB_NR];		/* this tick's differences */
	u64 lat_min, lat_max;		/* this tick's device latency extremes */
	struct blkiso_tick_rec ring[BLKISO_RING_TENANT];
	u32 ring_n;			/* records written, ever */
	struct blkiso_fb_shared ctr;	/* written by .end_io and parking */
	struct blkiso_lat lat;		/* written by .end_io, the sampling by .map */
	/* on the device's active list (the tick visits it), dev->lock */
	struct list_head active_node;
	bool active;
	u8 idle_ticks;			/* idle ticks at rest in a row */
};

/* The device's side: the overload detector, the tick and its ring. */
struct blkiso_dev_fb {
	struct bi_ovl ovl;		/* under the device lock */
	struct bi_ovl_params ovl_p;
	struct bi_fb_episode ep;	/* whose misses the episode has, device lock */
	struct bi_depth depth;		/* issue 20's depth limit, under the device lock */
	struct bi_depth_params depth_p;
	struct delayed_work tick_work;
	/*
	 * The tenants the tick visits (their fb), dev->lock.  .map adds at
	 * the tail only; the tick and the collector remove, under conf_mutex
	 * (so the tick's walks may drop dev->lock between batches).
	 */
	struct list_head active;
	unsigned int nr_active;
	/*
	 * The tick has still to ask the tenants without a feedback state to
	 * get it (dev->fb_all, blkiso_fb_all()), under the device lock.
	 */
	bool all_walk;
	unsigned long due;		/* jiffies: when the next tick is due */
	u64 seq;			/* ticks so far */
	u32 victims;			/* victims in this tick */
	/*
	 * The lower device's queue depth, 0 = unknown: the depth limit
	 * stays under it (ctl_depth.h).  Set at each resume, read by the tick.
	 */
	u32 lower_slots;
	bool overloaded;		/* detector state, for shedding */
	struct blkiso_tick_rec ring[BLKISO_RING_DEV];
};

struct blkiso_dev;

/*
 * What a line configures in a tenant, apart from the tenant (issue 18: a
 * counted-only tenant does not carry it): the line and the meter it makes,
 * caps, classes and cost model (kmod/core/meter.h).  A tenant has its own
 * from the line that first configures it (kmem_cache, with its per-CPU
 * area) until it is freed; until then it shares its device's
 * dev->quota_none, the defaults' meter, which is never capped (nothing
 * charges it) and which only a device line reconfigures.
 */
struct blkiso_quota {
	struct bi_tenant_conf conf;	/* under dev->conf_mutex and dev->lock */
	/* the grace period after its meter's last publication (conf_mutex) */
	unsigned long meter_gp;
	bool meter_gp_set;
	struct bi_meter meter;
};

/*
 * A tenant's class queues: a FIFO per class, so a low class's backlog never
 * holds a high one, and its dispatch credit.  Issue 18: apart from the
 * tenant, allocated only when it may need them (blkiso_parkq_get()): with
 * its feedback state (whose held bios go back to them), or at its first
 * parked bio (a counted-only tenant under a capped ancestor); kept until
 * it is freed.  Under dev->lock; published with a release store.
 */
struct blkiso_parkq {
	struct bio_list bios[BI_NR_CLASSES];
	unsigned int nr[BI_NR_CLASSES];	/* read locklessly by .map */
	unsigned int nr_parked;		/* their sum (blkiso_nr_parked()) */
	s64 deficit;			/* dispatch credit in units (DRR) */
};

/*
 * Layout: the first cache line holds what .map reads of any tenant (the
 * hash walk reads every tenant on its chain: hash, cgid) and nothing that
 * bios or parking write; the rest (its own bios' counters, its flags, the
 * parking link the neighbours' parking writes, the cold sysfs fields)
 * follows unaligned: only its own bios and slow paths touch it.  The
 * meter's dispense buckets (struct bi_meter) are apart from the published
 * configuration every charge reads.
 */
/*
 * A tenant's bytes at most (BUILD_BUG_ON in blkiso_tenant.c): a counted-only
 * tenant costs this and no more (issue 18; 5,632 before struct
 * blkiso_quota moved out, 3,200 before struct blkiso_fb did, 832 before
 * the cold fields filled the room the parking line's alignment left, 768
 * before the feedback tick's inputs went to struct blkiso_fb and the class
 * queues to struct blkiso_parkq, 584 before its latency buckets went to
 * 32 bits, 464 before its other shared counters but rios and wios did and
 * the sysfs queue's link became single, 400 before its latency histogram
 * went to struct blkiso_fb and its parked count to struct blkiso_parkq;
 * lifetime_test checks the slab object), on a kernel without lock
 * debugging (the debug kernel's locks are larger).
 */
#define BLKISO_TENANT_MAX_BYTES	256

struct blkiso_tenant {
	struct hlist_node hash;		/* dev->tenants, RCU */
	u64 cgid;
	struct blkiso_tenant *parent;	/* nearest configured ancestor, or NULL */
	/*
	 * NULL until a line configures it (blkiso_tenant_quota_get()), then
	 * kept until it is freed: published with a release store after its
	 * initialisation, loaded once per use (READ_ONCE: the per-CPU
	 * accesses depend on the address loaded).  A capped tenant has one.
	 */
	struct blkiso_tenant_pcpu __percpu *pcpu;
	/*
	 * Its line and meter: the device's shared dev->quota_none until a
	 * line configures it, then its own (blkiso_tenant_quota_get()), kept
	 * until it is freed; published like ->pcpu.  Never NULL.
	 */
	struct blkiso_quota *quota;
	/*
	 * Its feedback state: NULL (none, nothing of the tick's for it)
	 * until it needs one (blkiso_fb_get(): a line configures it, or its
	 * device's feedback counts every tenant), then kept until it is
	 * freed; published like ->pcpu, loaded once per use (blkiso_fb()).
	 */
	struct blkiso_fb *fb;
	struct blkiso_dev *dev;
	struct list_head list;		/* dev->tenant_list, under dev->lock */
	struct kobject kobj;		/* /sys/kernel/blkiso/dm-N/<cgid> */
	/*
	 * On dev->sysfs_first's queue: a directory to make or remove (dev->lock).
	 * The next one, BLKISO_SYSFS_LAST for the last, NULL when not queued.
	 * Singly linked: only the sysfs work takes tenants off, at the head.
	 */
	struct blkiso_tenant *sysfs_next;
	/* dev->parked while it has parked or held bios */
	struct list_head park;
	/* NULL until it may park (struct blkiso_parkq), then kept */
	struct blkiso_parkq *parkq;
	/*
	 * Written by every bio of a counted-only tenant: its shared set
	 * (struct blkiso_tenant_ctr), whose 64-bit members are these two.
	 * rios and wios stay 64-bit: .end_io's count of one is a bio's last
	 * access to @t (the lifetime rule at the top), after which no carry
	 * may touch it.
	 */
	atomic64_t ios[2];		/* index: the bio's direction */
	/* NULL until one of the halves first carries (blkiso_ctr_carry()), then kept */
	struct blkiso_ctr_hi *ctr_hi;
	struct blkiso_tenant_ctr ctr;
	/*
	 * After the halves, whose size is a multiple of 4, not of 8: no
	 * padding between.  fb_settled: .map has nothing to do for the
	 * feedback tick: on the active list, or without feedback state and
	 * needing none (dev->lock, read locklessly by .map).
	 */
	bool fb_settled;
	bool configured;		/* has a quota line (else: counted only) */
	bool in_sysfs;			/* its directory exists */
	/*
	 * One byte, written only under dev->conf_mutex (or before @t is
	 * published), so no two writes of it race; read under that mutex or
	 * dev->lock (the STATS ioctl's walk reads from_rule without either:
	 * the flag of the moment).
	 */
	u8 from_rule : 1;		/* and that line is a rule's (blkiso_rules.c) */
	u8 gone : 1;			/* its cgroup was removed: unhashed, draining */
	u8 dead : 1;			/* and drained: the collector frees it */
};

/*
 * @t's line and meter (struct blkiso_quota), in any context: the I/O path
 * loads it once per use, inside its RCU read-side section (the lifetime
 * rule at the top); the configuration path under dev->conf_mutex.
 */
static __always_inline struct blkiso_quota *blkiso_quota(const struct blkiso_tenant *t)
{
	return READ_ONCE(t->quota);
}

/* @t's feedback state, or NULL (none): loaded once per use, any context. */
static __always_inline struct blkiso_fb *blkiso_fb(const struct blkiso_tenant *t)
{
	return READ_ONCE(t->fb);
}

/*
 * Add @n to @t's counter @s: on this CPU when @t has a per-CPU area and @s
 * is kept there (blkiso_pcpu_stat()), else in its shared set (struct
 * blkiso_tenant_ctr).  Any context.
 */
static __always_inline void blkiso_count_add(struct blkiso_tenant *t,
					     enum blkiso_stat s, u64 n)
{
	struct blkiso_tenant_pcpu __percpu *pc;

	if (blkiso_pcpu_stat(s) >= 0) {
		pc = READ_ONCE(t->pcpu);
		if (likely(pc)) {
			this_cpu_add(pc->stat[blkiso_pcpu_stat(s)], n);
			return;
		}
	}
	if (s == BLKISO_RIOS || s == BLKISO_WIOS)
		atomic64_add(n, &t->ios[s - BLKISO_RIOS]);
	else if (s == BLKISO_RBYTES || s == BLKISO_WBYTES)
		blkiso_ctr_add(&t->ctr, blkiso_lo_stat(s), n >> SECTOR_SHIFT);
	else
		blkiso_ctr_add(&t->ctr, blkiso_lo_stat(s), n);
}

static __always_inline void blkiso_count(struct blkiso_tenant *t, enum blkiso_stat s)
{
	blkiso_count_add(t, s, 1);
}

/*
 * Count a bio rejected or failed at @t, its last access to @t (the lifetime
 * rule above): inside an RCU read-side section, which the collector's
 * grace period before the free waits for, so that a carry this count
 * makes (blkiso_ctr_carry()) does not outlive @t.  Slow paths only.
 */
static __always_inline void blkiso_count_last(struct blkiso_tenant *t, enum blkiso_stat s)
{
	rcu_read_lock();
	blkiso_count(t, s);
	rcu_read_unlock();
}

struct blkiso_dev {
	struct list_head node;		/* blkiso_devs, under blkiso_devs_mutex */
	dev_t devt;
	int users;			/* table instances using it */
	struct mapped_device *md;
	struct kobject kobj;		/* /sys/kernel/blkiso/dm-N */
	bool in_sysfs;

	struct mutex conf_mutex;	/* configuration changes */
	/*
	 * Read by every bio's .map, written only by configuration, suspend
	 * and tenant creation: apart from the lines parking writes (lock,
	 * counts, timer), so that one tenant's parking does not slow every
	 * other tenant's lookups.
	 */
	struct bi_dev_conf conf;
	/*
	 * chunk_bytes as .map compares it (READ_ONCE): a bio larger is cut,
	 * U32_MAX when off, so a bio below it costs one compare.
	 */
	u32 chunk_over;
	/*
	 * Half the lower device's slots in its largest requests (at least
	 * one), in bytes, read at each resume (blkiso_resume()): a read or
	 * write of a tenant capped in bytes that is larger is cut
	 * (blkiso_cap_cut()); U32_MAX for a bio-based lower device (no
	 * slots, nothing queues a request).
	 */
	u32 cap_cut_over;
	/*
	 * .map reads these three in one load (@map_flags, BLKISO_DEV_MAP_*,
	 * issue 18): a bio of a tenant whose feedback flags are 0 as well
	 * needs no test of either.  Each is written on its own, as a byte
	 * (the tick's fb_gated only when it changes).
	 */
	union {
		struct {
			bool draining;	/* presuspend: everything goes, as debt */
			/*
			 * Every tenant that does I/O needs its feedback state,
			 * counted-only ones too (overload != off,
			 * depth_limit=1, or an allocation, whose controller
			 * follows the device's detector: all completions
			 * count).  Set once (blkiso_fb_all()), under
			 * conf_mutex and the device lock.
			 */
			bool fb_all;
			/* the victim gate is open (M > 0, overload on): the tick */
			bool fb_gated;
		};
		u32 map_flags;
	};
	struct hlist_head *tenants;	/* by cgroup id, RCU: blkiso_tenant_bucket() */

	/* tenant list and parking (slow paths) */
	spinlock_t lock ____cacheline_aligned_in_smp;
	struct list_head tenant_list;
	/* tenants the sysfs work is to visit, first in first out (->sysfs_next) */
	struct blkiso_tenant *sysfs_first;	/* BLKISO_SYSFS_LAST: none */
	struct blkiso_tenant **sysfs_last;	/* where the next one is linked */
	struct list_head parked;	/* tenants with parked bios, round robin */
	unsigned int nr_tenants;
	unsigned int nr_parked;
	u64 alloc_failures;		/* bios passed unmetered: no memory */

	struct hrtimer timer;		/* earliest retry of a parked bio */
	struct work_struct dispatch_work;
	struct work_struct sysfs_work;	/* tenant directories, off the hot path */
	struct delayed_work gc_work;	/* frees removed cgroups' tenants */
	struct workqueue_struct *wq;
	struct blkiso_dev_fb fb;
	/* counted-only tenants' line and meter (struct blkiso_quota), conf_mutex */
	struct blkiso_quota quota_none;
	struct blkiso_rules __rcu *rules;	/* blkiso_rules.c; conf_mutex */
	/* entries in use in nw_rests: .map looks only while some are */
	atomic_t nw_rests_used;
	struct blkiso_nw_rest nw_rests[BLKISO_NW_RESTS];
};

/*
 * What a bio was charged at its one level when that is all (struct
 * bi_charge without the class stage's ticket, which such a charge has not
 * got): kept in the per-bio area, turned back into a struct bi_charge for
 * the correction at completion (blkiso_target.c).
 */
struct blkiso_charge1 {
	u64 units;			/* the bio's units by the level's cost model */
	s64 init;			/* work key's charge at submission */
	u32 reqs;			/* requests at the lower queue */
	u8 keys;			/* bit per enum bi_key charged */
	u8 cls;				/* enum bi_class */
	u8 flags;			/* BI_CHARGE_REJECT after a refusal */
};

/*
 * What only some bios need, out of the per-bio area: the levels of a
 * nested cgroup beyond its first, and a charge that does not fit struct
 * blkiso_charge1 (more than one level, or a class stage's ticket).  Taken
 * from blkiso_ext_pool (a mempool over a slab cache, GFP_NOWAIT: .map and
 * the dispatcher run with IRQs off) when a bio first needs it, given back
 * in .end_io (or when .map kills the bio).  Without one: a nested bio is
 * charged at its innermost level only, and a charge that needs one is
 * corrected at once instead of at completion (blkiso_charge_keep); both
 * counted in blkiso_ext_failures.  The bio goes on either way.
 */
struct blkiso_bio_ext {
	struct blkiso_tenant *up[BI_METER_MAX_DEPTH - 1];	/* levels 1.. */
	struct bi_chain_charge cc;	/* every level's charge, tickets too */
};

/*
 * Per-bio state (dm per_io_data): what every bio needs from .map to
 * .end_io, at most 96 bytes (BUILD_BUG_ON in blkiso_target.c).  A parked
 * or held bio sits on its lists by bio->bi_next; its release time shares
 * the word of its dispatch time, which is set when it leaves.
 */
struct blkiso_bio {
	struct blkiso_tenant *tenant;	/* its cgroup's tenant (counters); NULL: none */
	/* The first capped tenant it is charged to (io.max nesting: ext->up[] next). */
	struct blkiso_tenant *level0;
	struct blkiso_bio_ext *ext;	/* NULL until needed */
	struct blkiso_charge1 ch;	/* the charge when one level without a ticket */
	struct bi_io io;		/* filled when it leaves .map's fast path */
	u64 arrive_ns;
	union {
		u64 dispatch_ns;	/* sent down: device latency starts */
		u64 release_ns;		/* held (victim, shed, delay) until then */
	};
	/*
	 * For the counters: at most 2^23 units of 512 bytes in a 4 GiB bio,
	 * times a write weight of at most 16, or a discard's 65,536.
	 */
	u32 units;
	u8 end;				/* .end_io's way: BLKISO_END_* */
	u8 depth;			/* levels it is charged to */
	u8 charged;			/* levels charged now (0: nothing to correct) */
	bool ch_ext;			/* and that charge is ext->cc, not ch */
	bool anc_held;			/* holds its ancestor levels (their ->held) */
	u8 dir;
	u8 cls;				/* class in its own tenant: its queue */
	s8 slot;			/* isolation slot held, -1 = none, BLKISO_SLOT_DEPTH */
	u8 stage;			/* enum blkiso_stage, while held */
	u8 lat_mask;			/* its tenant's sampling at arrival (blkiso_lat_sampled()) */
};

/*
 * pb->end, set in .map (issue 18): 0 for a bio whose completion only adds
 * to its counters (not timed, no correction due, nothing held: neither a
 * slot, ancestor levels nor an extension), so .end_io tests this byte and
 * does its counter adds; only then are arrive_ns, dispatch_ns, slot, ch,
 * charged, ch_ext and cls left unset (by .map's fast path).
 * BLKISO_END_SLOW: every field is set and .end_io takes its general way;
 * set too, and nothing else read, where pb->tenant is NULL (no tenant, or
 * the bio was refused), which .end_io's fast way does not test.
 * BLKISO_END_REFUND: a completion of the first kind whose one-level charge
 * is kept in pb->ch all the same (a REQ_NOWAIT bio), in case the lower
 * device fails it with BLK_STS_AGAIN and it is refunded.
 */
#define BLKISO_END_SLOW		0x1
#define BLKISO_END_REFUND	0x2
/*
 * With either of the above: the one-level charge is bi_meter_admit_exact()'s
 * (issue 18), of which .map kept only pb->ch.reqs; the rest follows from
 * pb->units and pb->dir, and .end_io's general way writes it into pb->ch
 * (blkiso_charge1_exact()) before anything reads it.
 */
#define BLKISO_END_EXACT	0x4
/*
 * The same for bi_meter_admit_exact1()'s charge (one key): .map kept
 * pb->ch.reqs and pb->ch.keys, the one key's bit.
 */
#define BLKISO_END_EXACT1	0x8

/*
 * @pb has no tenant (none could be made, or it was refused): .end_io's
 * fast way does not test pb->tenant, so BLKISO_END_SLOW goes with it.
 */
static inline void blkiso_bio_untenanted(struct blkiso_bio *pb)
{
	pb->tenant = NULL;
	pb->end = BLKISO_END_SLOW;
}

/* Level @i of a bio's chain (i < pb->depth). */
static inline struct blkiso_tenant *blkiso_level(const struct blkiso_bio *pb, u8 i)
{
	return i ? pb->ext->up[i - 1] : pb->level0;
}

/*
 * Issue 18: every bio is timed (two clock reads, .map and .end_io) only
 * where a controller judges its latency (blkiso_fb_times_all()).  Of the
 * bios of any other tenant with a feedback state (a line configures it, or
 * its device's feedback counts every tenant), 1 in (its fb->lat.mask + 1)
 * per CPU (per tenant while it has no per-CPU area) is timed; of a tenant
 * without one, none: it has no latency figures (struct blkiso_lat).  Each
 * timed one stands for
 * itself and the bios up to the next one in its latency histogram and
 * sum; every counter stays exact.  The mask follows the tenant's rate
 * (blkiso_lat_sample(): about one timed bio a jiffy), from 0 (every bio: a
 * new tenant, a slow one) up to BLKISO_LAT_SAMPLE_MAX - 1, so a fast
 * tenant's timing costs next to nothing a bio and a slow one's histogram
 * is exact.  A power of two less one: the test is a mask.
 */
#define BLKISO_LAT_SAMPLE_MAX	256U

u64 blkiso_lat_sample(struct blkiso_fb *fb, struct blkiso_bio *pb, u32 i, u8 mask);

/*
 * Is arrival @i (from 1) of @t one of the sampled ones, 1 in lat_mask + 1
 * (the (mask + 1)-th, 2 (mask + 1)-th, ...; a new tenant's mask is 0, so
 * its first bio is timed and even a tenant with a handful of bios has a
 * latency figure)?  Then its clock, read out of line (blkiso_lat_sample(),
 * which also steers the sampling and keeps in @pb what the sample stands
 * for), else 0.  pb->lat_mask is not written for a bio that is not
 * sampled: read only for a timed bio (one timed for its tenant's feedback
 * sets it: .map's general ways).
 */
static __always_inline u64 blkiso_lat_sampled(struct blkiso_tenant *t,
					      struct blkiso_bio *pb, u32 i)
{
	struct blkiso_fb *fb = blkiso_fb(t);
	u8 mask;

	if (!fb)
		return 0;	/* no latency figures (struct blkiso_lat) */
	mask = READ_ONCE(fb->lat.mask);
	return unlikely(!(i & mask)) ? blkiso_lat_sample(fb, pb, i, mask) : 0;
}

/*
 * Count a bio's arrival at @t: the clock of a sampled bio
 * (blkiso_lat_sampled(), by this CPU's counter or by the shared one), else 0.
 */
static __always_inline u64 blkiso_count_arrived_pc(struct blkiso_tenant *t,
						   struct blkiso_tenant_pcpu __percpu *pc,
						   struct blkiso_bio *pb)
{
	u32 n;			/* its low bits are all that is tested */

	if (likely(pc))
		n = this_cpu_add_return(pc->stat[blkiso_pcpu_stat(BLKISO_ARRIVED)], 1);
	else	/* its arrivals on the shared set */
		n = blkiso_ctr_inc_return(&t->ctr, blkiso_lo_stat(BLKISO_ARRIVED));
	return blkiso_lat_sampled(t, pb, n);
}

/* The same, @t's per-CPU area loaded here. */
static __always_inline u64 blkiso_count_arrived(struct blkiso_tenant *t,
						struct blkiso_bio *pb)
{
	return blkiso_count_arrived_pc(t, READ_ONCE(t->pcpu), pb);
}

/*
 * Count a bio of @t, which has neither a per-CPU area nor a feedback state,
 * that passes .map at once with no cap on its way: arrived and admitted in
 * one count (BLKISO_LO_PASSED).  Not timed: without a feedback state @t
 * keeps no latency figures (struct blkiso_lat).
 */
static __always_inline void blkiso_count_passed(struct blkiso_tenant *t)
{
	/* blkiso_ctr_inc_return()'s carry, by @t alone: its argument is a constant */
	if (unlikely((u32)atomic_inc_return(&t->ctr.lo[BLKISO_LO_PASSED]) >= BLKISO_CARRY_AT))
		blkiso_ctr_carry_passed(t);
}

/* Why a bio sits on its tenant's timed list. */
enum blkiso_stage {
	BLKISO_STAGE_VICTIM,		/* overload victim: not charged yet */
	BLKISO_STAGE_SHED,		/* large read shed: asks again */
	BLKISO_STAGE_DELAY,		/* charged, slot held: isolation delay */
};

/* /sys/kernel/blkiso, parent of every per-device directory. */
extern struct kobject *blkiso_sysfs_root;

/* Live objects, for /sys/kernel/blkiso/objects (leak checks). */
extern atomic_long_t blkiso_live_devices;
extern atomic_long_t blkiso_live_tenants;
extern atomic_long_t blkiso_live_tenant_pcpu;	/* of those, with a per-CPU area */
extern atomic_long_t blkiso_live_tenant_fb;	/* of those, with a feedback state */
extern atomic_long_t blkiso_live_parked;
extern atomic_long_t blkiso_live_bio_ext;
extern atomic_long_t blkiso_ext_failures;

int blkiso_target_init(void);
void blkiso_target_exit(void);

/* blkiso_main.c: debug timestamp pairs around the IRQs-off sections */
enum blkiso_irqsoff_site {
	BLKISO_IRQSOFF_TICK,		/* one of the tick's sections under dev->lock */
	BLKISO_IRQSOFF_DISPATCH,	/* one dispatch pass */
	BLKISO_IRQSOFF_CONF,		/* a device line's walk over the meters */
	BLKISO_IRQSOFF_SYSFS,		/* the sysfs work's walk */
	BLKISO_IRQSOFF_NR,
};
extern bool blkiso_irqsoff_trace;

/*
 * A coarse time in ktime_get_ns()'s base for .map's inline charge (issue
 * 18): jiffies, at most about two jiffies behind the clock (8 ms at HZ=250;
 * blkiso_coarse_init()).  Its only use is the local buckets' hit test,
 * "has this CPU's demand interval ended?" (bi_local_hit()): seen late, a
 * bio admitted from tokens its CPU already holds counts in the interval
 * that just ended.  No token is created or moved by it, so the cap's
 * accuracy does not depend on it; every global dispense, hold and
 * rollover takes the clock (the slow path reads it).
 */
extern u64 blkiso_jiffies_off;

static __always_inline u64 blkiso_coarse_ns(void)
{
	return (u64)READ_ONCE(jiffies) * TICK_NSEC + blkiso_jiffies_off;
}

void blkiso_irqsoff_end(enum blkiso_irqsoff_site site, u64 t0);

/* A section's start (IRQs just turned off), or 0 when not traced. */
static inline u64 blkiso_irqsoff_begin(void)
{
	return unlikely(READ_ONCE(blkiso_irqsoff_trace)) ? ktime_get_ns() : 0;
}

/* Its end (IRQs about to be turned on). */
static inline void blkiso_irqsoff_done(enum blkiso_irqsoff_site site, u64 t0)
{
	if (unlikely(t0))
		blkiso_irqsoff_end(site, t0);
}

/* blkiso_dev.c: the registry */
struct blkiso_dev *blkiso_dev_get(struct mapped_device *md, char **error);
void blkiso_dev_put(struct blkiso_dev *dev);
int blkiso_dev_call(dev_t devt, int (*fn)(struct blkiso_dev *dev, void *arg),
		    void *arg);

/* blkiso_tenant.c: tenants and their configuration */
int blkiso_tenant_cache_init(void);
void blkiso_tenant_cache_exit(void);
unsigned int blkiso_tenant_bytes(void);
unsigned int blkiso_quota_bytes(void);
struct blkiso_tenant *blkiso_tenant_lookup(struct blkiso_dev *dev, u64 cgid,
					   struct cgroup *cgrp);
struct blkiso_tenant *blkiso_tenant_get_or_create(struct blkiso_dev *dev, u64 cgid);
int blkiso_dev_configure(struct blkiso_dev *dev, const char *line, size_t len);
int blkiso_dev_merge(struct blkiso_dev *dev, const char *line, size_t len,
		     bool apply);
int blkiso_cgroup_exists(u64 cgid);
int blkiso_tenant_configure(struct blkiso_dev *dev, const char *line, size_t len);
int blkiso_tenant_merge(struct blkiso_tenant *t, const char *line, size_t len);
int blkiso_tenant_deconfigure(struct blkiso_dev *dev, u64 cgid);
int blkiso_tenant_del(struct blkiso_dev *dev, const char *line, size_t len);
int blkiso_tenant_word(struct blkiso_dev *dev, const char *line, size_t len,
		       const char *want, char *name, size_t size, u64 *cgid);
bool blkiso_tenant_stats(struct blkiso_tenant *t, u64 *stat, u64 *lat, u64 *lat_sum_us);
void blkiso_ctr_stats(const struct blkiso_tenant *t, u64 *stat);
u64 blkiso_tenant_stat(const struct blkiso_tenant *t, enum blkiso_stat s);
int blkiso_tenant_quota_get(struct blkiso_tenant *t, gfp_t gfp);
int blkiso_parkq_get(struct blkiso_tenant *t, gfp_t gfp);
int blkiso_parkq_get_locked(struct blkiso_tenant *t);
void blkiso_quota_none_init(struct blkiso_dev *dev);
void blkiso_tenant_apply(struct blkiso_tenant *t, const struct bi_tenant_conf *conf,
			 bool configured);
void blkiso_meter_configure(struct blkiso_tenant *t);
int blkiso_tenant_preset(struct blkiso_tenant *t, const struct bi_tenant_conf *conf);
void blkiso_tenant_add_preset(struct blkiso_dev *dev, struct cgroup *cgrp,
			      const struct bi_tenant_conf *conf);
void blkiso_relink(struct blkiso_dev *dev);

/*
 * The tenant table's size: every bio looks its tenant up, so the chains
 * stay short up to ~10,000 tenants per device (2.4 a chain on average at
 * 10,000, 4.9 at 20,000), for 32 KiB a device (kvcalloc); 256 buckets
 * made .map's lookup grow by ~4 instructions per 256 tenants.
 */
#define BLKISO_TENANT_HASH_BITS	12

/*
 * By the id's low 32 bits, kernfs's inode number (the high ones count its
 * wraps): hash_32() multiplies by an immediate, where hash_64() loads a
 * 64-bit constant first.  Multiplicative: the ids of sibling cgroups are
 * spaced by the files each directory holds, which a mask would fold.
 */
static inline struct hlist_head *blkiso_tenant_bucket(struct blkiso_dev *dev, u64 cgid)
{
	return &dev->tenants[hash_32((u32)cgid, BLKISO_TENANT_HASH_BITS)];
}

/*
 * Hot path (every bio, inline): the tenant of @cgid, or NULL.  Caller holds
 * rcu_read_lock() or otherwise is in an RCU read-side section (preemption
 * or IRQs off).
 */
static inline struct blkiso_tenant *blkiso_tenant_find(struct blkiso_dev *dev,
						       u64 cgid)
{
	struct blkiso_tenant *t;

	hlist_for_each_entry_rcu(t, blkiso_tenant_bucket(dev, cgid), hash)
		if (t->cgid == cgid)
			return t;
	return NULL;
}

/*
 * Configuration paths: the tenant of @cgid, or NULL, usable until the
 * caller drops dev->conf_mutex (tenants are unlisted under it: the
 * "Lifetimes" at the top).  Caller holds dev->conf_mutex.
 */
static inline struct blkiso_tenant *blkiso_tenant_find_conf(struct blkiso_dev *dev,
							    u64 cgid)
{
	struct blkiso_tenant *t;

	lockdep_assert_held(&dev->conf_mutex);
	rcu_read_lock();
	t = blkiso_tenant_find(dev, cgid);
	rcu_read_unlock();
	return t;
}

/*
 * The class of @io in @t by its rules as published now (struct
 * bi_meter_cfg), in any context: its own RCU read-side section.
 */
static inline u8 blkiso_classify(struct blkiso_tenant *t, const struct bi_io *io)
{
	u8 cls;

	rcu_read_lock();
	cls = bi_classify(&bi_meter_cfg(&blkiso_quota(t)->meter)->rules, io);
	rcu_read_unlock();
	return cls;
}

/*
 * Bios of @t on its class queues (none before it has them): written under
 * dev->lock, read locklessly by .map.
 */
static __always_inline unsigned int blkiso_nr_parked(const struct blkiso_tenant *t)
{
	const struct blkiso_parkq *q = READ_ONCE(t->parkq);

	return q ? READ_ONCE(q->nr_parked) : 0;
}

/* Bios of @t held now: parked on its class queues, waiting for a slot or a time. */
static inline unsigned int blkiso_tenant_queued(const struct blkiso_tenant *t)
{
	const struct blkiso_fb *fb = blkiso_fb(t);

	return blkiso_nr_parked(t) +
	       (fb ? READ_ONCE(fb->nr_slot_wait) + READ_ONCE(fb->nr_timed) : 0);
}

/*
 * A refused line's errno at the interfaces: the parser's cause (EINVAL,
 * ERANGE, E2BIG), except that a fixed setting's EPERM becomes EINVAL:
 * there EPERM means "not privileged" (blkisoctl, sysfs users).
 */
static inline int blkiso_parse_errno(int ret)
{
	return ret == -EPERM ? -EINVAL : ret;
}

/* dev->chunk_over for a device line: chunk_bytes, or U32_MAX when off. */
static inline u32 blkiso_chunk_over(const struct bi_dev_conf *conf)
{
	return conf->chunk_bytes ? conf->chunk_bytes : U32_MAX;
}

/* blkiso_rules.c: device-level rules (quotas that follow cgroup paths) */
struct blkiso_rules;
void blkiso_rules_free(struct blkiso_dev *dev);
int blkiso_rules_new_tenant(struct blkiso_dev *dev, struct blkiso_tenant *t,
			    struct cgroup *cgrp);
void blkiso_rules_eval_tenant(struct blkiso_dev *dev, struct blkiso_tenant *t);
int blkiso_rule_set(struct blkiso_dev *dev, const char *glob, size_t glen,
		    const char *line, size_t len, bool del, bool dry, char *msg);
int blkiso_rule_line(struct blkiso_dev *dev, const char *line, size_t len);
int blkiso_rules_snapshot(struct blkiso_dev *dev, struct blkiso_rule_rec *recs,
			  u32 capacity, u32 *count);
extern struct kobj_attribute blkiso_dev_rules_attr;
extern struct kobj_attribute blkiso_dev_rule_attr;

/* blkiso_lease.c: leased credit (cluster-wide quotas, doc/cluster.md) */
long blkiso_ioc_lease(void __user *uarg);
extern struct kobj_attribute blkiso_dev_lease_attr;
extern struct kobj_attribute blkiso_tenant_lease_attr;

/* blkiso_sysfs.c */
ssize_t blkiso_dev_line_store(struct kobject *kobj, const char *buf, size_t len,
			      int (*apply)(struct blkiso_dev *dev, const char *line,
					   size_t len));
u64 blkiso_lat_pct(const u64 *lat, unsigned int pct);
extern const struct attribute_group *blkiso_tenant_groups[];
extern const struct attribute_group *blkiso_dev_groups[];
void blkiso_sysfs_work(struct work_struct *work);
void blkiso_sysfs_pending_locked(struct blkiso_dev *dev, struct blkiso_tenant *t);
void blkiso_sysfs_pending_init(struct blkiso_dev *dev);

/* blkiso_charge.c: the charge path, which the dispatcher shares */
int blkiso_charge_init(void);
void blkiso_charge_exit(void);
bool blkiso_charge(struct blkiso_bio *pb, bool force, bool queue, u64 now, u64 *retry);
void blkiso_complete_chain(struct blkiso_bio *pb, u64 now);
void blkiso_levels_put(struct blkiso_bio *pb);

/* blkiso_dispatch.c: parking and the dispatcher */
bool blkiso_lower_dead(const struct bio *bio);
bool blkiso_park(struct blkiso_dev *dev, struct blkiso_tenant *t,
		 struct bio *bio, u64 retry_ns);
void blkiso_hold_locked(struct blkiso_dev *dev, struct blkiso_tenant *t,
			struct bio *bio, u8 stage, u64 release_ns);
void blkiso_slot_gate_locked(struct blkiso_dev *dev, struct blkiso_tenant *t,
			     struct bio *bio, u64 now, struct bio_list *out);
void blkiso_slot_put(struct blkiso_tenant *t, struct blkiso_bio *pb);
bool blkiso_victim_locked(struct blkiso_dev *dev, struct blkiso_tenant *t,
			  struct blkiso_bio *pb, u8 *stage);
u64 blkiso_hold_ns(const struct blkiso_dev *dev);
void blkiso_dispatch_work(struct work_struct *work);
enum hrtimer_restart blkiso_timer_fn(struct hrtimer *timer);

/* blkiso_feedback.c */
int blkiso_fb_cache_init(void);
void blkiso_fb_cache_exit(void);
unsigned int blkiso_fb_bytes(void);
int blkiso_fb_get(struct blkiso_tenant *t, gfp_t gfp);
void blkiso_fb_free(struct blkiso_tenant *t);
void blkiso_fb_all(struct blkiso_dev *dev);
void blkiso_fb_mode_configure(struct blkiso_tenant *t);
void blkiso_fb_configure(struct blkiso_tenant *t);
void blkiso_fb_dev_init(struct blkiso_dev *dev);
void blkiso_fb_dev_configure(struct blkiso_dev *dev);
void blkiso_fb_dev_start(struct blkiso_dev *dev);
void blkiso_fb_dev_stop(struct blkiso_dev *dev);
void blkiso_fb_activate(struct blkiso_tenant *t);
void blkiso_fb_configured(struct blkiso_tenant *t);
void blkiso_fb_deactivate_locked(struct blkiso_dev *dev, struct blkiso_tenant *t);

/*
 * .map, every bio of @t, after its "arrived" count: @t joins its device's
 * active list unless it is on it (one load and branch; the lock only on
 * the first bio after it went idle).
 */
static inline void blkiso_fb_touch(struct blkiso_tenant *t)
{
	if (unlikely(!READ_ONCE(t->fb_settled)))
		blkiso_fb_activate(t);
}

/*
 * Issue 18: is every bio of the tenant of feedback state @fb (NULL: none)
 * timed?  Where a controller judges each bio's latency: its own (an
 * allocation, a latency target or miss window of its own, the extremes
 * overload=ideal and mode=auto use: fb->time_all), or the device's
 * feedback counting every tenant (an overload gate, the depth limit, an
 * allocation anywhere: dev->fb_all).  Otherwise 1 in the tenant's
 * fb->lat.mask + 1 (blkiso_lat_sampled()), each standing for that many.
 */
static __always_inline bool blkiso_fb_times_all(const struct blkiso_dev *dev,
						const struct blkiso_fb *fb)
{
	return fb && (READ_ONCE(fb->time_all) | READ_ONCE(dev->fb_all));
}

/*
 * struct blkiso_fb's map_flags: its byte of iso_on, depth_on, time_all, cut_on.
 * @k: the byte's place in the word's memory.
 */
#ifdef __LITTLE_ENDIAN
#define BLKISO_FB_MAP_BYTE(k)	(0xffU << (8 * (k)))
#else
#define BLKISO_FB_MAP_BYTE(k)	(0xffU << (24 - 8 * (k)))
#endif
#define BLKISO_FB_MAP_ISO	BLKISO_FB_MAP_BYTE(0)
#define BLKISO_FB_MAP_DEPTH	BLKISO_FB_MAP_BYTE(1)
#define BLKISO_FB_MAP_TIME_ALL	BLKISO_FB_MAP_BYTE(2)
#define BLKISO_FB_MAP_CUT	BLKISO_FB_MAP_BYTE(3)

/* struct blkiso_dev's map_flags: its bytes of draining, fb_all, fb_gated. */
#define BLKISO_DEV_MAP_DRAINING	BLKISO_FB_MAP_BYTE(0)
#define BLKISO_DEV_MAP_FB_ALL	BLKISO_FB_MAP_BYTE(1)
#define BLKISO_DEV_MAP_GATED	BLKISO_FB_MAP_BYTE(2)

/* .map's one load of the flags of feedback state @fb (NULL: none, 0). */
static __always_inline u32 blkiso_fb_map_flags(const struct blkiso_fb *fb)
{
	return fb ? READ_ONCE(fb->map_flags) : 0;
}

/*
 * blkiso_fb_times_all() by .map's @fl (blkiso_fb_map_flags() of @fb) and
 * @dfl (its device's map_flags): the device's flag only for a tenant with
 * a feedback state.
 */
static __always_inline bool blkiso_fb_times_all_fl(const struct blkiso_fb *fb, u32 fl,
						   u32 dfl)
{
	return (fl & BLKISO_FB_MAP_TIME_ALL) || (fb && (dfl & BLKISO_DEV_MAP_FB_ALL));
}

/*
 * The slot gate binds the tenant whose feedback state's flags are @fl
 * (an allocation, or the depth limit): .map, every bio.
 */
static __always_inline bool blkiso_fb_gate_fl(u32 fl)
{
	return fl & (BLKISO_FB_MAP_ISO | BLKISO_FB_MAP_DEPTH);
}

/* The same for @t (the dispatcher, .map's general way). */
static __always_inline bool blkiso_fb_gate(const struct blkiso_tenant *t)
{
	return blkiso_fb_gate_fl(blkiso_fb_map_flags(blkiso_fb(t)));
}

int blkiso_fb_ring(struct blkiso_dev *dev, struct blkiso_tenant *t,
		   struct blkiso_tick_rec *recs, unsigned int capacity);
ssize_t blkiso_fb_ring_show(struct blkiso_dev *dev, struct blkiso_tenant *t, char *buf);

/* blkiso_ioctl.c: /dev/blkiso */
int blkiso_ioctl_init(void);
void blkiso_ioctl_exit(void);

#endif /* BLKISO_H */
