// SPDX-License-Identifier: GPL-2.0
/*
 * sim_scenario.c - read a blkiso-sim scenario (doc/sim.md).
 *
 * One job: turn scenario lines into the struct sim the engine runs.  Quota
 * lines of tenants and the devconf line go through the shared grammar of
 * the decision core (bi_conf_parse/bi_conf_merge, bi_dev_conf_merge), so a
 * scenario's tenant line is exactly what an operator would write to the
 * module.  Everything else (device model, workloads, phases) is the
 * simulator's own small line grammar.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "sim_engine.h"

static int sim_fail(struct sim *s, u32 lineno, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(s->err, sizeof(s->err), "line %u: ", lineno);
	va_start(ap, fmt);
	vsnprintf(s->err + n, sizeof(s->err) - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* "123", "4k", "1m", "2g" (binary); returns 0 on success. */
static int sim_parse_size(const char *v, u64 *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case 'k':
		n <<= 10;
		end++;
		break;
	case 'm':
		n <<= 20;
		end++;
		break;
	case 'g':
		n <<= 30;
		end++;
		break;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -1;
	*out = n;
	return 0;
}

/* "10s", "250ms", "100us", "1.5s"; a bare number is seconds. */
static int sim_parse_time(const char *v, u64 *out_ns)
{
	char *end;
	double x;
	u64 mul = BI_NSEC_PER_SEC;

	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || x < 0)
		return -1;
	if (!strcmp(end, "ms"))
		mul = BI_NSEC_PER_MSEC;
	else if (!strcmp(end, "us"))
		mul = BI_NSEC_PER_USEC;
	else if (!strcmp(end, "ns"))
		mul = 1;
	else if (*end && strcmp(end, "s"))
		return -1;
	*out_ns = (u64)(x * (double)mul + 0.5);
	return 0;
}

static int sim_parse_u64(const char *v, u64 *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || *end)
		return -1;
	*out = n;
	return 0;
}

/* Split "key=value" in place; value is NULL without '='. */
static char *sim_kv(char *tok, char **val)
{
	char *eq = strchr(tok, '=');

	*val = NULL;
	if (eq) {
		*eq = '\0';
		*val = eq + 1;
	}
	return tok;
}

/* Next whitespace-separated token of *p, NUL-terminated in place. */
static char *sim_tok(char **p)
{
	char *s = *p, *t;

	while (*s && isspace((unsigned char)*s))
		s++;
	if (!*s)
		return NULL;
	t = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	if (*s)
		*s++ = '\0';
	*p = s;
	return t;
}

struct sim_tenant *sim_tenant_find(struct sim *s, const char *name)
{
	u32 i;

	for (i = 0; i < s->nr_tenants; i++)
		if (!strcmp(s->tenants[i].name, name))
			return &s->tenants[i];
	return NULL;
}

static void sim_workload_default(struct sim_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->iodepth = 1;
	w->nr_bs = 1;
	w->bs[0] = 4096;
	w->bs_weight[0] = 1;
	w->read_pct = 100;
	w->prio_class = BI_PRIO_BE;
}

/*
 * Initialise the engine's defaults: a 1 ms device with 16 slots, 10 s, the
 * grammar's device defaults (overload gate off).
 */
int sim_init(struct sim *s)
{
	memset(s, 0, sizeof(*s));
	s->dev.slots = 16;
	s->dev.latency_ns = BI_NSEC_PER_MSEC;
	s->duration_ns = 10 * BI_NSEC_PER_SEC;
	s->seed = 1;
	s->dev_window = U64_MAX;	/* no budget window started */
	bi_dev_conf_init(&s->dconf);
	return 0;
}

static int sim_line_device(struct sim *s, char *rest, u32 lineno)
{
	char *tok, *val;
	u64 v;

	while ((tok = sim_tok(&rest))) {
		sim_kv(tok, &val);
		if (!val || sim_parse_u64(val, &v))
			return sim_fail(s, lineno, "device: bad %s", tok);
		if (!strcmp(tok, "slots") && v >= 1 && v <= 1 << 20)
			s->dev.slots = (u32)v;
		else if (!strcmp(tok, "latency_us") && v >= 1)
			s->dev.latency_ns = v * BI_NSEC_PER_USEC;
		else if (!strcmp(tok, "latency_ns") && v >= 1)
			s->dev.latency_ns = v;
		else if (!strcmp(tok, "per_kib_ns"))
			s->dev.per_kib_ns = v;
		else if (!strcmp(tok, "mbps") && v <= 1 << 24)
			s->dev.window_bytes = v * ((1 << 20) / 1000);	/* as null_blk */
		else if (!strcmp(tok, "cap_rps"))
			s->dev.cap_mrps = v * BI_MRPS_PER_RPS;
		else
			return sim_fail(s, lineno, "device: unknown or bad key %s", tok);
	}
	return 0;
}

static int sim_line_devconf(struct sim *s, char *rest, u32 lineno)
{
	struct bi_parse_err err;

	if (bi_dev_conf_merge(&s->dconf, rest, (u32)strlen(rest), &err))
		return sim_fail(s, lineno, "devconf: %s", err.msg);
	/* the module cuts bios in .map (dm core resubmits the rest); no model here */
	if (s->dconf.chunk_bytes)
		return sim_fail(s, lineno, "devconf: chunk_bytes is not modelled by "
				"blkiso-sim (it charges a bio whole)");
	return 0;
}

/* "overload MODE": shorthand for "devconf overload=MODE". */
static int sim_line_overload(struct sim *s, char *rest, u32 lineno)
{
	char *tok = sim_tok(&rest), line[64];
	struct bi_parse_err err;
	int n;

	if (!tok)
		return sim_fail(s, lineno, "overload: missing mode");
	n = snprintf(line, sizeof(line), "overload=%s", tok);
	if (n >= (int)sizeof(line) ||
	    bi_dev_conf_merge(&s->dconf, line, (u32)n, &err))
		return sim_fail(s, lineno, "overload: unknown mode %s", tok);
	return 0;
}

static struct sim_tenant *sim_tenant_add(struct sim *s, const char *name)
{
	struct sim_tenant *t;
	void *n = realloc(s->tenants, (s->nr_tenants + 1) * sizeof(*s->tenants));

	if (!n)
		return NULL;
	s->tenants = n;
	t = &s->tenants[s->nr_tenants++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	bi_tenant_conf_init(&t->conf);
	sim_workload_default(&t->wl);
	t->wl.iodepth = 0;		/* no workload until a workload line */
	return t;
}

/*
 * "tenant name=A [cgroup=/a] <quota>" or "tenant A <quota>".  A new tenant
 * parses its quota (keys not named get defaults); an existing one merges.
 */
static int sim_line_tenant(struct sim *s, char *rest, u32 lineno, bool running)
{
	char name[SIM_NAME_MAX] = "", cgroup[SIM_NAME_MAX * 2] = "";
	char quota[SIM_LINE_MAX] = "";
	struct bi_parse_err err;
	struct sim_tenant *t;
	char *tok, *val;
	size_t ql = 0;
	int rc;

	while ((tok = sim_tok(&rest))) {
		char copy[SIM_LINE_MAX];

		snprintf(copy, sizeof(copy), "%s", tok);
		sim_kv(tok, &val);
		if (!val && !name[0]) {
			snprintf(name, sizeof(name), "%s", tok);
		} else if (val && !strcmp(tok, "name")) {
			snprintf(name, sizeof(name), "%s", val);
		} else if (val && !strcmp(tok, "cgroup")) {
			snprintf(cgroup, sizeof(cgroup), "%s", val);
		} else {
			ql += snprintf(quota + ql, sizeof(quota) - ql, "%s%s",
				       ql ? " " : "", copy);
			if (ql >= sizeof(quota))
				return sim_fail(s, lineno, "tenant: quota too long");
		}
	}
	if (!name[0])
		return sim_fail(s, lineno, "tenant: no name");
	t = sim_tenant_find(s, name);
	if (!t) {
		if (running)
			return sim_fail(s, lineno, "tenant %s: phases cannot add tenants", name);
		t = sim_tenant_add(s, name);
		if (!t)
			return -ENOMEM;
		rc = bi_conf_parse(&t->conf, quota, (u32)ql, &err);
	} else {
		rc = bi_conf_merge(&t->conf, quota, (u32)ql, &err);
	}
	if (rc)
		return sim_fail(s, lineno, "tenant %s: %s", name, err.msg);
	t->touched = true;
	if (cgroup[0])
		snprintf(t->cgroup, sizeof(t->cgroup), "%s", cgroup);
	else if (!t->cgroup[0])
		snprintf(t->cgroup, sizeof(t->cgroup), "/%s", name);
	return 0;
}

static int sim_parse_bs(struct sim_workload *w, char *val)
{
	char *item, *save = NULL;

	w->nr_bs = 0;
	for (item = strtok_r(val, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		u64 wt = 1, sz;

		if (w->nr_bs >= SIM_BS_MIX_MAX)
			return -1;
		if (colon) {
			*colon = '\0';
			if (sim_parse_u64(colon + 1, &wt) || !wt)
				return -1;
		}
		if (sim_parse_size(item, &sz) || !sz)
			return -1;
		w->bs[w->nr_bs] = sz;
		w->bs_weight[w->nr_bs] = (u32)wt;
		w->nr_bs++;
	}
	return w->nr_bs ? 0 : -1;
}

/* "workload A rate=3000 iodepth=64 bs=4k:70,64k:30 read=70 prio=be poisson=1 catchup=4" */
static int sim_line_workload(struct sim *s, char *rest, u32 lineno)
{
	struct sim_workload w;
	struct sim_tenant *t;
	char *tok, *val, *name = sim_tok(&rest);
	u64 v;

	t = name ? sim_tenant_find(s, name) : NULL;
	if (!t)
		return sim_fail(s, lineno, "workload: unknown tenant %s", name ? name : "");
	sim_workload_default(&w);
	w.iodepth = 0;
	while ((tok = sim_tok(&rest))) {
		sim_kv(tok, &val);
		if (!val)
			return sim_fail(s, lineno, "workload: %s needs a value", tok);
		if (!strcmp(tok, "bs")) {
			if (sim_parse_bs(&w, val))
				return sim_fail(s, lineno, "workload: bad bs mix");
		} else if (!strcmp(tok, "prio")) {
			if (!strcmp(val, "rt"))
				w.prio_class = BI_PRIO_RT;
			else if (!strcmp(val, "be"))
				w.prio_class = BI_PRIO_BE;
			else if (!strcmp(val, "idle"))
				w.prio_class = BI_PRIO_IDLE;
			else
				return sim_fail(s, lineno, "workload: prio rt|be|idle");
		} else if (sim_parse_u64(val, &v)) {
			return sim_fail(s, lineno, "workload: bad number in %s", tok);
		} else if (!strcmp(tok, "rate")) {
			w.rate_iops = v;
		} else if (!strcmp(tok, "iodepth") && v <= 1 << 20) {
			w.iodepth = (u32)v;
		} else if (!strcmp(tok, "read") && v <= 100) {
			w.read_pct = (u32)v;
		} else if (!strcmp(tok, "poisson")) {
			w.poisson = v != 0;
		} else if (!strcmp(tok, "catchup") && v <= 1 << 20) {
			w.catchup = (u32)v;
		} else {
			return sim_fail(s, lineno, "workload: unknown or bad key %s", tok);
		}
	}
	if (!w.iodepth)
		w.iodepth = w.rate_iops ? 64 : 1;	/* fio's rate needs a depth */
	t->wl = w;
	t->gen_seq++;
	t->wl_changed = true;
	t->touched = true;
	return 0;
}

/* "clone A 99": tenants A.1..A.99 with A's quota and workload. */
static int sim_line_clone(struct sim *s, char *rest, u32 lineno)
{
	char *name = sim_tok(&rest), *cnt = sim_tok(&rest);
	struct sim_tenant *src;
	u64 n, i;

	if (!name || !cnt || sim_parse_u64(cnt, &n) || !n || n > 1000000)
		return sim_fail(s, lineno, "clone: clone NAME COUNT");
	if (!sim_tenant_find(s, name))
		return sim_fail(s, lineno, "clone: unknown tenant %s", name);
	for (i = 1; i <= n; i++) {
		char nm[SIM_NAME_MAX];
		struct sim_tenant *t;

		snprintf(nm, sizeof(nm), "%.20s.%llu", name, (unsigned long long)i);
		t = sim_tenant_add(s, nm);
		if (!t)
			return -ENOMEM;
		src = sim_tenant_find(s, name);	/* realloc may have moved it */
		t->conf = src->conf;
		t->wl = src->wl;
		snprintf(t->cgroup, sizeof(t->cgroup), "%.48s.%llu", src->cgroup,
			 (unsigned long long)i);
	}
	return 0;
}

static int sim_line_at(struct sim *s, char *rest, u32 lineno)
{
	char *when = sim_tok(&rest);
	struct sim_phase *ph;
	u64 at;

	if (!when || sim_parse_time(when, &at))
		return sim_fail(s, lineno, "at: bad time");
	while (*rest && isspace((unsigned char)*rest))
		rest++;
	ph = realloc(s->phases, (s->nr_phases + 1) * sizeof(*ph));
	if (!ph)
		return -ENOMEM;
	s->phases = ph;
	ph = &s->phases[s->nr_phases++];
	ph->at_ns = at;
	snprintf(ph->line, sizeof(ph->line), "%s", rest);
	return 0;
}

/*
 * Apply one line.  Phases ("at") call back in here with the line they
 * stored while the simulation runs.
 */
int sim_apply_line(struct sim *s, const char *line, u32 lineno)
{
	char buf[SIM_LINE_MAX], *rest = buf, *cmd;
	bool running = s->heap != NULL;
	u64 v;

	if (strlen(line) >= sizeof(buf))
		return sim_fail(s, lineno, "line too long");
	snprintf(buf, sizeof(buf), "%s", line);
	if (strchr(buf, '#'))
		*strchr(buf, '#') = '\0';
	cmd = sim_tok(&rest);
	if (!cmd)
		return 0;
	if (!strcmp(cmd, "device"))
		return sim_line_device(s, rest, lineno);
	if (!strcmp(cmd, "devconf"))
		return sim_line_devconf(s, rest, lineno);
	if (!strcmp(cmd, "overload"))
		return sim_line_overload(s, rest, lineno);
	if (!strcmp(cmd, "tenant"))
		return sim_line_tenant(s, rest, lineno, running);
	if (!strcmp(cmd, "workload"))
		return sim_line_workload(s, rest, lineno);
	if (!strcmp(cmd, "clone") && !running)
		return sim_line_clone(s, rest, lineno);
	if (!strcmp(cmd, "at") && !running)
		return sim_line_at(s, rest, lineno);
	if (!strcmp(cmd, "duration") && !running) {
		char *t = sim_tok(&rest);

		if (!t || sim_parse_time(t, &s->duration_ns) || !s->duration_ns)
			return sim_fail(s, lineno, "duration: bad time");
		return 0;
	}
	if (!strcmp(cmd, "seed") && !running) {
		char *t = sim_tok(&rest);

		if (!t || sim_parse_u64(t, &v))
			return sim_fail(s, lineno, "seed: bad number");
		s->seed = v;
		return 0;
	}
	return sim_fail(s, lineno, "unknown directive %s", cmd);
}

int sim_load_string(struct sim *s, const char *text)
{
	const char *p = text;
	u32 lineno = 0;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[SIM_LINE_MAX];
		int rc;

		lineno++;
		if (len >= sizeof(line))
			return sim_fail(s, lineno, "line too long");
		memcpy(line, p, len);
		line[len] = '\0';
		rc = sim_apply_line(s, line, lineno);
		if (rc)
			return rc;
		p += len + (nl ? 1 : 0);
	}
	return 0;
}

int sim_load_file(struct sim *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;
	long len;
	int rc;

	if (!f) {
		snprintf(s->err, sizeof(s->err), "%s: %s", path, strerror(errno));
		return -errno;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = calloc(1, len + 1);
	if (!text || fread(text, 1, len, f) != (size_t)len) {
		fclose(f);
		free(text);
		snprintf(s->err, sizeof(s->err), "%s: read error", path);
		return -EIO;
	}
	fclose(f);
	rc = sim_load_string(s, text);
	free(text);
	return rc;
}

void sim_free(struct sim *s)
{
	u32 i;

	for (i = 0; i < s->nr_io_chunks; i++)
		free(s->io_chunks[i]);
	free(s->io_chunks);
	free(s->heap);
	free(s->tenants);
	free(s->stats);
	free(s->phases);
	s->stats = NULL;
	s->io_chunks = NULL;
	s->heap = NULL;
	s->tenants = NULL;
	s->phases = NULL;
}
