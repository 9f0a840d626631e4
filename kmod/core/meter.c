// SPDX-License-Identifier: GPL-2.0
/*
 * meter.c - a tenant's admission through its throttle keys (see meter.h).
 */
#include "meter.h"
#include "classify.h"
#include "units.h"

static const u8 bi_dir_keys[BI_NR_DIRS][2] = {
	[BI_DIR_READ] = { BI_KEY_RUNITS, BI_KEY_RREQS },
	[BI_DIR_WRITE] = { BI_KEY_WUNITS, BI_KEY_WREQS },
};

static bool bi_key_is_units(u8 key)
{
	return key == BI_KEY_RUNITS || key == BI_KEY_WUNITS;
}

void bi_meter_init(struct bi_meter *m, u64 now_ns)
{
	u8 k;

	*m = (struct bi_meter){ 0 };
	for (k = 0; k < BI_NR_KEYS; k++)
		bi_global_init(&m->key[k], 0, 1, 0, now_ns);
	bi_cost_model_init(&m->cost);
	bi_rules_default(&m->rules);
}

void bi_meter_init_cpu(struct bi_meter_cpu *cpu, u64 now_ns)
{
	u8 k;

	for (k = 0; k < BI_NR_KEYS; k++)
		bi_local_init(&cpu->local[k], now_ns);
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
	u64 batch = 2 * BI_DISPENSE_MIN_BIOS *
		(bi_key_is_units(key) ? bi_bytes_to_units(dev->cost.unit_shift, 4096) :
					BI_REQUEST_COST);
	u64 lmax = bi_max_u64(bi_dev_conf_local_max(dev, cap), batch);

	return (s64)bi_min_u64(bi_min_u64(lmax, cap), BI_TOKENS_LIMIT);
}

/*
 * Apply a tenant's caps.  A key that becomes capped starts full (a burst's
 * worth, like a fresh io.max limit); a key that stays capped is retuned
 * keeping its balance (S0-31); an uncapped key is no longer consulted.
 */
void bi_meter_configure(struct bi_meter *m, const struct bi_tenant_conf *conf,
			const struct bi_dev_conf *dev, u64 now_ns)
{
	u8 on = 0, dir, k;
	u64 rate, cap;

	m->cost = dev->cost;
	m->rules = conf->rules;
	m->initial = conf->initial;
	m->db.units = (u32)bi_min_u64(conf->deadband_units, U32_MAX);
	m->db.pct = 0;
	for (dir = 0; dir < BI_NR_DIRS; dir++) {
		for (k = 0; k < 2; k++) {
			u8 key = bi_dir_keys[dir][k];
			struct bi_global *g = &m->key[key];

			if (bi_key_is_units(key)) {
				rate = bi_conf_rate_units(conf, &dev->cost, dir);
				cap = bi_conf_capacity(conf, rate);
			} else {
				rate = bi_conf_rate_requests(conf, dir);
				cap = bi_conf_burst_limit(conf, dir);
			}
			if (rate == BI_CONF_UNLIMITED)
				continue;
			cap = bi_min_u64(cap, BI_TOKENS_LIMIT);
			if (m->key_on & (1U << key))
				bi_global_set(g, rate, (s64)cap, now_ns);
			else
				bi_global_init(g, rate, (s64)cap, (s64)cap, now_ns);
			g->local_max = bi_meter_local_max(dev, key, cap);
			g->min_batch = g->local_max;
			on |= 1U << key;
		}
	}
	m->key_on = on;
}

/* Fill in what the charge depends on: direction, class and units. */
void bi_meter_classify(const struct bi_meter *m, const struct bi_io *io,
		       struct bi_charge *ch)
{
	*ch = (struct bi_charge){ 0 };
	ch->dir = bi_io_dir(io);
	ch->units = bi_io_units(&m->cost, io);
	ch->cls = bi_classify(&m->rules, io);
}

static s64 bi_initial_cost(const struct bi_meter *m, u8 key, u64 units)
{
	if (!bi_key_is_units(key))
		return BI_REQUEST_COST;
	return m->initial == BI_INITIAL_ONE ? 1 : (s64)units;
}

/*
 * Charge every capped key of the bio's direction, or none: when one key
 * cannot admit, the keys already charged get their tokens back and
 * *retry_ns says when the refusing key expects enough.
 */
bool bi_meter_admit(struct bi_meter *m, struct bi_meter_cpu *cpu,
		    struct bi_charge *ch, u64 now_ns, u64 *retry_ns)
{
	u8 i, j;

	for (i = 0; i < 2; i++) {
		u8 key = bi_dir_keys[ch->dir][i];
		s64 cost;

		if (!(m->key_on & (1U << key)))
			continue;
		cost = bi_initial_cost(m, key, ch->units);
		if (!bi_local_charge(&cpu->local[key], &m->key[key], cost,
				     now_ns, retry_ns)) {
			for (j = 0; j < i; j++) {
				u8 done = bi_dir_keys[ch->dir][j];

				if (ch->keys & (1U << done))
					bi_local_correct(&cpu->local[done], &m->key[done],
							 ch->initial[done], 0, NULL, now_ns);
			}
			ch->keys = 0;
			return false;
		}
		ch->initial[key] = cost;
		ch->keys |= 1U << key;
	}
	return true;
}

/* Charge without asking: system-class bios, and bios let through as debt. */
void bi_meter_force(struct bi_meter *m, struct bi_meter_cpu *cpu,
		    struct bi_charge *ch, u64 now_ns)
{
	u8 i;

	for (i = 0; i < 2; i++) {
		u8 key = bi_dir_keys[ch->dir][i];
		s64 cost;

		if (!(m->key_on & (1U << key)))
			continue;
		cost = bi_initial_cost(m, key, ch->units);
		bi_local_correct(&cpu->local[key], &m->key[key], 0, cost, NULL, now_ns);
		ch->initial[key] = cost;
		ch->keys |= 1U << key;
	}
}

/*
 * Correct the work keys to the bio's actual cost, its submitted units: a
 * target sees a completion's status, not how much of the bio transferred,
 * so a failed bio is charged its submitted size, and failing I/O
 * cannot be used to dodge the quota.  The request keys were charged their
 * whole cost already.
 */
void bi_meter_complete(struct bi_meter *m, struct bi_meter_cpu *cpu,
		       struct bi_charge *ch, u64 now_ns)
{
	u8 key = bi_dir_keys[ch->dir][0];

	if (ch->keys & (1U << key))
		bi_local_correct(&cpu->local[key], &m->key[key], ch->initial[key],
				 (s64)ch->units, &m->db, now_ns);
	ch->keys = 0;
}

/* Tick: hand an idle CPU's local tokens back to the global buckets. */
void bi_meter_reclaim(struct bi_meter *m, struct bi_meter_cpu *cpu, u64 now_ns)
{
	u8 k;

	for (k = 0; k < BI_NR_KEYS; k++)
		if (m->key_on & (1U << k))
			bi_local_reclaim(&cpu->local[k], &m->key[k], now_ns);
}
