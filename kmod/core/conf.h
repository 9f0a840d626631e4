/* SPDX-License-Identifier: GPL-2.0 */
/*
 * conf.h - everything a tenant or a device can be configured with, and the
 * one key=value grammar every interface uses to change it.
 *
 * sysfs files, `dmsetup message`, the ioctl, `blkisoctl apply` and
 * blkiso-sim all hand a line of whitespace-separated key=value tokens to
 * bi_conf_parse()/bi_conf_merge() (tenants) or bi_dev_conf_parse()/
 * bi_dev_conf_merge() (devices), and print with bi_conf_format()/
 * bi_dev_conf_format().  The grammar is modelled on cgroup v2 io.max:
 * "riops=500 wbps=10M" sets two caps, "max" lifts one, a merge line changes
 * only the keys it names.  doc/grammar.md is the reference for every key.
 *
 * Parsing is transactional: the line is applied to a private copy, the copy
 * is validated as a whole, and only then is *out written.  A bad line
 * changes nothing and says which token is wrong and why.
 *
 * "Unset" is a value of the field, named by a sentinel: BI_CONF_UNLIMITED
 * for caps ("max"), 0 for alloc/burst_limit/delay_max_us/prio/hold_ms
 * ("none"/"auto"), BI_CONF_MIN_AUTO for min_tokens ("auto", S0-30),
 * BI_NO_FLOOR for floors ("none") and BI_CONF_INHERIT for per-class
 * min/floor ("inherit" the tenant's value).
 */
#ifndef BLKISO_CONF_H
#define BLKISO_CONF_H

#include "bi_shim.h"
#include "io.h"
#include "policy.h"
#include "classify.h"
#include "units.h"

/* A formatted configuration line, with its NUL, always fits in this. */
#define BI_CONF_LINE_MAX	512
#define BI_PARSE_MSG_MAX	128

/* Sentinels ("unset" values) and ranges. */
#define BI_CONF_UNLIMITED	U64_MAX			/* "max": no cap */
#define BI_CONF_RATE_MAX	(1ULL << 40)		/* iops and units/s */
#define BI_CONF_BPS_MAX		(1ULL << 50)		/* bytes/s (1 PiB/s) */
#define BI_CONF_TOKENS_MAX	(1LL << 40)		/* |min_tokens|, |floor| */
#define BI_CONF_MIN_AUTO	S64_MAX			/* min_tokens=auto (S0-30) */
#define BI_CONF_INHERIT		(S64_MAX - 1)		/* class min/floor = tenant's */
#define BI_CONF_WINDOW_MAX	16	/* tenant window_ticks: its ring (S2-16) */
#define BI_BURST_LIMIT_MIN	3	/* seed 000's request-bucket burst */
#define BI_BURST_LIMIT_PCT	5	/* ... or 5 % of the cap, the larger */

/* Linux errno values, returned negated (the glue passes them through). */
#define BI_EPERM		1
#define BI_E2BIG		7
#define BI_EINVAL		22
#define BI_ERANGE		34

enum bi_alloc_metric {
	BI_ALLOC_UNITS,		/* "units": 2 KB work units/s (default, A-31) */
	BI_ALLOC_IOPS,		/* "iops" */
};

enum bi_isolation {
	BI_ISOLATION_WC,	/* "wc": enforce alloc only while overloaded (S3-18) */
	BI_ISOLATION_STRICT,	/* "strict": always */
};

/* The overload gate of seed 002 (device key "overload"). */
enum bi_overload {
	BI_OVERLOAD_OFF,	/* detection and multiplier only: no bio held */
	BI_OVERLOAD_DAMPED,	/* +T, hold-off K, -R (S2-07, S2-10) */
	BI_OVERLOAD_SIMPLE,	/* naive: T while overloaded (S2-15) */
	BI_OVERLOAD_IDEAL,	/* damped plus ideal-rate tracking (S2-13) */
	BI_OVERLOAD_SHED,	/* large-read shedding only, no victims (S0-21) */
};

enum bi_mode {
	BI_MODE_WORK,		/* work bucket, cost = units (S0-22) */
	BI_MODE_REQUEST,	/* RPS-cap bucket, cost = 1 (S0-05) */
	BI_MODE_AUTO,		/* selector (S0-33) */
};

enum bi_initial {
	BI_INITIAL_ONE,		/* "1": deduct 1, correct at completion */
	BI_INITIAL_EWMA,	/* "ewma": deduct the adaptive estimate (S0-29) */
	BI_INITIAL_EXACT,	/* "exact": deduct the bio's units up front */
	BI_INITIAL_FIXED,	/* "fixed:K": deduct K units, correct (S0-24) */
};

/* initial=fixed:K: K at most this (a bucket's balance range). */
#define BI_CONF_INITIAL_FIXED_MAX	BI_CONF_TOKENS_MAX

/* S3-07's delay approach (tenant key delay_mode). */
enum bi_delay_mode {
	BI_DELAY_SPREAD,	/* "spread": a small delta on every slot */
	BI_DELAY_SINGLE,	/* "single": a larger delta on one slot */
};

/* Per-class settings of a tenant (S1-12..S1-18); index enum bi_class. */
struct bi_class_conf {
	u64 rate_units;		/* class bucket rate, units/s; BI_CONF_UNLIMITED */
	s64 min_tokens;		/* BI_CONF_INHERIT = tenant's min_tokens */
	s64 floor_tokens;	/* BI_CONF_INHERIT = tenant's floor */
	u8 nr_buckets;		/* admittance policy: buckets in consult order */
	u8 bucket[BI_POLICY_MAX_BUCKETS];
	u8 deduct;		/* enum bi_deduct_mode */
	u8 action;		/* enum bi_action */
};

/* latency_us when a line does not set it (S2-03) */
#define BI_LATENCY_US_DEFAULT	10000

struct bi_tenant_conf {
	/* Caps per direction (index enum bi_dir), BI_CONF_UNLIMITED = max. */
	u64 iops[BI_NR_DIRS];		/* riops, wiops: requests/s */
	u64 bps[BI_NR_DIRS];		/* rbps, wbps: bytes/s */
	u64 units[BI_NR_DIRS];		/* runits, wunits: work units/s */

	/* Guaranteed share (seed 003). */
	u64 alloc;			/* 0 = none */
	u8 alloc_metric;		/* enum bi_alloc_metric */
	u8 isolation;			/* enum bi_isolation */

	/* Buckets (seed 000/001). */
	u8 mode;			/* enum bi_mode */
	u8 initial;			/* enum bi_initial */
	u64 initial_units;		/* initial=fixed:K: K; 0 otherwise */
	u32 burst_ms;			/* capacity = rate * burst_ms */
	u64 burst_limit;		/* request bucket capacity, 0 = auto */
	s64 min_tokens;			/* admit iff tokens >= this; MIN_AUTO */
	s64 floor_tokens;		/* BI_NO_FLOOR = none */
	u64 deadband_units;		/* correction dead-band (S0-25) */

	/* Feedback (seeds 000, 002, 003). */
	u32 latency_us;			/* QoS target (S2-03), BI_LATENCY_US_DEFAULT */
	u8 prio;			/* rank override 1..3, 0 = from ioprio (S2-16) */
	u32 slots;			/* in-flight limit n_max (S3-04) */
	u32 lower_ticks;		/* n: cycles before lowering the cap (S0-08) */
	u32 raise_ticks;		/* m: cycles before raising it, m > n (S0-10) */
	u32 safety_pct;			/* s, percent (S0-11) */
	u32 adapt_pct;			/* initial-deduction adaptation (S0-29) */
	u32 miss_pct;			/* own overload threshold (S2-16) */
	u32 window_ticks;		/* own overload window, 0 = the device's (S2-16) */
	u32 hover_ms;			/* wait before adding delays (S3-08) */
	u32 delay_step_us;		/* delta step (S3-07) */
	u32 delay_max_us;		/* 0 = auto: min(2 x device latency, 50 ms) */
	u32 abuse_pct;			/* usage/alloc that clamps n to 1 (S3-15) */
	u8 delay_mode;			/* enum bi_delay_mode (S3-07) */
	u8 reduce_below_alloc;		/* 1: keep cutting slots below alloc (S3-12) */
	u8 predictive;			/* 1: delay a predicted crossing (S3-14) */
	u32 smoothing_pct;		/* usage EWMA weight alpha, % (S3-13) */

	struct bi_class_conf cls[BI_NR_CLASSES];
	struct bi_rules rules;		/* classifier (S1-17) */
};

struct bi_dev_conf {
	struct bi_cost_model cost;	/* unit_bytes, discard_units, write_unit_weight */
	u32 tick_ms;			/* adjustment cycle (S0-14) */
	u8 reject_mode;			/* 1: fail throttled bios with EIO */
	u8 overload;			/* enum bi_overload: the victim gate */
	u32 window_ticks;		/* moving window (S2-04) */
	u32 overload_pct;		/* overload threshold, % missed (S2-05) */
	u32 mult_up;			/* T, points (S2-07) */
	u32 mult_down;			/* R, points, R <= T (S2-10) */
	u32 holdoff_ticks;		/* K (S2-10) */
	u32 ideal_us;			/* theta (S2-13) */
	u32 ideal_band_us;		/* delta (S2-13) */
	u64 shed_bytes;			/* large-read shedding size (S0-21) */
	u32 local_max_pct;		/* per-CPU local bucket cap */
	u32 hold_ms;			/* victim/shed hold, 0 = one tick (S2-07) */
	u32 dispense_hold_ms;		/* negative-cache hold, 0 = one tick (S4-07) */
	u32 chunk_bytes;		/* a data bio cut to pieces of this, 0 = off (S0-28) */
	u8 depth_limit;			/* 1: bound above-commit tenants' depth on a miss (issue 20) */
};

/* Why a line was refused; err->msg says it in words, naming the token. */
enum bi_parse_code {
	BI_PE_OK,
	BI_PE_UNKNOWN_KEY,
	BI_PE_DUP_KEY,
	BI_PE_NO_VALUE,		/* no '=' or nothing after it */
	BI_PE_BAD_NUMBER,	/* not a number, leading '+', trailing junk */
	BI_PE_OVERFLOW,		/* does not fit 64 bits */
	BI_PE_RANGE,		/* outside the key's range, or not a power of two */
	BI_PE_ZERO,		/* 0 where not allowed */
	BI_PE_NEGATIVE,		/* negative where not allowed */
	BI_PE_BAD_SUFFIX,	/* unknown suffix, or a suffix on a non-byte key */
	BI_PE_BAD_WORD,		/* not one of the key's words */
	BI_PE_BAD_LIST,		/* policy list: empty element, unknown, duplicate */
	BI_PE_BAD_RULE,		/* classifier rule syntax */
	BI_PE_CONFLICT,		/* keys valid alone, inconsistent together */
	BI_PE_LOCKED,		/* a fixed setting (the SYS class policy) */
	BI_PE_TOO_LONG,		/* canonical form would not fit one line */
	BI_PE_UNSUPPORTED,	/* a catalogue key blkiso does not build (why) */
};

struct bi_parse_err {
	u32 code;			/* enum bi_parse_code */
	u32 pos;			/* offending token: byte offset in the line */
	u32 len;			/* and length (0 for whole-conf conflicts) */
	char msg[BI_PARSE_MSG_MAX];	/* "riops=12x: bad number (trailing junk)" */
};

/*
 * Concurrency contract (parse/merge/format, tenant and device): pure
 * functions of their arguments, no locks, no sleeping, bounded stack (one
 * conf copy).  Called from process context (sysfs store, dm message, ioctl,
 * ctr) with *out owned by the caller: the glue parses into a private conf
 * and publishes it under the tenant/device config lock (or RCU), never
 * parsing into a conf the fast path is reading.  err may be NULL.
 *
 * bi_conf_parse() replaces: keys not named get their defaults.
 * bi_conf_merge() updates: keys not named keep their current value.
 * A leading token "default" resets everything first (in either form);
 * any key also accepts the value "default".
 * Both return 0, or -BI_EINVAL/-BI_ERANGE/-BI_EPERM/-BI_E2BIG.
 */
void bi_tenant_conf_init(struct bi_tenant_conf *conf);
int bi_conf_parse(struct bi_tenant_conf *out, const char *line, u32 len,
		  struct bi_parse_err *err);
int bi_conf_merge(struct bi_tenant_conf *out, const char *line, u32 len,
		  struct bi_parse_err *err);
/*
 * Canonical form: fixed key order; the six io.max-style caps always, every
 * other key only when it differs from its default; plain decimal numbers
 * (bytes, units/s, ...).  Returns the length (without NUL) or -BI_E2BIG if
 * it does not fit size (buf then holds a NUL-terminated prefix).  With
 * size 0, buf may be NULL and only the length is returned.
 */
int bi_conf_format(const struct bi_tenant_conf *conf, char *buf, u32 size);

void bi_dev_conf_init(struct bi_dev_conf *conf);
int bi_dev_conf_parse(struct bi_dev_conf *out, const char *line, u32 len,
		      struct bi_parse_err *err);
int bi_dev_conf_merge(struct bi_dev_conf *out, const char *line, u32 len,
		      struct bi_parse_err *err);
int bi_dev_conf_format(const struct bi_dev_conf *conf, char *buf, u32 size);

/* The key tables, in canonical order (for tools, docs and tests). */
u32 bi_conf_nr_keys(void);
const char *bi_conf_key_name(u32 index);
u32 bi_dev_conf_nr_keys(void);
const char *bi_dev_conf_key_name(u32 index);

/*
 * Derived values for the bucket engine and the controllers.  Same contract
 * as bi_classify(): any context, *conf stable during the call.
 */
u64 bi_conf_rate_units(const struct bi_tenant_conf *conf,
		       const struct bi_cost_model *model, enum bi_dir dir);
u64 bi_conf_rate_requests(const struct bi_tenant_conf *conf, enum bi_dir dir);
u64 bi_conf_capacity(const struct bi_tenant_conf *conf, u64 rate);
u64 bi_conf_burst_limit(const struct bi_tenant_conf *conf, enum bi_dir dir);
u64 bi_conf_class_rate(const struct bi_tenant_conf *conf, enum bi_class class);
void bi_conf_policy(const struct bi_tenant_conf *conf, enum bi_class class,
		    u64 auto_min_tokens, struct bi_policy *policy);
u8 bi_conf_rank(const struct bi_tenant_conf *conf, const struct bi_io *io);
u32 bi_conf_delay_max_us(const struct bi_tenant_conf *conf,
			 u32 device_latency_us);
u32 bi_dev_conf_hold_ms(const struct bi_dev_conf *conf);
u32 bi_dev_conf_dispense_hold_ms(const struct bi_dev_conf *conf);
u64 bi_dev_conf_local_max(const struct bi_dev_conf *conf, u64 global_max);

#endif /* BLKISO_CONF_H */
