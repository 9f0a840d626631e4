/* SPDX-License-Identifier: GPL-2.0 */
/*
 * meter.h - one tenant's metering on one device: the throttle keys and
 * class buckets its configuration caps, the charge of a bio through them,
 * and through the chain of a nested cgroup's tenants.
 *
 * A tenant's caps are enforced together, as io.max does: riops and wiops
 * by request keys (cost: the bios the lower queue splits a bio into,
 * bi_io_requests), runits/rbps and wunits/wbps by work
 * keys (cost = work units, bytes turned into units by the device's cost
 * model; the lower of the two caps wins, conf.c).  Each capped key is a
 * global bucket (dispense.c) with one local bucket per CPU, so the common
 * admission touches only the submitting CPU's local buckets.  Bios of the
 * system class (flush, FUA, PREFLUSH, META; A-17) are charged but never held
 * back, so journals are never priority-inverted behind data.
 *
 * A bio's charge: at submission each key of its direction is charged its
 * initial deduction (the bio's units, 1, or initial=ewma's estimate of a
 * bio's units that the tick keeps, bi_meter_adapt_tick; per the tenant's
 * "initial" setting, A-07, S0-24, S0-29); at completion the work keys are corrected to the bio's
 * actual units (S0-25), refunding or deducting more; a failed bio is
 * charged its submitted size, but one the device never took (it
 * completed with BLK_STS_AGAIN from below, and io_uring will resubmit it)
 * is refunded whole (bi_meter_refund).  struct bi_charge, kept with the bio,
 * remembers what was charged so the correction is exact even if the
 * configuration changed in between.
 *
 * Class stage (seed 001, S1-12..S1-18, A-19, A-20): a tenant whose
 * configuration gives any class a rate (hi.units=, ...) also keeps one
 * bucket per class and the classes' admittance policies (admit.c).  Such a
 * bio first passes the class stage (bi_admit() over the class buckets,
 * under the meter's class lock: class buckets are shared by all CPUs), then
 * the keys; if a key refuses, the class charge is given back exactly.  A
 * class with no rate is not limited: as the primary (first) bucket of a
 * policy it admits without charge; later in a policy list it is skipped,
 * so that an unset class cannot lift the cap of the classes that may
 * borrow from it (with the default priority policy, "hi.units=2000" alone
 * caps HI at 2000 units/s although mid and lo have no rate).  Tenants
 * without class rates pay one flag test for all this.
 *
 * Hierarchy (S1-19..S1-24, A-21, A-22; io.max semantics): a bio is charged
 * to its own tenant and up to BI_METER_MAX_DEPTH - 1 configured ancestors,
 * each level with its own keys, classes, rules and cost model, and is
 * admitted only if every level admits (strict, A-21).  Refused at one
 * level, it leaves every level unchanged.  Siblings share their parent's
 * tokens first come, first served (S1-24: what one child leaves, the other
 * may use); fairness between siblings that both want more is the order in
 * which the caller retries parked bios (one bio per tenant and pass favours
 * the sibling with the larger bios; a units-fair order does not).
 *
 * Concurrency contract:
 *   bi_meter_admit, bi_meter_force   submission or dispatch work item: on the
 *   bi_meter_admit_chain,            CPU owning @cpu (every @cpu[i]), IRQs
 *   bi_meter_admit_one,              off; the class lock is taken inside
 *   bi_meter_force_chain
 *   bi_meter_complete,               completion (hard IRQ possible): on the
 *   bi_meter_complete_chain,         CPU owning @cpu (every @cpu[i]), IRQs
 *   bi_meter_refund(_chain)          off; the class lock is taken inside
 *   bi_meter_classify                any
 *   bi_meter_init                    before any other call; owns @m
 *   bi_meter_configure,              configuration or tick (process
 *   bi_meter_set_request_rate,       context),
 *   bi_meter_adapt_tick
 *                                    serialised against itself by the caller;
 *                                    the keys' locks and the class lock
 *                                    cover the rest
 *   bi_meter_init_cpu                owns @cpu (before publication)
 * Every reader of the published configuration (all but configure, init and
 * the tick) runs where the caller's publication rule covers it (struct
 * bi_meter_cfg): in the kernel, inside an RCU read-side section (IRQs off
 * counts as one).
 * The meter's locks (class lock, key locks) are never nested, in a level or
 * across the levels of a chain, so no lock order binds the caller; they are
 * innermost (the caller may hold its own, e.g. the device lock).
 */
#ifndef BLKISO_METER_H
#define BLKISO_METER_H

#include "bi_shim.h"
#include "admit.h"
#include "bucket.h"
#include "classify.h"
#include "conf.h"
#include "dispense.h"
#include "tokadapt.h"

enum bi_key {
	BI_KEY_RUNITS,
	BI_KEY_WUNITS,
	BI_KEY_RREQS,
	BI_KEY_WREQS,
	BI_NR_KEYS,
};

/* Levels a chain charges: the tenant and up to 3 configured ancestors. */
#define BI_METER_MAX_DEPTH	4

/* bi_meter_cfg.wfixed: initial=ewma, the tick's estimate (bi_meter.ewma_init) */
#define BI_WFIXED_EWMA		(-1)

/*
 * What a tenant's configuration makes of its meter that the I/O path reads
 * without a lock, published as a whole: immutable once published.
 * bi_meter_configure() fills the slot readers do not use and publishes it
 * with one release store of m->cfg; a reader loads m->cfg once per call
 * (bi_meter_cfg(), acquire) and uses that copy throughout, so an admission,
 * a correction or a classification sees the old or the new configuration,
 * never a mix.  The keys' and classes' buckets are not in it: each is
 * retuned whole under its own lock (bi_global_tune), and a newly capped one
 * is ready before the configuration that names it is published.  The
 * caller of bi_meter_configure() guarantees that no reader still uses the
 * unpublished slot (the kernel: a grace period since the previous
 * publication, readers inside RCU read-side sections; blkiso.h).
 */
struct bi_meter_cfg {
	u8 key_on;			/* bit per enum bi_key: capped */
	u8 cls_on;			/* class stage in force (any class rated) */
	u8 initial;			/* enum bi_initial */
	/*
	 * Bit per enum bi_dir whose charge is the plainest: both of the
	 * direction's keys capped, initial=exact (wfixed 0), no class stage.
	 * Such a charge is settled (bi_chain_settled()), and its admission,
	 * bi_meter_admit_exact(), tests nothing but the two hits (issue 18).
	 */
	u8 exact2;
	/*
	 * Per enum bi_dir, a direction whose charge is as plain with one key:
	 * its one capped key's bit (the work or the request key),
	 * initial=exact, no class stage; 0 otherwise.  Settled as well, admitted
	 * by bi_meter_admit_exact1() (issue 18: a one-key quota, io.max's
	 * usual line, paid the general admission's call, +51 a read).
	 */
	u8 exact1[BI_NR_DIRS];
	/*
	 * bi_meter_cfg_capped() of each direction (issue 18: one test where
	 * there were two), bit per enum bi_dir (bi_meter_capped_bits()).
	 */
	u8 capped;
	/*
	 * 2^cost.unit_shift - 1: a data bio's units round up by it
	 * (bi_meter_cfg_data_units(): an add where there were a shift, a
	 * move and an add).
	 */
	u32 unit_round;
	/*
	 * The work key's initial deduction: 0 = the bio's units (exact),
	 * 1 (initial=1), BI_WFIXED_EWMA (initial=ewma: bi_meter.ewma_init)
	 */
	s64 wfixed;
	struct bi_deadband db;
	struct bi_cost_model cost;
	struct bi_rules rules;
};

struct bi_meter {
	const struct bi_meter_cfg *cfg;	/* the published slot */
	struct bi_meter_cfg slot[2];
	/* initial=ewma's estimate of a bio's units: the tick's, one word */
	s64 ewma_init;
	/*
	 * Written by global dispenses: a cache line of their own, apart from
	 * the published configuration (key_on, cost) every charge reads.
	 */
	struct bi_global key[BI_NR_KEYS] BI_CACHE_ALIGNED;
	struct bi_adapt ad;		/* initial=ewma's estimate, by the tick */
	u8 auto_active;			/* mode=auto: the mechanism the selector chose */
	/* Class stage, under cls_lock. */
	struct bi_lock cls_lock;
	u8 cls_rated;			/* bit per enum bi_class with a rate */
	struct bi_bucket cls[BI_NR_CLASSES];
	/* per class, unrated buckets dropped; nr_buckets 0 = admit free */
	struct bi_policy policy[BI_NR_CLASSES];
};

/* The published configuration: load once per call, use that copy. */
static inline const struct bi_meter_cfg *bi_meter_cfg(const struct bi_meter *m)
{
	return bi_load_acquire(&m->cfg);
}

/* The work key's initial deduction for a bio of @units under @c. */
static inline s64 bi_meter_wcost(const struct bi_meter *m,
				 const struct bi_meter_cfg *c, u64 units)
{
	if (bi_likely(!c->wfixed))
		return (s64)bi_min_u64(units, S64_MAX);
	return c->wfixed > 0 ? c->wfixed : bi_read_once(m->ewma_init);
}

struct bi_meter_cpu {
	struct bi_local local[BI_NR_KEYS];
};

/* bi_charge.flags */
/* Refused by a class policy with action=reject (S1-27): fail, do not park. */
#define BI_CHARGE_REJECT	(1U << 1)

/*
 * What one bio was charged at one level; kept with the bio until it
 * completes.  The request keys are charged reqs (the bios the lower device
 * sees), the work key its initial deduction @init (the bio's units, 1, or
 * initial=ewma's estimate): bi_charge_initial().
 */
struct bi_charge {
	struct bi_ticket ticket;	/* class stage; nr 0 = none charged */
	u64 units;			/* the bio's work units */
	s64 init;			/* work key / class stage charge at submission */
	u32 reqs;			/* the bio's requests at the lower device */
	u8 keys;			/* bit per enum bi_key charged */
	u8 dir;				/* enum bi_dir */
	u8 cls;				/* enum bi_class */
	u8 flags;			/* BI_CHARGE_* */
};

/*
 * A bio's charges along its tenant chain, innermost (own tenant) first.
 * @queue is the caller's, read by the admission and never written by it:
 * more bios wait behind this one, so a key that must wait for its global
 * bucket waits for a whole dispense batch that serves them all; a bio
 * alone waits for its own shortfall (bi_local_charge).
 */
struct bi_chain_charge {
	struct bi_charge lvl[BI_METER_MAX_DEPTH];
	u8 depth;			/* levels charged */
	bool queue;			/* bios of its tenant queue behind it */
};

void bi_meter_init(struct bi_meter *m, u64 now_ns);
void bi_meter_init_cpu(struct bi_meter_cpu *cpu, u64 now_ns);
void bi_meter_configure(struct bi_meter *m, const struct bi_tenant_conf *conf,
			const struct bi_dev_conf *dev, u64 now_ns);
void bi_meter_set_request_rate(struct bi_meter *m, u8 dir, u64 rps, u64 now_ns);
void bi_meter_classify(const struct bi_meter *m, const struct bi_io *io,
		       struct bi_charge *ch);
bool bi_meter_admit(struct bi_meter *m, struct bi_meter_cpu *cpu,
		    struct bi_charge *ch, u64 now_ns, u64 *retry_ns);
void bi_meter_force(struct bi_meter *m, struct bi_meter_cpu *cpu,
		    struct bi_charge *ch, u64 now_ns);
void bi_meter_complete(struct bi_meter *m, struct bi_meter_cpu *cpu,
		       struct bi_charge *ch, u64 now_ns);
void bi_meter_refund(struct bi_meter *m, struct bi_meter_cpu *cpu,
		     struct bi_charge *ch, u64 now_ns);
void bi_meter_adapt_tick(struct bi_meter *m, const struct bi_sample *s);

bool bi_meter_admit_chain(struct bi_meter *const *m, struct bi_meter_cpu *const *cpu,
			  u8 depth, const struct bi_io *io,
			  struct bi_chain_charge *cc, u64 now_ns, u64 *retry_ns);
bool bi_meter_admit_one(struct bi_meter *m, struct bi_meter_cpu *cpu,
			const struct bi_io *io, u64 units,
			struct bi_chain_charge *cc, u64 now_ns, u64 *retry_ns);
void bi_meter_force_chain(struct bi_meter *const *m, struct bi_meter_cpu *const *cpu,
			  u8 depth, const struct bi_io *io,
			  struct bi_chain_charge *cc, u64 now_ns);
void bi_meter_complete_chain(struct bi_meter *const *m, struct bi_meter_cpu *const *cpu,
			     struct bi_chain_charge *cc, u64 now_ns);
void bi_meter_refund_chain(struct bi_meter *const *m, struct bi_meter_cpu *const *cpu,
			   struct bi_chain_charge *cc, u64 now_ns);

static inline bool bi_key_is_units(u8 key)
{
	return key == BI_KEY_RUNITS || key == BI_KEY_WUNITS;
}

/* What @key was charged at submission (0 if it was not). */
static inline s64 bi_charge_initial(const struct bi_charge *ch, u8 key)
{
	if (!(ch->keys & (1U << key)))
		return 0;
	if (!bi_key_is_units(key))
		return ch->reqs;
	return ch->init;
}

/*
 * Is this bio held by any cap at all?  (No: admit without charging.)  A
 * class stage counts for both directions.  By a configuration loaded
 * already (the caller uses one copy for the units and this test).
 */
static inline bool bi_meter_cfg_capped(const struct bi_meter_cfg *c, u8 dir)
{
	/* any other bio is held by the write keys, as before */
	return c->capped & (1U << (dir == BI_DIR_READ ? BI_DIR_READ : BI_DIR_WRITE));
}

/*
 * What bi_meter_configure() stores in c->capped: for each direction, is a
 * key of it capped, or the class stage in force?
 */
static inline u8 bi_meter_capped_bits(u8 key_on, u8 cls_on)
{
	u8 r = (1U << BI_KEY_RUNITS) | (1U << BI_KEY_RREQS);
	u8 w = (1U << BI_KEY_WUNITS) | (1U << BI_KEY_WREQS);

	return ((key_on & r) || cls_on ? 1U << BI_DIR_READ : 0) |
	       ((key_on & w) || cls_on ? 1U << BI_DIR_WRITE : 0);
}

/*
 * bi_bio_data_units() by a loaded configuration's cost model: a plain
 * data bio's units (@write: a write) of @bytes, its rounding precomputed
 * (c->unit_round).  meter_test's cfg_data_units_match_bio_data_units.
 */
static inline u64 bi_meter_cfg_data_units(const struct bi_meter_cfg *c, bool write, u32 bytes)
{
	u64 units = ((u64)bytes + c->unit_round) >> c->cost.unit_shift;

	return write ? units * c->cost.write_unit_weight : units;
}

/* The same by the configuration published now. */
static inline bool bi_meter_capped(const struct bi_meter *m, u8 dir)
{
	return bi_meter_cfg_capped(bi_meter_cfg(m), dir);
}

/* The work key and the request key of a direction (enum bi_dir). */
static inline u8 bi_work_key(u8 dir)
{
	return dir == BI_DIR_READ ? BI_KEY_RUNITS : BI_KEY_WUNITS;
}

static inline u8 bi_request_key(u8 dir)
{
	return dir == BI_DIR_READ ? BI_KEY_RREQS : BI_KEY_WREQS;
}

/* Which of direction @dir's two keys are capped under @c (bit per enum bi_key). */
static inline u8 bi_meter_dir_keys(const struct bi_meter_cfg *c, u8 dir)
{
	return c->key_on & ((1U << bi_work_key(dir)) | (1U << bi_request_key(dir)));
}

/*
 * bi_meter_admit_fast() for a bio of direction @dir known to be outside the
 * system class (a data read or write without FUA, PREFLUSH or META), of
 * @units and @reqs (bi_io_requests), under configuration @c (loaded once
 * by the caller: bi_meter_cfg(@m)).  Meant for a constant @dir: its keys
 * fold to constants.
 */
static inline bool
bi_meter_admit_data_dir_cfg(struct bi_meter *m, const struct bi_meter_cfg *c,
			    struct bi_meter_cpu *cpu, u64 units, u32 reqs,
			    struct bi_chain_charge *cc, u64 now_ns, u8 dir)
{
	u8 wkey = bi_work_key(dir), rkey = bi_request_key(dir);
	u8 keys = bi_meter_dir_keys(c, dir);
	s64 wcost;
	struct bi_charge *ch = &cc->lvl[0];

	if (c->cls_on)
		return false;
	wcost = bi_meter_wcost(m, c, units);
	if ((keys & (1U << wkey)) && !bi_local_hit(&cpu->local[wkey], wcost, now_ns))
		return false;
	if ((keys & (1U << rkey)) && !bi_local_hit(&cpu->local[rkey], reqs, now_ns))
		return false;
	if (keys & (1U << wkey))
		bi_local_take(&cpu->local[wkey], wcost);
	if (keys & (1U << rkey))
		bi_local_take(&cpu->local[rkey], reqs);
	ch->ticket.nr = 0;
	ch->units = units;
	ch->reqs = reqs;
	ch->keys = keys;
	ch->dir = dir;
	ch->cls = BI_CLASS_MID;
	ch->init = wcost;
	ch->flags = 0;
	cc->depth = 1;
	return true;
}

/* The same by the configuration published now. */
static inline bool
bi_meter_admit_data_dir(struct bi_meter *m, struct bi_meter_cpu *cpu, u64 units,
			u32 reqs, struct bi_chain_charge *cc, u64 now_ns, u8 dir)
{
	return bi_meter_admit_data_dir_cfg(m, bi_meter_cfg(m), cpu, units, reqs, cc,
					   now_ns, dir);
}

/*
 * bi_meter_admit_exact - bi_meter_admit_data_dir() for a direction @dir
 * whose bit the caller found in its configuration's exact2 (a constant
 * @dir): both keys must hit, then the work key takes @units and the
 * request key @reqs.  The charge is the one bi_meter_admit_data_dir()
 * would record, {@units, init @units, @reqs, both keys, BI_CLASS_MID, no
 * ticket}, settled; it is not written here: the caller keeps it only where
 * a completion reads it.  Context: as bi_meter_admit_data_dir().
 */
static inline bool bi_meter_admit_exact(struct bi_meter_cpu *cpu, u32 units, u32 reqs,
					u64 now_ns, u8 dir)
{
	struct bi_local *w = &cpu->local[bi_work_key(dir)];
	struct bi_local *r = &cpu->local[bi_request_key(dir)];

	if (!bi_local_hit(w, units, now_ns) || !bi_local_hit(r, reqs, now_ns))
		return false;
	bi_local_take(w, units);
	bi_local_take(r, reqs);
	return true;
}

/*
 * bi_meter_admit_exact1 - bi_meter_admit_data_dir() for a direction whose
 * configuration's exact1 names its one capped key, @key: one hit of @n (the
 * bio's units for the work key, its requests for the request key), then the
 * take.  The charge is the one bi_meter_admit_data_dir() would record,
 * {units, init units, reqs, that key alone, BI_CLASS_MID, no ticket},
 * settled; it is not written here: the caller keeps it only where a
 * completion reads it.  Context: as bi_meter_admit_data_dir().
 */
static inline bool bi_meter_admit_exact1(struct bi_meter_cpu *cpu, u8 key, s64 n,
					 u64 now_ns)
{
	struct bi_local *l = &cpu->local[key];

	if (!bi_local_hit(l, n, now_ns))
		return false;
	bi_local_take(l, n);
	return true;
}

/*
 * bi_meter_admit_fast - the common admission of bi_meter_admit_one(),
 * inline: a level without a class stage whose local buckets on this CPU
 * cover a bio outside the system class.  Then the bio is charged exactly as
 * bi_meter_admit_one() would charge it (same keys, same *@cc) and true is
 * returned; otherwise nothing is changed, false is returned, and the caller
 * goes the general way.  Both keys are checked before either is charged, so
 * the all-or-nothing rule needs no undo here.  @units: the bio's units by
 * @m's cost model.  One copy per direction, so the keys are constants.
 * Context: as bi_meter_admit_one (IRQs off, on the CPU owning @cpu).
 */
static inline bool bi_meter_admit_fast(struct bi_meter *m, struct bi_meter_cpu *cpu,
				       const struct bi_io *io, u64 units,
				       struct bi_chain_charge *cc, u64 now_ns)
{
	/* the system class is forced, the general way */
	if (bi_io_is_sys(io))
		return false;
	if (bi_io_dir(io) == BI_DIR_READ)
		return bi_meter_admit_data_dir(m, cpu, units, (u32)bi_io_requests(io), cc,
					       now_ns, BI_DIR_READ);
	return bi_meter_admit_data_dir(m, cpu, units, (u32)bi_io_requests(io), cc,
				       now_ns, BI_DIR_WRITE);
}

/*
 * bi_chain_settled - does completing @cc change nothing?  One level, no
 * class ticket, and the work key charged the bio's units exactly at
 * submission, so its correction (S0-25) is 0 whatever the dead-band: the
 * caller may skip bi_meter_complete_fast() (and its IRQs-off section)
 * and the charge's ledger is the same.  A refund is another matter (the
 * bio never reached the device: everything goes back).
 */
static inline bool bi_chain_settled(const struct bi_chain_charge *cc)
{
	const struct bi_charge *ch = &cc->lvl[0];

	return cc->depth == 1 && !ch->ticket.nr && (s64)ch->units == ch->init;
}

/* bi_meter_complete_fast() for one direction: @key constant. */
static inline void bi_meter_complete_fast_key(struct bi_meter *m,
					      struct bi_meter_cpu *cpu,
					      struct bi_charge *ch, u64 now_ns,
					      u8 key)
{
	s64 initial = ch->init;
	s64 diff = (s64)ch->units - initial;

	/* bi_local_correct(), the dead-band known to be there */
	if ((ch->keys & (1U << key)) && diff &&
	    bi_correction_due(&bi_meter_cfg(m)->db, initial, diff))
		bi_local_apply(&cpu->local[key], &m->key[key], diff, now_ns);
	ch->keys = 0;
}

/*
 * bi_meter_complete_fast - bi_meter_complete() with the work key's
 * correction inline (a class ticket goes the general way, out of line).
 * Context: as bi_meter_complete.
 */
static inline void bi_meter_complete_fast(struct bi_meter *m, struct bi_meter_cpu *cpu,
					  struct bi_charge *ch, u64 now_ns)
{
	if (bi_unlikely(ch->ticket.nr))
		bi_meter_complete(m, cpu, ch, now_ns);
	else if (ch->dir == BI_DIR_READ)
		bi_meter_complete_fast_key(m, cpu, ch, now_ns, BI_KEY_RUNITS);
	else
		bi_meter_complete_fast_key(m, cpu, ch, now_ns, BI_KEY_WUNITS);
}

#endif /* BLKISO_METER_H */
