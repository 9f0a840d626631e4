// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_rate.c - the request-rate cap controller (seed 000, S0-02..S0-21).
 *
 * One job: once per tick, turn measured work throughput into a new
 * maximum request rate.  See ctl_rate.h for the four cases and the scales,
 * doc/controllers.md for the design and the deviations.
 */
#include "ctl_rate.h"
#include "ewma.h"

#define BI_RATE_TICK_NS_DEF	(100 * BI_NSEC_PER_MSEC)	/* S0-14 */

/*
 * Fill @p with the seed's values for committed rate @committed_ups.
 * Concurrency: any context; @p is owned by the caller.
 */
void bi_rate_params_init(struct bi_rate_params *p, u64 committed_ups)
{
	p->committed_ups = committed_ups;
	p->n_lower = BI_RATE_N_LOWER_DEF;
	p->m_raise = BI_RATE_M_RAISE_DEF;
	p->safety_permille = BI_RATE_SAFETY_PERMILLE_DEF;
	p->alpha_f_fp = BI_ALPHA_F_FP;
	p->alpha_l_fp = BI_ALPHA_L_FP;
	p->alpha_rej_fp = BI_ALPHA_REJ_FP;
	p->eps_ppm = BI_RATE_EPS_PPM_DEF;
	p->cap_min_mrps = BI_RATE_CAP_MIN_MRPS_DEF;
	p->cap_max_mrps = 0;
	p->tick_ns = BI_RATE_TICK_NS_DEF;
	p->overshoot_guard = true;
}

/*
 * S0-13: the starting cap, the seed's "between": C x b (b in permille).
 * Its two other starts are not built: C / F (F, the largest bio, A-13)
 * throttles every tenant at first, and C needs a fast throttle-down; the
 * callers start from the iops cap when there is one (bi_fb_initial_cap_mrps).
 * Returns milli-requests/s.
 * Concurrency: pure function.
 */
u64 bi_rate_initial_cap_mrps(u64 committed_ups, u32 b_permille)
{
	return bi_div_u64(committed_ups * BI_MRPS_PER_RPS * b_permille, BI_PERMILLE);
}

/*
 * Start a controller at @cap_mrps with f = 1 unit per request.
 * Concurrency: before the controller is published; no lock needed.
 */
void bi_rate_init(struct bi_rate_ctl *c, u64 cap_mrps)
{
	c->cap_mrps = cap_mrps;
	c->l_fp = 0;
	c->f_fp = BI_FP_ONE;
	c->rps_fp = 0;
	c->last_ns = 0;
	c->rej_ppm = 0;
	c->f_primed = false;
	c->case_c_done = false;
}

static u64 bi_rate_clamp(const struct bi_rate_params *p, s64 cap_mrps)
{
	u64 hi = p->cap_max_mrps ? p->cap_max_mrps :
		 p->committed_ups * BI_MRPS_PER_RPS;

	if (cap_mrps < (s64)p->cap_min_mrps)
		return p->cap_min_mrps;
	if (hi >= p->cap_min_mrps && (u64)cap_mrps > hi)
		return hi;
	return cap_mrps;
}

/*
 * (L - C) / (f * k) in milli-requests/s; l_fp and f_fp share the x1024.
 * f >= 1/1024 (bi_rate_tick keeps it so) and k >= 1 (n and m: the
 * grammar's ranges and the defaults), so the divisor is never 0.
 */
static u64 bi_rate_step_mrps(u64 diff_fp, u64 f_fp, u32 k)
{
	return bi_mul_div_u64(diff_fp, BI_MRPS_PER_RPS, f_fp * k);
}

/*
 * Apply the four cases to the smoothed state in @c (S0-08..S0-11; the two
 * checks are independent, so their order does not matter).  Tests call it
 * directly with L and f set in @c.
 * Concurrency: tick context; the caller owns @c (per-device tick lock).
 */
enum bi_rate_case bi_rate_adjust(struct bi_rate_ctl *c,
				 const struct bi_rate_params *p, bool rejecting)
{
	u64 c_fp = p->committed_ups << BI_FP_SHIFT;
	s64 cap = (s64)c->cap_mrps;
	enum bi_rate_case kase = BI_RATE_CASE_D;
	/* C / f in mrps: where L = C at the current work per request */
	s64 eq = (s64)bi_mul_div_u64(c_fp, BI_MRPS_PER_RPS, c->f_fp);

	if (c->l_fp > c_fp && rejecting) {
		cap -= (s64)bi_rate_step_mrps(c->l_fp - c_fp, c->f_fp, p->n_lower);
		if (p->overshoot_guard && (s64)c->cap_mrps >= eq)
			cap = bi_max_s64(cap, eq);
		kase = BI_RATE_CASE_A;
		c->case_c_done = false;
	} else if (c->l_fp < c_fp && rejecting) {
		cap += (s64)bi_rate_step_mrps(c_fp - c->l_fp, c->f_fp, p->m_raise);
		if (p->overshoot_guard && (s64)c->cap_mrps <= eq)
			cap = bi_min_s64(cap, eq);
		kase = BI_RATE_CASE_B;
		c->case_c_done = false;
	} else if (c->l_fp > c_fp) {
		if (!c->case_c_done) {
			/* s * L / f: independent of the current cap */
			u64 prop = bi_mul_div_u64(c->l_fp,
						  (u64)p->safety_permille,
						  c->f_fp);

			cap = (s64)bi_min_u64((u64)cap, prop);
			c->case_c_done = true;
			kase = BI_RATE_CASE_C;
		} else {
			/* the proposal is a fixed point; keep lowering */
			cap -= (s64)bi_rate_step_mrps(c->l_fp - c_fp, c->f_fp,
						      p->n_lower);
			kase = BI_RATE_CASE_C_STEP;
		}
	} else {
		c->case_c_done = false;
	}
	c->cap_mrps = bi_rate_clamp(p, cap);
	return kase;
}

/*
 * One adjustment cycle: smooth the counters of the tick that ended at
 * @now_ns (S0-15, S0-16), then adjust the cap.
 * Concurrency: tick context (work item), one caller at a time per
 * controller; the glue folds @s from per-CPU counters before the call.
 */
enum bi_rate_case bi_rate_tick(struct bi_rate_ctl *c,
			       const struct bi_rate_params *p,
			       const struct bi_rate_stats *s, u64 now_ns)
{
	u64 dt = c->last_ns && now_ns > c->last_ns ? now_ns - c->last_ns :
		 p->tick_ns;
	u32 rej = 0;
	bool rejecting;

	c->last_ns = now_ns;
	c->l_fp = bi_ewma_u64(c->l_fp, bi_rate_per_sec(s->units, dt, BI_FP_ONE),
			      p->alpha_l_fp);
	c->rps_fp = bi_ewma_u64(c->rps_fp,
				bi_rate_per_sec(s->arrived, dt, BI_FP_ONE),
				p->alpha_l_fp);
	if (s->completed) {
		u64 f = bi_div_u64(s->units << BI_FP_SHIFT, s->completed);

		c->f_fp = c->f_primed ? bi_ewma_u64(c->f_fp, f, p->alpha_f_fp) : f;
		/*
		 * Every bio costs at least one unit, but the glue folds
		 * per-CPU counters while bios complete: a tick may count a
		 * completion and not yet its units.  f stays >= 1/1024, the
		 * divisor of every step.
		 */
		c->f_fp = bi_max_u64(c->f_fp, 1);
		c->f_primed = true;
	}
	if (s->arrived)
		rej = (u32)bi_mul_div_u64(bi_min_u64(s->throttled, s->arrived),
					  BI_PPM, s->arrived);
	c->rej_ppm = (u32)bi_ewma_u64(c->rej_ppm, rej, p->alpha_rej_fp);
	rejecting = s->throttled > 0 || c->rej_ppm > p->eps_ppm;
	return bi_rate_adjust(c, p, rejecting);
}

/*
 * S0-21: large-read shedding.  While the device is overloaded, reads of at
 * least @large_read_bytes are deferred first (rejected if NOWAIT, by the
 * caller).  Small reads, writes and metadata pass.  Every read is sync in
 * Linux, so REQ_SYNC does not exempt a read.
 * Concurrency: pure function, submission context.
 */
bool bi_rate_shed_large_read(const struct bi_io *io, bool overloaded,
			     u64 large_read_bytes)
{
	if (!overloaded || io->op != BI_OP_READ)
		return false;
	if (io->flags & BI_IO_META)
		return false;
	return io->bytes >= large_read_bytes;
}
