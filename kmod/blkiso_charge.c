// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_charge.c - a bio's charge along its chain of tenants: the levels
 * it is charged to (its own tenant and its configured ancestors'), the
 * charge through the core's meters (kmod/core/meter.c) when it leaves
 * .map's inline fast path or the dispatcher retries it, where the charge
 * is kept until .end_io corrects it (the per-bio area, or a bio extension
 * from a mempool), the correction or refund of a charge kept in one, and
 * that pool.  .map's and .end_io's inline one-level charge is in
 * blkiso_target.c; the helpers both share are in blkiso_charge.h.
 */
#include <linux/slab.h>
#include <linux/mempool.h>
#include <linux/percpu.h>

#include "blkiso.h"
#include "blkiso_charge.h"

/*
 * Bio extensions (struct blkiso_bio_ext) kept in reserve for when the slab
 * cannot give one without sleeping: bios that need one at once beyond
 * these (nested or class-staged charges in flight) take the fallbacks.
 */
#define BLKISO_EXT_RESERVE	64

static struct kmem_cache *blkiso_ext_cache;
static mempool_t *blkiso_ext_pool;

/* @pb's extension, taken now if it has none; NULL: no memory.  Never sleeps. */
struct blkiso_bio_ext *blkiso_ext_get(struct blkiso_bio *pb)
{
	if (!pb->ext) {
		pb->ext = mempool_alloc(blkiso_ext_pool, GFP_NOWAIT | __GFP_NOWARN);
		if (!pb->ext) {
			atomic_long_inc(&blkiso_ext_failures);
			return NULL;
		}
		atomic_long_inc(&blkiso_live_bio_ext);
	}
	return pb->ext;
}

/* Give @pb's extension back: at its end, when nothing reads it any more. */
void blkiso_ext_put(struct blkiso_bio *pb)
{
	mempool_free(pb->ext, blkiso_ext_pool);
	pb->ext = NULL;
	atomic_long_dec(&blkiso_live_bio_ext);
}

/*
 * The tenants a bio is charged to: its own and its configured ancestors',
 * those capped in its direction, innermost first (at most
 * BI_METER_MAX_DEPTH).  Ancestors are found by the tenants' parent links,
 * which the configuration path keeps up to date.  The bio holds each
 * ancestor level until its end (->held, the lifetime rule in blkiso.h).
 * Caller is in the RCU read-side section of the bio's tenant lookup.
 */
noinline u8 blkiso_levels_chain(struct blkiso_bio *pb, struct blkiso_tenant *t,
				      u8 dir)
{
	struct blkiso_tenant *own = t;
	u8 depth = 0;

	for (; t && depth < BI_METER_MAX_DEPTH; t = READ_ONCE(t->parent)) {
		if (!bi_meter_capped(&blkiso_quota(t)->meter, dir))
			continue;
		if (!depth)
			pb->level0 = t;
		else if (blkiso_ext_get(pb))
			pb->ext->up[depth - 1] = t;
		else
			break;	/* no memory: its innermost levels only */
		depth++;
		if (t != own) {
			this_cpu_inc(t->pcpu->held);
			pb->anc_held = true;
		}
	}
	return depth;
}

/*
 * A bio gives its ancestor levels back (blkiso_levels_chain): its last
 * access to them.  At its end, or when it is refused or failed unsent.
 */
noinline void blkiso_levels_put(struct blkiso_bio *pb)
{
	u8 i;

	for (i = 0; i < pb->depth; i++)
		if (blkiso_level(pb, i) != pb->tenant)
			this_cpu_dec(blkiso_level(pb, i)->pcpu->held);
	pb->anc_held = false;
}

/* This CPU's view of a bio's levels, for the chain calls.  IRQs off. */
static void blkiso_chain(const struct blkiso_bio *pb, struct bi_meter **m,
			 struct bi_meter_cpu **cpu)
{
	u8 i;

	for (i = 0; i < pb->depth; i++) {
		struct blkiso_tenant *lt = blkiso_level(pb, i);

		m[i] = &blkiso_quota(lt)->meter;
		cpu[i] = &this_cpu_ptr(lt->pcpu)->meter;
	}
}

/*
 * The charge of @pb as the core's chain charge: its extension's, or @tmp
 * filled from the per-bio area.  IRQs off.
 */
static struct bi_chain_charge *blkiso_charged(struct blkiso_bio *pb,
					      struct bi_chain_charge *tmp)
{
	if (pb->ch_ext)
		return &pb->ext->cc;
	blkiso_charge1_load(pb, &tmp->lvl[0]);
	tmp->depth = pb->charged;
	return tmp;
}

/*
 * Keep what an admission charged until .end_io corrects it: in the per-bio
 * area if it fits, else in the bio's extension.  Without memory for one,
 * correct it now (bi_meter_complete_chain): a bio's units are known from
 * its submission, so the correction is the same as at its end, only
 * earlier; what is lost is the refund of a bio that fails with
 * BLK_STS_AGAIN below (blkiso_refund).  IRQs off.
 */
static void blkiso_charge_keep(struct blkiso_bio *pb, struct bi_chain_charge *cc,
			       struct bi_meter **m, struct bi_meter_cpu **cpu, u64 now)
{
	pb->ch_ext = false;
	pb->charged = 0;
	if (!cc->depth)
		return;
	if (likely(cc->depth == 1 && !cc->lvl[0].ticket.nr)) {
		blkiso_charge1_keep(pb, &cc->lvl[0]);
		return;
	}
	if (blkiso_ext_get(pb)) {
		pb->ext->cc = *cc;
		pb->ch_ext = true;
		pb->charged = cc->depth;
		return;
	}
	blkiso_chain(pb, m, cpu);
	bi_meter_complete_chain(m, cpu, cc, now);
}

/*
 * Charge a bio through its levels (or force it: system class, draining).
 * Out of line: the map's inline fast path covers the common case.
 */
noinline bool blkiso_charge(struct blkiso_bio *pb, bool force, bool queue, u64 now,
			   u64 *retry)
{
	struct bi_meter *m[BI_METER_MAX_DEPTH];
	struct bi_meter_cpu *cpu[BI_METER_MAX_DEPTH];
	struct bi_chain_charge cc;
	bool ok;
	u8 i;

	cc.queue = queue;
	pb->ch.flags = 0;
	if (likely(pb->depth == 1 && !force)) {
		/* The common case: one level, no arrays. */
		struct blkiso_tenant *lt = pb->level0;
		u64 units = lt == pb->tenant ? pb->units :
			bi_io_units(&bi_meter_cfg(&blkiso_quota(lt)->meter)->cost, &pb->io);

		ok = bi_meter_admit_one(&blkiso_quota(lt)->meter, &this_cpu_ptr(lt->pcpu)->meter,
					&pb->io, units, &cc, now, retry);
	} else {
		blkiso_chain(pb, m, cpu);
		ok = force;
		if (force)
			bi_meter_force_chain(m, cpu, pb->depth, &pb->io, &cc, now);
		else
			ok = bi_meter_admit_chain(m, cpu, pb->depth, &pb->io, &cc, now,
						  retry);
	}
	if (ok) {
		blkiso_charge_keep(pb, &cc, m, cpu, now);
		return true;
	}
	/* refused: whether a class policy with action=reject refused it (S1-27) */
	for (i = 0; i < pb->depth; i++)
		pb->ch.flags |= cc.lvl[i].flags & BI_CHARGE_REJECT;
	return false;
}

/*
 * A bio that completed with BLK_STS_AGAIN from below never reached the
 * device (a REQ_NOWAIT bio the lower queue would have split or made wait);
 * io_uring resubmits it: everything it was charged goes back, so the retry
 * is charged once.  IRQs off.
 */
noinline void blkiso_refund(struct blkiso_bio *pb, u64 now)
{
	struct bi_meter *m[BI_METER_MAX_DEPTH];
	struct bi_meter_cpu *cpu[BI_METER_MAX_DEPTH];
	struct bi_chain_charge tmp;

	blkiso_chain(pb, m, cpu);
	bi_meter_refund_chain(m, cpu, blkiso_charged(pb, &tmp), now);
	pb->charged = 0;
}

/*
 * Completion correction of a charge kept in the bio's extension (more than
 * one level, or a class ticket).  IRQs off.
 */
noinline void blkiso_complete_chain(struct blkiso_bio *pb, u64 now)
{
	struct bi_meter *m[BI_METER_MAX_DEPTH];
	struct bi_meter_cpu *cpu[BI_METER_MAX_DEPTH];

	blkiso_chain(pb, m, cpu);
	bi_meter_complete_chain(m, cpu, &pb->ext->cc, now);
	pb->charged = 0;
}

int blkiso_charge_init(void)
{
	blkiso_ext_cache = KMEM_CACHE(blkiso_bio_ext, 0);
	if (!blkiso_ext_cache)
		return -ENOMEM;
	blkiso_ext_pool = mempool_create_slab_pool(BLKISO_EXT_RESERVE, blkiso_ext_cache);
	if (!blkiso_ext_pool) {
		kmem_cache_destroy(blkiso_ext_cache);
		return -ENOMEM;
	}
	return 0;
}

/* After the target is gone no bio holds an extension. */
void blkiso_charge_exit(void)
{
	mempool_destroy(blkiso_ext_pool);
	kmem_cache_destroy(blkiso_ext_cache);
}
