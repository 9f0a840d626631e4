// SPDX-License-Identifier: GPL-2.0
/*
 * iface_fuzz.c - in-guest, structure-aware fuzzer of blkiso's kernel
 * interfaces, with fault injection (make check-debug, on the debug kernel;
 * doc/robustness.md).
 *
 *   iface_fuzz SECONDS [SEED]
 *
 * For SECONDS it throws mutated inputs at every interface of one blkiso
 * device while two cgroups do I/O through it:
 *   - every file under /sys/kernel/blkiso (writes of mutated lines to the
 *     writable ones, reads of all);
 *   - dm target messages ("tenant <cg> <line>", "device <line>", a bare
 *     line) and table loads (create + remove of a second device with a
 *     mutated parameter list), through libdevmapper in this process;
 *   - every ioctl of /dev/blkiso, from a valid argument struct with one to
 *     three field mutations (sizes, versions, flags, reserved fields, dev_t,
 *     cgroup ids, record pointers and capacities, lines) and mutated
 *     command numbers.
 * Lines are mutations of valid lines built from the grammar's own key names
 * (kmod/core: token insert, delete, swap, replace with boundary numbers and
 * words, byte flips, truncation), not random bytes stopped by the first
 * token.  Cgroups are removed and made anew, so tenants come and go.
 *
 * Faults: about one operation in four runs with failslab and
 * fail_page_alloc armed for this task only (/proc/self/make-it-fail); a
 * child doing O_DIRECT I/O from changing cgroups has failslab armed all the
 * time (tenant creation on the I/O path); 1% of the lower device's bios
 * fail (fail_make_request).
 *
 * It counts distinct accepted and refused inputs per interface (a hash of
 * the interface and the input bytes) and the errnos.  It fails if an errno
 * outside the documented ones appears, if the device stops answering, or
 * if the ledger (guest_util.h) does not hold at the end.  Kernel reports
 * (KASAN, lockdep...) fail the boot through the runner.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libdevmapper.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/blkiso.h>
#include "conf.h"
#include "guest_util.h"

#define DM_NAME		"bifz"
#define DM_TABLE_NAME	"bifz_t"
#define NULLB		"nullb_fz"
#define NULLB_T		"nullb_fzt"
#define CG		"bifz"
#define NR_CGS		4
#define FAULTS		"/sys/kernel/debug"

/* ---- random numbers: xorshift64* (a seed repeats a run's inputs) ---- */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

/* ---- distinct inputs: a set of 64-bit hashes ---- */
struct hash_set {
	uint64_t *slot;
	size_t cap, n;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

static void set_add(struct hash_set *s, uint64_t h)
{
	size_t i;

	h |= 1;		/* 0 marks an empty slot */
	if (2 * (s->n + 1) > s->cap) {
		struct hash_set t = { .cap = s->cap ? 2 * s->cap : 4096 };

		t.slot = calloc(t.cap, sizeof(*t.slot));
		if (!t.slot)
			abort();
		for (i = 0; i < s->cap; i++)
			if (s->slot[i])
				set_add(&t, s->slot[i]);
		free(s->slot);
		*s = t;
	}
	for (i = h % s->cap; s->slot[i]; i = (i + 1) % s->cap)
		if (s->slot[i] == h)
			return;
	s->slot[i] = h;
	s->n++;
}

/* ---- per-interface tallies ---- */
enum iface { IF_SYSFS_WRITE, IF_SYSFS_READ, IF_MESSAGE, IF_TABLE, IF_IOCTL, IF_NR };
static const char *const iface_name[IF_NR] = {
	"sysfs write", "sysfs read", "dm message", "table load", "ioctl",
};

struct tally {
	unsigned long ops, faulted;
	uint64_t busy_ns, max_ns;	/* time in the operations */
	struct hash_set accepted, refused;
	unsigned long err[256];
};
static struct tally tally[IF_NR];
static int unexpected;
static uint64_t op_start;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The errnos an interface may return on bad input or an injected fault. */
static bool errno_documented(int e)
{
	switch (e) {
	case EINVAL: case ENOENT: case ENODEV: case ENOMEM: case EBUSY:
	case ERANGE: case EPERM: case EACCES: case EFAULT: case ENOTTY:
	case E2BIG: case ENXIO: case EEXIST: case ENOSPC: case EOVERFLOW:
	case EIO:
		return true;
	}
	return false;
}

static void record(enum iface f, uint64_t h, int ret, bool faulted)
{
	struct tally *t = &tally[f];
	int e = ret < 0 ? -ret : 0;
	uint64_t took = now_ns() - op_start;

	t->ops++;
	t->busy_ns += took;
	if (took > t->max_ns)
		t->max_ns = took;
	t->faulted += faulted;
	if (!ret) {
		set_add(&t->accepted, h);
		return;
	}
	set_add(&t->refused, h);
	t->err[e < 256 ? e : 255]++;
	if (!errno_documented(e) && unexpected++ < 20)
		fprintf(stderr, "# unexpected errno %d (%s) from %s\n", e, strerror(e),
			iface_name[f]);
}

/* ---- fault injection (debugfs, CONFIG_FAULT_INJECTION) ---- */
static bool faults_ok;
static int fail_fd = -1;	/* /proc/self/make-it-fail, opened once */

/*
 * Arm fault @name at @probability percent, for tasks with make-it-fail
 * only when @task_filter (the filter first: armed without it, every task
 * of the guest would fail).
 */
static int fault_setup(const char *name, int probability, bool task_filter)
{
	char p[128];

	snprintf(p, sizeof(p), FAULTS "/%s/task-filter", name);
	if (task_filter && gu_write(p, "Y"))
		return -1;
	snprintf(p, sizeof(p), FAULTS "/%s/interval", name);
	gu_write(p, "1");
	snprintf(p, sizeof(p), FAULTS "/%s/times", name);
	gu_write(p, "-1");
	snprintf(p, sizeof(p), FAULTS "/%s/verbose", name);
	gu_write(p, "0");
	snprintf(p, sizeof(p), FAULTS "/%s/ignore-gfp-wait", name);
	gu_write(p, "N");
	snprintf(p, sizeof(p), FAULTS "/%s/min-order", name);
	gu_write(p, "0");
	snprintf(p, sizeof(p), FAULTS "/%s/probability", name);
	return gu_write(p, "%d", probability) ? -1 : 0;
}

static void faults_off(void)
{
	gu_write(FAULTS "/failslab/probability", "0");
	gu_write(FAULTS "/fail_page_alloc/probability", "0");
	gu_write(FAULTS "/fail_make_request/probability", "0");
}

/*
 * Arm or disarm this task's faults.  A write to an open make-it-fail file
 * allocates nothing, so disarming cannot itself fail.
 */
static void make_it_fail(int on)
{
	if (faults_ok)
		while (pwrite(fail_fd, on ? "1" : "0", 1, 0) != 1 && !on)
			;
}

/* ---- the grammar corpus and line mutations ---- */
static const char *const words[] = {
	"0", "1", "2", "7", "100", "512", "4K", "64K", "1M", "4G", "-1", "-5",
	"max", "auto", "none", "hi", "mid", "lo", "hi,lo", "lo,mid,hi",
	"read", "write", "sync", "lo:write,4K-", "hi:read,sync,-64K", "off",
	"damped", "shed", "exact", "request", "wc", "strict", "1099511627776",
	"1125899906842624", "18446744073709551615", "18446744073709551616",
	"9223372036854775808", "99999999999999999999999", "", "=", ",", ":",
};

static const char *const seeds_tenant[] = {
	"riops=500 wiops=max rbps=max wbps=10485760 runits=max wunits=max hi.policy=hi,lo",
	"riops=100 wbps=1M hi.policy=lo,mid mid.min=-5 floor=-100 r4=lo:write,4K- min_tokens=0 mode=auto rdef=lo slots=8",
	"wbps=4M riops=2000", "riops=20 wiops=20", "alloc=100 latency_us=1000",
	"riops=max", "initial=exact wbps=2M",
};
static const char *const seeds_dev[] = {
	"unit_bytes=4K tick_ms=50 reject_mode=1", "tick_ms=10 overload=damped",
	"unit_bytes=4K tick_ms=10 reject_mode=1 mult_down=20",
	"shed_bytes=256K hold_ms=auto", "tick_ms=100",
};

static void line_from_seed(bool dev, char *line, size_t cap)
{
	if (dev)
		snprintf(line, cap, "%s", seeds_dev[rnd_below(sizeof(seeds_dev) / sizeof(*seeds_dev))]);
	else
		snprintf(line, cap, "%s", seeds_tenant[rnd_below(sizeof(seeds_tenant) / sizeof(*seeds_tenant))]);
}

static const char *any_key(bool dev)
{
	return dev ? bi_dev_conf_key_name(rnd_below(bi_dev_conf_nr_keys())) :
		     bi_conf_key_name(rnd_below(bi_conf_nr_keys()));
}

static const char *any_word(void)
{
	return words[rnd_below(sizeof(words) / sizeof(*words))];
}

/* One mutation of a space-separated line, in place (cap includes the NUL). */
static void mutate_line(bool dev, char *line, size_t cap)
{
	char tok[48][96], out[1024];
	int n = 0, i, j, len = 0;
	char *save, *p;

	for (p = strtok_r(line, " ", &save); p && n < 48; p = strtok_r(NULL, " ", &save))
		snprintf(tok[n++], sizeof(tok[0]), "%s", p);
	switch (rnd_below(9)) {
	case 0:	/* a new key=value */
		if (n < 48)
			snprintf(tok[n++], sizeof(tok[0]), "%s=%s", any_key(dev), any_word());
		break;
	case 1:	/* drop a token */
		if (n) {
			i = rnd_below(n);
			memmove(tok[i], tok[i + 1], (n - i - 1) * sizeof(tok[0]));
			n--;
		}
		break;
	case 2:	/* duplicate a token */
		if (n && n < 48) {
			memcpy(tok[n], tok[rnd_below(n)], sizeof(tok[0]));
			n++;
		}
		break;
	case 3:	/* swap two tokens */
		if (n > 1) {
			i = rnd_below(n);
			j = rnd_below(n);
			memcpy(out, tok[i], sizeof(tok[0]));
			memcpy(tok[i], tok[j], sizeof(tok[0]));
			memcpy(tok[j], out, sizeof(tok[0]));
		}
		break;
	case 4:	/* another value for a key */
	case 5:
		if (n) {
			i = rnd_below(n);
			p = strchr(tok[i], '=');
			if (p)
				snprintf(p + 1, sizeof(tok[0]) - (p + 1 - tok[i]), "%s", any_word());
		}
		break;
	case 6:	/* another key for a value */
		if (n) {
			i = rnd_below(n);
			p = strchr(tok[i], '=');
			snprintf(out, sizeof(tok[0]), "%s=%s", any_key(dev), p ? p + 1 : any_word());
			memcpy(tok[i], out, sizeof(tok[0]));
		}
		break;
	case 7:	/* a byte changed */
		if (n) {
			i = rnd_below(n);
			j = strlen(tok[i]);
			if (j)
				tok[i][rnd_below(j)] = "=,:- \t\n0x9K.\xff"[rnd_below(14)];
		}
		break;
	case 8:	/* a word alone */
		if (n < 48)
			snprintf(tok[n++], sizeof(tok[0]), "%s", any_word());
		break;
	}
	for (i = 0; i < n; i++)
		len += snprintf(out + len, sizeof(out) - len, "%s%s", i ? " " : "", tok[i]);
	if (!rnd_below(16) && len)	/* truncated */
		out[rnd_below(len)] = '\0';
	len = strnlen(out, cap - 1);	/* longer lines are cut */
	memcpy(line, out, len);
	line[len] = '\0';
}

static void fuzz_line(bool dev, char *line, size_t cap)
{
	int m = rnd_below(4);	/* 0: a valid seed line */

	line_from_seed(dev, line, cap);
	while (m--)
		mutate_line(dev, line, cap);
}

/* ---- the rig ---- */
static char dev_dir[128], dev_conf[160], lower[64], lower_t[64];
static long long sectors;
static unsigned int dm_major, dm_minor;
static unsigned long long cg_ids[NR_CGS];

static const char *cg_name(int i)
{
	static char buf[NR_CGS][32];

	snprintf(buf[i], sizeof(buf[i]), CG "/c%d", i);
	return buf[i];
}

static void dm_quiet(int level __attribute__((unused)),
		     const char *file __attribute__((unused)),
		     int line __attribute__((unused)),
		     int dm_errno_or_class __attribute__((unused)),
		     const char *f __attribute__((unused)), ...)
{
}

static int dm_run(int type, const char *name, const char *msg, const char *table)
{
	struct dm_task *dmt = dm_task_create(type);
	int ret = -EINVAL;

	if (!dmt)
		return -ENOMEM;
	if (!dm_task_set_name(dmt, name))
		goto out;
	if (msg && (!dm_task_set_sector(dmt, 0) || !dm_task_set_message(dmt, msg)))
		goto out;
	if (table && !dm_task_add_target(dmt, 0, sectors, "blkiso", table))
		goto out;
	errno = 0;
	ret = dm_task_run(dmt) ? 0 : -(errno ? errno : EINVAL);
out:
	dm_task_destroy(dmt);
	return ret;
}

/* ---- operations ---- */
static char sysfs_files[512][160];
static int nr_sysfs_files;

static void scan_sysfs(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[160];

	if (!d)
		return;
	while ((e = readdir(d)) && nr_sysfs_files < 512) {
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p))
			continue;
		if (e->d_type == DT_DIR && depth < 3)
			scan_sysfs(p, depth + 1);
		else if (e->d_type == DT_REG)
			snprintf(sysfs_files[nr_sysfs_files++], sizeof(p), "%s", p);
	}
	closedir(d);
}

static void op_sysfs(bool faults)
{
	const char *path = sysfs_files[rnd_below(nr_sysfs_files)];
	const char *base = strrchr(path, '/') + 1;
	char line[BLKISO_LINE_MAX + 64], buf[8192];
	bool writable = strcmp(base, "conf") == 0 || strcmp(base, "tenant") == 0;
	bool dev = strcmp(path, dev_conf) == 0;
	int fd, ret;
	ssize_t r;

	if (!writable || !rnd_below(4)) {
		fd = open(path, O_RDONLY);
		make_it_fail(faults);
		r = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
		ret = r < 0 ? -errno : 0;
		make_it_fail(0);
		if (fd >= 0)
			close(fd);
		record(IF_SYSFS_READ, fnv(fnv(1, path, strlen(path)), &faults, 1), ret, faults);
		return;
	}
	if (!strcmp(base, "tenant")) {
		char cg[64];

		switch (rnd_below(4)) {
		case 0:	snprintf(cg, sizeof(cg), "%llu", cg_ids[rnd_below(NR_CGS)]); break;
		case 1:	snprintf(cg, sizeof(cg), "/%s", cg_name(rnd_below(NR_CGS))); break;
		case 2:	snprintf(cg, sizeof(cg), "/sys/fs/cgroup/%s", cg_name(rnd_below(NR_CGS))); break;
		default: snprintf(cg, sizeof(cg), "%s", any_word()); break;
		}
		fuzz_line(false, buf, BLKISO_LINE_MAX);
		if (snprintf(line, sizeof(line), "%s %s", cg, buf) >= (int)sizeof(line))
			line[sizeof(line) - 1] = '\0';
	} else {
		fuzz_line(dev, line, BLKISO_LINE_MAX);
	}
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		record(IF_SYSFS_WRITE, fnv(2, path, strlen(path)), -errno, false);
		return;
	}
	make_it_fail(faults);
	r = write(fd, line, strlen(line));
	ret = r < 0 ? -errno : 0;
	make_it_fail(0);
	close(fd);
	record(IF_SYSFS_WRITE, fnv(fnv(2, base, strlen(base)), line, strlen(line)), ret, faults);
}

static void op_message(bool faults)
{
	char line[BLKISO_LINE_MAX], msg[BLKISO_LINE_MAX + 96];
	int ret;

	switch (rnd_below(4)) {
	case 0:
	case 1:
		fuzz_line(false, line, sizeof(line));
		snprintf(msg, sizeof(msg), "tenant %s%s %s", rnd_below(8) ? "/" : "",
			 rnd_below(8) ? cg_name(rnd_below(NR_CGS)) : any_word(), line);
		break;
	case 2:
		fuzz_line(true, line, sizeof(line));
		snprintf(msg, sizeof(msg), "device %s", line);
		break;
	default:
		fuzz_line(true, line, sizeof(line));
		snprintf(msg, sizeof(msg), "%s%s", rnd_below(4) ? "" : "bogus ", line);
		break;
	}
	if (!msg[0])
		snprintf(msg, sizeof(msg), "x");
	make_it_fail(faults);
	ret = dm_run(DM_DEVICE_TARGET_MSG, DM_NAME, msg, NULL);
	make_it_fail(0);
	record(IF_MESSAGE, fnv(3, msg, strlen(msg)), ret, faults);
}

/*
 * Load a mutated table into a second device, then remove it.  The device
 * is created unarmed: a failed allocation in dm_create()'s disk setup trips
 * a lockdep report in 6.1's blk-throttle unwinding (doc/robustness.md),
 * which would switch lockdep off for the rest of the run.
 */
static void op_table(bool faults)
{
	char line[BLKISO_LINE_MAX], params[BLKISO_LINE_MAX + 128], *p;
	int n = 0, ret;

	fuzz_line(true, line, sizeof(line));
	for (p = line; *p; p++)
		n += *p != ' ' && (p == line || p[-1] == ' ');
	if (!rnd_below(8))
		n += (int)rnd_below(5) - 2;
	snprintf(params, sizeof(params), "%s 0 %d %s", lower_t, n, line);
	ret = dm_run(DM_DEVICE_CREATE, DM_TABLE_NAME, NULL, NULL);
	if (!ret) {
		make_it_fail(faults);
		ret = dm_run(DM_DEVICE_RELOAD, DM_TABLE_NAME, NULL, params);
		make_it_fail(0);
		if (!ret)
			ret = dm_run(DM_DEVICE_RESUME, DM_TABLE_NAME, NULL, NULL);
		record(IF_TABLE, fnv(4, params, strlen(params)), ret, faults);
	}
	dm_run(DM_DEVICE_REMOVE, DM_TABLE_NAME, NULL, NULL);
}

static const unsigned long ioctl_cmds[] = {
	BLKISO_IOC_GET_VERSION, BLKISO_IOC_SET_TENANT, BLKISO_IOC_GET_TENANT,
	BLKISO_IOC_SET_DEVICE, BLKISO_IOC_GET_DEVICE, BLKISO_IOC_STATS, BLKISO_IOC_RING,
};

static uint64_t boundary(unsigned int width)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 4, 7, 8, 16, 64, 255, 256, 4095, 4096, 65535, 65536,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL, ~0ULL, ~0ULL >> 1,
	};
	uint64_t x = rnd_below(4) ? v[rnd_below(sizeof(v) / sizeof(*v))] : rnd();

	return width == 4 ? (uint32_t)x : x;
}

union ioc_arg {
	struct blkiso_ioc_hdr hdr;
	struct blkiso_ioc_version v;
	struct blkiso_ioc_tenant t;
	struct blkiso_ioc_device d;
	struct blkiso_ioc_stats s;
	struct blkiso_ioc_ring r;
	unsigned char raw[2048];
};

#define RECS_SIZE	(1 << 20)

/*
 * The argument and the record buffer each end at an inaccessible page:
 * a mutated size or capacity makes the kernel write past them, which must
 * end in EFAULT, not in this program's memory.
 */
static void *guarded(size_t size)
{
	size_t len = (size + 4095) / 4096 * 4096;
	char *p = mmap(NULL, len + 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + len, 4096, PROT_NONE))
		abort();
	return p + len - size;
}

static void op_ioctl(int fd, bool faults)
{
	static union ioc_arg *ap;
	static unsigned char *recs;
	unsigned int ci = rnd_below(sizeof(ioctl_cmds) / sizeof(*ioctl_cmds));
	unsigned long cmd = ioctl_cmds[ci];
	size_t size = 0;
	uint64_t h;
	int m, ret;

	if (!ap) {
		ap = guarded(sizeof(*ap));
		recs = guarded(RECS_SIZE);
	}
#define a (*ap)
	memset(&a, 0, sizeof(a));
	switch (ci) {
	case 0: size = sizeof(a.v); break;
	case 1: case 2:
		size = sizeof(a.t);
		a.t.major = dm_major;
		a.t.minor = dm_minor;
		a.t.cgid = rnd_below(8) ? cg_ids[rnd_below(NR_CGS)] : 0;
		a.t.flags = rnd_below(4) ? 0 : BLKISO_F_DRY_RUN;
		if (ci == 1)
			fuzz_line(false, a.t.line, sizeof(a.t.line));
		break;
	case 3: case 4:
		size = sizeof(a.d);
		a.d.major = dm_major;
		a.d.minor = dm_minor;
		a.d.flags = rnd_below(4) ? 0 : BLKISO_F_DRY_RUN;
		if (ci == 3)
			fuzz_line(true, a.d.line, sizeof(a.d.line));
		break;
	case 5:
		size = sizeof(a.s);
		a.s.major = dm_major;
		a.s.minor = dm_minor;
		a.s.recs = (uintptr_t)recs;
		a.s.rec_size = sizeof(struct blkiso_stats_rec);
		a.s.capacity = RECS_SIZE / sizeof(struct blkiso_stats_rec);
		break;
	case 6:
		size = sizeof(a.r);
		a.r.major = dm_major;
		a.r.minor = dm_minor;
		a.r.cgid = cg_ids[rnd_below(NR_CGS)];
		a.r.flags = rnd_below(2);
		a.r.recs = (uintptr_t)recs;
		a.r.rec_size = sizeof(struct blkiso_tick_rec);
		a.r.capacity = RECS_SIZE / sizeof(struct blkiso_tick_rec);
		break;
	}
	a.hdr.size = size;
	a.hdr.version = BLKISO_IOCTL_VERSION;
	/* Valid as built one time in eight; else 1-3 mutations. */
	for (m = rnd_below(8) ? 1 + rnd_below(3) : 0; m > 0; m--) {
		unsigned int r = rnd_below(10);

		if (r < 5) {		/* a 32-bit field (header, ids, flags, reserved...) */
			unsigned int off = 4 * rnd_below(size < 64 ? size / 4 : 16);

			*(uint32_t *)(a.raw + off) = boundary(4);
		} else if (r == 5) {	/* a 64-bit field */
			unsigned int off = 8 * rnd_below(size < 64 ? size / 8 : 8);

			*(uint64_t *)(a.raw + off) = boundary(8);
		} else if (r == 6) {	/* a bit flipped anywhere */
			unsigned int bit = rnd_below(size * 8);

			a.raw[bit / 8] ^= 1 << (bit % 8);
		} else if (r == 7) {	/* a bad record pointer */
			uint64_t bad[] = { 0, 1, 0xffffffffffff0000ULL, (uintptr_t)recs + 3,
					   (uintptr_t)recs + RECS_SIZE - 8 };

			if (ci == 5)
				a.s.recs = bad[rnd_below(5)];
			else if (ci == 6)
				a.r.recs = bad[rnd_below(5)];
		} else if (r == 8) {	/* another command number or size */
			cmd = _IOC(_IOC_READ | _IOC_WRITE, BLKISO_IOC_MAGIC, 0x40 + rnd_below(16),
				   rnd_below(2) ? sizeof(struct blkiso_ioc_hdr) : rnd_below(512));
		} else {		/* the line un-terminated */
			memset(a.t.line, 'x', sizeof(a.t.line));
		}
	}
	/* The input is what counts for distinctness: hash it before the call. */
	h = fnv(fnv(5, &cmd, sizeof(cmd)), a.raw, size);
	make_it_fail(faults);
	ret = ioctl(fd, cmd, &a) ? -errno : 0;
	make_it_fail(0);
	record(IF_IOCTL, h, ret, faults);
#undef a
}

/* The I/O child: O_DIRECT reads and writes from a changing cgroup, failslab armed. */
static void io_child(const char *dev)
{
	void *buf;
	int fd, i;
	char p[128];

	signal(SIGTERM, SIG_DFL);
	if (posix_memalign(&buf, 4096, 65536))
		_exit(1);
	memset(buf, 0x5a, 65536);
	fd = open(dev, O_RDWR | O_DIRECT);
	if (fd < 0)
		_exit(1);
	gu_write("/proc/self/make-it-fail", "1");
	for (;;) {
		snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/cgroup.procs", cg_name(rnd_below(NR_CGS)));
		gu_write(p, "%d", getpid());
		for (i = 0; i < 32; i++) {
			off_t off = (off_t)rnd_below(sectors / 128) * 65536;
			size_t len = 4096 << rnd_below(5);

			if (rnd_below(2))
				(void)!pread(fd, buf, len, off);
			else
				(void)!pwrite(fd, buf, len, off);
		}
	}
}

/* Remove one cgroup (its tenant goes to the GC) and make it anew. */
static void op_cgroup_churn(void)
{
	int i = 1 + rnd_below(NR_CGS - 1);	/* c0 keeps fio */
	char p[160];

	snprintf(p, sizeof(p), "/sys/fs/cgroup/%s", cg_name(i));
	/* Move the I/O child out first when it is there. */
	gu_sh("for p in $(cat %s/cgroup.procs 2>/dev/null); do echo $p > /sys/fs/cgroup/%s/cgroup.procs; done 2>/dev/null",
	      p, cg_name(0));
	if (rmdir(p) == 0 && gu_cg_create(cg_name(i)) == 0)
		cg_ids[i] = gu_cg_id(cg_name(i));
}

int main(int argc, char **argv)
{
	struct gu_nullb nb = { .name = NULLB, .size_mb = 256, .memory_backed = false };
	struct gu_nullb nbt = { .name = NULLB_T, .size_mb = 256 };
	int secs = argc > 1 ? atoi(argv[1]) : 300, fd, i, rc = 0;
	unsigned long total = 0;
	struct gu_fio_job fio;
	struct gu_fio fio_res;
	char out[64], dmdev[64];
	time_t end;
	pid_t child;
	struct stat st;

	rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x9e3779b97f4a7c15ULL;
	printf("# iface_fuzz: %d s, seed %#" PRIx64 "\n", secs, rng_state);
	dm_udev_set_sync_support(0);
	dm_log_with_errno_init(dm_quiet);
	if (gu_module_load() || gu_nullb_create(&nb, lower, sizeof(lower)) ||
	    gu_nullb_create(&nbt, lower_t, sizeof(lower_t)) ||
	    gu_sh_out(out, sizeof(out), "blockdev --getsz %s", lower)) {
		printf("not ok 1 iface_fuzz (no rig)\n");
		return 1;
	}
	sectors = atoll(out);
	if (gu_sh("dmsetup create " DM_NAME " --table \"0 %lld blkiso %s 0\"", sectors, lower) ||
	    gu_blkiso_dir(DM_NAME, dev_dir, sizeof(dev_dir)) ||
	    gu_sh_out(out, sizeof(out), "dmsetup info -c --noheadings -o major,minor " DM_NAME) ||
	    sscanf(out, "%u:%u", &dm_major, &dm_minor) != 2) {
		printf("not ok 1 iface_fuzz (no blkiso device)\n");
		return 1;
	}
	snprintf(dev_conf, sizeof(dev_conf), "%s/conf", dev_dir);
	snprintf(dmdev, sizeof(dmdev), "/dev/mapper/" DM_NAME);
	if (stat(dmdev, &st))
		gu_sh("mkdir -p /dev/mapper; mknod %s b %u %u", dmdev, dm_major, dm_minor);
	for (i = 0; i < NR_CGS; i++) {
		gu_cg_create(cg_name(i));
		cg_ids[i] = gu_cg_id(cg_name(i));
		snprintf(out, sizeof(out), "/%s", cg_name(i));
		gu_tenant_set(dev_dir, out, "riops=2000 wiops=1000");
	}
	fail_fd = open("/proc/self/make-it-fail", O_WRONLY);
	faults_ok = fail_fd >= 0 && fault_setup("failslab", 10, true) == 0 &&
		    fault_setup("fail_page_alloc", 10, true) == 0;
	if (!faults_ok)
		faults_off();
	if (faults_ok) {
		fault_setup("fail_make_request", 1, false);
		snprintf(out, sizeof(out), "/sys/block/%s/make-it-fail", NULLB);
		gu_write(out, "1");
	}
	printf("# fault injection: %s\n", faults_ok ? "failslab, fail_page_alloc, fail_make_request" :
	       "not available (no CONFIG_FAULT_INJECTION_DEBUG_FS)");
	fd = open(BLKISO_DEV_PATH, O_RDWR);
	if (fd < 0 ||
	    gu_fio_start(&fio, cg_name(0), "--name=bg --filename=%s --direct=1 --rw=randrw "
			 "--bs=4k --iodepth=8 --ioengine=libaio --time_based --runtime=%d "
			 "--continue_on_error=all", dmdev, secs + 5)) {
		faults_off();
		printf("not ok 1 iface_fuzz (no /dev/blkiso or fio)\n");
		return 1;
	}
	child = fork();
	if (child == 0)
		io_child(dmdev);
	mlockall(MCL_CURRENT | MCL_FUTURE);

	end = time(NULL) + secs;
	while (time(NULL) < end) {
		for (i = 0; i < 64; i++, total++) {
			bool faults = faults_ok && !rnd_below(4);

			if (!(total % 256)) {
				nr_sysfs_files = 0;
				scan_sysfs("/sys/kernel/blkiso", 0);
			}
			op_start = now_ns();
			switch (rnd_below(16)) {
			case 0 ... 4:	if (nr_sysfs_files) op_sysfs(faults); break;
			case 5 ... 7:	op_message(faults); break;
			case 8:		op_table(faults); break;
			case 9:		if (!rnd_below(4)) op_cgroup_churn(); break;
			default:	op_ioctl(fd, faults); break;
			}
		}
	}
	munlockall();
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	faults_off();
	snprintf(out, sizeof(out), "/sys/block/%s/make-it-fail", NULLB);
	gu_write(out, "0");
	gu_fio_wait(&fio, &fio_res);
	close(fd);

	printf("# %-12s %7s %7s %9s %9s %7s %7s  errnos\n", "interface", "ops", "faulted",
	       "accepted", "refused", "busy s", "max ms");
	for (i = 0; i < IF_NR; i++) {
		char errs[256] = "";
		int e, len = 0;

		for (e = 1; e < 256; e++)
			if (tally[i].err[e])
				len += snprintf(errs + len, sizeof(errs) - len, " %s:%lu",
						strerrorname_np(e) ? strerrorname_np(e) : "?",
						tally[i].err[e]);
		printf("# %-12s %7lu %7lu %9zu %9zu %7.1f %7.1f %s\n", iface_name[i], tally[i].ops,
		       tally[i].faulted, tally[i].accepted.n, tally[i].refused.n,
		       tally[i].busy_ns / 1e9, tally[i].max_ns / 1e6, errs);
	}
	if (unexpected) {
		printf("# %d operations returned an undocumented errno\n", unexpected);
		rc = 1;
	}
	if (gu_sh("cat %s/conf %s/stats > /dev/null", dev_dir, dev_dir)) {
		printf("# the device no longer answers\n");
		rc = 1;
	}
	if (!gu_ledger_ok(dev_dir))
		rc = 1;
	gu_sh("dmsetup remove --retry " DM_NAME "; dmsetup remove " DM_TABLE_NAME " 2>/dev/null");
	for (i = NR_CGS - 1; i >= 0; i--)
		gu_cg_destroy(cg_name(i));
	gu_cg_destroy(CG);
	gu_nullb_destroy(NULLB);
	gu_nullb_destroy(NULLB_T);
	if (gu_module_unload()) {
		printf("# rmmod blkiso failed\n");
		rc = 1;
	}
	printf("%s 1 iface_fuzz\n", rc ? "not ok" : "ok");
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", !rc, rc);
	return rc;
}
