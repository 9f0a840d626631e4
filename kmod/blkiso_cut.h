/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkiso_cut.h - how .map cuts a bio (blkiso_cut.c), and the two checks
 * .map's fast path makes inline: a REQ_NOWAIT bio above a page, and the
 * rest of a cut REQ_NOWAIT bio coming back.
 */
#ifndef BLKISO_CUT_H
#define BLKISO_CUT_H

#include <linux/bio.h>

#include "blkiso.h"

void blkiso_chunk(struct bio *bio, u32 chunk_bytes);
void blkiso_nowait_unsplit_slow(struct bio *bio);
bool blkiso_depth_cut(struct blkiso_dev *dev, struct bio *bio, bool rest);
void blkiso_cap_cut(struct blkiso_dev *dev, struct bio *bio,
		    struct blkiso_tenant *t, bool rest);
bool blkiso_nw_rest_take(struct blkiso_dev *dev, sector_t sector);
void blkiso_nw_rests_clear(struct blkiso_dev *dev);

/* Issue 20: a REQ_NOWAIT bio above a page is looked at (blkiso_nowait_unsplit_slow()). */
static __always_inline void blkiso_nowait_unsplit(struct bio *bio)
{
	/* a request is at least a page (blk_queue_max_hw_sectors()) */
	if (unlikely(bio->bi_opf & REQ_NOWAIT) && bio->bi_iter.bi_size > PAGE_SIZE)
		blkiso_nowait_unsplit_slow(bio);
}

/*
 * A REQ_NOWAIT bio's flag, before its charge.  Is @bio the rest of a
 * REQ_NOWAIT bio the depth limit cut (blkiso_depth_cut())?  Then it loses
 * the flag: never refused, never sent whole with it.  Rests are noted only
 * where the depth limit is on, which sets dev->fb_all for good
 * (blkiso_fb_all()): .map does not look for one on a device whose
 * map_flags are 0, where a counted-only tenant's bio takes its short way
 * (issue 18: 5 instructions less for a REQ_NOWAIT bio, 2 for any other).
 *
 * A polled bio (io_uring's IOPOLL) loses the flag too, and so waits as a
 * blocking bio does: dm core takes a polled bio that ends with
 * BLK_STS_AGAIN back and sends it again from its own worker thread
 * (dm_handle_requeue()), whose bios are the kernel tenant's, so refusing
 * it would let it through uncharged (a riops=200 tenant read 67,000 IOPS
 * with fio --hipri).  Its caller polls until it ends, parked or not.
 */
static __always_inline bool blkiso_map_rest(struct blkiso_dev *dev, struct bio *bio)
{
	if (likely(!(bio->bi_opf & REQ_NOWAIT)))
		return false;
	if (unlikely(bio->bi_opf & REQ_POLLED)) {
		bio->bi_opf &= ~REQ_NOWAIT;
		return false;
	}
	if (!atomic_read(&dev->nw_rests_used) ||
	    !blkiso_nw_rest_take(dev, bio->bi_iter.bi_sector))
		return false;
	bio->bi_opf &= ~REQ_NOWAIT;
	return true;
}

#endif /* BLKISO_CUT_H */
