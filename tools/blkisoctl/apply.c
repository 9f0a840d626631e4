// SPDX-License-Identifier: GPL-2.0
/*
 * apply.c - apply FILE: a declarative configuration, one line each of
 *
 *   device DEV key=value...
 *   tenant DEV CGROUP key=value...
 *   rule DEV GLOB key=value...
 *
 * with "#" comments.  Every line is checked first (names resolved, the line
 * dry-run through the kernel's parser against the current configuration);
 * any error is reported with its line number and nothing is applied.  Then
 * the lines are applied in order, each one all or nothing.
 *
 * apply FILE DEV reads FILE as a blkiso-sim scenario (doc/sim.md) instead:
 * its "tenant name=A [cgroup=/a] QUOTA" (or "tenant A QUOTA", cgroup /A),
 * "devconf KEY=VALUE..." and "overload MODE" lines go to DEV, the
 * simulator's own lines (duration, seed, device, workload, at) are
 * skipped, and clone is refused: the same file configures the simulator
 * and the device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkisoctl.h"

#define MAX_TOKENS	(BLKISO_LINE_MAX / 2 + 3)

struct entry {
	int lineno;
	bool tenant;
	bool rule;			/* rule DEV GLOB key=value... */
	char glob[BLKISO_GLOB_MAX];
	struct bdev dev;
	uint64_t cgid;
	char line[BLKISO_LINE_MAX];
};

/* Split @s in place; "#" at a token's start ends the line. */
static int tokenize(char *s, char **tok, int max)
{
	int n = 0;
	char *p;

	for (p = strtok(s, " \t\r\n"); p; p = strtok(NULL, " \t\r\n")) {
		if (p[0] == '#')
			break;
		if (n == max)
			return -1;
		tok[n++] = p;
	}
	return n;
}

/* Parse and resolve one line into @e: an exit code (BX_OK). */
static int parse_line(char *s, struct entry *e)
{
	char *tok[MAX_TOKENS];
	int n = tokenize(s, tok, MAX_TOKENS), ret;

	if (n < 0) {
		err("too many tokens");
		return BX_INPUT;
	}
	if (!n)
		return -1;	/* blank or comment */
	if (!strcmp(tok[0], "device") && n >= 3) {
		e->tenant = false;
		ret = resolve_dev(tok[1], &e->dev);
		return ret ? ret : join_line(e->line, n - 2, tok + 2);
	}
	if (!strcmp(tok[0], "tenant") && n >= 4) {
		e->tenant = true;
		ret = resolve_dev(tok[1], &e->dev);
		if (!ret)
			ret = resolve_cgroup(tok[2], &e->cgid);
		return ret ? ret : join_line(e->line, n - 3, tok + 3);
	}
	if (!strcmp(tok[0], "rule") && n >= 4) {
		e->rule = true;
		snprintf(e->glob, sizeof(e->glob), "%s", tok[2]);
		ret = resolve_dev(tok[1], &e->dev);
		return ret ? ret : join_line(e->line, n - 3, tok + 3);
	}
	err("\"%s\": expected \"device DEV key=value...\", \"tenant DEV CGROUP key=value...\" or \"rule DEV GLOB key=value...\"",
	    tok[0]);
	return BX_INPUT;
}

/* A scenario's tenant line: name, cgroup (default /NAME), quota tokens. */
static int parse_sim_tenant(char **tok, int n, struct entry *e)
{
	char *quota[MAX_TOKENS], cgroup[BLKISO_LINE_MAX] = "";
	const char *name = NULL;
	int i, nq = 0, ret;

	for (i = 1; i < n; i++) {
		if (!name && !strchr(tok[i], '='))
			name = tok[i];
		else if (!strncmp(tok[i], "name=", 5))
			name = tok[i] + 5;
		else if (!strncmp(tok[i], "cgroup=", 7))
			snprintf(cgroup, sizeof(cgroup), "%s", tok[i] + 7);
		else
			quota[nq++] = tok[i];
	}
	if (!name || !*name) {
		err("tenant: no name");
		return BX_INPUT;
	}
	if (!cgroup[0])
		snprintf(cgroup, sizeof(cgroup), "/%s", name);
	e->tenant = true;
	ret = resolve_cgroup(cgroup, &e->cgid);
	return ret ? ret : join_line(e->line, nq, quota);
}

/* One line of a blkiso-sim scenario applied to @dev (see the top). */
static int parse_sim_line(char *s, const struct bdev *dev, struct entry *e)
{
	static const char * const skip[] = {
		"duration", "seed", "device", "workload", "at",
	};
	char *tok[MAX_TOKENS];
	int n = tokenize(s, tok, MAX_TOKENS);
	unsigned int i;

	if (n < 0) {
		err("too many tokens");
		return BX_INPUT;
	}
	if (!n)
		return -1;
	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(tok[0], skip[i]))
			return -1;	/* the simulator's own */
	e->dev = *dev;
	if (!strcmp(tok[0], "tenant"))
		return parse_sim_tenant(tok, n, e);
	if (!strcmp(tok[0], "devconf") && n >= 2) {
		e->tenant = false;
		return join_line(e->line, n - 1, tok + 1);
	}
	if (!strcmp(tok[0], "overload") && n == 2) {
		/* "overload MODE" is "devconf overload=MODE" (a device key) */
		e->tenant = false;
		if (snprintf(e->line, sizeof(e->line), "overload=%s", tok[1]) >=
		    (int)sizeof(e->line))
			return BX_INPUT;
		return 0;
	}
	err("\"%s\": not a scenario line apply can take (tenant, devconf; see doc/sim.md)",
	    tok[0]);
	return BX_INPUT;
}

/* Send @e to the kernel (a dry run with @flags = BLKISO_F_DRY_RUN). */
static int send(const struct entry *e, unsigned int flags)
{
	char msg[BLKISO_MSG_MAX];
	int ret;

	if (e->rule)
		ret = ioc_rule(&e->dev, e->glob, e->line, flags, msg);
	else if (e->tenant)
		ret = ioc_tenant(true, &e->dev, e->cgid, e->line, flags, NULL, NULL, msg);
	else
		ret = ioc_device(true, &e->dev, e->line, flags, NULL, msg);
	if (!ret && e->tenant && !flags)
		warn_io_controller(e->cgid, NULL);
	return ret ? ioc_fail(e->rule ? "rule" : e->tenant ? "tenant" : "device", ret, msg) :
		     BX_OK;
}

static int read_entries(FILE *f, const struct bdev *dev, struct entry **out, int *nout)
{
	struct entry *v = NULL, e;
	size_t cap = 0;
	char *buf = NULL;
	int lineno = 0, n = 0, ret, first = BX_OK;

	while (getline(&buf, &cap, f) > 0) {
		lineno++;
		snprintf(err_ctx, sizeof(err_ctx), "%s:%d", opt.file, lineno);
		memset(&e, 0, sizeof(e));
		e.lineno = lineno;
		ret = dev ? parse_sim_line(buf, dev, &e) : parse_line(buf, &e);
		if (ret < 0)
			continue;
		if (ret == BX_OK)
			ret = send(&e, BLKISO_F_DRY_RUN);
		if (ret) {
			first = first ? first : ret;
			continue;
		}
		v = realloc(v, (n + 1) * sizeof(*v));
		if (!v) {
			ret = BX_OTHER;
			break;
		}
		v[n++] = e;
	}
	free(buf);
	*out = v;
	*nout = n;
	return first;
}

int cmd_apply(int argc, char **argv)
{
	struct entry *v = NULL;
	struct bdev dev;
	int n, i, ret;
	FILE *f;

	if (argc != 1 && argc != 2) {
		err("usage: apply FILE [DEV]");
		return BX_USAGE;
	}
	if (argc == 2) {
		ret = resolve_dev(argv[1], &dev);
		if (ret)
			return ret;
	}
	opt.file = argv[0];
	f = strcmp(argv[0], "-") ? fopen(argv[0], "r") : stdin;
	if (!f) {
		err("%s: %s", argv[0], strerror(errno));
		return errno_exit(errno);
	}
	ret = open_ctl();
	if (!ret)
		ret = read_entries(f, argc == 2 ? &dev : NULL, &v, &n);
	if (f != stdin)
		fclose(f);
	if (ret) {
		err_ctx[0] = '\0';
		err("%s: nothing applied", argv[0]);
		free(v);
		return ret;
	}
	for (i = 0; i < n; i++) {
		snprintf(err_ctx, sizeof(err_ctx), "%s:%d", argv[0], v[i].lineno);
		ret = send(&v[i], 0);
		if (ret) {
			err_ctx[0] = '\0';
			err("%s: lines before %d applied, the rest not", argv[0], v[i].lineno);
			break;
		}
	}
	free(v);
	return ret;
}
