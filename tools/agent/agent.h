/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agent.h - blkiso-agent: cluster-wide quotas from a global bucket in
 * Redis, handed to this host's kernel as leases (doc/cluster.md).
 *
 * The parts: agent_conf.c reads the configuration file; agent_store.c
 * speaks to Redis (Sentinel lookup, the bucket's Lua script); agent_core.c
 * decides each round what to ask for and what to lease, whatever the
 * "kernel" is: blkiso-agent.c's is /dev/blkiso, the cluster simulator's
 * (selftests/cluster) is the freestanding core's meter.
 */
#ifndef BLKISO_AGENT_H
#define BLKISO_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_MAX_TENANTS	16
#define AGENT_MAX_SENTINELS	8
#define AGENT_HIST		4	/* x of S4-09: intervals of use weighed */
#define AGENT_SLICES		10	/* a round's grant, leased in this many slices */
#define AGENT_CHECKS		50	/* looks at the kernel per interval */
#define AGENT_QUIET_CHECKS	2	/* checks without bios: the demand went away */
#define AGENT_HELD_CHECKS	4	/* checks with bios held: the demand came */

struct agent_addr {
	char host[64];
	int port;
};

struct agent_tenant_conf {
	char name[64];		/* the bucket: Redis key blkiso:bucket:<name> */
	char dev[256];		/* the blkiso dm device */
	char cgroup[256];	/* the tenant's cgroup, absolute path */
	unsigned int key;	/* enum blkiso_lease_key */
	uint64_t quota;		/* cluster-wide, tokens/s */
	uint64_t floor;		/* this host's cap with no lease, tokens/s */
	unsigned int hosts;	/* hosts sharing the quota */
};

struct agent_conf {
	char host_id[64];
	struct agent_addr redis;		/* without Sentinels */
	struct agent_addr sentinel[AGENT_MAX_SENTINELS];
	int nr_sentinels;
	char master[64];			/* Sentinel's name of the master */
	unsigned int interval_ms;		/* refresh: one round trip per tenant */
	unsigned int ttl_ms;			/* lease TTL */
	unsigned int timeout_ms;		/* a Redis call's limit */
	unsigned int fail_static_ms;		/* quota/active hosts this long */
	unsigned int burst_ms;			/* global bucket capacity */
	struct agent_tenant_conf tenant[AGENT_MAX_TENANTS];
	int nr_tenants;
};

void agent_conf_defaults(struct agent_conf *c);
int agent_conf_load(struct agent_conf *c, const char *path, char *err, size_t errsize);
int agent_conf_line(struct agent_conf *c, const char *line, char *err, size_t errsize);

/* ---- the store (agent_store.c) ---- */
struct agent_store;

struct agent_grant {
	uint64_t granted;		/* tokens dispensed */
	uint64_t left;			/* in the global bucket after */
	unsigned int active;		/* hosts that asked within the window */
};

struct agent_store *agent_store_new(const struct agent_conf *c);
void agent_store_free(struct agent_store *s);
/*
 * One round trip: the bucket's lazy refill and a grant of up to @ask
 * (0 when below the threshold).  @now_us: 0 = Redis's TIME (production);
 * else the simulated clock (test mode).  0 or -1 (unreachable, timed out,
 * not a master or fenced: reconnects at the next call; a connection the
 * server had closed: once more at once).  Round trips count the calls the
 * store ran or may have run (not those on a closed connection).
 */
int agent_store_lease(struct agent_store *s, const char *bucket, uint64_t rate,
		      uint64_t max, uint64_t ask, uint64_t threshold, uint64_t now_us,
		      uint64_t window_us, uint64_t give, uint64_t debt, uint64_t reserve_us,
		      struct agent_grant *g);
uint64_t agent_store_round_trips(const struct agent_store *s);

/* ---- the decision (agent_core.c) ---- */
enum agent_source {
	AGENT_SRC_NONE,		/* idle: nothing asked, nothing leased */
	AGENT_SRC_GRANTED,	/* the last round's lease came from the store */
	AGENT_SRC_FAIL_STATIC,	/* the store unreachable: quota / active hosts */
	AGENT_SRC_FLOOR,	/* unreachable past fail_static_ms: floor only */
};

extern const char * const agent_source_names[];

/* What the "kernel" reports for a tenant at a round. */
struct agent_obs {
	uint64_t left;		/* live credit */
	uint64_t spent;		/* credit spent, counter */
	uint64_t held;		/* bios held by the floor or the credit, counter */
	uint64_t queued;	/* bios held right now */
	uint64_t arrived;	/* bios that came, counter */
};

struct agent_tenant {
	const struct agent_tenant_conf *conf;
	uint64_t use[AGENT_HIST];	/* credit spent per round, [0] = last */
	uint64_t last_spent, last_held;
	bool seen;			/* last_* valid */
	bool gridded;			/* a grid round was made */
	bool wanting;			/* the store holds an ask of ours (a want > 0) */
	enum agent_source src;
	uint64_t fail_since_ns;		/* 0 = the store answered last time */
	unsigned int active;		/* hosts, as the store last said */
	uint64_t asked, granted, static_leased, returned;	/* totals */
	uint64_t debt;			/* leased in fail static, not yet repaid */
	uint64_t pending;		/* granted, not yet leased to the kernel */
	unsigned int slices_left;	/* of the current round */
	unsigned int to_round;		/* checks until the next round */
	unsigned int since_round;	/* checks since the last round */
	uint64_t chk_spent, chk_held, chk_arrived;	/* at the last check */
	uint64_t round_arrived;		/* arrived at the last round */
	unsigned int arrival_gap;	/* checks between bios, last interval */
	unsigned int quiet_checks;	/* in a row: nothing spent, nothing held */
	unsigned int held_checks;	/* in a row: bios held */
	uint64_t rounds_idle;
};

uint64_t agent_global_rate(const struct agent_tenant_conf *t);
uint64_t agent_global_max(const struct agent_conf *c, const struct agent_tenant_conf *t);
void agent_tenant_init(struct agent_tenant *at, const struct agent_tenant_conf *tc);
/* The "kernel": take back up to @n tokens of unused credit; returns them. */
typedef uint64_t (*agent_take_back_fn)(void *arg, uint64_t n);

/*
 * Every interval_ms / AGENT_CHECKS: looks at the kernel's figures, makes
 * the tenant's round with the store when one is due (or early: demand came
 * or went), and returns the tokens to lease to the kernel now (a slice).
 */
uint64_t agent_check(const struct agent_conf *c, struct agent_tenant *at,
		     struct agent_store *s, const struct agent_obs *o, uint64_t now_ns,
		     uint64_t sim_now_us, agent_take_back_fn take_back, void *arg);

#endif /* BLKISO_AGENT_H */
