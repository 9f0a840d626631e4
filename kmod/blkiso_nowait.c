// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_nowait.c - the notes that let .map know the rest of a REQ_NOWAIT
 * bio the depth limit cut (issue 20; blkiso_depth_cut() in
 * blkiso_target.c): dm core sends that rest through .map again from the
 * submitting task, still REQ_NOWAIT, so the cut notes the task and the
 * sector where the rest begins (struct blkiso_nw_rest, per device) and
 * .map takes the note when the rest comes, whenever that is.
 */
#include <linux/sched.h>
#include <linux/jiffies.h>
#include <linux/atomic.h>

#include "blkiso.h"

/*
 * Note that the rest of a REQ_NOWAIT bio of the current task begins at
 * @sector (struct blkiso_nw_rest).  False when every entry is taken by
 * another task.  The task's own entries older than BLKISO_NW_REST_STALE
 * are reused: its rests come back on its own bio list before it submits
 * anything else, so such an entry's rest is not coming (its bio ended
 * another way).
 */
bool blkiso_nw_rest_note(struct blkiso_dev *dev, sector_t sector)
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
