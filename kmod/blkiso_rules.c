// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_rules.c - device-level rules: quotas that follow cgroups.
 *
 *   /sys/kernel/blkiso/dm-N/rule   "<glob> key=value..." adds (or replaces)
 *                                  a rule; "del <glob>" removes it (w)
 *   /sys/kernel/blkiso/dm-N/rules  one "<glob> <canonical line>" a rule (r)
 *
 * A rule gives its line to every cgroup whose path matches its glob
 * (kmod/core/pathrule.c: "*" within a component, "**" across components,
 * the most specific glob wins), when that cgroup's tenant is created: a
 * container stopped and started again (rmdir + mkdir: a new cgroup id) is
 * under its quota from its first bio.  An explicit tenant line beats every
 * rule; `tenant del` hands the tenant back to the rules.  Adding or
 * removing a rule re-evaluates every existing tenant that has no tenant
 * line.  Rules live in the device registry (by dev_t), so they survive
 * table reloads like the tenants do.  At most BI_RULES_MAX (64) rules per
 * device.
 *
 * Matching happens in .map, without sleeping, not in a work item that
 * would hold a new cgroup's first bios: cgroup_path() is kernfs_path(),
 * which takes only kernfs_rename_lock, a spinning lock taken with IRQs
 * saved (the kernel's cgroup tracepoints call it under a spinlock); the
 * sleeping one is cgroup_path_ns(), which takes cgroup_mutex and is not
 * used here.  So the first bio of a new cgroup pays, once, one path walk
 * up the kernfs tree and one glob match per rule (and per ancestor level:
 * an ancestor without a tenant whose path matches a rule gets its tenant
 * then, so that a quota on "/system.slice/docker-*.scope" covers the
 * processes in that scope's child cgroups); a device without rules pays
 * nothing.  The path is built in a buffer of the rule set, under its
 * spinlock: no allocation on that path.  A path longer than
 * BLKISO_RULE_PATH_MAX - 1 bytes matches no rule.  The root cgroup never
 * takes a rule (io.max has no root quota either), nor does the kernel
 * tenant.
 */
#include <linux/cgroup.h>
#include <linux/device-mapper.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "blkiso.h"
#include "core/pathrule.h"

/* The longest cgroup path a rule can match, with its NUL. */
#define BLKISO_RULE_PATH_MAX	1024

struct blkiso_rule {
	char glob[BI_GLOB_MAX];
	struct bi_tenant_conf conf;
};

/* A device's rules, replaced whole (RCU) on every change. */
struct blkiso_rules {
	spinlock_t path_lock;		/* path[]: one match at a time */
	char path[BLKISO_RULE_PATH_MAX];
	u32 n;
	const char *globs[BI_RULES_MAX];	/* r[i].glob, for bi_glob_best() */
	struct blkiso_rule r[];
};

static struct blkiso_rules *blkiso_rules_alloc(u32 n)
{
	struct blkiso_rules *rs;

	rs = kvzalloc(struct_size(rs, r, n), GFP_KERNEL);
	if (rs) {
		spin_lock_init(&rs->path_lock);
		rs->n = n;
	}
	return rs;
}

void blkiso_rules_free(struct blkiso_dev *dev)
{
	kvfree(rcu_dereference_protected(dev->rules, true));
}

/* The best rule for cgroup path @path, or NULL. */
static const struct blkiso_rule *blkiso_rules_best(const struct blkiso_rules *rs,
						   const char *path)
{
	int i = bi_glob_best(rs->globs, rs->n, path);

	return i < 0 ? NULL : &rs->r[i];
}

/*
 * Give every ancestor of @cgrp below the root that has no tenant and
 * matches a rule its tenant, configured by that rule, outermost first (so
 * each one links to the matched ancestors above it).  @path holds @cgrp's
 * path; it is cut and restored in place.  Never sleeps.
 */
static void blkiso_rules_ancestors(struct blkiso_dev *dev, const struct blkiso_rules *rs,
				   struct cgroup *cgrp, char *path)
{
	const struct blkiso_rule *r;
	struct cgroup *anc;
	char *end = path;
	int level;

	for (level = 1; level < cgrp->level; level++) {
		end = strchr(end + 1, '/');
		if (!end)
			return;
		anc = cgroup_ancestor(cgrp, level);
		if (!anc || blkiso_tenant_find(dev, cgroup_id(anc)))
			continue;
		*end = '\0';
		r = blkiso_rules_best(rs, path);
		*end = '/';
		if (r)
			blkiso_tenant_add_preset(dev, anc, &r->conf);
	}
}

/*
 * .map, creating the tenant @t of @cgrp (not yet published): the best
 * rule's line, and the tenants of matching ancestors.  -ENOMEM: no memory
 * for the line's quota and per-CPU area; @t must not be published (a counted-only
 * tenant would escape its rule), the next bio tries again.  Caller holds
 * rcu_read_lock(); never sleeps.
 */
int blkiso_rules_new_tenant(struct blkiso_dev *dev, struct blkiso_tenant *t,
			    struct cgroup *cgrp)
{
	struct blkiso_rules *rs = rcu_dereference(dev->rules);
	const struct blkiso_rule *r;
	unsigned long flags;
	int len, ret = 0;

	if (!rs || !cgroup_parent(cgrp))
		return 0;
	spin_lock_irqsave(&rs->path_lock, flags);
	len = cgroup_path(cgrp, rs->path, sizeof(rs->path));
	if (len > 0 && len < sizeof(rs->path)) {
		r = blkiso_rules_best(rs, rs->path);
		if (r)
			ret = blkiso_tenant_preset(t, &r->conf);
		blkiso_rules_ancestors(dev, rs, cgrp, rs->path);
	}
	spin_unlock_irqrestore(&rs->path_lock, flags);
	return ret;
}

/*
 * Tenant @t (no tenant line) takes the best rule's line now, or goes back
 * to counted only if no rule matches it any more.  Caller holds
 * dev->conf_mutex; @path is a BLKISO_RULE_PATH_MAX buffer.
 */
static void blkiso_rules_eval(struct blkiso_dev *dev, const struct blkiso_rules *rs,
			      struct blkiso_tenant *t, char *path,
			      struct bi_tenant_conf *scratch)
{
	const struct blkiso_rule *r = NULL;
	struct cgroup *cgrp;
	int len;

	if (t->cgid == BLKISO_KERNEL_CGID || t->gone || (t->configured && !t->from_rule))
		return;
	cgrp = cgroup_get_from_id(t->cgid);
	if (IS_ERR(cgrp))
		return;
	len = cgroup_parent(cgrp) ? cgroup_path(cgrp, path, BLKISO_RULE_PATH_MAX) : -1;
	if (rs && len > 0 && len < BLKISO_RULE_PATH_MAX) {
		r = blkiso_rules_best(rs, path);
		rcu_read_lock();
		blkiso_rules_ancestors(dev, rs, cgrp, path);
		rcu_read_unlock();
	}
	cgroup_put(cgrp);
	if (r) {
		if (t->from_rule && !memcmp(&blkiso_quota(t)->conf, &r->conf, sizeof(r->conf)))
			return;
		if (blkiso_tenant_quota_get(t, GFP_KERNEL)) {
			pr_warn_ratelimited("blkiso: %s: tenant %llu: no memory for its quota and per-CPU counters: rule not applied\n",
					    dm_disk(dev->md)->disk_name, t->cgid);
			return;
		}
		t->from_rule = true;
		blkiso_tenant_apply(t, &r->conf, true);
	} else if (t->from_rule) {
		bi_tenant_conf_init(scratch);
		t->from_rule = false;
		blkiso_tenant_apply(t, scratch, false);
	}
}

/*
 * Re-evaluate @t alone (its tenant line was deleted, or it was created by
 * a tenant line: its matching ancestors get their tenants as from .map).
 * conf_mutex held.
 */
void blkiso_rules_eval_tenant(struct blkiso_dev *dev, struct blkiso_tenant *t)
{
	struct bi_tenant_conf *scratch;
	char *path;

	if (!rcu_access_pointer(dev->rules) && !t->from_rule)
		return;
	path = kmalloc(BLKISO_RULE_PATH_MAX, GFP_KERNEL);
	scratch = kmalloc(sizeof(*scratch), GFP_KERNEL);
	if (path && scratch) {
		blkiso_rules_eval(dev, rcu_dereference_protected(dev->rules,
				  lockdep_is_held(&dev->conf_mutex)), t, path, scratch);
		/* matching ancestors may have got their tenants */
		blkiso_relink(dev);
	}
	kfree(scratch);
	kfree(path);
}

/* Every tenant after the rules changed.  conf_mutex held. */
static void blkiso_rules_eval_all(struct blkiso_dev *dev, char *path,
				  struct bi_tenant_conf *scratch)
{
	const struct blkiso_rules *rs;
	struct blkiso_tenant *t;

	rs = rcu_dereference_protected(dev->rules, lockdep_is_held(&dev->conf_mutex));
	/* tenants leave the list only under conf_mutex (collector, device) */
	list_for_each_entry_rcu(t, &dev->tenant_list, list, true)
		blkiso_rules_eval(dev, rs, t, path, scratch);
	blkiso_relink(dev);
}

static int blkiso_rule_fail(struct blkiso_dev *dev, char *msg, int err, const char *fmt,
			    const char *arg)
{
	char buf[BLKISO_MSG_MAX];

	snprintf(buf, sizeof(buf), fmt, arg);
	pr_warn_ratelimited("blkiso: %s: rule: %s\n", dm_disk(dev->md)->disk_name, buf);
	if (msg)
		strscpy(msg, buf, BLKISO_MSG_MAX);
	return err;
}

/*
 * Add (or replace) the rule @glob -> @line, or with @del remove the rule
 * @glob; with @dry only check.  Nothing changes on error; @msg (may be
 * NULL; BLKISO_MSG_MAX bytes) and the kernel log say why.
 */
int blkiso_rule_set(struct blkiso_dev *dev, const char *glob, size_t glen,
		    const char *line, size_t len, bool del, bool dry, char *msg)
{
	struct blkiso_rules *old, *new = NULL;
	struct bi_tenant_conf *conf;
	struct bi_parse_err err;
	char gbuf[BI_GLOB_MAX], *path = NULL;
	u32 i, at, n;
	int ret;

	if (bi_glob_check(glob, glen, &err))
		return blkiso_rule_fail(dev, msg, -EINVAL, "%s", err.msg);
	memcpy(gbuf, glob, glen);
	gbuf[glen] = '\0';
	conf = kmalloc(sizeof(*conf), GFP_KERNEL);
	if (!conf)
		return -ENOMEM;
	bi_tenant_conf_init(conf);
	if (del) {
		ret = 0;
	} else if (!len || strspn(line, " \t\n") >= len) {
		ret = blkiso_rule_fail(dev, msg, -EINVAL,
				       "%s: a rule needs at least one key=value", gbuf);
	} else {
		ret = bi_conf_parse(conf, line, len, &err);
		if (ret)
			ret = blkiso_rule_fail(dev, msg, -EINVAL, "%s", err.msg);
	}
	if (ret)
		goto out;

	mutex_lock(&dev->conf_mutex);
	old = rcu_dereference_protected(dev->rules, lockdep_is_held(&dev->conf_mutex));
	n = old ? old->n : 0;
	for (at = 0; at < n && strcmp(old->r[at].glob, gbuf); at++)
		;
	if (del && at == n) {
		ret = blkiso_rule_fail(dev, msg, -ENOENT, "%s: no such rule", gbuf);
		goto unlock;
	}
	if (!del && at == n && n >= BI_RULES_MAX) {
		ret = blkiso_rule_fail(dev, msg, -ENOSPC, "%s: too many rules (64 per device)",
				       gbuf);
		goto unlock;
	}
	if (dry)
		goto unlock;
	n = del ? n - 1 : (at == n ? n + 1 : n);
	ret = -ENOMEM;
	path = kmalloc(BLKISO_RULE_PATH_MAX, GFP_KERNEL);
	if (!path)
		goto unlock;
	if (n) {
		new = blkiso_rules_alloc(n);
		if (!new)
			goto unlock;
		for (i = 0; old && i < old->n; i++) {
			u32 to = del && i > at ? i - 1 : i;

			if (del && i == at)
				continue;
			new->r[to] = old->r[i];
		}
		if (!del) {
			strscpy(new->r[at].glob, gbuf, sizeof(new->r[at].glob));
			new->r[at].conf = *conf;
		}
		for (i = 0; i < n; i++)
			new->globs[i] = new->r[i].glob;
	}
	rcu_assign_pointer(dev->rules, new);
	/* .map matches under RCU: after this, every tenant on the list saw @new */
	synchronize_rcu();
	kvfree(old);
	blkiso_rules_eval_all(dev, path, conf);
	ret = 0;
unlock:
	mutex_unlock(&dev->conf_mutex);
out:
	kfree(path);
	kfree(conf);
	return ret;
}

/* "<glob> key=value..." or "del <glob>": the "rule" file and `dmsetup message`. */
int blkiso_rule_line(struct blkiso_dev *dev, const char *line, size_t len)
{
	size_t n = 0;
	bool del = false;

	while (len && isspace(line[len - 1]))
		len--;
	while (len && isspace(*line))
		line++, len--;
	while (n < len && !isspace(line[n]))
		n++;
	if (n == 3 && !memcmp(line, "del", 3)) {
		del = true;
		line += n;
		len -= n;
		while (len && isspace(*line))
			line++, len--;
		for (n = 0; n < len && !isspace(line[n]); n++)
			;
		if (n != len)
			return blkiso_rule_fail(dev, NULL, -EINVAL, "%s",
						"expected \"del <glob>\" alone");
	}
	if (!n || n >= BI_GLOB_MAX) {
		struct bi_parse_err err;

		if (n && bi_glob_check(line, n, &err))
			return blkiso_rule_fail(dev, NULL, -EINVAL, "%s", err.msg);
		return blkiso_rule_fail(dev, NULL, -EINVAL, "%s",
					"expected \"<glob> key=value...\" or \"del <glob>\"");
	}
	return blkiso_rule_set(dev, line, n, line + n, len - n, del, false, NULL);
}

/*
 * Copy up to @capacity rules, glob and canonical line, into @recs; the
 * number of rules.  For the ioctl.
 */
int blkiso_rules_snapshot(struct blkiso_dev *dev, struct blkiso_rule_rec *recs,
			  u32 capacity, u32 *count)
{
	const struct blkiso_rules *rs;
	u32 i, n;

	mutex_lock(&dev->conf_mutex);
	rs = rcu_dereference_protected(dev->rules, lockdep_is_held(&dev->conf_mutex));
	n = rs ? rs->n : 0;
	for (i = 0; i < n && i < capacity; i++) {
		strscpy(recs[i].glob, rs->r[i].glob, sizeof(recs[i].glob));
		if (bi_conf_format(&rs->r[i].conf, recs[i].line, sizeof(recs[i].line)) < 0)
			recs[i].line[0] = '\0';
	}
	mutex_unlock(&dev->conf_mutex);
	*count = i;
	return n;
}

#define to_dev(k) container_of(k, struct blkiso_dev, kobj)

static ssize_t dev_rules_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	struct blkiso_dev *dev = to_dev(kobj);
	const struct blkiso_rules *rs;
	char line[BI_CONF_LINE_MAX];
	int i, n = 0, len, left = 0;

	mutex_lock(&dev->conf_mutex);
	rs = rcu_dereference_protected(dev->rules, lockdep_is_held(&dev->conf_mutex));
	for (i = 0; rs && i < rs->n; i++) {
		if (bi_conf_format(&rs->r[i].conf, line, sizeof(line)) < 0)
			line[0] = '\0';
		len = strlen(rs->r[i].glob) + 1 + strlen(line) + 1;
		/* room for the closing note */
		if (n + len > PAGE_SIZE - 64) {
			left = rs->n - i;
			break;
		}
		n += sysfs_emit_at(buf, n, "%s %s\n", rs->r[i].glob, line);
	}
	mutex_unlock(&dev->conf_mutex);
	if (left)
		n += sysfs_emit_at(buf, n, "# %d more: blkisoctl rule list\n", left);
	return n;
}

static ssize_t dev_rule_store(struct kobject *kobj, struct kobj_attribute *a,
			      const char *buf, size_t len)
{
	return blkiso_dev_line_store(kobj, buf, len, blkiso_rule_line);
}

struct kobj_attribute blkiso_dev_rules_attr = __ATTR(rules, 0444, dev_rules_show, NULL);
struct kobj_attribute blkiso_dev_rule_attr = __ATTR(rule, 0200, NULL, dev_rule_store);
