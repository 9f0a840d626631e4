/* SPDX-License-Identifier: GPL-2.0 */
/*
 * meter_rig.h - one tenant's meter for the unit tests: a device line of
 * defaults, a tenant line parsed and configured, one CPU's local buckets.
 */
#ifndef BLKISO_METER_RIG_H
#define BLKISO_METER_RIG_H

#include <string.h>

#include "meter.h"

struct rig {
	struct bi_tenant_conf conf;
	struct bi_dev_conf dev;
	struct bi_meter m;
	struct bi_meter_cpu cpu;
};

/* The tenant @line on a default device at time 0; -1 if it does not parse. */
static inline int rig_init(struct rig *r, const char *line)
{
	bi_dev_conf_init(&r->dev);
	bi_meter_init(&r->m, 0);
	bi_meter_init_cpu(&r->cpu, 0);
	if (bi_conf_parse(&r->conf, line, strlen(line), NULL))
		return -1;
	bi_meter_configure(&r->m, &r->conf, &r->dev, 0);
	return 0;
}

#endif
