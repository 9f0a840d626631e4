// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_lease.c - leased credit at the interfaces (issue 22,
 * doc/cluster.md): the BLKISO_IOC_LEASE ioctl and its sysfs parity,
 *
 *   /sys/kernel/blkiso/dm-N/lease       "<cgroup> <key> <tokens> <ttl_ms>" (w)
 *   /sys/kernel/blkiso/dm-N/<id>/lease  each capped key's credit (r)
 *
 * <key> is runits, wunits, riops or wiops.  The arithmetic is the core's
 * (kmod/core/lease.c); this file finds the tenant, checks the caller and
 * wakes the dispatcher, so that bios parked on the floor pass as soon as a
 * lease lands.  Nothing here waits on anything but the configuration
 * mutex: the agent that asks the network runs in user space.
 */
#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/device-mapper.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include <linux/blkiso.h>

#include "blkiso.h"
#include "core/lease.h"

static_assert((int)BLKISO_LEASE_RUNITS == (int)BI_KEY_RUNITS &&
	      (int)BLKISO_LEASE_WUNITS == (int)BI_KEY_WUNITS &&
	      (int)BLKISO_LEASE_RIOS == (int)BI_KEY_RREQS &&
	      (int)BLKISO_LEASE_WIOS == (int)BI_KEY_WREQS &&
	      (int)BLKISO_LEASE_NR_KEYS == (int)BI_NR_KEYS);

static const char * const blkiso_lease_key_names[BI_NR_KEYS] = {
	[BI_KEY_RUNITS] = "runits",
	[BI_KEY_WUNITS] = "wunits",
	[BI_KEY_RREQS] = "riops",
	[BI_KEY_WREQS] = "wiops",
};

struct blkiso_lease_call {
	u64 cgid;
	u8 key;
	s64 tokens;
	u64 ttl_ns;
	bool take_back;			/* BLKISO_LEASE_F_RETURN */
	struct bi_lease_state st;
	const char *why;		/* out: the reason of an EINVAL/ERANGE */
};

/*
 * Apply (or query) a lease on @dev.  The tenant is found and used under
 * conf_mutex, so a reconfiguration cannot run between the check of its
 * caps and the lease.  Caller: blkiso_dev_call() (registry mutex).
 */
static int blkiso_lease_fn(struct blkiso_dev *dev, void *arg)
{
	struct blkiso_lease_call *c = arg;
	struct blkiso_tenant *t;
	enum bi_lease_err e;

	mutex_lock(&dev->conf_mutex);
	t = blkiso_tenant_find_conf(dev, c->cgid);
	if (!t) {
		mutex_unlock(&dev->conf_mutex);
		c->why = "no such tenant on this device";
		return -ENOENT;
	}
	if (c->take_back)
		e = bi_meter_lease_return(&blkiso_quota(t)->meter, c->key, c->tokens, ktime_get_ns(), &c->st);
	else
		e = bi_meter_lease(&blkiso_quota(t)->meter, c->key, c->tokens, c->ttl_ns, ktime_get_ns(),
				   &c->st);
	mutex_unlock(&dev->conf_mutex);
	if (e == BI_LEASE_UNCAPPED) {
		c->why = "the key has no cap: its cap is the floor a lease adds to";
		return -EINVAL;
	}
	if (e != BI_LEASE_OK) {
		c->why = "tokens or ttl out of range";
		return -ERANGE;
	}
	if (c->tokens && !c->take_back)
		queue_work(dev->wq, &dev->dispatch_work);
	return 0;
}

/* BLKISO_IOC_LEASE (version 4). */
long blkiso_ioc_lease(void __user *uarg)
{
	struct blkiso_lease_call c = { };
	struct blkiso_ioc_lease a;
	struct blkiso_ioc_hdr hdr;
	dev_t devt;
	int ret;

	if (copy_from_user(&hdr, uarg, sizeof(hdr)))
		return -EFAULT;
	if (hdr.size != sizeof(a) || hdr.version < 4 || hdr.version > BLKISO_IOCTL_VERSION)
		return -EINVAL;
	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.tokens && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	memset(a.msg, 0, sizeof(a.msg));
	if (a.major > MAJOR(~0U) || a.minor > MINORMASK)
		return -EINVAL;
	devt = MKDEV(a.major, a.minor);
	if (a.key >= BLKISO_LEASE_NR_KEYS || (a.flags & ~BLKISO_LEASE_F_RETURN) || a.reserved) {
		strscpy(a.msg, "unknown key, or flags or reserved not 0", sizeof(a.msg));
		ret = -EINVAL;
		goto out;
	}
	if (a.tokens > (u64)BI_LEASE_TOKENS_MAX) {
		strscpy(a.msg, "tokens above 2^48", sizeof(a.msg));
		ret = -ERANGE;
		goto out;
	}
	c.cgid = a.cgid;
	c.key = a.key;
	c.tokens = (s64)a.tokens;
	c.take_back = a.flags & BLKISO_LEASE_F_RETURN;
	c.ttl_ns = a.tokens && !c.take_back ? (u64)a.ttl_ms * NSEC_PER_MSEC : 0;
	ret = blkiso_dev_call(devt, blkiso_lease_fn, &c);
	if (ret && c.why)
		strscpy(a.msg, c.why, sizeof(a.msg));
	if (!ret) {
		a.left = (u64)c.st.tokens;
		a.ttl_left_ms = div_u64(c.st.ttl_left_ns + NSEC_PER_MSEC - 1, NSEC_PER_MSEC);
		a.granted = c.st.granted;
		a.spent = c.st.spent;
		a.expired = c.st.expired;
		a.returned = c.st.returned;
		a.nr_leases = c.st.nr_leases;
	}
out:
	if (copy_to_user(uarg, &a, sizeof(a)))
		return -EFAULT;
	return ret;
}

/* "<cgroup> <key> <tokens> <ttl_ms>" written to dm-N/lease. */
static int blkiso_lease_line(struct blkiso_dev *dev, const char *line, size_t len)
{
	struct blkiso_lease_call c = { };
	char name[256], rest[64], kname[16];
	unsigned long long tokens;
	unsigned int ttl_ms;
	int n, k, ret;
	char extra;

	while (len && isspace(line[len - 1]))
		len--;
	n = blkiso_tenant_word(dev, line, len, "<cgroup> <key> <tokens> <ttl_ms>",
			       name, sizeof(name), &c.cgid);
	if (n < 0)
		return n;
	if (len - n >= sizeof(rest))
		goto bad;
	memcpy(rest, line + n, len - n);
	rest[len - n] = '\0';
	if (sscanf(rest, " %15s %llu %u %c", kname, &tokens, &ttl_ms, &extra) != 3)
		goto bad;
	for (k = 0; k < BI_NR_KEYS; k++)
		if (!strcmp(kname, blkiso_lease_key_names[k]))
			break;
	if (k == BI_NR_KEYS)
		goto bad;
	if (tokens > (u64)BI_LEASE_TOKENS_MAX) {
		c.why = "tokens above 2^48";
		ret = -ERANGE;
		goto report;
	}
	c.key = k;
	c.tokens = (s64)tokens;
	c.ttl_ns = (u64)ttl_ms * NSEC_PER_MSEC;
	ret = blkiso_lease_fn(dev, &c);
	if (!ret)
		return 0;
report:
	pr_warn_ratelimited("blkiso: %s: lease: %s\n", dm_disk(dev->md)->disk_name, c.why);
	return ret;
bad:
	pr_warn_ratelimited("blkiso: %s: lease: expected \"<cgroup> runits|wunits|riops|wiops <tokens> <ttl_ms>\"\n",
			    dm_disk(dev->md)->disk_name);
	return -EINVAL;
}

static ssize_t dev_lease_store(struct kobject *kobj, struct kobj_attribute *a,
			       const char *buf, size_t len)
{
	return blkiso_dev_line_store(kobj, buf, len, blkiso_lease_line);
}

struct kobj_attribute blkiso_dev_lease_attr = __ATTR(lease, 0200, NULL, dev_lease_store);

/*
 * One line: for each capped key, "<key>.left=N <key>.ttl_ms=N
 * <key>.granted=N <key>.spent=N <key>.expired=N"; "none" without caps.
 */
static ssize_t tenant_lease_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	struct blkiso_tenant *t = container_of(kobj, struct blkiso_tenant, kobj);
	struct bi_lease_state st;
	u64 now = ktime_get_ns();
	int k, n = 0;
	u32 on;

	rcu_read_lock();
	on = bi_meter_cfg(&blkiso_quota(t)->meter)->key_on;
	rcu_read_unlock();
	for (k = 0; k < BI_NR_KEYS; k++) {
		const char *kn = blkiso_lease_key_names[k];

		if (!(on & (1U << k)))
			continue;
		/* tokens 0: a query, under the key's lock */
		bi_global_lease(&blkiso_quota(t)->meter.key[k], 0, 0, now, &st);
		n += sysfs_emit_at(buf, n, "%s%s.left=%lld %s.ttl_ms=%llu %s.granted=%llu %s.spent=%llu %s.expired=%llu",
				   n ? " " : "", kn, st.tokens, kn,
				   div_u64(st.ttl_left_ns + NSEC_PER_MSEC - 1, NSEC_PER_MSEC),
				   kn, st.granted, kn, st.spent, kn, st.expired);
	}
	if (!n)
		n = sysfs_emit(buf, "none");
	return n + sysfs_emit_at(buf, n, "\n");
}

struct kobj_attribute blkiso_tenant_lease_attr = __ATTR(lease, 0444, tenant_lease_show, NULL);
