/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkiso_bio.h - what .map reads off a bio before it charges it: whose it
 * is (cgroup writeback's owner, the submitter, or the kernel), whether the
 * kernel waits on it, and how many bios the lower queue will make of it.
 * The helpers on every bio's way are inline here; the rest, out of line,
 * in blkiso_bio.c.
 */
#ifndef BLKISO_BIO_H
#define BLKISO_BIO_H

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/blk-cgroup.h>
#include <linux/sched.h>

#include "blkiso.h"

void blkiso_describe(struct bio *bio, struct bi_io *io);
struct cgroup *blkiso_folio_owner(struct folio *folio);

/*
 * The io cgroup's css @bio carries, or NULL for the kernel tenant: a
 * kernel thread's own bios carry the root's.  A kernel thread that works
 * for a cgroup carries it (loop's worker for a cgroup,
 * kthread_associate_blkcg(); a thread moved into a cgroup).  In .map,
 * after bio_set_dev(), which gives dm core's clone the current task's
 * (blkcg_css()).
 */
static __always_inline struct cgroup_subsys_state *blkiso_bio_css(struct bio *bio)
{
	struct cgroup_subsys_state *css = bio_blkcg_css(bio);

	if (!css || ((current->flags & PF_KTHREAD) && !cgroup_parent(css->cgroup)))
		return NULL;
	return css;
}

/*
 * A write the kernel waits on (BI_IO_KERNEL_WAITS): a swap write, or a
 * REQ_SYNC write of a kernel thread working for itself (the ordered data
 * jbd2 writes itself, on mounts without delalloc; sync(2)'s writeback).
 * Holding it behind its owner's quota would stall the journal or reclaim
 * for everyone, so it is charged and never parked.  A kernel thread
 * working for a cgroup (loop's worker sends its direct writes REQ_SYNC)
 * waits as the cgroup's own bios do.  In .map only: current is the
 * submitter.
 */
static __always_inline bool blkiso_kernel_waits(struct bio *bio)
{
	blk_opf_t opf = bio->bi_opf;

	return (opf & REQ_SWAP) ||
	       ((opf & REQ_SYNC) && (current->flags & PF_KTHREAD) &&
		!blkiso_bio_css(bio));
}

/*
 * The bios a remapped read or write becomes at the lower queue, which
 * splits it at its max_sectors and its chunk boundaries: what riops/wiops
 * count, as blk-throttle counts split bios.  From the size and the limits
 * (bi_split_count), one compare for a bio that fits; a stacked lower
 * device's limits are the stacked ones.
 */
static __always_inline u32 blkiso_lower_bios(const struct bio *bio)
{
	const struct queue_limits *lim = &bdev_get_queue(bio->bi_bdev)->limits;
	u32 sectors = bio_sectors(bio);

	if (likely(sectors <= lim->max_sectors && !lim->chunk_sectors))
		return 1;
	return bi_split_count(bio->bi_iter.bi_sector, sectors, lim->max_sectors,
			      lim->chunk_sectors);
}

/*
 * The owner of the folio under writeback that a data write carries (see
 * below), or NULL: the part of a bio's attribution both its cgroup and
 * its cgroup id start with.
 */
static __always_inline struct cgroup *blkiso_bio_wb_owner(struct bio *bio)
{
	if (bio_op(bio) == REQ_OP_WRITE && bio->bi_iter.bi_size) {
		struct folio *folio = page_folio(bio_page(bio));

		if (folio_test_writeback(folio))
			return blkiso_folio_owner(folio);
	}
	return NULL;
}

/*
 * The cgroup a bio is charged to (doc/metering.md, "A bio's way"): a write
 * of folios under writeback (page cache or swap), whoever submits it, to
 * the folio's owner (blkiso_folio_owner); any other bio, or a folio no
 * cgroup owns, to the io cgroup it carries: for dm core's clone, that of
 * the task running .map (bio_set_dev() gives a clone the current task's,
 * blkcg_css()).  NULL (the kernel tenant) for a kernel thread's own bios,
 * which carry the root's.  A kernel thread that works for a cgroup
 * carries it (loop's worker for a cgroup, kthread_associate_blkcg(); a
 * kernel thread moved into a cgroup, as jbd2 in blktests throtl/006):
 * those bios are that cgroup's, as io.max has them.  (dm core's own worker,
 * which sends again the bios that came while the device was suspended,
 * carries the root's: the original bio's cgroup is out of reach from the
 * clone.)  Reads and writes of other pages (direct I/O, bounce buffers)
 * pay one test each.  Caller is in an RCU read-side section.
 */
static __always_inline struct cgroup *blkiso_bio_cgroup(struct bio *bio)
{
	struct cgroup *owner = blkiso_bio_wb_owner(bio);
	struct cgroup_subsys_state *css;

	if (owner)
		return owner;
	css = blkiso_bio_css(bio);
	return css ? css->cgroup : NULL;
}

/*
 * The id of blkiso_bio_cgroup()'s cgroup, BLKISO_KERNEL_CGID for none: .map's
 * lookup key, without a test of a css's cgroup (never NULL).  Caller is in
 * an RCU read-side section.
 */
static __always_inline u64 blkiso_bio_cgid(struct bio *bio)
{
	struct cgroup *owner = blkiso_bio_wb_owner(bio);
	struct cgroup_subsys_state *css;

	if (owner)
		return cgroup_id(owner);
	css = blkiso_bio_css(bio);
	return css ? cgroup_id(css->cgroup) : BLKISO_KERNEL_CGID;
}

#endif /* BLKISO_BIO_H */
