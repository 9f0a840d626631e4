// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - blkisoctl's command line: options, objects and commands, help.
 *
 *   blkisoctl [-j] [-p] [-n COUNT] [--prometheus] COMMAND ARGS...
 *   blkisoctl [OPTIONS] OBJECT COMMAND ARGS...   (OBJECT: tenant, device, rule)
 *
 * as iproute2 and bpftool do: objects named by keyword selectors ("dev X
 * cgroup Y", in any order), -h/--help and -V/--version anywhere.  Each
 * command lives in its own file.
 */
#include <errno.h>
#include <getopt.h>
#include <libdevmapper.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkisoctl.h"

struct opts opt;

static const char usage_text[] =
"usage: blkisoctl [OPTIONS] COMMAND ARGS...\n"
"       blkisoctl [OPTIONS] { tenant | device | rule } COMMAND ARGS...\n"
"\n"
"  attach dev DEV [name NAME]              dm device NAME (default blkiso-<dev>) over DEV\n"
"  detach dev NAME                         remove it (also: attach DEV [NAME], detach NAME)\n"
"  attach --live dev DEV [name NAME]       the same under DEV's dm holders (LVs), mounted\n"
"  detach --live dev NAME                  holders back onto the disk, blkiso removed\n"
"  resize dev NAME                         NAME's table to the present size of its disk\n"
"  tenant set dev DEV cgroup CG key=value... merge a quota line (also: set CG DEV ...)\n"
"  tenant get dev DEV cgroup CG            the tenant's canonical line (also: get CG DEV)\n"
"  tenant del dev DEV cgroup CG            drop the quota: back to counted only\n"
"  tenant show [dev DEV [cgroup CG]]       the quota lines, of every device if none named\n"
"  tenant list [dev DEV]                   every tenant, with a quota or counted only\n"
"  rule add dev DEV GLOB key=value...      a quota for every cgroup matching GLOB\n"
"  rule del dev DEV GLOB                   remove that rule\n"
"  rule list [dev DEV]                     the rules, of every device if none named\n"
"  device set dev DEV key=value...         merge a device line\n"
"  device get dev DEV                      the device line\n"
"  stats dev DEV                           every tenant's counters (table, or -j JSON)\n"
"  stats --prometheus [dev DEV]            Prometheus text format, every device if none\n"
"  top dev DEV                             rates and feedback every second (-n COUNT)\n"
"  ring dev DEV [cgroup CG]                the feedback tick's records, device or tenant\n"
"  apply FILE                              \"attach LOWER [NAME]\", \"device DEV k=v...\",\n"
"                                          \"tenant DEV CG k=v...\", \"rule DEV GLOB k=v...\"\n"
"  save [DEV]                              the live configuration as an apply file\n"
"  cluster [STATUS]                        blkiso-agent's cluster tenants: source, leases\n"
"  apply FILE DEV                          a blkiso-sim scenario's tenant and devconf lines\n"
"  version                                 tool and module versions\n"
"\n"
"  CG: \"kernel\", a cgroup id (digits only) or a path below /sys/fs/cgroup\n"
"  DEV: /dev/mapper/NAME, /dev/dm-N or a dm name; \"dev\" may be left out\n"
"  -j, --json  JSON output (errors too);  -p, --pretty  indented JSON\n"
"  -n, --count COUNT  top's refreshes;  --prometheus  stats in the Prometheus format\n"
"  --live  attach/detach under the disk's device-mapper holders (LVM), see blkisoctl(8)\n"
"  -h, --help  this text;  -V, --version  the tool's version\n"
"exit: 0 ok, 1 usage, 2 bad input, 3 not found, 4 permission, 5 other\n"
"See blkisoctl(8).\n";

/* The tool's version always; the module's when it is loaded. */
static int cmd_version(int argc, char **argv)
{
	struct blkiso_ioc_version v;
	int fd, ret;

	(void)argv;
	if (argc) {
		err("usage: version");
		return BX_USAGE;
	}
	fd = ioc_open();
	ret = fd < 0 ? fd : ioc_version(&v);
	if (opt.json) {
		printf("{\"tool\":\"%s\",\"module\":", BLKISOCTL_VERSION);
		if (ret)
			printf("null,\"ioctl_version\":null}\n");
		else
			printf("\"%.16s\",\"ioctl_version\":%u}\n", v.module_version,
			       v.ioctl_version);
	} else if (ret == -ENOENT && fd < 0) {
		printf("blkisoctl %s, module not loaded\n", BLKISOCTL_VERSION);
	} else if (ret) {
		printf("blkisoctl %s, module unknown (%s: %s)\n", BLKISOCTL_VERSION,
		       BLKISO_DEV_PATH, strerror(-ret));
	} else {
		printf("blkisoctl %s, module %.16s, ioctl version %u\n", BLKISOCTL_VERSION,
		       v.module_version, v.ioctl_version);
	}
	return BX_OK;
}

/*
 * attach and detach in the keyword form ("attach dev DEV [name NAME]",
 * "detach dev NAME") as the positional one dm.c reads; 0 or an exit code.
 */
static int attach_keywords(const char *cmd, int *argc, char **argv)
{
	bool attach = !strcmp(cmd, "attach");
	char *dev = NULL, *name = NULL;
	int i;

	if ((!attach && strcmp(cmd, "detach") && strcmp(cmd, "resize")) || !*argc ||
	    strcmp(argv[0], "dev"))
		return BX_OK;
	for (i = 0; i < *argc; i += 2) {
		char **slot = !strcmp(argv[i], "dev") ? &dev :
			      attach && !strcmp(argv[i], "name") ? &name : NULL;

		if (!slot || i + 1 >= *argc || *slot) {
			err("usage: %s", attach ? "attach dev DEV [name NAME]" : !strcmp(cmd, "detach") ?
			    "detach dev NAME" : "resize dev NAME");
			return BX_USAGE;
		}
		*slot = argv[i + 1];
	}
	argv[0] = dev;
	argv[1] = name;
	*argc = name ? 2 : 1;
	return BX_OK;
}

/* Under -j libdevmapper's own messages would break the JSON: dropped. */
static void dm_log_quiet(int level, const char *file, int line, int dm_errno,
			 const char *fmt, ...)
{
	(void)level, (void)file, (void)line, (void)dm_errno, (void)fmt;
}

struct command {
	const char *object;	/* NULL: flat */
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct command commands[] = {
	{ NULL, "attach", cmd_attach },
	{ NULL, "detach", cmd_detach },
	{ NULL, "resize", cmd_resize },
	{ NULL, "set", cmd_set },
	{ NULL, "get", cmd_get },
	{ NULL, "stats", cmd_stats },
	{ NULL, "top", cmd_top },
	{ NULL, "apply", cmd_apply },
	{ NULL, "ring", cmd_ring },
	{ NULL, "version", cmd_version },
	{ NULL, "save", cmd_save },
	{ NULL, "cluster", cmd_cluster },
	{ "rule", "add", cmd_rule_add },
	{ "rule", "del", cmd_rule_del },
	{ "rule", "list", cmd_rule_list },
	{ "tenant", "set", cmd_set },
	{ "tenant", "get", cmd_get },
	{ "tenant", "show", cmd_tenant_show },
	{ "tenant", "list", cmd_tenant_list },
	{ "tenant", "del", cmd_tenant_del },
	{ "device", "set", cmd_dev_set },
	{ "device", "get", cmd_dev_get },
	{ "device", "attach", cmd_attach },
	{ "device", "detach", cmd_detach },
	{ "device", "resize", cmd_resize },
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
		{ "version", no_argument, NULL, 'V' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "live", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	const char *object = NULL;
	unsigned int i;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "jpn:hV", longopts, NULL)) != -1) {
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
		case 'V':
			printf("blkisoctl %s\n", BLKISOCTL_VERSION);
			return BX_OK;
		case 'P':
			opt.prometheus = true;
			break;
		case 'L':
			opt.live = true;
			break;
		default:
			fputs(usage_text, stderr);
			return BX_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc && (!strcmp(argv[0], "tenant") || !strcmp(argv[0], "device") ||
		     !strcmp(argv[0], "rule"))) {
		object = argv[0];
		argc--;
		argv++;
	}
	if (!argc) {
		fputs(usage_text, stderr);
		return BX_USAGE;
	}
	if (opt.json)
		dm_log_with_errno_init(dm_log_quiet);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const struct command *cmd = &commands[i];

		if (!strcmp(cmd->name, argv[0]) &&
		    (object ? cmd->object && !strcmp(cmd->object, object) : !cmd->object)) {
			int ret;

			argc--;
			argv++;
			ret = attach_keywords(cmd->name, &argc, argv);
			return ret ? ret : cmd->fn(argc, argv);
		}
	}
	err("%s%s%s: unknown command (see --help)", object ? object : "", object ? " " : "",
	    argv[0]);
	return BX_USAGE;
}
