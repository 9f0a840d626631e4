// SPDX-License-Identifier: GPL-2.0
/*
 * meter.c - a tenant's admission through its class stage and throttle keys,
 * and a bio's admission along its chain of tenants (see meter.h).
 */
#include "meter.h"
#include "classify.h"
#include "ctl_rate.h"
#include "units.h"

static const u8 bi_dir_keys[BI_NR_DIRS][2] = {
	[BI_DIR_READ] = { BI_KEY_RUNITS, BI_KEY_RREQS },
	[BI_DIR_WRITE] = { BI_KEY_WUNITS, BI_KEY_WREQS },
};

void bi_meter_init(struct bi_meter *m, u64 now_ns)
{
	u8 k;

	/* class buckets stay zero: a class gains its bucket with its rate */
	*m = (struct bi_meter){ 0 };
	m->auto_active = BI_MODE_WORK;	/* as bi_mode_init() */
	for (k = 0; k < BI_NR_KEYS; k++)
		bi_global_init(&m->key[k], 0, 1, 0, now_ns);
	bi_cost_model_init(&m->slot[0].cost);
	m->slot[0].unit_round = bi_unit_bytes(&m->slot[0].cost) - 1;
	m->cfg = &m->slot[0];
	bi_lock_init(&m->cls_lock);
}

void bi_meter_init_cpu(struct bi_meter_cpu *cpu, u64 now_ns)
{
	u8 k;

	for (k = 0; k < BI_NR_KEYS; k++)
		bi_local_init(&cpu->local[k], now_ns);
}

/*
 * Two batches of BI_DISPENSE_MIN_BIOS small (4 KiB) bios in @key's tokens:
 * the floor of a local share and of a lump.
 */
static u64 bi_meter_small_batches(const struct bi_dev_conf *dev, u8 key)
{
	return 2 * BI_DISPENSE_MIN_BIOS *
		(bi_key_is_units(key) ? bi_bytes_to_units(dev->cost.unit_shift, 4096) :
					BI_REQUEST_COST);
}

/*
 * A per-CPU local bucket holds local_max_pct of the capacity, but at least
 * two batches of BI_DISPENSE_MIN_BIOS small (4 KiB) bios, so that a CPU
 * meets the global lock well under once per 32 such bios even under a
 * small quota; never more than the capacity.  Worst-case over-admission
 * after idling: capacity + nr_cpus x local_max (doc/buckets.md).
 */
static s64 bi_meter_local_max(const struct bi_dev_conf *dev, u8 key, u64 cap)
{
	u64 lmax = bi_max_u64(bi_dev_conf_local_max(dev, cap), bi_meter_small_batches(dev, key));

	return (s64)bi_min_u64(lmax, cap);
}

/*
 * The batch a local bucket waits for under a biting quota: a local_max, but
 * at most a quarter of the capacity (a quarter of burst_ms of the rate), so
 * that a waiting bucket never comes near its capacity (dispense.c), and at
 * most a lump: BI_METER_LUMP_NS of the rate, or the local share's floor if
 * that is more.  The dispatcher sends what a batch admits in one run of
 * its work item, which no task on that CPU preempts, and a lump of large
 * bios is many lower requests: a local_max at 1.6 GB/s is five 1 MiB
 * reads, 45 requests of null_blk sent in one stretch of about 200 us, and
 * a QD1 tenant woken behind it on the same CPU waits that long (thirtieth
 * session, the bench's fast shape: its p99 6.1x solo under an rbps cap of
 * 1.6 GB/s on the neighbour, 2.1x with batches of one read, doc/bench.md).
 * Small bios are cheap to send, and under a small cap a CPU keeps meeting
 * the global lock well under once per 32 of them (issue 18).
 */
#define BI_METER_LUMP_NS	(BI_NSEC_PER_MSEC / 4)

static s64 bi_meter_min_batch(const struct bi_dev_conf *dev, u8 key, s64 local_max,
			      u64 cap, u64 rate)
{
	u64 lump = bi_max_u64(bi_mul_div_u64(rate, BI_METER_LUMP_NS, BI_NSEC_PER_SEC),
			      bi_meter_small_batches(dev, key));
	s64 batch = bi_min_s64(local_max, (s64)(cap / 4));

	/* @batch is under the capacity, so @lump needs no bound of its own */
	return bi_max_s64(bi_min_s64(batch, (s64)lump), 1);
}

/*
 * The policy a class is admitted by, as the class stage applies it: the
 * configured one (bi_conf_policy) without the buckets that have no rate.
 * An unrated primary bucket leaves the list empty: the class is not limited
 * and admits without charge.  An unrated bucket further down is skipped:
 * consulting it would admit everything and lift the class's own cap.
 * min_tokens=auto stays symbolic (BI_MIN_TOKENS_AUTO: the bio's initial
 * deduction, S0-30); SYS is charged but never held back.
 */
static void bi_meter_class_policy(const struct bi_tenant_conf *conf, u8 cls,
				  u8 rated, struct bi_policy *out)
{
	const struct bi_class_conf *cc = &conf->cls[cls];
	s64 min = cc->min_tokens == BI_CONF_INHERIT ? conf->min_tokens :
						      cc->min_tokens;
	struct bi_policy p;
	u8 i;

	bi_conf_policy(conf, cls, 1, &p);
	*out = p;
	out->nr_buckets = 0;
	if (min == BI_CONF_MIN_AUTO)
		out->min_tokens = BI_MIN_TOKENS_AUTO;
	if (cls == BI_CLASS_SYS)
		out->min_tokens = BI_MIN_TOKENS_NEVER;
	if (!p.nr_buckets || p.bucket[0] >= BI_NR_CLASSES ||
	    !(rated & (1U << p.bucket[0])))
		return;
	for (i = 0; i < p.nr_buckets && i < BI_POLICY_MAX_BUCKETS; i++)
		if (p.bucket[i] < BI_NR_CLASSES && (rated & (1U << p.bucket[i])))
			out->bucket[out->nr_buckets++] = p.bucket[i];
}

/*
 * Class buckets follow the keys' rules: one that gains a rate starts full,
 * one that keeps it is retuned keeping its balance (S0-31), one that loses
 * it is no longer consulted (bios in flight still correct it: harmless).
 * Returns the rated classes' bits.
 */
static u8 bi_meter_configure_classes(struct bi_meter *m,
				     const struct bi_tenant_conf *conf,
				     u64 now_ns)
{
	unsigned long flags;
	u8 rated = 0, c;
	u64 rate, cap;

	flags = bi_lock_irqsave(&m->cls_lock);
	for (c = 0; c < BI_NR_CLASSES; c++) {
		rate = bi_conf_class_rate(conf, c);
		if (rate == BI_CONF_UNLIMITED)
			continue;
		cap = bi_conf_capacity(conf, rate);
		if (m->cls_rated & (1U << c))
			bi_bucket_set(&m->cls[c], rate, (s64)cap, now_ns);
		else
			bi_bucket_init(&m->cls[c], rate, (s64)cap, (s64)cap, now_ns);
		rated |= 1U << c;
	}
	for (c = 0; c < BI_NR_CLASSES; c++)
		bi_meter_class_policy(conf, c, rated, &m->policy[c]);
	m->cls_rated = rated;
	bi_unlock_irqrestore(&m->cls_lock, flags);
	return rated;
}

/*
 * mode=request (S0-05): a direction's work cap C is not a bucket but the
 * rate controller's target (ctl_rate); the request key is the bucket, its
 * rate the controller's cap, set each tick by the caller through
 * bi_meter_set_request_rate().  It starts at the iops cap if there is one,
 * else at C x b (S0-13).  Returns the request rate (req/s) and *@cap.
 */
static u64 bi_meter_request_mode_rate(const struct bi_tenant_conf *conf,
				      const struct bi_dev_conf *dev, u8 dir,
				      u64 *cap)
{
	u64 c = bi_conf_rate_units(conf, &dev->cost, dir), rate;

	if (c == BI_CONF_UNLIMITED)
		return BI_CONF_UNLIMITED;
	rate = bi_rate_initial_cap_mrps(c, BI_RATE_INIT_B_PERMILLE_DEF) / BI_MRPS_PER_RPS;
	rate = bi_max_u64(rate, 1);
	*cap = conf->burst_limit ? conf->burst_limit :
	       bi_max_u64(BI_BURST_LIMIT_MIN, rate * BI_BURST_LIMIT_PCT / 100);
	return rate;
}

/*
 * Apply a tenant's caps.  A key that becomes capped starts full (a burst's
 * worth, like a fresh io.max limit); a key that stays capped is retuned
 * keeping its balance (S0-31); an uncapped key is no longer consulted.
 * Class buckets likewise (bi_meter_configure_classes).  In request mode
 * the work caps become the rate controller's targets (above); mode=auto
 * configures the mechanism its selector chose, m->auto_active (S0-33: the
 * caller sets it from bi_mode_tick() and configures again on a change).
 */
void bi_meter_configure(struct bi_meter *m, const struct bi_tenant_conf *conf,
			const struct bi_dev_conf *dev, u64 now_ns)
{
	u8 mode = conf->mode == BI_MODE_AUTO ? m->auto_active : conf->mode;
	const struct bi_meter_cfg *old = m->cfg;	/* the writer's own */
	struct bi_meter_cfg *c = &m->slot[old == &m->slot[0]];
	u64 hold_ns = (u64)bi_dev_conf_dispense_hold_ms(dev) * BI_NSEC_PER_MSEC;
	u8 on = 0, dir, k;
	u64 rate, cap;
	s64 lmax;

	bi_memzero(c, sizeof(*c));
	c->cost = dev->cost;
	c->unit_round = bi_unit_bytes(&c->cost) - 1;
	c->rules = conf->rules;
	if (conf->initial == BI_INITIAL_EWMA && old->initial != BI_INITIAL_EWMA) {
		bi_adapt_init(&m->ad, 1, true);	/* the seeds' start: 1 unit */
		bi_write_once(m->ewma_init, m->ad.initial);
	}
	m->ad.enabled = conf->initial == BI_INITIAL_EWMA;
	m->ad.adapt_pct = conf->adapt_pct;
	c->initial = conf->initial;
	c->wfixed = conf->initial == BI_INITIAL_ONE ? 1 :
		    conf->initial == BI_INITIAL_FIXED ? (s64)conf->initial_units :
		    conf->initial == BI_INITIAL_EWMA ? BI_WFIXED_EWMA : 0;
	c->db.units = (u32)bi_min_u64(conf->deadband_units, U32_MAX);
	for (dir = 0; dir < BI_NR_DIRS; dir++) {
		for (k = 0; k < 2; k++) {
			u8 key = bi_dir_keys[dir][k];

			if (bi_key_is_units(key)) {
				rate = mode == BI_MODE_REQUEST ? BI_CONF_UNLIMITED :
				       bi_conf_rate_units(conf, &dev->cost, dir);
				cap = bi_conf_capacity(conf, rate);
			} else {
				rate = bi_conf_rate_requests(conf, dir);
				cap = bi_conf_burst_limit(conf, dir);
				if (rate == BI_CONF_UNLIMITED && mode == BI_MODE_REQUEST)
					rate = bi_meter_request_mode_rate(conf, dev, dir, &cap);
			}
			if (rate == BI_CONF_UNLIMITED)
				continue;
			/*
			 * cap < BI_TOKENS_LIMIT: the grammar's rates (at most
			 * 2^45 units/s: 2^50 B/s at 512-byte units, weight 16)
			 * times its longest burst_ms (60 s) stay under 2^51, a
			 * burst_limit under 2^41; the bucket clamps anyway.
			 */
			lmax = bi_meter_local_max(dev, key, cap);
			bi_global_tune(&m->key[key], !(old->key_on & (1U << key)), rate,
				       (s64)cap, lmax,
				       bi_meter_min_batch(dev, key, lmax, cap, rate), hold_ns,
				       now_ns);
			on |= 1U << key;
		}
	}
	c->key_on = on;
	c->cls_on = bi_meter_configure_classes(m, conf, now_ns) != 0;
	c->capped = bi_meter_capped_bits(on, c->cls_on);
	for (dir = 0; dir < BI_NR_DIRS; dir++) {
		u8 both = (1U << bi_work_key(dir)) | (1U << bi_request_key(dir));

		if (c->cls_on || c->wfixed)
			continue;
		if ((on & both) == both)
			c->exact2 |= 1U << dir;
		else
			c->exact1[dir] = on & both;	/* one key, or none */
	}
	/* every bucket it names is ready: publish it whole */
	bi_store_release(&m->cfg, c);
}

/*
 * The rate controller's new cap for a direction's request key (request
 * mode), in req/s, at least 1; the balance is kept (S0-31).  Same context
 * as bi_meter_configure; the key's lock is taken inside.
 */
void bi_meter_set_request_rate(struct bi_meter *m, u8 dir, u64 rps, u64 now_ns)
{
	u8 key = bi_request_key(dir);
	struct bi_global *g = &m->key[key];
	unsigned long flags;

	if (!(m->cfg->key_on & (1U << key)))
		return;
	flags = bi_lock_irqsave(&g->lock);
	bi_bucket_set(&g->b, bi_max_u64(rps, 1), g->b.max_tokens, now_ns);
	bi_unlock_irqrestore(&g->lock, flags);
}

/* Fill in what the charge depends on under @c: direction, class and units. */
static void bi_meter_classify_cfg(const struct bi_meter_cfg *c, const struct bi_io *io,
				  struct bi_charge *ch)
{
	/* ticket.nr = 0 marks the ticket empty; bi_admit() fills the rest */
	ch->ticket.nr = 0;
	ch->keys = 0;
	ch->flags = 0;
	ch->dir = bi_io_dir(io);
	ch->units = bi_io_units(&c->cost, io);
	ch->reqs = (u32)bi_io_requests(io);
	/* Without a class stage only the system class matters: skip the rules. */
	if (c->cls_on)
		ch->cls = bi_classify(&c->rules, io);
	else
		ch->cls = bi_io_is_sys(io) ? BI_CLASS_SYS : BI_CLASS_MID;
}

/* Fill in what the charge depends on: direction, class and units. */
void bi_meter_classify(const struct bi_meter *m, const struct bi_io *io,
		       struct bi_charge *ch)
{
	bi_meter_classify_cfg(bi_meter_cfg(m), io, ch);
}

/*
 * The initial deduction of the work key and the class stage, fixed
 * at the first charge so that the correction matches it whatever the
 * configuration says by then.
 */
static inline void bi_set_initial(const struct bi_meter *m,
				  const struct bi_meter_cfg *c, struct bi_charge *ch)
{
	ch->init = bi_meter_wcost(m, c, ch->units);
}

static inline s64 bi_work_initial(const struct bi_charge *ch)
{
	return ch->init;
}

/*
 * Give back what the keys were charged (an exact undo at the same time):
 * a key not charged has an initial of 0, a correction of 0 changes nothing.
 */
static void bi_meter_keys_undo(struct bi_meter *m, struct bi_meter_cpu *cpu,
			       struct bi_charge *ch, u64 now_ns)
{
	u8 i;

	for (i = 0; i < 2; i++) {
		u8 key = bi_dir_keys[ch->dir][i];

		bi_local_correct(&cpu->local[key], &m->key[key],
				 bi_charge_initial(ch, key), 0, NULL, now_ns);
	}
	ch->keys = 0;
}

/*
 * Charge every capped key of the bio's direction, or none: when one key
 * cannot admit, the keys already charged get their tokens back and
 * *retry_ns says when the refusing key expects enough.
 */
static inline bool bi_meter_keys_admit(struct bi_meter *m, struct bi_meter_cpu *cpu,
				       const struct bi_meter_cfg *c,
				       struct bi_charge *ch, bool queue, u64 now_ns,
				       u64 *retry_ns)
{
	/* the work key, then the request key, of the bio's direction */
	u8 wkey = bi_dir_keys[ch->dir][0], rkey = bi_dir_keys[ch->dir][1];
	u8 on = c->key_on;

	bi_set_initial(m, c, ch);
	if (on & (1U << wkey)) {
		/* the first key: refused, nothing is charged yet */
		if (!bi_local_charge(&cpu->local[wkey], &m->key[wkey],
				     bi_work_initial(ch), queue, now_ns, retry_ns))
			return false;
		ch->keys |= 1U << wkey;
	}
	if (on & (1U << rkey)) {
		if (!bi_local_charge(&cpu->local[rkey], &m->key[rkey],
				     ch->reqs, queue, now_ns, retry_ns)) {
			bi_meter_keys_undo(m, cpu, ch, now_ns);
			return false;
		}
		ch->keys |= 1U << rkey;
	}
	return true;
}

/*
 * The class stage: admit by the class's policy over the class buckets, or
 * with @force charge without asking.  On admission @took[c] is what class
 * bucket c actually lost (a floor may forgive part of a charge, so the
 * ticket's record is not the exact undo).  On refusal *@retry_ns is the
 * earliest time a bucket of the policy could admit, and BI_CHARGE_REJECT
 * is set in ch->flags if the policy says so (the callers clear the flags
 * when they classify the bio).  An unlimited class leaves the ticket empty.
 */
static BI_NOINLINE bool bi_meter_classes_admit(struct bi_meter *m,
					       const struct bi_meter_cfg *cf,
					       struct bi_charge *ch, bool force,
					       u64 now_ns, u64 *retry_ns,
					       s64 *took)
{
	const struct bi_policy *p;
	struct bi_policy forced;
	u64 before[BI_NR_CLASSES];
	enum bi_verdict v = BI_VERDICT_ADMIT;
	unsigned long flags;
	s64 initial;
	u8 c;

	bi_set_initial(m, cf, ch);
	initial = bi_work_initial(ch);
	flags = bi_lock_irqsave(&m->cls_lock);
	p = &m->policy[ch->cls];
	/*
	 * The class stage as configured now (the lock's), not as @cf knew it:
	 * without a rated class every policy is empty.
	 */
	if (!p->nr_buckets)
		goto out;
	if (force) {
		forced = *p;
		forced.min_tokens = BI_MIN_TOKENS_NEVER;
		p = &forced;
	}
	for (c = 0; c < BI_NR_CLASSES; c++)
		before[c] = m->cls[c].charged;
	v = bi_admit(m->cls, p, initial, now_ns, &ch->ticket);
	if (v == BI_VERDICT_ADMIT) {
		for (c = 0; c < BI_NR_CLASSES; c++)
			took[c] = (s64)(m->cls[c].charged - before[c]);
	} else {
		ch->ticket.nr = 0;
		*retry_ns = bi_admit_ready_at_ns(m->cls, p, initial, now_ns);
		if (v == BI_VERDICT_REJECT)
			ch->flags |= BI_CHARGE_REJECT;
	}
out:
	bi_unlock_irqrestore(&m->cls_lock, flags);
	return v == BI_VERDICT_ADMIT;
}

/* Give back a class-stage admission: each bucket exactly what it lost. */
static void bi_meter_classes_undo(struct bi_meter *m, struct bi_charge *ch,
				  const s64 *took, u64 now_ns)
{
	unsigned long flags;
	u8 c;

	if (!ch->ticket.nr)
		return;
	flags = bi_lock_irqsave(&m->cls_lock);
	for (c = 0; c < BI_NR_CLASSES; c++)
		if (took[c] > 0)
			bi_bucket_refund(&m->cls[c], took[c], now_ns);
	bi_unlock_irqrestore(&m->cls_lock, flags);
	ch->ticket = (struct bi_ticket){ 0 };
}

/* One level with a class stage: classes, then keys; all or nothing. */
static bool bi_meter_admit_level(struct bi_meter *m, struct bi_meter_cpu *cpu,
				 const struct bi_meter_cfg *c,
				 struct bi_charge *ch, bool queue, u64 now_ns,
				 u64 *retry_ns, s64 *took)
{
	if (!bi_meter_classes_admit(m, c, ch, false, now_ns, retry_ns, took))
		return false;
	if (bi_meter_keys_admit(m, cpu, c, ch, queue, now_ns, retry_ns))
		return true;
	bi_meter_classes_undo(m, ch, took, now_ns);
	return false;
}

static BI_NOINLINE bool bi_meter_admit_classes(struct bi_meter *m,
					       struct bi_meter_cpu *cpu,
					       const struct bi_meter_cfg *c,
					       struct bi_charge *ch, u64 now_ns,
					       u64 *retry_ns)
{
	s64 took[BI_NR_CLASSES];

	return bi_meter_admit_level(m, cpu, c, ch, false, now_ns, retry_ns, took);
}

/*
 * Admit a classified bio to one tenant: its class stage (if any class is
 * rated), then every capped key of its direction; all or nothing.  Refused,
 * nothing stays charged, *retry_ns is the earliest time the refusing stage
 * could admit, and BI_CHARGE_REJECT in ch->flags asks to fail the bio
 * rather than park it.  System-class bios are the caller's to force
 * (bi_meter_force), as the classes never hold them but the keys might.
 * The bio is taken to be alone (no queue behind it, bi_chain_charge).
 */
bool bi_meter_admit(struct bi_meter *m, struct bi_meter_cpu *cpu,
		    struct bi_charge *ch, u64 now_ns, u64 *retry_ns)
{
	const struct bi_meter_cfg *c = bi_meter_cfg(m);

	if (bi_unlikely(c->cls_on))
		return bi_meter_admit_classes(m, cpu, c, ch, now_ns, retry_ns);
	return bi_meter_keys_admit(m, cpu, c, ch, false, now_ns, retry_ns);
}

/* bi_meter_force() under @c. */
static void bi_meter_force_cfg(struct bi_meter *m, struct bi_meter_cpu *cpu,
			       const struct bi_meter_cfg *c, struct bi_charge *ch,
			       u64 now_ns)
{
	s64 took[BI_NR_CLASSES];
	u64 retry;
	u8 i;

	bi_set_initial(m, c, ch);
	if (bi_unlikely(c->cls_on))
		bi_meter_classes_admit(m, c, ch, true, now_ns, &retry, took);
	for (i = 0; i < 2; i++) {
		u8 key = bi_dir_keys[ch->dir][i];
		s64 cost;

		if (!(c->key_on & (1U << key)))
			continue;
		cost = bi_key_is_units(key) ? bi_work_initial(ch) : ch->reqs;
		bi_local_correct(&cpu->local[key], &m->key[key], 0, cost, NULL, now_ns);
		ch->keys |= 1U << key;
	}
}

/* Charge without asking: system-class bios, and bios let through as debt. */
void bi_meter_force(struct bi_meter *m, struct bi_meter_cpu *cpu,
		    struct bi_charge *ch, u64 now_ns)
{
	bi_meter_force_cfg(m, cpu, bi_meter_cfg(m), ch, now_ns);
}

/* Completion side of the class stage: the ticket's own chain (S1-25). */
static BI_NOINLINE void bi_meter_classes_complete(struct bi_meter *m,
						  const struct bi_deadband *db,
						  struct bi_charge *ch,
						  u64 now_ns)
{
	unsigned long flags = bi_lock_irqsave(&m->cls_lock);

	bi_ticket_correct(m->cls, &ch->ticket, (s64)bi_min_u64(ch->units, S64_MAX),
			  db, now_ns);
	bi_unlock_irqrestore(&m->cls_lock, flags);
	ch->ticket.nr = 0;
}

/*
 * Correct the work key and the class stage to the bio's actual cost, its
 * submitted units: a target sees a completion's status, not how much of
 * the bio transferred, so a failed bio is charged its submitted size
 * and failing I/O cannot be used to dodge the quota.  The request
 * keys were charged their whole cost already.  The class correction lands
 * on the buckets the ticket names, whatever the policy says now (S1-25).
 */
void bi_meter_complete(struct bi_meter *m, struct bi_meter_cpu *cpu,
		       struct bi_charge *ch, u64 now_ns)
{
	const struct bi_meter_cfg *c = bi_meter_cfg(m);
	u8 key = bi_dir_keys[ch->dir][0];

	if (ch->keys & (1U << key))
		bi_local_correct(&cpu->local[key], &m->key[key],
				 bi_work_initial(ch), (s64)ch->units, &c->db, now_ns);
	if (bi_unlikely(ch->ticket.nr))
		bi_meter_classes_complete(m, &c->db, ch, now_ns);
	ch->keys = 0;
}

/*
 * A bio the device never took: it completed with BLK_STS_AGAIN from below
 * (a REQ_NOWAIT bio the lower queue would have had to split or wait for;
 * io_uring resubmits it from a worker).  Everything it was charged goes
 * back, every key and its class ticket, so that the retry is charged once.
 */
void bi_meter_refund(struct bi_meter *m, struct bi_meter_cpu *cpu,
		     struct bi_charge *ch, u64 now_ns)
{
	static const struct bi_deadband none;
	unsigned long flags;

	bi_meter_keys_undo(m, cpu, ch, now_ns);
	if (!ch->ticket.nr)
		return;
	flags = bi_lock_irqsave(&m->cls_lock);
	bi_ticket_correct(m->cls, &ch->ticket, 0, &none, now_ns);
	bi_unlock_irqrestore(&m->cls_lock, flags);
	ch->ticket.nr = 0;
}

/*
 * Tick (S0-29): fold the tick's completions @s into initial=ewma's
 * estimate of a bio's units; when it moves by more than adapt_pct, bios
 * are charged the new estimate at submission (and corrected to their
 * units at completion).  Other settings: nothing.
 */
void bi_meter_adapt_tick(struct bi_meter *m, const struct bi_sample *s)
{
	if (m->cfg->initial == BI_INITIAL_EWMA && bi_adapt_tick(&m->ad, s))
		bi_write_once(m->ewma_init, m->ad.initial);
}

/*
 * Classify @io at every level of the chain, by each level's own rules, under
 * the configuration @c[i] each level has now: the whole charge uses these.
 */
static u8 bi_chain_classify(struct bi_meter *const *m, u8 depth,
			    const struct bi_io *io, struct bi_chain_charge *cc,
			    const struct bi_meter_cfg **c)
{
	u8 i, n = (u8)bi_min_u64(depth, BI_METER_MAX_DEPTH);

	cc->depth = 0;
	for (i = 0; i < n; i++) {
		c[i] = bi_meter_cfg(m[i]);
		bi_meter_classify_cfg(c[i], io, &cc->lvl[i]);
	}
	return n;
}

/*
 * bi_meter_force_chain - charge @io at every level without asking (system
 * class, draining).  @m[0] is the bio's tenant, @m[1..] its nearest
 * configured ancestors, innermost first; @cpu[i] is @m[i]'s per-CPU part
 * on this CPU.  Levels beyond BI_METER_MAX_DEPTH are not charged.
 * Context: submission or dispatch, on the CPU owning every @cpu[i], IRQs off.
 */
void bi_meter_force_chain(struct bi_meter *const *m, struct bi_meter_cpu *const *cpu,
			  u8 depth, const struct bi_io *io,
			  struct bi_chain_charge *cc, u64 now_ns)
{
	const struct bi_meter_cfg *c[BI_METER_MAX_DEPTH];
	u8 i, n = bi_chain_classify(m, depth, io, cc, c);

	for (i = 0; i < n; i++)
		bi_meter_force_cfg(m[i], cpu[i], c[i], &cc->lvl[i], now_ns);
	cc->depth = n;
}

/*
 * bi_meter_admit_chain - admit @io to its tenant and its ancestors (io.max
 * semantics: every level's caps hold, A-21 strict).  Each level classifies
 * the bio with its own rules and cost model and admits it through its own
 * class stage and keys.  All levels or none: refused at level k, the levels
 * before k get back exactly what they were charged, *@retry_ns is level k's
 * earliest admission time and cc->lvl[k].flags may carry BI_CHARGE_REJECT.
 * A system-class bio is forced at every level and always admitted.
 * Context: submission or dispatch, on the CPU owning every @cpu[i], IRQs off.
 */
bool bi_meter_admit_chain(struct bi_meter *const *m, struct bi_meter_cpu *const *cpu,
			  u8 depth, const struct bi_io *io,
			  struct bi_chain_charge *cc, u64 now_ns, u64 *retry_ns)
{
	s64 took[BI_METER_MAX_DEPTH][BI_NR_CLASSES];
	const struct bi_meter_cfg *c[BI_METER_MAX_DEPTH];
	u8 i, n = bi_chain_classify(m, depth, io, cc, c);
	bool ok;

	if (n && cc->lvl[0].cls == BI_CLASS_SYS) {
		for (i = 0; i < n; i++)
			bi_meter_force_cfg(m[i], cpu[i], c[i], &cc->lvl[i], now_ns);
		cc->depth = n;
		return true;
	}
	for (i = 0; i < n; i++) {
		if (bi_unlikely(c[i]->cls_on))
			ok = bi_meter_admit_level(m[i], cpu[i], c[i], &cc->lvl[i],
						  cc->queue, now_ns, retry_ns, took[i]);
		else
			ok = bi_meter_keys_admit(m[i], cpu[i], c[i], &cc->lvl[i],
						 cc->queue, now_ns, retry_ns);
		if (!ok)
			goto undo;
	}
	cc->depth = n;
	return true;
undo:
	while (i--) {
		bi_meter_keys_undo(m[i], cpu[i], &cc->lvl[i], now_ns);
		bi_meter_classes_undo(m[i], &cc->lvl[i], took[i], now_ns);
	}
	return false;
}

/*
 * bi_meter_admit_one - bi_meter_admit_chain() for a chain of one level, the
 * common case, with the bio's units by @m's cost model (bi_io_units) given
 * by the caller, who has them already.  Same result, same *@cc.  A level
 * without a class stage and a bio outside the system class go straight to
 * the keys: no classification, no per-level arrays.
 * Context: submission or dispatch, on the CPU owning @cpu, IRQs off.
 */
bool bi_meter_admit_one(struct bi_meter *m, struct bi_meter_cpu *cpu,
			const struct bi_io *io, u64 units,
			struct bi_chain_charge *cc, u64 now_ns, u64 *retry_ns)
{
	const struct bi_meter_cfg *c = bi_meter_cfg(m);
	struct bi_charge *ch = &cc->lvl[0];

	if (bi_unlikely(c->cls_on || bi_io_is_sys(io)))
		return bi_meter_admit_chain(&m, &cpu, 1, io, cc, now_ns, retry_ns);
	ch->ticket.nr = 0;
	ch->keys = 0;
	ch->flags = 0;
	ch->dir = bi_io_dir(io);
	ch->cls = BI_CLASS_MID;
	ch->units = units;
	ch->reqs = (u32)bi_io_requests(io);
	cc->depth = 0;
	if (!bi_meter_keys_admit(m, cpu, c, ch, cc->queue, now_ns, retry_ns))
		return false;
	cc->depth = 1;
	return true;
}

/*
 * bi_meter_complete_chain - completion correction at every level charged
 * (bi_meter_complete).  @cpu[i] is @m[i]'s per-CPU part on the completing
 * CPU, which need not be the submitting one.
 * Context: completion (hard IRQ possible), on the CPU owning every @cpu[i],
 * IRQs off.
 */
void bi_meter_complete_chain(struct bi_meter *const *m, struct bi_meter_cpu *const *cpu,
			     struct bi_chain_charge *cc, u64 now_ns)
{
	u8 i;

	for (i = 0; i < cc->depth && i < BI_METER_MAX_DEPTH; i++)
		bi_meter_complete(m[i], cpu[i], &cc->lvl[i], now_ns);
	cc->depth = 0;
}

/* bi_meter_refund() at every level charged; context as bi_meter_complete_chain. */
void bi_meter_refund_chain(struct bi_meter *const *m, struct bi_meter_cpu *const *cpu,
			   struct bi_chain_charge *cc, u64 now_ns)
{
	u8 i;

	for (i = 0; i < cc->depth && i < BI_METER_MAX_DEPTH; i++)
		bi_meter_refund(m[i], cpu[i], &cc->lvl[i], now_ns);
	cc->depth = 0;
}
