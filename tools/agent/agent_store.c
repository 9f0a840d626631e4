// SPDX-License-Identifier: GPL-2.0
/*
 * agent_store.c - the cluster bucket in Redis, through hiredis 0.14.
 *
 * A bucket is a hash (tokens, ts in microseconds) plus a sorted set of
 * the hosts that asked recently and two of each host's last ask (its
 * want), one by size and one by time.  One server-side Lua script,
 * called by EVALSHA (loaded again after NOSCRIPT, e.g. on a new master),
 * does in one round trip: the lazy refill of S4-04, added = min(rate x
 * dt, max - current); the grant of S4-02, up to the amount asked and the
 * host's max-min fair share, or 0 ("insufficient") when the bucket holds
 * no more than the threshold; and the count of active hosts.  The fair
 * share: when this ask and the wants other hosts made within 1.5
 * intervals (a host with demand asks once per interval) exceed one
 * interval's refill (or the tokens held, if more), the wants are
 * water-filled over it; without it the first host to call takes what the
 * bucket holds, and hosts whose rounds coincide leave one host the whole
 * refill every round.  The same call gives back credit a host
 * took back unused (capped at the bucket's capacity) and repays what a
 * host leased on its own while the store was away (fail static), so that
 * an outage does not add to the quota: the first repayment after an
 * outage sets apart as a reserve, for one interval (reserve_us; every
 * host's round comes within it), what the bucket would have gathered
 * since its last write without its cap, and when that passed the cap
 * (no host drew it: an outage of the whole store) also what refills
 * during that interval, while the other hosts are still away and lease
 * on their own (everything, for a bucket lost with its server); grants
 * come only from what refills after.
 * Later repayments draw on the reserve alone, never on that refill (the
 * hosts that come back later would otherwise starve the ones already
 * back).  A debt beyond the reserve is carried: the bucket goes below
 * zero until the refill has paid it, so that hosts that failed alone (a
 * timeout) while the others drew the bucket do not add to the quota;
 * what the debts leave of the reserve is dropped
 * (an outage leaves no burst behind).  The time is Redis's TIME, or in test mode
 * the simulator's clock passed as an argument (the only difference).
 * A new bucket starts empty, so a cluster never starts with a burst.
 *
 * Bookworm's hiredis has no Sentinel API: the master's address comes from
 * SENTINEL get-master-addr-by-name, asked of each Sentinel in turn, on
 * every (re)connection.  Any error (no connection, timeout, READONLY from
 * a demoted master, NOREPLICAS from a fenced one) drops the connection;
 * the next call reconnects.  With Sentinels the script is given that
 * address and keeps it in the bucket: the first call a new master gets
 * for a bucket written under another one does not refill it for the time
 * since its last replicated write, which the old master granted (or the
 * hosts leased in fail static) until it was fenced; a bucket refilled for
 * the same time twice would over-admit it.
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "agent.h"

static const char agent_lua[] =
	"local rate = tonumber(ARGV[1])\n"
	"local max = tonumber(ARGV[2])\n"
	"local ask = tonumber(ARGV[3])\n"
	"local thr = tonumber(ARGV[4])\n"
	"local now = tonumber(ARGV[5])\n"
	"if now == 0 then\n"
	"  local t = redis.call('TIME')\n"
	"  now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
	"end\n"
	"local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts', 'rsv', 'rsv_end', 'master')\n"
	"local tokens = tonumber(b[1]) or 0\n"
	"local ts = tonumber(b[2]) or now\n"
	"local rsv = tonumber(b[3]) or 0\n"
	"local rsv_end = tonumber(b[4]) or 0\n"
	"local master = ARGV[11]\n"
	"if master == '' then master = b[5] or '' end\n"
	"local gathered = b[2] and tokens + rate * math.max(now - ts, 0) / 1000000 or 1e15\n"
	"if gathered > max then\n"
	"  gathered = gathered + rate * tonumber(ARGV[10]) / 1000000\n"
	"end\n"
	"if b[5] and b[5] ~= '' and b[5] ~= master then ts = now end\n"
	"if now > ts then\n"
	"  local add = math.min(rate * (now - ts) / 1000000, max - tokens)\n"
	"  if add > 0 then tokens = tokens + add end\n"
	"  ts = now\n"
	"end\n"
	"local debt = tonumber(ARGV[9])\n"
	"if now >= rsv_end then rsv = 0 end\n"
	"if debt > 0 then\n"
	"  if now >= rsv_end then\n"
	"    rsv = gathered\n"
	"    tokens = 0\n"
	"    rsv_end = now + tonumber(ARGV[10])\n"
	"  end\n"
	"  rsv = rsv - debt\n"
	"  if rsv < 0 then\n"
	"    tokens = tokens + rsv\n"
	"    rsv = 0\n"
	"  end\n"
	"end\n"
	"tokens = math.min(tokens + tonumber(ARGV[8]), max)\n"
	/*
	 * The fair share, max-min over the wants of the last 1.5 intervals
	 * (ARGV[10]: one interval): KEYS[3] the wants by size, KEYS[4] by
	 * time.  Only the wants below this ask are read, smallest first, until
	 * one no longer fits an equal part of what is left: under contention
	 * that is the first, so a call costs O(log hosts).
	 */
	"local iv = tonumber(ARGV[10])\n"
	"local host, cap = ARGV[7], ask\n"
	"local old = '(' .. string.format('%.0f', now - iv * 3 / 2)\n"
	"for _, h in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', old)) do\n"
	"  redis.call('ZREM', KEYS[3], h)\n"
	"  redis.call('ZREM', KEYS[4], h)\n"
	"end\n"
	"redis.call('ZREM', KEYS[3], host)\n"
	"if ask > 0 then\n"
	"  local left = math.max(rate * iv / 1000000, tokens)\n"
	"  local k = redis.call('ZCARD', KEYS[3]) + 1\n"
	"  local below = '(' .. string.format('%.0f', ask)\n"
	"  local off, done = 0, false\n"
	"  while not done do\n"
	"    local w = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', below, 'WITHSCORES', 'LIMIT', off, 64)\n"
	"    for i = 2, #w, 2 do\n"
	"      local x = tonumber(w[i])\n"
	"      if x * k > left then\n"
	"        cap = left / k\n"
	"        done = true\n"
	"        break\n"
	"      end\n"
	"      left = left - x\n"
	"      k = k - 1\n"
	"    end\n"
	"    if not done and #w < 128 then\n"
	"      if ask * k > left then cap = left / k end\n"
	"      done = true\n"
	"    end\n"
	"    off = off + 64\n"
	"  end\n"
	"  redis.call('ZADD', KEYS[3], ask, host)\n"
	"  redis.call('ZADD', KEYS[4], now, host)\n"
	"else\n"
	"  redis.call('ZREM', KEYS[4], host)\n"
	"end\n"
	"local grant = 0\n"
	"if tokens > thr and tokens >= 1 then\n"
	"  grant = math.floor(math.min(cap, tokens))\n"
	"  tokens = tokens - grant\n"
	"end\n"
	"redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(ts),\n"
	"  'rsv', tostring(rsv), 'rsv_end', tostring(rsv_end), 'master', master)\n"
	"redis.call('ZADD', KEYS[2], now, ARGV[7])\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[6]))\n"
	"return {grant, math.max(math.floor(tokens), 0), redis.call('ZCARD', KEYS[2])}\n";

struct agent_store {
	const struct agent_conf *c;
	redisContext *ctx;
	char sha[48];
	char master[80];	/* "host:port" the Sentinels named, "" without them */
	uint64_t round_trips;
};

struct agent_store *agent_store_new(const struct agent_conf *c)
{
	struct agent_store *s = calloc(1, sizeof(*s));

	if (s)
		s->c = c;
	return s;
}

static void store_drop(struct agent_store *s)
{
	if (s->ctx)
		redisFree(s->ctx);
	s->ctx = NULL;
	s->sha[0] = '\0';
}

void agent_store_free(struct agent_store *s)
{
	if (!s)
		return;
	store_drop(s);
	free(s);
}

uint64_t agent_store_round_trips(const struct agent_store *s)
{
	return s->round_trips;
}

static redisContext *store_connect(const struct agent_store *s, const char *host, int port)
{
	struct timeval tv = { s->c->timeout_ms / 1000, (s->c->timeout_ms % 1000) * 1000 };
	redisContext *ctx = redisConnectWithTimeout(host, port, tv);

	if (!ctx)
		return NULL;
	if (ctx->err || redisSetTimeout(ctx, tv) != REDIS_OK) {
		redisFree(ctx);
		return NULL;
	}
	return ctx;
}

/* The master's address from the first Sentinel that knows it. */
static int store_ask_sentinels(struct agent_store *s, char *host, size_t hsize, int *port)
{
	int i;

	for (i = 0; i < s->c->nr_sentinels; i++) {
		const struct agent_addr *a = &s->c->sentinel[i];
		redisContext *ctx = store_connect(s, a->host, a->port);
		redisReply *r;
		int ok = 0;

		if (!ctx)
			continue;
		r = redisCommand(ctx, "SENTINEL get-master-addr-by-name %s", s->c->master);
		if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
			snprintf(host, hsize, "%s", r->element[0]->str);
			*port = atoi(r->element[1]->str);
			ok = 1;
		}
		if (r)
			freeReplyObject(r);
		redisFree(ctx);
		if (ok)
			return 0;
	}
	return -1;
}

static int store_load(struct agent_store *s)
{
	redisReply *r = redisCommand(s->ctx, "SCRIPT LOAD %s", agent_lua);
	int ret = -1;

	if (r && r->type == REDIS_REPLY_STRING && r->len < (int)sizeof(s->sha)) {
		memcpy(s->sha, r->str, r->len);
		s->sha[r->len] = '\0';
		ret = 0;
	}
	if (r)
		freeReplyObject(r);
	return ret;
}

static int store_ensure(struct agent_store *s)
{
	char host[64];
	int port;

	if (s->ctx)
		return 0;
	if (s->c->nr_sentinels) {
		if (store_ask_sentinels(s, host, sizeof(host), &port))
			return -1;
	} else {
		snprintf(host, sizeof(host), "%s", s->c->redis.host);
		port = s->c->redis.port;
	}
	if (s->c->nr_sentinels)
		snprintf(s->master, sizeof(s->master), "%s:%d", host, port);
	s->ctx = store_connect(s, host, port);
	if (!s->ctx || store_load(s)) {
		store_drop(s);
		return -1;
	}
	return 0;
}

int agent_store_lease(struct agent_store *s, const char *bucket, uint64_t rate,
		      uint64_t max, uint64_t ask, uint64_t threshold, uint64_t now_us,
		      uint64_t window_us, uint64_t give, uint64_t debt, uint64_t reserve_us,
		      struct agent_grant *g)
{
	char key[128], hkey[128], wkey[128], tkey[128];
	bool closed, retried = false;
	redisReply *r;
	int tries;

	snprintf(key, sizeof(key), "blkiso:bucket:%s", bucket);
	snprintf(hkey, sizeof(hkey), "blkiso:hosts:%s", bucket);
	snprintf(wkey, sizeof(wkey), "blkiso:wants:%s", bucket);
	snprintf(tkey, sizeof(tkey), "blkiso:wanted:%s", bucket);
	for (tries = 0; tries < 3; tries++) {
		if (store_ensure(s))
			return -1;
		r = redisCommand(s->ctx,
				 "EVALSHA %s 4 %s %s %s %s %llu %llu %llu %llu %llu %llu %s %llu %llu %llu %s",
				 s->sha, key, hkey, wkey, tkey, (unsigned long long)rate,
				 (unsigned long long)max, (unsigned long long)ask,
				 (unsigned long long)threshold, (unsigned long long)now_us,
				 (unsigned long long)window_us, s->c->host_id,
				 (unsigned long long)give, (unsigned long long)debt,
				 (unsigned long long)reserve_us, s->master);
		/*
		 * A connection the server had closed (killed, reset): the call
		 * never ran, and it is no round trip; it goes once more through
		 * a fresh connection (the Sentinels asked again), so that a host
		 * whose connection alone broke does not lease in fail static
		 * while the others draw the bucket.  Not after a timeout: that
		 * call may have run.
		 */
		closed = !r && (s->ctx->err == REDIS_ERR_EOF ||
				(s->ctx->err == REDIS_ERR_IO && errno != EAGAIN &&
				 errno != EWOULDBLOCK));
		if (!closed)
			s->round_trips++;
		if (closed && !retried) {
			retried = true;
			store_drop(s);
			continue;
		}
		if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 3) {
			g->granted = (uint64_t)r->element[0]->integer;
			g->left = (uint64_t)r->element[1]->integer;
			g->active = (unsigned int)r->element[2]->integer;
			freeReplyObject(r);
			return 0;
		}
		/* NOSCRIPT: load it and try once more; anything else: reconnect later */
		if (r && r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8)) {
			freeReplyObject(r);
			if (store_load(s))
				break;
			continue;
		}
		if (r)
			freeReplyObject(r);
		break;
	}
	store_drop(s);
	return -1;
}
