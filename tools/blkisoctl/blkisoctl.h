/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkisoctl.h - what the files of blkisoctl share: exit codes, options,
 * naming devices and cgroups, and the ioctl wrappers.
 */
#ifndef BLKISOCTL_H
#define BLKISOCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/blkiso.h>

#define BLKISOCTL_VERSION	"0.2.0"

/* Exit codes (documented in blkisoctl.8). */
enum {
	BX_OK = 0,
	BX_USAGE = 1,		/* bad command line */
	BX_INPUT = 2,		/* a line or a file the kernel or we refused */
	BX_NOTFOUND = 3,	/* no such device, dm device, cgroup or tenant */
	BX_PERM = 4,		/* not root / no CAP_SYS_ADMIN / device busy */
	BX_OTHER = 5,		/* anything else */
};

struct opts {
	bool json;
	bool pretty;
	long count;		/* top: refreshes, 0 = until interrupted */
	bool prometheus;	/* stats: the Prometheus text format */
	bool live;		/* attach/detach: under the disk's dm holders (live.c) */
	const char *file;	/* apply: the file being read */
};
extern struct opts opt;

/* Print "blkisoctl: [err_ctx: ]..." on stderr. */
extern char err_ctx[256];
void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The exit code for an errno value. */
int errno_exit(int e);

/* A blkiso dm device: "/dev/mapper/NAME", "/dev/dm-N" or a dm name. */
struct bdev {
	unsigned int major, minor;
	char name[128];		/* dm name, "" if unknown */
};
/* 0, or an exit code after printing why. */
int resolve_dev(const char *arg, struct bdev *dev);
/* major:minor of the dm device @name: 0 or -errno. */
int dm_lookup(const char *name, struct bdev *dev);
/* The dm UUID of an attached device: DM_UUID_PREFIX NAME. */
#define DM_UUID_PREFIX	"BLKISO-"
/* Attach blkiso over the whole of @lower as dm device @name: exit code. */
int dm_attach(const char *lower, const char *name);
/* "blkiso-<basename of lower>", attach's default name. */
void dm_default_name(const char *lower, char *name, size_t size);
/* libdevmapper without udev when udev does not run (dm.c). */
struct dm_task;
void dm_udev_setup(void);
/* Run a task with udev synchronisation (or none): libdevmapper's 1 or 0. */
int dm_run_synced(struct dm_task *dmt);
/* A "change" event to disk @maj:@min so that udev sees its new holder. */
void lower_changed(unsigned int maj, unsigned int min);
/* attach --live and detach --live (live.c): exit code. */
int live_attach(const char *lower, const char *name);
int live_detach(const char *name);
/*
 * The names of disk @kname ("sdb") that survive a reboot: its
 * /dev/disk/by-id links, else /dev/@kname; how many (at least 1).
 */
#define NAME_LEN	512
unsigned int disk_names(const char *kname, char names[][NAME_LEN], unsigned int max);
/* major:minor under the blkiso dm device @name: 0, -ENOENT, -EINVAL. */
int dm_blkiso_lower(const char *name, unsigned int *major, unsigned int *minor);
/* "kernel" (0), a cgroup id (digits only), or a path below /sys/fs/cgroup. */
int resolve_cgroup(const char *arg, uint64_t *cgid);
/* The path of cgroup @cgid below /sys/fs/cgroup ("kernel" for 0); NULL if gone. */
const char *cgroup_path(uint64_t cgid);
/* Every blkiso device (sysfs), by minor; *devs is malloc'ed: 0 or an exit code. */
int list_devices(struct bdev **devs, unsigned int *count);

/* The first line of a (sysfs) file, newline dropped: 0 or -1. */
int read_line(const char *path, char *buf, size_t size);

/* The keyword selectors "dev X" and "cgroup Y", in any order. */
struct sel {
	const char *dev;
	const char *cgroup;
	bool keywords;		/* any given (else: the old positional order) */
};
/* Take them from the front of *argv: 0, or an exit code after saying why. */
int take_selectors(int *argc, char ***argv, struct sel *sel);
/* Join argv[0..argc) with spaces into a line of BLKISO_LINE_MAX. */
int join_line(char *line, int argc, char **argv);

/* ioctls: 0 or -errno; msg (may be NULL) gets the kernel's reason. */
int ioc_open(void);
int ioc_tenant(bool set, const struct bdev *dev, uint64_t cgid, const char *line,
	       unsigned int flags, char *out, unsigned int *out_flags, char *msg);
/* DEL_TENANT: back to counted only; -ENOENT if it has no quota. */
int ioc_tenant_del(const struct bdev *dev, uint64_t cgid, char *msg);
int ioc_device(bool set, const struct bdev *dev, const char *line, unsigned int flags,
	       char *out, char *msg);
/* A stats snapshot; *recs is malloc'ed (free it). */
int ioc_stats(const struct bdev *dev, struct blkiso_ioc_stats *st,
	      struct blkiso_stats_rec **recs);
int ioc_version(struct blkiso_ioc_version *v);
int ioc_lease_query(unsigned int major, unsigned int minor, uint64_t cgid, unsigned int key,
		    struct blkiso_ioc_lease *a);
int cmd_cluster(int argc, char **argv);
/* The feedback tick's ring: the device's (@cgid NULL) or a tenant's. */
#define RING_MAX	64	/* records a ring holds at most (the device's) */
int ioc_ring(const struct bdev *dev, const uint64_t *cgid, struct blkiso_tick_rec *recs,
	     unsigned int capacity, unsigned int *count);

/* SET_RULE (BLKISO_F_DEL: remove) and RULES (*recs malloc'ed). */
int ioc_rule(const struct bdev *dev, const char *glob, const char *line, unsigned int flags,
	     char *msg);
int ioc_rules(const struct bdev *dev, struct blkiso_rule_rec **recs, unsigned int *n);

/*
 * Warn on stderr if the io controller is not enabled in every
 * cgroup.subtree_control above cgroup @cgid (its bios are then charged to
 * the ancestor where it stops).  @name: how the user named it.
 */
void warn_io_controller(uint64_t cgid, const char *name);

/* Report a failed ioctl on @what (the kernel's msg if any): exit code. */
int ioc_fail(const char *what, int ret, const char *msg);
/* Open /dev/blkiso or say why not: exit code. */
int open_ctl(void);

/* Commands: argc/argv start after the command word; return an exit code. */
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_resize(int argc, char **argv);
/* attach's and detach --live's report, text or -j (dm.c) */
void attach_report(const char *name, const char *lower, const char *const *holders,
		   unsigned int nh, bool removed);
int cmd_set(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_dev_set(int argc, char **argv);
int cmd_dev_get(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_ring(int argc, char **argv);
int cmd_tenant_list(int argc, char **argv);
int cmd_tenant_show(int argc, char **argv);
int cmd_tenant_del(int argc, char **argv);
int cmd_rule_add(int argc, char **argv);
int cmd_rule_del(int argc, char **argv);
int cmd_rule_list(int argc, char **argv);
int cmd_save(int argc, char **argv);

/* "dev DEV cgroup CGROUP" or the old "CGROUP DEV": 0 or an exit code. */
int tenant_target(const char *usage, int *argc, char ***argv, struct sel *sel);
/*
 * The same, then the rest checked (@line: a line must follow, else
 * nothing), both names resolved and /dev/blkiso opened.
 */
int tenant_open(const char *usage, int *argc, char ***argv, bool line, struct sel *sel,
		struct bdev *dev, uint64_t *cgid);

/* The Prometheus text format of one STATS snapshot per device (prom.c). */
struct prom_dev {
	const struct bdev *dev;
	const struct blkiso_ioc_stats *st;
	const struct blkiso_stats_rec *recs;
};
void prom_print(FILE *f, const struct prom_dev *d, unsigned int n,
		const char *(*path)(uint64_t cgid));

/* JSON output helpers (stats.c); NULL prints null. */
void json_str(const char *s);
void json_str_or_null(const char *s);

#endif /* BLKISOCTL_H */
