// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_cut.c - how .map cuts a read or write it does not send whole
 * (blkiso_target.c calls these; blkiso_cut.h), and the notes that let it
 * know the rest of a cut REQ_NOWAIT bio:
 *
 *   chunk_bytes        the first chunk of a larger bio (blkiso_chunk())
 *   the depth limit    a bound tenant's first request of the lower queue,
 *                      so that a limit in bios counts requests
 *                      (blkiso_depth_cut(), issue 20)
 *   a byte cap         a capped tenant's bio of more requests than half
 *                      the lower slots, request by request (blkiso_cap_cut())
 *   REQ_NOWAIT         a bio of an unbound tenant the lower queue would
 *                      split loses the flag (blkiso_nowait_unsplit_slow());
 *                      a cut one loses it on its first piece, and the rest,
 *                      which dm core sends through .map again from the
 *                      submitting task still REQ_NOWAIT, is known by a note
 *                      of the task and the sector where it begins (struct
 *                      blkiso_nw_rest, per device), taken when it comes
 *
 * dm core sends the rest of every cut bio through .map again as a new bio
 * (dm_accept_partial_bio()), classified, charged and parked on its own.
 */
#include <linux/sched.h>
#include <linux/jiffies.h>
#include <linux/atomic.h>

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/device-mapper.h>

#include "blkiso_cut.h"
#include "compat.h"

/*
 * Note that the rest of a REQ_NOWAIT bio of the current task begins at
 * @sector (struct blkiso_nw_rest).  False when every entry is taken by
 * another task.  The task's own entries older than BLKISO_NW_REST_STALE
 * are reused: its rests come back on its own bio list before it submits
 * anything else, so such an entry's rest is not coming (its bio ended
 * another way).
 */
static bool blkiso_nw_rest_note(struct blkiso_dev *dev, sector_t sector)
{
	struct blkiso_nw_rest *e = dev->nw_rests;
	unsigned long now = jiffies;
	int i;

	for (i = 0; i < BLKISO_NW_RESTS; i++, e++) {
		struct task_struct *owner = READ_ONCE(e->task);

		if (owner == current &&
		    time_after(now, e->stamp + BLKISO_NW_REST_STALE))
			break;
		if (!owner && !cmpxchg(&e->task, NULL, current)) {
			atomic_inc(&dev->nw_rests_used);
			break;
		}
	}
	if (i == BLKISO_NW_RESTS)
		return false;
	e->sector = sector;
	e->stamp = now;
	return true;
}

/*
 * Forget every noted rest.  Called at resume, with the device suspended: no
 * .map runs, and a rest that reached dm while it was suspended was failed
 * by dm core (dm_submit_bio(): BLK_STS_AGAIN for REQ_NOWAIT), so its note
 * would otherwise stay taken for good (or until its task cut again 60 s
 * later) and a table filled by such notes would refuse REQ_NOWAIT bios
 * whole.  The device (struct blkiso_dev) is one dm device's, so every
 * table of it is suspended here.
 */
void blkiso_nw_rests_clear(struct blkiso_dev *dev)
{
	int i;

	for (i = 0; i < BLKISO_NW_RESTS; i++)
		WRITE_ONCE(dev->nw_rests[i].task, NULL);
	atomic_set(&dev->nw_rests_used, 0);
}

/*
 * Is @bio (REQ_NOWAIT, remapped) the rest of one whose cut was noted by
 * the current task?  Consumes the note.  A foreign bio of the same task
 * at the same sector matched by mistake only loses REQ_NOWAIT.
 */
bool blkiso_nw_rest_take(struct blkiso_dev *dev, sector_t sector)
{
	struct blkiso_nw_rest *e = dev->nw_rests;
	int i;

	for (i = 0; i < BLKISO_NW_RESTS; i++, e++) {
		if (READ_ONCE(e->task) == current && e->sector == sector) {
			/* free only after this task's last read of the entry */
			smp_store_release(&e->task, NULL);
			atomic_dec(&dev->nw_rests_used);
			return true;
		}
	}
	return false;
}

/*
 * chunk_bytes (S0-28, S3-17): a read or write larger than the chunk keeps
 * only its first chunk here; dm core sends the rest through .map again as
 * a new bio, so each chunk is classified, charged, parked and corrected
 * on its own and a large bio leaves as its quota allows, piece by piece.
 * Left whole (charged whole, as without chunking): bios dm must not cut
 * (flush, zone operations, duplicated abnormal bios), REQ_NOWAIT bios (a
 * chunk refused after an earlier one went down would end the whole bio
 * with BLK_STS_AGAIN, and its retry would pay the done part again; the
 * block layer does not split them either), and REQ_ATOMIC writes.  The
 * chunk is whole logical blocks of the device.
 */
static bool blkiso_may_cut(const struct bio *bio)
{
	enum req_op op = bio_op(bio);

	return (op == REQ_OP_READ || op == REQ_OP_WRITE) &&
	       !(bio->bi_opf & (REQ_PREFLUSH | BLKISO_REQ_ATOMIC));
}

noinline void blkiso_chunk(struct bio *bio, u32 chunk_bytes)
{
	unsigned int sectors;

	if (!blkiso_may_cut(bio) || (bio->bi_opf & REQ_NOWAIT))
		return;
	sectors = round_down(chunk_bytes, bdev_logical_block_size(bio->bi_bdev)) >>
		SECTOR_SHIFT;
	if (sectors && sectors < bio_sectors(bio))
		dm_accept_partial_bio(bio, sectors);
}

/*
 * Would the lower queue split @bio (remapped) into several requests?  Then
 * *@piece is its first request, in sectors (bi_depth_piece(): by the
 * request size and chunk limits; a split by segments is not foreseen).
 */
static bool blkiso_lower_piece(const struct bio *bio, u32 *piece)
{
	const struct queue_limits *lim = &bdev_get_queue(bio->bi_bdev)->limits;
	struct bi_depth_lower q = {
		.max_sectors = lim->max_sectors,
		.chunk_sectors = lim->chunk_sectors,
		.block_sectors = bdev_logical_block_size(bio->bi_bdev) >> SECTOR_SHIFT,
	};

	return blkiso_may_cut(bio) &&
	       bi_depth_piece(bio->bi_iter.bi_sector, bio_sectors(bio), &q,
			      piece) == BI_DEPTH_CUT;
}

/*
 * A REQ_NOWAIT read or write of a tenant the depth limit does not bind,
 * larger than one request of the lower queue, loses the flag and goes
 * whole (issue 20, the fast shape).  Kept, 6.1's lower queue refuses it
 * (a REQ_NOWAIT bio it would split ends with BLK_STS_AGAIN, as under a
 * plain dm-linear) and io_uring sends it again from a worker thread, whose
 * wake-ups take the CPU the protected tenant's completions wait for.  The
 * price: the submitter may wait inline for the lower queue's tags, as a
 * libaio one does.  Not cut: going whole it has no rest that could reach
 * .map with the flag after the limit came on and be refused after its
 * first part went down.  blkiso_nowait_unsplit() leaves out bios of a page or less:
 * the lower queue's max_sectors is at least a page, so only one crossing
 * a chunk boundary could be split, and it is refused as before.
 */
noinline void blkiso_nowait_unsplit_slow(struct bio *bio)
{
	u32 piece;

	if (blkiso_lower_piece(bio, &piece))
		bio->bi_opf &= ~REQ_NOWAIT;
}

/*
 * Issue 20: a read or write of a tenant the depth limit binds keeps only
 * its first request of the lower queue (bi_depth_piece(); dm core sends
 * the rest through .map again), so that the limit, which counts bios,
 * counts the device's requests.  After the remap: the limits and sectors
 * are the lower device's.  A REQ_NOWAIT bio, or the rest of one (@rest:
 * the flag already dropped), is cut as well: the piece loses the flag,
 * since a piece refused a lower tag after an earlier one went down would
 * end the whole bio with BLK_STS_AGAIN in the completion's context, where
 * io_uring cannot send it again (its read fails with EAGAIN); so a piece
 * may wait for a lower tag in the submitter's context.  And where the rest
 * begins is noted (blkiso_nw_rest_note()): the rest comes back through
 * .map with REQ_NOWAIT, maybe after the limit let go, and must not go down
 * whole to be refused by the lower queue's split.  Refused whole instead,
 * io_uring would send every such bio again from a worker thread, whose
 * wake-ups take the CPU the protected tenant's completions wait for.
 * Returns false for a REQ_NOWAIT bio that must be cut but finds no free
 * note: the caller refuses it whole, before any part went down.  A rest
 * with no free note goes whole, without the flag.
 */
noinline bool blkiso_depth_cut(struct blkiso_dev *dev, struct bio *bio, bool rest)
{
	u32 piece;

	if (!blkiso_lower_piece(bio, &piece))
		return true;
	if (rest || (bio->bi_opf & REQ_NOWAIT)) {
		/*
		 * Suspending: whole.  dm core refuses a REQ_NOWAIT bio while
		 * the device is suspended (bio_wouldblock_error()), and the
		 * rest of a cut one reaches it with the flag: refused after
		 * its first piece went down, the read fails with EAGAIN in
		 * the completion's context, where io_uring cannot send it
		 * again.  Whole, it is refused before any part went down (or
		 * sent, if it came before), and io_uring sends it again.
		 */
		if (READ_ONCE(dev->draining))
			return true;
		if (!blkiso_nw_rest_note(dev, bio->bi_iter.bi_sector + piece))
			return rest;
		bio->bi_opf &= ~REQ_NOWAIT;
	}
	dm_accept_partial_bio(bio, piece);
	return true;
}

/*
 * A read or write of a tenant capped in bytes or work units in its
 * direction, of more requests of the lower queue than half its slots
 * (dev->cap_cut_over), keeps its first request (blkiso_depth_cut(): a
 * REQ_NOWAIT one too, its rest noted; dm core sends the rest through .map
 * again, cut the same way until it fits), so that the cap charges and
 * paces it request by request and no bio of it takes more than half the
 * slots at once.  Sent whole, it took them all when the cap let it go: on
 * the bench's ssd shape a 1 MiB read is nine requests on eight slots, and
 * a neighbour's read issued meanwhile waited a whole service time for a
 * tag (thirtieth session: a QD1 victim's p99 2.1x solo beside a tenant
 * capped at 500 MB/s, 1.21x with its reads cut, doc/bench.md).  Where it
 * fits in half the slots it goes whole: on the fast shape (32 slots)
 * cutting it cost the victim CPU time (p99 1.7x -> 2.1x at 900 MB/s).  A
 * request cap (riops, wiops), or a class stage, leaves it whole: each
 * piece would count as a request.  The tenant's own cap only: a child
 * under a capped parent goes whole.
 */
noinline void blkiso_cap_cut(struct blkiso_dev *dev, struct bio *bio,
			     struct blkiso_tenant *t, bool rest)
{
	const struct bi_meter_cfg *c = bi_meter_cfg(&blkiso_quota(t)->meter);
	u8 dir = op_is_write(bio_op(bio)) ? BI_DIR_WRITE : BI_DIR_READ;

	if (!blkiso_may_cut(bio) || c->cls_on ||
	    bi_meter_dir_keys(c, dir) != 1U << bi_work_key(dir))
		return;
	/* no note free for a REQ_NOWAIT bio's rest: whole, without the flag */
	if (!blkiso_depth_cut(dev, bio, rest))
		blkiso_nowait_unsplit(bio);
}
