// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso-agent.c - the per-host daemon of cluster-wide quotas
 * (blkiso-agent(8), doc/cluster.md): every interval_ms / AGENT_CHECKS it
 * reads each cluster tenant's credit from the kernel (BLKISO_IOC_LEASE,
 * a query) and its bios (the tenant's sysfs stats: parked=, queued=,
 * arrived=), makes
 * the tenant's round with the cluster bucket when one is due
 * (agent_core.c), and leases the slice due to the kernel.  At start it
 * sets each tenant's cap to its floor.  The kernel never waits on it:
 * killed, its leases lapse within ttl_ms and the floor remains.  Each
 * round it writes a status file (-s), which `blkiso-agent -S` prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/blkiso.h>

#include "agent.h"

struct tenant_rt {
	struct agent_tenant at;
	struct agent_store *store;
	unsigned int major, minor;
	uint64_t cgid;
	char stats[256];		/* the tenant's sysfs stats file */
	struct blkiso_ioc_lease last;
};

static volatile sig_atomic_t stop;
static int ctl_fd = -1;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static void lease_arg(struct blkiso_ioc_lease *a, const struct tenant_rt *t,
		      uint64_t tokens, unsigned int ttl_ms, unsigned int flags)
{
	memset(a, 0, sizeof(*a));
	a->hdr.size = sizeof(*a);
	a->hdr.version = BLKISO_IOCTL_VERSION;
	a->major = t->major;
	a->minor = t->minor;
	a->cgid = t->cgid;
	a->key = t->at.conf->key;
	a->tokens = tokens;
	a->ttl_ms = ttl_ms;
	a->flags = flags;
}

static int lease(struct tenant_rt *t, uint64_t tokens, unsigned int ttl_ms,
		 unsigned int flags)
{
	struct blkiso_ioc_lease a;

	lease_arg(&a, t, tokens, ttl_ms, flags);
	if (ioctl(ctl_fd, BLKISO_IOC_LEASE, &a))
		return -errno;
	t->last = a;
	return 0;
}

static uint64_t take_back(void *arg, uint64_t n)
{
	struct tenant_rt *t = arg;
	uint64_t before = t->last.returned;

	if (lease(t, n, 0, BLKISO_LEASE_F_RETURN))
		return 0;
	return t->last.returned - before;
}

/* A counter of the tenant's stats ("name=N ", the first one at the start). */
static uint64_t stat_field(const char *buf, const char *name)
{
	size_t len = strlen(name);
	const char *p = buf;

	while ((p = strstr(p, name))) {
		if ((p == buf || p[-1] == ' ') && p[len] == '=')
			return strtoull(p + len + 1, NULL, 10);
		p += len;
	}
	return 0;
}

/*
 * From the tenant's stats: parked=, bios its floor or credit held (a
 * counter); queued=, bios held right now; arrived=, bios that came.
 */
static void held(const struct tenant_rt *t, struct agent_obs *o)
{
	char buf[4096];
	FILE *f = fopen(t->stats, "r");
	size_t n;

	o->held = o->queued = o->arrived = 0;
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	o->held = stat_field(buf, "parked");
	o->queued = stat_field(buf, "queued");
	o->arrived = stat_field(buf, "arrived");
}

/* The device, the cgroup's id, and the floor as the tenant's cap. */
static int tenant_setup(struct tenant_rt *t, const struct agent_tenant_conf *tc)
{
	static const char * const keys[] = { "runits", "wunits", "riops", "wiops" };
	struct blkiso_ioc_tenant a;
	char path[512];
	struct stat st;

	if (stat(tc->dev, &st) || !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "blkiso-agent: tenant %s: %s: not a block device\n", tc->name,
			tc->dev);
		return -1;
	}
	t->major = major(st.st_rdev);
	t->minor = minor(st.st_rdev);
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s", tc->cgroup);
	if (stat(path, &st)) {
		fprintf(stderr, "blkiso-agent: tenant %s: %s: %s\n", tc->name, path,
			strerror(errno));
		return -1;
	}
	t->cgid = st.st_ino;
	snprintf(t->stats, sizeof(t->stats), "/sys/kernel/blkiso/dm-%u/%llu/stats", t->minor,
		 (unsigned long long)t->cgid);
	memset(&a, 0, sizeof(a));
	a.hdr.size = sizeof(a);
	a.hdr.version = BLKISO_IOCTL_VERSION;
	a.major = t->major;
	a.minor = t->minor;
	a.cgid = t->cgid;
	snprintf(a.line, sizeof(a.line), "%s=%llu", keys[tc->key],
		 (unsigned long long)tc->floor);
	if (ioctl(ctl_fd, BLKISO_IOC_SET_TENANT, &a)) {
		fprintf(stderr, "blkiso-agent: tenant %s: setting the floor \"%s\": %s %s\n",
			tc->name, a.line, strerror(errno), a.msg);
		return -1;
	}
	agent_tenant_init(&t->at, tc);
	return 0;
}

static void write_status(const char *path, const struct agent_conf *c,
			 const struct tenant_rt *t, int n)
{
	char tmp[512];
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "host %s interval_ms=%u ttl_ms=%u\n", c->host_id, c->interval_ms, c->ttl_ms);
	for (i = 0; i < n; i++) {
		const struct agent_tenant *at = &t[i].at;

		fprintf(f, "tenant %s dev=%u:%u cgid=%llu key=%u source=%s left=%llu "
			"ttl_left_ms=%llu pending=%llu asked=%llu granted=%llu returned=%llu "
			"fail_static=%llu active_hosts=%u round_trips=%llu spent=%llu expired=%llu\n",
			at->conf->name, t[i].major, t[i].minor,
			(unsigned long long)t[i].cgid, at->conf->key, agent_source_names[at->src],
			(unsigned long long)t[i].last.left,
			(unsigned long long)t[i].last.ttl_left_ms,
			(unsigned long long)at->pending, (unsigned long long)at->asked,
			(unsigned long long)at->granted, (unsigned long long)at->returned,
			(unsigned long long)at->static_leased, at->active,
			(unsigned long long)agent_store_round_trips(t[i].store),
			(unsigned long long)t[i].last.spent,
			(unsigned long long)t[i].last.expired);
	}
	if (fclose(f) == 0)
		rename(tmp, path);
}

static int usage(void)
{
	fprintf(stderr, "usage: blkiso-agent [-c CONFIG] [-s STATUS] [-t]\n"
		"       blkiso-agent -S [-s STATUS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *conf_path = "/etc/blkiso/agent.conf", *status = "/run/blkiso-agent.status";
	static struct tenant_rt rt[AGENT_MAX_TENANTS];
	static struct agent_conf c;
	bool check_only = false, show = false;
	uint64_t check_ns, next, tick = 0;
	char err[512];
	int opt, i;

	while ((opt = getopt(argc, argv, "c:s:tS")) != -1) {
		switch (opt) {
		case 'c': conf_path = optarg; break;
		case 's': status = optarg; break;
		case 't': check_only = true; break;
		case 'S': show = true; break;
		default: return usage();
		}
	}
	if (show) {
		char buf[4096];
		FILE *f = fopen(status, "r");
		size_t n;

		if (!f) {
			fprintf(stderr, "blkiso-agent: %s: %s\n", status, strerror(errno));
			return 1;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, stdout);
		fclose(f);
		return 0;
	}
	agent_conf_defaults(&c);
	if (agent_conf_load(&c, conf_path, err, sizeof(err))) {
		fprintf(stderr, "blkiso-agent: %s\n", err);
		return 1;
	}
	if (!c.nr_tenants) {
		fprintf(stderr, "blkiso-agent: %s: no tenant line\n", conf_path);
		return 1;
	}
	if (check_only)
		return 0;
	ctl_fd = open(BLKISO_DEV_PATH, O_RDONLY | O_CLOEXEC);
	if (ctl_fd < 0) {
		fprintf(stderr, "blkiso-agent: %s: %s\n", BLKISO_DEV_PATH, strerror(errno));
		return 1;
	}
	for (i = 0; i < c.nr_tenants; i++) {
		if (tenant_setup(&rt[i], &c.tenant[i]))
			return 1;
		rt[i].store = agent_store_new(&c);
		if (!rt[i].store)
			return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	check_ns = (uint64_t)c.interval_ms * 1000000 / AGENT_CHECKS;
	next = now_ns();
	while (!stop) {
		for (i = 0; i < c.nr_tenants; i++) {
			struct tenant_rt *t = &rt[i];
			struct agent_obs o;
			uint64_t n;

			if (lease(t, 0, 0, 0))
				continue;
			o.left = t->last.left;
			o.spent = t->last.spent;
			held(t, &o);
			n = agent_check(&c, &t->at, t->store, &o, now_ns(), 0, take_back, t);
			if (n && lease(t, n, c.ttl_ms, 0))
				fprintf(stderr, "blkiso-agent: tenant %s: lease: %s\n",
					t->at.conf->name, strerror(errno));
		}
		if (tick % AGENT_CHECKS == 0)
			write_status(status, &c, rt, c.nr_tenants);
		tick++;
		next += check_ns;
		for (;;) {
			uint64_t now = now_ns();
			struct timespec ts;

			if (now >= next || stop)
				break;
			ts.tv_sec = (next - now) / 1000000000ULL;
			ts.tv_nsec = (next - now) % 1000000000ULL;
			nanosleep(&ts, NULL);
		}
	}
	for (i = 0; i < c.nr_tenants; i++)
		agent_store_free(rt[i].store);
	return 0;
}
