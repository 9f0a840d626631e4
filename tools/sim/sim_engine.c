// SPDX-License-Identifier: GPL-2.0
/*
 * sim_engine.c - the event engine of blkiso-sim.
 *
 * One job: move simulated bios through the decision core in time order.
 * A bio's path is the kernel glue's path:
 *
 *   arrival (workload generator)
 *     -> overload gate: victim (ctl_overload) or large-read shedding
 *        (ctl_rate), held for hold_ms, decided once at arrival
 *     -> tenant FIFO -> admission: work bucket (cost in units, initial
 *        deduction and completion correction) or request bucket (cost 1
 *        request, rate = the RPS-cap controller's cap), device cap (S0-35)
 *     -> isolation slot and delay (ctl_isolation)
 *     -> device (sim_device.c) -> completion: correction, slot release,
 *        latency samples, counters
 *
 * and every tick_ms, in the order of catalogue 9.1 item 12: overload
 * detection and multiplier, RPS-cap controllers, isolation controllers.
 * Only tenants on the active list (traffic in the last window, or bios
 * queued or in flight) are ticked, so a tick costs O(active tenants).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sim_engine.h"

enum sim_ev_type {
	EV_ARRIVE,		/* next open-loop arrival of a tenant */
	EV_RELEASE,		/* a bio held by the overload gate is released */
	EV_WAKE,		/* a tenant's bucket has tokens again */
	EV_DEV_SUBMIT,		/* a bio's isolation delay is over */
	EV_DEV_DONE,		/* a bio completes */
	EV_DEV_WINDOW,		/* the device's bandwidth budget is whole again */
	EV_TICK,
	EV_PHASE,
};

struct sim_event {
	u64 at;
	u64 seq;		/* insertion order breaks ties: deterministic */
	u64 arg;
	struct sim_io *io;
	u32 type;
	u32 tenant;
};

struct sim_io {
	struct sim_io *next;
	u64 submit_ns;		/* arrival at the gateway */
	u64 dispatch_ns;	/* handed to the device */
	u64 bytes;
	struct bi_chain_charge cc;	/* what the meter charged (as the module's) */
	u32 tenant;
	u32 units;
	s32 slot;		/* isolation slot, -1 = none */
	u8 op;
	u8 dir;
	u8 rank;
	bool admitted;
	bool held;		/* counted as throttled once */
	bool req_held;		/* held by the request bucket */
	bool shed;		/* held as a large read (S0-21) */
	u8 iso_flags;
};

#define SIM_IO_CHUNK	4096

/* ---- event heap ---- */

static bool ev_before(const struct sim_event *a, const struct sim_event *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static int ev_push(struct sim *s, u64 at, u32 type, u32 tenant, struct sim_io *io,
		   u64 arg)
{
	struct sim_event e = { at, s->seq++, arg, io, type, tenant };
	u32 i;

	if (s->heap_len == s->heap_cap) {
		u32 cap = s->heap_cap ? s->heap_cap * 2 : 1024;
		void *n = realloc(s->heap, cap * sizeof(*s->heap));

		if (!n)
			return -1;
		s->heap = n;
		s->heap_cap = cap;
	}
	i = s->heap_len++;
	while (i) {
		u32 parent = (i - 1) / 2;

		if (!ev_before(&e, &s->heap[parent]))
			break;
		s->heap[i] = s->heap[parent];
		i = parent;
	}
	s->heap[i] = e;
	return 0;
}

static struct sim_event ev_pop(struct sim *s)
{
	struct sim_event top = s->heap[0], last = s->heap[--s->heap_len];
	u32 i = 0;

	for (;;) {
		u32 c = 2 * i + 1;

		if (c >= s->heap_len)
			break;
		if (c + 1 < s->heap_len && ev_before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->heap_len)
		s->heap[i] = last;
	return top;
}

/* ---- bios ---- */

static struct sim_io *io_alloc(struct sim *s)
{
	struct sim_io *io = s->free_ios;

	if (!io) {
		struct sim_io *chunk = calloc(SIM_IO_CHUNK, sizeof(*chunk));
		void *n = realloc(s->io_chunks, (s->nr_io_chunks + 1) * sizeof(*s->io_chunks));
		u32 i;

		if (!chunk || !n) {
			free(chunk);
			return NULL;
		}
		s->io_chunks = n;
		s->io_chunks[s->nr_io_chunks++] = chunk;
		for (i = 0; i < SIM_IO_CHUNK; i++) {
			chunk[i].next = s->free_ios;
			s->free_ios = &chunk[i];
		}
		io = s->free_ios;
	}
	s->free_ios = io->next;
	memset(io, 0, sizeof(*io));
	io->slot = -1;
	return io;
}

static void io_free(struct sim *s, struct sim_io *io)
{
	io->next = s->free_ios;
	s->free_ios = io;
}

/* xorshift64*: per-tenant, seeded from the scenario seed */
static u64 rng_next(u64 *st)
{
	u64 x = *st;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*st = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* ---- statistics ---- */

static u32 hist_index(u64 ns)
{
	u64 us = ns / 1000;
	u32 msb, sub;

	if (us < SIM_HIST_SUB)
		return (u32)us;
	msb = 63 - __builtin_clzll(us);
	sub = (u32)((us >> (msb - 4)) & (SIM_HIST_SUB - 1));
	return bi_min_u64((msb - 3) * SIM_HIST_SUB + sub, SIM_HIST_BUCKETS - 1);
}

/* Middle of a bucket, in ns. */
static u64 hist_value_ns(u32 idx)
{
	u32 oct = idx / SIM_HIST_SUB, sub = idx % SIM_HIST_SUB;
	u64 lo, width;

	if (!oct)
		return (u64)idx * 1000 + 500;
	lo = (u64)(SIM_HIST_SUB + sub) << (oct - 1);
	width = 1ULL << (oct - 1);
	return (lo * 2 + width) * 500;
}

static void hist_add(struct sim_hist *h, u64 ns)
{
	h->count++;
	h->sum_ns += ns;
	h->b[hist_index(ns)]++;
}

u64 sim_hist_pct_ns(const struct sim_hist *h, u32 permille)
{
	u64 want, seen = 0;
	u32 i;

	if (!h->count)
		return 0;
	want = (h->count * permille + 999) / 1000;
	if (!want)
		want = 1;
	for (i = 0; i < SIM_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want)
			return hist_value_ns(i);
	}
	return hist_value_ns(SIM_HIST_BUCKETS - 1);
}

u64 sim_hist_mean_ns(const struct sim_hist *h)
{
	return h->count ? h->sum_ns / h->count : 0;
}

void sim_stats_reset(struct sim_stats *st)
{
	if (st->ios || st->throttled || st->delay_ticks || st->lat.count)
		memset(st, 0, sizeof(*st));
}

/* Bytes of decision-core controller state per tenant (the benchmark's figure). */
size_t sim_tenant_ctl_bytes(void)
{
	struct sim_tenant *t = NULL;

	return sizeof(t->rate) + sizeof(t->iso) + sizeof(t->ovl);
}

/* ---- configuration of the core from a tenant's quota ---- */

static bool tenant_request_mode(const struct sim_tenant *t)
{
	return t->ms.active == BI_MODE_REQUEST;
}

/*
 * The request-mode caps are the RPS-cap controllers' (S0-08..S0-13): the
 * meter's request key takes the controller's cap, as blkiso_feedback.c
 * sets it each tick.
 */
static void tenant_request_rates(struct sim *s, struct sim_tenant *t)
{
	u32 d;

	if (!tenant_request_mode(t))
		return;
	for (d = 0; d < BI_NR_DIRS; d++)
		if (t->rate_p[d].committed_ups && t->rate[d].cap_mrps)
			bi_meter_set_request_rate(&t->m, (u8)d,
						  (t->rate[d].cap_mrps + BI_MRPS_PER_RPS / 2) /
						  BI_MRPS_PER_RPS, s->now);
}

static void tenant_configure(struct sim *s, struct sim_tenant *t, bool first)
{
	const struct bi_cost_model *model = &s->dconf.cost;
	u32 d;

	if (first) {
		bi_mode_init(&t->ms, t->conf.mode);
		bi_meter_init(&t->m, s->now);
		bi_meter_init_cpu(&t->cpu, s->now);
	} else {
		bi_mode_set(&t->ms, t->conf.mode);
	}
	/* the caps, the class stage and mode=auto's choice: the module's meter */
	t->m.auto_active = t->ms.active;
	bi_meter_configure(&t->m, &t->conf, &s->dconf, s->now);
	for (d = 0; d < BI_NR_DIRS; d++) {
		u64 units = bi_conf_rate_units(&t->conf, model, d);
		u64 iops = bi_conf_rate_requests(&t->conf, d);

		/* request mode: the RPS-cap controller owns the cap (S0-08..S0-13) */
		bi_fb_rate_params(&t->rate_p[d], &t->conf, units, s->tick_ns);
		if (first) {
			bi_rate_init(&t->rate[d], bi_fb_initial_cap_mrps(&t->conf, units, d));
		} else if (iops != BI_CONF_UNLIMITED &&
			   (units == BI_CONF_UNLIMITED || t->conf.mode != BI_MODE_REQUEST)) {
			t->rate[d].cap_mrps = iops * BI_MRPS_PER_RPS;
		}
	}
	tenant_request_rates(s, t);

	bi_fb_iso_params(&t->iso_p, &t->conf, s->tick_ns);
	if (first)
		bi_iso_init(&t->iso, &t->iso_p);

	if (first)
		bi_ovl_tenant_init(&t->ovl);
	t->ovl.window_ticks = bi_fb_tenant_window(&t->conf);
	t->ovl.threshold_permille = bi_fb_tenant_threshold(&t->conf, &s->dconf);
}

static bool tenant_above_commit(const struct sim_tenant *t, bool active)
{
	return bi_fb_above_commit(&t->conf, &t->iso, t->rate, t->rate_p, active);
}

static void tenant_activate(struct sim *s, struct sim_tenant *t)
{
	t->idle_ticks = 0;
	if (t->active)
		return;
	t->active = true;
	t->next_active = s->active;
	s->active = t;
	s->nr_active++;
}

/* ---- the bio path ---- */

static void dev_submit(struct sim *s, struct sim_io *io);
static void tenant_pump(struct sim *s, struct sim_tenant *t);

static u32 tenant_idx(struct sim *s, struct sim_tenant *t)
{
	return (u32)(t - s->tenants);
}

static void enqueue(struct sim_tenant *t, struct sim_io *io)
{
	u32 d = io->dir;

	io->next = NULL;
	if (t->q_tail[d])
		t->q_tail[d]->next = io;
	else
		t->q_head[d] = io;
	t->q_tail[d] = io;
	t->queued++;
}

static void mark_held(struct sim_tenant *t, struct sim_io *io)
{
	if (io->held)
		return;
	io->held = true;
	t->sec->throttled++;
	t->total->throttled++;
}

/*
 * S0-21: shed while the detector says overloaded, or at once while half of
 * the device's slots are busy (the catalogue's "in-flight >= threshold"),
 * so that large reads never fill the device.
 */
static bool gate_sheds(struct sim *s, struct sim_tenant *t, struct sim_io *io)
{
	struct bi_io bio = { io->bytes, io->op, 0, t->wl.prio_class, 0, 0 };
	bool busy = s->dev_busy >= bi_max_u64(s->dev.slots / 2, 1);

	return bi_rate_shed_large_read(&bio, s->ovl.overloaded || busy,
				       s->dconf.shed_bytes);
}

/* The overload gate, once per bio at arrival (S2-07..S2-09, S0-21). */
static bool gate_holds(struct sim *s, struct sim_tenant *t, struct sim_io *io)
{
	if (s->dconf.overload == BI_OVERLOAD_OFF)
		return false;
	if (gate_sheds(s, t, io)) {
		io->shed = true;
		return true;
	}
	if (s->dconf.overload == BI_OVERLOAD_SHED)
		return false;
	return s->ovl.m && bi_ovl_victim(&s->ovl, io->rank, tenant_above_commit(t, true));
}

static u64 sim_hold_ns(struct sim *s)
{
	return (u64)bi_dev_conf_hold_ms(&s->dconf) * BI_NSEC_PER_MSEC;
}

static void issue(struct sim *s, struct sim_tenant *t)
{
	struct sim_workload *w = &t->wl;
	struct sim_io *io = io_alloc(s);
	u64 pick;
	u32 i;

	if (!io)
		return;
	io->tenant = tenant_idx(s, t);
	pick = w->nr_bs > 1 ? rng_next(&t->rng) % t->bs_total_weight : 0;
	for (i = 0; i < w->nr_bs; i++) {
		if (pick < w->bs_weight[i])
			break;
		pick -= w->bs_weight[i];
	}
	io->bytes = w->bs[i < w->nr_bs ? i : 0];
	io->op = (rng_next(&t->rng) % 100) < w->read_pct ? BI_OP_READ : BI_OP_WRITE;
	{
		struct bi_io bio = { io->bytes, io->op, 0, w->prio_class, 0, 0 };

		io->dir = bi_io_dir(&bio);
		io->units = (u32)bi_io_units(&s->dconf.cost, &bio);
		io->rank = bi_conf_rank(&t->conf, &bio);
		if (io->op == BI_OP_READ && io->units <= BI_ISO_SMALL_UNITS_DEF)
			io->iso_flags |= BI_ISO_IO_SMALL_READ;
		if (io->units >= BI_ISO_BIG_UNITS_DEF)
			io->iso_flags |= BI_ISO_IO_BIG;
	}
	io->submit_ns = s->now;
	t->outstanding++;
	t->rs[io->dir].arrived++;
	tenant_activate(s, t);
	if (gate_holds(s, t, io)) {
		mark_held(t, io);
		if (s->dconf.reject_mode) {
			/* A-18 reject mode: the bio fails at once (seed 002's rejection) */
			t->sec->rejected++;
			t->total->rejected++;
			t->outstanding--;
			io_free(s, io);
			return;
		}
		ev_push(s, s->now + sim_hold_ns(s), EV_RELEASE, io->tenant, io, 0);
		return;
	}
	enqueue(t, io);
	tenant_pump(s, t);
}

static void wake_at(struct sim *s, struct sim_tenant *t, u32 dir, u64 at)
{
	if (at == U64_MAX)
		return;		/* no refill: a later configuration change pumps */
	t->wake_seq[dir]++;
	ev_push(s, bi_max_u64(at, s->now), EV_WAKE, tenant_idx(s, t), NULL,
		t->wake_seq[dir] * BI_NR_DIRS + dir);
}

/*
 * Admission: the device cap (S0-35), then the tenant's meter exactly as
 * the module's .map charges a bio (bi_meter_admit_one: work and request
 * keys of its direction, all or nothing, the class stage if any class is
 * rated; a bio alone waits for its own shortfall, one with bios queued
 * behind it for a dispense batch).  False with *ready_at if it must wait.
 */
static bool admit(struct sim *s, struct sim_tenant *t, struct sim_io *io, u64 *ready_at)
{
	struct bi_io bio = { io->bytes, io->op, 0, t->wl.prio_class, 0, 0 };
	u32 d = io->dir;

	if (s->dev.cap_mrps && !bi_bucket_admissible(&s->dev_req, BI_MRPS_PER_RPS, s->now)) {
		*ready_at = bi_bucket_ready_at_ns(&s->dev_req, BI_MRPS_PER_RPS, s->now);
		return false;
	}
	io->cc.queue = io->next != NULL;
	if (!bi_meter_admit_one(&t->m, &t->cpu, &bio, io->units, &io->cc, s->now, ready_at)) {
		io->cc.depth = 0;
		/* in request mode a held bio counts as throttled, once */
		if (tenant_request_mode(t) && !io->req_held) {
			io->req_held = true;
			t->rs[d].throttled++;
		}
		return false;
	}
	if (s->dev.cap_mrps)
		bi_bucket_charge(&s->dev_req, BI_MRPS_PER_RPS, BI_NO_FLOOR, s->now);
	return true;
}

/*
 * Move the heads of the tenant's two direction queues (reads and writes
 * have their own buckets, S0-19) through admission and the slot gate,
 * alternating between them, until both wait.
 */
static void tenant_pump(struct sim *s, struct sim_tenant *t)
{
	bool waiting[BI_NR_DIRS] = { false, false };
	u32 d = t->rr, tries = 0;

	while (tries < BI_NR_DIRS) {
		struct sim_io *io = t->q_head[d];
		u64 delay = 0;
		int slot = -1;

		if (!io || waiting[d]) {
			d = (d + 1) % BI_NR_DIRS;
			tries++;
			continue;
		}
		if (!io->admitted) {
			u64 ready;

			if (!admit(s, t, io, &ready)) {
				mark_held(t, io);
				wake_at(s, t, d, ready);
				waiting[d] = true;
				continue;
			}
			io->admitted = true;
		}
		if (t->above && !bi_depth_allows(s->depth.limit, t->inflight)) {
			mark_held(t, io);
			break;		/* issue 20's depth limit: a completion pumps again */
		}
		if (t->conf.alloc) {
			slot = bi_iso_slot_get(&t->iso, &t->iso_p, io->units, io->iso_flags,
					       s->now, &delay);
			if (slot < 0) {
				mark_held(t, io);
				break;		/* slots are shared: a completion pumps again */
			}
		}
		if (t->above && s->depth.limit && s->depth.pace_ups)
			delay = bi_max_u64(delay, bi_depth_pace_delay(&t->pace_next_ns, io->units,
								     s->depth.pace_ups, s->now));
		t->q_head[d] = io->next;
		if (!t->q_head[d])
			t->q_tail[d] = NULL;
		t->queued--;
		t->inflight++;
		io->slot = slot;
		if (delay)
			ev_push(s, s->now + delay, EV_DEV_SUBMIT, io->tenant, io, 0);
		else
			dev_submit(s, io);
		d = (d + 1) % BI_NR_DIRS;	/* alternate directions */
		tries = 0;
	}
	t->rr = d;
}

static void dev_start(struct sim *s, struct sim_io *io)
{
	s->dev_busy++;
	ev_push(s, s->now + sim_device_service_ns(&s->dev, io->bytes), EV_DEV_DONE,
		io->tenant, io, 0);
}

/*
 * May @io start now: a free slot and, under mbps=, the window's budget
 * (sim_device.c)?  When the budget refuses it, the next window's event
 * starts the FIFO again.
 */
static bool dev_may_start(struct sim *s, struct sim_io *io)
{
	u64 retry_ns;

	if (s->dev_busy >= s->dev.slots)
		return false;
	if (sim_device_budget_take(s, io->bytes, &retry_ns))
		return true;
	if (!s->dev_window_armed) {
		s->dev_window_armed = true;
		ev_push(s, retry_ns, EV_DEV_WINDOW, 0, NULL, 0);
	}
	return false;
}

/* Start the device's FIFO from its head while it may. */
static void dev_drain(struct sim *s)
{
	while (s->dev_q_head && dev_may_start(s, s->dev_q_head)) {
		struct sim_io *n = s->dev_q_head;

		s->dev_q_head = n->next;
		if (!s->dev_q_head)
			s->dev_q_tail = NULL;
		dev_start(s, n);
	}
}

static void dev_submit(struct sim *s, struct sim_io *io)
{
	io->dispatch_ns = s->now;
	if (!s->dev_q_head && dev_may_start(s, io)) {
		dev_start(s, io);
		return;
	}
	io->next = NULL;
	if (s->dev_q_tail)
		s->dev_q_tail->next = io;
	else
		s->dev_q_head = io;
	s->dev_q_tail = io;
}

static void gen_refill(struct sim *s, struct sim_tenant *t)
{
	u32 n = 0;

	if (!t->wl.rate_iops) {
		/* bounded: rejected bios return at once in reject mode */
		while (t->outstanding < t->wl.iodepth && n++ < 4 * t->wl.iodepth)
			issue(s, t);
	} else if (t->arrival_blocked && t->outstanding < t->wl.iodepth) {
		t->arrival_blocked = false;
		issue(s, t);
		/* fio behind its schedule issues the rest back to back */
		while (t->arrivals_owed && t->outstanding < t->wl.iodepth) {
			t->arrivals_owed--;
			issue(s, t);
		}
		/* one owed arrival becomes the one waiting for a completion */
		t->arrival_blocked = t->arrivals_owed != 0;
		if (t->arrival_blocked)
			t->arrivals_owed--;
	}
}

static void dev_done(struct sim *s, struct sim_io *io)
{
	struct sim_tenant *t = &s->tenants[io->tenant];
	u64 lat = s->now - io->submit_ns, dev_lat = s->now - io->dispatch_ns;
	u64 target = (u64)t->conf.latency_us * BI_NSEC_PER_USEC;
	s64 slack = (s64)target - (s64)dev_lat;

	s->dev_busy--;
	dev_drain(s);

	t->sec->ios++;
	t->sec->ios_dir[io->dir]++;
	t->total->ios_dir[io->dir]++;
	t->sec->bytes += io->bytes;
	hist_add(&t->sec->lat, lat);
	t->total->ios++;
	t->total->bytes += io->bytes;
	hist_add(&t->total->lat, lat);
	s->dev_ios_sec++;
	s->dev_bytes_sec += io->bytes;
	s->dev_ios++;
	s->dev_bytes += io->bytes;

	t->rs[io->dir].completed++;
	t->rs[io->dir].units += io->units;
	bi_sample_add(&t->smp, io->units);
	t->is.ops++;
	t->is.units += io->units;
	t->is.done += bi_fb_done(&t->conf, 1, io->units);
	t->is.dev_ns += dev_lat;
	if (!t->is.dev_min_ns || dev_lat < t->is.dev_min_ns)
		t->is.dev_min_ns = dev_lat;
	if (dev_lat > t->t_lat_max)
		t->t_lat_max = dev_lat;
	s->os.completed++;
	if (slack < 0) {
		s->os.missed++;
		t->t_missed++;
	}
	s->os.slack_min_ns = bi_min_s64(s->os.slack_min_ns, slack);

	/* S0-25: correct the charge to the actual work, as the module's .end_io */
	if (io->cc.depth) {
		struct bi_meter *m = &t->m;
		struct bi_meter_cpu *cpu = &t->cpu;

		bi_meter_complete_chain(&m, &cpu, &io->cc, s->now);
	}
	if (io->slot >= 0)
		bi_iso_slot_put(&t->iso, io->slot, io->iso_flags);
	t->inflight--;
	t->outstanding--;
	io_free(s, io);
	gen_refill(s, t);
	tenant_pump(s, t);
}

/* ---- workload generators ---- */

/* ln(x) for x > 0 without libm: x = m 2^e, ln m = 2 atanh((m-1)/(m+1)). */
static double sim_ln(double x)
{
	double z, z2, sum = 0, term;
	int e = 0, k;

	while (x >= 2) {
		x /= 2;
		e++;
	}
	while (x < 1) {
		x *= 2;
		e--;
	}
	z = (x - 1) / (x + 1);	/* |z| <= 1/3 */
	z2 = z * z;
	term = z;
	for (k = 1; k < 30; k += 2) {
		sum += term / k;
		term *= z2;
	}
	return 2 * sum + e * 0.69314718055994530942;
}

static u64 interarrival_ns(struct sim_tenant *t)
{
	double mean = (double)BI_NSEC_PER_SEC / (double)t->wl.rate_iops;

	if (t->wl.poisson) {
		double u = ((rng_next(&t->rng) >> 11) + 1) * (1.0 / 9007199254740993.0);

		return (u64)(-sim_ln(u) * mean) + 1;
	}
	return (u64)(mean + 0.5);
}

static void gen_start(struct sim *s, struct sim_tenant *t)
{
	u32 i;

	t->bs_total_weight = 0;
	for (i = 0; i < t->wl.nr_bs; i++)
		t->bs_total_weight += t->wl.bs_weight[i];
	t->arrival_blocked = false;
	t->arrivals_owed = 0;
	if (t->wl.rate_iops) {
		/* stagger tenants inside the first interval */
		u64 first = rng_next(&t->rng) % interarrival_ns(t);

		ev_push(s, s->now + first, EV_ARRIVE, tenant_idx(s, t), NULL, t->gen_seq);
	} else {
		gen_refill(s, t);
	}
}

static void ev_arrive(struct sim *s, struct sim_tenant *t, u64 gen)
{
	if (gen != t->gen_seq || !t->wl.rate_iops)
		return;
	ev_push(s, s->now + interarrival_ns(t), EV_ARRIVE, tenant_idx(s, t), NULL, gen);
	if (t->outstanding >= t->wl.iodepth) {
		if (t->arrival_blocked && t->arrivals_owed < t->wl.catchup)
			t->arrivals_owed++;
		t->arrival_blocked = true;	/* fio waits for a completion */
		return;
	}
	issue(s, t);
}

/* ---- the tick ---- */

static void tenant_tick(struct sim *s, struct sim_tenant *t)
{
	u64 committed = bi_conf_rate_units(&t->conf, &s->dconf.cost, BI_DIR_READ);
	u32 d;

	/* S0-29 initial=ewma's estimate, as blkiso_feedback.c's tick moves it */
	bi_meter_adapt_tick(&t->m, &t->smp);
	/* S0-33 mechanism over a decaying window; a switch reconfigures the meter */
	t->win.n = t->win.n / 2 + t->smp.n;
	t->win.units = t->win.units / 2 + t->smp.units;
	t->win.units_sq = t->win.units_sq / 2 + t->smp.units_sq;
	if (bi_mode_tick(&t->ms, &t->win, committed == BI_CONF_UNLIMITED ? U64_MAX : committed) !=
	    t->m.auto_active && t->conf.mode == BI_MODE_AUTO) {
		t->m.auto_active = t->ms.active;
		bi_meter_configure(&t->m, &t->conf, &s->dconf, s->now);
	}
	memset(&t->smp, 0, sizeof(t->smp));

	if (tenant_request_mode(t)) {
		/* a bio still waiting for the request bucket is throttled */
		for (d = 0; d < BI_NR_DIRS; d++) {
			struct sim_io *h = t->q_head[d];

			if (h && !h->admitted && h->req_held)
				t->rs[d].throttled++;
		}
		for (d = 0; d < BI_NR_DIRS; d++) {
			if (!t->rate_p[d].committed_ups || !t->rate[d].cap_mrps)
				continue;
			bi_rate_tick(&t->rate[d], &t->rate_p[d], &t->rs[d], s->now);
		}
		tenant_request_rates(s, t);
	}
	if (t->conf.alloc) {
		bi_iso_tick(&t->iso, &t->iso_p, &t->is,
			    bi_fb_wc_held(&s->ep, &t->others_tick,
					  s->tick_missed - bi_min_u64(s->tick_missed, t->tick_missed),
					  s->ovl_p.window_ticks), s->now);
		if (t->iso.mode == BI_ISO_DELAY && t->iso.delay_ns) {
			t->sec->delay_ticks++;
			t->total->delay_ticks++;
		}
	}
	memset(t->rs, 0, sizeof(t->rs));
	memset(&t->is, 0, sizeof(t->is));
	s->tick_tenant_updates++;
}

static void sim_ovl_params(struct sim *s)
{
	u32 i;

	bi_fb_ovl_params(&s->ovl_p, &s->dconf);
	/* depth_limit decides which tenants are judged on their own window */
	for (i = 0; i < s->nr_tenants; i++)
		s->tenants[i].ovl.threshold_permille =
			bi_fb_tenant_threshold(&s->tenants[i].conf, &s->dconf);
}

static BI_NOINLINE void sim_tick(struct sim *s)
{
	struct timespec a, b;
	struct sim_tenant *t, **pp;
	struct bi_depth_stats ds = { 0 };
	bool signal = false, above = false;

	clock_gettime(CLOCK_MONOTONIC, &a);
	/* the tenants' own windows first: their signal feeds the device state */
	for (t = s->active; t; t = t->next_active) {
		if (bi_ovl_tenant_tick(&t->ovl, &s->ovl_p, t->is.ops, t->t_missed))
			signal = true;
		if (bi_fb_depth_protected(&t->conf, &s->dconf) &&
		    bi_depth_recent_tick(&t->depth_recent, t->is.ops || t->inflight))
			bi_fb_depth_fold(&ds, &t->conf, &t->ovl, t->is.ops, t->t_missed,
					 t->is.dev_ns, t->is.dev_min_ns, t->t_lat_max);
		t->tick_missed = t->t_missed;
		t->t_missed = 0;
		t->t_lat_max = 0;
	}
	bi_ovl_tick(&s->ovl, &s->ovl_p, &s->os, signal, s->now);
	bi_fb_episode_tick(&s->ep, &s->ovl);
	s->tick_missed = s->os.missed;
	s->os.completed = 0;
	s->os.missed = 0;
	s->os.slack_min_ns = BI_OVL_NO_SLACK;

	ds.slots = s->dev.slots;	/* as the module reads the lower queue's depth */
	pp = &s->active;
	while ((t = *pp)) {
		bool busy = t->is.ops || t->queued || t->inflight;
		u64 units = t->is.units;	/* tenant_tick() clears it */

		tenant_tick(s, t);
		t->above = tenant_above_commit(t, busy);
		above |= t->above;
		if (t->above) {
			ds.inflight_max = (u32)bi_max_u64(ds.inflight_max, t->inflight);
			ds.bound_units_max = bi_max_u64(ds.bound_units_max, units);
		}
		tenant_pump(s, t);
		if (!t->queued && !t->inflight && !t->outstanding &&
		    ++t->idle_ticks > s->ovl_p.window_ticks) {
			/* idle for a window: stop ticking it (O(active) ticks) */
			t->active = false;
			*pp = t->next_active;
			s->nr_active--;
			continue;
		}
		pp = &t->next_active;
	}
	s->ovl.any_above_commit = above;
	if (s->dconf.depth_limit)
		bi_depth_tick(&s->depth, &s->depth_p, &ds, s->now);
	else if (s->depth.limit)
		bi_depth_init(&s->depth);
	s->ticks++;
	clock_gettime(CLOCK_MONOTONIC, &b);
	s->tick_ns_spent += (u64)(b.tv_sec - a.tv_sec) * BI_NSEC_PER_SEC +
			    (u64)b.tv_nsec - (u64)a.tv_nsec;
}

static void sim_second(struct sim *s, u32 second)
{
	u32 i;

	if (s->on_second)
		s->on_second(s, second, s->on_second_arg);
	for (i = 0; i < s->nr_tenants; i++)
		sim_stats_reset(s->tenants[i].sec);
	s->dev_ios_sec = 0;
	s->dev_bytes_sec = 0;
	if (s->warmup_ns == (u64)(second + 1) * BI_NSEC_PER_SEC) {
		/* -w: the totals leave out the warm-up */
		for (i = 0; i < s->nr_tenants; i++)
			memset(s->tenants[i].total, 0, sizeof(*s->tenants[i].total));
		s->dev_ios = 0;
		s->dev_bytes = 0;
	}
}

/*
 * Run the scenario to its duration.  Returns 0, or -1 with s->err set.
 */
int sim_run(struct sim *s)
{
	u64 next_second;
	u32 i, second = 0;

	s->tick_ns = (u64)s->dconf.tick_ms * BI_NSEC_PER_MSEC;
	next_second = BI_NSEC_PER_SEC;
	sim_ovl_params(s);
	bi_ovl_init(&s->ovl, &s->ovl_p);
	bi_depth_params_init(&s->depth_p);
	bi_depth_init(&s->depth);
	s->os.slack_min_ns = BI_OVL_NO_SLACK;
	if (s->dev.cap_mrps)
		bi_bucket_init(&s->dev_req, s->dev.cap_mrps, 3 * BI_MRPS_PER_RPS,
			       3 * BI_MRPS_PER_RPS, 0);
	/* results live apart from the hot per-tenant state (cache footprint) */
	s->stats = calloc(2 * (size_t)bi_max_u64(s->nr_tenants, 1), sizeof(*s->stats));
	if (!s->stats) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -1;
	}
	for (i = 0; i < s->nr_tenants; i++) {
		s->tenants[i].sec = &s->stats[2 * i];
		s->tenants[i].total = &s->stats[2 * i + 1];
	}
	if (ev_push(s, s->tick_ns, EV_TICK, 0, NULL, 0))
		return -1;
	for (i = 0; i < s->nr_phases; i++)
		ev_push(s, s->phases[i].at_ns, EV_PHASE, 0, NULL, i);
	for (i = 0; i < s->nr_tenants; i++) {
		struct sim_tenant *t = &s->tenants[i];

		t->rng = (s->seed * 0x9E3779B97F4A7C15ULL) ^ ((u64)(i + 1) * 0xBF58476D1CE4E5B9ULL);
		if (!t->rng)
			t->rng = 1;
		tenant_configure(s, t, true);
		t->gen_seq++;
		t->wl_changed = false;
		t->touched = false;
		gen_start(s, t);
	}

	while (s->heap_len) {
		struct sim_event e = ev_pop(s);
		struct sim_tenant *t = &s->tenants[e.tenant];

		if (e.at > s->duration_ns)
			break;
		while (e.at >= next_second) {
			/* seconds end before the events of the next one run */
			s->now = next_second;
			sim_second(s, second++);
			next_second += BI_NSEC_PER_SEC;
		}
		s->now = e.at;
		s->events++;
		switch (e.type) {
		case EV_ARRIVE:
			ev_arrive(s, t, e.arg);
			break;
		case EV_RELEASE:
			/* a shed large read asks again; a victim goes on */
			if (e.io->shed && s->dconf.overload != BI_OVERLOAD_OFF && gate_sheds(s, t, e.io)) {
				ev_push(s, s->now + sim_hold_ns(s), EV_RELEASE, e.tenant, e.io, 0);
				break;
			}
			enqueue(t, e.io);
			tenant_pump(s, t);
			break;
		case EV_WAKE:
			if (e.arg / BI_NR_DIRS == t->wake_seq[e.arg % BI_NR_DIRS])
				tenant_pump(s, t);
			break;
		case EV_DEV_SUBMIT:
			dev_submit(s, e.io);
			break;
		case EV_DEV_DONE:
			dev_done(s, e.io);
			break;
		case EV_DEV_WINDOW:
			s->dev_window_armed = false;
			dev_drain(s);
			break;
		case EV_TICK:
			sim_tick(s);
			ev_push(s, s->now + s->tick_ns, EV_TICK, 0, NULL, 0);
			break;
		case EV_PHASE: {
			struct sim_tenant *c;
			u32 j;

			if (sim_apply_line(s, s->phases[e.arg].line, 0))
				return -1;
			sim_ovl_params(s);
			for (j = 0; j < s->nr_tenants; j++) {
				c = &s->tenants[j];
				if (!c->touched)
					continue;
				c->touched = false;
				tenant_configure(s, c, false);
				if (c->wl_changed) {
					c->wl_changed = false;
					gen_start(s, c);
				}
				tenant_pump(s, c);
			}
			break;
		}
		}
	}
	while (next_second <= s->duration_ns) {
		s->now = next_second;
		sim_second(s, second++);
		next_second += BI_NSEC_PER_SEC;
	}
	return 0;
}
