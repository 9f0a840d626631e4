// SPDX-License-Identifier: GPL-2.0
/*
 * tenant.c - tenant list, show and del: the tenants of one device or of
 * every blkiso device (a STATS snapshot names them), their quota lines
 * (GET_TENANT), and DEL_TENANT, which returns one to counted only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkisoctl.h"

/* The devices a command covers: the one named, or every blkiso device. */
static int target_devices(const char *name, struct bdev **devs, unsigned int *n)
{
	int ret;

	if (!name)
		return list_devices(devs, n);
	*devs = malloc(sizeof(**devs));
	if (!*devs)
		return BX_OTHER;
	*n = 1;
	ret = resolve_dev(name, *devs);
	if (ret) {
		free(*devs);
		*devs = NULL;
	}
	return ret;
}

/*
 * One tenant: its device, id, path, whether it has a quota (and whether
 * that is a rule's: BLKISO_F_RULE in @flags), and the line.
 */
static void print_tenant(const struct bdev *dev, uint64_t cgid, unsigned int flags,
			 const char *line, bool *first)
{
	bool configured = flags & BLKISO_F_CONFIGURED, rule = flags & BLKISO_F_RULE;
	const char *path = cgroup_path(cgid);

	if (opt.json) {
		printf("%s{\"device\":", *first ? "" : ",");
		json_str(dev->name);
		printf(",\"cgid\":%" PRIu64 ",\"cgroup\":", cgid);
		json_str_or_null(path);
		printf(",\"configured\":%s,\"rule\":%s", configured ? "true" : "false",
		       rule ? "true" : "false");
		if (line) {
			printf(",\"line\":");
			json_str(line);
		}
		printf("}");
	} else if (line) {
		printf("%s %s (id %" PRIu64 "%s): %s\n", dev->name, path ? path : "(removed)",
		       cgid, rule ? ", by a rule" : "", line);
	} else {
		printf("%-16s %-12" PRIu64 " %-10s %s\n", dev->name, cgid,
		       rule ? "rule" : configured ? "quota" : "counted", path ? path : "(removed)");
	}
	*first = false;
}

/*
 * list: every tenant (with or without a quota); show: the lines of those
 * with a quota, or of the one tenant named.
 */
static int list_or_show(int argc, char **argv, bool show)
{
	const char *usage = show ? "tenant show [dev DEV [cgroup CGROUP]]" :
				   "tenant list [dev DEV]";
	struct blkiso_stats_rec *r;
	struct blkiso_ioc_stats st;
	char line[BLKISO_LINE_MAX];
	unsigned int nd, d, i, flags;
	struct bdev *devs;
	bool first = true;
	uint64_t one = 0;
	struct sel sel;
	int ret;

	ret = take_selectors(&argc, &argv, &sel);
	if (ret)
		return ret;
	if (argc == 1 && !sel.keywords)		/* "tenant list DEV" */
		sel.dev = argv[0], argc = 0;
	if (argc || (sel.cgroup && (!show || !sel.dev))) {
		err("usage: %s", usage);
		return BX_USAGE;
	}
	if (sel.cgroup) {
		ret = resolve_cgroup(sel.cgroup, &one);
		if (ret)
			return ret;
	}
	ret = target_devices(sel.dev, &devs, &nd);
	if (!ret)
		ret = open_ctl();
	if (ret) {
		free(devs);
		return ret;
	}
	if (opt.json)
		printf("[");
	else if (!show)
		printf("%-16s %-12s %-10s %s\n", "DEVICE", "ID", "STATE", "CGROUP");
	for (d = 0; d < nd && !ret; d++) {
		if (sel.cgroup) {
			ret = ioc_tenant(false, &devs[d], one, NULL, 0, line, &flags, NULL);
			if (ret == -ENOENT) {
				err("%s: no tenant on %s (it has done no I/O and has no quota)",
				    sel.cgroup, sel.dev);
				ret = BX_NOTFOUND;
			} else if (ret) {
				ret = ioc_fail(sel.dev, ret, NULL);
			} else {
				print_tenant(&devs[d], one, flags, line, &first);
			}
			break;
		}
		ret = ioc_stats(&devs[d], &st, &r);
		if (ret) {
			ret = ioc_fail(devs[d].name, ret, NULL);
			break;
		}
		for (i = 0; i < st.count; i++) {
			if (!show) {
				print_tenant(&devs[d], r[i].cgid, r[i].flags, NULL, &first);
				continue;
			}
			/* vanished meanwhile: nothing to show */
			if (!(r[i].flags & BLKISO_F_CONFIGURED) ||
			    ioc_tenant(false, &devs[d], r[i].cgid, NULL, 0, line, &flags, NULL))
				continue;
			print_tenant(&devs[d], r[i].cgid, flags, line, &first);
		}
		free(r);
	}
	if (opt.json && !ret)
		printf("]\n");
	free(devs);
	return ret;
}

int cmd_tenant_list(int argc, char **argv)
{
	return list_or_show(argc, argv, false);
}

int cmd_tenant_show(int argc, char **argv)
{
	return list_or_show(argc, argv, true);
}

int cmd_tenant_del(int argc, char **argv)
{
	char msg[BLKISO_MSG_MAX];
	struct bdev dev;
	struct sel sel;
	uint64_t cgid;
	int ret;

	ret = tenant_open("tenant del dev DEV cgroup CGROUP", &argc, &argv, false, &sel, &dev,
			  &cgid);
	if (ret)
		return ret;
	ret = ioc_tenant_del(&dev, cgid, msg);
	if (ret == -ENOENT) {
		err("%s: no quota on %s", sel.cgroup, sel.dev);
		return BX_NOTFOUND;
	}
	return ret ? ioc_fail(sel.dev, ret, msg) : BX_OK;
}
