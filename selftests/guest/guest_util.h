/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest_util.h - helpers every blkiso guest test uses: commands, sysfs and
 * configfs files, the module, null_blk devices shaped through configfs,
 * cgroups with +io, fio runs inside a cgroup with their JSON results, and
 * tolerance checks (values_close, as in the kernel's cgroup selftests).
 */
#ifndef BLKISO_GUEST_UTIL_H
#define BLKISO_GUEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

/* |a - b| <= err% of b: the tolerance is visible at every call. */
static inline bool values_close(double a, double b, double err_pct)
{
	double d = a > b ? a - b : b - a;

	return d <= (b < 0 ? -b : b) * err_pct / 100.0;
}

/* CLOCK_MONOTONIC in seconds (guest time: leaps in the deterministic mode). */
static inline double gu_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Harness timeout for guest tests.  It counts guest time, which in the
 * deterministic mode leaps ahead whenever the guest waits for the host
 * (9p): generous limits cost nothing there, and the runner's own
 * wall-clock limit catches real hangs.
 */
#define GUEST_TIMEOUT	600

/* Is the guest in the runner's deterministic (icount) mode? */
static inline bool gu_icount(void)
{
	const char *v = getenv("BLKISO_ICOUNT");

	return v && v[0] == '1';
}

/* Is the guest kernel `make debug-kernel`'s (KASAN, lockdep, kmemleak)? */
static inline bool gu_debug_kernel(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.release, "-blkiso-debug");
}

/*
 * Why this guest cannot assert a rate or a time, or NULL when it can:
 * rates hold only in the deterministic mode, and not on the debug kernel,
 * whose checks make each I/O several times dearer (4 KiB reads reached
 * 7.9 of the 20.5 MB/s a test wants): those cases skip there, as
 * `make check-debug` looks for the kernel's reports, not for rates.
 */
static inline const char *gu_no_rate(void)
{
	if (!gu_icount())
		return "asserts a rate: runs in the deterministic mode";
	if (gu_debug_kernel())
		return "asserts a rate: not on the debug kernel (its checks slow every I/O)";
	return NULL;
}

/* Run a shell command (printf-style); returns its exit status. */
int gu_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Run a command and capture its stdout (trailing newline removed). */
int gu_sh_out(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int gu_write(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gu_read(const char *path, char *buf, size_t size);
long long gu_read_ll(const char *path);

/* blkiso.ko ($BLKISO_KO) and dm-mod. */
int gu_module_load(void);
int gu_module_unload(void);

/* A null_blk device through configfs; all fields 0 mean the default. */
struct gu_nullb {
	const char *name;	/* configfs directory and /dev/<name> */
	unsigned int size_mb;
	unsigned int blocksize;
	unsigned int queue_depth;	/* hw_queue_depth */
	unsigned int irqmode;		/* 0 none, 1 softirq, 2 timer */
	unsigned long completion_nsec;	/* with irqmode 2 */
	unsigned int max_sectors;
	unsigned int mbps;		/* bandwidth cap, MiB/s (null_blk's 1 ms budget), 0 none */
	bool memory_backed;		/* keep data (needed for verify) */
};
int gu_nullb_create(const struct gu_nullb *nb, char *dev, size_t devsize);
int gu_nullb_destroy(const char *name);
/*
 * modprobe scsi_debug @params and wait (up to 10 s) for its disk: its name
 * ("sdX") in @sd.  Needs sd_mod; rmmod scsi_debug removes it.
 */
int gu_scsi_debug_create(const char *params, char *sd, size_t size);

/*
 * A scsi_debug disk (gu_scsi_debug_create(), sd_mod loaded first) with the
 * blkiso device @dm_name over the whole of it: 0, GU_NO_SD_MOD when the
 * guest has no sd_mod (the test skips: GU_NO_SD_MOD_WHY), or -1.
 */
#define GU_NO_SD_MOD		1
#define GU_NO_SD_MOD_WHY	"no sd_mod in the guest (selftests/vm/mkinitramfs.sh)"
int gu_scsi_debug_blkiso(const char *params, const char *dm_name, char *sd, size_t size);

/* cgroups below /sys/fs/cgroup, with +io enabled in the parents. */
int gu_cg_create(const char *name);
int gu_cg_destroy(const char *name);
unsigned long long gu_cg_id(const char *name);

/* fio inside a cgroup ("" = root); args as on fio's command line. */
struct gu_fio_dir {
	double iops, bw_bytes, clat_mean_ns, clat_p50_ns, clat_p99_ns;
	double runtime_ms;
	unsigned long long ios, io_bytes;
};
struct gu_fio {
	int status;		/* fio's exit status */
	unsigned long long errors;
	struct gu_fio_dir read, write;
};
int gu_fio(const char *cgroup, struct gu_fio *res, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* fio in the background: gu_fio_start(), then gu_fio_wait(). */
struct gu_fio_job {
	int pid;
	char json[64];
};
int gu_fio_start(struct gu_fio_job *job, const char *cgroup, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int gu_fio_wait(struct gu_fio_job *job, struct gu_fio *res);

/*
 * A process at nice 19 that spins until gu_busy_stop(): in the
 * deterministic mode a guest that idles while a QEMU device's I/O is with
 * a host thread (NVMe: selftests/vm/run.sh) has its clock leap from timer
 * to timer until the host answers; with the vCPU never idle, that I/O
 * takes the guest instructions that ran meanwhile instead.  Returns its
 * pid, or -1.
 */
int gu_busy_start(void);
void gu_busy_stop(int pid);

/*
 * ext4's mount options for a test that counts the kernel tenant's I/O:
 * ext4lazyinit neither zeroes inode tables nor prefetches block bitmaps
 * (both from a root kernel thread, whenever the machine's speed lets it)
 */
#define GU_EXT4_QUIET "noinit_itable,no_prefetch_block_bitmaps"

/*
 * mkfs @fs ("ext4" or "xfs") on @dev and mount it on @mnt (which exists):
 * the crc32c driver and the filesystem's module are loaded first; ext4 is
 * mounted GU_EXT4_QUIET.
 */
int gu_mkfs_mount(const char *fs, const char *dev, const char *mnt);

/* blkiso sysfs: the directory of a dm device (by its dm name). */
int gu_blkiso_dir(const char *dm_name, char *dir, size_t size);
/* Write "<cgroup> <line>" to <dir>/tenant; returns 0 or -errno. */
int gu_tenant_set(const char *dir, const char *cgroup, const char *line);
/* One counter ("admitted", "p99_us"...) of a tenant's stats file. */
long long gu_tenant_stat(const char *dir, unsigned long long cgid, const char *key);

/* Wait until a tenant counter reaches @min (0), or @timeout_ms passes (-1). */
int gu_wait_stat(const char *dir, unsigned long long cgid, const char *key,
		 long long min, int timeout_ms);

/* A number in fio's JSON: path "read/clat_ns/percentile/99.000000". */
int gu_json_num(const char *json, const char *path, double *val);

/*
 * The ledger (doc/robustness.md).  Every tenant's stats (<dir>/<id>/stats)
 * and the device's (<dir>/stats) must satisfy
 *	arrived = admitted + dispatched + rejected_nowait + rejected + queued
 * and, once idle (queued = 0 and nothing in flight),
 *	completed = admitted + dispatched.
 * gu_ledger_ok() waits up to 10 s for every file to be idle, then checks
 * both equations exactly; it prints each violation to stderr.
 */
int gu_stats_parse(const char *path, const char * const *keys, long long *vals, int n);
bool gu_ledger_ok(const char *dir);
/* Kill every process of a cgroup (cgroup.kill), wait up to @timeout_ms for it to empty. */
int gu_cg_kill(const char *name, int timeout_ms);

/*
 * One record of a feedback ring file (/sys/kernel/blkiso/dm-N/ring or
 * <id>/ring: a header line, then one line per tick, oldest first); the
 * tenant fields are 0 in the device's.
 */
struct gu_tick {
	unsigned long long seq, time_us, usage, delay_us, rcap, wcap;
	unsigned int completed, missed, miss_pm, mult, flags, victims;
	unsigned int slots, inflight, mode;
};
#define GU_TICK_OVERLOADED	1	/* flags */
#define GU_TICKS_MAX		64	/* the device's ring; a tenant's holds 16 */
/* Parse a ring file into @r: the number of records, or -1. */
int gu_ring_read(const char *path, struct gu_tick *r, int max);
/* The newest record of the device ring of blkiso directory @dir, or -1. */
int gu_ring_last(const char *dir, struct gu_tick *last);

#endif /* BLKISO_GUEST_UTIL_H */
