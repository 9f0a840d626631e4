// SPDX-License-Identifier: GPL-2.0
/*
 * lease.c - leased credit on a throttle key (see lease.h): adding a lease,
 * lazy expiry, spending, and a tenant's lease call on one of its keys.
 */
#include "lease.h"
#include "meter.h"

void bi_lease_init(struct bi_lease *l)
{
	*l = (struct bi_lease){ 0 };
}

/* Lazy expiry: credit past its deadline is dropped (and counted). */
void bi_lease_expire(struct bi_lease *l, u64 now_ns)
{
	if (l->tokens && now_ns >= l->expires_ns) {
		l->expired += (u64)l->tokens;
		l->tokens = 0;
	}
}

bool bi_lease_valid(s64 tokens, u64 ttl_ns)
{
	return tokens >= 0 && tokens <= BI_LEASE_TOKENS_MAX &&
	       ttl_ns <= BI_LEASE_TTL_MAX_NS && (!tokens || ttl_ns);
}

/*
 * Add @tokens valid for @ttl_ns: the whole credit's deadline becomes the
 * new lease's (an agent renews before the deadline, and what an earlier
 * lease left over was taken from the cluster bucket already: dropping it
 * would waste quota).  The credit is capped at BI_LEASE_TOKENS_MAX, never
 * at the key's burst.  A lease of 0 tokens changes nothing (a query).
 * Context: under the key's global lock (bi_global_lease).
 */
void bi_lease_add(struct bi_lease *l, s64 tokens, u64 ttl_ns, u64 now_ns)
{
	bi_lease_expire(l, now_ns);
	if (!tokens)
		return;
	l->tokens = bi_min_s64(l->tokens + tokens, BI_LEASE_TOKENS_MAX);
	l->expires_ns = now_ns + ttl_ns;
	l->granted += (u64)tokens;
	l->nr_leases++;
}

/* Draw up to @want tokens of live credit, counted in *@counter. */
static s64 bi_lease_draw(struct bi_lease *l, s64 want, u64 now_ns, u64 *counter)
{
	s64 n;

	bi_lease_expire(l, now_ns);
	n = bi_max_s64(bi_min_s64(want, l->tokens), 0);
	l->tokens -= n;
	*counter += (u64)n;
	return n;
}

/* Take up to @want tokens of live credit to spend; returns what was taken. */
s64 bi_lease_take(struct bi_lease *l, s64 want, u64 now_ns)
{
	return bi_lease_draw(l, want, now_ns, &l->spent);
}

/* Take back up to @want tokens of live credit, unused; returns them. */
s64 bi_lease_return(struct bi_lease *l, s64 want, u64 now_ns)
{
	return bi_lease_draw(l, want, now_ns, &l->returned);
}

void bi_lease_state(const struct bi_lease *l, u64 now_ns, struct bi_lease_state *st)
{
	bool live = l->tokens && now_ns < l->expires_ns;

	st->tokens = live ? l->tokens : 0;
	st->ttl_left_ns = live ? l->expires_ns - now_ns : 0;
	st->granted = l->granted;
	st->spent = l->spent;
	st->expired = l->expired + (live ? 0 : (u64)l->tokens);
	st->returned = l->returned;
	st->nr_leases = l->nr_leases;
}

/*
 * bi_global_lease - a lease on a key's global bucket, under its lock.
 * Every CPU's negative-cache entry lapses (gen), so bios held on the old
 * balance ask again at their next retry.  @st (may be NULL) receives the
 * state after the call.
 * Context: any; takes the global lock (irqsave).
 */
void bi_global_lease(struct bi_global *g, s64 tokens, u64 ttl_ns, u64 now_ns,
		     struct bi_lease_state *st)
{
	unsigned long flags = bi_lock_irqsave(&g->lock);

	bi_lease_add(&g->lease, tokens, ttl_ns, now_ns);
	if (tokens)
		g->gen++;
	if (st)
		bi_lease_state(&g->lease, now_ns, st);
	bi_unlock_irqrestore(&g->lock, flags);
}

/*
 * bi_meter_lease - a lease of @tokens for @ttl_ns on tenant @m's key @key
 * (enum bi_key), which must be capped: its cap is the tenant's floor on
 * this host.  Refused, nothing changes.
 * Context: process (configuration), serialised with bi_meter_configure()
 * (the kernel: dev->conf_mutex), so the published configuration read here
 * stays whole; the key's lock is taken inside.
 */
enum bi_lease_err bi_meter_lease(struct bi_meter *m, u8 key, s64 tokens, u64 ttl_ns,
				 u64 now_ns, struct bi_lease_state *st)
{
	if (key >= BI_NR_KEYS || !bi_lease_valid(tokens, ttl_ns))
		return BI_LEASE_RANGE;
	if (!(bi_meter_cfg(m)->key_on & (1U << key)))
		return BI_LEASE_UNCAPPED;
	bi_global_lease(&m->key[key], tokens, ttl_ns, now_ns, st);
	return BI_LEASE_OK;
}

/*
 * bi_meter_lease_return - take back up to @tokens of the credit left on
 * @m's key @key (unused: never charged); @st->returned counts them.
 * Context: as bi_meter_lease.
 */
enum bi_lease_err bi_meter_lease_return(struct bi_meter *m, u8 key, s64 tokens,
					u64 now_ns, struct bi_lease_state *st)
{
	struct bi_global *g;
	unsigned long flags;

	if (key >= BI_NR_KEYS || tokens < 0 || tokens > BI_LEASE_TOKENS_MAX)
		return BI_LEASE_RANGE;
	if (!(bi_meter_cfg(m)->key_on & (1U << key)))
		return BI_LEASE_UNCAPPED;
	g = &m->key[key];
	flags = bi_lock_irqsave(&g->lock);
	bi_lease_return(&g->lease, tokens, now_ns);
	if (st)
		bi_lease_state(&g->lease, now_ns, st);
	bi_unlock_irqrestore(&g->lock, flags);
	return BI_LEASE_OK;
}
