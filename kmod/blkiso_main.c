// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_main.c - module entry and exit: the sysfs root
 * /sys/kernel/blkiso, the registration of the "blkiso" dm target and the
 * control device /dev/blkiso.
 */
#include <linux/module.h>
#include <linux/sysfs.h>

#include "blkiso.h"

struct kobject *blkiso_sysfs_root;
atomic_long_t blkiso_live_devices = ATOMIC_LONG_INIT(0);
atomic_long_t blkiso_live_tenants = ATOMIC_LONG_INIT(0);
atomic_long_t blkiso_live_tenant_pcpu = ATOMIC_LONG_INIT(0);
atomic_long_t blkiso_live_tenant_fb = ATOMIC_LONG_INIT(0);
atomic_long_t blkiso_live_parked = ATOMIC_LONG_INIT(0);
atomic_long_t blkiso_live_bio_ext = ATOMIC_LONG_INIT(0);
atomic_long_t blkiso_ext_failures = ATOMIC_LONG_INIT(0);

/*
 * Debug: the longest section of each kind held with IRQs off, by a
 * timestamp pair (Debian's kernels have no irqsoff tracer): off unless
 * irqsoff_trace=1; irqsoff_max_ns reads "tick,dispatch,conf,sysfs" in ns
 * and is reset by writing "0,0,0,0" (doc/robustness.md).
 */
bool blkiso_irqsoff_trace;
module_param_named(irqsoff_trace, blkiso_irqsoff_trace, bool, 0644);
MODULE_PARM_DESC(irqsoff_trace, "debug: time the IRQs-off sections (irqsoff_max_ns)");
unsigned long long blkiso_irqsoff_max_ns[BLKISO_IRQSOFF_NR];
module_param_array_named(irqsoff_max_ns, blkiso_irqsoff_max_ns, ullong, NULL, 0644);
MODULE_PARM_DESC(irqsoff_max_ns, "debug: longest IRQs-off section in ns: tick,dispatch,conf,sysfs");

void blkiso_irqsoff_end(enum blkiso_irqsoff_site site, u64 t0)
{
	u64 d = ktime_get_ns() - t0;

	if (d > READ_ONCE(blkiso_irqsoff_max_ns[site]))
		WRITE_ONCE(blkiso_irqsoff_max_ns[site], d);
}

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", BLKISO_VERSION);
}
static struct kobj_attribute version_attr = __ATTR_RO(version);

/*
 * Device states, tenants (and those with a per-CPU area and a quota of
 * their own) and parked bios alive: all 0 once every table is gone.  Then
 * the slab object sizes of a tenant and of a quota, then the tenants with
 * a feedback state and its size, then a per-CPU area's bytes on each CPU
 * (issue 18's footprint).
 */
static ssize_t objects_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "devices=%ld tenants=%ld parked=%ld bio_ext=%ld ext_failures=%ld tenant_pcpu=%ld tenant_bytes=%u quota_bytes=%u tenant_fb=%ld fb_bytes=%u pcpu_bytes=%zu\n",
			  atomic_long_read(&blkiso_live_devices),
			  atomic_long_read(&blkiso_live_tenants),
			  atomic_long_read(&blkiso_live_parked),
			  atomic_long_read(&blkiso_live_bio_ext),
			  atomic_long_read(&blkiso_ext_failures),
			  atomic_long_read(&blkiso_live_tenant_pcpu),
			  blkiso_tenant_bytes(), blkiso_quota_bytes(),
			  atomic_long_read(&blkiso_live_tenant_fb), blkiso_fb_bytes(),
			  sizeof(struct blkiso_tenant_pcpu));
}
static struct kobj_attribute objects_attr = __ATTR_RO(objects);

static struct attribute *blkiso_root_attrs[] = {
	&version_attr.attr,
	&objects_attr.attr,
	NULL,
};

static const struct attribute_group blkiso_root_group = {
	.attrs = blkiso_root_attrs,
};

u64 blkiso_jiffies_off __read_mostly;

/*
 * blkiso_coarse_ns()'s offset: jiffies (read first) against the clock,
 * one jiffy lower, so the coarse time lags the clock by less than two
 * jiffies (plus the tick's own lateness), never leads it by more than
 * the jiffies' lateness at this moment.  Unsigned arithmetic wraps with
 * jiffies (which starts 5 minutes below the wrap).
 */
static void __init blkiso_coarse_init(void)
{
	u64 j = (u64)READ_ONCE(jiffies);

	blkiso_jiffies_off = ktime_get_ns() - j * TICK_NSEC - TICK_NSEC;
}

static int __init blkiso_init(void)
{
	int ret;

	blkiso_coarse_init();

	ret = blkiso_tenant_cache_init();
	if (ret)
		return ret;
	blkiso_sysfs_root = kobject_create_and_add("blkiso", kernel_kobj);
	if (!blkiso_sysfs_root) {
		ret = -ENOMEM;
		goto exit_cache;
	}
	ret = sysfs_create_group(blkiso_sysfs_root, &blkiso_root_group);
	if (ret)
		goto put_root;
	ret = blkiso_target_init();
	if (ret)
		goto put_root;
	ret = blkiso_ioctl_init();
	if (ret)
		goto exit_target;
	return 0;

exit_target:
	blkiso_target_exit();
put_root:
	kobject_put(blkiso_sysfs_root);
exit_cache:
	blkiso_tenant_cache_exit();
	return ret;
}

static void __exit blkiso_exit(void)
{
	blkiso_ioctl_exit();
	blkiso_target_exit();
	kobject_put(blkiso_sysfs_root);
	blkiso_tenant_cache_exit();
}

module_init(blkiso_init);
module_exit(blkiso_exit);

MODULE_DESCRIPTION("blkiso: per-cgroup block I/O isolation (device-mapper target)");
MODULE_LICENSE("GPL");
MODULE_VERSION(BLKISO_VERSION);
/*
 * dm_get_target_type() asks for "dm-<target>" when a table names a target
 * that is not registered: this makes "dmsetup create ... blkiso" load us.
 * dm-mod itself comes first through the symbols we use.
 */
MODULE_ALIAS("dm-blkiso");
