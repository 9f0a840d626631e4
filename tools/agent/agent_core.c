// SPDX-License-Identifier: GPL-2.0
/*
 * agent_core.c - blkiso-agent's decision for one tenant at each round:
 * how much to ask the cluster bucket for (S4-09), and what to lease to
 * the kernel when the store answers, when it does not (fail static at
 * quota / active hosts), and past fail_static_ms (the floor alone).
 *
 * The agent looks at the kernel AGENT_CHECKS times per refresh interval
 * (agent_check): the tenant's credit left, the credit it spent and the
 * bios its floor or credit held.  Spent credit is the use; held bios say
 * the demand was above what the host had.  A round with the store comes
 * once per interval, on the tenant's own grid, or early when the demand
 * moves (it came: bios held; it went: nothing spent, nothing held).  A
 * tenant that neither spent credit nor had bios held is idle: no round
 * trip (its floor covers it).  The ask is the weighted average of the
 * last AGENT_HIST rounds' use (claims 12/20, the core's bi_demand_wavg)
 * with a quarter's margin, less the credit left; when bios were held, at
 * least one interval of the cluster bucket's rate, so that a host whose
 * demand just rose can take the whole quota at once (the ramp); the
 * store caps each grant at the host's max-min fair share of the refill
 * (agent_store.c), so that hosts asking at the same instant share it.  A
 * round's grant is handed to the kernel in AGENT_SLICES slices over the
 * interval (agent_slice).  Credit leased in fail static is a debt the
 * next answered round repays to the bucket; credit a tenant no longer
 * needs is taken back and given to the bucket at once.
 */
#include "agent.h"
#include "dispense.h"

const char * const agent_source_names[] = {
	[AGENT_SRC_NONE] = "idle",
	[AGENT_SRC_GRANTED] = "granted",
	[AGENT_SRC_FAIL_STATIC] = "fail-static",
	[AGENT_SRC_FLOOR] = "floor",
};

/* The cluster bucket's rate: the quota less every host's floor. */
uint64_t agent_global_rate(const struct agent_tenant_conf *t)
{
	uint64_t floors = t->floor * t->hosts;

	return t->quota > floors ? t->quota - floors : 0;
}

/* Its capacity: burst_ms of that rate, at least one token. */
uint64_t agent_global_max(const struct agent_conf *c, const struct agent_tenant_conf *t)
{
	uint64_t m = agent_global_rate(t) * c->burst_ms / 1000;

	return m ? m : 1;
}

void agent_tenant_init(struct agent_tenant *at, const struct agent_tenant_conf *tc)
{
	*at = (struct agent_tenant){ .conf = tc, .active = tc->hosts };
}

static uint64_t per_interval(uint64_t rate, const struct agent_conf *c)
{
	return rate * c->interval_ms / 1000;
}

/*
 * One round with the store: @quiet: the demand went away (nothing spent,
 * nothing held for AGENT_QUIET_CHECKS checks), the credit goes back.
 * False when the store granted less than 7/8 of the ask (the bucket
 * holds at most one interval of the rate, so a host asking for all of it
 * after another gave its credit back gets a little less than that).
 */
static bool agent_round(const struct agent_conf *c, struct agent_tenant *at,
			struct agent_store *s, const struct agent_obs *o, bool quiet,
			uint64_t now_ns, uint64_t sim_now_us, agent_take_back_fn take_back,
			void *arg)
{
	const struct agent_tenant_conf *tc = at->conf;
	uint64_t used = 0, held = 0, target, ask = 0, give = 0, rate = agent_global_rate(tc);
	uint64_t have = o->left + at->pending;
	bool going = false;
	struct agent_grant g;
	int i;

	at->slices_left = AGENT_SLICES;
	used = o->spent - at->last_spent;
	held = o->held - at->last_held;
	at->last_spent = o->spent;
	at->last_held = o->held;
	for (i = AGENT_HIST - 1; i > 0; i--)
		at->use[i] = at->use[i - 1];
	at->use[0] = used;
	if (quiet || (!used && !held)) {
		/*
		 * Demand went away: the credit left (in the kernel and not yet
		 * handed to it) goes back to the cluster in one round trip,
		 * then the tenant is idle: no more round trips.  The same call
		 * withdraws its want from the store's fair share (with no
		 * credit left to give, only for that): a stale want would
		 * hold the host the demand moved to at half the refill.
		 */
		going = true;
		if (at->src == AGENT_SRC_GRANTED) {
			give = at->pending;
			if (o->left && take_back)
				give += take_back(arg, o->left);
		}
		at->pending = 0;
		at->rounds_idle++;
		if (!give && !(at->src == AGENT_SRC_GRANTED && at->wanting)) {
			if (at->src == AGENT_SRC_GRANTED)
				at->src = AGENT_SRC_NONE;
			return true;
		}
	} else {
		target = bi_demand_wavg(at->use, AGENT_HIST) * 5 / 4;
		/*
		 * held, and the use did not just halve (demand moving away),
		 * or it did with no credit left: the store's fair share
		 * held it down, not its demand
		 */
		if (held && (used * 2 >= at->use[1] || !have)) {
			uint64_t whole = per_interval(rate, c);

			target = 2 * target > whole ? 2 * target : whole;
		}
		ask = target > have ? target - have : 0;
		if (!ask && !at->debt)
			return true;
	}
	if (!agent_store_lease(s, tc->name, rate, agent_global_max(c, tc), ask, 0, sim_now_us,
			       3ULL * c->interval_ms * 1000, give, at->debt,
			       (uint64_t)c->interval_ms * 1000, &g)) {
		at->src = going ? AGENT_SRC_NONE : AGENT_SRC_GRANTED;
		at->wanting = ask > 0;
		at->fail_since_ns = 0;
		at->active = g.active ? g.active : 1;
		at->asked += ask;
		at->granted += g.granted;
		at->returned += give;
		at->debt = 0;
		at->pending += g.granted;
		return g.granted * 8 >= ask * 7;
	}
	if (going) {
		/* the store is away: what was taken back is lost, not leased again */
		at->src = AGENT_SRC_NONE;
		return true;
	}
	if (!at->fail_since_ns)
		at->fail_since_ns = now_ns ? now_ns : 1;
	if (now_ns - at->fail_since_ns < (uint64_t)c->fail_static_ms * 1000000) {
		/* quota / active hosts, of which the floor is already here */
		uint64_t share = tc->quota / (at->active ? at->active : 1);

		share = share > tc->floor ? share - tc->floor : 0;
		target = per_interval(share, c);
		at->src = AGENT_SRC_FAIL_STATIC;
		if (target > have) {
			at->pending += target - have;
			at->static_leased += target - have;
			at->debt += target - have;
		}
	} else {
		at->src = AGENT_SRC_FLOOR;
		at->pending = 0;
	}
	return true;
}

/*
 * The share of the round's tokens to lease to the kernel now, every
 * interval_ms / AGENT_SLICES.  Paced, the credit in the kernel stays near
 * one slice's worth, so that credit a host no longer needs is mostly
 * still the agent's to give back, and no host holds half a second of the
 * quota in one lump (which it could spend in a burst).
 */
static uint64_t agent_slice(struct agent_tenant *at)
{
	uint64_t n;

	if (!at->pending)
		return 0;
	n = at->slices_left > 1 ? at->pending / at->slices_left : at->pending;
	if (at->slices_left > 1)
		at->slices_left--;
	at->pending -= n;
	return n;
}

/*
 * A round is due every AGENT_CHECKS checks; it comes early when the
 * demand moves: an idle tenant whose bios have been held for
 * AGENT_HELD_CHECKS checks asks at once (the ramp), and a granted tenant
 * to which no bio came, which spent nothing and had nothing held for
 * AGENT_QUIET_CHECKS checks
 * gives its credit back at once (for the host the demand moved to: it
 * asks later than this host gives back, as AGENT_HELD_CHECKS >
 * AGENT_QUIET_CHECKS).
 */
uint64_t agent_check(const struct agent_conf *c, struct agent_tenant *at,
		     struct agent_store *s, const struct agent_obs *o, uint64_t now_ns,
		     uint64_t sim_now_us, agent_take_back_fn take_back, void *arg)
{
	/* bios held since the last look, or still held (a low floor parks few, for long) */
	bool spent = o->spent != at->chk_spent, held = o->held != at->chk_held || o->queued;
	bool quiet, round = !at->to_round;

	if (!at->seen) {
		/* the first look: the counters' base, no round yet */
		at->seen = true;
		at->last_spent = o->spent;
		at->last_held = o->held;
	}
	/* quiet: no bio came (the kernel's spent credit moves in per-CPU batches) */
	at->quiet_checks = spent || held || o->arrived != at->chk_arrived ? 0 :
			   at->quiet_checks + 1;
	at->chk_arrived = o->arrived;
	at->held_checks = held ? at->held_checks + 1 : 0;
	at->chk_spent = o->spent;
	at->chk_held = o->held;
	/* quiet: longer than two gaps between bios (a low floor admits few) */
	quiet = at->quiet_checks >= AGENT_QUIET_CHECKS &&
		at->quiet_checks >= 2 * at->arrival_gap;
	if (at->src == AGENT_SRC_GRANTED && quiet && (o->left || at->pending || at->wanting))
		round = true;
	/* the first round is on the grid: all hosts' at once would find the new bucket empty */
	if (at->src == AGENT_SRC_NONE && at->gridded && at->held_checks >= AGENT_HELD_CHECKS)
		round = true;
	if (round) {
		/*
		 * Rounds stay on the tenant's own grid (one every AGENT_CHECKS
		 * checks), which keeps hosts whose demand came at once spread
		 * over the interval, each taking what refilled since the one
		 * before.  An early round stands for the next grid round when
		 * that is less than half an interval away, if the store had
		 * (nearly) all it asked for (else the grid round still comes):
		 * one round trip per interval.
		 */
		bool stands_for = at->to_round && at->to_round < AGENT_CHECKS / 2;

		if (!at->to_round) {
			at->to_round = AGENT_CHECKS;
			at->gridded = true;
		}
		else if (stands_for)
			at->to_round += AGENT_CHECKS;
		at->held_checks = 0;
		at->arrival_gap = AGENT_CHECKS / (o->arrived - at->round_arrived ?
						  o->arrived - at->round_arrived : 1);
		at->round_arrived = o->arrived;
		if (!agent_round(c, at, s, o, quiet, now_ns, sim_now_us, take_back, arg) &&
		    stands_for)
			at->to_round -= AGENT_CHECKS;	/* short: the grid round comes */
		at->since_round = 0;
	}
	at->to_round--;
	if (at->since_round++ % (AGENT_CHECKS / AGENT_SLICES))
		return 0;
	return agent_slice(at);
}
