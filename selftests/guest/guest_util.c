// SPDX-License-Identifier: GPL-2.0
/*
 * guest_util.c - helpers for the blkiso guest tests (see guest_util.h).
 * They run inside the QEMU guest started by selftests/vm/run.sh.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_util.h"

#define CG_ROOT		"/sys/fs/cgroup"
#define NULLB_CFS	"/sys/kernel/config/nullb"

static int vformat(char *buf, size_t size, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, size, fmt, ap);

	return (n < 0 || (size_t)n >= size) ? -1 : n;
}

static int wait_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int gu_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	st = vformat(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (st < 0)
		return -1;
	st = system(cmd);
	if (st < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int gu_sh_out(char *out, size_t size, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	size_t n = 0;
	FILE *f;
	int st;

	va_start(ap, fmt);
	st = vformat(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (st < 0 || size == 0)
		return -1;
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, size - 1, f);
	out[n] = '\0';
	while (n && out[n - 1] == '\n')
		out[--n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int gu_write(const char *path, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int fd, n, ret = 0;

	va_start(ap, fmt);
	n = vformat(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

int gu_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

long long gu_read_ll(const char *path)
{
	char buf[64];

	if (gu_read(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtoll(buf, NULL, 0);
}

int gu_module_load(void)
{
	const char *ko = getenv("BLKISO_KO");

	if (!ko)
		return -1;
	if (gu_sh("modprobe dm-mod"))
		return -1;
	if (access("/sys/module/blkiso", F_OK) == 0)
		return 0;
	return gu_sh("insmod %s", ko);
}

int gu_module_unload(void)
{
	if (access("/sys/module/blkiso", F_OK))
		return 0;
	return gu_sh("rmmod blkiso");
}

static int nullb_attr(const char *name, const char *attr, unsigned long val)
{
	char path[256];

	snprintf(path, sizeof(path), NULLB_CFS "/%s/%s", name, attr);
	return gu_write(path, "%lu", val);
}

int gu_nullb_create(const struct gu_nullb *nb, char *dev, size_t devsize)
{
	char path[256];

	if (gu_sh("modprobe null_blk nr_devices=0"))
		return -1;
	/* A device left behind by a failed test is made anew. */
	gu_nullb_destroy(nb->name);
	snprintf(path, sizeof(path), NULLB_CFS "/%s", nb->name);
	if (mkdir(path, 0755))
		return -errno;
	if (nullb_attr(nb->name, "size", nb->size_mb ? nb->size_mb : 1024) ||
	    nullb_attr(nb->name, "blocksize", nb->blocksize ? nb->blocksize : 512) ||
	    (nb->queue_depth && nullb_attr(nb->name, "hw_queue_depth", nb->queue_depth)) ||
	    nullb_attr(nb->name, "irqmode", nb->irqmode) ||
	    (nb->completion_nsec &&
	     nullb_attr(nb->name, "completion_nsec", nb->completion_nsec)) ||
	    (nb->max_sectors && nullb_attr(nb->name, "max_sectors", nb->max_sectors)) ||
	    (nb->mbps && nullb_attr(nb->name, "mbps", nb->mbps)) ||
	    nullb_attr(nb->name, "memory_backed", nb->memory_backed) ||
	    nullb_attr(nb->name, "power", 1))
		return -1;
	snprintf(dev, devsize, "/dev/%s", nb->name);
	return access(dev, F_OK) ? -1 : 0;
}

int gu_nullb_destroy(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), NULLB_CFS "/%s", name);
	if (access(path, F_OK))
		return 0;
	nullb_attr(name, "power", 0);
	return rmdir(path) ? -errno : 0;
}

int gu_scsi_debug_create(const char *params, char *sd, size_t size)
{
	if (gu_sh("modprobe scsi_debug %s", params))
		return -1;
	if (gu_sh_out(sd, size, "for i in $(seq 100); do "
		      "b=$(ls /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block"
		      " 2>/dev/null | grep sd | head -1); [ -n \"$b\" ] && [ -b /dev/$b ] && "
		      "break; sleep 0.1; done; echo $b"))
		return -1;
	return sd[0] ? 0 : -1;
}

int gu_scsi_debug_blkiso(const char *params, const char *dm_name, char *sd, size_t size)
{
	/* scsi_debug's disks need sd_mod, which the runner's initramfs may lack */
	if (gu_sh("modprobe sd_mod 2>/dev/null"))
		return GU_NO_SD_MOD;
	if (gu_scsi_debug_create(params, sd, size))
		return -1;
	return gu_sh("dmsetup create %s --table \"0 $(blockdev --getsz /dev/%s) blkiso /dev/%s 0\"",
		     dm_name, sd, sd) ? -1 : 0;
}

/* Create CG_ROOT/name, enabling the io controller in every parent. */
int gu_cg_create(const char *name)
{
	char path[512], parent[512];
	char *slash;

	snprintf(path, sizeof(path), CG_ROOT "/%s", name);
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	*slash = '\0';
	if (strcmp(parent, CG_ROOT)) {
		int ret = gu_cg_create(parent + strlen(CG_ROOT "/"));

		if (ret)
			return ret;
	}
	strncat(parent, "/cgroup.subtree_control", sizeof(parent) - strlen(parent) - 1);
	if (gu_write(parent, "+io"))
		return -1;
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int gu_cg_destroy(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), CG_ROOT "/%s", name);
	return rmdir(path) && errno != ENOENT ? -errno : 0;
}

unsigned long long gu_cg_id(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), CG_ROOT "/%s", name);
	return stat(path, &st) ? 0 : (unsigned long long)st.st_ino;
}

/* Start fio in @cgroup with its JSON going to @job->json. */
int gu_fio_start(struct gu_fio_job *job, const char *cgroup, const char *fmt, ...)
{
	static unsigned int seq;
	char args[3072], cmd[4096], procs[512];
	va_list ap;

	va_start(ap, fmt);
	if (vformat(args, sizeof(args), fmt, ap) < 0) {
		va_end(ap);
		return -1;
	}
	va_end(ap);
	snprintf(job->json, sizeof(job->json), "/tmp/fio-%d-%u.json", getpid(), seq++);
	snprintf(cmd, sizeof(cmd),
		 "exec fio --eta=never --output-format=json --output=%s --group_reporting %s",
		 job->json, args);
	job->pid = fork();
	if (job->pid < 0)
		return -1;
	if (job->pid == 0) {
		if (cgroup && *cgroup) {
			snprintf(procs, sizeof(procs), CG_ROOT "/%s/cgroup.procs", cgroup);
			if (gu_write(procs, "0"))
				_exit(126);
		}
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return 0;
}

static void parse_dir(const char *js, const char *dir, struct gu_fio_dir *d)
{
	static const struct {
		const char *path;
		size_t off;
	} fields[] = {
		{ "iops", offsetof(struct gu_fio_dir, iops) },
		{ "bw_bytes", offsetof(struct gu_fio_dir, bw_bytes) },
		{ "runtime", offsetof(struct gu_fio_dir, runtime_ms) },
		{ "clat_ns/mean", offsetof(struct gu_fio_dir, clat_mean_ns) },
		{ "clat_ns/percentile/50.000000", offsetof(struct gu_fio_dir, clat_p50_ns) },
		{ "clat_ns/percentile/99.000000", offsetof(struct gu_fio_dir, clat_p99_ns) },
	};
	char path[128];
	double v;
	size_t i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, fields[i].path);
		if (!gu_json_num(js, path, &v))
			*(double *)((char *)d + fields[i].off) = v;
	}
	snprintf(path, sizeof(path), "%s/io_bytes", dir);
	if (!gu_json_num(js, path, &v))
		d->io_bytes = v;
	snprintf(path, sizeof(path), "%s/total_ios", dir);
	if (!gu_json_num(js, path, &v))
		d->ios = v;
}

int gu_fio_wait(struct gu_fio_job *job, struct gu_fio *res)
{
	char *buf = NULL;
	long len;
	FILE *f;

	memset(res, 0, sizeof(*res));
	res->status = wait_status(job->pid);
	f = fopen(job->json, "r");
	if (!f)
		return res->status ? res->status : -1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, len + 1);
	if (buf && fread(buf, 1, len, f) == (size_t)len) {
		const char *js = strchr(buf, '{');	/* skip fio's notes */
		double v;

		if (js) {
			parse_dir(js, "read", &res->read);
			parse_dir(js, "write", &res->write);
			if (!gu_json_num(js, "jobs/error", &v))
				res->errors = v;
		}
	}
	free(buf);
	fclose(f);
	return res->status;
}

int gu_fio(const char *cgroup, struct gu_fio *res, const char *fmt, ...)
{
	struct gu_fio_job job;
	char args[3072];
	va_list ap;

	va_start(ap, fmt);
	if (vformat(args, sizeof(args), fmt, ap) < 0) {
		va_end(ap);
		return -1;
	}
	va_end(ap);
	if (gu_fio_start(&job, cgroup, "%s", args))
		return -1;
	return gu_fio_wait(&job, res);
}

/*
 * fio's JSON is regular enough to read by searching: each '/'-separated
 * component of @path is the next "key" after the previous one.
 */
int gu_json_num(const char *json, const char *path, double *val)
{
	char pat[128];
	const char *p = json, *c = path, *e;

	while (*c) {
		e = strchr(c, '/');
		if (!e)
			e = c + strlen(c);
		snprintf(pat, sizeof(pat), "\"%.*s\" : ", (int)(e - c), c);
		p = strstr(p, pat);
		if (!p)
			return -1;
		p += strlen(pat);
		c = *e ? e + 1 : e;
	}
	*val = strtod(p, NULL);
	return 0;
}

int gu_blkiso_dir(const char *dm_name, char *dir, size_t size)
{
	char out[64];

	/* No udev: /dev/mapper nodes are plain nodes, so ask sysfs. */
	if (gu_sh_out(out, sizeof(out), "for d in /sys/block/dm-*; do "
		      "[ \"$(cat $d/dm/name)\" = '%s' ] && basename $d; done", dm_name) ||
	    !out[0])
		return -1;
	snprintf(dir, size, "/sys/kernel/blkiso/%s", out);
	return access(dir, F_OK) ? -1 : 0;
}

int gu_tenant_set(const char *dir, const char *cgroup, const char *line)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/tenant", dir);
	return gu_write(path, "%s %s", cgroup, line);
}

long long gu_tenant_stat(const char *dir, unsigned long long cgid, const char *key)
{
	char path[256], buf[1024], pat[64], *p;

	if (cgid)
		snprintf(path, sizeof(path), "%s/%llu/stats", dir, cgid);
	else
		snprintf(path, sizeof(path), "%s/kernel/stats", dir);
	if (gu_read(path, buf, sizeof(buf)) < 0)
		return -1;
	snprintf(pat, sizeof(pat), "%s=", key);
	for (p = buf; (p = strstr(p, pat)); p++)
		if (p == buf || p[-1] == ' ')
			return strtoll(p + strlen(pat), NULL, 10);
	return -1;
}

int gu_wait_stat(const char *dir, unsigned long long cgid, const char *key,
		 long long min, int timeout_ms)
{
	int waited;

	for (waited = 0; waited <= timeout_ms; waited += 10) {
		if (gu_tenant_stat(dir, cgid, key) >= min)
			return 0;
		usleep(10 * 1000);
	}
	return -1;
}

/* Read "key=value ..." from @path into @vals (-1 for a missing key). */
int gu_stats_parse(const char *path, const char * const *keys, long long *vals, int n)
{
	char buf[2048], pat[64], *p;
	int i;

	if (gu_read(path, buf, sizeof(buf)) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		vals[i] = -1;
		snprintf(pat, sizeof(pat), "%s=", keys[i]);
		for (p = buf; (p = strstr(p, pat)); p++) {
			if (p == buf || p[-1] == ' ') {
				vals[i] = strtoll(p + strlen(pat), NULL, 10);
				break;
			}
		}
	}
	return 0;
}

enum { L_ARR, L_ADM, L_DIS, L_RNW, L_REJ, L_QUE, L_CMP, L_NR };
static const char * const ledger_keys[L_NR] = {
	"arrived", "admitted", "dispatched", "rejected_nowait", "rejected", "queued",
	"completed",
};

/* 1: idle and exact; 0: idle-wait still pending; -1: broken (or unreadable). */
static int ledger_one(const char *path, bool report)
{
	long long v[L_NR];
	int i;

	if (gu_stats_parse(path, ledger_keys, v, L_NR))
		return access(path, F_OK) ? 1 : -1;	/* collected meanwhile */
	for (i = 0; i < L_NR; i++)
		if (v[i] < 0)
			return -1;
	if (v[L_QUE] || v[L_CMP] != v[L_ADM] + v[L_DIS]) {
		if (report)
			fprintf(stderr, "# ledger: %s not idle: completed=%lld admitted+dispatched=%lld"
				" queued=%lld\n", path, v[L_CMP], v[L_ADM] + v[L_DIS], v[L_QUE]);
		return 0;
	}
	if (v[L_ARR] != v[L_ADM] + v[L_DIS] + v[L_RNW] + v[L_REJ] + v[L_QUE]) {
		if (report)
			fprintf(stderr, "# ledger: %s: arrived=%lld != admitted %lld + dispatched %lld"
				" + rejected_nowait %lld + rejected %lld + queued %lld\n", path,
				v[L_ARR], v[L_ADM], v[L_DIS], v[L_RNW], v[L_REJ], v[L_QUE]);
		return -1;
	}
	return 1;
}

/* Check the device file and every tenant directory once. */
static int ledger_all(const char *dir, bool report)
{
	char path[512], list[8192], *tok, *save;
	int worst = 1, r;

	snprintf(path, sizeof(path), "%s/stats", dir);
	worst = ledger_one(path, report);
	if (gu_sh_out(list, sizeof(list), "cd %s && for d in */; do [ -f \"$d/stats\" ] && "
		      "printf '%%s ' \"${d%%/}\"; done", dir))
		return -1;
	for (tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		snprintf(path, sizeof(path), "%s/%s/stats", dir, tok);
		r = ledger_one(path, report);
		if (r < worst)
			worst = r;
	}
	return worst;
}

bool gu_ledger_ok(const char *dir)
{
	int waited, r = 0;

	for (waited = 0; waited < 10000; waited += 50) {
		r = ledger_all(dir, false);
		if (r != 0)
			break;
		usleep(50 * 1000);
	}
	if (r != 1)
		ledger_all(dir, true);
	return r == 1;
}

int gu_cg_kill(const char *name, int timeout_ms)
{
	char path[512], buf[256];
	int waited;

	snprintf(path, sizeof(path), CG_ROOT "/%s/cgroup.kill", name);
	if (gu_write(path, "1"))
		return -1;
	snprintf(path, sizeof(path), CG_ROOT "/%s/cgroup.procs", name);
	for (waited = 0; waited <= timeout_ms; waited += 10) {
		if (gu_read(path, buf, sizeof(buf)) == 0)
			return 0;
		usleep(10 * 1000);
	}
	return -1;
}

int gu_ring_read(const char *path, struct gu_tick *r, int max)
{
	char buf[8192], *line, *save;
	int n = 0;

	if (gu_read(path, buf, sizeof(buf)) < 0)
		return -1;
	line = strtok_r(buf, "\n", &save);	/* the header */
	if (!line || strncmp(line, "seq time_us completed", 21))
		return -1;
	while ((line = strtok_r(NULL, "\n", &save)) && n < max) {
		struct gu_tick *x = &r[n];
		int k;

		memset(x, 0, sizeof(*x));
		x->mode = 4;	/* no allocation */
		k = sscanf(line, "%llu %llu %u %u %u %u %u %u %llu %u %u %llu %u %llu %llu",
			   &x->seq, &x->time_us, &x->completed, &x->missed, &x->miss_pm,
			   &x->mult, &x->flags, &x->victims, &x->usage, &x->slots,
			   &x->inflight, &x->delay_us, &x->mode, &x->rcap, &x->wcap);
		if ((k != 8 && k != 15) || x->mode > 4)
			return -1;
		n++;
	}
	return n;
}

int gu_ring_last(const char *dir, struct gu_tick *last)
{
	struct gu_tick r[GU_TICKS_MAX];
	char path[256];
	int n;

	snprintf(path, sizeof(path), "%s/ring", dir);
	n = gu_ring_read(path, r, GU_TICKS_MAX);
	if (n <= 0)
		return -1;
	*last = r[n - 1];
	return 0;
}

int gu_mkfs_mount(const char *fs, const char *dev, const char *mnt)
{
	/* ext4's and xfs's checksums need the crc32c driver loaded first */
	if (gu_sh("modprobe crc32c_generic && modprobe libcrc32c && modprobe %s", fs))
		return -1;
	/*
	 * ext4: no background I/O of its own after the mount (ext4lazyinit
	 * would zero inode tables and read block bitmaps from a root kernel
	 * thread, the kernel tenant's, at a time the machine's speed picks)
	 */
	if (!strcmp(fs, "ext4"))
		return gu_sh("mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "
			     "%s >/dev/null 2>&1 && mount -t ext4 -o " GU_EXT4_QUIET " %s %s",
			     dev, dev, mnt);
	return gu_sh("mkfs.xfs -q -f %s >/dev/null 2>&1 && mount -t xfs %s %s",
		     dev, dev, mnt);
}

int gu_busy_start(void)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	/* gone with the test, even one the harness kills mid-way */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1 ||
	    setpriority(PRIO_PROCESS, 0, 19))
		_exit(1);
	for (;;)
		;
}

void gu_busy_stop(int pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
