// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - blkisoctl's command line: options, objects and commands, help.
 *
 *   blkisoctl [-j] [-p] [-n COUNT] COMMAND ARGS...
 *   blkisoctl [OPTIONS] OBJECT COMMAND ARGS...   (OBJECT: tenant, device)
 *
 * as iproute2 and bpftool do.  Each command lives in its own file.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkisoctl.h"

struct opts opt;

static const char usage_text[] =
"usage: blkisoctl [-j] [-p] [-n COUNT] COMMAND ARGS...\n"
"       blkisoctl [OPTIONS] { tenant | device } COMMAND ARGS...\n"
"\n"
"  attach DEV [NAME]             dm device NAME (default blkiso-<dev>) over DEV\n"
"  detach NAME                   remove it\n"
"  set CGROUP DEV key=value...   merge a quota line (tenant set)\n"
"  get CGROUP DEV                the tenant's canonical line (tenant get)\n"
"  device set DEV key=value...   merge a device line\n"
"  device get DEV                the device line\n"
"  stats DEV                     every tenant's counters (table, or -j JSON)\n"
"  top DEV                       rates and feedback every second (-n COUNT)\n"
"  ring DEV [CGROUP]             the feedback tick's records, device or tenant\n"
"  apply FILE                    \"device DEV k=v...\", \"tenant DEV CGROUP k=v...\"\n"
"  apply FILE DEV                a blkiso-sim scenario's tenant and devconf lines\n"
"  version                       tool and module versions\n"
"\n"
"  CGROUP: \"kernel\", a cgroup id, or a path below /sys/fs/cgroup\n"
"  DEV: /dev/mapper/NAME, /dev/dm-N or a dm name\n"
"  -j, --json  JSON output;  -p, --pretty  indented JSON;  -h, --help\n"
"exit: 0 ok, 1 usage, 2 bad input, 3 not found, 4 permission, 5 other\n"
"See blkisoctl(8).\n";

static int cmd_version(int argc, char **argv)
{
	struct blkiso_ioc_version v;
	int ret;

	(void)argv;
	if (argc) {
		err("usage: version");
		return BX_USAGE;
	}
	ret = open_ctl();
	if (!ret) {
		ret = ioc_version(&v);
		if (ret)
			return ioc_fail(BLKISO_DEV_PATH, ret, NULL);
	}
	if (ret)
		return ret;
	if (opt.json)
		printf("{\"tool\":\"%s\",\"module\":\"%.16s\",\"ioctl_version\":%u}\n",
		       BLKISOCTL_VERSION, v.module_version, v.ioctl_version);
	else
		printf("blkisoctl %s, module %.16s, ioctl version %u\n", BLKISOCTL_VERSION,
		       v.module_version, v.ioctl_version);
	return BX_OK;
}

struct command {
	const char *object;	/* NULL: flat */
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct command commands[] = {
	{ NULL, "attach", cmd_attach },
	{ NULL, "detach", cmd_detach },
	{ NULL, "set", cmd_set },
	{ NULL, "get", cmd_get },
	{ NULL, "stats", cmd_stats },
	{ NULL, "top", cmd_top },
	{ NULL, "apply", cmd_apply },
	{ NULL, "ring", cmd_ring },
	{ NULL, "version", cmd_version },
	{ "tenant", "set", cmd_set },
	{ "tenant", "get", cmd_get },
	{ "device", "set", cmd_dev_set },
	{ "device", "get", cmd_dev_get },
	{ "device", "attach", cmd_attach },
	{ "device", "detach", cmd_detach },
	{ "device", "stats", cmd_stats },
	{ "device", "top", cmd_top },
	{ "device", "ring", cmd_ring },
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *object = NULL;
	unsigned int i;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "jpn:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.json = opt.pretty = true;
			break;
		case 'n':
			opt.count = strtol(optarg, &end, 10);
			if (*end || opt.count <= 0) {
				err("-n \"%s\": want a positive count", optarg);
				return BX_USAGE;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return BX_OK;
		default:
			fputs(usage_text, stderr);
			return BX_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc && (!strcmp(argv[0], "tenant") || !strcmp(argv[0], "device"))) {
		object = argv[0];
		argc--;
		argv++;
	}
	if (!argc) {
		fputs(usage_text, stderr);
		return BX_USAGE;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const struct command *cmd = &commands[i];

		if (!strcmp(cmd->name, argv[0]) &&
		    (object ? cmd->object && !strcmp(cmd->object, object) : !cmd->object))
			return cmd->fn(argc - 1, argv + 1);
	}
	err("%s%s%s: unknown command (see --help)", object ? object : "", object ? " " : "",
	    argv[0]);
	return BX_USAGE;
}
