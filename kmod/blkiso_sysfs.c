// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_sysfs.c - the sysfs tree of the devices and their tenants:
 *
 *   /sys/kernel/blkiso/dm-N/name        the dm device's name (follows renames)
 *   /sys/kernel/blkiso/dm-N/conf        device line (rw; a write merges)
 *   /sys/kernel/blkiso/dm-N/tenant      "<cgroup> key=value..." (w): set a quota
 *   /sys/kernel/blkiso/dm-N/tenant_del  "<cgroup>" (w): drop a tenant's line
 *   /sys/kernel/blkiso/dm-N/stats       device summary (r)
 *   /sys/kernel/blkiso/dm-N/ring        the controllers' tick records (r)
 *   /sys/kernel/blkiso/dm-N/rule, rules device-level rules (blkiso_rules.c)
 *   /sys/kernel/blkiso/dm-N/lease       leased credit (w; blkiso_lease.c)
 *   /sys/kernel/blkiso/dm-N/<id>/conf   the tenant's canonical line (rw; merges)
 *   /sys/kernel/blkiso/dm-N/<id>/stats  the tenant's counters (r)
 *   /sys/kernel/blkiso/dm-N/<id>/cgroup the tenant's cgroup path (r)
 *   /sys/kernel/blkiso/dm-N/<id>/latency, ring  its histogram, its ticks (r)
 *   /sys/kernel/blkiso/dm-N/<id>/lease  its keys' leased credit (r)
 *
 * <id> is the cgroup id (the inode number of its directory under
 * /sys/fs/cgroup), or "kernel".  A <cgroup> in a line is an id, an absolute
 * cgroup path ("/a/b", optionally under "/sys/fs/cgroup") or "kernel".
 * Every file holds one line, whatever the number of tenants.  A bad line is
 * refused with its cause (EINVAL, ERANGE: a value out of range, E2BIG: too
 * long; ENOENT: no such cgroup) and its reason in the kernel log, and
 * changes nothing.
 * Only root (CAP_SYS_ADMIN) may write.  Tenant directories are made by a
 * work item (blkiso_sysfs_work), never on the I/O path.
 */
#include <linux/capability.h>
#include <linux/device-mapper.h>
#include <linux/percpu.h>
#include <linux/sysfs.h>

#include "blkiso.h"

/* ---- sysfs ---- */

static bool blkiso_may_configure(void)
{
	return capable(CAP_SYS_ADMIN);
}

#define to_tenant(k) container_of(k, struct blkiso_tenant, kobj)
#define to_dev(k) container_of(k, struct blkiso_dev, kobj)

static ssize_t tenant_conf_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	struct blkiso_tenant *t = to_tenant(kobj);
	int n;

	mutex_lock(&t->dev->conf_mutex);
	n = bi_conf_format(&blkiso_quota(t)->conf, buf, PAGE_SIZE - 1);
	mutex_unlock(&t->dev->conf_mutex);
	if (n < 0)
		return -E2BIG;
	buf[n++] = '\n';
	return n;
}

static ssize_t tenant_conf_store(struct kobject *kobj, struct kobj_attribute *a,
				 const char *buf, size_t len)
{
	int ret;

	if (!blkiso_may_configure())
		return -EPERM;
	ret = blkiso_tenant_merge(to_tenant(kobj), buf, len);
	return ret ? ret : len;
}

static const char * const blkiso_stat_names[BLKISO_NR_STATS] = {
	[BLKISO_ARRIVED] = "arrived",
	[BLKISO_ADMITTED] = "admitted",
	[BLKISO_PARKED] = "parked",
	[BLKISO_DISPATCHED] = "dispatched",
	[BLKISO_DEBT] = "debt",
	[BLKISO_REJECTED_NOWAIT] = "rejected_nowait",
	[BLKISO_REJECTED] = "rejected",
	[BLKISO_COMPLETED] = "completed",
	[BLKISO_ERRORS] = "errors",
	[BLKISO_RIOS] = "rios",
	[BLKISO_WIOS] = "wios",
	[BLKISO_RBYTES] = "rbytes",
	[BLKISO_WBYTES] = "wbytes",
	[BLKISO_RUNITS] = "runits",
	[BLKISO_WUNITS] = "wunits",
};

/*
 * Upper bound, in us, of the bucket holding the @pct-th percentile of the
 * histogram @lat, of its own total: a sampled histogram's (a tenant whose
 * latency no controller judges: lat.mask + 1 per timed bio) is an
 * estimate of "completed".
 */
u64 blkiso_lat_pct(const u64 *lat, unsigned int pct)
{
	u64 want, seen = 0, total = 0;
	int i;

	for (i = 0; i < BLKISO_LAT_BUCKETS; i++)
		total += lat[i];
	want = div_u64(total * pct + 99, 100);

	for (i = 0; i < BLKISO_LAT_BUCKETS && total; i++) {
		seen += lat[i];
		if (seen >= want)
			return 1ULL << i;
	}
	return 0;
}

static const char * const blkiso_key_names[BI_NR_KEYS] = {
	[BI_KEY_RUNITS] = "runits",
	[BI_KEY_WUNITS] = "wunits",
	[BI_KEY_RREQS] = "riops",
	[BI_KEY_WREQS] = "wiops",
};

/*
 * A capped key's balance: its global bucket plus every CPU's local one, as
 * last computed (refill is lazy).  Negative while the tenant is borrowing
 * (a completion charged more than the bucket held: S0-27, S1-10).
 */
static s64 blkiso_key_tokens(struct blkiso_tenant *t, int key)
{
	struct blkiso_tenant_pcpu __percpu *pc = READ_ONCE(t->pcpu);
	s64 n = READ_ONCE(blkiso_quota(t)->meter.key[key].b.tokens);
	int cpu;

	if (!pc)
		return n;	/* never capped: no local buckets */
	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu_ptr(pc, cpu)->meter.local[key].tokens);
	return n;
}

/* Batches the global buckets handed to per-CPU local buckets (S4-05). */
static u64 blkiso_tenant_dispenses(struct blkiso_tenant *t)
{
	u64 n = 0;
	int k;

	for (k = 0; k < BI_NR_KEYS; k++)
		n += READ_ONCE(blkiso_quota(t)->meter.key[k].nr_requests) -
		     READ_ONCE(blkiso_quota(t)->meter.key[k].nr_refused);
	return n;
}

static ssize_t tenant_stats_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	struct blkiso_tenant *t = to_tenant(kobj);
	u64 stat[BLKISO_NR_STATS], lat[BLKISO_LAT_BUCKETS], lat_sum_us;
	unsigned int sample = 0;
	struct blkiso_fb *fb;
	int i, n = 0;
	u8 on;

	blkiso_tenant_stats(t, stat, lat, &lat_sum_us);
	for (i = 0; i < BLKISO_NR_STATS; i++)
		n += sysfs_emit_at(buf, n, "%s=%llu ", blkiso_stat_names[i], stat[i]);
	rcu_read_lock();
	on = bi_meter_cfg(&blkiso_quota(t)->meter)->key_on;
	/*
	 * 1 bio in sample timed: all where a controller judges its latency,
	 * none (0: no latency figures) without a feedback state
	 */
	fb = blkiso_fb(t);
	if (fb)
		sample = blkiso_fb_times_all(t->dev, fb) ? 1 : READ_ONCE(fb->lat.mask) + 1U;
	rcu_read_unlock();
	for (i = 0; i < BI_NR_KEYS; i++)
		if (on & (1U << i))
			n += sysfs_emit_at(buf, n, "%s_tokens=%lld %s_dropped=%llu ",
					   blkiso_key_names[i], blkiso_key_tokens(t, i),
					   blkiso_key_names[i],
					   READ_ONCE(blkiso_quota(t)->meter.key[i].b.dropped));
	n += sysfs_emit_at(buf, n,
			   "dispenses=%llu queued=%u p50_us=%llu p99_us=%llu lat_sum_us=%llu ",
			   blkiso_tenant_dispenses(t), blkiso_tenant_queued(t),
			   blkiso_lat_pct(lat, 50),
			   blkiso_lat_pct(lat, 99), lat_sum_us);
	n += sysfs_emit_at(buf, n, "lat_sample=%u\n", sample);
	return n;
}

static ssize_t tenant_cgroup_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	struct blkiso_tenant *t = to_tenant(kobj);
	struct cgroup *cgrp;
	int ret;

	if (t->cgid == BLKISO_KERNEL_CGID)
		return sysfs_emit(buf, "kernel\n");
	cgrp = cgroup_get_from_id(t->cgid);
	if (IS_ERR(cgrp))
		return sysfs_emit(buf, "(removed)\n");
	ret = cgroup_path(cgrp, buf, PAGE_SIZE - 1);
	cgroup_put(cgrp);
	if (ret < 0)
		return ret;
	return strlcat(buf, "\n", PAGE_SIZE);
}

/*
 * The latency histogram: "<bound_us> <count>" per bucket (not cumulative),
 * the last one "inf"; the stats file has their sum (lat_sum_us).  All 0
 * for a tenant that keeps none (the stats file's lat_sample=0).
 */
static ssize_t tenant_latency_show(struct kobject *kobj, struct kobj_attribute *a,
				   char *buf)
{
	u64 stat[BLKISO_NR_STATS], lat[BLKISO_LAT_BUCKETS];
	int i, n = 0;

	blkiso_tenant_stats(to_tenant(kobj), stat, lat, NULL);
	for (i = 0; i < BLKISO_LAT_BUCKETS - 1; i++)
		n += sysfs_emit_at(buf, n, "%llu %llu\n", 1ULL << i, lat[i]);
	n += sysfs_emit_at(buf, n, "inf %llu\n", lat[i]);
	return n;
}

static ssize_t tenant_ring_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	struct blkiso_tenant *t = to_tenant(kobj);

	return blkiso_fb_ring_show(t->dev, t, buf);
}

static struct kobj_attribute tenant_ring_attr =
	__ATTR(ring, 0444, tenant_ring_show, NULL);
static struct kobj_attribute tenant_conf_attr =
	__ATTR(conf, 0600, tenant_conf_show, tenant_conf_store);
static struct kobj_attribute tenant_stats_attr =
	__ATTR(stats, 0444, tenant_stats_show, NULL);
static struct kobj_attribute tenant_cgroup_attr =
	__ATTR(cgroup, 0444, tenant_cgroup_show, NULL);
static struct kobj_attribute tenant_latency_attr =
	__ATTR(latency, 0444, tenant_latency_show, NULL);

static struct attribute *blkiso_tenant_attrs[] = {
	&tenant_conf_attr.attr,
	&tenant_stats_attr.attr,
	&tenant_cgroup_attr.attr,
	&tenant_ring_attr.attr,
	&tenant_latency_attr.attr,
	&blkiso_tenant_lease_attr.attr,
	NULL,
};

static const struct attribute_group blkiso_tenant_group = {
	.attrs = blkiso_tenant_attrs,
};

const struct attribute_group *blkiso_tenant_groups[] = {
	&blkiso_tenant_group,
	NULL,
};

/* The dm device's name as dmsetup shows it (it follows renames). */
static ssize_t dev_name_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	char name[DM_NAME_LEN];

	if (dm_copy_name_and_uuid(to_dev(kobj)->md, name, NULL))
		return -ENODEV;
	return sysfs_emit(buf, "%s\n", name);
}

static ssize_t dev_conf_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	struct blkiso_dev *dev = to_dev(kobj);
	int n;

	mutex_lock(&dev->conf_mutex);
	n = bi_dev_conf_format(&dev->conf, buf, PAGE_SIZE - 1);
	mutex_unlock(&dev->conf_mutex);
	if (n < 0)
		return -E2BIG;
	buf[n++] = '\n';
	return n;
}

/* A line written to a device file, handed to @apply (root only). */
ssize_t blkiso_dev_line_store(struct kobject *kobj, const char *buf, size_t len,
			      int (*apply)(struct blkiso_dev *dev, const char *line,
					   size_t len))
{
	int ret;

	if (!blkiso_may_configure())
		return -EPERM;
	ret = apply(to_dev(kobj), buf, len);
	return ret ? ret : len;
}

static ssize_t dev_conf_store(struct kobject *kobj, struct kobj_attribute *a,
			      const char *buf, size_t len)
{
	return blkiso_dev_line_store(kobj, buf, len, blkiso_dev_configure);
}

static ssize_t dev_tenant_store(struct kobject *kobj, struct kobj_attribute *a,
				const char *buf, size_t len)
{
	return blkiso_dev_line_store(kobj, buf, len, blkiso_tenant_configure);
}

static ssize_t dev_tenant_del_store(struct kobject *kobj, struct kobj_attribute *a,
				    const char *buf, size_t len)
{
	return blkiso_dev_line_store(kobj, buf, len, blkiso_tenant_del);
}

/* The device's counters: every tenant's, added up. */
static ssize_t dev_stats_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	struct blkiso_dev *dev = to_dev(kobj);
	u64 sum[BLKISO_NR_STATS] = { 0 }, one[BLKISO_NR_STATS];
	struct blkiso_tenant *t;
	int i, n = 0;
	s64 slack;

	/* under RCU, IRQs on: one tenant's fold at a time (anyone may read) */
	rcu_read_lock();
	list_for_each_entry_rcu(t, &dev->tenant_list, list) {
		blkiso_tenant_stats(t, one, NULL, NULL);
		for (i = 0; i < BLKISO_NR_STATS; i++)
			sum[i] += one[i];
	}
	rcu_read_unlock();
	for (i = 0; i < BLKISO_NR_STATS; i++)
		n += sysfs_emit_at(buf, n, "%s=%llu ", blkiso_stat_names[i], sum[i]);
	n += sysfs_emit_at(buf, n, "tenants=%u tick_tenants=%u queued=%u alloc_failures=%llu draining=%d ",
			   READ_ONCE(dev->nr_tenants), READ_ONCE(dev->fb.nr_active),
			   READ_ONCE(dev->nr_parked),
			   READ_ONCE(dev->alloc_failures), READ_ONCE(dev->draining));
	/* S2-19: the detector's state (written by the tick; a racy snapshot) */
	slack = READ_ONCE(dev->fb.ovl.slack_min_ns);
	n += sysfs_emit_at(buf, n, "overloaded=%d multiplier=%u miss_permille=%u ",
			   READ_ONCE(dev->fb.overloaded), READ_ONCE(dev->fb.ovl.m),
			   READ_ONCE(dev->fb.ovl.miss_permille));
	/* issue 20: the depth limit on tenants above their commitment */
	n += sysfs_emit_at(buf, n, "depth_limit=%u depth_episodes=%llu depth_held=%llu lower_slots=%u ",
			   READ_ONCE(dev->fb.depth.limit), READ_ONCE(dev->fb.depth.episodes),
			   READ_ONCE(dev->fb.depth.held), READ_ONCE(dev->fb.lower_slots));
	n += sysfs_emit_at(buf, n, "depth_pace_ups=%llu depth_paced=%llu ",
			   READ_ONCE(dev->fb.depth.pace_ups), READ_ONCE(dev->fb.depth.paced));
	n += sysfs_emit_at(buf, n, "state_transitions=%llu slack_min_us=",
			   READ_ONCE(dev->fb.ovl.transitions));
	if (slack == BI_OVL_NO_SLACK)
		n += sysfs_emit_at(buf, n, "none\n");
	else
		n += sysfs_emit_at(buf, n, "%lld\n", div_s64(slack, NSEC_PER_USEC));
	return n;
}

/*
 * S2-06: the overload detector's state, 0 or 1; poll(2)/select(2) on it
 * (POLLPRI) wakes when the state flips (the tick calls sysfs_notify).
 */
static ssize_t dev_overloaded_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(to_dev(kobj)->fb.overloaded));
}

static ssize_t dev_ring_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	return blkiso_fb_ring_show(to_dev(kobj), NULL, buf);
}

static struct kobj_attribute dev_ring_attr = __ATTR(ring, 0444, dev_ring_show, NULL);
static struct kobj_attribute dev_overloaded_attr =
	__ATTR(overloaded, 0444, dev_overloaded_show, NULL);
static struct kobj_attribute dev_name_attr = __ATTR(name, 0444, dev_name_show, NULL);
static struct kobj_attribute dev_conf_attr =
	__ATTR(conf, 0600, dev_conf_show, dev_conf_store);
static struct kobj_attribute dev_tenant_attr = __ATTR(tenant, 0200, NULL, dev_tenant_store);
static struct kobj_attribute dev_tenant_del_attr =
	__ATTR(tenant_del, 0200, NULL, dev_tenant_del_store);
static struct kobj_attribute dev_stats_attr = __ATTR(stats, 0444, dev_stats_show, NULL);

static struct attribute *blkiso_dev_attrs[] = {
	&dev_name_attr.attr,
	&dev_conf_attr.attr,
	&dev_tenant_attr.attr,
	&dev_tenant_del_attr.attr,
	&dev_stats_attr.attr,
	&dev_ring_attr.attr,
	&dev_overloaded_attr.attr,
	&blkiso_dev_rules_attr.attr,
	&blkiso_dev_rule_attr.attr,
	&blkiso_dev_lease_attr.attr,
	NULL,
};

static const struct attribute_group blkiso_dev_group = {
	.attrs = blkiso_dev_attrs,
};

const struct attribute_group *blkiso_dev_groups[] = {
	&blkiso_dev_group,
	NULL,
};

/*
 * The next tenant whose directory is to be made (new) or removed (its
 * cgroup is gone), with a reference; NULL if none.  Taken off the head of
 * dev->sysfs_first's queue: O(1) with IRQs off, whatever the number of
 * tenants.
 */
static struct blkiso_tenant *blkiso_next_sysfs(struct blkiso_dev *dev)
{
	struct blkiso_tenant *t;
	u64 t0;

	spin_lock_irq(&dev->lock);
	t0 = blkiso_irqsoff_begin();
	t = dev->sysfs_first;
	if (t != BLKISO_SYSFS_LAST) {
		dev->sysfs_first = t->sysfs_next;
		if (dev->sysfs_first == BLKISO_SYSFS_LAST)
			dev->sysfs_last = &dev->sysfs_first;
		t->sysfs_next = NULL;
		kobject_get(&t->kobj);
	} else {
		t = NULL;
	}
	blkiso_irqsoff_done(BLKISO_IRQSOFF_SYSFS, t0);
	spin_unlock_irq(&dev->lock);
	return t;
}

/* Queue @t for the sysfs work (new, or its cgroup gone).  dev->lock held. */
void blkiso_sysfs_pending_locked(struct blkiso_dev *dev, struct blkiso_tenant *t)
{
	lockdep_assert_held(&dev->lock);
	if (t->sysfs_next)
		return;		/* queued already */
	t->sysfs_next = BLKISO_SYSFS_LAST;
	*dev->sysfs_last = t;
	dev->sysfs_last = &t->sysfs_next;
}

/* A new device's empty queue of tenants for the sysfs work. */
void blkiso_sysfs_pending_init(struct blkiso_dev *dev)
{
	dev->sysfs_first = BLKISO_SYSFS_LAST;
	dev->sysfs_last = &dev->sysfs_first;
}

/*
 * Tenant directories are made and removed here, never on the hot path nor
 * under conf_mutex (their handlers take it, kobject_del waits for them).
 * One work item, so the two never race; the collector flushes it after it
 * unhashed tenants, and frees none that still has a directory.
 */
void blkiso_sysfs_work(struct work_struct *work)
{
	struct blkiso_dev *dev = container_of(work, struct blkiso_dev, sysfs_work);
	struct blkiso_tenant *t;
	int ret;

	while ((t = blkiso_next_sysfs(dev))) {
		if (t->in_sysfs && t->gone) {
			kobject_del(&t->kobj);
			t->in_sysfs = false;
		} else if (!t->in_sysfs && !t->gone) {
			if (t->cgid == BLKISO_KERNEL_CGID)
				ret = kobject_add(&t->kobj, &dev->kobj, "kernel");
			else
				ret = kobject_add(&t->kobj, &dev->kobj, "%llu", t->cgid);
			t->in_sysfs = !ret;
		}
		kobject_put(&t->kobj);
	}
}
