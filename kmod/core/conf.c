// SPDX-License-Identifier: GPL-2.0
/*
 * conf.c - values derived from a tenant or device configuration, for the
 * bucket engine and the controllers: effective rates, capacities, the
 * resolved class policy and rank.  Parsing and defaults are in grammar.c.
 */
#include "conf.h"

#define BI_MSEC_PER_SEC			1000
#define BI_DELAY_MAX_CAP_US		50000	/* at most 50 ms */

/*
 * Effective work-unit rate of a direction: the smaller of the units cap and
 * the bytes cap converted to units (floor(bps / unit_bytes), write-weighted,
 * at least 1; bi_bps_to_units()).  Whichever cap is tighter wins, so both
 * hold.  BI_CONF_UNLIMITED if neither is set.  The iops cap is separate
 * (bi_conf_rate_requests()): it binds the request bucket, not this one.
 */
u64 bi_conf_rate_units(const struct bi_tenant_conf *conf,
		       const struct bi_cost_model *model, enum bi_dir dir)
{
	u64 rate = conf->units[dir];

	if (conf->bps[dir] != BI_CONF_UNLIMITED)
		rate = bi_min_u64(rate, bi_bps_to_units(model, dir, conf->bps[dir]));
	return rate;
}

/* Request-mode rate (requests/s), BI_CONF_UNLIMITED if no iops cap. */
u64 bi_conf_rate_requests(const struct bi_tenant_conf *conf, enum bi_dir dir)
{
	return conf->iops[dir];
}

/*
 * Bucket capacity for a rate: rate * burst_ms / 1000, at least one token
 * (A-03; the optional large-bio floor is the engine's choice).
 */
u64 bi_conf_capacity(const struct bi_tenant_conf *conf, u64 rate)
{
	if (rate == BI_CONF_UNLIMITED)
		return BI_CONF_UNLIMITED;
	return bi_max_u64(1, bi_mul_div_u64(rate, conf->burst_ms, BI_MSEC_PER_SEC));
}

/* Request-bucket capacity: burst_limit, or auto = max(3, 5 % of cap). */
u64 bi_conf_burst_limit(const struct bi_tenant_conf *conf, enum bi_dir dir)
{
	u64 cap = conf->iops[dir];

	if (conf->burst_limit)
		return conf->burst_limit;
	if (cap == BI_CONF_UNLIMITED)
		return BI_CONF_UNLIMITED;
	return bi_max_u64(BI_BURST_LIMIT_MIN, cap * BI_BURST_LIMIT_PCT / 100);
}

/* Refill rate of a class bucket (units/s), BI_CONF_UNLIMITED if unset. */
u64 bi_conf_class_rate(const struct bi_tenant_conf *conf, enum bi_class class)
{
	return conf->cls[class].rate_units;
}

/*
 * The admittance policy of a class with inherited values resolved:
 * min and floor fall back to the tenant's min_tokens and floor, and
 * min_tokens=auto becomes auto_min_tokens, the caller's current initial
 * deduction (S0-30).  SYS keeps its fixed policy.
 */
void bi_conf_policy(const struct bi_tenant_conf *conf, enum bi_class class,
		    u64 auto_min_tokens, struct bi_policy *policy)
{
	const struct bi_class_conf *cc = &conf->cls[class];
	s64 min = cc->min_tokens == BI_CONF_INHERIT ? conf->min_tokens :
						      cc->min_tokens;
	s64 floor = cc->floor_tokens == BI_CONF_INHERIT ? conf->floor_tokens :
							  cc->floor_tokens;
	u32 i;

	bi_policy_default(class, policy);
	if (min == BI_CONF_MIN_AUTO)
		min = (s64)bi_min_u64(auto_min_tokens, BI_CONF_TOKENS_MAX);
	policy->min_tokens = min;
	policy->floor_tokens = floor;
	if (class == BI_CLASS_SYS)
		return;
	policy->nr_buckets = cc->nr_buckets;
	for (i = 0; i < BI_POLICY_MAX_BUCKETS; i++)
		policy->bucket[i] = cc->bucket[i];
	policy->deduct = cc->deduct;
	policy->action = cc->action;
}

/* Rank P (S2-02, A-25): the tenant's prio= override, else from ioprio. */
u8 bi_conf_rank(const struct bi_tenant_conf *conf, const struct bi_io *io)
{
	return conf->prio ? conf->prio : bi_io_rank(io);
}

/* delay_max_us, auto = min(2 x device latency, 50 ms), at least 1. */
u32 bi_conf_delay_max_us(const struct bi_tenant_conf *conf,
			 u32 device_latency_us)
{
	u64 d;

	if (conf->delay_max_us)
		return conf->delay_max_us;
	d = bi_min_u64(2ULL * device_latency_us, BI_DELAY_MAX_CAP_US);
	return d ? (u32)d : 1;
}

/* The victims' and shed reads' hold (S2-07, S0-21): hold_ms, auto = one tick. */
u32 bi_dev_conf_hold_ms(const struct bi_dev_conf *conf)
{
	return conf->hold_ms ? conf->hold_ms : conf->tick_ms;
}

/*
 * How long a CPU remembers an empty global bucket (S4-07's negative cache):
 * dispense_hold_ms, auto = one tick.
 */
u32 bi_dev_conf_dispense_hold_ms(const struct bi_dev_conf *conf)
{
	return conf->dispense_hold_ms ? conf->dispense_hold_ms : conf->tick_ms;
}

/* Per-CPU local bucket cap: local_max_pct of the global max, >= 1. */
u64 bi_dev_conf_local_max(const struct bi_dev_conf *conf, u64 global_max)
{
	if (global_max == BI_CONF_UNLIMITED)
		return BI_CONF_UNLIMITED;
	return bi_max_u64(1, bi_mul_div_u64(global_max, conf->local_max_pct, 100));
}
