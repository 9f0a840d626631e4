// SPDX-License-Identifier: GPL-2.0
/*
 * conf.c - set and get: a tenant's quota line or a device line, through
 * SET_TENANT/GET_TENANT and SET_DEVICE/GET_DEVICE.  A refused line prints
 * the kernel's reason, which names the bad token.  A tenant is named by
 * "dev DEV cgroup CGROUP" (any order) or, as before, "CGROUP DEV".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "blkisoctl.h"

/* Report a failed ioctl on @what; returns the exit code. */
int ioc_fail(const char *what, int ret, const char *msg)
{
	if ((ret == -EINVAL || ret == -ERANGE || ret == -E2BIG) && msg && msg[0])
		err("%s: %s", what, msg);
	else if (ret == -ENOENT && !strcmp(what, BLKISO_DEV_PATH))
		err("%s: not found (is blkiso.ko loaded?)", what);
	else if (ret == -EPERM)
		err("%s: permission denied (needs CAP_SYS_ADMIN)", what);
	else if (ret == -ENODEV)
		err("%s: not a blkiso device", what);
	else
		err("%s: %s", what, strerror(-ret));
	return errno_exit(-ret);
}

int open_ctl(void)
{
	int fd = ioc_open();

	return fd < 0 ? ioc_fail(BLKISO_DEV_PATH, fd, NULL) : BX_OK;
}

int tenant_target(const char *usage, int *argc, char ***argv, struct sel *sel)
{
	int ret = take_selectors(argc, argv, sel);

	if (ret)
		return ret;
	if (!sel->keywords && *argc >= 2) {
		/* the old order: CGROUP DEV */
		sel->cgroup = (*argv)[0];
		sel->dev = (*argv)[1];
		*argc -= 2;
		*argv += 2;
	}
	if (!sel->dev || !sel->cgroup) {
		err("usage: %s", usage);
		return BX_USAGE;
	}
	return BX_OK;
}

int tenant_open(const char *usage, int *argc, char ***argv, bool line, struct sel *sel,
		struct bdev *dev, uint64_t *cgid)
{
	int ret = tenant_target(usage, argc, argv, sel);

	if (ret)
		return ret;
	if (line ? *argc < 1 : *argc != 0) {
		err("usage: %s", usage);
		return BX_USAGE;
	}
	ret = resolve_cgroup(sel->cgroup, cgid);
	if (!ret)
		ret = resolve_dev(sel->dev, dev);
	if (!ret)
		ret = open_ctl();
	return ret;
}

int cmd_set(int argc, char **argv)
{
	char line[BLKISO_LINE_MAX], msg[BLKISO_MSG_MAX];
	struct bdev dev;
	struct sel sel;
	uint64_t cgid;
	int ret;

	ret = tenant_open("tenant set dev DEV cgroup CGROUP key=value...", &argc, &argv, true,
			  &sel, &dev, &cgid);
	if (!ret)
		ret = join_line(line, argc, argv);
	if (ret)
		return ret;
	ret = ioc_tenant(true, &dev, cgid, line, 0, NULL, NULL, msg);
	if (ret == -ENOENT)
		return ioc_fail(sel.cgroup, ret, NULL);
	if (ret)
		return ioc_fail(ret == -EINVAL ? sel.cgroup : sel.dev, ret, msg);
	warn_io_controller(cgid, sel.cgroup);
	return BX_OK;
}

int cmd_get(int argc, char **argv)
{
	char line[BLKISO_LINE_MAX];
	unsigned int flags = 0;
	struct bdev dev;
	struct sel sel;
	uint64_t cgid;
	int ret;

	ret = tenant_open("tenant get dev DEV cgroup CGROUP", &argc, &argv, false, &sel, &dev,
			  &cgid);
	if (ret)
		return ret;
	ret = ioc_tenant(false, &dev, cgid, NULL, 0, line, &flags, NULL);
	if (ret == -ENOENT) {
		err("%s: no tenant on %s (it has done no I/O and has no quota)", sel.cgroup,
		    sel.dev);
		return BX_NOTFOUND;
	}
	if (ret)
		return ioc_fail(sel.dev, ret, NULL);
	if (opt.json) {
		printf("{\"cgid\":%" PRIu64 ",\"cgroup\":", cgid);
		json_str_or_null(cgroup_path(cgid));
		printf(",\"configured\":%s,\"line\":",
		       flags & BLKISO_F_CONFIGURED ? "true" : "false");
		json_str(line);
		printf("}\n");
	} else {
		printf("%s\n", line);
	}
	return BX_OK;
}

int cmd_dev_set(int argc, char **argv)
{
	char line[BLKISO_LINE_MAX], msg[BLKISO_MSG_MAX];
	struct bdev dev;
	int ret;

	if (argc && !strcmp(argv[0], "dev"))
		argc--, argv++;
	if (argc < 2) {
		err("usage: device set dev DEV key=value...");
		return BX_USAGE;
	}
	ret = resolve_dev(argv[0], &dev);
	if (!ret)
		ret = join_line(line, argc - 1, argv + 1);
	if (!ret)
		ret = open_ctl();
	if (ret)
		return ret;
	ret = ioc_device(true, &dev, line, 0, NULL, msg);
	return ret ? ioc_fail(argv[0], ret, msg) : BX_OK;
}

int cmd_dev_get(int argc, char **argv)
{
	char line[BLKISO_LINE_MAX];
	struct bdev dev;
	int ret;

	if (argc == 2 && !strcmp(argv[0], "dev"))
		argc--, argv++;
	if (argc != 1) {
		err("usage: device get dev DEV");
		return BX_USAGE;
	}
	ret = resolve_dev(argv[0], &dev);
	if (!ret)
		ret = open_ctl();
	if (ret)
		return ret;
	ret = ioc_device(false, &dev, NULL, 0, line, NULL);
	if (ret)
		return ioc_fail(argv[0], ret, NULL);
	if (opt.json) {
		printf("{\"line\":");
		json_str(line);
		printf("}\n");
	} else {
		printf("%s\n", line);
	}
	return BX_OK;
}
