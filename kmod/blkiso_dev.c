// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_dev.c - the device registry, tenants and their configuration, and
 * the sysfs tree:
 *
 *   /sys/kernel/blkiso/dm-N/name        the dm device's name (follows renames)
 *   /sys/kernel/blkiso/dm-N/conf        device line (rw; a write merges)
 *   /sys/kernel/blkiso/dm-N/tenant      "<cgroup> key=value..." (w): set a quota
 *   /sys/kernel/blkiso/dm-N/stats       device summary (r)
 *   /sys/kernel/blkiso/dm-N/rule, rules device-level rules (blkiso_rules.c)
 *   /sys/kernel/blkiso/dm-N/<id>/conf   the tenant's canonical line (rw; merges)
 *   /sys/kernel/blkiso/dm-N/<id>/stats  the tenant's counters (r)
 *   /sys/kernel/blkiso/dm-N/<id>/cgroup the tenant's cgroup path (r)
 *
 * <id> is the cgroup id (the inode number of its directory under
 * /sys/fs/cgroup), or "kernel".  A <cgroup> in a line is an id, an absolute
 * cgroup path ("/a/b", optionally under "/sys/fs/cgroup") or "kernel".
 * Every file holds one line, whatever the number of tenants.  A bad line is
 * refused with EINVAL and its reason in the kernel log, and changes nothing.
 * Only root (CAP_SYS_ADMIN) may write.
 */
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/device-mapper.h>
#include <linux/dm-ioctl.h>
#include <linux/blkdev.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "blkiso.h"

static LIST_HEAD(blkiso_devs);
static DEFINE_MUTEX(blkiso_devs_mutex);

/* ---- tenants ---- */

static void blkiso_tenant_release(struct kobject *kobj)
{
	struct blkiso_tenant *t = container_of(kobj, struct blkiso_tenant, kobj);

	free_percpu(t->pcpu);
	kfree(t);
	atomic_long_dec(&blkiso_live_tenants);
}

static const struct attribute_group *blkiso_tenant_groups[];

static struct kobj_type blkiso_tenant_ktype = {
	.release = blkiso_tenant_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = blkiso_tenant_groups,
};

static struct blkiso_tenant *blkiso_tenant_alloc(struct blkiso_dev *dev, u64 cgid,
						 gfp_t gfp)
{
	struct blkiso_tenant *t;
	u64 now = ktime_get_ns();
	int cpu, i;

	t = kzalloc(sizeof(*t), gfp | __GFP_NOWARN);
	if (!t)
		return NULL;
	t->pcpu = alloc_percpu_gfp(struct blkiso_tenant_pcpu, gfp | __GFP_NOWARN);
	if (!t->pcpu) {
		kfree(t);
		return NULL;
	}
	atomic_long_inc(&blkiso_live_tenants);
	t->dev = dev;
	t->cgid = cgid;
	INIT_LIST_HEAD(&t->park);
	for (i = 0; i < BI_NR_CLASSES; i++)
		bio_list_init(&t->parked_bios[i]);
	bi_tenant_conf_init(&t->conf);
	bi_meter_init(&t->meter, now);
	bi_meter_configure(&t->meter, &t->conf, &dev->conf, now);
	for_each_possible_cpu(cpu)
		bi_meter_init_cpu(&per_cpu_ptr(t->pcpu, cpu)->meter, now);
	blkiso_fb_tenant_init(t);
	t->fb.target_ns = (u64)t->conf.latency_us * NSEC_PER_USEC;
	t->fb.extremes = dev->conf.overload == BI_OVERLOAD_IDEAL;
	kobject_init(&t->kobj, &blkiso_tenant_ktype);
	return t;
}

/*
 * The nearest proper ancestor of @cgrp that has a configured tenant on
 * @dev: nested cgroups live under their ancestors' quotas, as with io.max.
 * Caller holds rcu_read_lock() (or the cgroup otherwise pinned).
 */
static struct blkiso_tenant *blkiso_find_parent(struct blkiso_dev *dev,
						struct cgroup *cgrp)
{
	struct blkiso_tenant *p;

	for (cgrp = cgroup_parent(cgrp); cgrp; cgrp = cgroup_parent(cgrp)) {
		p = blkiso_tenant_find(dev, cgroup_id(cgrp));
		if (p && READ_ONCE(p->configured))
			return p;
	}
	return NULL;
}

/*
 * After a configuration change, point every tenant at its nearest
 * configured ancestor again.  Tenants leave the list only with the device
 * and are added with list_add_tail_rcu(), so it may be walked while .map
 * adds new ones.  Caller holds dev->conf_mutex.
 */
void blkiso_relink(struct blkiso_dev *dev)
{
	struct blkiso_tenant *t;
	struct cgroup *cgrp;

	rcu_read_lock();
	list_for_each_entry_rcu(t, &dev->tenant_list, list) {
		if (t->cgid == BLKISO_KERNEL_CGID)
			continue;
		cgrp = cgroup_get_from_id(t->cgid);
		if (IS_ERR(cgrp))
			continue;
		WRITE_ONCE(t->parent, blkiso_find_parent(dev, cgrp));
		cgroup_put(cgrp);
	}
	rcu_read_unlock();
}

/*
 * The tenant of @cgid (@cgrp: its cgroup, NULL for the kernel tenant),
 * created on first sight without sleeping (this runs in .map).  Its sysfs
 * directory follows from a work item.  NULL when no memory could be had:
 * the bio then passes unmetered, and is counted.  Caller holds
 * rcu_read_lock().
 */
static struct blkiso_tenant *blkiso_tenant_publish(struct blkiso_dev *dev,
						   struct blkiso_tenant *t, u64 cgid);

struct blkiso_tenant *blkiso_tenant_lookup(struct blkiso_dev *dev, u64 cgid,
					   struct cgroup *cgrp)
{
	struct blkiso_tenant *t;

	t = blkiso_tenant_find(dev, cgid);
	if (likely(t))
		return t;
	t = blkiso_tenant_alloc(dev, cgid, GFP_NOWAIT);
	if (t && cgrp) {
		blkiso_rules_new_tenant(dev, t, cgrp);
		t->parent = blkiso_find_parent(dev, cgrp);
	}
	return blkiso_tenant_publish(dev, t, cgid);
}

/*
 * Hash and list the new tenant @t of @cgid, unless another one got there
 * first (then @t goes and that one is returned); NULL if @t is NULL and
 * there is none.  Never sleeps.
 */
static struct blkiso_tenant *blkiso_tenant_publish(struct blkiso_dev *dev,
						   struct blkiso_tenant *t, u64 cgid)
{
	struct blkiso_tenant *found;
	unsigned long flags;

	spin_lock_irqsave(&dev->lock, flags);
	found = blkiso_tenant_find(dev, cgid);
	if (!found && t) {
		hash_add_rcu(dev->tenants, &t->hash, cgid);
		list_add_tail_rcu(&t->list, &dev->tenant_list);
		dev->nr_tenants++;
		found = t;
		t = NULL;
		queue_work(dev->wq, &dev->sysfs_work);
	} else if (!found) {
		dev->alloc_failures++;
	}
	spin_unlock_irqrestore(&dev->lock, flags);
	if (t)
		kobject_put(&t->kobj);
	return found;
}

/*
 * A rule's line for the new, unpublished tenant @t (.map, never sleeps; no
 * one else sees @t yet, so conf_mutex is not needed).
 */
void blkiso_tenant_preset(struct blkiso_tenant *t, const struct bi_tenant_conf *conf)
{
	t->conf = *conf;
	t->configured = true;
	t->from_rule = true;
	blkiso_fb_mode_configure(t);
	bi_meter_configure(&t->meter, &t->conf, &t->dev->conf, ktime_get_ns());
	blkiso_fb_configure(t);
}

/* A tenant for @cgrp configured by a rule's line (never sleeps). */
void blkiso_tenant_add_preset(struct blkiso_dev *dev, struct cgroup *cgrp,
			      const struct bi_tenant_conf *conf)
{
	struct blkiso_tenant *t;

	t = blkiso_tenant_alloc(dev, cgroup_id(cgrp), GFP_NOWAIT);
	if (!t)
		return;
	blkiso_tenant_preset(t, conf);
	t->parent = blkiso_find_parent(dev, cgrp);
	blkiso_tenant_publish(dev, t, cgroup_id(cgrp));
}

/* Configuration path: find or create, sleeping allowed. */
static struct blkiso_tenant *blkiso_tenant_get_or_create(struct blkiso_dev *dev,
							  u64 cgid)
{
	struct blkiso_tenant *t;

	rcu_read_lock();
	t = blkiso_tenant_find(dev, cgid);
	rcu_read_unlock();
	if (t)
		return t;
	t = blkiso_tenant_alloc(dev, cgid, GFP_KERNEL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	spin_lock_irq(&dev->lock);
	if (blkiso_tenant_find(dev, cgid)) {
		spin_unlock_irq(&dev->lock);
		kobject_put(&t->kobj);
		return blkiso_tenant_find(dev, cgid);
	}
	hash_add_rcu(dev->tenants, &t->hash, cgid);
	list_add_tail_rcu(&t->list, &dev->tenant_list);
	dev->nr_tenants++;
	spin_unlock_irq(&dev->lock);
	queue_work(dev->wq, &dev->sysfs_work);
	return t;
}

void blkiso_tenant_stats(struct blkiso_tenant *t, u64 *stat, u64 *lat, u64 *lat_sum_us)
{
	u64 sum_ns = 0;
	int cpu, i;

	memset(stat, 0, sizeof(u64) * BLKISO_NR_STATS);
	if (lat)
		memset(lat, 0, sizeof(u64) * BLKISO_LAT_BUCKETS);
	for_each_possible_cpu(cpu) {
		struct blkiso_tenant_pcpu *p = per_cpu_ptr(t->pcpu, cpu);

		for (i = 0; i < BLKISO_NR_STATS; i++)
			stat[i] += READ_ONCE(p->stat[i]);
		for (i = 0; lat && i < BLKISO_LAT_BUCKETS; i++)
			lat[i] += READ_ONCE(p->lat[i]);
		sum_ns += READ_ONCE(p->lat_sum_ns);
	}
	if (lat_sum_us)
		*lat_sum_us = div_u64(sum_ns, NSEC_PER_USEC);
	/* .end_io counts rios or wios, not "completed" as well */
	stat[BLKISO_COMPLETED] = stat[BLKISO_RIOS] + stat[BLKISO_WIOS];
}

/* ---- naming tenants ---- */

/* "<cgroup>": an id, "kernel", or an absolute cgroup path. */
static int blkiso_parse_cgroup(const char *tok, u64 *cgid)
{
	static const char prefix[] = "/sys/fs/cgroup";
	struct cgroup *cgrp;
	const char *path = tok;

	if (!strcmp(tok, "kernel")) {
		*cgid = BLKISO_KERNEL_CGID;
		return 0;
	}
	if (tok[0] != '/')
		return kstrtou64(tok, 10, cgid) || !*cgid ? -EINVAL : 0;
	if (!strncmp(path, prefix, sizeof(prefix) - 1) &&
	    (path[sizeof(prefix) - 1] == '/' || !path[sizeof(prefix) - 1]))
		path += sizeof(prefix) - 1;
	if (!*path)
		path = "/";
	cgrp = cgroup_get_from_path(path);
	if (IS_ERR(cgrp))
		return PTR_ERR(cgrp);
	*cgid = cgroup_id(cgrp);
	cgroup_put(cgrp);
	return 0;
}

/* ---- configuration ---- */

static void blkiso_report(struct blkiso_dev *dev, const char *what,
			  const struct bi_parse_err *err)
{
	pr_warn_ratelimited("blkiso: %s: %s: %s\n",
			    dm_disk(dev->md)->disk_name, what, err->msg);
}

/* @configured false: the defaults of a counted-only tenant (tenant_del). */
void blkiso_tenant_apply(struct blkiso_tenant *t, const struct bi_tenant_conf *conf,
			 bool configured)
{
	bool was_configured = t->configured;

	t->conf = *conf;
	WRITE_ONCE(t->configured, configured);
	blkiso_fb_mode_configure(t);
	bi_meter_configure(&t->meter, &t->conf, &t->dev->conf, ktime_get_ns());
	blkiso_fb_configure(t);
	if (was_configured != configured)
		blkiso_relink(t->dev);
	/* A new quota may admit parked bios at once. */
	queue_work(t->dev->wq, &t->dev->dispatch_work);
}

/* Merge @line into @t's configuration; nothing changes on error. */
static int blkiso_tenant_merge(struct blkiso_tenant *t, const char *line, size_t len)
{
	struct blkiso_dev *dev = t->dev;
	struct bi_tenant_conf *conf;
	struct bi_parse_err err;
	int ret;

	conf = kmalloc(sizeof(*conf), GFP_KERNEL);
	if (!conf)
		return -ENOMEM;
	mutex_lock(&dev->conf_mutex);
	/* a tenant line replaces a rule's line: it beats every rule */
	if (t->from_rule)
		bi_tenant_conf_init(conf);
	else
		*conf = t->conf;
	ret = bi_conf_merge(conf, line, len, &err);
	if (ret) {
		blkiso_report(dev, "tenant", &err);
	} else {
		t->from_rule = false;
		blkiso_tenant_apply(t, conf, true);
	}
	mutex_unlock(&dev->conf_mutex);
	kfree(conf);
	return ret;
}

/*
 * The leading "<cgroup>" word of @line into @name and @cgid; the length of
 * the word, or -EINVAL (said in the log) if it names no cgroup.
 */
static int blkiso_tenant_word(struct blkiso_dev *dev, const char *line, size_t len,
			      const char *want, char *name, size_t size, u64 *cgid)
{
	size_t n = 0;
	int ret;

	while (n < len && !isspace(line[n]))
		n++;
	if (!n || n >= size) {
		pr_warn_ratelimited("blkiso: %s: expected \"%s\"\n",
				    dm_disk(dev->md)->disk_name, want);
		return -EINVAL;
	}
	memcpy(name, line, n);
	name[n] = '\0';
	ret = blkiso_parse_cgroup(name, cgid);
	if (ret) {
		pr_warn_ratelimited("blkiso: %s: \"%s\": no such cgroup (want an id, an absolute path or \"kernel\")\n",
				    dm_disk(dev->md)->disk_name, name);
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	return n;
}

/* Does cgroup @cgid exist (0, the kernel tenant, always does)? 0 or -ENOENT. */
int blkiso_cgroup_exists(u64 cgid)
{
	struct cgroup *cgrp;

	if (cgid == BLKISO_KERNEL_CGID)
		return 0;
	cgrp = cgroup_get_from_id(cgid);
	if (IS_ERR(cgrp))
		return -ENOENT;
	cgroup_put(cgrp);
	return 0;
}

/*
 * "<cgroup> key=value...": from the "tenant" file and `dmsetup message`.
 * A cgroup id must name a live cgroup, as in the SET_TENANT ioctl: a tenant
 * made for an id that does not exist would be collected at once, and a
 * write in between would meet its sysfs directory still there.
 */
int blkiso_tenant_configure(struct blkiso_dev *dev, const char *line, size_t len)
{
	struct blkiso_tenant *t;
	struct bi_tenant_conf *conf;
	struct bi_parse_err err;
	char name[256];
	u64 cgid;
	int n, ret;

	while (len && isspace(*line))
		line++, len--;
	n = blkiso_tenant_word(dev, line, len, "<cgroup> key=value...", name, sizeof(name),
			       &cgid);
	if (n < 0)
		return n;
	if (blkiso_cgroup_exists(cgid)) {
		pr_warn_ratelimited("blkiso: %s: cgroup id %s: no such cgroup\n",
				    dm_disk(dev->md)->disk_name, name);
		return -ENOENT;
	}
	/* Validate before creating anything: a bad line leaves no tenant. */
	conf = kmalloc(sizeof(*conf), GFP_KERNEL);
	if (!conf)
		return -ENOMEM;
	bi_tenant_conf_init(conf);
	ret = bi_conf_merge(conf, line + n, len - n, &err);
	kfree(conf);
	if (ret) {
		blkiso_report(dev, name, &err);
		return ret;
	}
	t = blkiso_tenant_get_or_create(dev, cgid);
	if (IS_ERR(t))
		return PTR_ERR(t);
	/* ancestors matching a rule get their tenants, as from .map */
	mutex_lock(&dev->conf_mutex);
	blkiso_rules_eval_tenant(dev, t);
	mutex_unlock(&dev->conf_mutex);
	/* The tenant's directory exists when the write returns. */
	flush_work(&dev->sysfs_work);
	return blkiso_tenant_merge(t, line + n, len - n);
}

/*
 * Back to counted only: tenant @cgid loses its quota (the defaults again,
 * parked bios go, nested cgroups relink past it) and keeps its counters.
 * -ENOENT if it has no quota.
 */
int blkiso_tenant_deconfigure(struct blkiso_dev *dev, u64 cgid)
{
	struct bi_tenant_conf *conf;
	struct blkiso_tenant *t;
	int ret = -ENOENT;

	conf = kmalloc(sizeof(*conf), GFP_KERNEL);
	if (!conf)
		return -ENOMEM;
	bi_tenant_conf_init(conf);
	/* the collector frees tenants under conf_mutex only */
	mutex_lock(&dev->conf_mutex);
	rcu_read_lock();
	t = blkiso_tenant_find(dev, cgid);
	rcu_read_unlock();
	/* a rule's line is removed with its rule, not here */
	if (t && t->configured && !t->from_rule) {
		blkiso_tenant_apply(t, conf, false);
		/* the rules take the tenant back, if one matches */
		blkiso_rules_eval_tenant(dev, t);
		ret = 0;
	}
	mutex_unlock(&dev->conf_mutex);
	kfree(conf);
	return ret;
}

/* "<cgroup>": from the "tenant_del" file and `dmsetup message ... tenant_del`. */
int blkiso_tenant_del(struct blkiso_dev *dev, const char *line, size_t len)
{
	char name[256];
	u64 cgid;
	int n, ret;

	while (len && isspace(line[len - 1]))
		len--;
	while (len && isspace(*line))
		line++, len--;
	n = blkiso_tenant_word(dev, line, len, "<cgroup>", name, sizeof(name), &cgid);
	if (n < 0)
		return n;
	if (n != len) {
		pr_warn_ratelimited("blkiso: %s: tenant_del: expected \"<cgroup>\" alone\n",
				    dm_disk(dev->md)->disk_name);
		return -EINVAL;
	}
	ret = blkiso_tenant_deconfigure(dev, cgid);
	if (ret == -ENOENT)
		pr_warn_ratelimited("blkiso: %s: tenant_del: %s has no tenant line (a rule's quota goes with `rule del`)\n",
				    dm_disk(dev->md)->disk_name, name);
	return ret;
}

/* A device line (table parameters, "conf" file, `dmsetup message device`). */
int blkiso_dev_configure(struct blkiso_dev *dev, const char *line, size_t len)
{
	return blkiso_dev_merge(dev, line, len, true);
}

/*
 * Merge a device line into the device's configuration (@apply), or only
 * check that it would merge (a table's parameters, checked at load and
 * applied when that table is first resumed).
 */
int blkiso_dev_merge(struct blkiso_dev *dev, const char *line, size_t len,
		     bool apply)
{
	struct bi_dev_conf conf;
	struct bi_parse_err err;
	struct blkiso_tenant *t;
	int ret;

	mutex_lock(&dev->conf_mutex);
	conf = dev->conf;
	ret = bi_dev_conf_merge(&conf, line, len, &err);
	if (ret) {
		blkiso_report(dev, "device", &err);
		goto unlock;
	}
	if (!apply)
		goto unlock;
	dev->conf = conf;
	/* The cost model and dispense settings feed every tenant's meter. */
	spin_lock_irq(&dev->lock);
	list_for_each_entry(t, &dev->tenant_list, list)
		bi_meter_configure(&t->meter, &t->conf, &dev->conf, ktime_get_ns());
	spin_unlock_irq(&dev->lock);
	/* ... and the controllers (tick, thresholds, request-mode caps) */
	blkiso_fb_dev_configure(dev);
	rcu_read_lock();
	list_for_each_entry_rcu(t, &dev->tenant_list, list)
		blkiso_fb_configure(t);
	rcu_read_unlock();
unlock:
	mutex_unlock(&dev->conf_mutex);
	return ret;
}

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
	n = bi_conf_format(&t->conf, buf, PAGE_SIZE - 1);
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
	return ret ? (ret == -ENOMEM ? ret : -EINVAL) : len;
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

/* Upper bound, in us, of the bucket holding the @pct-th percentile. */
u64 blkiso_lat_pct(const u64 *lat, u64 total, unsigned int pct)
{
	u64 want = div_u64(total * pct + 99, 100), seen = 0;
	int i;

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
	s64 n = READ_ONCE(t->meter.key[key].b.tokens);
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu_ptr(t->pcpu, cpu)->meter.local[key].tokens);
	return n;
}

/* Batches the global buckets handed to per-CPU local buckets (S4-05). */
static u64 blkiso_tenant_dispenses(struct blkiso_tenant *t)
{
	u64 n = 0;
	int k;

	for (k = 0; k < BI_NR_KEYS; k++)
		n += READ_ONCE(t->meter.key[k].nr_requests) -
		     READ_ONCE(t->meter.key[k].nr_refused);
	return n;
}

static ssize_t tenant_stats_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	struct blkiso_tenant *t = to_tenant(kobj);
	u64 stat[BLKISO_NR_STATS], lat[BLKISO_LAT_BUCKETS], lat_sum_us;
	int i, n = 0;

	blkiso_tenant_stats(t, stat, lat, &lat_sum_us);
	for (i = 0; i < BLKISO_NR_STATS; i++)
		n += sysfs_emit_at(buf, n, "%s=%llu ", blkiso_stat_names[i], stat[i]);
	for (i = 0; i < BI_NR_KEYS; i++)
		if (READ_ONCE(t->meter.key_on) & (1U << i))
			n += sysfs_emit_at(buf, n, "%s_tokens=%lld ", blkiso_key_names[i],
					   blkiso_key_tokens(t, i));
	n += sysfs_emit_at(buf, n,
			   "dispenses=%llu queued=%u p50_us=%llu p99_us=%llu lat_sum_us=%llu\n",
			   blkiso_tenant_dispenses(t), blkiso_tenant_queued(t),
			   blkiso_lat_pct(lat, stat[BLKISO_COMPLETED], 50),
			   blkiso_lat_pct(lat, stat[BLKISO_COMPLETED], 99), lat_sum_us);
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
 * the last one "inf"; the stats file has their sum (lat_sum_us).
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
	NULL,
};

static const struct attribute_group blkiso_tenant_group = {
	.attrs = blkiso_tenant_attrs,
};

static const struct attribute_group *blkiso_tenant_groups[] = {
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

static ssize_t dev_conf_store(struct kobject *kobj, struct kobj_attribute *a,
			      const char *buf, size_t len)
{
	int ret;

	if (!blkiso_may_configure())
		return -EPERM;
	ret = blkiso_dev_configure(to_dev(kobj), buf, len);
	return ret ? (ret == -ENOMEM ? ret : -EINVAL) : len;
}

static ssize_t dev_tenant_store(struct kobject *kobj, struct kobj_attribute *a,
				const char *buf, size_t len)
{
	int ret;

	if (!blkiso_may_configure())
		return -EPERM;
	ret = blkiso_tenant_configure(to_dev(kobj), buf, len);
	return ret ? (ret == -ENOMEM ? ret : -EINVAL) : len;
}

static ssize_t dev_tenant_del_store(struct kobject *kobj, struct kobj_attribute *a,
				    const char *buf, size_t len)
{
	int ret;

	if (!blkiso_may_configure())
		return -EPERM;
	ret = blkiso_tenant_del(to_dev(kobj), buf, len);
	return ret ? (ret == -ENOMEM || ret == -ENOENT ? ret : -EINVAL) : len;
}

/* The device's counters: every tenant's, added up. */
static ssize_t dev_stats_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	struct blkiso_dev *dev = to_dev(kobj);
	u64 sum[BLKISO_NR_STATS] = { 0 }, one[BLKISO_NR_STATS];
	struct blkiso_tenant *t;
	int i, n = 0;

	spin_lock_irq(&dev->lock);
	list_for_each_entry(t, &dev->tenant_list, list) {
		blkiso_tenant_stats(t, one, NULL, NULL);
		for (i = 0; i < BLKISO_NR_STATS; i++)
			sum[i] += one[i];
	}
	spin_unlock_irq(&dev->lock);
	for (i = 0; i < BLKISO_NR_STATS; i++)
		n += sysfs_emit_at(buf, n, "%s=%llu ", blkiso_stat_names[i], sum[i]);
	n += sysfs_emit_at(buf, n, "tenants=%u queued=%u alloc_failures=%llu draining=%d\n",
			   READ_ONCE(dev->nr_tenants), READ_ONCE(dev->nr_parked),
			   READ_ONCE(dev->alloc_failures), READ_ONCE(dev->draining));
	return n;
}

static ssize_t dev_ring_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	return blkiso_fb_ring_show(to_dev(kobj), NULL, buf);
}

static struct kobj_attribute dev_ring_attr = __ATTR(ring, 0444, dev_ring_show, NULL);
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
	&blkiso_dev_rules_attr.attr,
	&blkiso_dev_rule_attr.attr,
	NULL,
};

static const struct attribute_group blkiso_dev_group = {
	.attrs = blkiso_dev_attrs,
};

static const struct attribute_group *blkiso_dev_groups[] = {
	&blkiso_dev_group,
	NULL,
};

static void blkiso_dev_release(struct kobject *kobj)
{
	kfree(to_dev(kobj));
	atomic_long_dec(&blkiso_live_devices);
}

static struct kobj_type blkiso_dev_ktype = {
	.release = blkiso_dev_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = blkiso_dev_groups,
};

/* The next tenant without a sysfs directory, or NULL. */
static struct blkiso_tenant *blkiso_next_homeless(struct blkiso_dev *dev)
{
	struct blkiso_tenant *t, *found = NULL;

	spin_lock_irq(&dev->lock);
	list_for_each_entry(t, &dev->tenant_list, list) {
		if (!t->sysfs_tried) {
			found = t;
			break;
		}
	}
	spin_unlock_irq(&dev->lock);
	return found;
}

/*
 * Tenant directories are made here, never on the hot path.  Tenants leave
 * the list only when the device goes, after this work was flushed, so a
 * tenant found under the lock stays valid after it is dropped.
 */
static void blkiso_sysfs_work(struct work_struct *work)
{
	struct blkiso_dev *dev = container_of(work, struct blkiso_dev, sysfs_work);
	struct blkiso_tenant *t;
	int ret;

	while ((t = blkiso_next_homeless(dev))) {
		if (t->cgid == BLKISO_KERNEL_CGID)
			ret = kobject_add(&t->kobj, &dev->kobj, "kernel");
		else
			ret = kobject_add(&t->kobj, &dev->kobj, "%llu", t->cgid);
		t->in_sysfs = !ret;
		t->sysfs_tried = true;
	}
}

/* ---- collecting removed cgroups' tenants ---- */

/* Collect every this often: a removed cgroup's state goes within ~2 periods. */
#define BLKISO_GC_PERIOD	(5 * HZ)

/* Bios that reached .map for @t and have not ended: parked or in flight. */
static u64 blkiso_tenant_busy(struct blkiso_tenant *t)
{
	u64 stat[BLKISO_NR_STATS];

	blkiso_tenant_stats(t, stat, NULL, NULL);
	return stat[BLKISO_ARRIVED] - stat[BLKISO_COMPLETED] -
	       stat[BLKISO_REJECTED_NOWAIT] - stat[BLKISO_REJECTED];
}

/*
 * A tenant whose cgroup was removed is first unhashed (no new bio can find
 * it: .map counts a bio as arrived inside the RCU section of its lookup),
 * and freed on a later pass once a grace period has passed and every bio
 * that found it has ended.  Its sysfs directory goes with it.  The kernel
 * tenant and configured ancestors of live tenants stay.
 */
static void blkiso_gc_work(struct work_struct *work)
{
	struct blkiso_dev *dev = container_of(to_delayed_work(work),
					      struct blkiso_dev, gc_work);
	struct blkiso_tenant *t, *tmp;
	LIST_HEAD(dead);
	struct cgroup *cgrp;
	bool unhashed = false;

	mutex_lock(&dev->conf_mutex);
	/* Pass 1: free what was unhashed earlier and has drained. */
	spin_lock_irq(&dev->lock);
	list_for_each_entry_safe(t, tmp, &dev->tenant_list, list) {
		if (t->gone && !t->nr_parked && !t->fb.nr_slot_wait &&
		    !t->fb.nr_timed && !blkiso_tenant_busy(t)) {
			list_del_rcu(&t->list);
			list_add(&t->park, &dead);	/* park is unused once drained */
			dev->nr_tenants--;
		}
	}
	spin_unlock_irq(&dev->lock);
	/* Pass 2: unhash the tenants of removed cgroups. */
	list_for_each_entry(t, &dev->tenant_list, list) {
		if (t->gone || t->cgid == BLKISO_KERNEL_CGID)
			continue;
		cgrp = cgroup_get_from_id(t->cgid);
		if (!IS_ERR(cgrp)) {
			cgroup_put(cgrp);
			continue;
		}
		spin_lock_irq(&dev->lock);
		hash_del_rcu(&t->hash);
		t->gone = true;
		spin_unlock_irq(&dev->lock);
		unhashed = true;
	}
	if (!list_empty(&dead) || unhashed)
		blkiso_relink(dev);
	mutex_unlock(&dev->conf_mutex);
	if (!list_empty(&dead)) {
		/* Wait out any reader of the list or the links, then free. */
		synchronize_rcu();
		list_for_each_entry_safe(t, tmp, &dead, park) {
			if (t->in_sysfs)
				kobject_del(&t->kobj);
			kobject_put(&t->kobj);
		}
	}
	queue_delayed_work(dev->wq, &dev->gc_work, BLKISO_GC_PERIOD);
}

/* ---- the registry ---- */

static void blkiso_dev_destroy(struct blkiso_dev *dev);

static struct blkiso_dev *blkiso_dev_create(struct mapped_device *md, dev_t devt)
{
	struct blkiso_dev *dev;
	struct blkiso_tenant *kt;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return NULL;
	atomic_long_inc(&blkiso_live_devices);
	dev->md = md;
	dev->devt = devt;
	INIT_LIST_HEAD(&dev->node);
	mutex_init(&dev->conf_mutex);
	spin_lock_init(&dev->lock);
	hash_init(dev->tenants);
	INIT_LIST_HEAD(&dev->tenant_list);
	INIT_LIST_HEAD(&dev->parked);
	bi_dev_conf_init(&dev->conf);
	blkiso_fb_dev_init(dev);
	hrtimer_init(&dev->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	dev->timer.function = blkiso_timer_fn;
	INIT_WORK(&dev->dispatch_work, blkiso_dispatch_work);
	INIT_WORK(&dev->sysfs_work, blkiso_sysfs_work);
	INIT_DELAYED_WORK(&dev->gc_work, blkiso_gc_work);
	kobject_init(&dev->kobj, &blkiso_dev_ktype);
	/* Dispatch submits bios and may run while memory is short. */
	dev->wq = alloc_workqueue("blkiso-%u:%u", WQ_MEM_RECLAIM, 0,
				  MAJOR(devt), MINOR(devt));
	if (!dev->wq)
		goto put;
	if (kobject_add(&dev->kobj, blkiso_sysfs_root, "%s", dm_disk(md)->disk_name))
		goto put;
	dev->in_sysfs = true;
	/* The kernel tenant always exists: writeback must find it. */
	kt = blkiso_tenant_get_or_create(dev, BLKISO_KERNEL_CGID);
	if (IS_ERR(kt))
		goto put;
	queue_delayed_work(dev->wq, &dev->gc_work, BLKISO_GC_PERIOD);
	blkiso_fb_dev_start(dev);
	return dev;
put:
	blkiso_dev_destroy(dev);
	return NULL;
}

/* The registry entry of @md's device, created on first use (ctr). */
struct blkiso_dev *blkiso_dev_get(struct mapped_device *md, char **error)
{
	dev_t devt = disk_devt(dm_disk(md));
	struct blkiso_dev *dev;

	mutex_lock(&blkiso_devs_mutex);
	list_for_each_entry(dev, &blkiso_devs, node) {
		if (dev->devt == devt) {
			dev->users++;
			goto out;
		}
	}
	dev = blkiso_dev_create(md, devt);
	if (!dev) {
		*error = "Cannot allocate blkiso device state";
		goto out;
	}
	dev->users = 1;
	list_add(&dev->node, &blkiso_devs);
out:
	mutex_unlock(&blkiso_devs_mutex);
	return dev;
}

/*
 * Run @fn on the device state of the dm device @devt, under the registry
 * mutex so that the device cannot go meanwhile (its last table's removal
 * waits).  -ENODEV if no blkiso table uses @devt.  For the ioctl interface.
 */
int blkiso_dev_call(dev_t devt, int (*fn)(struct blkiso_dev *dev, void *arg),
		    void *arg)
{
	struct blkiso_dev *dev;
	int ret = -ENODEV;

	mutex_lock(&blkiso_devs_mutex);
	list_for_each_entry(dev, &blkiso_devs, node) {
		if (dev->devt == devt) {
			ret = fn(dev, arg);
			break;
		}
	}
	mutex_unlock(&blkiso_devs_mutex);
	return ret;
}

static void blkiso_dev_destroy(struct blkiso_dev *dev)
{
	struct blkiso_tenant *t, *tmp;

	hrtimer_cancel(&dev->timer);
	if (dev->wq) {
		cancel_delayed_work_sync(&dev->gc_work);
		blkiso_fb_dev_stop(dev);
		flush_work(&dev->dispatch_work);
		flush_work(&dev->sysfs_work);
		destroy_workqueue(dev->wq);
	}
	/* presuspend drained every queue before the last table went. */
	WARN_ON_ONCE(!list_empty(&dev->parked));
	list_for_each_entry_safe(t, tmp, &dev->tenant_list, list) {
		list_del(&t->list);
		if (t->in_sysfs)
			kobject_del(&t->kobj);
		kobject_put(&t->kobj);
	}
	blkiso_rules_free(dev);
	if (dev->in_sysfs)
		kobject_del(&dev->kobj);
	kobject_put(&dev->kobj);
}

/* Drop a table instance's reference; the last one frees the device state. */
void blkiso_dev_put(struct blkiso_dev *dev)
{
	bool last;

	mutex_lock(&blkiso_devs_mutex);
	last = --dev->users == 0;
	if (last)
		list_del_init(&dev->node);
	mutex_unlock(&blkiso_devs_mutex);
	if (last)
		blkiso_dev_destroy(dev);
}
