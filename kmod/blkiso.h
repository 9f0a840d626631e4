/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkiso.h - what the files of kmod/ share: the module's sysfs root and the
 * target's registration.
 */
#ifndef BLKISO_H
#define BLKISO_H

#include <linux/kobject.h>

#define BLKISO_VERSION	"0.1.0"

/* /sys/kernel/blkiso, parent of every per-device directory. */
extern struct kobject *blkiso_sysfs_root;

int blkiso_target_init(void);
void blkiso_target_exit(void);

#endif /* BLKISO_H */
