// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_dev.c - the device registry and the devices' lifetime: a device's
 * state (tenants, configuration, dispatcher, sysfs directory) is made at
 * its first table and shared by every table of the same dm device, so a
 * reload keeps tenants and parked bios; it goes with the last table.  The
 * collector here frees the tenants of removed cgroups.
 */
#include <linux/cgroup.h>
#include <linux/device-mapper.h>
#include <linux/dm-ioctl.h>
#include <linux/blkdev.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "blkiso.h"

static LIST_HEAD(blkiso_devs);
static DEFINE_MUTEX(blkiso_devs_mutex);

static void blkiso_dev_release(struct kobject *kobj)
{
	struct blkiso_dev *dev = container_of(kobj, struct blkiso_dev, kobj);

	kvfree(dev->tenants);
	kfree(dev);
	atomic_long_dec(&blkiso_live_devices);
}

static struct kobj_type blkiso_dev_ktype = {
	.release = blkiso_dev_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = blkiso_dev_groups,
};

/* ---- collecting removed cgroups' tenants ---- */

/* Collect every this often: a removed cgroup's state goes within ~2 periods. */
#define BLKISO_GC_PERIOD	(5 * HZ)

/*
 * Bios that still reference @t: its own that reached .map and have not
 * ended (parked or in flight), and its descendants' charging it as an
 * ancestor level.  Once @t is unhashed and a grace period has passed,
 * each per-CPU term only moves towards zero, so a zero read is final.
 * IRQs on: one tenant's fold over the possible CPUs.
 */
static bool blkiso_tenant_busy(struct blkiso_tenant *t)
{
	struct blkiso_tenant_pcpu __percpu *pc = READ_ONCE(t->pcpu);
	u64 stat[BLKISO_NR_STATS];
	long held = 0;
	int cpu;

	/* only a capped tenant is held, and it has a per-CPU area */
	if (pc)
		for_each_possible_cpu(cpu)
			held += READ_ONCE(per_cpu_ptr(pc, cpu)->held);
	if (held)
		return true;
	blkiso_tenant_stats(t, stat, NULL, NULL);
	return stat[BLKISO_ARRIVED] != stat[BLKISO_COMPLETED] +
	       stat[BLKISO_REJECTED_NOWAIT] + stat[BLKISO_REJECTED];
}

/*
 * The collector, every BLKISO_GC_PERIOD.  The tenants of removed cgroups
 * are unhashed (no new bio can find them), their nested tenants relinked
 * past them (again after a grace period, for tenants made meanwhile), their
 * sysfs directories removed; after another grace period, those no bio
 * references any more (blkiso_tenant_busy) leave the list, the parent
 * links to them are cleared, and after a last grace period the collector
 * drops its reference (the lifetime rule: blkiso.h).
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
	list_for_each_entry(t, &dev->tenant_list, list) {
		if (t->gone)
			continue;
		/*
		 * A bio that raced with its tenant leaving the active list
		 * (blkiso_feedback.c) and waits: the tick visits it again.
		 */
		if (t->fb && !READ_ONCE(t->fb_settled) && blkiso_tenant_queued(t))
			blkiso_fb_activate(t);
		if (t->cgid == BLKISO_KERNEL_CGID)
			continue;
		cgrp = cgroup_get_from_id(t->cgid);
		if (!IS_ERR(cgrp)) {
			cgroup_put(cgrp);
			continue;
		}
		spin_lock_irq(&dev->lock);
		hash_del_rcu(&t->hash);
		t->gone = true;
		blkiso_sysfs_pending_locked(dev, t);
		spin_unlock_irq(&dev->lock);
		unhashed = true;
	}
	if (unhashed)
		blkiso_relink(dev);
	mutex_unlock(&dev->conf_mutex);
	if (unhashed) {
		/* The directories go now (the work, not us: no conf_mutex). */
		queue_work(system_wq, &dev->sysfs_work);
		flush_work(&dev->sysfs_work);
		/*
		 * Every .map that found them has counted itself by now, and
		 * every tenant a .map linked to them before the unhash is
		 * listed: link those past them too, and wait until no .map
		 * reads the old links (a bio taking ->held after the check
		 * below would outlive the tenant).
		 */
		synchronize_rcu();
		mutex_lock(&dev->conf_mutex);
		blkiso_relink(dev);
		mutex_unlock(&dev->conf_mutex);
		synchronize_rcu();
	}

	mutex_lock(&dev->conf_mutex);
	list_for_each_entry_safe(t, tmp, &dev->tenant_list, list) {
		if (!t->gone || t->in_sysfs || blkiso_tenant_busy(t))
			continue;
		spin_lock_irq(&dev->lock);
		/* not busy: nothing held either (and the dispatcher is done) */
		if (blkiso_tenant_queued(t) || !list_empty(&t->park) ||
		    t->sysfs_next) {
			spin_unlock_irq(&dev->lock);
			continue;
		}
		list_del_rcu(&t->list);
		blkiso_fb_deactivate_locked(dev, t);
		list_add(&t->park, &dead);	/* park is unused once drained */
		t->dead = true;
		dev->nr_tenants--;
		spin_unlock_irq(&dev->lock);
		cond_resched();
	}
	if (!list_empty(&dead)) {
		/* only unhashed tenants can still link to them (relink) */
		list_for_each_entry(t, &dev->tenant_list, list) {
			struct blkiso_tenant *p = t->parent;

			if (p && p->dead)
				WRITE_ONCE(t->parent, NULL);
		}
	}
	mutex_unlock(&dev->conf_mutex);
	if (!list_empty(&dead)) {
		/* Wait out any reader of the list or the links, then free. */
		synchronize_rcu();
		list_for_each_entry_safe(t, tmp, &dead, park)
			kobject_put(&t->kobj);
	}
	queue_delayed_work(system_wq, &dev->gc_work, BLKISO_GC_PERIOD);
}

/* ---- the registry ---- */

static void blkiso_dev_destroy(struct blkiso_dev *dev);

/* A new device's state, or ERR_PTR(): -ENOMEM, or why its directory failed. */
static struct blkiso_dev *blkiso_dev_create(struct mapped_device *md, dev_t devt)
{
	struct blkiso_dev *dev;
	struct blkiso_tenant *kt;
	int ret = -ENOMEM;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	/* empty heads: all zero */
	dev->tenants = kvcalloc(1U << BLKISO_TENANT_HASH_BITS, sizeof(*dev->tenants),
				GFP_KERNEL);
	if (!dev->tenants) {
		kfree(dev);
		return ERR_PTR(-ENOMEM);
	}
	atomic_long_inc(&blkiso_live_devices);
	dev->md = md;
	dev->devt = devt;
	INIT_LIST_HEAD(&dev->node);
	mutex_init(&dev->conf_mutex);
	spin_lock_init(&dev->lock);
	INIT_LIST_HEAD(&dev->tenant_list);
	blkiso_sysfs_pending_init(dev);
	INIT_LIST_HEAD(&dev->parked);
	bi_dev_conf_init(&dev->conf);
	dev->chunk_over = blkiso_chunk_over(&dev->conf);
	dev->cap_cut_over = U32_MAX;
	blkiso_fb_dev_init(dev);
	blkiso_quota_none_init(dev);
	hrtimer_init(&dev->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	dev->timer.function = blkiso_timer_fn;
	INIT_WORK(&dev->dispatch_work, blkiso_dispatch_work);
	INIT_WORK(&dev->sysfs_work, blkiso_sysfs_work);
	INIT_DELAYED_WORK(&dev->gc_work, blkiso_gc_work);
	kobject_init(&dev->kobj, &blkiso_dev_ktype);
	/*
	 * Dispatch submits bios and may run while memory is short: its own
	 * workqueue, with a rescuer.  The collector and the sysfs work wait
	 * (grace periods, each other, kobject_add) and run on system_wq: a
	 * work waiting for another on a queue with a rescuer could deadlock.
	 */
	dev->wq = alloc_workqueue("blkiso-%u:%u", WQ_MEM_RECLAIM, 0,
				  MAJOR(devt), MINOR(devt));
	if (!dev->wq)
		goto put;
	ret = kobject_add(&dev->kobj, blkiso_sysfs_root, "%s", dm_disk(md)->disk_name);
	if (ret)
		goto put;
	dev->in_sysfs = true;
	/* The kernel tenant always exists: writeback must find it. */
	kt = blkiso_tenant_get_or_create(dev, BLKISO_KERNEL_CGID);
	if (IS_ERR(kt)) {
		ret = PTR_ERR(kt);
		goto put;
	}
	kobject_put(&kt->kobj);		/* the list keeps it */
	queue_delayed_work(system_wq, &dev->gc_work, BLKISO_GC_PERIOD);
	blkiso_fb_dev_start(dev);
	return dev;
put:
	blkiso_dev_destroy(dev);
	return ERR_PTR(ret);
}

/*
 * The registry entry of @md's device, created on first use (ctr), or
 * ERR_PTR() with the cause (and *@error for dm).
 */
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
	if (IS_ERR(dev)) {
		*error = PTR_ERR(dev) == -ENOMEM ? "Cannot allocate blkiso device state" :
			 "Cannot create the blkiso device's sysfs directory";
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
	cancel_delayed_work_sync(&dev->gc_work);
	flush_work(&dev->sysfs_work);
	if (dev->wq) {
		blkiso_fb_dev_stop(dev);
		flush_work(&dev->dispatch_work);
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
