// SPDX-License-Identifier: GPL-2.0
/*
 * feedback.c - the feedback controllers' settings from tenant and device
 * lines (see feedback.h).
 */
#include "feedback.h"

void bi_fb_ovl_params(struct bi_ovl_params *p, const struct bi_dev_conf *dev)
{
	bi_ovl_params_init(p);
	p->window_ticks = dev->window_ticks;
	p->threshold_permille = dev->overload_pct * 10;
	p->t_first = dev->mult_up;
	p->t_next = dev->mult_up;
	p->r_release = dev->mult_down;
	p->holdoff_ticks = dev->holdoff_ticks;
	p->theta_ns = (s64)dev->ideal_us * BI_NSEC_PER_USEC;
	p->band_ns = (s64)dev->ideal_band_us * BI_NSEC_PER_USEC;
	p->simple = dev->overload == BI_OVERLOAD_SIMPLE;
	p->ideal = dev->overload == BI_OVERLOAD_IDEAL;
}

void bi_fb_iso_params(struct bi_iso_params *p, const struct bi_tenant_conf *conf,
		      u64 tick_ns)
{
	bi_iso_params_init(p, conf->alloc);
	p->strict = conf->isolation == BI_ISOLATION_STRICT;
	p->n_max = (u32)bi_min_u64(conf->slots, BI_ISO_MAX_SLOTS);
	p->hover_ns = (u64)conf->hover_ms * BI_NSEC_PER_MSEC;
	p->delay_step_ns = (u64)conf->delay_step_us * BI_NSEC_PER_USEC;
	p->delay_max_ns = (u64)conf->delay_max_us * BI_NSEC_PER_USEC;
	p->abuse_permille = conf->abuse_pct * 10;
	p->tick_ns = tick_ns;
	p->metric_units = conf->alloc_metric == BI_ALLOC_UNITS;
	p->delay_mode = conf->delay_mode == BI_DELAY_SINGLE ? BI_ISO_SINGLE : BI_ISO_SPREAD;
	p->reduce_below_alloc = conf->reduce_below_alloc;
	p->predictive = conf->predictive;
	/* smoothing_pct is alpha in percent; the controller's alpha is x BI_FP_ONE */
	p->alpha_fp = conf->smoothing_pct * BI_FP_ONE / 100;
}

void bi_fb_rate_params(struct bi_rate_params *p, const struct bi_tenant_conf *conf,
		       u64 committed_ups, u64 tick_ns)
{
	bi_rate_params_init(p, committed_ups == BI_CONF_UNLIMITED ? 0 : committed_ups);
	p->n_lower = conf->lower_ticks;
	p->m_raise = conf->raise_ticks;
	p->safety_permille = conf->safety_pct * 10;
	p->tick_ns = tick_ns;
}

/*
 * Where a request-mode cap starts (S0-13): the tenant's iops cap if it has
 * one, else C x b.  0 = no request cap in this direction.
 */
u64 bi_fb_initial_cap_mrps(const struct bi_tenant_conf *conf, u64 committed_ups,
			   enum bi_dir dir)
{
	u64 iops = bi_conf_rate_requests(conf, dir);

	if (iops != BI_CONF_UNLIMITED)
		return iops * BI_MRPS_PER_RPS;
	if (committed_ups == BI_CONF_UNLIMITED)
		return 0;
	return bi_rate_initial_cap_mrps(committed_ups, BI_RATE_INIT_B_PERMILLE_DEF);
}

_Static_assert(BI_CONF_WINDOW_MAX == BI_OVL_TENANT_WINDOW, "tenant window_ticks fits its ring");

/* S2-16: the tenant's own overload window in ticks; 0 = the device's. */
u32 bi_fb_tenant_window(const struct bi_tenant_conf *conf)
{
	return conf->window_ticks;
}

/*
 * S2-16: a tenant threshold other than the device's is an override; 0 =
 * none.  With depth_limit=1 a protected tenant (bi_fb_depth_protected) is
 * always judged on its own window, at its own miss_pct: the device's
 * window counts a flood's completions, which have no target and never
 * miss, and dilutes the tenant's misses (issue 20).
 */
u32 bi_fb_tenant_threshold(const struct bi_tenant_conf *conf,
			   const struct bi_dev_conf *dev)
{
	if (bi_fb_depth_protected(conf, dev))
		return conf->miss_pct * 10;
	return conf->miss_pct != dev->overload_pct ? conf->miss_pct * 10 : 0;
}

/*
 * S2-09: is the tenant using more than it was promised (allocation or C)?
 * A tenant promised nothing is above its commitment whenever it is
 * @active (has I/O: a bio at hand, or traffic in the tick): victims fall
 * on best-effort floods before they fall on tenants within a promise.
 */
bool bi_fb_above_commit(const struct bi_tenant_conf *conf, const struct bi_iso *iso,
			const struct bi_rate_ctl *rate,
			const struct bi_rate_params *rate_p, bool active)
{
	bool committed = conf->alloc != 0;
	u32 d;

	/*
	 * above the isolation controller's band, not at its edge: no flicker;
	 * and above it over its window of bios, as the controller holds it: a
	 * victim catching up after a wait is not above its promise
	 */
	if (conf->alloc &&
	    iso->usage > conf->alloc + conf->alloc * BI_ISO_TOL_PERMILLE_DEF / BI_PERMILLE &&
	    iso->usage_win > conf->alloc + iso->win_band)
		return true;
	for (d = 0; d < BI_NR_DIRS; d++) {
		if (!rate_p[d].committed_ups)
			continue;
		committed = true;
		if (rate[d].l_fp > rate_p[d].committed_ups << BI_FP_SHIFT)
			return true;
	}
	return !committed && active;
}

/*
 * One tick of the device's episode count, after bi_ovl_tick() of that tick.
 */
void bi_fb_episode_tick(struct bi_fb_episode *e, const struct bi_ovl *o)
{
	bool on = bi_fb_overload_episode(o);

	e->tick++;
	if (on && !e->on)
		e->start = e->tick;
	e->on = on;
}

/*
 * Is a work-conserving allocation enforced on a tenant in this tick
 * (bi_iso_tick()'s @dev_overloaded)?  @others_missed: the misses of the
 * other tenants in this tick; *@others_tick: the tenant's note of the last
 * tick they missed in (0: never), updated here.  Held while an episode
 * runs that other tenants' misses are in: misses in it, or in the
 * detector's window (@window_ticks) before it began, which is what
 * started it.
 */
bool bi_fb_wc_held(const struct bi_fb_episode *e, u64 *others_tick,
		   u64 others_missed, u32 window_ticks)
{
	if (others_missed)
		*others_tick = e->tick;
	return e->on && *others_tick && *others_tick + window_ticks >= e->start;
}

/*
 * Issue 20: did a protected tenant miss above its own threshold in the
 * newest tick (@completed, @missed)?  The depth limit steps on the tick,
 * not the window: the window keeps a miss for W ticks after the limit
 * cured it (the overload controller's anti-windup, for the same reason).
 */
bool bi_fb_depth_missed(const struct bi_ovl_tenant *ovl, u64 completed, u64 missed)
{
	return ovl->threshold_permille && completed &&
	       missed * BI_PERMILLE > completed * ovl->threshold_permille;
}

/* @lat_ns in permille of @target_ns, saturated. */
static u32 bi_fb_permille(u64 lat_ns, u64 target_ns)
{
	return (u32)bi_min_u64(bi_div_u64(bi_min_u64(lat_ns, U64_MAX / BI_PERMILLE) * BI_PERMILLE,
					  target_ns ? target_ns : 1), U32_MAX);
}

/*
 * Fold one protected tenant's tick into the depth controller's inputs:
 * its completions, how many it takes to show a miss at its threshold,
 * its lowest and highest device latency (@dev_min_ns, @dev_max_ns; 0 =
 * not measured) against its target, whether it missed, and by how much
 * its mean device latency (@dev_ns over @completed) passes its target.
 */
void bi_fb_depth_fold(struct bi_depth_stats *ds, const struct bi_tenant_conf *conf,
		      const struct bi_ovl_tenant *ovl, u64 completed, u64 missed,
		      u64 dev_ns, u64 dev_min_ns, u64 dev_max_ns)
{
	u64 target_ns = (u64)conf->latency_us * BI_NSEC_PER_USEC;
	u64 over;

	ds->protected_active = true;
	if (!completed)
		return;
	ds->completed = (u32)bi_min_u64((u64)ds->completed + completed, U32_MAX);
	if (dev_max_ns && target_ns) {
		u32 lo = bi_fb_permille(dev_min_ns ? dev_min_ns : dev_max_ns, target_ns);

		lo = lo ? lo : 1;	/* 0 is "none" */

		ds->lat_max_permille = (u32)bi_max_u64(ds->lat_max_permille,
						       bi_fb_permille(dev_max_ns, target_ns));
		if (!ds->lat_min_permille || lo < ds->lat_min_permille)
			ds->lat_min_permille = lo;
	}
	ds->missed_ops = (u32)bi_min_u64((u64)ds->missed_ops + missed, U32_MAX);
	if (ovl->threshold_permille && (!ds->allow_permille ||
					ovl->threshold_permille < ds->allow_permille))
		ds->allow_permille = ovl->threshold_permille;
	if (ovl->threshold_permille)
		ds->evidence = (u32)bi_max_u64(ds->evidence, BI_DEPTH_EVIDENCE_MULT *
					       bi_div_round_up_u64(BI_PERMILLE,
								   ovl->threshold_permille));
	if (!bi_fb_depth_missed(ovl, completed, missed))
		return;
	ds->missed = true;
	over = bi_div_u64(bi_div_u64(dev_ns, completed) * BI_PERMILLE, target_ns ? target_ns : 1);
	ds->over_permille = (u32)bi_max_u64(ds->over_permille, bi_min_u64(over, U32_MAX));
}
