// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_bio.c - the out-of-line half of blkiso_bio.h: a bio described for
 * the decision core, and the owner of a page-cache write (cgroup writeback).
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/ioprio.h>
#include <linux/blk-cgroup.h>
#include <linux/cgroup.h>
#include <linux/backing-dev.h>
#include <linux/memcontrol.h>

#include "blkiso_bio.h"

/*
 * What the decision core needs to know of a bio.  Out of line: a plain data
 * bio is described only when it leaves .map's fast path (blkiso_leave_fast).
 */
noinline void blkiso_describe(struct bio *bio, struct bi_io *io)
{
	unsigned short prio = bio_prio(bio);
	blk_opf_t opf = bio->bi_opf;

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		io->op = BI_OP_READ;
		break;
	case REQ_OP_WRITE:
		io->op = bio_sectors(bio) ? BI_OP_WRITE : BI_OP_FLUSH;
		break;
	case REQ_OP_FLUSH:
		io->op = BI_OP_FLUSH;
		break;
	case REQ_OP_DISCARD:
	case REQ_OP_SECURE_ERASE:
		io->op = BI_OP_DISCARD;
		break;
	case REQ_OP_WRITE_ZEROES:
		io->op = BI_OP_WRITE_ZEROES;
		break;
	default:
		io->op = BI_OP_OTHER;
		break;
	}
	io->bytes = bio->bi_iter.bi_size;
	io->lower_bios = (io->op == BI_OP_READ || io->op == BI_OP_WRITE) ?
			 blkiso_lower_bios(bio) : 1;
	io->flags = (op_is_sync(opf) ? BI_IO_SYNC : 0) |
		    ((opf & REQ_META) ? BI_IO_META : 0) |
		    ((opf & REQ_FUA) ? BI_IO_FUA : 0) |
		    ((opf & REQ_PREFLUSH) ? BI_IO_PREFLUSH : 0) |
		    ((opf & REQ_NOWAIT) ? BI_IO_NOWAIT : 0) |
		    (io->op == BI_OP_WRITE && blkiso_kernel_waits(bio) ?
		     BI_IO_KERNEL_WAITS : 0);
	io->prio_class = IOPRIO_PRIO_CLASS(prio);
	io->prio_level = IOPRIO_PRIO_DATA(prio) & 7;
}

/*
 * The owner of a page-cache folio being written back, as cgroup writeback
 * has it (wbc_init_bio() ties the original bio to the same cgroup): the io
 * cgroup of its inode's writeback context; if that is the root's (cgroup
 * writeback off for this inode or filesystem, or the inode owned by the
 * root), the io cgroup the folio's memory cgroup maps to (the nearest with
 * the io controller, as a writeback context would take it); NULL if that
 * is the root too, or the memory controller is off: no cgroup owns it.
 * Swap-cache and anonymous folios have no inode: their memory cgroup.
 *
 * Safe in .map: a folio under writeback keeps its mapping (truncation and
 * eviction wait for the writeback to end), so the inode is alive; the
 * writeback context, its css and cgroup are freed only after an RCU grace
 * period, and the caller is in an RCU read-side section.
 */
noinline struct cgroup *blkiso_folio_owner(struct folio *folio)
{
	struct address_space *mapping = READ_ONCE(folio->mapping);
	struct cgroup_subsys_state *css;
	struct cgroup *cgrp = NULL;

#ifdef CONFIG_CGROUP_WRITEBACK
	if (mapping && !((unsigned long)mapping & PAGE_MAPPING_FLAGS) &&
	    mapping->host) {
		struct bdi_writeback *wb = READ_ONCE(mapping->host->i_wb);

		if (wb && wb->blkcg_css->parent)
			return wb->blkcg_css->cgroup;
	}
#endif
#ifdef CONFIG_MEMCG
	{
		struct mem_cgroup *memcg = folio_memcg(folio);

		if (memcg)
			cgrp = memcg->css.cgroup;
	}
#endif
	for (; cgrp; cgrp = cgroup_parent(cgrp)) {
		css = rcu_dereference_raw(cgrp->subsys[io_cgrp_id]);
		if (css)
			return css->parent ? cgrp : NULL;
	}
	return NULL;
}
