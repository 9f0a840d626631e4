// SPDX-License-Identifier: GPL-2.0
/*
 * ioc.c - the ioctls of /dev/blkiso (uapi/linux/blkiso.h), one wrapper each.
 * Every struct goes out with its size and BLKISO_IOCTL_VERSION.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "blkisoctl.h"

static int ctl_fd = -1;

/* /dev/blkiso, opened once; -errno (ENOENT: module not loaded). */
int ioc_open(void)
{
	if (ctl_fd < 0)
		ctl_fd = open(BLKISO_DEV_PATH, O_RDONLY | O_CLOEXEC);
	return ctl_fd < 0 ? -errno : ctl_fd;
}

static int ioc(unsigned long cmd, void *arg)
{
	int fd = ioc_open();

	if (fd < 0)
		return fd;
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

#define HDR(s) ((struct blkiso_ioc_hdr){ .size = sizeof(s), .version = BLKISO_IOCTL_VERSION })

int ioc_version(struct blkiso_ioc_version *v)
{
	memset(v, 0, sizeof(*v));
	v->hdr = HDR(*v);
	return ioc(BLKISO_IOC_GET_VERSION, v);
}

/* SET_TENANT, GET_TENANT or DEL_TENANT on one tenant. */
static int ioc_tenant_cmd(unsigned long cmd, const struct bdev *dev, uint64_t cgid,
			  const char *line, unsigned int flags, char *out,
			  unsigned int *out_flags, char *msg)
{
	struct blkiso_ioc_tenant a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.hdr = HDR(a);
	a.major = dev->major;
	a.minor = dev->minor;
	a.cgid = cgid;
	a.flags = flags;
	if (line)
		strncpy(a.line, line, sizeof(a.line) - 1);
	ret = ioc(cmd, &a);
	if (msg)
		memcpy(msg, a.msg, sizeof(a.msg));
	if (!ret && out)
		memcpy(out, a.line, sizeof(a.line));
	if (!ret && out_flags)
		*out_flags = a.flags;
	return ret;
}

int ioc_tenant(bool set, const struct bdev *dev, uint64_t cgid, const char *line,
	       unsigned int flags, char *out, unsigned int *out_flags, char *msg)
{
	return ioc_tenant_cmd(set ? BLKISO_IOC_SET_TENANT : BLKISO_IOC_GET_TENANT, dev, cgid,
			      line, flags, out, out_flags, msg);
}

int ioc_tenant_del(const struct bdev *dev, uint64_t cgid, char *msg)
{
	return ioc_tenant_cmd(BLKISO_IOC_DEL_TENANT, dev, cgid, NULL, 0, NULL, NULL, msg);
}

int ioc_device(bool set, const struct bdev *dev, const char *line, unsigned int flags,
	       char *out, char *msg)
{
	struct blkiso_ioc_device a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.hdr = HDR(a);
	a.major = dev->major;
	a.minor = dev->minor;
	a.flags = flags;
	if (line)
		strncpy(a.line, line, sizeof(a.line) - 1);
	ret = ioc(set ? BLKISO_IOC_SET_DEVICE : BLKISO_IOC_GET_DEVICE, &a);
	if (msg)
		memcpy(msg, a.msg, sizeof(a.msg));
	if (!ret && out)
		memcpy(out, a.line, sizeof(a.line));
	return ret;
}

/* Ask with room for every tenant; retry while more came meanwhile. */
int ioc_stats(const struct bdev *dev, struct blkiso_ioc_stats *st,
	      struct blkiso_stats_rec **recs)
{
	unsigned int cap = 64;
	int ret;

	*recs = NULL;
	for (;;) {
		struct blkiso_stats_rec *r = realloc(*recs, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		*recs = r;
		memset(st, 0, sizeof(*st));
		st->hdr = HDR(*st);
		st->major = dev->major;
		st->minor = dev->minor;
		st->recs = (uintptr_t)r;
		st->rec_size = sizeof(*r);
		st->capacity = cap;
		ret = ioc(BLKISO_IOC_STATS, st);
		if (ret || st->count >= st->total || cap >= BLKISO_STATS_MAX)
			return ret;
		cap = st->total + 16 < BLKISO_STATS_MAX ? st->total + 16 : BLKISO_STATS_MAX;
	}
}

/* The last ticks of the device (cgid NULL) or of tenant *cgid, oldest first. */
int ioc_ring(const struct bdev *dev, const uint64_t *cgid, struct blkiso_tick_rec *recs,
	     unsigned int capacity, unsigned int *count)
{
	struct blkiso_ioc_ring a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.hdr = HDR(a);
	a.major = dev->major;
	a.minor = dev->minor;
	if (cgid) {
		a.flags = BLKISO_RING_F_TENANT;
		a.cgid = *cgid;
	}
	a.rec_size = sizeof(*recs);
	a.recs = (uintptr_t)recs;
	a.capacity = capacity;
	ret = ioc(BLKISO_IOC_RING, &a);
	*count = ret ? 0 : a.count;
	return ret;
}

/* SET_RULE: add or replace GLOB -> LINE, or remove it (BLKISO_F_DEL). */
int ioc_rule(const struct bdev *dev, const char *glob, const char *line, unsigned int flags,
	     char *msg)
{
	struct blkiso_ioc_rule a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.hdr = HDR(a);
	a.major = dev->major;
	a.minor = dev->minor;
	a.flags = flags;
	if (strlen(glob) >= sizeof(a.glob)) {
		if (msg)
			snprintf(msg, BLKISO_MSG_MAX, "glob longer than %zu bytes",
				 sizeof(a.glob) - 1);
		return -EINVAL;
	}
	strcpy(a.glob, glob);
	if (line)
		strncpy(a.line, line, sizeof(a.line) - 1);
	ret = ioc(BLKISO_IOC_SET_RULE, &a);
	if (msg)
		memcpy(msg, a.msg, sizeof(a.msg));
	return ret;
}

/* Every rule of the device; *recs is malloc'ed (free it). */
int ioc_rules(const struct bdev *dev, struct blkiso_rule_rec **recs, unsigned int *n)
{
	struct blkiso_ioc_rules a;
	int ret;

	*n = 0;
	*recs = calloc(BLKISO_RULES_MAX, sizeof(**recs));
	if (!*recs)
		return -ENOMEM;
	memset(&a, 0, sizeof(a));
	a.hdr = HDR(a);
	a.major = dev->major;
	a.minor = dev->minor;
	a.recs = (uintptr_t)*recs;
	a.rec_size = sizeof(**recs);
	a.capacity = BLKISO_RULES_MAX;
	ret = ioc(BLKISO_IOC_RULES, &a);
	if (!ret)
		*n = a.count;
	return ret;
}

/* LEASE with tokens 0: a tenant key's leased credit, read only. */
int ioc_lease_query(unsigned int major, unsigned int minor, uint64_t cgid, unsigned int key,
		    struct blkiso_ioc_lease *a)
{
	memset(a, 0, sizeof(*a));
	a->hdr = HDR(*a);
	a->major = major;
	a->minor = minor;
	a->cgid = cgid;
	a->key = key;
	return ioc(BLKISO_IOC_LEASE, a);
}
