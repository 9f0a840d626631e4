// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_tenant.c - tenants: one per cgroup that did I/O on a device, made
 * on first sight in .map without sleeping and found there by cgroup id
 * under RCU; their parent links (io.max nesting), their counters folded
 * over the CPUs, and their configuration from a grammar line (sysfs, dm
 * message, ioctl, rules), which names a tenant by cgroup id, path or
 * "kernel".  They are freed by the collector in blkiso_dev.c, as the
 * lifetime rule in blkiso.h says.
 */
#include <linux/cgroup.h>
#include <linux/device-mapper.h>
#include <linux/blkdev.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "blkiso.h"

/* ---- tenants ---- */

/*
 * Tenants and their quotas come from caches of their own: kzalloc() would
 * round them up to the next power of two.
 */
static struct kmem_cache *blkiso_tenant_cache;
static struct kmem_cache *blkiso_quota_cache;

int blkiso_tenant_cache_init(void)
{
#if !defined(CONFIG_DEBUG_SPINLOCK) && !defined(CONFIG_DEBUG_LOCK_ALLOC)
	/* a production kernel's size: lock debugging makes each lock larger */
	BUILD_BUG_ON(sizeof(struct blkiso_tenant) > BLKISO_TENANT_MAX_BYTES);
#endif
	BUILD_BUG_ON(sizeof(struct blkiso_tenant_pcpu) > BLKISO_TENANT_PCPU_MAX_BYTES);
	blkiso_tenant_cache = KMEM_CACHE(blkiso_tenant, 0);
	blkiso_quota_cache = KMEM_CACHE(blkiso_quota, 0);
	if (blkiso_tenant_cache && blkiso_quota_cache && !blkiso_fb_cache_init())
		return 0;
	kmem_cache_destroy(blkiso_quota_cache);
	kmem_cache_destroy(blkiso_tenant_cache);
	return -ENOMEM;
}

/* Module exit: every device, and so every tenant, is gone. */
void blkiso_tenant_cache_exit(void)
{
	blkiso_fb_cache_exit();
	kmem_cache_destroy(blkiso_quota_cache);
	kmem_cache_destroy(blkiso_tenant_cache);
}

/* Slab bytes of one tenant, of one quota (/sys/kernel/blkiso/objects). */
unsigned int blkiso_tenant_bytes(void)
{
	return kmem_cache_size(blkiso_tenant_cache);
}

unsigned int blkiso_quota_bytes(void)
{
	return kmem_cache_size(blkiso_quota_cache);
}

/* A quota's line and meter at the defaults, unpublished (no reader yet). */
static void blkiso_quota_init(struct blkiso_quota *q, const struct blkiso_dev *dev)
{
	u64 now = ktime_get_ns();

	bi_tenant_conf_init(&q->conf);
	bi_meter_init(&q->meter, now);
	bi_meter_configure(&q->meter, &q->conf, &dev->conf, now);
	q->meter_gp_set = false;
}

/*
 * Has @t a quota of its own (a line configured it once)?  An address
 * compare only, so it holds in the release too, when the device may be
 * gone.
 */
static bool blkiso_tenant_own_quota(const struct blkiso_tenant *t)
{
	return t->quota != &t->dev->quota_none;
}

/* The counted-only tenants' shared quota of a new device. */
void blkiso_quota_none_init(struct blkiso_dev *dev)
{
	blkiso_quota_init(&dev->quota_none, dev);
}

static void blkiso_tenant_release(struct kobject *kobj)
{
	struct blkiso_tenant *t = container_of(kobj, struct blkiso_tenant, kobj);

	if (t->pcpu) {
		free_percpu(t->pcpu);
		atomic_long_dec(&blkiso_live_tenant_pcpu);
	}
	if (blkiso_tenant_own_quota(t))
		kmem_cache_free(blkiso_quota_cache, t->quota);
	blkiso_fb_free(t);
	kfree(t->parkq);
	kfree(t->ctr_hi);
	kmem_cache_free(blkiso_tenant_cache, t);
	atomic_long_dec(&blkiso_live_tenants);
}

static struct kobj_type blkiso_tenant_ktype = {
	.release = blkiso_tenant_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = blkiso_tenant_groups,
};

static struct blkiso_tenant *blkiso_tenant_alloc(struct blkiso_dev *dev, u64 cgid,
						 gfp_t gfp)
{
	struct blkiso_tenant *t;

	/*
	 * counted only: no per-CPU area, quota, feedback state nor class
	 * queues until a line configures it (or, the last two, its device's
	 * feedback needs them, or it parks a bio)
	 */
	t = kmem_cache_zalloc(blkiso_tenant_cache, gfp | __GFP_NOWARN);
	if (!t)
		return NULL;
	atomic_long_inc(&blkiso_live_tenants);
	t->dev = dev;
	t->cgid = cgid;
	INIT_LIST_HEAD(&t->park);
	t->quota = &dev->quota_none;
	kobject_init(&t->kobj, &blkiso_tenant_ktype);
	return t;
}

/* Publish @q as @t's class queues unless it has some; false: @q unused. */
static bool blkiso_parkq_publish_locked(struct blkiso_tenant *t,
					struct blkiso_parkq *q)
{
	lockdep_assert_held(&t->dev->lock);
	if (t->parkq)
		return false;
	/* whole before .map's lockless reads of its counts */
	smp_store_release(&t->parkq, q);
	return true;
}

/*
 * Give @t its class queues (struct blkiso_parkq, zeroed: empty) unless it
 * has them; device lock held, so IRQs are off: GFP_NOWAIT.  Kept until @t
 * is freed.  -ENOMEM leaves @t as it was.
 */
int blkiso_parkq_get_locked(struct blkiso_tenant *t)
{
	struct blkiso_parkq *q;

	lockdep_assert_held(&t->dev->lock);
	if (t->parkq)
		return 0;
	q = kzalloc(sizeof(*q), GFP_NOWAIT | __GFP_NOWARN);
	if (!q)
		return -ENOMEM;
	blkiso_parkq_publish_locked(t, q);
	return 0;
}

/* The same, not under the device lock, any context that @gfp allows. */
int blkiso_parkq_get(struct blkiso_tenant *t, gfp_t gfp)
{
	struct blkiso_parkq *q;
	unsigned long flags;
	bool used;

	if (READ_ONCE(t->parkq))
		return 0;
	q = kzalloc(sizeof(*q), gfp | __GFP_NOWARN);
	if (!q)
		return -ENOMEM;
	spin_lock_irqsave(&t->dev->lock, flags);
	used = blkiso_parkq_publish_locked(t, q);
	spin_unlock_irqrestore(&t->dev->lock, flags);
	if (!used)
		kfree(q);	/* another CPU gave it its queues first */
	return 0;
}

/*
 * Give @t its own quota (struct blkiso_quota: line and meter, at the
 * defaults) and its per-CPU area (counters, local buckets), and its
 * feedback state (the controllers, the latency histogram), unless it has
 * them: before a line configures it, so that a capped tenant always has
 * them (charges and ancestor holds use them).
 * The counters already in its shared set stay there (readers add both),
 * so no count is lost or doubled across the change, whatever is in
 * flight; a bio that read the shared quota_none found no cap and charged
 * nothing.  Kept until @t is freed: a bio may have loaded the pointers,
 * and a tenant configured once is likely to be again.  Caller holds
 * dev->conf_mutex, or @t is unpublished (.map's rule preset, @gfp
 * GFP_NOWAIT).  -ENOMEM leaves @t as it was.
 */
int blkiso_tenant_quota_get(struct blkiso_tenant *t, gfp_t gfp)
{
	struct blkiso_tenant_pcpu __percpu *pc;
	struct blkiso_quota *q;
	u64 now;
	int cpu;

	/* the controllers a line may give it: kept, even if the rest fails */
	if (blkiso_fb_get(t, gfp))
		return -ENOMEM;
	if (blkiso_tenant_own_quota(t))
		return 0;
	q = kmem_cache_alloc(blkiso_quota_cache, gfp | __GFP_NOWARN);
	if (!q)
		return -ENOMEM;
	pc = alloc_percpu_gfp(struct blkiso_tenant_pcpu, gfp | __GFP_NOWARN);
	if (!pc) {
		kmem_cache_free(blkiso_quota_cache, q);
		return -ENOMEM;
	}
	blkiso_quota_init(q, t->dev);
	now = ktime_get_ns();
	for_each_possible_cpu(cpu)
		bi_meter_init_cpu(&per_cpu_ptr(pc, cpu)->meter, now);
	/* each whole before any bio can see it; the meter's caps come after */
	smp_store_release(&t->pcpu, pc);
	/* and the quota, ordered after its own initialisation likewise */
	smp_store_release(&t->quota, q);
	atomic_long_inc(&blkiso_live_tenant_pcpu);
	return 0;
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
 * configured ancestor again.  Tenants leave the list under conf_mutex
 * (the collector), which the caller holds, and are added with
 * list_add_tail_rcu(), so it may be walked while .map adds new ones.  No
 * tenant keeps a link to an unhashed one: the collector frees it once the
 * bios that hold it have ended, and no new bio may take it.
 */
void blkiso_relink(struct blkiso_dev *dev)
{
	struct blkiso_tenant *t;
	struct cgroup *cgrp;

	lockdep_assert_held(&dev->conf_mutex);
	rcu_read_lock();
	list_for_each_entry_rcu(t, &dev->tenant_list, list) {
		if (t->cgid == BLKISO_KERNEL_CGID)
			continue;
		cgrp = cgroup_get_from_id(t->cgid);
		if (IS_ERR(cgrp)) {
			/* its parent's cgroup went first: no quota to nest in */
			if (t->parent && t->parent->gone)
				WRITE_ONCE(t->parent, NULL);
			continue;
		}
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
		if (blkiso_rules_new_tenant(dev, t, cgrp)) {
			kobject_put(&t->kobj);
			t = NULL;
		} else {
			t->parent = blkiso_find_parent(dev, cgrp);
		}
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
		hlist_add_head_rcu(&t->hash, blkiso_tenant_bucket(dev, cgid));
		list_add_tail_rcu(&t->list, &dev->tenant_list);
		blkiso_sysfs_pending_locked(dev, t);
		dev->nr_tenants++;
		found = t;
		t = NULL;
		queue_work(system_wq, &dev->sysfs_work);
	} else if (!found) {
		dev->alloc_failures++;
	}
	spin_unlock_irqrestore(&dev->lock, flags);
	if (t)
		kobject_put(&t->kobj);
	else if (found && found->configured)
		blkiso_fb_configured(found);	/* a rule's line: its controllers */
	return found;
}

/*
 * A rule's line for the new, unpublished tenant @t (.map, never sleeps; no
 * one else sees @t yet, so conf_mutex is not needed, nor a grace period
 * before its meter's configuration: blkiso_meter_configure()).  -ENOMEM:
 * no quota nor per-CPU area, @t stays as it was.
 */
int blkiso_tenant_preset(struct blkiso_tenant *t, const struct bi_tenant_conf *conf)
{
	if (blkiso_tenant_quota_get(t, GFP_NOWAIT))
		return -ENOMEM;
	t->quota->conf = *conf;
	t->configured = true;
	t->from_rule = true;
	blkiso_fb_mode_configure(t);
	bi_meter_configure(&t->quota->meter, &t->quota->conf, &t->dev->conf, ktime_get_ns());
	blkiso_fb_configure(t);
	return 0;
}

/* A tenant for @cgrp configured by a rule's line (never sleeps). */
void blkiso_tenant_add_preset(struct blkiso_dev *dev, struct cgroup *cgrp,
			      const struct bi_tenant_conf *conf)
{
	struct blkiso_tenant *t;

	t = blkiso_tenant_alloc(dev, cgroup_id(cgrp), GFP_NOWAIT);
	if (!t)
		return;
	if (blkiso_tenant_preset(t, conf)) {
		kobject_put(&t->kobj);	/* its first bio makes it again */
		return;
	}
	t->parent = blkiso_find_parent(dev, cgrp);
	blkiso_tenant_publish(dev, t, cgroup_id(cgrp));
}

/*
 * Configuration path: find or create, sleeping allowed.  Returns the tenant
 * with a reference the caller drops with kobject_put() (the lifetime rule:
 * a sleeping user holds one), or ERR_PTR(-ENOMEM).
 */
struct blkiso_tenant *blkiso_tenant_get_or_create(struct blkiso_dev *dev, u64 cgid)
{
	struct blkiso_tenant *t, *found;

	rcu_read_lock();
	t = blkiso_tenant_find(dev, cgid);
	if (t)
		kobject_get(&t->kobj);
	rcu_read_unlock();
	if (t)
		return t;
	t = blkiso_tenant_alloc(dev, cgid, GFP_KERNEL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	spin_lock_irq(&dev->lock);
	found = blkiso_tenant_find(dev, cgid);
	if (found) {
		kobject_get(&found->kobj);
		spin_unlock_irq(&dev->lock);
		kobject_put(&t->kobj);
		return found;
	}
	hlist_add_head_rcu(&t->hash, blkiso_tenant_bucket(dev, cgid));
	list_add_tail_rcu(&t->list, &dev->tenant_list);
	blkiso_sysfs_pending_locked(dev, t);
	dev->nr_tenants++;
	kobject_get(&t->kobj);		/* the caller's; the list holds the first */
	spin_unlock_irq(&dev->lock);
	queue_work(system_wq, &dev->sysfs_work);
	return t;
}

/* Serialises the shared sets' carries (rare: once per 2^31 counts of a half). */
static DEFINE_SPINLOCK(blkiso_ctr_carry_lock);

/*
 * Move the multiples of BLKISO_CARRY_AT of @c's 32-bit half @lo into its
 * 64-bit half (struct blkiso_ctr_hi), allocating that set first if need be.
 * Any context (.map, a completion, parking).  Cold: the adds' callers keep
 * its arguments off their hot path.
 */
noinline __cold void blkiso_ctr_carry(struct blkiso_tenant_ctr *c, atomic_t *lo)
{
	struct blkiso_tenant *t = container_of(c, struct blkiso_tenant, ctr);
	unsigned int i = lo - c->lo;
	struct blkiso_ctr_hi *hi;
	unsigned long flags;
	u32 m;

	BUILD_BUG_ON(!is_power_of_2(BLKISO_CARRY_AT));
	/* .end_io indexes these by the bio's direction (blkiso_end_io_shared()) */
	BUILD_BUG_ON(BI_DIR_READ != 0 || BI_DIR_WRITE != 1 ||
		     blkiso_lo_stat(BLKISO_WBYTES) != blkiso_lo_stat(BLKISO_RBYTES) + 1 ||
		     blkiso_lo_stat(BLKISO_WUNITS) != blkiso_lo_stat(BLKISO_RUNITS) + 1);
	spin_lock_irqsave(&blkiso_ctr_carry_lock, flags);
	hi = t->ctr_hi;
	if (!hi) {
		hi = kzalloc(sizeof(*hi), GFP_ATOMIC | __GFP_NOWARN);
		if (!hi)
			goto out;
		seqcount_spinlock_init(&hi->seq, &blkiso_ctr_carry_lock);
		/* readers load it with acquire: they see it initialised */
		smp_store_release(&t->ctr_hi, hi);
	}
	/* another CPU may have carried this half since its add */
	m = (u32)atomic_read(lo) & ~(BLKISO_CARRY_AT - 1);
	if (m) {
		write_seqcount_begin(&hi->seq);
		WRITE_ONCE(hi->n[i], hi->n[i] + m);
		/* a reader that sees the half lowered sees the set (full barrier) */
		atomic_sub_return(m, lo);
		write_seqcount_end(&hi->seq);
	}
out:
	spin_unlock_irqrestore(&blkiso_ctr_carry_lock, flags);
}

/* blkiso_count_passed()'s carry (blkiso.h). */
noinline __cold void blkiso_ctr_carry_passed(struct blkiso_tenant *t)
{
	blkiso_ctr_carry(&t->ctr, &t->ctr.lo[BLKISO_LO_PASSED]);
}

/*
 * @t's shared set's counts (indices of struct blkiso_tenant_ctr's halves)
 * into @v, each whole: the 32-bit half and the 64-bit one read in one @seq
 * read section, so a carry between them is retried, never seen as a fall.
 * Without the 64-bit set, a carry that allocated it meanwhile (its lowered
 * half seen) is seen by the re-check.
 */
static void blkiso_ctr_read(const struct blkiso_tenant *t, u64 *v)
{
	const struct blkiso_tenant_ctr *c = &t->ctr;
	const struct blkiso_ctr_hi *hi;
	unsigned int seq, i;

	/* pairs with the carry's release: the set is seen initialised */
	hi = smp_load_acquire(&t->ctr_hi);
	if (!hi) {
		for (i = 0; i < BLKISO_NR_LO; i++)
			v[i] = (u32)atomic_read(&c->lo[i]);
		/* a half read after its first carry: the set is seen below */
		smp_rmb();
		/* pairs with the carry's release, as above */
		hi = smp_load_acquire(&t->ctr_hi);
		if (!hi)
			return;
	}
	do {
		seq = read_seqcount_begin(&hi->seq);
		for (i = 0; i < BLKISO_NR_LO; i++)
			v[i] = (u32)atomic_read(&c->lo[i]) + READ_ONCE(hi->n[i]);
	} while (read_seqcount_retry(&hi->seq, seq));
}

/*
 * @t's shared counters into @stat (indexed by enum blkiso_stat, bytes in
 * bytes; not BLKISO_COMPLETED).
 */
void blkiso_ctr_stats(const struct blkiso_tenant *t, u64 *stat)
{
	u64 lo[BLKISO_NR_LO];
	int i;

	blkiso_ctr_read(t, lo);
	for (i = 0; i < BLKISO_NR_STATS; i++)
		if (blkiso_lo_stat(i) >= 0)
			stat[i] = lo[blkiso_lo_stat(i)];
	/* arrived and admitted at once (blkiso_map_tail()): in both */
	stat[BLKISO_ARRIVED] += lo[BLKISO_LO_PASSED];
	stat[BLKISO_ADMITTED] += lo[BLKISO_LO_PASSED];
	stat[BLKISO_RBYTES] <<= SECTOR_SHIFT;
	stat[BLKISO_WBYTES] <<= SECTOR_SHIFT;
	stat[BLKISO_RIOS] = atomic64_read(&t->ios[0]);
	stat[BLKISO_WIOS] = atomic64_read(&t->ios[1]);
}

/*
 * @t's counters: its shared set plus, if it has one, every CPU's.  Each
 * count is in one of them; one that moves from 0 to 1 between the two
 * reads is not seen yet (counts only grow).  And its latency histogram
 * and sum (@lat, @lat_sum_us: each may be NULL) if it keeps them (its
 * feedback state's struct blkiso_lat): true; else false, and both 0.
 */
bool blkiso_tenant_stats(struct blkiso_tenant *t, u64 *stat, u64 *lat, u64 *lat_sum_us)
{
	struct blkiso_tenant_pcpu __percpu *pc = READ_ONCE(t->pcpu);
	struct blkiso_fb *fb = blkiso_fb(t);
	u64 sum_ns = 0;
	int cpu, i;

	blkiso_ctr_stats(t, stat);
	for (i = 0; lat && i < BLKISO_LAT_BUCKETS; i++)
		lat[i] = fb ? atomic64_read(&fb->lat.bucket[i]) : 0;
	if (fb)
		sum_ns = atomic64_read(&fb->lat.sum_ns);
	for_each_possible_cpu(cpu) {
		struct blkiso_tenant_pcpu *p;

		if (!pc)
			break;
		p = per_cpu_ptr(pc, cpu);
		for (i = 0; i < BLKISO_NR_STATS; i++)
			if (blkiso_pcpu_stat(i) >= 0)
				stat[i] += READ_ONCE(p->stat[blkiso_pcpu_stat(i)]);
	}
	if (lat_sum_us)
		*lat_sum_us = div_u64(sum_ns, NSEC_PER_USEC);
	/* .end_io counts rios or wios, not "completed" as well */
	stat[BLKISO_COMPLETED] = stat[BLKISO_RIOS] + stat[BLKISO_WIOS];
	return fb;
}

/*
 * One of @t's counters, as blkiso_tenant_stats() folds it (not
 * BLKISO_COMPLETED): e.g. the tick's check, just before @t leaves the
 * active list, that no bio arrived since its fold.
 */
u64 blkiso_tenant_stat(const struct blkiso_tenant *t, enum blkiso_stat s)
{
	struct blkiso_tenant_pcpu __percpu *pc = READ_ONCE(t->pcpu);
	int i = blkiso_pcpu_stat(s), cpu;
	u64 stat[BLKISO_NR_STATS];
	u64 n;

	blkiso_ctr_stats(t, stat);
	n = stat[s];
	if (pc && i >= 0)
		for_each_possible_cpu(cpu)
			n += READ_ONCE(per_cpu_ptr(pc, cpu)->stat[i]);
	return n;
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

/*
 * Publish @q's meter configuration when a grace period has passed since
 * its last publication: a device line's step (it waited for one), and the
 * end of blkiso_meter_configure().
 */
static void blkiso_quota_reconfigure(struct blkiso_quota *q, struct blkiso_dev *dev)
{
	bi_meter_configure(&q->meter, &q->conf, &dev->conf, ktime_get_ns());
	q->meter_gp = get_state_synchronize_rcu();
	q->meter_gp_set = true;
}

/*
 * Publish @t's meter configuration from its line and the device's (struct
 * bi_meter_cfg): the slot the new one goes into was the published one
 * before the last publication, so a grace period since then (waited for
 * here if it has not passed) means no reader uses it any more: readers
 * load the published slot inside an RCU read-side section (IRQs off, or
 * rcu_read_lock()).  Only a tenant reconfigured within a grace period
 * waits, for an expedited one: a normal grace period under a loaded
 * TCG guest took ~300 ms a change (lifetime_test's flipper: 59 changes in
 * 25 s on 6.1).  dev->conf_mutex held (the writers' serialisation); may
 * sleep.
 */
void blkiso_meter_configure(struct blkiso_tenant *t)
{
	struct blkiso_quota *q = t->quota;

	lockdep_assert_held(&t->dev->conf_mutex);
	if (q->meter_gp_set)
		cond_synchronize_rcu_expedited(q->meter_gp);
	blkiso_quota_reconfigure(q, t->dev);
}

/*
 * Could another tenant nest under @t (its cgroup has descendants, live or
 * dying)?  If not, @t gaining or losing its quota changes no parent link,
 * and the walk over every tenant (blkiso_relink) is skipped: configuring
 * N leaf cgroups one by one is then linear in N, not quadratic.  A
 * descendant made after this read links to @t itself (.map reads
 * ->configured, written before).
 */
static bool blkiso_tenant_may_nest(const struct blkiso_tenant *t)
{
	struct cgroup *cgrp;
	bool any;

	if (t->cgid == BLKISO_KERNEL_CGID)
		return false;
	cgrp = cgroup_get_from_id(t->cgid);
	if (IS_ERR(cgrp))
		return true;	/* gone: blkiso_relink() sorts its links out */
	any = READ_ONCE(cgrp->nr_descendants) || READ_ONCE(cgrp->nr_dying_descendants);
	cgroup_put(cgrp);
	return any;
}

/* @configured false: the defaults of a counted-only tenant (tenant_del). */
void blkiso_tenant_apply(struct blkiso_tenant *t, const struct bi_tenant_conf *conf,
			 bool configured)
{
	bool was_configured = t->configured;

	/* the victim gate reads the line under the device lock */
	spin_lock_irq(&t->dev->lock);
	t->quota->conf = *conf;
	spin_unlock_irq(&t->dev->lock);
	WRITE_ONCE(t->configured, configured);
	blkiso_fb_mode_configure(t);
	blkiso_meter_configure(t);
	blkiso_fb_configure(t);
	blkiso_fb_configured(t);
	if (was_configured != configured && blkiso_tenant_may_nest(t))
		blkiso_relink(t->dev);
	/* A new quota may admit parked bios at once. */
	queue_work(t->dev->wq, &t->dev->dispatch_work);
}

/* Merge @line into @t's configuration; nothing changes on error. */
int blkiso_tenant_merge(struct blkiso_tenant *t, const char *line, size_t len)
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
		*conf = t->quota->conf;
	ret = blkiso_parse_errno(bi_conf_merge(conf, line, len, &err));
	if (ret) {
		blkiso_report(dev, "tenant", &err);
	} else if (blkiso_tenant_quota_get(t, GFP_KERNEL)) {
		pr_warn_ratelimited("blkiso: %s: tenant %llu: no memory for its quota and per-CPU counters: line not applied\n",
				    dm_disk(dev->md)->disk_name, t->cgid);
		ret = -ENOMEM;
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
 * the word, or (said in the log) -EINVAL if it cannot name a cgroup,
 * -ENOENT if no cgroup has that path.
 */
int blkiso_tenant_word(struct blkiso_dev *dev, const char *line, size_t len,
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
		return ret;
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
	ret = blkiso_parse_errno(bi_conf_merge(conf, line + n, len - n, &err));
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
	ret = blkiso_tenant_merge(t, line + n, len - n);
	kobject_put(&t->kobj);
	return ret;
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
	/* found and used in one conf_mutex section (blkiso.h) */
	mutex_lock(&dev->conf_mutex);
	t = blkiso_tenant_find_conf(dev, cgid);
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
	u64 t0;
	int ret;

	mutex_lock(&dev->conf_mutex);
	conf = dev->conf;
	ret = blkiso_parse_errno(bi_dev_conf_merge(&conf, line, len, &err));
	if (ret) {
		blkiso_report(dev, "device", &err);
		goto unlock;
	}
	if (!apply)
		goto unlock;
	/*
	 * The I/O path reads the device line under the device lock, or one
	 * word of it (READ_ONCE): it sees the old line or the new one.
	 */
	spin_lock_irq(&dev->lock);
	dev->conf = conf;
	WRITE_ONCE(dev->chunk_over, blkiso_chunk_over(&conf));
	spin_unlock_irq(&dev->lock);
	/*
	 * The cost model and dispense settings feed every tenant's meter: one
	 * grace period for all of them (blkiso_meter_configure()), then each
	 * published in turn, and its controllers retuned.  A tenant .map
	 * creates meanwhile is configured unpublished with the new line.
	 * No lock across tenants: conf_mutex keeps every listed tenant listed
	 * (the collector unlists under it) and .map only adds at the tail, so
	 * the walk holds dev->lock (IRQs off) only inside one tenant's step
	 * and may reschedule between tenants, whatever their number.
	 */
	synchronize_rcu_expedited();
	blkiso_fb_dev_configure(dev);
	blkiso_quota_reconfigure(&dev->quota_none, dev);
	list_for_each_entry_rcu(t, &dev->tenant_list, list,
				lockdep_is_held(&dev->conf_mutex)) {
		t0 = blkiso_irqsoff_begin();
		/* counted-only tenants share quota_none, configured above */
		if (blkiso_tenant_own_quota(t))
			blkiso_quota_reconfigure(t->quota, dev);
		blkiso_fb_configure(t);
		blkiso_irqsoff_done(BLKISO_IRQSOFF_CONF, t0);
		blkiso_fb_configured(t);
		cond_resched();
	}
unlock:
	mutex_unlock(&dev->conf_mutex);
	return ret;
}
