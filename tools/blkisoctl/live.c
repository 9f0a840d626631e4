// SPDX-License-Identifier: GPL-2.0
/*
 * live.c - attach --live and detach --live: put a blkiso device under the
 * device-mapper holders of a disk in use (LVM LVs, dm-crypt, ...) without
 * unmounting anything, and take it out again.
 *
 * attach --live DISK [NAME], in this order, each step undone on any later
 * failure (in reverse), the failing step named:
 *   1. checks, nothing changed yet: every holder of DISK is an active dm
 *      device whose table names DISK; DISK has no other user (a filesystem
 *      mounted on it cannot get a device underneath: refused with the boot
 *      recipe);
 *   2. the VG lock of every LVM volume group among the holders, as LVM's
 *      own commands take it (flock(LOCK_EX) on <locking_dir>/V_<vg>): no LVM
 *      command changes or activates those VGs until we are done;
 *   3. "create": the blkiso device over DISK (dm-mod's shared claim lets it
 *      open a disk that other dm devices hold);
 *   4. per holder, "load" the same table with the blkiso device's
 *      major:minor in place of DISK's (every segment, same offsets), then
 *      "suspend" (flushes the holder's I/O; a filesystem on it is frozen)
 *      and "resume" (the new table goes live): one holder at a time;
 *   5. "lvm": LVM is told to see the PV through the blkiso device only,
 *      so that its later tables (lvextend, lvchange --refresh, activation
 *      at boot) name the blkiso device: with a devices file (lvm.conf
 *      use_devicesfile=1) `lvmdevices --deldev DISK --adddev BLKISO`, else
 *      a global_filter line in lvm.conf rejecting DISK by its stable names
 *      (the raw disk and the blkiso device show the same PV label: LVM
 *      must never see both).
 * detach --live NAME runs the same steps the other way round.  A holder is
 * rolled back by loading its original table and suspending and resuming
 * it, whatever state the failure left it in.
 *
 * BLKISOCTL_LIVE_FAIL=STEP (create, load:I, suspend:I, resume:I, lvm,
 * remove; I counts holders from 0) makes that step fail: the tests' way to
 * see every rollback.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <libgen.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blkisoctl.h"

#define MAX_HOLDERS	64
#define MAX_SEGS	256
#define LVM_LOCK_WAIT_S	30
#define FILTER_TAG	"# blkisoctl: raw disks under blkiso devices, see blkisoctl(8)"

struct seg {
	uint64_t start, len;
	char type[32];
	char *params;
};

struct table {
	struct seg seg[MAX_SEGS];
	unsigned int n;
};

struct holder {
	char name[128];
	char uuid[160];
	struct table orig, repointed;
	bool touched;		/* a step ran on it: roll it back on failure */
};

struct live {
	const char *disk;		/* as given */
	char kname[64];			/* sdb */
	unsigned int dmaj, dmin;	/* the disk */
	char name[128];			/* the blkiso device */
	unsigned int bmaj, bmin;
	struct holder *h;
	unsigned int nh;
	int lock_fd[MAX_HOLDERS];
	unsigned int nlocks;
	bool created;
	/* the LVM step, for its undo */
	int lvm_mode;			/* 0 none, 1 devices file, 2 lvm.conf */
	char *conf_path, *conf_old;
	size_t conf_old_len;
};

static bool inject(const char *step, int idx)
{
	const char *f = getenv("BLKISOCTL_LIVE_FAIL");
	char want[48];

	if (!f)
		return false;
	if (idx < 0)
		snprintf(want, sizeof(want), "%s", step);
	else
		snprintf(want, sizeof(want), "%s:%d", step, idx);
	if (strcmp(f, want))
		return false;
	fprintf(stderr, "blkisoctl: BLKISOCTL_LIVE_FAIL=%s: failing this step\n", f);
	return true;
}

static void table_free(struct table *t)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		free(t->seg[i].params);
	t->n = 0;
}

/* Every segment of dm device @name's live table: 0 or -errno. */
static int table_get(const char *name, struct table *t)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_TABLE);
	char *type, *params;
	uint64_t start, len;
	void *next = NULL;
	int ret = -EIO;

	t->n = 0;
	if (!dmt)
		return -ENOMEM;
	if (!dm_task_set_name(dmt, name) || !dm_task_run(dmt))
		goto out;
	do {
		type = params = NULL;
		next = dm_get_next_target(dmt, next, &start, &len, &type, &params);
		if (!type)
			break;
		if (t->n == MAX_SEGS) {
			ret = -E2BIG;
			goto out;
		}
		t->seg[t->n].start = start;
		t->seg[t->n].len = len;
		snprintf(t->seg[t->n].type, sizeof(t->seg[0].type), "%s", type);
		t->seg[t->n].params = strdup(params ? params : "");
		t->n++;
	} while (next);
	ret = t->n ? 0 : -ENODATA;
out:
	dm_task_destroy(dmt);
	return ret;
}

/*
 * @t with every whole parameter token "@from" (a major:minor) replaced by
 * "@to", into @out: the number of replacements.
 */
static unsigned int table_repoint(const struct table *t, const char *from, const char *to,
				  struct table *out)
{
	unsigned int i, hits = 0;

	out->n = t->n;
	for (i = 0; i < t->n; i++) {
		const char *p = t->seg[i].params;
		size_t cap = strlen(p) * 2 + 64, fl = strlen(from);
		char *o = malloc(cap), *w = o;

		out->seg[i] = t->seg[i];
		out->seg[i].params = o;
		if (!o) {
			out->n = i + 1;
			return 0;	/* no memory: treated as naming nothing */
		}
		while (*p) {
			if ((p == t->seg[i].params || p[-1] == ' ') && !strncmp(p, from, fl) &&
			    (p[fl] == ' ' || !p[fl])) {
				w += sprintf(w, "%s", to);
				p += fl;
				hits++;
			} else {
				*w++ = *p++;
			}
		}
		*w = '\0';
	}
	return hits;
}

/* A dm task on @name: DM_DEVICE_SUSPEND, RESUME, REMOVE; 0 or -1. */
static int dm_simple(const char *name, int type)
{
	struct dm_task *dmt = dm_task_create(type);
	int ok = 0;

	if (!dmt)
		return -1;
	if (dm_task_set_name(dmt, name)) {
		if (type == DM_DEVICE_REMOVE)
			dm_task_retry_remove(dmt);
		ok = type == DM_DEVICE_SUSPEND ? dm_task_run(dmt) : dm_run_synced(dmt);
	}
	dm_task_destroy(dmt);
	return ok ? 0 : -1;
}

/* Load @t as @name's inactive table: 0 or -1. */
static int table_load(const char *name, const struct table *t)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_RELOAD);
	unsigned int i;
	int ok = 0;

	if (!dmt)
		return -1;
	if (!dm_task_set_name(dmt, name))
		goto out;
	for (i = 0; i < t->n; i++)
		if (!dm_task_add_target(dmt, t->seg[i].start, t->seg[i].len, t->seg[i].type,
					t->seg[i].params))
			goto out;
	ok = dm_task_run(dmt);
out:
	dm_task_destroy(dmt);
	return ok ? 0 : -1;
}

/* Load, suspend, resume: @t becomes @name's live table.  The failed step, or NULL. */
static const char *table_swap(const char *name, const struct table *t, int idx)
{
	if (inject("load", idx) || table_load(name, t))
		return "load";
	if (inject("suspend", idx) || dm_simple(name, DM_DEVICE_SUSPEND))
		return "suspend";
	if (inject("resume", idx) || dm_simple(name, DM_DEVICE_RESUME))
		return "resume";
	return NULL;
}

/* Put @h's original table back, whatever state a failed step left it in. */
static void holder_restore(const struct holder *h)
{
	if (table_load(h->name, &h->orig) || dm_simple(h->name, DM_DEVICE_SUSPEND) ||
	    dm_simple(h->name, DM_DEVICE_RESUME))
		err("%s: cannot restore its table; put it back by hand (dmsetup load/resume)",
		    h->name);
}

/*
 * The dm holders of block device @maj:@min, with their tables: 0 or an exit
 * code after saying why (a holder that is not a dm device, or suspended).
 */
static int holders_get(unsigned int maj, unsigned int min, const char *what,
		       struct holder **hs, unsigned int *n)
{
	char dir[96], path[PATH_MAX];
	struct dirent *d;
	DIR *dh;
	int ret = BX_OK;

	*n = 0;
	*hs = calloc(MAX_HOLDERS, sizeof(**hs));
	if (!*hs)
		return BX_OTHER;
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/holders", maj, min);
	dh = opendir(dir);
	if (!dh) {
		err("%s: %s: %s", what, dir, strerror(errno));
		return BX_NOTFOUND;
	}
	while ((d = readdir(dh)) && ret == BX_OK) {
		struct holder *h = &(*hs)[*n];
		struct dm_task *dmt;
		struct dm_info info;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/dm/name", dir, d->d_name);
		if (strncmp(d->d_name, "dm-", 3) || read_line(path, h->name, sizeof(h->name))) {
			err("%s: held by %s, which is not a device-mapper device: cannot move it live",
			    what, d->d_name);
			ret = BX_PERM;
			break;
		}
		if (*n == MAX_HOLDERS - 1) {
			err("%s: more than %d holders", what, MAX_HOLDERS - 1);
			ret = BX_OTHER;
			break;
		}
		snprintf(path, sizeof(path), "%s/%s/dm/uuid", dir, d->d_name);
		read_line(path, h->uuid, sizeof(h->uuid));
		dmt = dm_task_create(DM_DEVICE_INFO);
		if (dmt && dm_task_set_name(dmt, h->name) && dm_task_run(dmt) &&
		    dm_task_get_info(dmt, &info) && info.exists && info.suspended) {
			err("%s: holder %s is suspended: resume it first", what, h->name);
			ret = BX_PERM;
		}
		if (dmt)
			dm_task_destroy(dmt);
		if (ret == BX_OK && table_get(h->name, &h->orig)) {
			err("%s: cannot read the table of holder %s", what, h->name);
			ret = BX_OTHER;
		}
		(*n)++;
	}
	closedir(dh);
	return ret;
}

static void holders_free(struct holder *hs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		table_free(&hs[i].orig);
		table_free(&hs[i].repointed);
	}
	free(hs);
}

/* ---- LVM ---- */

/* Run a command (argv), stdout into @out (may be NULL): its exit status. */
static int run_cmd(char *out, size_t size, char *const argv[])
{
	int pfd[2], status;
	size_t got = 0;
	ssize_t r;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	if (out && size)
		out[0] = '\0';
	while (out && got + 1 < size && (r = read(pfd[0], out + got, size - got - 1)) > 0)
		got += r;
	if (out && size)
		out[got] = '\0';
	while (read(pfd[0], &status, sizeof(status)) > 0)
		;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * The LVM settings live.c needs, from one `lvmconfig --typeconfig full`
 * run (each lvm start costs): -1 if LVM is not installed.
 */
static struct {
	int state;		/* 0 not asked, 1 read, -1 no LVM */
	char use_devicesfile[8], devicesfile[256], locking_dir[PATH_MAX];
} lvmcfg;

static int lvmconfig(void)
{
	char out[8192], *line, *save = NULL;
	char *argv[] = { "lvmconfig", "--typeconfig", "full", "devices/use_devicesfile",
			 "devices/devicesfile", "global/locking_dir", NULL };

	if (lvmcfg.state)
		return lvmcfg.state > 0 ? 0 : -1;
	lvmcfg.state = -1;
	if (run_cmd(out, sizeof(out), argv))
		return -1;
	snprintf(lvmcfg.devicesfile, sizeof(lvmcfg.devicesfile), "system.devices");
	snprintf(lvmcfg.locking_dir, sizeof(lvmcfg.locking_dir), "/run/lock/lvm");
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(line, '=');

		if (!v)
			continue;
		*v++ = '\0';
		if (*v == '"')
			v++;
		v[strcspn(v, "\"")] = '\0';
		if (!strcmp(line, "use_devicesfile"))
			snprintf(lvmcfg.use_devicesfile, sizeof(lvmcfg.use_devicesfile), "%s", v);
		else if (!strcmp(line, "devicesfile"))
			snprintf(lvmcfg.devicesfile, sizeof(lvmcfg.devicesfile), "%s", v);
		else if (!strcmp(line, "locking_dir"))
			snprintf(lvmcfg.locking_dir, sizeof(lvmcfg.locking_dir), "%s", v);
	}
	lvmcfg.state = 1;
	return 0;
}

/* Take the VG lock of every LVM holder's volume group (see the top). */
static int lvm_lock(struct live *l)
{
	char path[PATH_MAX + 64], done[MAX_HOLDERS][128];
	const char *dir = lvmcfg.locking_dir;
	struct dm_pool *mem = dm_pool_create("blkisoctl", 1024);
	unsigned int i, j, ndone = 0;
	int ret = BX_OK;

	if (!mem)
		return BX_OTHER;
	if (lvmconfig()) {
		dm_pool_destroy(mem);
		return BX_OK;		/* no LVM here: no VG to lock */
	}
	for (i = 0; i < l->nh && ret == BX_OK; i++) {
		char *vg, *lv, *layer;
		time_t until = time(NULL) + LVM_LOCK_WAIT_S;
		int fd;

		if (strncmp(l->h[i].uuid, "LVM-", 4) ||
		    !dm_split_lvm_name(mem, l->h[i].name, &vg, &lv, &layer))
			continue;
		for (j = 0; j < ndone && strcmp(done[j], vg); j++)
			;
		if (j < ndone)
			continue;
		snprintf(done[ndone++], sizeof(done[0]), "%s", vg);
		mkdir(dir, 0700);
		snprintf(path, sizeof(path), "%s/V_%s", dir, vg);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			err("VG %s: cannot open its lock %s: %s", vg, path, strerror(errno));
			ret = BX_OTHER;
			break;
		}
		while (flock(fd, LOCK_EX | LOCK_NB)) {
			if (time(NULL) >= until) {
				err("VG %s: an LVM command holds its lock (%s) for %d s; nothing changed",
				    vg, path, LVM_LOCK_WAIT_S);
				close(fd);
				ret = BX_PERM;
				break;
			}
			usleep(100000);
		}
		if (ret == BX_OK)
			l->lock_fd[l->nlocks++] = fd;
	}
	dm_pool_destroy(mem);
	return ret;
}

static void lvm_unlock(struct live *l)
{
	while (l->nlocks)
		close(l->lock_fd[--l->nlocks]);
}

static bool lvm_present(void)
{
	return !lvmconfig();
}

/* LVM's devices file, if it is in use: its path in @path. */
static bool lvm_devicesfile(char *path, size_t size)
{
	const char *sys = getenv("LVM_SYSTEM_DIR");

	if (lvmconfig() || strcmp(lvmcfg.use_devicesfile, "1"))
		return false;
	snprintf(path, size, "%s/devices/%s", sys ? sys : "/etc/lvm", lvmcfg.devicesfile);
	return !access(path, F_OK);
}

static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0;
	FILE *f = fopen(path, "r");

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);

			if (!nb)
				break;
			buf = nb;
		}
		size_t r = fread(buf + *len, 1, 4096, f);

		if (!r)
			break;
		*len += r;
	}
	fclose(f);
	if (buf)
		buf[*len] = '\0';
	return buf;
}

static int write_atomic(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX + 16];
	struct stat st;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.blkisoctl", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	if (fwrite(data, 1, len, f) != len || fflush(f) || fsync(fileno(f))) {
		fclose(f);
		unlink(tmp);
		return -EIO;
	}
	if (!stat(path, &st))
		fchmod(fileno(f), st.st_mode & 07777);
	fclose(f);
	if (rename(tmp, path)) {
		unlink(tmp);
		return -errno;
	}
	return 0;
}

/*
 * The names the global_filter rejects the raw disk by: its stable
 * /dev/disk/by-id names if it has any (a kernel name like sdb may name
 * another disk after a reboot), else /dev/<kname>.  LVM rejects a device
 * when every name of it that matches a pattern matches an "r" one.
 */
unsigned int disk_names(const char *kname, char names[][NAME_LEN], unsigned int max)
{
	char link[NAME_LEN], real[PATH_MAX], want[96];
	unsigned int n = 0;
	struct dirent *d;
	DIR *dh = opendir("/dev/disk/by-id");

	snprintf(want, sizeof(want), "/dev/%s", kname);
	while (dh && (d = readdir(dh)) && n < max) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/dev/disk/by-id/%s", d->d_name);
		if (realpath(link, real) && !strcmp(real, want))
			snprintf(names[n++], NAME_LEN, "%s", link);
	}
	if (dh)
		closedir(dh);
	if (!n)
		snprintf(names[n++], NAME_LEN, "%s", want);
	return n;
}

/* A global_filter line (not ours) in @conf: its start, else NULL. */
static const char *user_global_filter(const char *conf)
{
	const char *p = conf;

	while (p && *p) {
		const char *q = p + strspn(p, " \t");
		const char *eol = strchr(p, '\n');

		if (!strncmp(q, "global_filter", 13) && !strstr(q, FILTER_TAG) &&
		    (!eol || memmem(q, eol - q, "=", 1)))
			return q;
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}

/*
 * lvm.conf with our global_filter line holding the patterns it held plus
 * (@add) or minus (!@add) those of @names: malloc'ed, or NULL.
 */
static char *conf_edit(const char *conf, char names[][NAME_LEN], unsigned int n, bool add)
{
	size_t cap = strlen(conf) + 8192 + n * (NAME_LEN + 8);
	char *out = malloc(cap), *pats = malloc(cap), *w;
	const char *p = conf, *ours = NULL, *ours_end = NULL, *dev = NULL;
	unsigned int i, kept = 0;

	if (!out || !pats) {
		free(out);
		free(pats);
		return NULL;
	}
	pats[0] = '\0';
	while (*p) {
		const char *q = p + strspn(p, " \t"), *eol = strchr(p, '\n');

		if (!eol)
			eol = p + strlen(p);
		if (!ours && strstr(q, FILTER_TAG) && memmem(q, eol - q, FILTER_TAG,
							      strlen(FILTER_TAG))) {
			ours = p;
			ours_end = *eol ? eol + 1 : eol;
		}
		if (!dev && !strncmp(q, "devices", 7) &&
		    strspn(q + 7, " \t{") == strcspn(q + 7, "\n") && strchr(q, '{') &&
		    strchr(q, '{') < eol)
			dev = *eol ? eol + 1 : eol;
		p = *eol ? eol + 1 : eol;
	}
	/* the patterns our line holds, minus (or then plus) @names' */
	if (ours) {
		const char *s = ours;

		while ((s = memchr(s, '"', ours_end - s))) {
			const char *e = memchr(s + 1, '"', ours_end - s - 1);
			char pat[NAME_LEN + 16];
			bool drop = false;

			if (!e)
				break;
			snprintf(pat, sizeof(pat), "%.*s", (int)(e - s - 1), s + 1);
			for (i = 0; i < n; i++) {
				char mine[NAME_LEN + 16];

				snprintf(mine, sizeof(mine), "r|^%.*s$|", NAME_LEN - 1, names[i]);
				drop |= !strcmp(pat, mine);
			}
			if (!drop) {
				strcat(pats, kept++ ? ", \"" : "\"");
				strcat(pats, pat);
				strcat(pats, "\"");
			}
			s = e + 1;
		}
	}
	for (i = 0; add && i < n; i++) {
		strcat(pats, kept++ ? ", \"r|^" : "\"r|^");
		strcat(pats, names[i]);
		strcat(pats, "$|\"");
	}
	/* copy, our line replaced (or dropped when empty) */
	w = out;
	if (ours) {
		w += sprintf(w, "%.*s", (int)(ours - conf), conf);
		if (kept)
			w += sprintf(w, "\tglobal_filter = [ %s ]  %s\n", pats, FILTER_TAG);
		w += sprintf(w, "%s", ours_end);
	} else if (!kept) {
		w += sprintf(w, "%s", conf);
	} else if (dev) {
		w += sprintf(w, "%.*s", (int)(dev - conf), conf);
		w += sprintf(w, "\tglobal_filter = [ %s ]  %s\n", pats, FILTER_TAG);
		w += sprintf(w, "%s", dev);
	} else {
		w += sprintf(w, "%s%sdevices {\n\tglobal_filter = [ %s ]  %s\n}\n", conf,
			     *conf && conf[strlen(conf) - 1] != '\n' ? "\n" : "", pats,
			     FILTER_TAG);
	}
	free(pats);
	return out;
}

static int lvmdevices(const char *op, const char *dev)
{
	/* through lvm: Debian's lvm2 has no lvmdevices link */
	char *argv[] = { "lvm", "lvmdevices", "--yes", (char *)op, (char *)dev, NULL };

	return run_cmd(NULL, 0, argv);
}

/*
 * The LVM step (see the top): @attach moves the PV from the raw disk to the
 * blkiso device, !@attach back.  0 or an exit code; undone by lvm_undo().
 */
static int lvm_step(struct live *l, bool attach)
{
	char names[16][NAME_LEN], path[PATH_MAX], raw[96], bdev[160];
	const char *sys = getenv("LVM_SYSTEM_DIR");
	unsigned int n;
	char *conf;
	int e;

	if (!lvm_present())
		return BX_OK;
	snprintf(raw, sizeof(raw), "/dev/%s", l->kname);
	snprintf(bdev, sizeof(bdev), "/dev/mapper/%s", l->name);
	if (lvm_devicesfile(path, sizeof(path))) {
		l->lvm_mode = 1;
		if (inject("lvm", -1) ||
		    lvmdevices("--deldev", attach ? raw : bdev) ||
		    lvmdevices("--adddev", attach ? bdev : raw)) {
			err("lvm: lvmdevices could not move %s to %s in %s", attach ? raw : bdev,
			    attach ? bdev : raw, path);
			return BX_OTHER;
		}
		return BX_OK;
	}
	snprintf(path, sizeof(path), "%s/lvm.conf", sys ? sys : "/etc/lvm");
	l->conf_old = slurp(path, &l->conf_old_len);
	if (!l->conf_old) {
		l->conf_old = strdup("");
		l->conf_old_len = 0;
	}
	if (!l->conf_old)
		return BX_OTHER;
	l->conf_path = strdup(path);
	n = disk_names(l->kname, names, 16);
	if (attach && user_global_filter(l->conf_old)) {
		const char *uf = user_global_filter(l->conf_old);
		size_t len = strcspn(uf, "\n");
		char mine[NAME_LEN + 16];

		/* the administrator's own filter rejects the disk already: done */
		for (unsigned int i = 0; i < n; i++) {
			snprintf(mine, sizeof(mine), "r|^%.*s$|", NAME_LEN - 1, names[i]);
			if (memmem(uf, len, mine, strlen(mine)))
				return BX_OK;
		}
		err("lvm: %s sets devices/global_filter itself; add \"r|^%s$|\" to it (LVM must not see the PV on the raw disk beside %s), then attach --live again",
		    path, names[0], bdev);
		return BX_INPUT;
	}
	conf = conf_edit(l->conf_old, names, n, attach);
	if (!conf)
		return BX_OTHER;
	e = inject("lvm", -1) ? -EIO : write_atomic(path, conf, strlen(conf));
	free(conf);
	if (e) {
		err("lvm: cannot write %s: %s", path, strerror(-e));
		return BX_OTHER;
	}
	l->lvm_mode = 2;
	return BX_OK;
}

static void lvm_undo(struct live *l, bool attach)
{
	char raw[96], bdev[160];

	snprintf(raw, sizeof(raw), "/dev/%s", l->kname);
	snprintf(bdev, sizeof(bdev), "/dev/mapper/%s", l->name);
	if (l->lvm_mode == 1) {
		lvmdevices("--deldev", attach ? bdev : raw);
		lvmdevices("--adddev", attach ? raw : bdev);
	} else if (l->lvm_mode == 2 &&
		   write_atomic(l->conf_path, l->conf_old, l->conf_old_len)) {
		err("lvm: cannot restore %s", l->conf_path);
	}
	l->lvm_mode = 0;
}

static void live_free(struct live *l)
{
	lvm_unlock(l);
	holders_free(l->h, l->nh);
	free(l->conf_path);
	free(l->conf_old);
}

/* ---- the commands ---- */

/* A partition of the disk held by someone (a PV on sdb2): its name, or 0. */
static int held_partition(const struct live *l, char *part, size_t size)
{
	char dir[128], path[PATH_MAX];
	struct dirent *d, *h;
	DIR *dh, *hh;
	int found = 0;

	snprintf(dir, sizeof(dir), "/sys/class/block/%s", l->kname);
	dh = opendir(dir);
	while (dh && !found && (d = readdir(dh))) {
		if (strncmp(d->d_name, l->kname, strlen(l->kname)))
			continue;
		snprintf(path, sizeof(path), "%s/%s/holders", dir, d->d_name);
		hh = opendir(path);
		while (hh && (h = readdir(hh)))
			if (h->d_name[0] != '.') {
				snprintf(part, size, "%s", d->d_name);
				found = 1;
				break;
			}
		if (hh)
			closedir(hh);
	}
	if (dh)
		closedir(dh);
	return found;
}

static void recipe(const struct live *l)
{
	char part[256];

	if (held_partition(l, part, sizeof(part))) {
		err("%s: its partition %s is held by a dm device: attach --live /dev/%s instead (the device LVM's tables name)",
		    l->disk, part, part);
		return;
	}
	err("%s: in use with no device-mapper holder (a filesystem mounted on it, or another exclusive user): no device can go under it while mounted",
	    l->disk);
	fprintf(stderr,
		"  At boot instead: put \"attach %s NAME\" in /etc/blkiso/blkiso.conf (blkiso.service\n"
		"  attaches it before local-fs-pre.target and LVM activation) and mount\n"
		"  /dev/mapper/NAME (or UUID=, which then names the blkiso device) in /etc/fstab.\n"
		"  A disk under LVM (a PV with its LVs active) can be attached live: attach --live.\n",
		l->disk);
}

/* The disk's major:minor and kernel name: 0 or an exit code. */
static int disk_lookup(struct live *l)
{
	char sys[96], real[PATH_MAX];
	struct stat st;

	if (stat(l->disk, &st)) {
		err("%s: %s", l->disk, strerror(errno));
		return BX_NOTFOUND;
	}
	if (!S_ISBLK(st.st_mode)) {
		err("%s: not a block device", l->disk);
		return BX_INPUT;
	}
	l->dmaj = major(st.st_rdev);
	l->dmin = minor(st.st_rdev);
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", l->dmaj, l->dmin);
	if (!realpath(sys, real)) {
		err("%s: %s: %s", l->disk, sys, strerror(errno));
		return BX_NOTFOUND;
	}
	snprintf(l->kname, sizeof(l->kname), "%s", basename(real));
	return BX_OK;
}

static int blkiso_create(struct live *l)
{
	char params[64], uuid[sizeof(DM_UUID_PREFIX) + 128];
	struct dm_task *dmt;
	uint64_t bytes;
	struct bdev dev;
	int fd, ok = 0, ro = 0;

	fd = open(l->disk, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes) || ioctl(fd, BLKROGET, &ro)) {
		err("create: %s: %s", l->disk, strerror(errno));
		if (fd >= 0)
			close(fd);
		return BX_OTHER;
	}
	close(fd);
	snprintf(params, sizeof(params), "%u:%u 0", l->dmaj, l->dmin);
	snprintf(uuid, sizeof(uuid), DM_UUID_PREFIX "%s", l->name);
	if (inject("create", -1))
		goto fail;
	dmt = dm_task_create(DM_DEVICE_CREATE);
	if (!dmt)
		goto fail;
	/* a read-only disk: a read-only blkiso device (dm.c, lower_size()) */
	ok = dm_task_set_name(dmt, l->name) && dm_task_set_uuid(dmt, uuid) &&
	     (!ro || dm_task_set_ro(dmt)) &&
	     dm_task_add_target(dmt, 0, bytes >> 9, "blkiso", params) && dm_run_synced(dmt);
	dm_task_destroy(dmt);
	if (ok && !dm_lookup(l->name, &dev)) {
		l->bmaj = dev.major;
		l->bmin = dev.minor;
		l->created = true;
		return BX_OK;
	}
fail:
	err("create: cannot create the blkiso device %s over %s (is blkiso.ko loaded?)",
	    l->name, l->disk);
	return BX_OTHER;
}

/* Every holder a step ran on gets its original table back, last first. */
static void holders_undo(struct live *l)
{
	unsigned int i = l->nh;

	while (i--)
		if (l->h[i].touched) {
			holder_restore(&l->h[i]);
			l->h[i].touched = false;
		}
}

/*
 * Re-point every holder from @from to @to (major:minor strings); on a
 * failure every holder touched is restored and the failed step named.
 */
static int holders_repoint(struct live *l, const char *from, const char *to)
{
	unsigned int i;

	for (i = 0; i < l->nh; i++) {
		struct holder *h = &l->h[i];
		const char *step;

		if (!table_repoint(&h->orig, from, to, &h->repointed)) {
			err("%s: its table does not name %s", h->name, from);
			goto undo;
		}
		h->touched = true;
		step = table_swap(h->name, &h->repointed, (int)i);
		if (step) {
			err("%s: holder %s: the %s step failed", step, h->name, step);
			goto undo;
		}
	}
	return BX_OK;
undo:
	holders_undo(l);
	return BX_OTHER;
}

/* The holders onto the blkiso device (@attach) or back onto the disk, then LVM. */
static int holders_move(struct live *l, bool attach)
{
	char disk[32], bi[32];
	int ret;

	snprintf(disk, sizeof(disk), "%u:%u", l->dmaj, l->dmin);
	snprintf(bi, sizeof(bi), "%u:%u", l->bmaj, l->bmin);
	ret = holders_repoint(l, attach ? disk : bi, attach ? bi : disk);
	return ret ? ret : lvm_step(l, attach);
}

static void undo_all(struct live *l, bool attach)
{
	holders_undo(l);
	lvm_undo(l, attach);
	if (attach && l->created && dm_simple(l->name, DM_DEVICE_REMOVE))
		err("%s: cannot remove it; remove it by hand (dmsetup remove)", l->name);
}

/* The holders' names for attach_report(). */
static void live_report(const struct live *l, bool removed)
{
	const char *names[MAX_HOLDERS];
	unsigned int i, n = l->nh < MAX_HOLDERS ? l->nh : MAX_HOLDERS;
	char disk[80];

	for (i = 0; i < n; i++)
		names[i] = l->h[i].name;
	snprintf(disk, sizeof(disk), "/dev/%s", l->kname);
	attach_report(l->name, removed ? disk : l->disk, names, n, removed);
}

int live_attach(const char *disk, const char *name)
{
	struct live l = { .disk = disk };
	int fd, ret;

	snprintf(l.name, sizeof(l.name), "%s", name);
	ret = disk_lookup(&l);
	if (ret)
		return ret;
	ret = holders_get(l.dmaj, l.dmin, disk, &l.h, &l.nh);
	if (ret)
		goto out;
	if (!l.nh) {
		/* nobody holds it: a plain attach, if nothing else has it either */
		fd = open(disk, O_RDONLY | O_EXCL | O_CLOEXEC);
		if (fd < 0 && errno == EBUSY) {
			recipe(&l);
			ret = BX_PERM;
			goto out;
		}
		if (fd >= 0)
			close(fd);
		live_free(&l);
		ret = dm_attach(disk, name);
		if (!ret)
			attach_report(name, disk, NULL, 0, false);
		return ret;
	}
	for (unsigned int i = 0; i < l.nh; i++)
		if (!strncmp(l.h[i].uuid, DM_UUID_PREFIX, strlen(DM_UUID_PREFIX))) {
			err("%s: already under the blkiso device %s", disk, l.h[i].name);
			ret = BX_INPUT;
			goto out;
		}
	{
		struct bdev dev;

		if (!dm_lookup(name, &dev)) {
			err("%s: a dm device of that name exists", name);
			ret = BX_INPUT;
			goto out;
		}
	}
	dm_udev_setup();
	ret = lvm_lock(&l);
	if (ret)
		goto out;
	ret = blkiso_create(&l);
	if (ret)
		goto fail;
	ret = holders_move(&l, true);
	if (ret)
		goto fail;
	lower_changed(l.dmaj, l.dmin);
	live_report(&l, false);
	goto out;
fail:
	undo_all(&l, true);
	err("%s: live attach undone, everything is as it was", disk);
out:
	live_free(&l);
	return ret;
}

int live_detach(const char *arg)
{
	struct live l = { .disk = arg };
	char sys[64], path[64];
	struct dm_task *dmt;
	struct dm_info info;
	struct bdev dev;
	int ret;

	ret = resolve_dev(arg, &dev);
	if (ret)
		return ret;
	snprintf(l.name, sizeof(l.name), "%s", dev.name[0] ? dev.name : arg);
	l.bmaj = dev.major;
	l.bmin = dev.minor;
	if (dm_blkiso_lower(l.name, &l.dmaj, &l.dmin)) {
		err("%s: not a blkiso device over one disk", l.name);
		return BX_INPUT;
	}
	snprintf(path, sizeof(path), "/dev/block/%u:%u", l.dmaj, l.dmin);
	l.disk = path;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", l.dmaj, l.dmin);
	{
		char real[PATH_MAX];

		if (!realpath(sys, real)) {
			err("%s: its disk %u:%u is gone", l.name, l.dmaj, l.dmin);
			return BX_NOTFOUND;
		}
		snprintf(l.kname, sizeof(l.kname), "%s", basename(real));
	}
	ret = holders_get(l.bmaj, l.bmin, l.name, &l.h, &l.nh);
	if (ret)
		goto out;
	/* every opener must be a holder: one open per holder's table */
	dmt = dm_task_create(DM_DEVICE_INFO);
	if (dmt && dm_task_set_name(dmt, l.name) && dm_task_run(dmt) &&
	    dm_task_get_info(dmt, &info) && info.open_count > (int)l.nh) {
		err("%s: open %d times but held by %u dm devices: something else uses it (a mount?); not detaching",
		    l.name, info.open_count, l.nh);
		ret = BX_PERM;
	}
	if (dmt)
		dm_task_destroy(dmt);
	if (ret)
		goto out;
	dm_udev_setup();
	ret = lvm_lock(&l);
	if (ret)
		goto out;
	ret = holders_move(&l, false);
	if (ret)
		goto fail;
	if (inject("remove", -1) || dm_simple(l.name, DM_DEVICE_REMOVE)) {
		err("remove: cannot remove %s (opened meanwhile?)", l.name);
		ret = BX_OTHER;
		goto fail;
	}
	lower_changed(l.dmaj, l.dmin);
	live_report(&l, true);
	goto out;
fail:
	undo_all(&l, false);
	err("%s: live detach undone, everything is as it was", l.name);
out:
	live_free(&l);
	return ret;
}
