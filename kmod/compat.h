/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the few kernel API differences between the kernels blkiso
 * builds for (Debian 6.1 and 6.12).  Everything version-dependent goes
 * here, so the rest of kmod/ reads as code for one kernel.  Differences are
 * absorbed by type inference rather than version checks where possible.
 */
#ifndef BLKISO_COMPAT_H
#define BLKISO_COMPAT_H

#include <linux/device-mapper.h>

/*
 * dm_table_get_mode() returns fmode_t on 6.1 and blk_mode_t on 6.5+, and
 * dm_get_device() takes the same type: take whichever the kernel has.
 */
typedef __typeof__(dm_table_get_mode(NULL)) blkiso_mode_t;

/* REQ_ATOMIC (6.11+): a write that must reach the device whole. */
#ifdef REQ_ATOMIC
#define BLKISO_REQ_ATOMIC	REQ_ATOMIC
#else
#define BLKISO_REQ_ATOMIC	0
#endif

#endif /* BLKISO_COMPAT_H */
