/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lease.h - leased credit on a throttle key: tokens a cluster agent
 * (tools/agent) obtained from a cluster-wide bucket and hands to this host
 * for a limited time (issue 22, doc/cluster.md).
 *
 * A lease adds @tokens to a key's credit, valid for @ttl_ns from now on
 * the caller's monotonic clock; the credit's deadline becomes now + ttl
 * (the latest lease's), and what is left at the deadline is gone.  Expiry
 * is lazy: every access compares the clock with the deadline, so a tenant
 * with a lease needs no timer.  The credit is kept apart from the key's
 * own bucket: the bucket's capacity (its burst) does not clip it, and the
 * bucket's refill does not touch it.
 *
 * Spending order: a key's global bucket hands out its own tokens first,
 * then credit (bi_global_dispense), so a tenant's configured cap is its
 * floor, what it admits with no lease, and credit only adds to it.  Credit
 * moves to the CPUs' local buckets in the same batches as the bucket's own
 * tokens and counts as spent when it does: at most one local_max per CPU
 * of credit may be charged after the deadline (the bound of dispense.h).
 *
 * An agent whose tenant's demand went away takes its unused credit back
 * (bi_lease_return) and gives it to the cluster bucket again, so that
 * another host may use it before it lapses.
 *
 * Concurrency: the credit lives in struct bi_global and is read and
 * written under the global lock only (bi_global_lease, bi_global_dispense).
 */
#ifndef BLKISO_LEASE_H
#define BLKISO_LEASE_H

#include "bi_shim.h"

/* a lease's tokens and TTL are bounded so that sums cannot overflow */
#define BI_LEASE_TOKENS_MAX	((s64)1 << 48)
#define BI_LEASE_TTL_MAX_NS	(3600ULL * BI_NSEC_PER_SEC)

struct bi_lease {
	s64 tokens;			/* credit left (0 once expired) */
	u64 expires_ns;			/* credit void from this time on */
	/* counters since the key was capped */
	u64 granted;			/* tokens leased */
	u64 spent;			/* credit handed to local buckets */
	u64 expired;			/* credit that lapsed unused */
	u64 returned;			/* credit taken back unused (bi_lease_return) */
	u64 nr_leases;			/* leases received */
};

/* What a lease call reports back (struct blkiso_ioc_lease's out fields). */
struct bi_lease_state {
	s64 tokens;			/* credit left after the call */
	u64 ttl_left_ns;		/* until the deadline; 0 = no credit */
	u64 granted, spent, expired, returned, nr_leases;
};

enum bi_lease_err {
	BI_LEASE_OK,
	BI_LEASE_UNCAPPED,		/* the key has no cap: nothing to add to */
	BI_LEASE_RANGE,			/* tokens or TTL out of range */
};

void bi_lease_init(struct bi_lease *l);
void bi_lease_expire(struct bi_lease *l, u64 now_ns);
void bi_lease_add(struct bi_lease *l, s64 tokens, u64 ttl_ns, u64 now_ns);
s64 bi_lease_take(struct bi_lease *l, s64 want, u64 now_ns);
s64 bi_lease_return(struct bi_lease *l, s64 want, u64 now_ns);
void bi_lease_state(const struct bi_lease *l, u64 now_ns, struct bi_lease_state *st);
bool bi_lease_valid(s64 tokens, u64 ttl_ns);

struct bi_global;
struct bi_meter;
void bi_global_lease(struct bi_global *g, s64 tokens, u64 ttl_ns, u64 now_ns,
		     struct bi_lease_state *st);
enum bi_lease_err bi_meter_lease(struct bi_meter *m, u8 key, s64 tokens, u64 ttl_ns,
				 u64 now_ns, struct bi_lease_state *st);
enum bi_lease_err bi_meter_lease_return(struct bi_meter *m, u8 key, s64 tokens,
					u64 now_ns, struct bi_lease_state *st);

#endif /* BLKISO_LEASE_H */
