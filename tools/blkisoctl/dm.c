// SPDX-License-Identifier: GPL-2.0
/*
 * dm.c - attach and detach: create a dm device with one blkiso segment over
 * a whole block device ("0 <sectors> blkiso DEV 0"), or remove one, through
 * libdevmapper.  Without udev (no /run/udev/control) libdevmapper makes the
 * /dev/mapper nodes itself, as `dmsetup --noudevsync` does.
 *
 * An attached device has the dm UUID "BLKISO-<name>": udev's dm rules give
 * it /dev/disk/by-id/dm-uuid-BLKISO-<name>, and blkiso's own rules
 * (dist/60-blkiso.rules) stop the lower device from claiming the
 * filesystem's /dev/disk/by-uuid and by-label names, after the "change"
 * event attach sends it.
 *
 * resize: a dm table has a fixed length, so a disk that grew under blkiso
 * (a cloud volume, a LUN, a loop file) shows its old size through it until
 * the table is loaded again with the new one, as lvextend does to an LV.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <libgen.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "blkisoctl.h"

void dm_udev_setup(void)
{
	if (access("/run/udev/control", F_OK)) {
		setenv("DM_DISABLE_UDEV", "1", 1);
		dm_udev_set_sync_support(0);
	}
}

/* Run @dmt with udev synchronisation (or none) so that nodes exist after. */
int dm_run_synced(struct dm_task *dmt)
{
	uint32_t cookie = 0;
	int ok;

	if (!dm_task_set_cookie(dmt, &cookie, 0))
		return 0;
	ok = dm_task_run(dmt);
	dm_udev_wait(cookie);
	return ok;
}

/*
 * Size in sectors of @path, opened exclusively: fails if it is held; and
 * whether it is read-only (then so is the dm device over it, as LVM makes
 * an LV on a read-only PV: a write through a read-write table would reach
 * the disk, the block layer only warns).
 */
static int lower_size(const char *path, uint64_t *sectors, bool *ro)
{
	uint64_t bytes;
	int fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC), flag = 0;

	if (fd < 0) {
		int e = errno;

		if (e == EBUSY)
			err("%s: in use (mounted, or held by another device); not attaching (under LVM: attach --live)",
			    path);
		else
			err("%s: %s", path, strerror(e));
		return errno_exit(e);
	}
	if (ioctl(fd, BLKGETSIZE64, &bytes) || ioctl(fd, BLKROGET, &flag)) {
		err("%s: not a block device", path);
		close(fd);
		return BX_INPUT;
	}
	close(fd);
	*sectors = bytes >> 9;
	*ro = flag;
	return BX_OK;
}

/*
 * NAME's table when it is one blkiso segment (a table starts at sector 0):
 * its length, its parameters ("M:m OFFSET ...") and the device's info.  0,
 * or -ENOENT (no such device), -EINVAL (another target, or none: @type
 * gets its name, "" for none), -EMLINK (several segments), -E2BIG
 * (parameters longer than @size), -ENOMEM.  Quiet: the callers say why.
 */
static int blkiso_segment(const char *name, uint64_t *length, char *params, size_t size,
			  char *type, size_t tsize, struct dm_info *info)
{
	char *t = NULL, *p = NULL;
	struct dm_task *dmt;
	uint64_t start;
	void *next;
	int ret = -ENOENT;

	dmt = dm_task_create(DM_DEVICE_TABLE);
	if (!dmt)
		return -ENOMEM;
	if (!dm_task_set_name(dmt, name) || !dm_task_run(dmt) ||
	    !dm_task_get_info(dmt, info) || !info->exists)
		goto out;
	next = dm_get_next_target(dmt, NULL, &start, length, &t, &p);
	snprintf(type, tsize, "%s", t ? t : "");
	if (!t || strcmp(t, "blkiso") || !p)
		ret = -EINVAL;
	else if (next)
		ret = -EMLINK;
	else if (strlen(p) >= size)
		ret = -E2BIG;
	else
		ret = 0;
	if (!ret)
		snprintf(params, size, "%s", p);
out:
	dm_task_destroy(dmt);
	return ret;
}

int dm_blkiso_lower(const char *name, unsigned int *major, unsigned int *minor)
{
	char params[4200], type[32];
	struct dm_info info;
	uint64_t length;
	struct bdev dev;
	int ret;

	/* A table query of a missing device logs an error: ask first. */
	if (dm_lookup(name, &dev))
		return -ENOENT;
	ret = blkiso_segment(name, &length, params, sizeof(params), type, sizeof(type), &info);
	if (ret == -ENOENT || ret == -ENOMEM)
		return ret;
	return !ret && sscanf(params, "%u:%u", major, minor) == 2 ? 0 : -EINVAL;
}

/* Let udev look at the lower device again: held or freed (see the top). */
void lower_changed(unsigned int maj, unsigned int min)
{
	char path[64];
	FILE *f;

	if (access("/run/udev/control", F_OK))
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", maj, min);
	f = fopen(path, "w");
	if (f) {
		fputs("change", f);
		fclose(f);
	}
}

int dm_attach(const char *lower, const char *name)
{
	char params[4200], uuid[sizeof(DM_UUID_PREFIX) + 128];
	struct dm_task *dmt;
	uint64_t sectors = 0;
	struct bdev dev;
	bool ro = false;
	int ret;

	ret = lower_size(lower, &sectors, &ro);
	if (ret)
		return ret;
	if (!dm_lookup(name, &dev)) {
		err("%s: a dm device of that name exists", name);
		return BX_INPUT;
	}
	snprintf(params, sizeof(params), "%s 0", lower);
	snprintf(uuid, sizeof(uuid), DM_UUID_PREFIX "%s", name);
	dm_udev_setup();
	dmt = dm_task_create(DM_DEVICE_CREATE);
	if (!dmt)
		return BX_OTHER;
	ret = BX_OTHER;
	if (dm_task_set_name(dmt, name) && dm_task_set_uuid(dmt, uuid) &&
	    (!ro || dm_task_set_ro(dmt)) &&
	    dm_task_add_target(dmt, 0, sectors, "blkiso", params) &&
	    dm_run_synced(dmt))
		ret = BX_OK;
	dm_task_destroy(dmt);
	if (ret) {
		err("%s: cannot create the dm device (is blkiso.ko loaded?)", name);
		return ret;
	}
	if (!dm_blkiso_lower(name, &dev.major, &dev.minor))
		lower_changed(dev.major, dev.minor);
	return BX_OK;
}

/*
 * What attach made (or detach --live undid): "NAME MAJ:MIN" and, for a
 * live one, the dm holders re-pointed ("under H1 H2", or "removed, under
 * H1 H2 now DISK"); under -j one object: device, major, minor (attach),
 * lower, holders.  @removed: detach --live's report.
 */
void attach_report(const char *name, const char *lower, const char *const *holders,
		   unsigned int nh, bool removed)
{
	struct bdev dev = { 0 };
	unsigned int i;

	if (!removed && resolve_dev(name, &dev))
		return;
	if (opt.json) {
		printf("{\"device\":");
		json_str(name);
		if (!removed)
			printf(",\"major\":%u,\"minor\":%u", dev.major, dev.minor);
		printf(",\"lower\":");
		json_str(lower);
		printf(",\"holders\":[");
		for (i = 0; i < nh; i++) {
			printf("%s", i ? "," : "");
			json_str(holders[i]);
		}
		printf("]%s}\n", removed ? ",\"removed\":true" : "");
		return;
	}
	if (removed)
		printf("%s removed,", name);
	else
		printf("%s %u:%u", name, dev.major, dev.minor);
	if (nh)
		printf(" under");
	for (i = 0; i < nh; i++)
		printf(" %s", holders[i]);
	if (removed)
		printf(" now %s", lower);
	putchar('\n');
}

void dm_default_name(const char *lower, char *name, size_t size)
{
	char *copy = strdup(lower);

	snprintf(name, size, "blkiso-%s", copy ? basename(copy) : "dev");
	free(copy);
}

int cmd_attach(int argc, char **argv)
{
	char name[128];
	int ret;

	if (argc < 1 || argc > 2) {
		err("usage: attach DEV [NAME]");
		return BX_USAGE;
	}
	if (argc > 1)
		snprintf(name, sizeof(name), "%s", argv[1]);
	else
		dm_default_name(argv[0], name, sizeof(name));
	if (opt.live)
		return live_attach(argv[0], name);
	ret = dm_attach(argv[0], name);
	if (ret)
		return ret;
	attach_report(name, argv[0], NULL, 0, false);
	return BX_OK;
}

int cmd_detach(int argc, char **argv)
{
	unsigned int maj = 0, min = 0;
	const char *name;
	struct dm_task *dmt;
	struct bdev dev;
	int ret;

	if (argc != 1) {
		err("usage: detach NAME");
		return BX_USAGE;
	}
	if (opt.live)
		return live_detach(argv[0]);
	ret = resolve_dev(argv[0], &dev);
	if (ret)
		return ret;
	name = dev.name[0] ? dev.name : argv[0];
	dm_blkiso_lower(name, &maj, &min);
	dm_udev_setup();
	dmt = dm_task_create(DM_DEVICE_REMOVE);
	if (!dmt)
		return BX_OTHER;
	ret = BX_OTHER;
	if (dm_task_set_name(dmt, name) && dm_task_retry_remove(dmt) && dm_run_synced(dmt))
		ret = BX_OK;
	dm_task_destroy(dmt);
	if (ret)
		err("%s: cannot remove the dm device (still open?)", name);
	else if (maj)
		lower_changed(maj, min);
	return ret;
}

/* The size in sectors of the block device M:m, from sysfs (it is held). */
static int dev_sectors(unsigned int maj, unsigned int min, uint64_t *sectors)
{
	char path[64];
	int ok;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/size", maj, min);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%" SCNu64, sectors) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/*
 * Load NAME's table again with the disk's present size and swap it in (the
 * kernel's resume suspends the device, flushing, before the swap: parked
 * bios are dispatched as at any reload).  Tenants, quotas and rules belong
 * to the dm device and stay.  A disk that shrank is refused while NAME is
 * open: what maps past the new end would fail.  So is a device someone
 * suspended or loaded a table into: the resume would undo their step.
 */
int cmd_resize(int argc, char **argv)
{
	unsigned int maj, min;
	unsigned long long offset;
	uint64_t length, sectors;
	struct dm_task *dmt;
	struct dm_info info;
	char params[4200], type[32];
	const char *name;
	struct bdev dev;
	int ret;

	if (argc != 1) {
		err("usage: resize dev NAME");
		return BX_USAGE;
	}
	ret = resolve_dev(argv[0], &dev);
	if (ret)
		return ret;
	name = dev.name[0] ? dev.name : argv[0];
	ret = blkiso_segment(name, &length, params, sizeof(params), type, sizeof(type), &info);
	switch (ret) {
	case 0:
		break;
	case -ENOENT:
		err("%s: no such dm device", name);
		return BX_NOTFOUND;
	case -EINVAL:
		err("%s: not a blkiso device (its table is %s)", name, type[0] ? type : "empty");
		return BX_INPUT;
	case -EMLINK:
		err("%s: a table of several segments; resize it with dmsetup reload", name);
		return BX_INPUT;
	case -E2BIG:
		err("%s: table parameters too long", name);
		return BX_INPUT;
	default:
		return BX_OTHER;
	}
	if (sscanf(params, "%u:%u %llu", &maj, &min, &offset) != 3 ||
	    dev_sectors(maj, min, &sectors)) {
		err("%s: cannot read the size of the device under it (%s)", name, params);
		return BX_OTHER;
	}
	if (sectors <= offset) {
		err("%s: the device under it (%u:%u) has %" PRIu64 " sectors, not more than the table's offset %llu",
		    name, maj, min, sectors, offset);
		return BX_INPUT;
	}
	sectors -= offset;
	if (info.suspended || info.inactive_table) {
		err("%s: %s; resize resumes the device, so resume it first (or dmsetup clear)",
		    name, info.suspended ? "suspended" : "an inactive table is loaded");
		return BX_PERM;
	}
	if (sectors < length && info.open_count) {
		err("%s: the device under it shrank to %" PRIu64 " sectors, below the table's %" PRIu64 ", and %s is open: shrink what uses it first and close it",
		    name, sectors, length, name);
		return BX_PERM;
	}
	if (sectors != length) {
		dm_udev_setup();
		dmt = dm_task_create(DM_DEVICE_RELOAD);
		if (!dmt)
			return BX_OTHER;
		/* the table keeps the device's mode: a read-write one would undo -r */
		ret = dm_task_set_name(dmt, name) && (!info.read_only || dm_task_set_ro(dmt)) &&
		      dm_task_add_target(dmt, 0, sectors, "blkiso", params) && dm_task_run(dmt);
		dm_task_destroy(dmt);
		if (!ret) {
			err("%s: the kernel refused the table of %" PRIu64 " sectors", name, sectors);
			return BX_OTHER;
		}
		dmt = dm_task_create(DM_DEVICE_RESUME);
		ret = dmt && dm_task_set_name(dmt, name) && dm_run_synced(dmt);
		if (dmt)
			dm_task_destroy(dmt);
		if (!ret) {
			dmt = dm_task_create(DM_DEVICE_CLEAR);
			if (dmt && dm_task_set_name(dmt, name))
				dm_task_run(dmt);
			if (dmt)
				dm_task_destroy(dmt);
			err("%s: cannot resume with the new table; the old one stays", name);
			return BX_OTHER;
		}
	}
	if (opt.json) {
		printf("{\"device\":");
		json_str(name);
		printf(",\"sectors\":%" PRIu64 ",\"was\":%" PRIu64 "}\n", sectors, length);
	} else if (sectors == length) {
		printf("%s: %" PRIu64 " sectors, the size of the device under it\n", name, sectors);
	} else {
		printf("%s: %" PRIu64 " -> %" PRIu64 " sectors\n", name, length, sectors);
	}
	return BX_OK;
}
