// SPDX-License-Identifier: GPL-2.0
/*
 * apply.c - apply FILE: a declarative configuration, one line each of
 *
 *   device DEV key=value...
 *   tenant DEV CGROUP key=value...
 *
 * with "#" comments.  Every line is checked first (names resolved, the line
 * dry-run through the kernel's parser against the current configuration);
 * any error is reported with its line number and nothing is applied.  Then
 * the lines are applied in order, each one all or nothing.
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
	err("\"%s\": expected \"device DEV key=value...\" or \"tenant DEV CGROUP key=value...\"",
	    tok[0]);
	return BX_INPUT;
}

/* Send @e to the kernel (a dry run with @flags = BLKISO_F_DRY_RUN). */
static int send(const struct entry *e, unsigned int flags)
{
	char msg[BLKISO_MSG_MAX];
	int ret;

	if (e->tenant)
		ret = ioc_tenant(true, &e->dev, e->cgid, e->line, flags, NULL, NULL, msg);
	else
		ret = ioc_device(true, &e->dev, e->line, flags, NULL, msg);
	return ret ? ioc_fail(e->tenant ? "tenant" : "device", ret, msg) : BX_OK;
}

static int read_entries(FILE *f, struct entry **out, int *nout)
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
		ret = parse_line(buf, &e);
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
	int n, i, ret;
	FILE *f;

	if (argc != 1) {
		err("usage: apply FILE");
		return BX_USAGE;
	}
	opt.file = argv[0];
	f = strcmp(argv[0], "-") ? fopen(argv[0], "r") : stdin;
	if (!f) {
		err("%s: %s", argv[0], strerror(errno));
		return errno_exit(errno);
	}
	ret = open_ctl();
	if (!ret)
		ret = read_entries(f, &v, &n);
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
