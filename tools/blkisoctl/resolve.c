// SPDX-License-Identifier: GPL-2.0
/*
 * resolve.c - naming things on the command line: dm devices (a node or a dm
 * name, through libdevmapper when no node exists), cgroups (an id, a path
 * below /sys/fs/cgroup, whose inode number is the id, or "kernel") and
 * back from an id to a path, the "dev X cgroup Y" selectors, every blkiso
 * device, and key=value lines.  Also the error printer (JSON under -j) and
 * errno -> exit code.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <libdevmapper.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "blkisoctl.h"

#define CGROUP_ROOT	"/sys/fs/cgroup"

char err_ctx[256];

void err(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (opt.json) {
		/* as bpftool -j: an object on stdout, one per error */
		fputs("{\"error\":", stdout);
		if (err_ctx[0]) {
			char full[sizeof(err_ctx) + sizeof(msg) + 2];

			snprintf(full, sizeof(full), "%s: %s", err_ctx, msg);
			json_str(full);
		} else {
			json_str(msg);
		}
		fputs("}\n", stdout);
		fflush(stdout);
		return;
	}
	fputs("blkisoctl: ", stderr);
	if (err_ctx[0])
		fprintf(stderr, "%s: ", err_ctx);
	fprintf(stderr, "%s\n", msg);
}

int errno_exit(int e)
{
	switch (e) {
	case EINVAL: case E2BIG: case ERANGE:
		return BX_INPUT;
	case ENOENT: case ENODEV: case ENXIO: case ESRCH:
		return BX_NOTFOUND;
	case EPERM: case EACCES: case EBUSY:
		return BX_PERM;
	default:
		return BX_OTHER;
	}
}

/* major:minor of the dm device @name (DM_DEVICE_INFO): 0 or -ENOENT. */
int dm_lookup(const char *name, struct bdev *dev)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_INFO);
	struct dm_info info;
	int ret = -ENOENT;

	if (!dmt)
		return -ENOMEM;
	if (dm_task_set_name(dmt, name) && dm_task_run(dmt) &&
	    dm_task_get_info(dmt, &info) && info.exists) {
		dev->major = info.major;
		dev->minor = info.minor;
		ret = 0;
	}
	dm_task_destroy(dmt);
	return ret;
}

/* A node such as /dev/dm-3 names its device by the dm name too. */
static void dm_name_of(struct bdev *dev)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/dm/name", dev->major, dev->minor);
	if (read_line(path, dev->name, sizeof(dev->name)))
		dev->name[0] = '\0';
}

int resolve_dev(const char *arg, struct bdev *dev)
{
	const char *name = arg;
	struct stat st;

	memset(dev, 0, sizeof(*dev));
	if (!strncmp(arg, "/dev/mapper/", 12))
		name = arg + 12;
	if (strchr(arg, '/') && !stat(arg, &st)) {
		if (!S_ISBLK(st.st_mode)) {
			err("%s: not a block device", arg);
			return BX_INPUT;
		}
		dev->major = major(st.st_rdev);
		dev->minor = minor(st.st_rdev);
		if (name != arg)
			snprintf(dev->name, sizeof(dev->name), "%s", name);
		else
			dm_name_of(dev);
		return BX_OK;
	}
	if (strchr(name, '/')) {
		err("%s: no such device", arg);
		return BX_NOTFOUND;
	}
	if (dm_lookup(name, dev)) {
		err("%s: no such dm device", arg);
		return BX_NOTFOUND;
	}
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	return BX_OK;
}

int resolve_cgroup(const char *arg, uint64_t *cgid)
{
	char path[4096], *end;
	struct stat st;

	if (!strcmp(arg, "kernel")) {
		*cgid = 0;
		return BX_OK;
	}
	/* digits only: an id; anything else ("2024-batch") a path */
	if (arg[0] && strspn(arg, "0123456789") == strlen(arg)) {
		errno = 0;
		*cgid = strtoull(arg, &end, 10);
		if (errno || *end || !*cgid) {
			err("\"%s\": not a cgroup id (want an id, a path or \"kernel\")", arg);
			return BX_INPUT;
		}
		return BX_OK;
	}
	if (!strncmp(arg, CGROUP_ROOT, sizeof(CGROUP_ROOT) - 1) &&
	    (arg[sizeof(CGROUP_ROOT) - 1] == '/' || !arg[sizeof(CGROUP_ROOT) - 1]))
		snprintf(path, sizeof(path), "%s", arg);
	else
		snprintf(path, sizeof(path), CGROUP_ROOT "/%s", arg[0] == '/' ? arg + 1 : arg);
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		err("%s: no such cgroup (%s)", arg, path);
		return BX_NOTFOUND;
	}
	*cgid = st.st_ino;
	return BX_OK;
}

int join_line(char *line, int argc, char **argv)
{
	size_t n = 0, len;
	int i;

	line[0] = '\0';
	for (i = 0; i < argc; i++) {
		len = strlen(argv[i]);
		if (n + len + 2 > BLKISO_LINE_MAX) {
			err("line too long at \"%s\" (at most %d bytes)", argv[i],
			    BLKISO_LINE_MAX - 1);
			return BX_INPUT;
		}
		if (n)
			line[n++] = ' ';
		memcpy(line + n, argv[i], len + 1);
		n += len;
	}
	return BX_OK;
}

/* ---- from an id back to a path ---- */

static struct cg_name {
	uint64_t ino;
	char *path;		/* below the root: "/", "/a/b" */
} *cg_names;
static size_t nr_cg_names, cg_names_cap;
static bool cg_walked;

static int cg_walk_one(const char *fpath, const struct stat *st, int type, struct FTW *ftw)
{
	struct cg_name *n;

	(void)ftw;
	if (type != FTW_D)
		return FTW_CONTINUE;
	if (nr_cg_names == cg_names_cap) {
		cg_names_cap = cg_names_cap ? 2 * cg_names_cap : 256;
		n = realloc(cg_names, cg_names_cap * sizeof(*n));
		if (!n)
			return FTW_STOP;
		cg_names = n;
	}
	n = &cg_names[nr_cg_names];
	fpath += sizeof(CGROUP_ROOT) - 1;
	n->path = strdup(*fpath ? fpath : "/");
	if (!n->path)
		return FTW_STOP;
	n->ino = st->st_ino;
	nr_cg_names++;
	return FTW_CONTINUE;
}

const char *cgroup_path(uint64_t cgid)
{
	size_t i;

	if (cgid == 0)
		return "kernel";
	if (!cg_walked) {
		/* once per run: ids are inode numbers, the tree names them */
		cg_walked = true;
		nftw(CGROUP_ROOT, cg_walk_one, 32, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
	}
	for (i = 0; i < nr_cg_names; i++)
		if (cg_names[i].ino == cgid)
			return cg_names[i].path;
	return NULL;
}

/* ---- the io controller along a path ---- */

void warn_io_controller(uint64_t cgid, const char *name)
{
	char ctl[4200], buf[512], *w;
	const char *path, *slash;
	bool io;
	FILE *f;

	path = cgid ? cgroup_path(cgid) : NULL;
	if (!path || !strcmp(path, "/"))
		return;
	/* every parent, from the root down, must pass io to its children */
	for (slash = path; (slash = strchr(slash, '/')); slash++) {
		snprintf(ctl, sizeof(ctl), CGROUP_ROOT "%.*s/cgroup.subtree_control",
			 (int)(slash - path), path);
		f = fopen(ctl, "r");
		if (!f)
			return;	/* cgroup v1, or gone: nothing to say */
		io = false;
		if (fgets(buf, sizeof(buf), f))
			for (w = strtok(buf, " \n"); w; w = strtok(NULL, " \n"))
				io |= !strcmp(w, "io");
		fclose(f);
		if (!io) {
			fprintf(stderr, "blkisoctl: warning: %s: %s lacks +io: the bios of %s are "
				"charged to the cgroup that file belongs to, not to %s "
				"(echo +io > %s)\n", name ? name : path, ctl, path, path, ctl);
			return;
		}
	}
}

/* ---- "dev X cgroup Y" ---- */

int take_selectors(int *argc, char ***argv, struct sel *sel)
{
	memset(sel, 0, sizeof(*sel));
	while (*argc >= 1) {
		const char **slot;

		if (!strcmp((*argv)[0], "dev"))
			slot = &sel->dev;
		else if (!strcmp((*argv)[0], "cgroup"))
			slot = &sel->cgroup;
		else
			break;
		if (*argc < 2) {
			err("%s: a value must follow", (*argv)[0]);
			return BX_USAGE;
		}
		if (*slot) {
			err("%s given twice", (*argv)[0]);
			return BX_USAGE;
		}
		*slot = (*argv)[1];
		sel->keywords = true;
		*argc -= 2;
		*argv += 2;
	}
	return BX_OK;
}

/* ---- every blkiso device ---- */

#define BLKISO_SYSFS	"/sys/kernel/blkiso"

int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, size, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int bdev_cmp(const void *a, const void *b)
{
	const struct bdev *x = a, *y = b;

	return x->minor < y->minor ? -1 : x->minor > y->minor;
}

int list_devices(struct bdev **devs, unsigned int *count)
{
	struct bdev *d = NULL, *nd;
	unsigned int n = 0;
	struct dirent *e;
	char path[512], buf[128];
	DIR *dir;

	*devs = NULL;
	*count = 0;
	dir = opendir(BLKISO_SYSFS);
	if (!dir)
		return errno == ENOENT ? BX_OK : BX_OTHER;	/* no module: none */
	while ((e = readdir(dir))) {
		unsigned int ma, mi;

		if (strncmp(e->d_name, "dm-", 3))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dev", e->d_name);
		if (read_line(path, buf, sizeof(buf)) || sscanf(buf, "%u:%u", &ma, &mi) != 2)
			continue;
		nd = realloc(d, (n + 1) * sizeof(*d));
		if (!nd)
			break;
		d = nd;
		memset(&d[n], 0, sizeof(d[n]));
		d[n].major = ma;
		d[n].minor = mi;
		snprintf(path, sizeof(path), BLKISO_SYSFS "/%s/name", e->d_name);
		if (read_line(path, d[n].name, sizeof(d[n].name)))
			snprintf(d[n].name, sizeof(d[n].name), "dm-%u", mi);
		n++;
	}
	closedir(dir);
	if (n)
		qsort(d, n, sizeof(*d), bdev_cmp);
	*devs = d;
	*count = n;
	return BX_OK;
}
