/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkiso_charge.h - the charge a bio keeps for .end_io, shared by .map's
 * and .end_io's inline fast paths (blkiso_target.c) and the chain charge
 * (blkiso_charge.c): a bio's levels, and a one-level charge as the per-bio
 * area keeps it.
 */
#ifndef BLKISO_CHARGE_H
#define BLKISO_CHARGE_H

#include "blkiso.h"

struct blkiso_bio_ext *blkiso_ext_get(struct blkiso_bio *pb);
void blkiso_ext_put(struct blkiso_bio *pb);
u8 blkiso_levels_chain(struct blkiso_bio *pb, struct blkiso_tenant *t, u8 dir);
void blkiso_refund(struct blkiso_bio *pb, u64 now);

/*
 * Inline for a tenant without a configured ancestor (@dir constant there):
 * @c is @t's meter configuration as loaded for the bio's units.
 */
static __always_inline u8 blkiso_levels(struct blkiso_bio *pb, struct blkiso_tenant *t,
					const struct bi_meter_cfg *c, u8 dir)
{
	if (likely(!READ_ONCE(t->parent))) {
		pb->level0 = t;
		/* a branch: the fast paths test it at once (no setcc, store, test) */
		if (bi_meter_cfg_capped(c, dir))
			return 1;
		return 0;
	}
	return blkiso_levels_chain(pb, t, dir);
}

/* Keep a one-level charge without a ticket in the per-bio area. */
static __always_inline void blkiso_charge1_keep(struct blkiso_bio *pb,
						const struct bi_charge *ch)
{
	pb->ch.units = ch->units;
	pb->ch.init = ch->init;
	pb->ch.reqs = ch->reqs;
	pb->ch.keys = ch->keys;
	pb->ch.cls = ch->cls;
	pb->charged = 1;
}

/*
 * The charge .map's fast path made with bi_meter_admit_exact() and kept as
 * BLKISO_END_EXACT, whole in the per-bio area again: the work key charged
 * the bio's units exactly, the request key pb->ch.reqs, at its one level
 * (pb->level0), in BI_CLASS_MID; or bi_meter_admit_exact1()'s, kept as
 * BLKISO_END_EXACT1 with its one key in pb->ch.keys.  .end_io's general way, first.
 */
static __always_inline void blkiso_charge1_exact(struct blkiso_bio *pb)
{
	pb->ch.units = pb->units;
	pb->ch.init = pb->units;
	if (pb->end & BLKISO_END_EXACT)	/* else BLKISO_END_EXACT1: keys kept */
		pb->ch.keys = (1U << bi_work_key(pb->dir)) | (1U << bi_request_key(pb->dir));
	pb->ch.cls = BI_CLASS_MID;
	pb->charged = 1;
}

/* That charge as the core has it (no ticket), for its correction. */
static __always_inline void blkiso_charge1_load(const struct blkiso_bio *pb,
						struct bi_charge *ch)
{
	ch->ticket.nr = 0;
	ch->units = pb->ch.units;
	ch->init = pb->ch.init;
	ch->reqs = pb->ch.reqs;
	ch->keys = pb->ch.keys;
	ch->dir = pb->dir;
	ch->cls = pb->ch.cls;
	ch->flags = 0;
}

#endif /* BLKISO_CHARGE_H */
