/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * blkiso.h - the user-space API of blkiso: ioctls on /dev/blkiso.
 *
 * One misc device, /dev/blkiso (mode 0644), serves every blkiso dm device;
 * each call names its dm device by major:minor.  Setting a quota or a device
 * line needs CAP_SYS_ADMIN (EPERM otherwise); reading lines and counters
 * needs only an open file.
 *
 * Every argument struct starts with a struct blkiso_ioc_hdr: the caller sets
 * size = sizeof(the struct) and version = BLKISO_IOCTL_VERSION.  The kernel
 * refuses a size or a version it does not know with EINVAL (GET_VERSION
 * alone ignores the version, so that any caller can ask for it).  The
 * ioctl numbers carry only the header's size, so a struct can grow in a
 * later version without a new number; the header says which layout it is.
 *
 * Lines are in the key=value grammar of doc/grammar.md, NUL-terminated.
 * A refused line fails with EINVAL and the kernel's reason, naming the bad
 * token, in msg; nothing changes.  Magic 0xBA, numbers 0x40-0x4f.
 */
#ifndef _UAPI_LINUX_BLKISO_H
#define _UAPI_LINUX_BLKISO_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define BLKISO_IOCTL_VERSION	5	/* 4: every tenant's latency kept, no BLKISO_F_LATENCY; 3: no LEASE; 2: no rules; 1: no DEL_TENANT, 152-byte stats records */
#define BLKISO_IOC_MAGIC	0xBA

/* Lines and messages, with their NUL. */
#define BLKISO_LINE_MAX		512
#define BLKISO_MSG_MAX		128

/* The device node (misc device "blkiso"). */
#define BLKISO_DEV_PATH		"/dev/blkiso"

struct blkiso_ioc_hdr {
	__u32 size;		/* sizeof(the whole argument struct) */
	__u32 version;		/* BLKISO_IOCTL_VERSION */
};

/* BLKISO_IOC_GET_VERSION: what the module speaks. */
struct blkiso_ioc_version {
	struct blkiso_ioc_hdr hdr;
	__u32 ioctl_version;	/* out: BLKISO_IOCTL_VERSION of the module */
	__u32 nr_stats;		/* out: counters per record (BLKISO_STAT_NR) */
	__u32 rec_size;		/* out: sizeof(struct blkiso_stats_rec) */
	__u32 reserved;
	char module_version[16];	/* out: "0.2.0" */
};

/* Flags of struct blkiso_ioc_tenant and struct blkiso_ioc_device. */
#define BLKISO_F_DRY_RUN	(1U << 0)	/* in: validate the line only */
#define BLKISO_F_CONFIGURED	(1U << 1)	/* out (GET_TENANT): has a quota */
#define BLKISO_F_RULE		(1U << 2)	/* out (v3): the quota is a rule's line */
#define BLKISO_F_DEL		(1U << 3)	/* in (SET_RULE): remove the rule */
#define BLKISO_F_LATENCY	(1U << 4)	/* out (STATS, v5): latency figures kept */

/*
 * BLKISO_IOC_SET_TENANT: merge line ("riops=500 wbps=10M") into the quota of
 * cgroup cgid (0: the kernel tenant) on the dm device major:minor, creating
 * the tenant if needed, like a write to /sys/kernel/blkiso/dm-N/tenant.
 * BLKISO_IOC_GET_TENANT: line receives the tenant's canonical line.
 * BLKISO_IOC_DEL_TENANT (version 2): drop the tenant's quota, back to
 * counted only (its counters stay); ENOENT if it has none.
 * Errors: ENODEV (no blkiso device), ENOENT (no such cgroup; for GET, no
 * such tenant), EINVAL (+ msg), EPERM.
 */
struct blkiso_ioc_tenant {
	struct blkiso_ioc_hdr hdr;
	__u32 major;			/* in: the dm device */
	__u32 minor;
	__u64 cgid;			/* in: cgroup id (inode number), 0 = kernel */
	__u32 flags;			/* BLKISO_F_* */
	__u32 reserved;
	char line[BLKISO_LINE_MAX];	/* in (SET) or out (GET) */
	char msg[BLKISO_MSG_MAX];	/* out: why a SET failed with EINVAL */
};

/* BLKISO_IOC_SET_DEVICE / GET_DEVICE: the device line ("unit_bytes=4096"). */
struct blkiso_ioc_device {
	struct blkiso_ioc_hdr hdr;
	__u32 major;
	__u32 minor;
	__u32 flags;			/* BLKISO_F_DRY_RUN */
	__u32 reserved;
	char line[BLKISO_LINE_MAX];
	char msg[BLKISO_MSG_MAX];
};

/* Index of struct blkiso_stats_rec.stat[], as in the sysfs stats files. */
enum blkiso_stat_id {
	BLKISO_STAT_ARRIVED,		/* bios seen */
	BLKISO_STAT_ADMITTED,		/* passed at once */
	BLKISO_STAT_PARKED,		/* held on the tenant's queue */
	BLKISO_STAT_DISPATCHED,		/* released from the queue */
	BLKISO_STAT_DEBT,		/* released unpaid (suspend drain) */
	BLKISO_STAT_REJECTED_NOWAIT,	/* REQ_NOWAIT that would wait */
	BLKISO_STAT_REJECTED,		/* reject mode: EIO */
	BLKISO_STAT_COMPLETED,
	BLKISO_STAT_ERRORS,
	BLKISO_STAT_RIOS,
	BLKISO_STAT_WIOS,
	BLKISO_STAT_RBYTES,
	BLKISO_STAT_WBYTES,
	BLKISO_STAT_RUNITS,
	BLKISO_STAT_WUNITS,
	BLKISO_STAT_NR,
};

/*
 * Buckets of the per-tenant latency histogram (arrival -> completion):
 * bucket i counts latencies below 2^i microseconds (and at least 2^(i-1)
 * us for i > 0); the last bucket counts everything from 2^30 us up.  Kept
 * for a tenant whose bios are timed (BLKISO_F_LATENCY): one a line
 * configures, or any tenant of a device whose feedback counts every
 * tenant; from then on (a counted-only tenant has counters only).
 */
#define BLKISO_LAT_BUCKETS	32

/*
 * One tenant in a BLKISO_IOC_STATS snapshot.  A version 1 caller passes
 * rec_size BLKISO_STATS_REC_SIZE_V1 and receives the fields up to flags.
 */
struct blkiso_stats_rec {
	__u64 cgid;			/* 0 = kernel tenant */
	__u64 stat[BLKISO_STAT_NR];	/* enum blkiso_stat_id */
	__u64 p50_us;			/* latency percentiles: bucket bounds, us */
	__u64 p99_us;
	__u32 queued;			/* bios parked now */
	__u32 flags;			/* BLKISO_F_CONFIGURED, _RULE, _LATENCY */
	/* version 2; 0 (with p50_us, p99_us) without BLKISO_F_LATENCY */
	__u64 lat_sum_us;		/* sum of the latencies counted in lat[] */
	__u64 lat[BLKISO_LAT_BUCKETS];	/* per bucket, not cumulative */
};

#define BLKISO_STATS_REC_SIZE_V1	152

/*
 * BLKISO_IOC_STATS: every tenant of one device in one call.  recs points to
 * capacity records of rec_size bytes (= sizeof(struct blkiso_stats_rec)).
 * The kernel writes count <= capacity records and sets total to the number
 * of tenants; count < total means: call again with more room.  At most
 * BLKISO_STATS_MAX records are written per call.
 */
#define BLKISO_STATS_MAX	16384

struct blkiso_ioc_stats {
	struct blkiso_ioc_hdr hdr;
	__u32 major;
	__u32 minor;
	__u64 recs;			/* in: user pointer to the records */
	__u32 rec_size;			/* in: sizeof(struct blkiso_stats_rec) */
	__u32 capacity;			/* in: records recs holds */
	__u32 count;			/* out: records written */
	__u32 total;			/* out: tenants of the device */
	__u32 queued;			/* out: bios parked on the device */
	__u32 draining;			/* out: 1 while suspending */
	__u64 alloc_failures;		/* out: bios passed unmetered */
};

/* struct blkiso_tick_rec.flags */
#define BLKISO_TICK_OVERLOADED	(1U << 0)	/* the overload detector fired */
#define BLKISO_TICK_ABOVE	(1U << 1)	/* tenant: above its commitment */
#define BLKISO_TICK_REQUEST	(1U << 2)	/* tenant: request tokens in force */

/* struct blkiso_tick_rec.iso_mode: the isolation controller's mode. */
enum blkiso_iso_mode {
	BLKISO_ISO_SLOTS,	/* slot limit only */
	BLKISO_ISO_DELAY,	/* slot limit plus an injected delay */
	BLKISO_ISO_ABUSE,	/* one slot: usage far above the allocation */
	BLKISO_ISO_RELAXED,	/* work-conserving, device not overloaded */
	BLKISO_ISO_NONE,	/* no allocation */
};

/*
 * One tick of the feedback loop (every tick_ms), as the device's ring or a
 * tenant's ring keeps it.  Device records leave the tenant fields 0; a
 * tenant record carries the device's multiplier and state of that tick.
 */
struct blkiso_tick_rec {
	__u64 seq;		/* tick number, from 1 when the device appeared */
	__u64 time_ns;		/* CLOCK_MONOTONIC at the tick */
	__u64 usage;		/* tenant: smoothed usage, its alloc metric /s */
	__u64 delay_ns;		/* tenant: injected dispatch delay */
	__u64 rcap_mrps;	/* tenant, mode=request: read cap, milli-req/s */
	__u64 wcap_mrps;	/* ... write cap; 0 = none */
	__u32 completed;	/* bios completed in the tick */
	__u32 missed;		/* of them, over their latency target */
	__u32 miss_permille;	/* missed fraction over the window */
	__u32 mult;		/* device throttle multiplier M, points */
	__u32 flags;		/* BLKISO_TICK_* */
	__u32 slots;		/* tenant: slot limit n (0 = no allocation) */
	__u32 inflight;		/* tenant: bios holding slots */
	__u32 iso_mode;		/* tenant: enum blkiso_iso_mode */
	__u32 victims;		/* bios held as overload victims in the tick */
	__u32 reserved;
};

/*
 * BLKISO_IOC_RING: the last ticks of a device (flags 0) or of one of its
 * tenants (BLKISO_RING_F_TENANT, cgid), oldest first.  recs points to
 * capacity records of rec_size = sizeof(struct blkiso_tick_rec) bytes; count
 * receives the number written (the ring holds 64 device or 16 tenant ticks).
 * Errors: ENODEV, ENOENT (no such tenant), EINVAL.
 */
#define BLKISO_RING_F_TENANT	(1U << 0)

struct blkiso_ioc_ring {
	struct blkiso_ioc_hdr hdr;
	__u32 major;
	__u32 minor;
	__u64 cgid;			/* in, with BLKISO_RING_F_TENANT */
	__u32 flags;			/* in: BLKISO_RING_F_* */
	__u32 rec_size;			/* in: sizeof(struct blkiso_tick_rec) */
	__u64 recs;			/* in: user pointer to the records */
	__u32 capacity;			/* in: records recs holds */
	__u32 count;			/* out: records written */
};

/*
 * Version 3: device-level rules ("rule <glob> key=value...", doc/metering.md).
 * BLKISO_IOC_SET_RULE adds or replaces the rule glob -> line (parsed as a
 * whole line: keys not named get their defaults), or with BLKISO_F_DEL
 * removes it (line not read); BLKISO_F_DRY_RUN only checks.  Errors:
 * EINVAL (+ msg: bad glob or line), ENOENT (no such rule to remove),
 * ENOSPC (BLKISO_RULES_MAX rules already), ENODEV, EPERM.
 * BLKISO_IOC_RULES copies up to capacity rules (glob and canonical line)
 * to recs, in the order they were added; total = the device's rules.
 */
#define BLKISO_GLOB_MAX		256	/* with its NUL */
#define BLKISO_RULES_MAX	64

struct blkiso_ioc_rule {
	struct blkiso_ioc_hdr hdr;
	__u32 major;
	__u32 minor;
	__u32 flags;			/* in: BLKISO_F_DRY_RUN, BLKISO_F_DEL */
	__u32 reserved;
	char glob[BLKISO_GLOB_MAX];	/* in: "/system.slice/docker-*.scope" */
	char line[BLKISO_LINE_MAX];	/* in */
	char msg[BLKISO_MSG_MAX];	/* out: why it failed */
};

struct blkiso_rule_rec {
	char glob[BLKISO_GLOB_MAX];
	char line[BLKISO_LINE_MAX];	/* canonical */
};

struct blkiso_ioc_rules {
	struct blkiso_ioc_hdr hdr;
	__u32 major;
	__u32 minor;
	__u64 recs;			/* in: user pointer to the records */
	__u32 rec_size;			/* in: sizeof(struct blkiso_rule_rec) */
	__u32 capacity;			/* in: records recs holds */
	__u32 count;			/* out: records written */
	__u32 total;			/* out: rules of the device */
};

/*
 * Version 4: BLKISO_IOC_LEASE, leased credit for cluster-wide quotas
 * (doc/cluster.md; blkiso-agent(8) is its user).  Adds tokens to the credit
 * of one capped key of tenant cgid, valid for ttl_ms from now (the kernel's
 * monotonic clock): the credit is spent after the key's own bucket, its
 * burst does not clip it, and what is left at the deadline is gone.  The
 * key's cap stays the tenant's floor: what it admits with no lease.  A new
 * lease adds to what is left and moves the deadline of the whole credit to
 * its own.  tokens 0 is a query (any caller; ttl_ms not read): the out
 * fields only.  With BLKISO_LEASE_F_RETURN, up to tokens of the credit
 * left are taken back unused (an agent gives them to the cluster again;
 * ttl_ms not read).  Tokens are in the key's units: work units for
 * RUNITS/WUNITS (rbps/wbps caps are work keys too), requests for
 * RIOS/WIOS.  Errors: EPERM (tokens > 0 without CAP_SYS_ADMIN), ENODEV,
 * ENOENT (no such tenant), EINVAL (+ msg: unknown key or flags, reserved
 * not 0, the key has no cap), ERANGE (tokens above 2^48, ttl_ms 0 with
 * tokens, or above 3,600,000).
 */
#define BLKISO_LEASE_F_RETURN	(1U << 0)	/* in: take credit back */

enum blkiso_lease_key {
	BLKISO_LEASE_RUNITS,
	BLKISO_LEASE_WUNITS,
	BLKISO_LEASE_RIOS,
	BLKISO_LEASE_WIOS,
	BLKISO_LEASE_NR_KEYS,
};

struct blkiso_ioc_lease {
	struct blkiso_ioc_hdr hdr;
	__u32 major;			/* in: the dm device */
	__u32 minor;
	__u64 cgid;			/* in: cgroup id, 0 = kernel */
	__u32 key;			/* in: enum blkiso_lease_key */
	__u32 ttl_ms;			/* in: validity from now */
	__u32 flags;			/* in: BLKISO_LEASE_F_* */
	__u32 reserved;			/* must be 0 */
	__u64 tokens;			/* in: tokens to add; 0 = query */
	/* out, after the call */
	__u64 left;			/* live credit */
	__u64 ttl_left_ms;		/* until its deadline (0: no credit) */
	__u64 granted;			/* counters since the key was capped: leased */
	__u64 spent;			/* handed to the CPUs' local buckets */
	__u64 expired;			/* lapsed unused */
	__u64 returned;			/* taken back unused */
	__u64 nr_leases;		/* leases received */
	char msg[BLKISO_MSG_MAX];	/* out: why it failed with EINVAL */
};

#define BLKISO_IOC_GET_VERSION	_IOWR(BLKISO_IOC_MAGIC, 0x40, struct blkiso_ioc_hdr)
#define BLKISO_IOC_SET_TENANT	_IOWR(BLKISO_IOC_MAGIC, 0x41, struct blkiso_ioc_hdr)
#define BLKISO_IOC_GET_TENANT	_IOWR(BLKISO_IOC_MAGIC, 0x42, struct blkiso_ioc_hdr)
#define BLKISO_IOC_SET_DEVICE	_IOWR(BLKISO_IOC_MAGIC, 0x43, struct blkiso_ioc_hdr)
#define BLKISO_IOC_GET_DEVICE	_IOWR(BLKISO_IOC_MAGIC, 0x44, struct blkiso_ioc_hdr)
#define BLKISO_IOC_STATS	_IOWR(BLKISO_IOC_MAGIC, 0x45, struct blkiso_ioc_hdr)
#define BLKISO_IOC_RING		_IOWR(BLKISO_IOC_MAGIC, 0x46, struct blkiso_ioc_hdr)
#define BLKISO_IOC_DEL_TENANT	_IOWR(BLKISO_IOC_MAGIC, 0x47, struct blkiso_ioc_hdr)
#define BLKISO_IOC_SET_RULE	_IOWR(BLKISO_IOC_MAGIC, 0x48, struct blkiso_ioc_hdr)
#define BLKISO_IOC_RULES	_IOWR(BLKISO_IOC_MAGIC, 0x49, struct blkiso_ioc_hdr)
#define BLKISO_IOC_LEASE	_IOWR(BLKISO_IOC_MAGIC, 0x4c, struct blkiso_ioc_hdr)

#endif /* _UAPI_LINUX_BLKISO_H */
