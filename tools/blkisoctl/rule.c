// SPDX-License-Identifier: GPL-2.0
/*
 * rule.c - rule add|del|list (device-level rules: a quota line for every
 * cgroup whose path matches a glob, doc/metering.md "Rules"), and save,
 * which prints the live configuration of one or every blkiso device as an
 * apply file: the attach line of a device attach made (its disk by a
 * stable name), device lines, rules, and tenant lines by cgroup path (the
 * tenants whose quota is a tenant line; those configured by a rule follow
 * from the rule).
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blkisoctl.h"

/* "[dev] DEV" then the rest: 0 or an exit code. */
static int rule_dev(const char *usage, int *argc, char ***argv, struct bdev *dev)
{
	struct sel sel;
	int ret;

	ret = take_selectors(argc, argv, &sel);
	if (ret)
		return ret;
	if (!sel.dev && *argc) {	/* "dev" may be left out */
		sel.dev = (*argv)[0];
		(*argc)--;
		(*argv)++;
	}
	if (!sel.dev || sel.cgroup || !*argc) {
		err("usage: %s", usage);
		return BX_USAGE;
	}
	ret = resolve_dev(sel.dev, dev);
	return ret ? ret : open_ctl();
}

int cmd_rule_add(int argc, char **argv)
{
	static const char usage[] = "rule add dev DEV GLOB key=value...";
	char line[BLKISO_LINE_MAX], msg[BLKISO_MSG_MAX];
	struct bdev dev;
	int ret;

	ret = rule_dev(usage, &argc, &argv, &dev);
	if (!ret && argc < 2) {
		err("usage: %s", usage);
		ret = BX_USAGE;
	}
	if (!ret)
		ret = join_line(line, argc - 1, argv + 1);
	if (ret)
		return ret;
	ret = ioc_rule(&dev, argv[0], line, 0, msg);
	return ret ? ioc_fail(argv[0], ret, msg) : BX_OK;
}

int cmd_rule_del(int argc, char **argv)
{
	static const char usage[] = "rule del dev DEV GLOB";
	char msg[BLKISO_MSG_MAX];
	struct bdev dev;
	int ret;

	ret = rule_dev(usage, &argc, &argv, &dev);
	if (!ret && argc != 1) {
		err("usage: %s", usage);
		ret = BX_USAGE;
	}
	if (ret)
		return ret;
	ret = ioc_rule(&dev, argv[0], NULL, BLKISO_F_DEL, msg);
	return ret ? ioc_fail(argv[0], ret, msg) : BX_OK;
}

/* The devices named by an optional "[dev] DEV", or every blkiso device. */
static int some_devices(const char *usage, int argc, char **argv, struct bdev **devs,
			unsigned int *n)
{
	struct sel sel;
	int ret;

	ret = take_selectors(&argc, &argv, &sel);
	if (ret)
		return ret;
	if (!sel.dev && argc == 1)
		sel.dev = argv[0], argc = 0;
	if (argc || sel.cgroup) {
		err("usage: %s", usage);
		return BX_USAGE;
	}
	if (!sel.dev) {
		ret = list_devices(devs, n);
	} else {
		*devs = calloc(1, sizeof(**devs));
		*n = 1;
		ret = *devs ? resolve_dev(sel.dev, *devs) : BX_OTHER;
	}
	return ret ? ret : open_ctl();
}

int cmd_rule_list(int argc, char **argv)
{
	struct blkiso_rule_rec *r = NULL;
	struct bdev *devs = NULL;
	unsigned int nd, d, i, n;
	bool first = true;
	int ret;

	ret = some_devices("rule list [dev DEV]", argc, argv, &devs, &nd);
	if (opt.json && !ret)
		printf("[");
	for (d = 0; d < nd && !ret; d++) {
		ret = ioc_rules(&devs[d], &r, &n);
		if (ret) {
			ret = ioc_fail(devs[d].name, ret, NULL);
			break;
		}
		for (i = 0; i < n; i++) {
			if (!opt.json) {
				printf("%s %s %s\n", devs[d].name, r[i].glob, r[i].line);
				continue;
			}
			printf("%s{\"device\":", first ? "" : ",");
			json_str(devs[d].name);
			printf(",\"glob\":");
			json_str(r[i].glob);
			printf(",\"line\":");
			json_str(r[i].line);
			printf("}");
			first = false;
		}
		free(r);
	}
	if (opt.json && !ret)
		printf("]\n");
	free(devs);
	return ret;
}

/*
 * "attach LOWER NAME" for a device that attach made (dm UUID BLKISO-NAME),
 * LOWER by a name that survives a reboot: the line that makes it at boot.
 */
static void save_attach(const struct bdev *dev)
{
	char path[PATH_MAX], uuid[160], names[1][NAME_LEN];
	unsigned int maj, min;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/dm/uuid", dev->major, dev->minor);
	if (read_line(path, uuid, sizeof(uuid)) ||
	    strncmp(uuid, DM_UUID_PREFIX, strlen(DM_UUID_PREFIX)) ||
	    dm_blkiso_lower(dev->name, &maj, &min))
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", maj, min);
	{
		char real[PATH_MAX];

		if (!realpath(path, real))
			return;
		disk_names(basename(real), names, 1);
	}
	printf("attach %s %s\n", names[0], dev->name);
}

/* One device's configuration as apply lines. */
static int save_dev(const struct bdev *dev)
{
	struct blkiso_rule_rec *r;
	struct blkiso_stats_rec *s;
	struct blkiso_ioc_stats st;
	char line[BLKISO_LINE_MAX];
	unsigned int i, n, flags;
	const char *path;
	int ret;

	save_attach(dev);
	ret = ioc_device(false, dev, NULL, 0, line, NULL);
	if (ret)
		return ioc_fail(dev->name, ret, NULL);
	if (line[0])
		printf("device %s %s\n", dev->name, line);
	ret = ioc_rules(dev, &r, &n);
	if (ret)
		return ioc_fail(dev->name, ret, NULL);
	for (i = 0; i < n; i++)
		printf("rule %s %s %s\n", dev->name, r[i].glob, r[i].line);
	free(r);
	ret = ioc_stats(dev, &st, &s);
	if (ret)
		return ioc_fail(dev->name, ret, NULL);
	for (i = 0; i < st.count; i++) {
		if (!(s[i].flags & BLKISO_F_CONFIGURED) || (s[i].flags & BLKISO_F_RULE))
			continue;
		if (ioc_tenant(false, dev, s[i].cgid, NULL, 0, line, &flags, NULL))
			continue;	/* gone meanwhile */
		path = cgroup_path(s[i].cgid);
		if (!path) {
			printf("# cgroup %" PRIu64 " was removed: %s\n", (uint64_t)s[i].cgid, line);
			continue;
		}
		printf("tenant %s %s %s\n", dev->name, path, line);
	}
	free(s);
	return BX_OK;
}

int cmd_save(int argc, char **argv)
{
	struct bdev *devs = NULL;
	unsigned int nd, d;
	time_t now = time(NULL);
	char when[64];
	int ret;

	if (opt.json) {
		err("save: the output is an apply file, not JSON");
		return BX_USAGE;
	}
	ret = some_devices("save [DEV]", argc, argv, &devs, &nd);
	if (ret) {
		free(devs);
		return ret;
	}
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
	printf("# blkisoctl save, %s: blkisoctl apply FILE restores it\n", when);
	for (d = 0; d < nd && !ret; d++) {
		if (!devs[d].name[0]) {
			err("%u:%u: no dm name", devs[d].major, devs[d].minor);
			ret = BX_NOTFOUND;
			break;
		}
		ret = save_dev(&devs[d]);
	}
	free(devs);
	return ret;
}
