/* SPDX-License-Identifier: GPL-2.0 */
/*
 * io.h - what the decision core knows of one bio.
 *
 * The kernel glue fills a struct bi_io from the bio (op, flags, size,
 * ioprio); user-space tests and blkiso-sim fill it directly.  Nothing else
 * of the bio reaches the core.
 */
#ifndef BLKISO_IO_H
#define BLKISO_IO_H

#include "bi_shim.h"

enum bi_op {
	BI_OP_READ,
	BI_OP_WRITE,
	BI_OP_FLUSH,		/* empty flush (REQ_OP_FLUSH or zero-length PREFLUSH) */
	BI_OP_DISCARD,
	BI_OP_WRITE_ZEROES,
	BI_OP_OTHER,		/* anything else: passed through, charged as 1 unit */
	BI_NR_OPS,
};

/*
 * Request flags the core cares about (a subset of REQ_*).  BI_IO_SYNC is
 * op_is_sync(): reads are always sync, writes when REQ_SYNC is set.
 */
#define BI_IO_SYNC	(1U << 0)
#define BI_IO_META	(1U << 1)
#define BI_IO_FUA	(1U << 2)
#define BI_IO_PREFLUSH	(1U << 3)
#define BI_IO_NOWAIT	(1U << 4)
/*
 * A write the kernel waits on and must not be held behind its owner's
 * quota: a kernel thread's REQ_SYNC write (a journal's ordered-data flush,
 * sync writeback) or a swap write (REQ_SWAP).  Charged like the system
 * class, as debt.
 */
#define BI_IO_KERNEL_WAITS	(1U << 5)

/* ioprio classes as the kernel numbers them (IOPRIO_CLASS_*). */
enum bi_prio_class {
	BI_PRIO_NONE,
	BI_PRIO_RT,
	BI_PRIO_BE,
	BI_PRIO_IDLE,
};

struct bi_io {
	u64 bytes;		/* payload size (bi_iter.bi_size) */
	u8 op;			/* enum bi_op */
	u8 flags;		/* BI_IO_* */
	u8 prio_class;		/* enum bi_prio_class */
	u8 prio_level;		/* 0..7 */
	u32 lower_bios;		/* bios it becomes at the lower queue (0 = 1) */
};

/*
 * Direction, for the per-direction caps (riops/wiops, rbps/wbps,
 * runits/wunits): everything that changes data (write, discard, write-zeroes)
 * and flushes count as writes; reads and unknown ops as reads.
 */
enum bi_dir {
	BI_DIR_READ,
	BI_DIR_WRITE,
	BI_NR_DIRS,
};

static inline enum bi_dir bi_io_dir(const struct bi_io *io)
{
	return (io->op == BI_OP_READ || io->op == BI_OP_OTHER) ?
		BI_DIR_READ : BI_DIR_WRITE;
}

#endif /* BLKISO_IO_H */
