// SPDX-License-Identifier: GPL-2.0
/*
 * apply.c - apply FILE: a declarative configuration, one line each of
 *
 *   attach LOWER [NAME]
 *   device DEV key=value...
 *   tenant DEV CGROUP key=value...
 *   rule DEV GLOB key=value...
 *
 * with "#" comments (the format of /etc/blkiso/blkiso.conf, which
 * blkiso.service applies at boot and on reload).  Every line is checked
 * first (names resolved, the line dry-run through the kernel's parser
 * against the current configuration); any error is reported with its line
 * number and nothing is applied.  Then the attach lines run (an attach line
 * whose NAME is already blkiso over LOWER does nothing), the lines naming
 * the devices they made are checked in turn (a failure detaches them
 * again: still nothing applied), and the other lines are applied in order,
 * each one all or nothing.
 *
 * A tenant line whose cgroup path does not exist (yet) becomes a rule whose
 * glob is that path (said in a note): the kernel gives the line to the
 * cgroup's tenant when the cgroup appears and does I/O, and again each time
 * it is made anew (a restarted unit).  BLKISOCTL_DEVICE_WAIT=S lets an
 * attach line wait up to S seconds for LOWER to appear (boot).
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "blkisoctl.h"

#define MAX_TOKENS	(BLKISO_LINE_MAX / 2 + 3)

#define CGROUP_ROOT	"/sys/fs/cgroup"

struct entry {
	int lineno;
	bool tenant;
	bool attach;		/* attach LOWER NAME (line: LOWER) */
	bool attached;		/* attach: NAME exists already, or we made it */
	bool made;		/* attach: this run made it (undone on failure) */
	bool rule;		/* rule DEV GLOB key=value... */
	int pending;		/* -1, or the attach entry that makes dev */
	char name[128];		/* attach: NAME; pending: the name to resolve */
	char glob[BLKISO_GLOB_MAX];
	struct bdev dev;
	uint64_t cgid;
	char line[BLKISO_LINE_MAX];
};

/* The entries read so far: attach lines are looked up by later lines. */
static struct entry *entries;
static int nentries;

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

/* Wait up to $BLKISOCTL_DEVICE_WAIT seconds for @path to exist. */
static int wait_for(const char *path, struct stat *st)
{
	const char *env = getenv("BLKISOCTL_DEVICE_WAIT");
	const struct timespec step = { 0, 100 * 1000 * 1000 };
	long tries = env ? atol(env) * 10 : 0;

	while (stat(path, st)) {
		if (errno != ENOENT || tries-- <= 0)
			return -errno;
		nanosleep(&step, NULL);
	}
	return 0;
}

/* attach LOWER [NAME]: nothing to do, or a device to make (see the top). */
static int parse_attach(char **tok, int n, struct entry *e)
{
	unsigned int maj, min;
	struct stat st;
	int ret;

	e->attach = true;
	if (n > 3) {
		err("usage: attach LOWER [NAME]");
		return BX_INPUT;
	}
	if (n == 3)
		snprintf(e->name, sizeof(e->name), "%s", tok[2]);
	else
		dm_default_name(tok[1], e->name, sizeof(e->name));
	if (join_line(e->line, 1, tok + 1))
		return BX_INPUT;
	ret = wait_for(tok[1], &st);
	if (ret) {
		err("%s: %s", tok[1], strerror(-ret));
		return errno_exit(-ret);
	}
	if (!S_ISBLK(st.st_mode)) {
		err("%s: not a block device", tok[1]);
		return BX_INPUT;
	}
	ret = dm_blkiso_lower(e->name, &maj, &min);
	if (ret == -ENOENT)
		return BX_OK;
	if (ret) {
		err("%s: a dm device of that name exists and is not blkiso", e->name);
		return BX_INPUT;
	}
	if (maj != major(st.st_rdev) || min != minor(st.st_rdev)) {
		err("%s: attached over %u:%u already, not over %s", e->name, maj, min,
		    tok[1]);
		return BX_INPUT;
	}
	e->attached = true;
	return BX_OK;
}

/* DEV of a device or tenant line: attached now, or by an attach line above. */
static int parse_dev(const char *arg, struct entry *e)
{
	const char *name = strncmp(arg, "/dev/mapper/", 12) ? arg : arg + 12;
	int i;

	e->pending = -1;
	for (i = 0; i < nentries; i++) {
		if (entries[i].attach && !entries[i].attached &&
		    !strcmp(entries[i].name, name)) {
			e->pending = i;
			snprintf(e->name, sizeof(e->name), "%s", name);
			return BX_OK;
		}
	}
	return resolve_dev(arg, &e->dev);
}

/* @arg, a cgroup path with or without CGROUP_ROOT, as "/a/b" below it. */
static void cgroup_rel_path(const char *arg, char *rel, size_t size)
{
	if (!strncmp(arg, CGROUP_ROOT "/", sizeof(CGROUP_ROOT)))
		arg += sizeof(CGROUP_ROOT) - 1;
	snprintf(rel, size, "%s%s", arg[0] == '/' ? "" : "/", arg);
}

/* A cgroup path (not "kernel", not an id) whose directory is not there. */
static bool cgroup_missing(const char *arg)
{
	char rel[4096], path[4096 + sizeof(CGROUP_ROOT)];
	struct stat st;

	if (!strcmp(arg, "kernel") || strspn(arg, "0123456789") == strlen(arg))
		return false;
	cgroup_rel_path(arg, rel, sizeof(rel));
	snprintf(path, sizeof(path), CGROUP_ROOT "%s", rel);
	return stat(path, &st) != 0 && errno == ENOENT;
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
	if (!strcmp(tok[0], "attach") && n >= 2)
		return parse_attach(tok, n, e);
	if (!strcmp(tok[0], "device") && n >= 3) {
		e->tenant = false;
		ret = parse_dev(tok[1], e);
		return ret ? ret : join_line(e->line, n - 2, tok + 2);
	}
	if (!strcmp(tok[0], "tenant") && n >= 4) {
		e->tenant = true;
		ret = parse_dev(tok[1], e);
		if (ret)
			return ret;
		if (cgroup_missing(tok[2])) {
			/*
			 * A rule whose glob is the path itself: the tenant
			 * gets the line when the cgroup appears (and again
			 * whenever it is made anew, e.g. a restarted unit).
			 */
			e->tenant = false;
			e->rule = true;
			cgroup_rel_path(tok[2], e->glob, sizeof(e->glob));
			err("note: cgroup %s does not exist yet: its line applies as the rule %s when it appears",
			    tok[2], e->glob);
			return join_line(e->line, n - 3, tok + 3);
		}
		ret = resolve_cgroup(tok[2], &e->cgid);
		return ret ? ret : join_line(e->line, n - 3, tok + 3);
	}
	if (!strcmp(tok[0], "rule") && n >= 4) {
		e->rule = true;
		snprintf(e->glob, sizeof(e->glob), "%s", tok[2]);
		ret = parse_dev(tok[1], e);
		return ret ? ret : join_line(e->line, n - 3, tok + 3);
	}
	err("\"%s\": expected \"attach LOWER [NAME]\", \"device DEV key=value...\", \"tenant DEV CGROUP key=value...\" or \"rule DEV GLOB key=value...\"",
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
	e->pending = -1;
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

static int read_entries(FILE *f, const struct bdev *dev)
{
	struct entry e, *v;
	size_t cap = 0;
	char *buf = NULL;
	int lineno = 0, ret, first = BX_OK;

	while (getline(&buf, &cap, f) > 0) {
		lineno++;
		snprintf(err_ctx, sizeof(err_ctx), "%s:%d", opt.file, lineno);
		memset(&e, 0, sizeof(e));
		e.lineno = lineno;
		ret = dev ? parse_sim_line(buf, dev, &e) : parse_line(buf, &e);
		if (ret < 0)
			continue;
		if (ret == BX_OK && !e.attach && e.pending < 0)
			ret = send(&e, BLKISO_F_DRY_RUN);
		if (ret) {
			first = first ? first : ret;
			continue;
		}
		v = realloc(entries, (nentries + 1) * sizeof(*v));
		if (!v) {
			first = BX_OTHER;
			break;
		}
		entries = v;
		entries[nentries++] = e;
	}
	free(buf);
	return first;
}

/* -j: one object, the lines applied and the devices attached. */
static void apply_report(void)
{
	bool first = true;
	int i, n = 0;

	for (i = 0; i < nentries; i++)
		n += !entries[i].attach;
	printf("{\"applied\":%d,\"attached\":[", n);
	for (i = 0; i < nentries; i++) {
		if (!entries[i].attach || !entries[i].made)
			continue;
		printf("%s{\"device\":", first ? "" : ",");
		json_str(entries[i].name);
		printf(",\"lower\":");
		json_str(entries[i].line);
		printf("}");
		first = false;
	}
	printf("]}\n");
}

/* Detach what this run attached (a later check failed). */
static void undo_attach(void)
{
	char *argv[1];
	int i;

	for (i = 0; i < nentries; i++) {
		if (entries[i].attach && entries[i].made) {
			argv[0] = entries[i].name;
			cmd_detach(1, argv);
		}
	}
}

/* Make the attach lines' devices, then check the lines that name them. */
static int attach_and_check(void)
{
	struct entry *e;
	int i, ret;

	for (i = 0; i < nentries; i++) {
		e = &entries[i];
		if (!e->attach || e->attached)
			continue;
		snprintf(err_ctx, sizeof(err_ctx), "%s:%d", opt.file, e->lineno);
		ret = dm_attach(e->line, e->name);
		if (ret)
			return ret;
		e->attached = e->made = true;
		if (!opt.json) {
			printf("attached %s over %s\n", e->name, e->line);
			fflush(stdout);	/* in order with stderr in the journal */
		}
	}
	for (i = 0; i < nentries; i++) {
		e = &entries[i];
		if (e->attach || e->pending < 0)
			continue;
		snprintf(err_ctx, sizeof(err_ctx), "%s:%d", opt.file, e->lineno);
		ret = resolve_dev(e->name, &e->dev);
		if (!ret)
			ret = send(e, BLKISO_F_DRY_RUN);
		if (ret)
			return ret;
	}
	return BX_OK;
}

int cmd_apply(int argc, char **argv)
{
	struct bdev dev;
	int i, ret;
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
		ret = read_entries(f, argc == 2 ? &dev : NULL);
	if (f != stdin)
		fclose(f);
	if (!ret) {
		ret = attach_and_check();
		if (ret)
			undo_attach();
	}
	if (ret) {
		err_ctx[0] = '\0';
		err("%s: nothing applied", argv[0]);
		return ret;
	}
	for (i = 0; i < nentries; i++) {
		struct entry *e = &entries[i];

		if (e->attach)
			continue;
		snprintf(err_ctx, sizeof(err_ctx), "%s:%d", argv[0], e->lineno);
		ret = send(e, 0);
		if (ret) {
			err_ctx[0] = '\0';
			err("%s: lines before %d applied, the rest not", argv[0], e->lineno);
			return ret;
		}
	}
	if (opt.json)
		apply_report();
	return BX_OK;
}
