/* SPDX-License-Identifier: GPL-2.0 */
/*
 * feedback.h - the feedback controllers' settings, from the shared grammar.
 *
 * One job: turn a tenant line and a device line (conf.h) into the
 * parameters of ctl_rate, ctl_overload and ctl_isolation, so that the
 * kernel's per-device tick (kmod/blkiso_feedback.c) and blkiso-sim
 * (tools/sim/sim_engine.c) configure the same controllers the same way:
 * the simulator's fidelity rests on it.  Pure functions, any context.
 */
#ifndef BLKISO_FEEDBACK_H
#define BLKISO_FEEDBACK_H

#include "bi_shim.h"
#include "conf.h"
#include "ctl_depth.h"
#include "ctl_isolation.h"
#include "ctl_overload.h"
#include "ctl_rate.h"

void bi_fb_ovl_params(struct bi_ovl_params *p, const struct bi_dev_conf *dev);
void bi_fb_iso_params(struct bi_iso_params *p, const struct bi_tenant_conf *conf,
		      u64 tick_ns);
void bi_fb_rate_params(struct bi_rate_params *p, const struct bi_tenant_conf *conf,
		       u64 committed_ups, u64 tick_ns);
u64 bi_fb_initial_cap_mrps(const struct bi_tenant_conf *conf, u64 committed_ups,
			   enum bi_dir dir);
u32 bi_fb_tenant_window(const struct bi_tenant_conf *conf);
u32 bi_fb_tenant_threshold(const struct bi_tenant_conf *conf,
			   const struct bi_dev_conf *dev);
bool bi_fb_depth_missed(const struct bi_ovl_tenant *ovl, u64 completed, u64 missed);
void bi_fb_depth_fold(struct bi_depth_stats *ds, const struct bi_tenant_conf *conf,
		      const struct bi_ovl_tenant *ovl, u64 completed, u64 missed,
		      u64 dev_ns, u64 dev_min_ns, u64 dev_max_ns);
bool bi_fb_above_commit(const struct bi_tenant_conf *conf, const struct bi_iso *iso,
			const struct bi_rate_ctl *rate,
			const struct bi_rate_params *rate_p, bool active);

/* A tenant's completions in its allocation's metric. */
static inline u64 bi_fb_done(const struct bi_tenant_conf *conf, u64 ops, u64 units)
{
	return conf->alloc_metric == BI_ALLOC_IOPS ? ops : units;
}

/*
 * S3-18: work-conserving allocations are enforced during an overload
 * episode: while the detector fires, and while the multiplier is still
 * up (victims are being held to make room: a relaxed tenant must not
 * spend that room).
 */
static inline bool bi_fb_overload_episode(const struct bi_ovl *o)
{
	return o->overloaded || o->m;
}

/*
 * S3-18 and issue 20: whose misses an overload episode is made of.  A
 * work-conserving allocation is enforced during an episode so that the
 * room made for the tenants that missed is not spent by the others; in an
 * episode that only the tenant's own misses are in, that room is its own,
 * and holding it to its allocation would only delay the very tenant that
 * missed (a victim whose rate grew past its allocation, with nobody else
 * judged on latency).  The device counts ticks and notes when the current
 * episode began; each tenant notes the last tick in which other tenants
 * missed (bi_fb_wc_held()).  Device lock / tick context, like bi_ovl.
 */
struct bi_fb_episode {
	u64 tick;			/* ticks so far (the first is 1) */
	u64 start;			/* the tick the current episode began */
	bool on;			/* bi_fb_overload_episode() at that tick */
};

void bi_fb_episode_tick(struct bi_fb_episode *e, const struct bi_ovl *o);
bool bi_fb_wc_held(const struct bi_fb_episode *e, u64 *others_tick,
		   u64 others_missed, u32 window_ticks);

/*
 * Issue 20: with depth_limit=1, a tenant holding a promise of service (an
 * allocation) is protected: its misses of latency_us, on its own window,
 * bound the depth of the tenants above their commitment (ctl_depth.h).
 */
static inline bool bi_fb_depth_protected(const struct bi_tenant_conf *conf,
					 const struct bi_dev_conf *dev)
{
	return dev->depth_limit && conf->alloc;
}

/* Does the overload gate hold victims (not off, not shedding only)? */
static inline bool bi_fb_victims_on(const struct bi_dev_conf *dev)
{
	return dev->overload != BI_OVERLOAD_OFF && dev->overload != BI_OVERLOAD_SHED;
}

#endif /* BLKISO_FEEDBACK_H */
