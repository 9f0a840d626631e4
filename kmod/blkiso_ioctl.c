// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_ioctl.c - /dev/blkiso, the versioned ioctl interface of
 * uapi/linux/blkiso.h: quotas and device lines set and read by dev_t and
 * cgroup id, and a snapshot of every tenant's counters in one call.
 *
 * Each call copies its argument in after checking the header (size and
 * version), works on a kernel copy under blkiso_dev_call() (the registry
 * mutex keeps the device alive), and copies results out with no lock held.
 * Lines go through the same functions as sysfs and `dmsetup message`; a
 * dry merge first captures the parser's message for the caller.
 */
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <linux/blkiso.h>

#include "blkiso.h"
#include "core/pathrule.h"

/* The kernel's counters are the uapi's, in the same order. */
static_assert((int)BLKISO_NR_STATS == (int)BLKISO_STAT_NR);
static_assert((int)BLKISO_ARRIVED == (int)BLKISO_STAT_ARRIVED);
static_assert((int)BLKISO_COMPLETED == (int)BLKISO_STAT_COMPLETED);
static_assert((int)BLKISO_WUNITS == (int)BLKISO_STAT_WUNITS);
static_assert(BLKISO_LINE_MAX == BI_CONF_LINE_MAX);
static_assert(BLKISO_MSG_MAX == BI_PARSE_MSG_MAX);
static_assert(BLKISO_GLOB_MAX == BI_GLOB_MAX && BLKISO_RULES_MAX == BI_RULES_MAX);
/* Version 2 only appended to the stats record. */
static_assert(offsetof(struct blkiso_stats_rec, lat_sum_us) == BLKISO_STATS_REC_SIZE_V1);

/* Copy in a whole argument struct of @size bytes after checking its header. */
static int blkiso_ioc_fetch(void __user *uarg, void *karg, u32 size, bool any_version)
{
	struct blkiso_ioc_hdr hdr;

	if (copy_from_user(&hdr, uarg, sizeof(hdr)))
		return -EFAULT;
	if (hdr.size != size)
		return -EINVAL;
	/* every version up to ours: later ones only added */
	if (!any_version && (!hdr.version || hdr.version > BLKISO_IOCTL_VERSION))
		return -EINVAL;
	if (copy_from_user(karg, uarg, size))
		return -EFAULT;
	return 0;
}

/* The dm device's dev_t; false if major:minor cannot be one. */
static bool blkiso_ioc_devt(u32 major, u32 minor, dev_t *devt)
{
	if (major > MAJOR(~0U) || minor > MINORMASK)
		return false;
	*devt = MKDEV(major, minor);
	return true;
}

/* A line field must hold its NUL. */
static int blkiso_ioc_line_len(const char *line)
{
	size_t n = strnlen(line, BLKISO_LINE_MAX);

	return n < BLKISO_LINE_MAX ? (int)n : -EINVAL;
}

static long blkiso_ioc_get_version(void __user *uarg)
{
	struct blkiso_ioc_version v;
	int ret;

	ret = blkiso_ioc_fetch(uarg, &v, sizeof(v), true);
	if (ret)
		return ret;
	if (v.reserved)
		return -EINVAL;
	v.hdr.version = BLKISO_IOCTL_VERSION;
	v.ioctl_version = BLKISO_IOCTL_VERSION;
	v.nr_stats = BLKISO_STAT_NR;
	v.rec_size = sizeof(struct blkiso_stats_rec);
	v.reserved = 0;
	memset(v.module_version, 0, sizeof(v.module_version));
	strscpy(v.module_version, BLKISO_VERSION, sizeof(v.module_version));
	return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

/* ---- tenants ---- */

/*
 * Merge the line into a copy of the tenant's configuration (the defaults
 * if it has none yet): the parser's verdict and message, nothing changed.
 * Caller: blkiso_dev_call() (registry mutex); takes dev->conf_mutex.
 */
static int blkiso_ioc_tenant_check(struct blkiso_dev *dev, struct blkiso_ioc_tenant *a,
				   int len)
{
	struct bi_tenant_conf *conf;
	struct bi_parse_err err;
	struct blkiso_tenant *t;
	int ret;

	conf = kmalloc(sizeof(*conf), GFP_KERNEL);
	if (!conf)
		return -ENOMEM;
	/* found and used in one conf_mutex section (blkiso.h) */
	mutex_lock(&dev->conf_mutex);
	t = blkiso_tenant_find_conf(dev, a->cgid);
	if (t && !t->from_rule)
		*conf = blkiso_quota(t)->conf;
	else
		bi_tenant_conf_init(conf);	/* a tenant line replaces a rule's */
	mutex_unlock(&dev->conf_mutex);
	ret = blkiso_parse_errno(bi_conf_merge(conf, a->line, len, &err));
	kfree(conf);
	if (ret)
		strscpy(a->msg, err.msg, sizeof(a->msg));
	return ret;	/* the parser's cause: EINVAL, ERANGE, E2BIG */
}

static int blkiso_ioc_set_tenant_fn(struct blkiso_dev *dev, void *arg)
{
	struct blkiso_ioc_tenant *a = arg;
	char *buf;
	int len, n, ret;

	len = blkiso_ioc_line_len(a->line);
	if (len < 0) {
		strscpy(a->msg, "line: not NUL-terminated", sizeof(a->msg));
		return len;
	}
	ret = blkiso_ioc_tenant_check(dev, a, len);
	if (ret || (a->flags & BLKISO_F_DRY_RUN))
		return ret;
	/* "<cgroup> key=value...", as the tenant file takes it. */
	buf = kmalloc(BLKISO_LINE_MAX + 32, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (a->cgid == BLKISO_KERNEL_CGID)
		n = scnprintf(buf, BLKISO_LINE_MAX + 32, "kernel %s", a->line);
	else
		n = scnprintf(buf, BLKISO_LINE_MAX + 32, "%llu %s", a->cgid, a->line);
	ret = blkiso_tenant_configure(dev, buf, n);
	kfree(buf);
	if (ret == -EINVAL)
		strscpy(a->msg, "refused: see the kernel log",
			sizeof(a->msg));
	return ret;
}

static int blkiso_ioc_get_tenant_fn(struct blkiso_dev *dev, void *arg)
{
	struct blkiso_ioc_tenant *a = arg;
	struct blkiso_tenant *t;
	int n;

	/* found and used in one conf_mutex section (blkiso.h) */
	mutex_lock(&dev->conf_mutex);
	t = blkiso_tenant_find_conf(dev, a->cgid);
	if (!t) {
		mutex_unlock(&dev->conf_mutex);
		return -ENOENT;
	}
	n = bi_conf_format(&blkiso_quota(t)->conf, a->line, sizeof(a->line));
	a->flags = (t->configured ? BLKISO_F_CONFIGURED : 0) |
		   (t->from_rule ? BLKISO_F_RULE : 0);
	mutex_unlock(&dev->conf_mutex);
	return n < 0 ? -E2BIG : 0;
}

/*
 * What the line ioctls share: SET/GET_TENANT and SET/GET_DEVICE structs
 * both start with the header and major:minor, and hold a line and a
 * message at their own offsets.
 */
struct blkiso_ioc_devref {
	struct blkiso_ioc_hdr hdr;
	__u32 major;
	__u32 minor;
};

static_assert(offsetof(struct blkiso_ioc_tenant, major) ==
	      offsetof(struct blkiso_ioc_devref, major) &&
	      offsetof(struct blkiso_ioc_tenant, minor) ==
	      offsetof(struct blkiso_ioc_devref, minor));
static_assert(offsetof(struct blkiso_ioc_device, major) ==
	      offsetof(struct blkiso_ioc_devref, major) &&
	      offsetof(struct blkiso_ioc_device, minor) ==
	      offsetof(struct blkiso_ioc_devref, minor));

/* blkiso_ioc_flags_ok(): a reserved __u32 follows each flags field. */
static_assert(offsetof(struct blkiso_ioc_tenant, reserved) ==
	      offsetof(struct blkiso_ioc_tenant, flags) + 4);
static_assert(offsetof(struct blkiso_ioc_device, reserved) ==
	      offsetof(struct blkiso_ioc_device, flags) + 4);
static_assert(offsetof(struct blkiso_ioc_rule, reserved) ==
	      offsetof(struct blkiso_ioc_rule, flags) + 4);

struct blkiso_ioc_line_op {
	size_t size;			/* of the whole struct */
	size_t line_off, msg_off;	/* of line[BLKISO_LINE_MAX], msg[BLKISO_MSG_MAX] */
	size_t flags_off;		/* of __u32 flags, followed by __u32 reserved */
	u32 set_flags;			/* the input flags a SET knows */
	int (*set_check)(void *a);	/* before a SET, outside the registry; or NULL */
	int (*set)(struct blkiso_dev *dev, void *a);
	int (*get)(struct blkiso_dev *dev, void *a);
};

/*
 * Input flags a SET does not know, or a reserved field not zero: EINVAL,
 * so that a later version can give them a meaning safely.  A GET's flags
 * are output only (a struct read back may be passed again as it is).
 */
static int blkiso_ioc_flags_ok(const struct blkiso_ioc_line_op *op, bool set,
			       const void *a)
{
	const u32 *f = (const u32 *)((const char *)a + op->flags_off);

	return (!set || !(f[0] & ~op->set_flags)) && !f[1];
}

/*
 * Copy the struct in, run the SET or GET on major:minor's device; a refused
 * SET copies back the parser's message, a GET the whole struct.
 */
static long blkiso_ioc_line(const struct blkiso_ioc_line_op *op, bool set,
			    void __user *uarg)
{
	struct blkiso_ioc_devref *a;
	dev_t devt;
	int ret;

	if (set && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	a = kmalloc(op->size, GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	ret = blkiso_ioc_fetch(uarg, a, op->size, false);
	if (ret)
		goto out;
	ret = -EINVAL;
	if (!blkiso_ioc_devt(a->major, a->minor, &devt) || !blkiso_ioc_flags_ok(op, set, a))
		goto out;
	memset((char *)a + op->msg_off, 0, BLKISO_MSG_MAX);
	if (set) {
		ret = op->set_check ? op->set_check(a) : 0;
		if (!ret)
			ret = blkiso_dev_call(devt, op->set, a);
		if ((ret == -EINVAL || ret == -ERANGE || ret == -E2BIG ||
		     ret == -ENOENT || ret == -ENOSPC) &&
		    copy_to_user(uarg + op->msg_off, (char *)a + op->msg_off, BLKISO_MSG_MAX))
			ret = -EFAULT;
	} else {
		memset((char *)a + op->line_off, 0, BLKISO_LINE_MAX);
		ret = blkiso_dev_call(devt, op->get, a);
		if (!ret && copy_to_user(uarg, a, op->size))
			ret = -EFAULT;
	}
out:
	kfree(a);
	return ret;
}

static int blkiso_ioc_tenant_exists(void *arg)
{
	return blkiso_cgroup_exists(((struct blkiso_ioc_tenant *)arg)->cgid);
}

/* BLKISO_IOC_DEL_TENANT: back to counted only; the line is not read. */
static int blkiso_ioc_del_tenant_fn(struct blkiso_dev *dev, void *arg)
{
	struct blkiso_ioc_tenant *a = arg;
	int ret = blkiso_tenant_deconfigure(dev, a->cgid);

	if (ret == -ENOENT)
		strscpy(a->msg, "no quota on this device", sizeof(a->msg));
	return ret;
}

static const struct blkiso_ioc_line_op blkiso_ioc_tenant_op = {
	.size = sizeof(struct blkiso_ioc_tenant),
	.line_off = offsetof(struct blkiso_ioc_tenant, line),
	.msg_off = offsetof(struct blkiso_ioc_tenant, msg),
	.flags_off = offsetof(struct blkiso_ioc_tenant, flags),
	.set_flags = BLKISO_F_DRY_RUN,
	.set_check = blkiso_ioc_tenant_exists,
	.set = blkiso_ioc_set_tenant_fn,
	.get = blkiso_ioc_get_tenant_fn,
};

static const struct blkiso_ioc_line_op blkiso_ioc_tenant_del_op = {
	.size = sizeof(struct blkiso_ioc_tenant),
	.line_off = offsetof(struct blkiso_ioc_tenant, line),
	.msg_off = offsetof(struct blkiso_ioc_tenant, msg),
	.flags_off = offsetof(struct blkiso_ioc_tenant, flags),
	.set_check = blkiso_ioc_tenant_exists,
	.set = blkiso_ioc_del_tenant_fn,
};

/* ---- rules (version 3) ---- */

static int blkiso_ioc_set_rule_fn(struct blkiso_dev *dev, void *arg)
{
	struct blkiso_ioc_rule *a = arg;
	size_t glen = strnlen(a->glob, sizeof(a->glob));
	int len = blkiso_ioc_line_len(a->line);
	bool del = a->flags & BLKISO_F_DEL;

	if (glen >= sizeof(a->glob) || (!del && len < 0)) {
		strscpy(a->msg, "glob or line: not NUL-terminated", sizeof(a->msg));
		return -EINVAL;
	}
	return blkiso_rule_set(dev, a->glob, glen, a->line, del ? 0 : len, del,
			       a->flags & BLKISO_F_DRY_RUN, a->msg);
}

static const struct blkiso_ioc_line_op blkiso_ioc_rule_op = {
	.size = sizeof(struct blkiso_ioc_rule),
	.line_off = offsetof(struct blkiso_ioc_rule, line),
	.msg_off = offsetof(struct blkiso_ioc_rule, msg),
	.flags_off = offsetof(struct blkiso_ioc_rule, flags),
	.set_flags = BLKISO_F_DRY_RUN | BLKISO_F_DEL,
	.set = blkiso_ioc_set_rule_fn,
};

struct blkiso_ioc_rules_call {
	struct blkiso_ioc_rules a;
	struct blkiso_rule_rec *recs;
};

static int blkiso_ioc_rules_fn(struct blkiso_dev *dev, void *arg)
{
	struct blkiso_ioc_rules_call *c = arg;

	c->a.total = blkiso_rules_snapshot(dev, c->recs, c->a.capacity, &c->a.count);
	return 0;
}

static long blkiso_ioc_rules(void __user *uarg)
{
	struct blkiso_ioc_rules_call c = { };
	dev_t devt;
	long ret;

	ret = blkiso_ioc_fetch(uarg, &c.a, sizeof(c.a), false);
	if (ret)
		return ret;
	if (!blkiso_ioc_devt(c.a.major, c.a.minor, &devt) ||
	    c.a.rec_size != sizeof(struct blkiso_rule_rec))
		return -EINVAL;
	c.a.capacity = min_t(u32, c.a.capacity, BLKISO_RULES_MAX);
	c.a.count = 0;
	if (c.a.capacity) {
		c.recs = kvcalloc(c.a.capacity, sizeof(*c.recs), GFP_KERNEL);
		if (!c.recs)
			return -ENOMEM;
	}
	ret = blkiso_dev_call(devt, blkiso_ioc_rules_fn, &c);
	if (!ret && c.a.count &&
	    copy_to_user(u64_to_user_ptr(c.a.recs), c.recs, c.a.count * sizeof(*c.recs)))
		ret = -EFAULT;
	kvfree(c.recs);
	if (!ret && copy_to_user(uarg, &c.a, sizeof(c.a)))
		ret = -EFAULT;
	return ret;
}

/* ---- devices ---- */

static int blkiso_ioc_set_device_fn(struct blkiso_dev *dev, void *arg)
{
	struct blkiso_ioc_device *a = arg;
	struct bi_parse_err err;
	struct bi_dev_conf conf;
	int len, ret;

	len = blkiso_ioc_line_len(a->line);
	if (len < 0) {
		strscpy(a->msg, "line: not NUL-terminated", sizeof(a->msg));
		return len;
	}
	mutex_lock(&dev->conf_mutex);
	conf = dev->conf;
	mutex_unlock(&dev->conf_mutex);
	ret = blkiso_parse_errno(bi_dev_conf_merge(&conf, a->line, len, &err));
	if (ret) {
		strscpy(a->msg, err.msg, sizeof(a->msg));
		return ret;
	}
	if (a->flags & BLKISO_F_DRY_RUN)
		return 0;
	ret = blkiso_dev_configure(dev, a->line, len);
	if (ret == -EINVAL)
		strscpy(a->msg, "refused: see the kernel log",
			sizeof(a->msg));
	return ret;
}

static int blkiso_ioc_get_device_fn(struct blkiso_dev *dev, void *arg)
{
	struct blkiso_ioc_device *a = arg;
	int n;

	mutex_lock(&dev->conf_mutex);
	n = bi_dev_conf_format(&dev->conf, a->line, sizeof(a->line));
	mutex_unlock(&dev->conf_mutex);
	return n < 0 ? -E2BIG : 0;
}

static const struct blkiso_ioc_line_op blkiso_ioc_device_op = {
	.size = sizeof(struct blkiso_ioc_device),
	.line_off = offsetof(struct blkiso_ioc_device, line),
	.msg_off = offsetof(struct blkiso_ioc_device, msg),
	.flags_off = offsetof(struct blkiso_ioc_device, flags),
	.set_flags = BLKISO_F_DRY_RUN,
	.set = blkiso_ioc_set_device_fn,
	.get = blkiso_ioc_get_device_fn,
};

/* ---- statistics ---- */

struct blkiso_ioc_snap {
	struct blkiso_ioc_stats *a;
	struct blkiso_stats_rec *recs;	/* kvmalloc'ed, a->capacity of them */
};

/*
 * Fill the records walking the tenant list under RCU with IRQs on (anyone
 * may call this: no lock, no IRQs-off section, one tenant's fold at a
 * time); the per-CPU counters are read as sysfs reads them.
 */
static int blkiso_ioc_stats_fn(struct blkiso_dev *dev, void *arg)
{
	struct blkiso_ioc_snap *s = arg;
	struct blkiso_ioc_stats *a = s->a;
	struct blkiso_tenant *t;
	u32 room, n = 0, total = 0;
	bool lat;

	/* Room for the tenants there are now; more may come meanwhile. */
	room = min_t(u32, a->capacity, READ_ONCE(dev->nr_tenants));
	if (room) {
		s->recs = kvcalloc(room, sizeof(*s->recs), GFP_KERNEL);
		if (!s->recs)
			return -ENOMEM;
	}
	rcu_read_lock();
	list_for_each_entry_rcu(t, &dev->tenant_list, list) {
		struct blkiso_stats_rec *r;

		total++;
		if (n >= room)
			continue;
		r = &s->recs[n++];
		r->cgid = t->cgid;
		lat = blkiso_tenant_stats(t, r->stat, r->lat, &r->lat_sum_us);
		r->p50_us = blkiso_lat_pct(r->lat, 50);
		r->p99_us = blkiso_lat_pct(r->lat, 99);
		r->queued = blkiso_tenant_queued(t);
		r->flags = (READ_ONCE(t->configured) ? BLKISO_F_CONFIGURED : 0) |
			   (t->from_rule ? BLKISO_F_RULE : 0) |
			   (lat ? BLKISO_F_LATENCY : 0);
	}
	rcu_read_unlock();
	a->queued = READ_ONCE(dev->nr_parked);
	a->draining = READ_ONCE(dev->draining);
	a->alloc_failures = READ_ONCE(dev->alloc_failures);
	a->count = n;
	a->total = total;
	return 0;
}

static long blkiso_ioc_stats(void __user *uarg)
{
	struct blkiso_ioc_snap *s;
	struct blkiso_ioc_stats *a;
	dev_t devt;
	u32 i;
	int ret;

	s = kzalloc(sizeof(*s) + sizeof(*a), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	a = (struct blkiso_ioc_stats *)(s + 1);
	s->a = a;
	ret = blkiso_ioc_fetch(uarg, a, sizeof(*a), false);
	if (ret)
		goto out;
	ret = -EINVAL;
	/* a version 1 caller knows the first part of each record only */
	if (!blkiso_ioc_devt(a->major, a->minor, &devt) ||
	    a->rec_size != (a->hdr.version == 1 ? BLKISO_STATS_REC_SIZE_V1 :
			    sizeof(struct blkiso_stats_rec)) ||
	    (a->capacity && !a->recs))
		goto out;
	a->capacity = min_t(u32, a->capacity, BLKISO_STATS_MAX);
	ret = blkiso_dev_call(devt, blkiso_ioc_stats_fn, s);
	if (ret)
		goto out;
	ret = -EFAULT;
	for (i = 0; i < a->count; i++)
		if (copy_to_user(u64_to_user_ptr(a->recs) + (size_t)i * a->rec_size,
				 &s->recs[i], a->rec_size))
			goto out;
	if (copy_to_user(uarg, a, sizeof(*a)))
		goto out;
	ret = 0;
out:
	kvfree(s->recs);
	kfree(s);
	return ret;
}

struct blkiso_ioc_ring_arg {
	struct blkiso_ioc_ring *a;
	struct blkiso_tick_rec *recs;	/* BLKISO_RING_DEV of them */
};

static int blkiso_ioc_ring_fn(struct blkiso_dev *dev, void *arg)
{
	struct blkiso_ioc_ring_arg *r = arg;
	struct blkiso_ioc_ring *a = r->a;
	struct blkiso_tenant *t = NULL;
	int n;

	rcu_read_lock();
	if (a->flags & BLKISO_RING_F_TENANT) {
		t = blkiso_tenant_find(dev, a->cgid);
		if (!t) {
			rcu_read_unlock();
			return -ENOENT;
		}
	}
	n = blkiso_fb_ring(dev, t, r->recs, min_t(u32, a->capacity, BLKISO_RING_DEV));
	rcu_read_unlock();
	a->count = n;
	return 0;
}

/* BLKISO_IOC_RING: the feedback tick's last records, device or tenant. */
static long blkiso_ioc_ring(void __user *uarg)
{
	struct blkiso_ioc_ring_arg r = { };
	struct blkiso_ioc_ring a;
	dev_t devt;
	int ret;

	ret = blkiso_ioc_fetch(uarg, &a, sizeof(a), false);
	if (ret)
		return ret;
	if (!blkiso_ioc_devt(a.major, a.minor, &devt) ||
	    a.rec_size != sizeof(struct blkiso_tick_rec) ||
	    (a.flags & ~BLKISO_RING_F_TENANT) || (a.capacity && !a.recs))
		return -EINVAL;
	r.a = &a;
	r.recs = kcalloc(BLKISO_RING_DEV, sizeof(*r.recs), GFP_KERNEL);
	if (!r.recs)
		return -ENOMEM;
	ret = blkiso_dev_call(devt, blkiso_ioc_ring_fn, &r);
	if (!ret && a.count &&
	    copy_to_user(u64_to_user_ptr(a.recs), r.recs, (size_t)a.count * sizeof(*r.recs)))
		ret = -EFAULT;
	if (!ret && copy_to_user(uarg, &a, sizeof(a)))
		ret = -EFAULT;
	kfree(r.recs);
	return ret;
}

/*
 * Concurrency contract: process context, any number of callers at once;
 * each call takes the registry mutex, then a device's conf_mutex or lock.
 */
static long blkiso_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case BLKISO_IOC_GET_VERSION:
		return blkiso_ioc_get_version(uarg);
	case BLKISO_IOC_SET_TENANT:
	case BLKISO_IOC_GET_TENANT:
		return blkiso_ioc_line(&blkiso_ioc_tenant_op,
				       cmd == BLKISO_IOC_SET_TENANT, uarg);
	case BLKISO_IOC_SET_DEVICE:
	case BLKISO_IOC_GET_DEVICE:
		return blkiso_ioc_line(&blkiso_ioc_device_op,
				       cmd == BLKISO_IOC_SET_DEVICE, uarg);
	case BLKISO_IOC_DEL_TENANT:
		return blkiso_ioc_line(&blkiso_ioc_tenant_del_op, true, uarg);
	case BLKISO_IOC_STATS:
		return blkiso_ioc_stats(uarg);
	case BLKISO_IOC_RING:
		return blkiso_ioc_ring(uarg);
	case BLKISO_IOC_SET_RULE:
		return blkiso_ioc_line(&blkiso_ioc_rule_op, true, uarg);
	case BLKISO_IOC_RULES:
		return blkiso_ioc_rules(uarg);
	case BLKISO_IOC_LEASE:
		return blkiso_ioc_lease(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations blkiso_ctl_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = blkiso_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* Counters are readable by all, as in sysfs; setting needs CAP_SYS_ADMIN. */
static struct miscdevice blkiso_ctl_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "blkiso",
	.fops = &blkiso_ctl_fops,
	.mode = 0644,
};

int blkiso_ioctl_init(void)
{
	return misc_register(&blkiso_ctl_misc);
}

void blkiso_ioctl_exit(void)
{
	misc_deregister(&blkiso_ctl_misc);
}
