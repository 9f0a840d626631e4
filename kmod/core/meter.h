/* SPDX-License-Identifier: GPL-2.0 */
/*
 * meter.h - one tenant's metering on one device: the throttle keys its
 * configuration caps, and the charge of a bio through them.
 *
 * A tenant's caps are enforced together, as io.max does: riops and wiops
 * by request keys (cost 1 per bio), runits/rbps and wunits/wbps by work
 * keys (cost = work units, bytes turned into units by the device's cost
 * model; the lower of the two caps wins, conf.c).  Each capped key is a
 * global bucket (dispense.c) with one local bucket per CPU, so the common
 * admission touches only the submitting CPU's local buckets.  Bios of the
 * system class (flush, FUA, PREFLUSH, META; A-17) are charged but never held
 * back, so journals are never priority-inverted behind data.
 *
 * A bio's charge: at submission each key of its direction is charged its
 * initial deduction (1 or the bio's units, per the tenant's "initial"
 * setting, A-07); at completion the work keys are corrected to the bio's
 * actual units (S0-25), refunding or deducting more; a failed bio is
 * charged its submitted size.  struct bi_charge, kept with the bio,
 * remembers what was charged so the correction is exact even if the
 * configuration changed in between.
 *
 * Concurrency contract:
 *   bi_meter_admit, bi_meter_force   submission or dispatch work item: on the
 *                                    CPU owning @cpu, IRQs off
 *   bi_meter_complete                completion (hard IRQ possible): on the
 *                                    CPU owning @cpu, IRQs off
 *   bi_meter_reclaim                 tick: on the CPU owning @cpu, IRQs off
 *   bi_meter_init                    before any other call; owns @m
 *   bi_meter_configure               configuration (process context),
 *                                    serialised against itself by the caller;
 *                                    the keys' own locks cover the rest
 *   bi_meter_init_cpu                owns @cpu (before publication)
 */
#ifndef BLKISO_METER_H
#define BLKISO_METER_H

#include "bi_shim.h"
#include "bucket.h"
#include "conf.h"
#include "dispense.h"

enum bi_key {
	BI_KEY_RUNITS,
	BI_KEY_WUNITS,
	BI_KEY_RREQS,
	BI_KEY_WREQS,
	BI_NR_KEYS,
};

struct bi_meter {
	struct bi_global key[BI_NR_KEYS];
	u8 key_on;			/* bit per enum bi_key: capped */
	u8 initial;			/* enum bi_initial */
	struct bi_deadband db;
	struct bi_cost_model cost;
	struct bi_rules rules;
};

struct bi_meter_cpu {
	struct bi_local local[BI_NR_KEYS];
};

/* What one bio was charged; kept with the bio until it completes. */
struct bi_charge {
	s64 initial[BI_NR_KEYS];	/* charged at submission, per key */
	u64 units;			/* the bio's work units */
	u8 keys;			/* bit per enum bi_key charged */
	u8 dir;				/* enum bi_dir */
	u8 cls;				/* enum bi_class */
};

void bi_meter_init(struct bi_meter *m, u64 now_ns);
void bi_meter_init_cpu(struct bi_meter_cpu *cpu, u64 now_ns);
void bi_meter_configure(struct bi_meter *m, const struct bi_tenant_conf *conf,
			const struct bi_dev_conf *dev, u64 now_ns);
void bi_meter_classify(const struct bi_meter *m, const struct bi_io *io,
		       struct bi_charge *ch);
bool bi_meter_admit(struct bi_meter *m, struct bi_meter_cpu *cpu,
		    struct bi_charge *ch, u64 now_ns, u64 *retry_ns);
void bi_meter_force(struct bi_meter *m, struct bi_meter_cpu *cpu,
		    struct bi_charge *ch, u64 now_ns);
void bi_meter_complete(struct bi_meter *m, struct bi_meter_cpu *cpu,
		       struct bi_charge *ch, u64 now_ns);
void bi_meter_reclaim(struct bi_meter *m, struct bi_meter_cpu *cpu, u64 now_ns);

/* Is this bio held by any cap at all?  (No: admit without charging.) */
static inline bool bi_meter_capped(const struct bi_meter *m, u8 dir)
{
	u8 mask = dir == BI_DIR_READ ?
		(1U << BI_KEY_RUNITS) | (1U << BI_KEY_RREQS) :
		(1U << BI_KEY_WUNITS) | (1U << BI_KEY_WREQS);

	return m->key_on & mask;
}

#endif /* BLKISO_METER_H */
