// SPDX-License-Identifier: GPL-2.0
/*
 * cluster_test.c - cluster-wide quotas on 16 simulated hosts against a
 * real redis-server on 127.0.0.1 (issue 22, doc/cluster.md).
 *
 * Each host is blkiso-agent's decision (tools/agent/agent_core.c) and
 * store client (agent_store.c, its own connection) over a "kernel" that
 * is the freestanding core's meter: the tenant's riops cap is the floor,
 * leases go in through bi_meter_lease(), and bios are admitted by
 * bi_meter_admit(), the module's own admission path.  The clock is
 * simulated and shared by the hosts (1 ms steps); the Lua script takes it
 * as an argument in this test mode instead of Redis's TIME, which is the
 * only difference from production.  Hosts run their rounds at staggered
 * phases of the refresh interval, or all at once (started together).
 * Faults are injected at simulated
 * times: the server killed (and restarted empty later), or stopped with
 * SIGSTOP (and continued), or a Sentinel failover to one of the master's
 * two replicas (SENTINEL FAILOVER; the agents find the master through the
 * Sentinel; every data node fenced by min-replicas-to-write 1).  One
 * failover runs with the simulated clock paced to real time and half the
 * hosts' connections to the old master cut once the Sentinel names the
 * new one, so that a split brain until the old master is demoted would
 * show (CLUSTER_UNFENCED=1: the same without the fence).
 *
 * Figures per scenario: over-admission over sliding 10 s and 1 s windows
 * (admitted / (quota x window) - 1, from t = 2 s), the quota used, the
 * ramp after demand moves, store round trips per (host, active tenant)
 * and second, round trips of idle hosts, each host's admitted rate
 * against its max-min fair share.  Demand is 1.5x the quota.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/blkiso.h>

#include "agent.h"
#include "lease.h"
#include "meter.h"
#include "kselftest_harness.h"

#define HOSTS		16
#define QUOTA		16000ULL	/* cluster riops */
#define FLOOR		8ULL		/* per host: 0.8 % of the quota in all */
#define MAX_S		60
#define MS		BI_NSEC_PER_MSEC

enum scen {
	SC_ONE, SC_UNIFORM, SC_SHIFT, SC_KILL, SC_PAUSE, SC_FAILOVER, SC_FAILOVER_RT, SC_CUT,
	SC_TOGETHER,	/* uniform demand, every host's rounds at the same instant */
	SC_MIXED,	/* half the hosts want half a fair share, the rest the remainder x 1.5 */
};

struct host {
	struct agent_conf c;		/* the sim's, with its own host_id */
	struct bi_tenant_conf conf;
	struct bi_meter m;
	struct bi_meter_cpu cpu;
	struct agent_store *store;
	struct agent_tenant at;
	double backlog;
	uint64_t held;
	uint64_t arrived;
	uint64_t admitted;
	uint64_t admitted_2s;		/* admitted in the first 2 s (not measured) */
	uint64_t rt_active_rounds;	/* rounds in which it had demand, from 2 s */
	uint64_t rt_2s;			/* round trips in the first 2 s */
	uint64_t departures;		/* the demand left it, from 2 s */
	uint64_t now;
};

struct sim {
	struct agent_conf c;
	struct host h[HOSTS];
	uint64_t per_ms[MAX_S * 1000];	/* admitted, all hosts */
	/* CLUSTER_TRACE, per 100 ms: hosts fail static, tokens granted and leased in fail static */
	uint64_t tr_static_hosts[MAX_S * 10], tr_granted[MAX_S * 10], tr_static[MAX_S * 10];
	int port;
	pid_t redis;
	pid_t replica, sentinel;	/* SC_FAILOVER: port + 1, port + 2 */
	pid_t replica2;			/* port + 3 */
	bool fenced;			/* min-replicas-to-write 1 on every data node */
	int failover_rc;
	char failover_log[512];		/* each step's real time, or the one that failed */
	uint64_t failover_t0;		/* real ms of SENTINEL FAILOVER */
	pid_t watcher;			/* SC_FAILOVER_RT: runs failover() meanwhile */
	int cut;			/* SC_CUT: connections closed */
	int64_t restart_ms;		/* SC_KILL: real ms the restart took, -1: failed */
	bool realtime;			/* SC_FAILOVER_RT: 1 simulated ms per real ms */
	bool static_split;		/* baseline: cap quota / HOSTS, no agent */
	char dir[64];
	int secs;
};

/*
 * stdout line by line: a test that fails an ASSERT ends with _exit(), which
 * would drop what a block-buffered stdout (a pipe to tee) still held, such
 * as the setup step that failed.
 */
static void __attribute__((constructor)) stdout_by_line(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static uint64_t real_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ULL + t.tv_nsec / 1000000;
}

/* Does `redis-cli -p @port @cmd` print @want within @secs real seconds? */
static int cli_wait_for(int port, const char *cmd, const char *want, int secs)
{
	uint64_t end = real_ms() + secs * 1000ULL;
	char sh[512];

	snprintf(sh, sizeof(sh), "redis-cli -p %d %s 2>/dev/null | grep -q '%s'", port, cmd, want);
	do {
		if (!system(sh))
			return 0;
		usleep(10000);
	} while (real_ms() < end);
	return -1;
}

static int cli_wait(int port, const char *cmd, const char *want)
{
	return cli_wait_for(port, cmd, want, 10);
}

/*
 * redis-server on @port (a replica of @master if not 0), or the Sentinel.
 * Fenced (doc/cluster.md, the deployment choice): every data node has
 * min-replicas-to-write 1, so a master that lost its replicas (one of
 * them promoted, the other moved to the new master) refuses the bucket's
 * writes with NOREPLICAS; min-replicas-max-lag (s) below the Sentinel's
 * down-after-milliseconds, so that a master cut off from its replicas
 * stops granting before one of them can be promoted.
 */
static pid_t server_start(struct sim *s, int port, int master, bool sentinel)
{
	char p[16], m[16], conf[128];
	const char *argv[20];
	int n = 0;
	pid_t pid;
	FILE *f;

	snprintf(p, sizeof(p), "%d", port);
	snprintf(m, sizeof(m), "%d", master);
	if (sentinel) {
		snprintf(conf, sizeof(conf), "%s/sentinel.conf", s->dir);
		f = fopen(conf, "w");
		if (!f)
			return -1;
		fprintf(f, "port %d\nbind 127.0.0.1\ndir %s\n"
			"sentinel monitor blkiso 127.0.0.1 %d 1\n"
			"sentinel down-after-milliseconds blkiso 2000\n"
			"sentinel failover-timeout blkiso 10000\n", port, s->dir, master);
		fclose(f);
		argv[n++] = "redis-sentinel";
		argv[n++] = conf;
	} else {
		argv[n++] = "redis-server";
		argv[n++] = "--port";
		argv[n++] = p;
		argv[n++] = "--bind";
		argv[n++] = "127.0.0.1";
		argv[n++] = "--dir";
		argv[n++] = s->dir;
		argv[n++] = "--save";
		argv[n++] = "";
		argv[n++] = "--appendonly";
		argv[n++] = "no";
		if (master) {
			argv[n++] = "--replicaof";
			argv[n++] = "127.0.0.1";
			argv[n++] = m;
		}
		if (s->fenced) {
			argv[n++] = "--min-replicas-to-write";
			argv[n++] = "1";
			argv[n++] = "--min-replicas-max-lag";
			argv[n++] = "2";
		}
	}
	argv[n] = NULL;
	pid = fork();
	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		/* no pipe of the test's held open by a server left behind */
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], (char * const *)argv);
		_exit(127);
	}
	if (cli_wait(port, "ping", "PONG")) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static pid_t redis_start(struct sim *s)
{
	return server_start(s, s->port, 0, false);
}

static void pid_stop(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

/* a step of a failover or its setup: at most this long (real seconds) */
#define FAILOVER_WAIT_S	60

/*
 * A step of the setup that did not come within FAILOVER_WAIT_S, named on
 * the log with what each server and the Sentinel said of the others then.
 */
static int setup_failed(const struct sim *s, const char *what)
{
	char sh[512];

	printf("# failover setup: %s: not within %d s\n", what, FAILOVER_WAIT_S);
	snprintf(sh, sizeof(sh),
		 "for p in %d %d %d; do echo \"# port $p:\" $(redis-cli -p $p info replication 2>&1 | tr -d '\\r' | grep -E '^(role|master_port|master_link_status|connected_slaves|slave[0-9]|min_slaves)'); done;"
		 " echo \"# sentinel %d:\" $(redis-cli -p %d sentinel replicas blkiso 2>&1 | tr -d '\\r' | tr '\\n' ' ')",
		 s->port, s->port + 1, s->port + 3, s->port + 2, s->port + 2);
	fflush(stdout);
	if (system(sh) < 0)
		perror("system");
	return -1;
}

/*
 * The master's two replicas and a Sentinel watching it; the agents then
 * find the master through the Sentinel.  Every wait is FAILOVER_WAIT_S:
 * a Sentinel learns a master's replicas
 * from its INFO, sent every 10 s, so a replica that the first INFO did
 * not list shows up only 10 s later (a 10 s bound failed CI once).
 */
static int failover_setup(struct sim *s)
{
	char want[16];

	s->replica = server_start(s, s->port + 1, s->port, false);
	if (s->replica < 0 ||
	    cli_wait_for(s->port + 1, "info replication", "master_link_status:up", FAILOVER_WAIT_S))
		return setup_failed(s, "first replica in sync");
	s->replica2 = server_start(s, s->port + 3, s->port, false);
	if (s->replica2 < 0 ||
	    cli_wait_for(s->port + 3, "info replication", "master_link_status:up", FAILOVER_WAIT_S))
		return setup_failed(s, "second replica in sync");
	/* fenced: the master grants once a replica has acknowledged */
	if (s->fenced && cli_wait_for(s->port, "info replication", "min_slaves_good_slaves:[12]",
				      FAILOVER_WAIT_S))
		return setup_failed(s, "master sees a good replica");
	s->sentinel = server_start(s, s->port + 2, s->port, true);
	if (s->sentinel < 0)
		return setup_failed(s, "sentinel started");
	snprintf(want, sizeof(want), "^%d$", s->port + 1);
	if (cli_wait_for(s->port + 2, "sentinel replicas blkiso", want, FAILOVER_WAIT_S))
		return setup_failed(s, "sentinel knows the first replica");
	snprintf(want, sizeof(want), "^%d$", s->port + 3);
	if (cli_wait_for(s->port + 2, "sentinel replicas blkiso", want, FAILOVER_WAIT_S))
		return setup_failed(s, "sentinel knows the second replica");
	s->c.nr_sentinels = 1;
	snprintf(s->c.sentinel[0].host, sizeof(s->c.sentinel[0].host), "127.0.0.1");
	s->c.sentinel[0].port = s->port + 2;
	snprintf(s->c.master, sizeof(s->c.master), "blkiso");
	return 0;
}

/*
 * A Sentinel demotes a master it has replaced only once that instance has
 * reported its old role for 4 publish periods (8 s) and its next INFO is in
 * (every 10 s for a replica): 8 to 20 s of real time, longer on a loaded
 * machine.  Each step waits up to FAILOVER_WAIT_S and its time is logged.
 */

static int failover_step(struct sim *s, int port, const char *cmd, const char *want,
			 const char *what)
{
	size_t n = strlen(s->failover_log);
	int rc = cli_wait_for(port, cmd, want, FAILOVER_WAIT_S);

	snprintf(s->failover_log + n, sizeof(s->failover_log) - n, "%s%s %s +%llu ms",
		 n ? ", " : "", what, rc ? "NOT by" : "at",
		 (unsigned long long)(real_ms() - s->failover_t0));
	return rc;
}

/*
 * A network blip at half the hosts: every second agent connection on the
 * old master is closed (CLIENT KILL; the agents set no client name, the
 * Sentinel's connections have one).  Those hosts' next round asks the
 * Sentinel, which now names the new master: without the fence they would
 * draw from it while the other half stays on the old master until it is
 * demoted (split brain, the case of the +7.84 % run before the fence).
 */
static int blip(struct sim *s)
{
	char sh[256];
	int id, n = 0;
	FILE *f;

	snprintf(sh, sizeof(sh),
		 "redis-cli -p %d client list type normal | awk '/ name= / && !/cmd=client/ { if (n++ %% 2 == 0) { sub(\"id=\", \"\", $1); print $1 } }'",
		 s->port);
	f = popen(sh, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%d", &id) == 1) {
		snprintf(sh, sizeof(sh), "redis-cli -p %d client kill id %d | grep -q '^1$'",
			 s->port, id);
		n += !system(sh);
	}
	return pclose(f) ? -1 : n;
}

/*
 * SENTINEL FAILOVER (retried while the Sentinel answers an error, e.g.
 * -NOGOODSLAVE before the replica's INFO is fresh), and wait (bounded)
 * for each step, logging its real time from the command: the Sentinel
 * names a replica (and, with @blip, half the hosts lose their connection
 * to the old master), the old master fenced (it lost both replicas: the
 * promoted one, and the other moved to the new master), the new master
 * promoted and with a replica that acknowledged (fenced, it grants only
 * then), the old master demoted.
 */
static int failover(struct sim *s, bool with_blip)
{
	char want[48];
	int promoted;

	s->failover_t0 = real_ms();
	if (failover_step(s, s->port + 2, "sentinel failover blkiso", "^OK",
			  "SENTINEL FAILOVER accepted"))
		return -1;
	snprintf(want, sizeof(want), "^\\(%d\\|%d\\)$", s->port + 1, s->port + 3);
	if (failover_step(s, s->port + 2, "sentinel get-master-addr-by-name blkiso", want,
			  "the Sentinel names a replica"))
		return -1;
	if (with_blip && blip(s) < HOSTS / 4)
		return -1;
	snprintf(want, sizeof(want), "^%d$", s->port + 1);
	promoted = cli_wait_for(s->port + 2, "sentinel get-master-addr-by-name blkiso", want, 0) ?
		   s->port + 3 : s->port + 1;
	if (s->fenced && failover_step(s, s->port, "info replication", "min_slaves_good_slaves:0",
				       "old master fenced"))
		return -1;
	if (failover_step(s, promoted, "info replication", "role:master", "replica promoted"))
		return -1;
	if (s->fenced && failover_step(s, promoted, "info replication",
				       "min_slaves_good_slaves:[12]", "new master has a replica"))
		return -1;
	/*
	 * ... and until the Sentinel has demoted the old master.  In
	 * SC_FAILOVER the simulated clock does not run meanwhile; in
	 * SC_FAILOVER_RT the hosts run on in real time (doc/cluster.md).
	 */
	return failover_step(s, s->port, "info replication", "role:slave", "old master demoted");
}

/*
 * SC_FAILOVER_RT: the failover's steps in a child process, so that the
 * hosts run on in real time meanwhile; its log goes to a file read after
 * the run (failover_end).
 */
static void failover_begin(struct sim *s)
{
	s->watcher = fork();
	if (!s->watcher) {
		char path[96];
		int rc = failover(s, true);
		FILE *f;

		snprintf(path, sizeof(path), "%s/failover.log", s->dir);
		f = fopen(path, "w");
		if (f) {
			fputs(s->failover_log, f);
			fclose(f);
		}
		_exit(rc ? 1 : 0);
	}
}

static int failover_end(struct sim *s)
{
	char path[96];
	int status;
	FILE *f;

	if (s->watcher < 0 || waitpid(s->watcher, &status, 0) != s->watcher)
		return -1;
	snprintf(path, sizeof(path), "%s/failover.log", s->dir);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(s->failover_log, sizeof(s->failover_log), f))
			s->failover_log[0] = '\0';
		fclose(f);
	}
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static void redis_stop(struct sim *s)
{
	pid_stop(&s->sentinel);
	pid_stop(&s->replica);
	pid_stop(&s->replica2);
	if (s->redis > 0) {
		kill(s->redis, SIGCONT);
		kill(s->redis, SIGKILL);
		waitpid(s->redis, NULL, 0);
	}
	s->redis = -1;
}

static void sim_free(struct sim *s)
{
	char cmd[128];
	int i;

	redis_stop(s);
	for (i = 0; i < HOSTS; i++)
		agent_store_free(s->h[i].store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", s->dir);
	if (system(cmd))
		perror("rm");
}

/*
 * The first of four ports for the servers, picked by @n, outside the
 * kernel's ephemeral range: while a server starts, redis-cli polls its
 * port, and a connect() to a port of that range with nothing listening
 * yet may be given that very port as its own and connect to itself; the
 * server's bind() then fails (EADDRINUSE) and the setup with it.
 */
static int private_port(unsigned int n)
{
	int lo = 32768, hi = 60999;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

	if (f) {
		if (fscanf(f, "%d %d", &lo, &hi) != 2) {
			lo = 32768;
			hi = 60999;
		}
		fclose(f);
	}
	if (lo - 4 - 10000 >= 1000)
		return 10000 + n % (lo - 4 - 10000);
	if (65535 - 4 - hi >= 1000)
		return hi + 1 + n % (65535 - 4 - hi);
	return 10000 + n % 1000;	/* no room outside it: self-connects possible */
}

static int sim_setup(struct sim *s, int secs, bool sentinel, bool static_split, int try)
{
	struct bi_dev_conf dev;
	int i;

	memset(s, 0, sizeof(*s));
	s->static_split = static_split;
	/* CLUSTER_UNFENCED=1: the failover without the fence, to measure it */
	s->fenced = sentinel && !getenv("CLUSTER_UNFENCED");
	s->replica = s->replica2 = s->sentinel = s->watcher = -1;
	s->secs = secs;
	snprintf(s->dir, sizeof(s->dir), "/tmp/blkiso-cluster-XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	/* private ports: none of port..port+3 in use, and our server up */
	for (i = 0, s->redis = -1; i < 10 && s->redis < 0; i++) {
		char cmd[160];

		s->port = private_port(getpid() * 7 + (i + 10 * try) * 1009);
		snprintf(cmd, sizeof(cmd), "for p in %d %d %d %d; do redis-cli -p $p ping 2>/dev/null | grep -q PONG && exit 1; done; exit 0",
			 s->port, s->port + 1, s->port + 2, s->port + 3);
		if (system(cmd))
			continue;
		s->redis = redis_start(s);
		if (s->redis > 0 && waitpid(s->redis, NULL, WNOHANG) != 0)
			s->redis = -1;
	}
	if (s->redis < 0) {
		printf("# setup: no redis-server on a free port in 10 tries\n");
		return -1;
	}
	agent_conf_defaults(&s->c);
	s->c.redis.port = s->port;
	s->c.interval_ms = 500;
	s->c.ttl_ms = 1500;
	/* the agent's default: 16 hosts in one process on a loaded machine time out at 20 ms */
	s->c.timeout_ms = 100;
	/*
	 * Past 5 s the kill scenario's floors show; a failover's fenced
	 * stretch (until the new master has a replica that acknowledged,
	 * seconds) is fail static, the agent's default 30 s.
	 */
	s->c.fail_static_ms = sentinel ? 30000 : 5000;
	s->c.burst_ms = 500;
	s->c.nr_tenants = 1;
	snprintf(s->c.tenant[0].name, sizeof(s->c.tenant[0].name), "t%d", getpid());
	s->c.tenant[0].key = BLKISO_LEASE_RIOS;
	s->c.tenant[0].quota = QUOTA;
	s->c.tenant[0].floor = FLOOR;
	s->c.tenant[0].hosts = HOSTS;
	if (sentinel && failover_setup(s))
		return -1;
	bi_dev_conf_init(&dev);
	for (i = 0; i < HOSTS; i++) {
		struct host *h = &s->h[i];

		bi_meter_init(&h->m, 0);
		bi_meter_init_cpu(&h->cpu, 0);
		if (s->static_split ? bi_conf_parse(&h->conf, "riops=1000", 10, NULL) :
				      bi_conf_parse(&h->conf, "riops=8", 7, NULL))
			return -1;
		bi_meter_configure(&h->m, &h->conf, &dev, 0);
		h->c = s->c;
		snprintf(h->c.host_id, sizeof(h->c.host_id), "h%d", i);
		h->store = agent_store_new(&h->c);
		agent_tenant_init(&h->at, &h->c.tenant[0]);
	}
	return 0;
}

/*
 * Set up, or leave no server and no directory behind (an ASSERT returns at
 * once).  The servers are the test's fixture, not what it tests: a setup
 * that failed (its step and the servers' state are on the log) is tried
 * once more from nothing, on other ports.
 */
static int sim_init(struct sim *s, int secs, bool sentinel, bool static_split)
{
	int try;

	for (try = 1; try <= 2; try++) {
		if (!sim_setup(s, secs, sentinel, static_split, try))
			return 0;
		sim_free(s);
		printf("# setup: try %d of 2 failed\n", try);
	}
	return -1;
}


/* Demand of host @i at @ms, requests/s: 1.5x the quota in all. */
static double demand(enum scen sc, int i, uint64_t ms)
{
	double total = QUOTA * 1.5;

	switch (sc) {
	case SC_ONE:
		return i == 0 ? total : 0;
	case SC_SHIFT:
		return i == (int)((ms / 5000) % HOSTS) ? total : 0;
	case SC_MIXED:
		/* light: half of quota / HOSTS; heavy: 1.5x what the light leave */
		return i < HOSTS / 2 ? QUOTA / HOSTS / 2.0 : 1.5 * (QUOTA * 3 / 4.0) / (HOSTS / 2);
	default:
		return total / HOSTS;
	}
}

static uint64_t take_back(void *arg, uint64_t n)
{
	struct host *h = arg;
	struct bi_lease_state st;
	uint64_t before;

	bi_meter_lease(&h->m, BI_KEY_RREQS, 0, 0, h->now, &st);
	before = st.returned;
	bi_meter_lease_return(&h->m, BI_KEY_RREQS, (s64)n, h->now, &st);
	return st.returned - before;
}

/*
 * SC_KILL's server back: tried until it answers (a loaded machine may
 * take longer than server_start's wait), its real time kept for the log.
 */
static void redis_restart(struct sim *s)
{
	uint64_t t0 = real_ms();

	do
		s->redis = redis_start(s);
	while (s->redis < 0 && real_ms() - t0 < FAILOVER_WAIT_S * 1000ULL);
	s->restart_ms = s->redis < 0 ? -1 : (int64_t)(real_ms() - t0);
}

static void sim_run(struct sim *s, enum scen sc)
{
	struct bi_io io = { .op = BI_OP_READ, .bytes = 4096, .prio_class = BI_PRIO_BE };
	uint64_t ms, end = (uint64_t)s->secs * 1000, phase = s->c.interval_ms / HOSTS;
	uint64_t check = s->c.interval_ms / AGENT_CHECKS;
	struct timespec t0, due;
	int i;

	/*
	 * staggered: host i's first round at phase x i; hosts started
	 * together look at the same ms and start their grids at once (host 0
	 * always calls the store first)
	 */
	if (sc == SC_TOGETHER || sc == SC_MIXED)
		phase = 0;
	for (i = 0; i < HOSTS; i++)
		s->h[i].at.to_round = phase * i / check;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (ms = 0; ms < end; ms++) {
		uint64_t now = ms * MS;

		if (s->realtime) {
			/* each simulated ms no earlier than its real one */
			due.tv_sec = t0.tv_sec + (t0.tv_nsec + now) / 1000000000ULL;
			due.tv_nsec = (t0.tv_nsec + now) % 1000000000ULL;
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
		}
		if (sc == SC_FAILOVER_RT && ms == 20000)
			failover_begin(s);

		if (sc == SC_KILL && ms == 20000)
			redis_stop(s);
		if (sc == SC_KILL && ms == 30000)
			redis_restart(s);
		if (sc == SC_PAUSE && ms == 20000)
			kill(s->redis, SIGSTOP);
		if (sc == SC_PAUSE && ms == 23000)
			kill(s->redis, SIGCONT);
		if (sc == SC_CUT && ms == 20000)
			s->cut = blip(s);
		if (sc == SC_FAILOVER && ms == 20000)
			s->failover_rc = failover(s, false);
		for (i = 0; i < HOSTS; i++) {
			struct host *h = &s->h[i];
			double d = demand(sc, i, ms);
			struct bi_charge ch;
			u64 retry;

			h->backlog += d / 1000;
			if (d > 0)
				h->arrived++;	/* requests came this ms */
			if (h->backlog > d / 20)	/* 50 ms of demand queue at most */
				h->backlog = d / 20;
			while (h->backlog >= 1) {
				bi_meter_classify(&h->m, &io, &ch);
				if (!bi_meter_admit(&h->m, &h->cpu, &ch, now, &retry)) {
					h->held++;
					break;
				}
				bi_meter_complete(&h->m, &h->cpu, &ch, now);
				h->backlog -= 1;
				h->admitted++;
				s->per_ms[ms]++;
			}
			if (!s->static_split && ms % check == (phase * i) % check) {
				struct bi_lease_state st;
				struct agent_obs o;
				uint64_t n;

				bi_meter_lease(&h->m, BI_KEY_RREQS, 0, 0, now, &st);
				o.left = st.tokens;
				o.spent = st.spent;
				o.held = h->held;
				o.queued = h->backlog >= 1;	/* a request left waiting */
				o.arrived = h->arrived;
				h->now = now;
				n = agent_check(&h->c, &h->at, h->store, &o, now + 1, now / 1000 + 1,
						take_back, h);
				if (n)
					bi_meter_lease(&h->m, BI_KEY_RREQS, n,
						       (u64)s->c.ttl_ms * MS, now, NULL);
			}
			if (ms >= 2000 && d == 0 && demand(sc, i, ms - 1) > 0)
				h->departures++;
			if (ms == 1999) {
				h->admitted_2s = h->admitted;
				h->rt_2s = agent_store_round_trips(h->store);
			}
			if (ms % 100 == 99) {
				s->tr_static_hosts[ms / 100] += h->at.src == AGENT_SRC_FAIL_STATIC;
				s->tr_granted[ms / 100] += h->at.granted;
				s->tr_static[ms / 100] += h->at.static_leased;
			}
			if (ms % s->c.interval_ms == phase * i) {
				/* active: demand now or during the last interval */
				if (ms >= 2000 && (d > 0 || demand(sc, i, ms - s->c.interval_ms) > 0))
					h->rt_active_rounds++;
			}
		}
	}
}

/* Worst over-admission (%) over sliding windows of @win_ms from 2 s, steps of 100 ms. */
static double over_pct(const struct sim *s, uint64_t win_ms, uint64_t from, uint64_t to)
{
	double worst = -100;
	uint64_t a, t;

	for (a = from; a + win_ms <= to; a += 100) {
		uint64_t n = 0;

		for (t = a; t < a + win_ms; t++)
			n += s->per_ms[t];
		if (100.0 * n / (QUOTA * win_ms / 1000.0) - 100 > worst)
			worst = 100.0 * n / (QUOTA * win_ms / 1000.0) - 100;
	}
	return worst;
}

static double used_pct(const struct sim *s, uint64_t from, uint64_t to)
{
	uint64_t n = 0, t;

	for (t = from; t < to; t++)
		n += s->per_ms[t];
	return 100.0 * n / (QUOTA * (to - from) / 1000.0);
}

/*
 * Round trips per (host with demand) and second from 2 s, like the other
 * figures (a host's first round on the new bucket, which starts empty,
 * gets nothing and the next grid round follows); and of idle hosts.
 * @over: round trips beyond one per active interval and one as the
 * demand leaves a host (its credit and its want given back), which the
 * protocol allows.
 */
static void round_trips(const struct sim *s, double *per_s, uint64_t *idle, int64_t *over)
{
	uint64_t rt = 0, rounds = 0, gone = 0;
	int i;

	*idle = 0;
	for (i = 0; i < HOSTS; i++) {
		uint64_t n = agent_store_round_trips(s->h[i].store) - s->h[i].rt_2s;

		if (!s->h[i].rt_active_rounds)
			*idle += n;
		rt += n;
		rounds += s->h[i].rt_active_rounds;
		gone += s->h[i].departures;
	}
	*over = (int64_t)rt - (int64_t)(rounds + gone);
	/* a host with demand makes at most one round per interval */
	*per_s = rounds ? (double)rt / (rounds * s->c.interval_ms / 1000.0) : 0;
}

/*
 * Goals of issue 22 and what is asserted (doc/cluster.md has the table):
 * over-admission <= 1 % per 10 s and <= 5 % per 1 s everywhere, pauses and
 * failovers included; quota used >= 97 % under every skew; ramp to 90 %
 * within 2 intervals; round trips: one per interval while a host has
 * demand (2/s), and one more as the demand leaves it; each host gets its
 * max-min fair share under uniform and mixed demand, started together or
 * staggered (90 to 110 %).
 */
/*
 * make bench: with CLUSTER_FIGURES=FILE, each scenario appends its figures
 * to FILE as one JSON object a line (tools/bench/run.sh collects them);
 * a figure not measured for a scenario is -1.
 */
static void figure(const char *scenario, const char *policy, double o10, double o1,
		   double used, double rts, long long ramp_ms)
{
	const char *path = getenv("CLUSTER_FIGURES");
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "{\"scenario\": \"%s\", \"policy\": \"%s\", \"hosts\": %d, \"quota_iops\": %llu, "
		"\"over_10s_pct\": %.2f, \"over_1s_pct\": %.2f, \"used_pct\": %.2f, "
		"\"round_trips_per_s\": %.3f, \"ramp_ms\": %lld}\n",
		scenario, policy, HOSTS, QUOTA, o10, o1, used, rts, ramp_ms);
	fclose(f);
}

static void report(struct __test_metadata *_metadata, const struct sim *s, const char *name,
		   double *o10, double *o1, double *used, double *rts)
{
	uint64_t idle;
	int64_t over;

	*o10 = over_pct(s, 10000, 2000, s->secs * 1000ULL);
	*o1 = over_pct(s, 1000, 2000, s->secs * 1000ULL);
	*used = used_pct(s, 2000, s->secs * 1000ULL);
	round_trips(s, rts, &idle, &over);
	TH_LOG("%s: over-admission worst 10 s %.2f %%, worst 1 s %.2f %%; quota used %.2f %% (from 2 s); round trips %.3f /s per active host (%lld beyond one per active interval and one per departure), %llu by idle hosts",
	       name, *o10, *o1, *used, *rts, (long long)over, (unsigned long long)idle);
	EXPECT_LE(over, 0);
	EXPECT_EQ(0ULL, idle);
}

/*
 * Demand moving every 5 s: after each move, the end of the first 100 ms
 * window at >= 90 % of the quota; the worst over the moves, ms.
 */
static long long ramp_ms(const struct sim *s)
{
	uint64_t t0, t, worst = 0;

	for (t0 = 5000; t0 + 5000 <= s->secs * 1000ULL; t0 += 5000) {
		for (t = t0; t < t0 + 5000; t++) {
			uint64_t n = 0, u;

			for (u = t; u < t + 100; u++)
				n += s->per_ms[u];
			if (n * 10 >= QUOTA * 9 / 10)
				break;
		}
		if (t + 100 - t0 > worst)
			worst = t + 100 - t0;
	}
	return worst;
}

/*
 * Each host's admitted rate from 2 s, as a share of what max-min fairness
 * gives it (its demand, or an equal part of what the hosts wanting less
 * leave): the lowest and the highest, %.
 */
static void fair_shares(const struct sim *s, enum scen sc, double *lo, double *hi)
{
	double secs = s->secs - 2, d[HOSTS], left = QUOTA, fair;
	bool whole[HOSTS] = { false };	/* gets all its demand */
	int i, n = HOSTS, done;

	for (i = 0; i < HOSTS; i++)
		d[i] = demand(sc, i, 2000);
	/* water-filling: hosts wanting less than an equal part get it all */
	do {
		done = 1;
		fair = left / n;
		for (i = 0; i < HOSTS; i++)
			if (!whole[i] && d[i] < fair) {
				left -= d[i];
				n--;
				whole[i] = true;
				done = 0;
			}
	} while (!done && n);
	*lo = 1e9;
	*hi = 0;
	for (i = 0; i < HOSTS; i++) {
		double want = whole[i] ? d[i] : fair;
		double got = (s->h[i].admitted - s->h[i].admitted_2s) / secs;

		if (100 * got / want < *lo)
			*lo = 100 * got / want;
		if (100 * got / want > *hi)
			*hi = 100 * got / want;
	}
}

static void scenario(struct __test_metadata *_metadata, enum scen sc, const char *name)
{
	static struct sim s;
	double o10, o1, used, rts;
	long long ramp = -1;
	int i;

	ASSERT_EQ(0, sim_init(&s, sc == SC_SHIFT || sc == SC_KILL ? 40 :
			      sc == SC_FAILOVER || sc == SC_FAILOVER_RT ? 60 : 30,
			      sc == SC_FAILOVER || sc == SC_FAILOVER_RT, false));
	s.realtime = sc == SC_FAILOVER_RT;
	sim_run(&s, sc);
	/* the real-time failover: it happened, the old master is a replica */
	if (sc == SC_FAILOVER_RT)
		s.failover_rc = failover_end(&s);
	report(_metadata, &s, name, &o10, &o1, &used, &rts);
	if (getenv("CLUSTER_TRACE")) {
		uint64_t t, n = 0;

		for (t = 0; t < s.secs * 1000ULL; t++) {
			n += s.per_ms[t];
			if (t % 100 == 99) {
				uint64_t k = t / 100;

				/* admitted; hosts fail static; granted, leased in fail static */
				fprintf(stderr, "%s %.1f %llu %llu %llu %llu\n", name, t / 1000.0,
					(unsigned long long)n,
					(unsigned long long)s.tr_static_hosts[k],
					(unsigned long long)(s.tr_granted[k] - (k ? s.tr_granted[k - 1] : 0)),
					(unsigned long long)(s.tr_static[k] - (k ? s.tr_static[k - 1] : 0)));
				n = 0;
			}
		}
	}
	/*
	 * The accuracy goals, everywhere: in the real-time failover too,
	 * where only the fence (min-replicas-to-write on the data nodes)
	 * keeps the hosts that lost their connection to the old master from
	 * drawing from the new one's bucket while the others still draw from
	 * the old one's (CLUSTER_UNFENCED=1 shows it: doc/cluster.md).
	 */
	EXPECT_LE(o10, 1.0);
	EXPECT_LE(o1, 5.0);
	if (sc != SC_KILL && sc != SC_PAUSE)
		EXPECT_GE(used, 97.0);
	if (sc == SC_SHIFT) {
		ramp = ramp_ms(&s);
		TH_LOG("%s: 90 %% of the quota at most %lld ms after demand moved (2 intervals: %u ms)",
		       name, ramp, 2 * s.c.interval_ms);
		EXPECT_LE(ramp, 2LL * s.c.interval_ms);
	}
	figure(name, "agent", o10, o1, used, rts, ramp);
	if (sc == SC_UNIFORM || sc == SC_TOGETHER || sc == SC_MIXED) {
		double lo, hi;

		/*
		 * Each host gets its max-min fair share: before the store's
		 * fair cap, hosts started together left one host the whole
		 * refill and the others at their floors (4 agents in a guest:
		 * one took 96 %).
		 */
		fair_shares(&s, sc, &lo, &hi);
		TH_LOG("%s: each host's admitted rate, of its max-min fair share: %.1f %% to %.1f %% (goal: 90 to 110 %%)",
		       name, lo, hi);
		EXPECT_GE(lo, 90.0);
		EXPECT_LE(hi, 110.0);
	}
	if (sc == SC_FAILOVER || sc == SC_FAILOVER_RT) {
		double all = used_pct(&s, 2000, s.secs * 1000ULL);

		TH_LOG("%s: steps in real time: %s", name, s.failover_log);
		EXPECT_EQ(0, s.failover_rc);
		TH_LOG("%s: over 58 s across the failover at 20 s: %.2f %% of the quota (goal: <= 102 %%)",
		       name, all);
		EXPECT_LE(all, 102.0);
		EXPECT_GE(all, 95.0);
	}
	if (sc == SC_CUT) {
		uint64_t leased = 0;
		int i, cut = 0;

		for (i = 0; i < HOSTS; i++) {
			leased += s.h[i].at.static_leased;
			cut += s.h[i].at.static_leased > 0;
		}
		TH_LOG("%s: %d connections closed; %d hosts failed a round, %llu tokens leased in fail static",
		       name, s.cut, cut, (unsigned long long)leased);
		EXPECT_GE(s.cut, HOSTS / 4);
		/*
		 * each went once more through a fresh connection: none fails
		 * static for the cut (without that retry all of them did), though
		 * a call may still time out on a loaded machine (one host in one of 7 runs)
		 */
		EXPECT_LE(cut, s.cut / 4);
	}
	if (sc == SC_KILL || sc == SC_PAUSE) {
		uint64_t from = 20000, to = sc == SC_KILL ? 25000 : 23000;
		double fs = used_pct(&s, from + 1000, to);

		TH_LOG("%s: quota admitted while the store is away (fail static): %.2f %%", name, fs);
		EXPECT_GE(fs, 90.0);
		EXPECT_LE(fs, 101.0);
		if (sc == SC_KILL) {
			double fl = used_pct(&s, 26500, 30000);

			TH_LOG("%s: past fail_static_ms, floors only: %.2f %% (floors %.2f %%)",
			       name, fl, 100.0 * HOSTS * FLOOR / QUOTA);
			EXPECT_LE(fl, 100.0 * HOSTS * FLOOR / QUOTA + 0.5);
			TH_LOG("%s: the server restarted at 30 s in %lld ms of real time (-1: failed)",
			       name, (long long)s.restart_ms);
			EXPECT_LE(0, s.restart_ms);
			fl = used_pct(&s, 32000, s.secs * 1000ULL);
			TH_LOG("%s: the server back (empty): quota used from 32 s %.2f %%", name, fl);
			EXPECT_GE(fl, 95.0);
			for (i = 0; fl < 95.0 && i < HOSTS; i++)	/* why, on a failure */
				TH_LOG("%s: host %d: source %d, debt %llu, granted %llu, round trips %llu",
				       name, i, s.h[i].at.src, (unsigned long long)s.h[i].at.debt,
				       (unsigned long long)s.h[i].at.granted,
				       (unsigned long long)agent_store_round_trips(s.h[i].store));
		}
	}
	sim_free(&s);
}

/* A fixture only for the timeout: the failover waits on real seconds. */
FIXTURE(cl) {
	int unused;
};

FIXTURE_SETUP(cl)
{
}

FIXTURE_TEARDOWN(cl)
{
}

#define CL_TIMEOUT	180

TEST_F_TIMEOUT(cl, all_demand_on_one_host, CL_TIMEOUT) { scenario(_metadata, SC_ONE, "one host"); }
TEST_F_TIMEOUT(cl, uniform_demand, CL_TIMEOUT) { scenario(_metadata, SC_UNIFORM, "uniform"); }
TEST_F_TIMEOUT(cl, hosts_started_together_share_fairly, CL_TIMEOUT)
{
	scenario(_metadata, SC_TOGETHER, "together");
}
TEST_F_TIMEOUT(cl, light_hosts_get_their_demand_heavy_ones_the_rest, CL_TIMEOUT)
{
	scenario(_metadata, SC_MIXED, "mixed");
}
TEST_F_TIMEOUT(cl, demand_shifting_every_5s, CL_TIMEOUT) { scenario(_metadata, SC_SHIFT, "shifting"); }
TEST_F_TIMEOUT(cl, server_killed_fail_static_then_floor, CL_TIMEOUT) { scenario(_metadata, SC_KILL, "kill"); }
TEST_F_TIMEOUT(cl, server_paused_fail_static, CL_TIMEOUT) { scenario(_metadata, SC_PAUSE, "SIGSTOP"); }
/*
 * Half the hosts lose their connection at 20 s (CLIENT KILL) while the
 * others go on: their next call finds it closed and goes once more
 * through a fresh one, so none of them leases in fail static (which,
 * while the others draw the whole bucket, over-admits: +9.14 % over 1 s
 * with the debts carried, before that retry).
 */
TEST_F_TIMEOUT(cl, half_the_hosts_lose_their_connection, CL_TIMEOUT)
{
	scenario(_metadata, SC_CUT, "connections cut");
}
/*
 * The baseline every user would otherwise pick: a static split, each host
 * capped at quota / 16 (riops=1000), no agent.  The quota used under each
 * skew, next to the agent's (the scenarios above): the agent must beat it
 * wherever the demand is uneven.
 */
TEST_F_TIMEOUT(cl, static_split_baseline, CL_TIMEOUT)
{
	static const struct { enum scen sc; const char *name; double agent_min; } c[] = {
		{ SC_ONE, "one host", 97 }, { SC_UNIFORM, "uniform", 97 },
		{ SC_SHIFT, "shifting", 97 },
	};
	static struct sim s;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		double used, o1, o10;

		ASSERT_EQ(0, sim_init(&s, c[i].sc == SC_SHIFT ? 40 : 30, false, true));
		sim_run(&s, c[i].sc);
		used = used_pct(&s, 2000, s.secs * 1000ULL);
		o1 = over_pct(&s, 1000, 2000, s.secs * 1000ULL);
		o10 = over_pct(&s, 10000, 2000, s.secs * 1000ULL);
		TH_LOG("static quota/16 split, %s: quota used %.2f %%, worst 1 s over-admission %.2f %% (the agent: >= %.0f %%)",
		       c[i].name, used, o1, c[i].agent_min);
		EXPECT_LE(o1, 5.0);
		if (c[i].sc != SC_UNIFORM)
			EXPECT_LT(used, c[i].agent_min);
		/* no store, no round trips; a ramp it never makes */
		figure(c[i].name, "static_split", o10, o1, used, 0, -1);
		sim_free(&s);
	}
}

/*
 * The bucket script's rules, call by call: one store client, bucket rate
 * 10,000/s, capacity 5,000, every call asking for more than there is;
 * the simulated clock.  @other_master: the bucket's master field first
 * rewritten as a failover leaves it (a bucket last written under another
 * master); @debt: the call repays credit leased in fail static.
 */
struct script_step {
	uint64_t now_us;
	bool other_master;
	uint64_t debt;
	uint64_t want;		/* tokens granted */
	int host;		/* whose store client calls (0 unless set) */
	uint64_t ask;		/* 0: more than there is */
};

static void script_steps(struct __test_metadata *_metadata, struct sim *s,
			 const struct script_step *step, int n)
{
	struct agent_grant g;
	char cmd[256], bucket[32];
	int i;

	snprintf(bucket, sizeof(bucket), "m%d", getpid());
	for (i = 0; i < n; i++) {
		if (step[i].other_master) {
			snprintf(cmd, sizeof(cmd),
				 "redis-cli -p %d hset blkiso:bucket:%s master 192.0.2.1:6379 >/dev/null",
				 s->port, bucket);
			ASSERT_EQ(0, system(cmd));
		}
		ASSERT_EQ(0, agent_store_lease(s->h[step[i].host].store, bucket, 10000, 5000,
					       step[i].ask ? step[i].ask : 1000000, 0,
					       step[i].now_us, 1500000, 0, step[i].debt, 500000, &g));
		TH_LOG("host %d at %llu ms%s, debt %llu: granted %llu (expected %llu)",
		       step[i].host, (unsigned long long)step[i].now_us / 1000,
		       step[i].other_master ? ", bucket last written by another master" : "",
		       (unsigned long long)step[i].debt, (unsigned long long)g.granted,
		       (unsigned long long)step[i].want);
		EXPECT_EQ(step[i].want, g.granted);
	}
}

/*
 * A new master does not refill a bucket written under another one for
 * the time since that write (the old master granted it); later calls
 * refill as usual.  Through the Sentinel, against the fenced master.
 */
TEST_F_TIMEOUT(cl, new_master_does_not_refill_the_old_masters_time, CL_TIMEOUT)
{
	static const struct script_step step[] = {
		{ 1000000, false, 0, 0, 0, 0 },	/* a new bucket starts empty */
		{ 1200000, false, 0, 2000, 0, 0 },	/* 200 ms refilled, same master */
		{ 1400000, true, 0, 0, 0, 0 },	/* 200 ms the other master's */
		{ 1500000, false, 0, 1000, 0, 0 },	/* 100 ms refilled under this one */
	};
	static struct sim s;

	ASSERT_EQ(0, sim_init(&s, 1, true, false));
	script_steps(_metadata, &s, step, 4);
	sim_free(&s);
}

/*
 * A host back from failing alone (a timeout) while the others drew the
 * bucket repays its debt from what the bucket gathered since its last
 * write (50 ms: 500), and the rest (1,000) is carried: the next 100 ms
 * of refill pay it before anything is granted.  After an outage of the
 * whole store the same debt is covered by what the bucket would have
 * gathered (2 s: 20,000), and grants start from the refill after.
 */
TEST_F_TIMEOUT(cl, a_debt_beyond_what_the_bucket_gathered_is_carried, CL_TIMEOUT)
{
	static const struct script_step step[] = {
		{ 1000000, false, 0, 0, 0, 0 },
		{ 1200000, false, 0, 2000, 0, 0 },
		{ 1250000, false, 1500, 0, 0, 0 },	/* gathered 500, 1,000 carried */
		{ 1350000, false, 0, 0, 0, 0 },	/* the refill pays it */
		{ 1450000, false, 0, 1000, 0, 0 },
		{ 3450000, false, 1500, 0, 0, 0 },	/* 2 s away: covered, tokens from 0 */
		{ 3550000, false, 0, 1000, 0, 0 },
	};
	static struct sim s;

	ASSERT_EQ(0, sim_init(&s, 1, false, false));
	script_steps(_metadata, &s, step, 7);
	sim_free(&s);
}

/*
 * Hosts asking together share an interval's refill (5,000) max-min
 * fairly: each ask is capped at an equal part of it, less what the hosts
 * that asked for less within 1.5 intervals take; a host's want older
 * than that no longer counts.
 */
TEST_F_TIMEOUT(cl, the_bucket_is_shared_max_min_fairly, CL_TIMEOUT)
{
	static const struct script_step step[] = {
		{ 1000000, false, 0, 0, 0, 0 },		/* new, empty: both wants kept */
		{ 1000000, false, 0, 0, 1, 0 },
		{ 1500000, false, 0, 2500, 0, 0 },	/* half the refill each */
		{ 1500000, false, 0, 2500, 1, 0 },
		{ 2000000, false, 0, 1000, 0, 1000 },	/* host 0 asks 1,000: all of it */
		{ 2000000, false, 0, 4000, 1, 0 },	/* host 1 the rest */
		{ 3000000, false, 0, 5000, 1, 0 },	/* host 0's want 1 s old: all */
	};
	static struct sim s;

	ASSERT_EQ(0, sim_init(&s, 1, false, false));
	script_steps(_metadata, &s, step, 7);
	sim_free(&s);
}

TEST_F_TIMEOUT(cl, sentinel_failover, CL_TIMEOUT) { scenario(_metadata, SC_FAILOVER, "failover"); }
/*
 * The same failover with the clock running in real time: hosts connected
 * to the old master keep drawing from its bucket until the Sentinel
 * demotes it, so this measures the split brain the simulated clock hides.
 */
TEST_F_TIMEOUT(cl, sentinel_failover_in_real_time, CL_TIMEOUT)
{
	scenario(_metadata, SC_FAILOVER_RT, "failover, real time");
}

TEST_HARNESS_MAIN
