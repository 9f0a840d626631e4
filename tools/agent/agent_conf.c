// SPDX-License-Identifier: GPL-2.0
/*
 * agent_conf.c - blkiso-agent's configuration file (blkiso-agent(8)):
 * "key = value" lines for the agent, one "tenant <name> key=value..." line
 * per cluster tenant; '#' starts a comment.  A bad line is refused with
 * its line number and the token, and the agent does not start.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/blkiso.h>

#include "agent.h"

void agent_conf_defaults(struct agent_conf *c)
{
	memset(c, 0, sizeof(*c));
	if (gethostname(c->host_id, sizeof(c->host_id) - 1))
		snprintf(c->host_id, sizeof(c->host_id), "host");
	snprintf(c->redis.host, sizeof(c->redis.host), "127.0.0.1");
	c->redis.port = 6379;
	snprintf(c->master, sizeof(c->master), "blkiso");
	c->interval_ms = 500;
	c->ttl_ms = 1500;
	c->timeout_ms = 100;
	c->fail_static_ms = 30000;
	c->burst_ms = 1000;
}

static int parse_u64(const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*v))
		return -1;
	*out = strtoull(v, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_ms(const char *v, unsigned int *out, unsigned int lo, unsigned int hi)
{
	uint64_t n;

	if (parse_u64(v, &n) || n < lo || n > hi)
		return -1;
	*out = (unsigned int)n;
	return 0;
}

static int parse_addr(const char *v, struct agent_addr *a)
{
	const char *colon = strrchr(v, ':');
	uint64_t port;

	if (!colon || colon == v || (size_t)(colon - v) >= sizeof(a->host) ||
	    parse_u64(colon + 1, &port) || !port || port > 65535)
		return -1;
	memcpy(a->host, v, colon - v);
	a->host[colon - v] = '\0';
	a->port = (int)port;
	return 0;
}

static const char * const lease_keys[] = {
	[BLKISO_LEASE_RUNITS] = "runits",
	[BLKISO_LEASE_WUNITS] = "wunits",
	[BLKISO_LEASE_RIOS] = "riops",
	[BLKISO_LEASE_WIOS] = "wiops",
};

static int tenant_line(struct agent_conf *c, char *rest, char *err, size_t errsize)
{
	struct agent_tenant_conf *t;
	char *tok, *save = NULL, *v;
	unsigned int k;

	if (c->nr_tenants == AGENT_MAX_TENANTS) {
		snprintf(err, errsize, "more than %d tenants", AGENT_MAX_TENANTS);
		return -1;
	}
	t = &c->tenant[c->nr_tenants];
	memset(t, 0, sizeof(*t));
	tok = strtok_r(rest, " \t", &save);
	if (!tok || strchr(tok, '=') || strlen(tok) >= sizeof(t->name)) {
		snprintf(err, errsize, "tenant: expected a name first");
		return -1;
	}
	strcpy(t->name, tok);
	t->key = BLKISO_LEASE_NR_KEYS;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		v = strchr(tok, '=');
		if (!v)
			goto bad;
		*v++ = '\0';
		if (!strcmp(tok, "dev") && strlen(v) < sizeof(t->dev)) {
			strcpy(t->dev, v);
		} else if (!strcmp(tok, "cgroup") && v[0] == '/' && strlen(v) < sizeof(t->cgroup)) {
			strcpy(t->cgroup, v);
		} else if (!strcmp(tok, "key")) {
			for (k = 0; k < BLKISO_LEASE_NR_KEYS; k++)
				if (!strcmp(v, lease_keys[k]))
					t->key = k;
			if (t->key == BLKISO_LEASE_NR_KEYS)
				goto bad;
		} else if (!strcmp(tok, "quota")) {
			if (parse_u64(v, &t->quota) || !t->quota)
				goto bad;
		} else if (!strcmp(tok, "floor")) {
			if (parse_u64(v, &t->floor) || !t->floor)
				goto bad;
		} else if (!strcmp(tok, "hosts")) {
			uint64_t h;

			if (parse_u64(v, &h) || !h || h > 4096)
				goto bad;
			t->hosts = (unsigned int)h;
		} else {
			goto bad;
		}
	}
	if (t->key == BLKISO_LEASE_NR_KEYS || !t->quota || !t->floor || !t->hosts) {
		snprintf(err, errsize, "tenant %s: key=, quota=, floor= and hosts= are required",
			 t->name);
		return -1;
	}
	if (t->floor * t->hosts >= t->quota) {
		snprintf(err, errsize, "tenant %s: floor x hosts must be below quota", t->name);
		return -1;
	}
	c->nr_tenants++;
	return 0;
bad:
	snprintf(err, errsize, "tenant %s: bad \"%s\"", t->name, tok);
	return -1;
}

/* One line of the file (comments and blanks allowed); 0 or -1 with @err. */
int agent_conf_line(struct agent_conf *c, const char *line, char *err, size_t errsize)
{
	char buf[1024], *p, *e, *k, *v;

	snprintf(buf, sizeof(buf), "%s", line);
	p = strchr(buf, '#');
	if (p)
		*p = '\0';
	for (p = buf; isspace((unsigned char)*p); p++)
		;
	for (e = p + strlen(p); e > p && isspace((unsigned char)e[-1]); e--)
		;
	*e = '\0';
	if (!*p)
		return 0;
	if (!strncmp(p, "tenant", 6) && isspace((unsigned char)p[6]))
		return tenant_line(c, p + 7, err, errsize);
	v = strchr(p, '=');
	if (!v)
		goto bad;
	k = p;
	for (e = v; e > k && isspace((unsigned char)e[-1]); e--)
		;
	*e = '\0';
	for (v++; isspace((unsigned char)*v); v++)
		;
	if (!strcmp(k, "host_id") && *v && strlen(v) < sizeof(c->host_id))
		strcpy(c->host_id, v);
	else if (!strcmp(k, "redis") && !parse_addr(v, &c->redis))
		;
	else if (!strcmp(k, "sentinel") && c->nr_sentinels < AGENT_MAX_SENTINELS &&
		 !parse_addr(v, &c->sentinel[c->nr_sentinels]))
		c->nr_sentinels++;
	else if (!strcmp(k, "master") && *v && strlen(v) < sizeof(c->master))
		strcpy(c->master, v);
	else if (!strcmp(k, "interval_ms") && !parse_ms(v, &c->interval_ms, 10, 60000))
		;
	else if (!strcmp(k, "ttl_ms") && !parse_ms(v, &c->ttl_ms, 10, 3600000))
		;
	else if (!strcmp(k, "timeout_ms") && !parse_ms(v, &c->timeout_ms, 1, 60000))
		;
	else if (!strcmp(k, "fail_static_ms") && !parse_ms(v, &c->fail_static_ms, 0, 86400000))
		;
	else if (!strcmp(k, "burst_ms") && !parse_ms(v, &c->burst_ms, 1, 60000))
		;
	else
		goto bad;
	return 0;
bad:
	snprintf(err, errsize, "bad line \"%s\"", p);
	return -1;
}

int agent_conf_load(struct agent_conf *c, const char *path, char *err, size_t errsize)
{
	char line[1024], why[256];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (agent_conf_line(c, line, why, sizeof(why))) {
			snprintf(err, errsize, "%s:%d: %s", path, n, why);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	if (c->ttl_ms <= c->interval_ms) {
		snprintf(err, errsize, "%s: ttl_ms must exceed interval_ms (a lease outlives a round)",
			 path);
		return -1;
	}
	return 0;
}
