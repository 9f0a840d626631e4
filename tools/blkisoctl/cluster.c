// SPDX-License-Identifier: GPL-2.0
/*
 * cluster.c - blkisoctl cluster [STATUS]: the cluster tenants of this
 * host's blkiso-agent (doc/cluster.md), from the agent's status file
 * (default /run/blkiso-agent.status), with each tenant's leased credit
 * and its expiry read live from the kernel (BLKISO_IOC_LEASE, a query).
 * source: granted (the last round's lease came from the cluster bucket),
 * fail-static (the store is away: quota / active hosts), floor (away for
 * longer than fail_static_ms: the cap alone), idle (no demand above the
 * floor).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkisoctl.h"

/* The value of " key=" in @line, copied to @out. */
static const char *field(const char *line, const char *key, char *out, size_t size)
{
	char pat[40];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p) {
		snprintf(out, size, "-");
		return out;
	}
	p += strlen(pat);
	n = strcspn(p, " \n");
	if (n >= size)
		n = size - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return out;
}

int cmd_cluster(int argc, char **argv)
{
	const char *path = argc > 0 ? argv[0] : "/run/blkiso-agent.status";
	char line[1024], name[64], src[16], dev[32], cgid[32], key[8], act[16], rt[32];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (argc > 1) {
		if (f)
			fclose(f);
		err("usage: cluster [STATUS_FILE]");
		return BX_USAGE;
	}
	if (!f) {
		err("%s: %s (is blkiso-agent running?)", path, strerror(errno));
		return 1;
	}
	printf("%-16s %-11s %-8s %12s %10s %14s %12s %6s %11s\n", "TENANT", "SOURCE", "DEV",
	       "CREDIT", "EXPIRES_MS", "GRANTED", "SPENT", "HOSTS", "ROUND_TRIPS");
	while (fgets(line, sizeof(line), f)) {
		struct blkiso_ioc_lease a;
		unsigned int ma, mi;

		if (strncmp(line, "tenant ", 7) || sscanf(line + 7, "%63s", name) != 1)
			continue;
		field(line, "dev", dev, sizeof(dev));
		field(line, "cgid", cgid, sizeof(cgid));
		field(line, "key", key, sizeof(key));
		n++;
		if (sscanf(dev, "%u:%u", &ma, &mi) != 2 ||
		    ioc_lease_query(ma, mi, strtoull(cgid, NULL, 10), atoi(key), &a)) {
			printf("%-16s %-11s %-8s (no such tenant in the kernel)\n", name,
			       field(line, "source", src, sizeof(src)), dev);
			continue;
		}
		printf("%-16s %-11s %-8s %12llu %10llu %14llu %12llu %6s %11s\n", name,
		       field(line, "source", src, sizeof(src)), dev,
		       (unsigned long long)a.left, (unsigned long long)a.ttl_left_ms,
		       (unsigned long long)a.granted, (unsigned long long)a.spent,
		       field(line, "active_hosts", act, sizeof(act)),
		       field(line, "round_trips", rt, sizeof(rt)));
	}
	fclose(f);
	if (!n)
		printf("(no cluster tenant)\n");
	return 0;
}
