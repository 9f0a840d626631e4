/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim_engine.h - blkiso-sim: a discrete-event model of one protected device
 * driven through the real decision core (kmod/core).
 *
 * A scenario (doc/sim.md) names a device (Q parallel slots, service time
 * L, optionally per KiB), tenants with quota lines in the shared grammar
 * (bi_conf_parse), workloads (open-loop rate and/or closed-loop iodepth,
 * block-size mix, read share, priority), timed phase changes and a
 * duration.  The engine runs bios through the same path the kernel glue
 * does: overload gate (ctl_overload), bucket admission (bucket.c, work or
 * request mode), isolation slots and delays (ctl_isolation), the device,
 * and the controllers at every tick (ctl_rate, ctl_overload,
 * ctl_isolation), then reports per tenant per second and in total: IOPS,
 * MB/s, mean/p50/p99 latency (submit -> completion).
 *
 * Files: sim_scenario.c parses, sim_device.c models the device, sim_engine.c
 * runs events and the controllers, sim_output.c prints, blkiso-sim.c is
 * the command line.  Everything is deterministic for a given scenario.
 */
#ifndef BLKISO_SIM_ENGINE_H
#define BLKISO_SIM_ENGINE_H

#include <stdio.h>
#include "bi_shim.h"
#include "io.h"
#include "tokadapt.h"
#include "conf.h"
#include "bucket.h"
#include "ctl_rate.h"
#include "ctl_overload.h"
#include "ctl_isolation.h"
#include "feedback.h"
#include "meter.h"

#define SIM_NAME_MAX		32
#define SIM_BS_MIX_MAX		8
#define SIM_LINE_MAX		1024
#define SIM_HIST_SUB		16	/* histogram buckets per power of two */
#define SIM_HIST_BUCKETS	(40 * SIM_HIST_SUB)

struct sim_device {
	u32 slots;		/* Q: bios served in parallel */
	u64 latency_ns;		/* L: service time of one bio */
	u64 per_kib_ns;		/* added per KiB of payload */
	u64 cap_mrps;		/* device-level request cap (S0-35), 0 = none */
	u64 window_bytes;	/* mbps=: bytes a SIM_DEV_WINDOW_NS window, 0 = none */
};

#define SIM_DEV_WINDOW_NS	BI_NSEC_PER_MSEC	/* null_blk's bandwidth timer */

struct sim_workload {
	u64 rate_iops;		/* open loop: arrivals/s, 0 = closed loop only */
	u32 iodepth;		/* max outstanding; closed loop if rate is 0 */
	u32 nr_bs;
	u64 bs[SIM_BS_MIX_MAX];		/* block sizes, bytes */
	u32 bs_weight[SIM_BS_MIX_MAX];	/* relative weights */
	u32 read_pct;		/* share of reads */
	u8 prio_class;		/* enum bi_prio_class */
	bool poisson;		/* exponential inter-arrival times */
	u32 catchup;		/* arrivals missed at iodepth owed (at most), as fio's rate */
};

struct sim_hist {
	u64 count;
	u64 sum_ns;
	u32 b[SIM_HIST_BUCKETS];
};

struct sim_stats {
	u64 ios;		/* completed */
	u64 ios_dir[BI_NR_DIRS];	/* of which reads, writes */
	u64 bytes;
	u64 throttled;		/* bios held at least once (bucket, gate or slot) */
	u64 rejected;		/* of those, failed by the gate (reject mode) */
	u64 delay_ticks;	/* ticks that ended with its allocation delaying it */
	struct sim_hist lat;	/* submit -> completion */
};

struct sim_io;

struct sim_tenant {
	char name[SIM_NAME_MAX];
	char cgroup[SIM_NAME_MAX * 2];
	struct bi_tenant_conf conf;
	struct sim_workload wl;

	/*
	 * decision core state (what the kernel keeps per tenant x device):
	 * the meter admits as the module's .map does (one simulated CPU)
	 */
	struct bi_meter m;
	struct bi_meter_cpu cpu;
	struct bi_rate_ctl rate[BI_NR_DIRS];
	struct bi_rate_params rate_p[BI_NR_DIRS];
	struct bi_iso iso;
	struct bi_iso_params iso_p;
	struct bi_ovl_tenant ovl;
	struct bi_depth_recent depth_recent;	/* issue 20: active between its bios */
	struct bi_modesel ms;			/* mode=auto selector (S0-33) */
	struct bi_sample smp, win;		/* this tick; decaying window */

	/* per-tick counters, folded at the tick */
	struct bi_rate_stats rs[BI_NR_DIRS];
	struct bi_iso_stats is;
	u64 t_missed;
	u64 t_lat_max;		/* highest device latency in the tick (the depth limit) */
	u64 tick_missed;	/* t_missed of the tick being stepped */
	u64 others_tick;	/* other tenants last missed (bi_fb_wc_held()) */

	/* queue and generator */
	struct sim_io *q_head[BI_NR_DIRS], *q_tail[BI_NR_DIRS];	/* per direction */
	u32 rr;			/* direction to serve first */
	u32 queued, inflight, outstanding;
	bool above;		/* above its commitment at the last tick (S2-09) */
	u64 pace_next_ns;	/* the depth limit's pace: its next free time */
	bool arrival_blocked;
	u64 arrivals_owed;	/* catchup: missed arrivals still to issue */
	bool wl_changed;	/* a phase replaced the workload */
	bool touched;		/* a phase changed quota or workload */
	u64 wake_seq[BI_NR_DIRS];
	u64 gen_seq;		/* bumps when the workload changes */
	u64 rng;
	u64 bs_total_weight;
	bool active;		/* on the engine's active list */
	u32 idle_ticks;
	struct sim_tenant *next_active;

	/* results (in struct sim's stats array) */
	struct sim_stats *sec;	/* the current second */
	struct sim_stats *total;
};

struct sim_phase {
	u64 at_ns;
	char line[SIM_LINE_MAX];
};

struct sim;

/* Called at the end of each simulated second (output, tests). */
typedef void (*sim_second_fn)(struct sim *s, u32 second, void *arg);

struct sim {
	struct sim_device dev;
	struct bi_dev_conf dconf;
	u64 duration_ns;
	u64 warmup_ns;		/* whole seconds the totals leave out (-w) */
	u32 nr_tenants;
	struct sim_tenant *tenants;
	struct sim_stats *stats;	/* 2 per tenant: second, total */
	u32 nr_phases;
	struct sim_phase *phases;
	u64 seed;

	/* device-level core state */
	struct bi_ovl ovl;
	struct bi_ovl_params ovl_p;
	struct bi_bucket dev_req;	/* S0-35 device cap, milli-requests */
	struct bi_ovl_stats os;		/* this tick */
	struct bi_fb_episode ep;	/* whose misses the episode has (S3-18) */
	u64 tick_missed;		/* os.missed of the tick being stepped */
	struct bi_iso_stats dev_is;	/* this tick, whole device */
	struct bi_depth depth;		/* issue 20: depth_limit=1 */
	struct bi_depth_params depth_p;

	/* engine */
	u64 now;
	u64 tick_ns;
	u64 seq;
	struct sim_event *heap;
	u32 heap_len, heap_cap;
	struct sim_io *free_ios;
	struct sim_io **io_chunks;
	u32 nr_io_chunks;
	u32 dev_busy;
	struct sim_io *dev_q_head, *dev_q_tail;
	u64 dev_window;			/* the budget's window, and what is left */
	u64 dev_budget;
	bool dev_window_armed;		/* an EV_DEV_WINDOW is queued */
	struct sim_tenant *active;
	u32 nr_active;

	/* results and instrumentation */
	sim_second_fn on_second;
	void *on_second_arg;
	u64 ticks;
	u64 tick_tenant_updates;	/* controller updates over all ticks */
	u64 tick_ns_spent;		/* wall time in the tick path */
	u64 events;
	u64 dev_ios_sec, dev_bytes_sec;
	u64 dev_ios, dev_bytes;
	u64 ovl_transitions_at;		/* set by tests for windows */
	char err[256];
};

/* sim_scenario.c */
int sim_init(struct sim *s);
int sim_load_file(struct sim *s, const char *path);
int sim_load_string(struct sim *s, const char *text);
int sim_apply_line(struct sim *s, const char *line, u32 lineno);
struct sim_tenant *sim_tenant_find(struct sim *s, const char *name);
void sim_free(struct sim *s);

/* sim_device.c */
u64 sim_device_service_ns(const struct sim_device *d, u64 bytes);
bool sim_device_budget_take(struct sim *s, u64 bytes, u64 *retry_ns);

/* sim_engine.c */
int sim_run(struct sim *s);
u64 sim_hist_pct_ns(const struct sim_hist *h, u32 permille);
u64 sim_hist_mean_ns(const struct sim_hist *h);
void sim_stats_reset(struct sim_stats *st);
size_t sim_tenant_ctl_bytes(void);

/* sim_output.c */
void sim_print_second(FILE *f, struct sim *s, u32 second, bool json, bool first);
void sim_print_totals(FILE *f, struct sim *s, bool json);

#endif /* BLKISO_SIM_ENGINE_H */
