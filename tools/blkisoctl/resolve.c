// SPDX-License-Identifier: GPL-2.0
/*
 * resolve.c - naming things on the command line: dm devices (a node or a dm
 * name, through libdevmapper when no node exists), cgroups (an id, a path
 * below /sys/fs/cgroup, whose inode number is the id, or "kernel"), and
 * key=value lines.  Also the error printer and errno -> exit code.
 */
#include <errno.h>
#include <libdevmapper.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "blkisoctl.h"

#define CGROUP_ROOT	"/sys/fs/cgroup"

char err_ctx[256];

void err(const char *fmt, ...)
{
	va_list ap;

	fputs("blkisoctl: ", stderr);
	if (err_ctx[0])
		fprintf(stderr, "%s: ", err_ctx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int errno_exit(int e)
{
	switch (e) {
	case EINVAL: case E2BIG: case ERANGE:
		return BX_INPUT;
	case ENOENT: case ENODEV: case ENXIO: case ESRCH:
		return BX_NOTFOUND;
	case EPERM: case EACCES: case EBUSY:
		return BX_PERM;
	default:
		return BX_OTHER;
	}
}

/* major:minor of the dm device @name (DM_DEVICE_INFO): 0 or -ENOENT. */
int dm_lookup(const char *name, struct bdev *dev)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_INFO);
	struct dm_info info;
	int ret = -ENOENT;

	if (!dmt)
		return -ENOMEM;
	if (dm_task_set_name(dmt, name) && dm_task_run(dmt) &&
	    dm_task_get_info(dmt, &info) && info.exists) {
		dev->major = info.major;
		dev->minor = info.minor;
		ret = 0;
	}
	dm_task_destroy(dmt);
	return ret;
}

int resolve_dev(const char *arg, struct bdev *dev)
{
	const char *name = arg;
	struct stat st;

	memset(dev, 0, sizeof(*dev));
	if (!strncmp(arg, "/dev/mapper/", 12))
		name = arg + 12;
	if (strchr(arg, '/') && !stat(arg, &st)) {
		if (!S_ISBLK(st.st_mode)) {
			err("%s: not a block device", arg);
			return BX_INPUT;
		}
		dev->major = major(st.st_rdev);
		dev->minor = minor(st.st_rdev);
		if (name != arg)
			snprintf(dev->name, sizeof(dev->name), "%s", name);
		return BX_OK;
	}
	if (strchr(name, '/')) {
		err("%s: no such device", arg);
		return BX_NOTFOUND;
	}
	if (dm_lookup(name, dev)) {
		err("%s: no such dm device", arg);
		return BX_NOTFOUND;
	}
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	return BX_OK;
}

int resolve_cgroup(const char *arg, uint64_t *cgid)
{
	char path[4096], *end;
	struct stat st;

	if (!strcmp(arg, "kernel")) {
		*cgid = 0;
		return BX_OK;
	}
	if (arg[0] >= '0' && arg[0] <= '9') {
		errno = 0;
		*cgid = strtoull(arg, &end, 10);
		if (errno || *end || !*cgid) {
			err("\"%s\": not a cgroup id (want an id, a path or \"kernel\")", arg);
			return BX_INPUT;
		}
		return BX_OK;
	}
	if (!strncmp(arg, CGROUP_ROOT, sizeof(CGROUP_ROOT) - 1) &&
	    (arg[sizeof(CGROUP_ROOT) - 1] == '/' || !arg[sizeof(CGROUP_ROOT) - 1]))
		snprintf(path, sizeof(path), "%s", arg);
	else
		snprintf(path, sizeof(path), CGROUP_ROOT "/%s", arg[0] == '/' ? arg + 1 : arg);
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		err("%s: no such cgroup (%s)", arg, path);
		return BX_NOTFOUND;
	}
	*cgid = st.st_ino;
	return BX_OK;
}

int join_line(char *line, int argc, char **argv)
{
	size_t n = 0, len;
	int i;

	line[0] = '\0';
	for (i = 0; i < argc; i++) {
		len = strlen(argv[i]);
		if (n + len + 2 > BLKISO_LINE_MAX) {
			err("line too long at \"%s\" (at most %d bytes)", argv[i],
			    BLKISO_LINE_MAX - 1);
			return BX_INPUT;
		}
		if (n)
			line[n++] = ' ';
		memcpy(line + n, argv[i], len + 1);
		n += len;
	}
	return BX_OK;
}
