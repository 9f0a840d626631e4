// SPDX-License-Identifier: GPL-2.0
/*
 * lvm_test.c - blkisoctl attach --live and detach --live under real LVM
 * (tools/blkisoctl/live.c; guest test, lvm2 from the host over 9p).
 *
 * A volume group with two LVs on a scsi_debug disk, ext4 mounted on both,
 * files with known checksums.  blkiso goes under the PV live while fio
 * writes and verifies on one LV; one cgroup reading both LVs is then held
 * to its one quota (the recommended layout: one blkiso device under the
 * PV), and two tenants, one per LV, to their own quotas side by side, the
 * new one biting within one tick; lvextend and lvchange --refresh keep the blkiso device in the
 * tables (LVM's global_filter now rejects the raw disk); detach --live puts
 * everything back.  Data, fio's verification and fsck -n stay clean.  Then
 * each step of attach and detach failed on purpose (BLKISOCTL_LIVE_FAIL):
 * tables, lvm.conf and the device list are as before.  Then "a reboot":
 * the VG deactivated and blkiso removed, LVM must not find the PV on the
 * raw disk, and the boot order (apply's attach line, then vgchange -ay)
 * activates the LVs through blkiso.  Then a PV on a partition: the
 * whole disk refused, naming the partition; the partition attached and
 * detached live.  Last, a disk with a filesystem mounted on it is refused
 * with the boot recipe.  And a disk that grows under a live PV on blkiso:
 * blkisoctl resize, pvresize, lvextend into the new space, resize2fs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest_util.h"
#include "kselftest_harness.h"

#define VG		"bivg"
#define BI		"bilvm"
#define LV1		"/dev/mapper/" VG "-lv1"
#define LV2		"/dev/mapper/" VG "-lv2"
#define CG		"bilvm_reader"
#define RIOPS		200	/* the reader's quota, over both LVs */
#define CG2		"bilvm_other"
#define RIOPS2		300	/* the other tenant's quota, LV2 only */
#define LVMDIR		"/tmp/bilvm-conf"
#define CTL		"$BLKISO_TOP/build/tools/blkisoctl"
/*
 * Guest time: every LVM command loads lvm2 over 9p, and in the
 * deterministic mode the guest clock leaps while it waits (guest_util.h):
 * a dozen failed attaches take far more guest time than wall time.
 */
#define LVM_TIMEOUT	(4 * GUEST_TIMEOUT)
/* LVM without udev (the guest has none), its config in LVMDIR. */
#define LVMENV		"LVM_SYSTEM_DIR=" LVMDIR " LVM_SUPPRESS_FD_WARNINGS=1 "

FIXTURE(lvm) {
	char sd[32];
	char sums[256];		/* sha256 of the files on both LVs */
};

/* make check-full (GUEST_FULL=1): every step's rollback. */
static bool full_run(void)
{
	const char *f = getenv("GUEST_FULL");

	return f && f[0] == '1';
}

/*
 * Which run has a test (checked in the setup already: an LVM setup costs
 * seconds): in make check-all, on 6.1 only, attach_detach_live (which
 * fails one attach and one detach step too), partition_pv_attach_detach_live and
 * a_grown_disk_grows_the_pv_through_blkiso in the deterministic mode;
 * with GUEST_FULL=1 (make check-full: deterministic mode, 6.1 and 6.12)
 * all of them: every rollback step, the devices file, the reboot case.
 * NULL: run it.
 */
static const char *skip_why(const char *test)
{
	const char *kver = getenv("BLKISO_KVER");

	if (!full_run() && kver && strncmp(kver, "6.1.", 4))
		return "LVM runs take minutes: on 6.12 with make check-full (GUEST_FULL=1)";
	if (strstr(test, "partition_pv") || strstr(test, "grown_disk"))	/* no rate; LVM: minutes */
		return gu_icount() ? NULL : "an LVM run: in the deterministic mode only";
	if (strstr(test, "attach_detach_live"))
		return gu_no_rate();
	if (full_run())
		return NULL;
	if (strstr(test, "rollback") || strstr(test, "activation_after_reboot") ||
	    strstr(test, "devices_file") || strstr(test, "user_filter"))
		return "a long run: make check-full (GUEST_FULL=1)";
	return gu_icount() ? "no rate: runs in the ordinary mode" : NULL;
}

#define SKIP_BY_MODE() do { \
	if (skip_why(_metadata->name)) \
		SKIP(return, "%s", skip_why(_metadata->name)); \
} while (0)

static int lvm(const char *cmd)
{
	return gu_sh(LVMENV "%s", cmd);
}

static void sums(char *out, size_t size)
{
	gu_sh_out(out, size, "cat /mnt/bilvm1/data /mnt/bilvm2/data | sha256sum");
}

/* LVM's test configuration in LVMDIR (no udev), and its copy for comparisons. */
static int lvm_conf_write(void)
{
	return gu_sh("mkdir -p " LVMDIR " /run/lock/lvm /run/lvm && "
		     "printf 'devices {\\n\\tobtain_device_list_from_udev = 0\\n}\\n"
		     "activation {\\n\\tudev_sync = 0\\n\\tudev_rules = 0\\n"
		     "\\tmonitoring = 0\\n}\\nbackup {\\n\\tbackup = 0\\n\\tarchive = 0\\n}\\n'"
		     " > " LVMDIR "/lvm.conf && cp " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.orig");
}

FIXTURE_SETUP(lvm)
{
	SKIP_BY_MODE();
	/* what a test killed by its timeout left */
	gu_sh("umount /mnt/bilvm1 /mnt/bilvm2 2>/dev/null; dmsetup remove " VG "-lv1 2>/dev/null;"
	      " dmsetup remove " VG "-lv2 2>/dev/null; dmsetup remove " BI " 2>/dev/null;"
	      " rm -rf /dev/" VG);
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_sh("modprobe sd_mod"));
	ASSERT_EQ(0, gu_scsi_debug_create("dev_size_mb=256", self->sd, sizeof(self->sd)));
	ASSERT_EQ(0, lvm_conf_write());
	/* a disk left by an earlier test may keep its data */
	ASSERT_EQ(0, gu_sh("dd if=/dev/zero of=/dev/%s bs=1M count=1 2>/dev/null", self->sd));
	ASSERT_EQ(0, gu_sh(LVMENV "vgcreate -qy " VG " /dev/%s", self->sd));
	ASSERT_EQ(0, lvm("lvcreate -qy -Wn -L 80M -n lv1 " VG " && "
			 LVMENV "lvcreate -qy -Wn -L 80M -n lv2 " VG));
	ASSERT_EQ(0, gu_sh("mkdir -p /mnt/bilvm1 /mnt/bilvm2"));
	ASSERT_EQ(0, gu_mkfs_mount("ext4", LV1, "/mnt/bilvm1"));
	ASSERT_EQ(0, gu_mkfs_mount("ext4", LV2, "/mnt/bilvm2"));
	ASSERT_EQ(0, gu_sh("dd if=/dev/urandom of=/mnt/bilvm1/data bs=1M count=8 2>/dev/null &&"
			   " dd if=/dev/urandom of=/mnt/bilvm2/data bs=1M count=8 2>/dev/null &&"
			   " sync"));
	sums(self->sums, sizeof(self->sums));
	ASSERT_EQ(0, gu_cg_create(CG));
	ASSERT_EQ(0, gu_cg_create(CG2));
}

/*
 * A teardown's: VG @vg's LVs down, then the blkiso device @bi removed.
 * The LVs go by hand too: a test's lvm.conf may hide the PV from vgchange
 * (user_filter), and active LVs would keep scsi_debug loaded for the next
 * fixture.
 */
static void vg_down(const char *vg, const char *bi)
{
	gu_sh(LVMENV "vgchange -q -an %s >/dev/null 2>&1", vg);
	gu_sh("for d in $(dmsetup ls | awk '{ print $1 }' | grep '^%s-'); do"
	      " dmsetup remove --retry $d; done 2>/dev/null; rm -rf /dev/%s", vg, vg);
	gu_sh("dmsetup remove --retry %s 2>/dev/null", bi);
}

FIXTURE_TEARDOWN(lvm)
{
	if (skip_why(_metadata->name))
		return;
	gu_sh("umount /mnt/bilvm1 /mnt/bilvm2 2>/dev/null");
	vg_down(VG, BI);
	gu_cg_destroy(CG);
	gu_cg_destroy(CG2);
	gu_sh("rmmod scsi_debug");
	gu_module_unload();
}

/* The tables of both LVs, one line each ("" when inactive). */
static void tables(char *out, size_t size)
{
	gu_sh_out(out, size, "dmsetup table " VG "-lv1 2>/dev/null; dmsetup table "
		  VG "-lv2 2>/dev/null; dmsetup ls | grep -c " BI);
}

/* Does every segment of both LVs name @majmin? */
static bool lvs_on(const char *majmin)
{
	return !gu_sh("for d in " VG "-lv1 " VG "-lv2; do dmsetup table $d | "
		      "awk -v m=%s '$4 != m { bad = 1 } END { exit bad }' || exit 1; done",
		      majmin);
}

static void majmin(const char *dev, char *out, size_t size)
{
	gu_sh_out(out, size, "printf '%%d:%%d' $(stat -L -c '0x%%t 0x%%T' %s)", dev);
}

/* fio's reads of both LVs by cgroup CG for 2 s: IOPS, and the ios issued. */
static double both_lvs_iops(unsigned long long *ios)
{
	struct gu_fio r;

	/* options before the first --name are every job's */
	if (gu_fio(CG, &r, "--direct=1 --rw=randread --bs=4k --iodepth=4 --ioengine=libaio"
		   " --time_based --runtime=2 --name=a --filename=" LV1
		   " --name=b --filename=" LV2) || r.status || r.errors)
		return -1;
	*ios = r.read.ios;
	return r.read.iops;
}

/* The capped reader in the background: with 8 reads in flight at 200/s, bios park. */
static int reader_start(struct gu_fio_job *job, int seconds)
{
	return gu_fio_start(job, CG, "--direct=1 --rw=randread --bs=4k --iodepth=8"
			    " --ioengine=libaio --time_based --runtime=%d --name=a --filename="
			    LV1 " --name=b --filename=" LV2, seconds);
}

/* Verified writes on LV2's filesystem in the background. */
static int writer_start(struct gu_fio_job *job, int seconds)
{
	return gu_fio_start(job, "", "--name=w --filename=/mnt/bilvm2/fio.dat --size=16M"
			    " --rw=randwrite --bs=4k --direct=1 --ioengine=psync --verify=crc32c"
			    " --verify_backlog=64 --time_based --runtime=%d", seconds);
}

/*
 * Run blkisoctl @args with a step failed on purpose: exit 5, and the LVs'
 * tables, the dm device list and lvm.conf (against the copy @conf) as before.
 */
static bool fails_cleanly(const char *args, const char *conf)
{
	char before[1024], after[1024];
	int rc;

	tables(before, sizeof(before));
	rc = gu_sh(LVMENV CTL " %s 2>/dev/null", args);
	tables(after, sizeof(after));
	return rc == 5 && !strcmp(before, after) &&
	       !gu_sh("cmp -s " LVMDIR "/lvm.conf %s", conf);
}

/* Wait for a background fio: it ran and reported no error. */
static bool fio_clean(struct gu_fio_job *job, struct gu_fio *res)
{
	return !gu_fio_wait(job, res) && !res->status && !res->errors;
}

/* Completions of tenant @cgid over the next @ms milliseconds (guest time). */
static long long completed_in(const char *dir, unsigned long long cgid, int ms)
{
	long long c0 = gu_tenant_stat(dir, cgid, "completed");

	usleep(ms * 1000);
	return gu_tenant_stat(dir, cgid, "completed") - c0;
}

/*
 * Two tenants on the one blkiso device under the PV, each on its own LV:
 * CG2 reads LV2 unthrottled, then gets riops=RIOPS2 while it reads.  The
 * quota bites within one tick (100 ms: at most RIOPS2/10, the bucket's
 * burst of 5 % and the 8 reads in flight, against about 190 unthrottled),
 * and over the next second both tenants hold their own quotas side by
 * side (CG at RIOPS on LV1, CG2 at RIOPS2 on LV2, ±10 %).
 */
static void two_tenants(struct __test_metadata *_metadata, const char *dir)
{
	unsigned long long cgid2 = gu_cg_id(CG2);
	long long before, first_tick, second;
	struct gu_fio_job j1, j2;
	struct gu_fio r1, r2;

	ASSERT_EQ(0, gu_fio_start(&j2, CG2, "--direct=1 --rw=randread --bs=4k --iodepth=8"
				  " --ioengine=libaio --time_based --runtime=4 --name=b"
				  " --filename=" LV2));
	ASSERT_EQ(0, gu_wait_stat(dir, cgid2, "completed", 1, 5000));
	before = completed_in(dir, cgid2, 1000);
	ASSERT_EQ(0, gu_sh(CTL " set " CG2 " " BI " riops=%d", RIOPS2));
	ASSERT_EQ(0, gu_fio_start(&j1, CG, "--direct=1 --rw=randread --bs=4k --iodepth=8"
				  " --ioengine=libaio --time_based --runtime=2 --name=a"
				  " --filename=" LV1));
	first_tick = completed_in(dir, cgid2, 100);
	second = completed_in(dir, cgid2, 1000);
	TH_LOG("LV2's tenant: %lld reads/s unthrottled, %lld in the first 100 ms of "
	       "riops=%d, %lld in the next second", before, first_tick, RIOPS2, second);
	EXPECT_GE(before, 3 * RIOPS2);
	EXPECT_LE(first_tick, RIOPS2 / 10 + RIOPS2 / 20 + 8);
	EXPECT_TRUE(values_close(second, RIOPS2, 10));
	EXPECT_TRUE(fio_clean(&j1, &r1));
	EXPECT_TRUE(fio_clean(&j2, &r2));
	TH_LOG("side by side: LV1's tenant %.0f IOPS (quota %d), LV2's %.0f", r1.read.iops,
	       RIOPS, r2.read.iops);
	EXPECT_TRUE(values_close(r1.read.iops, RIOPS, 10));
	ASSERT_EQ(0, gu_sh(CTL " set " CG2 " " BI " riops=max"));
}

TEST_F_TIMEOUT(lvm, attach_detach_live, LVM_TIMEOUT)
{
	char raw[16], bi[16], dir[128], now[256], cmd[256], args[256];
	unsigned long long ios = 0, cgid = gu_cg_id(CG);
	struct gu_fio_job job, rd;
	struct gu_fio w, r;
	double iops;

	SKIP_BY_MODE();

	snprintf(cmd, sizeof(cmd), "/dev/%s", self->sd);
	majmin(cmd, raw, sizeof(raw));
	ASSERT_TRUE(lvs_on(raw));
	/* unmetered first: the disk is far faster than the quota */
	iops = both_lvs_iops(&ios);
	TH_LOG("both LVs before attach: %.0f IOPS", iops);
	ASSERT_GT(iops, 2 * RIOPS);

	/* a failed attach first: the first holder moved back, nothing left */
	snprintf(args, sizeof(args), "attach --live /dev/%s " BI, self->sd);
	setenv("BLKISOCTL_LIVE_FAIL", "resume:1", 1);
	EXPECT_TRUE(fails_cleanly(args, "/tmp/bilvm-lvm.conf.orig"));
	unsetenv("BLKISOCTL_LIVE_FAIL");

	/* writes with verification on LV2's filesystem across attach and detach */
	ASSERT_EQ(0, writer_start(&job, 5));
	usleep(500000);
	ASSERT_EQ(0, gu_sh(LVMENV CTL " attach --live /dev/%s " BI, self->sd));
	majmin("/dev/mapper/" BI, bi, sizeof(bi));
	EXPECT_TRUE(lvs_on(bi));
	/* LVM sees the PV on the blkiso device only */
	EXPECT_EQ(0, lvm("pvs --noheadings -o pv_name | tr -d ' ' | grep -qx /dev/mapper/" BI));
	EXPECT_EQ(0, gu_sh("grep -q 'global_filter = \\[ \"r|^/dev/%s\\$|\" \\]' "
			   LVMDIR "/lvm.conf", self->sd));

	/* one quota for the reader's I/O to both LVs */
	ASSERT_EQ(0, gu_sh(CTL " set " CG " " BI " riops=%d", RIOPS));
	ASSERT_EQ(0, gu_blkiso_dir(BI, dir, sizeof(dir)));
	iops = both_lvs_iops(&ios);
	TH_LOG("both LVs under blkiso: %.0f IOPS, quota %d", iops, RIOPS);
	EXPECT_TRUE(values_close(iops, RIOPS, 10));
	EXPECT_GE(gu_tenant_stat(dir, cgid, "arrived"), (long long)ios);
	two_tenants(_metadata, dir);

	/*
	 * LVM's own table writes keep blkiso under the LVs; they swap the
	 * LVs' tables while the reader's bios are parked in blkiso.
	 */
	ASSERT_EQ(0, reader_start(&rd, 4));
	EXPECT_EQ(0, gu_wait_stat(dir, cgid, "queued", 1, 5000));
	EXPECT_EQ(0, lvm("lvextend -q -L +8M " VG "/lv1 && " LVMENV
			 "lvchange -q --refresh " VG "/lv2"));
	EXPECT_TRUE(lvs_on(bi));
	EXPECT_TRUE(fio_clean(&rd, &r));

	/* every bio through blkiso accounted for, once the writer is done */
	EXPECT_TRUE(fio_clean(&job, &w));
	EXPECT_GT(w.write.ios, 0ULL);
	EXPECT_TRUE(gu_ledger_ok(dir));

	/* a failed detach (the last step): still attached, lvm.conf as it is */
	gu_sh("cp " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.attached");
	setenv("BLKISOCTL_LIVE_FAIL", "remove", 1);
	EXPECT_TRUE(fails_cleanly("detach --live " BI, "/tmp/bilvm-lvm.conf.attached"));
	unsetenv("BLKISOCTL_LIVE_FAIL");

	/* and out again under writes, the reader's bios parked */
	ASSERT_EQ(0, writer_start(&job, 3));
	ASSERT_EQ(0, reader_start(&rd, 3));
	usleep(500000);
	ASSERT_EQ(0, gu_sh(LVMENV CTL " detach --live " BI));
	EXPECT_TRUE(lvs_on(raw));
	EXPECT_NE(0, gu_sh("dmsetup info " BI " >/dev/null 2>&1"));
	EXPECT_EQ(0, gu_sh("cmp -s " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.orig"));
	EXPECT_EQ(0, gu_sh(LVMENV "pvs --noheadings -o pv_name | tr -d ' ' | grep -qx /dev/%s",
			   self->sd));
	EXPECT_TRUE(fio_clean(&job, &w));
	EXPECT_TRUE(fio_clean(&rd, &r));
	sums(now, sizeof(now));
	EXPECT_STREQ(self->sums, now);
	ASSERT_EQ(0, gu_sh("umount /mnt/bilvm1 /mnt/bilvm2"));
	EXPECT_EQ(0, gu_sh("fsck.ext4 -n -f " LV1 " >/dev/null && fsck.ext4 -n -f " LV2
			   " >/dev/null"));
}

/* Each step failed in turn: everything as it was, the step named. */
TEST_F_TIMEOUT(lvm, rollback, LVM_TIMEOUT)
{
	static const char *const attach_steps[] = {
		"create", "load:0", "suspend:1", "resume:0", "resume:1", "lvm",
	};
	static const char *const detach_steps[] = { "load:1", "resume:0", "lvm", "remove" };
	const unsigned int na = sizeof(attach_steps) / sizeof(attach_steps[0]);
	const unsigned int nd = sizeof(detach_steps) / sizeof(detach_steps[0]);
	char before[1024], after[1024], attached[1024], now[256], out[1024];
	unsigned int i;

	SKIP_BY_MODE();

	tables(before, sizeof(before));
	for (i = 0; i < na; i++) {
		EXPECT_EQ(5, gu_sh(LVMENV "BLKISOCTL_LIVE_FAIL=%s " CTL " attach --live /dev/%s "
				   BI " 2>/tmp/bilvm.err", attach_steps[i], self->sd))
			TH_LOG("step %s", attach_steps[i]);
		gu_sh_out(out, sizeof(out), "cat /tmp/bilvm.err");
		EXPECT_NE(NULL, strstr(out, "undone")) TH_LOG("%s", out);
		tables(after, sizeof(after));
		EXPECT_STREQ(before, after) TH_LOG("after failing %s", attach_steps[i]);
		EXPECT_EQ(0, gu_sh("cmp -s " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.orig"));
	}
	ASSERT_EQ(0, gu_sh(LVMENV CTL " attach --live /dev/%s " BI, self->sd));
	tables(attached, sizeof(attached));
	gu_sh("cp " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.attached");
	for (i = 0; i < nd; i++) {
		EXPECT_EQ(5, gu_sh(LVMENV "BLKISOCTL_LIVE_FAIL=%s " CTL " detach --live " BI
				   " 2>/dev/null", detach_steps[i])) TH_LOG("step %s", detach_steps[i]);
		tables(after, sizeof(after));
		EXPECT_STREQ(attached, after) TH_LOG("after failing %s", detach_steps[i]);
		EXPECT_EQ(0, gu_sh("cmp -s " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.attached"));
	}
	ASSERT_EQ(0, gu_sh(LVMENV CTL " detach --live " BI));
	tables(after, sizeof(after));
	EXPECT_STREQ(before, after);
	sums(now, sizeof(now));
	EXPECT_STREQ(self->sums, now);
}

/*
 * After a reboot: lvm.conf keeps rejecting the raw disk, so the VG comes
 * up only once blkiso is attached (blkiso.service before LVM activation).
 */
TEST_F_TIMEOUT(lvm, activation_after_reboot, LVM_TIMEOUT)
{
	char bi[16], now[256];

	SKIP_BY_MODE();
	ASSERT_EQ(0, gu_sh(LVMENV CTL " attach --live /dev/%s " BI, self->sd));
	/* the boot-time file: save writes the attach line (no udev: no by-id names) */
	ASSERT_EQ(0, gu_sh(CTL " save " BI " > /tmp/bilvm.conf"));
	EXPECT_EQ(0, gu_sh("grep -qx 'attach /dev/%s " BI "' /tmp/bilvm.conf", self->sd));
	/* shutdown: filesystems, VG, blkiso */
	ASSERT_EQ(0, gu_sh("umount /mnt/bilvm1 /mnt/bilvm2"));
	ASSERT_EQ(0, lvm("vgchange -q -an " VG));
	ASSERT_EQ(0, gu_sh("dmsetup remove " BI));
	/* boot, LVM first: the raw disk is filtered out, no VG */
	EXPECT_NE(0, lvm("vgchange -q -ay " VG " 2>/dev/null"));
	EXPECT_NE(0, gu_sh("dmsetup info " VG "-lv1 >/dev/null 2>&1"));
	/* boot in blkiso.service's order: apply's attach line, then LVM */
	ASSERT_EQ(0, gu_sh(CTL " apply /tmp/bilvm.conf"));
	ASSERT_EQ(0, lvm("vgchange -q -ay " VG));
	majmin("/dev/mapper/" BI, bi, sizeof(bi));
	EXPECT_TRUE(lvs_on(bi));
	ASSERT_EQ(0, gu_sh("mount -t ext4 " LV1 " /mnt/bilvm1 && mount -t ext4 " LV2
			   " /mnt/bilvm2"));
	sums(now, sizeof(now));
	EXPECT_STREQ(self->sums, now);
	/* and out again, live */
	ASSERT_EQ(0, gu_sh(LVMENV CTL " detach --live " BI));
	EXPECT_EQ(0, gu_sh("cmp -s " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.orig"));
}

/*
 * With LVM's devices file (use_devicesfile=1): attach moves the PV's entry
 * from the disk to the blkiso device through lvmdevices, detach back.
 */
TEST_F_TIMEOUT(lvm, devices_file, LVM_TIMEOUT)
{
	char bi[16], raw[16], cmd[64];

	SKIP_BY_MODE();
	ASSERT_EQ(0, gu_sh("sed -i 's/^devices {$/devices {\\n\\tuse_devicesfile = 1/' "
			   LVMDIR "/lvm.conf && mkdir -p " LVMDIR "/devices"));
	ASSERT_EQ(0, gu_sh(LVMENV "lvm lvmdevices --yes --adddev /dev/%s", self->sd));
	ASSERT_EQ(0, gu_sh("grep -q 'DEVNAME=/dev/%s ' " LVMDIR "/devices/system.devices",
			   self->sd));
	gu_sh("cp " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.df");
	ASSERT_EQ(0, gu_sh(LVMENV CTL " attach --live /dev/%s " BI, self->sd));
	majmin("/dev/mapper/" BI, bi, sizeof(bi));
	EXPECT_TRUE(lvs_on(bi));
	/* the entry moved, lvm.conf untouched */
	EXPECT_NE(0, gu_sh("grep -q 'DEVNAME=/dev/%s ' " LVMDIR "/devices/system.devices",
			   self->sd));
	EXPECT_EQ(0, gu_sh("grep -q 'DEVNAME=/dev/mapper/" BI " \\|DEVNAME=/dev/dm-' "
			   LVMDIR "/devices/system.devices"));
	EXPECT_EQ(0, gu_sh("cmp -s " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.df"));
	EXPECT_EQ(0, lvm("lvchange -q --refresh " VG "/lv1"));
	EXPECT_TRUE(lvs_on(bi));
	ASSERT_EQ(0, gu_sh(LVMENV CTL " detach --live " BI));
	snprintf(cmd, sizeof(cmd), "/dev/%s", self->sd);
	majmin(cmd, raw, sizeof(raw));
	EXPECT_TRUE(lvs_on(raw));
	EXPECT_EQ(0, gu_sh("grep -q 'DEVNAME=/dev/%s ' " LVMDIR "/devices/system.devices",
			   self->sd));
	gu_sh("cat " LVMDIR "/devices/system.devices >&2");
}

/*
 * An administrator's own global_filter: refused with the pattern to add,
 * lvm.conf untouched; with the pattern added, attach goes ahead and
 * leaves lvm.conf as it is.
 */
TEST_F_TIMEOUT(lvm, user_filter, LVM_TIMEOUT)
{
	char bi[16], out[2048];

	SKIP_BY_MODE();
	ASSERT_EQ(0, gu_sh("sed -i 's/^devices {$/devices {\\n\\tglobal_filter = [ \"r|^\\/dev\\/loop|\" ]/' "
			   LVMDIR "/lvm.conf && cp " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.uf"));
	EXPECT_EQ(2, gu_sh(LVMENV CTL " attach --live /dev/%s " BI " 2>/tmp/bilvm.err", self->sd));
	gu_sh_out(out, sizeof(out), "cat /tmp/bilvm.err");
	EXPECT_NE(NULL, strstr(out, "r|^/dev/")) TH_LOG("%s", out);
	EXPECT_NE(0, gu_sh("dmsetup info " BI " >/dev/null 2>&1"));
	EXPECT_EQ(0, gu_sh("cmp -s " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.uf"));
	ASSERT_EQ(0, gu_sh("sed -i 's/\"r|^\\/dev\\/loop|\"/\"r|^\\/dev\\/loop|\", \"r|^\\/dev\\/%s$|\"/' "
			   LVMDIR "/lvm.conf && cp " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.uf",
			   self->sd));
	ASSERT_EQ(0, gu_sh(LVMENV CTL " attach --live /dev/%s " BI, self->sd));
	majmin("/dev/mapper/" BI, bi, sizeof(bi));
	EXPECT_TRUE(lvs_on(bi));
	EXPECT_EQ(0, gu_sh("cmp -s " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.uf"));
	EXPECT_EQ(0, lvm("pvs --noheadings -o pv_name | tr -d ' ' | grep -qx /dev/mapper/" BI));
	ASSERT_EQ(0, gu_sh(LVMENV CTL " detach --live " BI));
	EXPECT_EQ(0, gu_sh("cmp -s " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.uf"));
}

/* A filesystem mounted on the disk itself: refused, with the boot recipe. */
/*
 * A PV on a partition, as most installs have it (sdX1 from 1 MiB, an
 * msdos label written by hand: the guest has no sfdisk): attach --live of
 * the whole disk is refused (exit 4) and names the partition, which is the
 * device LVM's tables name; attach --live of the partition puts blkiso
 * under the LV while fio writes and verifies on its filesystem, LVM sees
 * the PV on the blkiso device only (global_filter rejects the partition),
 * a cgroup's reads of the LV are counted in its tenant, every bio is
 * accounted for; detach --live puts the LV back on the partition and
 * lvm.conf as it was.  Data and fsck -n stay clean.
 */
#define VGP		"bivgp"
#define BIP		"bilvmp"
#define LVP		"/dev/mapper/" VGP "-lv1"

/*
 * The volume group @vg on @pv with one LV, lv1, of @size (as lvcreate -L
 * takes it), ext4 on it mounted on @mnt (which is made) and 8 MiB of random
 * data in its file "data", whose sha256 goes to @sums: 0 or -1.
 */
static int vg_one_lv_with_data(const char *vg, const char *pv, const char *size,
			       const char *mnt, char *sums, size_t n)
{
	char lv[64];

	snprintf(lv, sizeof(lv), "/dev/mapper/%s-lv1", vg);
	if (gu_sh(LVMENV "vgcreate -qy %s %s", vg, pv) ||
	    gu_sh(LVMENV "lvcreate -qy -Wn -L %s -n lv1 %s", size, vg) ||
	    gu_sh("mkdir -p %s", mnt) || gu_mkfs_mount("ext4", lv, mnt) ||
	    gu_sh("dd if=/dev/urandom of=%s/data bs=1M count=8 2>/dev/null && sync", mnt))
		return -1;
	return gu_sh_out(sums, n, "sha256sum < %s/data", mnt);
}

FIXTURE(part) {
	char sd[32];
	char sums[128];
};

FIXTURE_SETUP(part)
{
	char part[48];

	SKIP_BY_MODE();
	gu_sh("umount /mnt/bilvm4 2>/dev/null; dmsetup remove " VGP "-lv1 2>/dev/null;"
	      " dmsetup remove " BIP " 2>/dev/null; rm -rf /dev/" VGP);
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_sh("modprobe sd_mod"));
	/* a fresh disk: a scsi_debug left loaded would keep its size and data */
	ASSERT_EQ(0, gu_sh("! lsmod | grep -q '^scsi_debug ' || rmmod scsi_debug"));
	ASSERT_EQ(0, gu_scsi_debug_create("dev_size_mb=128", self->sd, sizeof(self->sd)));
	ASSERT_EQ(0, lvm_conf_write());
	/* one primary partition, type 8e, sectors 2048 .. the end (262,144 in all) */
	ASSERT_EQ(0, gu_sh("dd if=/dev/zero of=/dev/%s bs=1M count=2 2>/dev/null && "
			   "printf '\\0\\0\\2\\0\\216\\377\\377\\377\\0\\10\\0\\0"
			   "\\0\\370\\3\\0' | dd of=/dev/%s bs=1 seek=446 conv=notrunc 2>/dev/null && "
			   "printf '\\125\\252' | dd of=/dev/%s bs=1 seek=510 conv=notrunc 2>/dev/null && "
			   "blockdev --rereadpt /dev/%s && for i in $(seq 50); do "
			   "[ -b /dev/%s1 ] && exit 0; sleep 0.1; done; exit 1",
			   self->sd, self->sd, self->sd, self->sd, self->sd));
	ASSERT_EQ(0, gu_sh("[ $(blockdev --getsz /dev/%s1) = 260096 ]", self->sd));
	snprintf(part, sizeof(part), "/dev/%s1", self->sd);
	ASSERT_EQ(0, vg_one_lv_with_data(VGP, part, "64M", "/mnt/bilvm4", self->sums,
					 sizeof(self->sums)));
	ASSERT_EQ(0, gu_cg_create(CG));
}

FIXTURE_TEARDOWN(part)
{
	if (skip_why(_metadata->name))
		return;
	gu_sh("umount /mnt/bilvm4 2>/dev/null");
	vg_down(VGP, BIP);
	gu_cg_destroy(CG);
	gu_sh("rmmod scsi_debug");
	gu_module_unload();
}

/* make check-all runs it where it runs attach_detach_live (skip_why()) */
TEST_F_TIMEOUT(part, partition_pv_attach_detach_live, LVM_TIMEOUT)
{
	char part[48], raw[16], bi[16], out[2048], dir[128], now[128];
	unsigned long long cgid = gu_cg_id(CG);
	struct gu_fio_job job;
	struct gu_fio w, r;

	SKIP_BY_MODE();
	snprintf(part, sizeof(part), "/dev/%s1", self->sd);
	majmin(part, raw, sizeof(raw));
	ASSERT_EQ(0, gu_sh("dmsetup table " VGP "-lv1 | awk -v m=%s '$4 != m { bad = 1 } "
			   "END { exit bad }'", raw));

	/* the whole disk: its partition is held, so it names the partition */
	EXPECT_EQ(4, gu_sh(LVMENV CTL " attach --live /dev/%s " BIP " 2>/tmp/bilvm.err",
			   self->sd));
	gu_sh_out(out, sizeof(out), "cat /tmp/bilvm.err");
	snprintf(now, sizeof(now), "attach --live %s", part);
	EXPECT_NE(NULL, strstr(out, now)) TH_LOG("%s", out);
	EXPECT_NE(0, gu_sh("dmsetup info " BIP " >/dev/null 2>&1"));
	EXPECT_EQ(0, gu_sh("cmp -s " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.orig"));

	/* the partition, under verified writes */
	ASSERT_EQ(0, gu_fio_start(&job, "", "--name=w --filename=/mnt/bilvm4/fio.dat --size=16M"
				  " --rw=randwrite --bs=4k --direct=1 --ioengine=psync"
				  " --verify=crc32c --verify_backlog=64 --time_based --runtime=4"));
	usleep(500000);
	ASSERT_EQ(0, gu_sh(LVMENV CTL " attach --live %s " BIP, part));
	majmin("/dev/mapper/" BIP, bi, sizeof(bi));
	EXPECT_EQ(0, gu_sh("dmsetup table " VGP "-lv1 | awk -v m=%s '$4 != m { bad = 1 } "
			   "END { exit bad }'", bi));
	EXPECT_EQ(0, gu_sh("[ $(blockdev --getsz /dev/mapper/" BIP ") = 260096 ]"));
	EXPECT_EQ(0, lvm("pvs --noheadings -o pv_name | tr -d ' ' | grep -qx /dev/mapper/" BIP));
	EXPECT_EQ(0, gu_sh("grep -q 'global_filter = \\[ \"r|^/dev/%s1\\$|\" \\]' "
			   LVMDIR "/lvm.conf", self->sd));

	/* a cgroup's reads of the LV are its tenant's */
	ASSERT_EQ(0, gu_blkiso_dir(BIP, dir, sizeof(dir)));
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=a --filename=" LVP " --direct=1 --rw=randread"
			    " --bs=4k --ioengine=psync --size=4M"));
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_EQ(1024ULL, r.read.ios);
	EXPECT_EQ(1024, gu_tenant_stat(dir, cgid, "rios"));
	EXPECT_TRUE(fio_clean(&job, &w));
	EXPECT_GT(w.write.ios, 0ULL);
	EXPECT_TRUE(gu_ledger_ok(dir));

	ASSERT_EQ(0, gu_sh(LVMENV CTL " detach --live " BIP));
	EXPECT_EQ(0, gu_sh("dmsetup table " VGP "-lv1 | awk -v m=%s '$4 != m { bad = 1 } "
			   "END { exit bad }'", raw));
	EXPECT_NE(0, gu_sh("dmsetup info " BIP " >/dev/null 2>&1"));
	EXPECT_EQ(0, gu_sh("cmp -s " LVMDIR "/lvm.conf /tmp/bilvm-lvm.conf.orig"));
	EXPECT_EQ(0, gu_sh(LVMENV "pvs --noheadings -o pv_name | tr -d ' ' | grep -qx /dev/%s1",
			   self->sd));
	gu_sh_out(now, sizeof(now), "sha256sum < /mnt/bilvm4/data");
	EXPECT_STREQ(self->sums, now);
	ASSERT_EQ(0, gu_sh("umount /mnt/bilvm4"));
	EXPECT_EQ(0, gu_sh("fsck.ext4 -n -f " LVP " >/dev/null"));
}

#define VGG		"bivgg"
#define BIG		"bilvmg"
#define LVG		"/dev/mapper/" VGG "-lv1"
#define IMG		"/tmp/bilvm-grow.img"

FIXTURE(grow) {
	char loop[32];
	char sums[128];
};

/* a VG on a loop device over a 64 MiB file, one LV of 32 MiB, ext4 with data */
FIXTURE_SETUP(grow)
{
	SKIP_BY_MODE();
	gu_sh("umount /mnt/bilvm5 2>/dev/null; dmsetup remove " VGG "-lv1 2>/dev/null;"
	      " dmsetup remove " BIG " 2>/dev/null; rm -rf /dev/" VGG);
	ASSERT_EQ(0, gu_module_load());
	ASSERT_EQ(0, gu_sh("modprobe loop"));
	ASSERT_EQ(0, gu_sh_out(self->loop, sizeof(self->loop), "rm -f " IMG " && truncate -s 64M "
			       IMG " && /usr/sbin/losetup -f --show " IMG));
	ASSERT_EQ(0, lvm_conf_write());
	ASSERT_EQ(0, vg_one_lv_with_data(VGG, self->loop, "32M", "/mnt/bilvm5", self->sums,
					 sizeof(self->sums)));
	ASSERT_EQ(0, gu_cg_create(CG));
}

FIXTURE_TEARDOWN(grow)
{
	if (skip_why(_metadata->name))
		return;
	gu_sh("umount /mnt/bilvm5 2>/dev/null");
	vg_down(VGG, BIG);
	gu_sh("/usr/sbin/losetup -d %s; rm -f " IMG, self->loop);
	gu_cg_destroy(CG);
	gu_module_unload();
}

/* LV1's size in 512-byte sectors, or -1 */
static long long lv_sectors(void)
{
	char out[64] = "";

	if (gu_sh_out(out, sizeof(out), "blockdev --getsz " LVG))
		return -1;
	return atoll(out);
}

/*
 * The disk under a live PV on blkiso grows (the file under the loop device
 * to 128 MiB, losetup -c, as a cloud volume grows): blkiso shows the old
 * size until blkisoctl resize, then pvresize finds the new extents,
 * lvextend takes them (its table names the blkiso device, not the disk)
 * and resize2fs grows the mounted filesystem into them; 40 MiB written
 * there.  The tenant's quota is kept and its reads counted; detach --live
 * puts the LV back on the disk; the data and fsck stay clean.  Attach and
 * detach run with -j: one object each, naming the disk and the LV.
 */
TEST_F_TIMEOUT(grow, a_grown_disk_grows_the_pv_through_blkiso, LVM_TIMEOUT)
{
	unsigned long long cgid = gu_cg_id(CG);
	char out[1024], bi[16], raw[16], dir[128], more[128], now[128], want[256];
	struct gu_fio r;

	SKIP_BY_MODE();
	majmin(self->loop, raw, sizeof(raw));
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), LVMENV CTL " -j attach --live %s " BIG,
			       self->loop));
	snprintf(want, sizeof(want), "\"lower\":\"%s\",\"holders\":[\"" VGG "-lv1\"]}",
		 self->loop);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_EQ(0, strncmp(out, "{\"device\":\"" BIG "\",\"major\":",
			     strlen("{\"device\":\"" BIG "\",\"major\":"))) TH_LOG("%s", out);
	majmin("/dev/mapper/" BIG, bi, sizeof(bi));
	ASSERT_EQ(0, gu_blkiso_dir(BIG, dir, sizeof(dir)));
	ASSERT_EQ(0, gu_sh(CTL " tenant set dev " BIG " cgroup /" CG " riops=5000"));

	ASSERT_EQ(0, gu_sh("truncate -s 128M " IMG " && /usr/sbin/losetup -c %s", self->loop));
	ASSERT_EQ(0, gu_sh("[ $(blockdev --getsz %s) = 262144 ]", self->loop));
	EXPECT_EQ(0, gu_sh("[ $(blockdev --getsz /dev/mapper/" BIG ") = 131072 ]"));
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), CTL " resize " BIG " 2>&1")) TH_LOG("%s", out);
	EXPECT_STREQ(BIG ": 131072 -> 262144 sectors", out);
	ASSERT_EQ(0, lvm("pvresize -q /dev/mapper/" BIG));
	gu_sh_out(out, sizeof(out), LVMENV "vgs --noheadings --units m --nosuffix -o vg_free "
		  VGG " | tr -d ' '");
	EXPECT_LE(88, atoi(out)) TH_LOG("free after pvresize: %s MiB", out);
	ASSERT_EQ(0, lvm("lvextend -q -L +64M " VGG "/lv1"));
	EXPECT_EQ(96LL << 11, lv_sectors());
	EXPECT_EQ(0, gu_sh("dmsetup table " VGG "-lv1 | awk -v m=%s '$4 != m { bad = 1 } "
			   "END { exit bad }'", bi));
	ASSERT_EQ(0, gu_sh("resize2fs " LVG " >/dev/null 2>&1"));
	ASSERT_EQ(0, gu_sh("dd if=/dev/urandom of=/mnt/bilvm5/more bs=1M count=40 2>/dev/null &&"
			   " sync"));
	gu_sh_out(more, sizeof(more), "sha256sum < /mnt/bilvm5/more");

	/* the tenant's quota stayed, its reads through the grown LV are its own */
	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), CTL " tenant get dev " BIG " cgroup /" CG));
	EXPECT_EQ(0, strncmp(out, "riops=5000 ", 11)) TH_LOG("%s", out);
	ASSERT_EQ(0, gu_fio(CG, &r, "--name=a --filename=" LVG " --direct=1 --rw=read"
			    " --bs=4k --ioengine=psync --offset=64M --size=4M"));
	EXPECT_EQ(0ULL, r.errors);
	EXPECT_EQ(1024, gu_tenant_stat(dir, cgid, "rios"));
	EXPECT_TRUE(gu_ledger_ok(dir));

	ASSERT_EQ(0, gu_sh_out(out, sizeof(out), LVMENV CTL " -j detach --live " BIG));
	snprintf(want, sizeof(want), "{\"device\":\"" BIG "\",\"lower\":\"%s\","
		 "\"holders\":[\"" VGG "-lv1\"],\"removed\":true}", self->loop);
	EXPECT_STREQ(want, out);
	EXPECT_EQ(0, gu_sh("dmsetup table " VGG "-lv1 | awk -v m=%s '$4 != m { bad = 1 } "
			   "END { exit bad }'", raw));
	EXPECT_EQ(96LL << 11, lv_sectors());
	gu_sh_out(now, sizeof(now), "sha256sum < /mnt/bilvm5/data");
	EXPECT_STREQ(self->sums, now);
	gu_sh_out(now, sizeof(now), "echo 3 > /proc/sys/vm/drop_caches; sha256sum < /mnt/bilvm5/more");
	EXPECT_STREQ(more, now);
	ASSERT_EQ(0, gu_sh("umount /mnt/bilvm5"));
	EXPECT_EQ(0, gu_sh("fsck.ext4 -n -f " LVG " >/dev/null"));
}

FIXTURE(plain) {
	int unused;
};

FIXTURE_SETUP(plain)
{
}

FIXTURE_TEARDOWN(plain)
{
}

/* a fixture only for the timeout: guest time leaps in the deterministic mode */
TEST_F_TIMEOUT(plain, mounted_disk_refused, LVM_TIMEOUT)
{
	char out[2048], loop[64];

	if (skip_why(_metadata->name))
		SKIP(return, "%s", skip_why(_metadata->name));
	ASSERT_EQ(0, gu_sh("modprobe loop"));
	ASSERT_EQ(0, gu_sh_out(loop, sizeof(loop), "truncate -s 64M /tmp/bilvm.img && "
			       "/usr/sbin/losetup -f --show /tmp/bilvm.img"));
	ASSERT_EQ(0, gu_sh("mkdir -p /mnt/bilvm3"));
	ASSERT_EQ(0, gu_mkfs_mount("ext4", loop, "/mnt/bilvm3"));
	EXPECT_EQ(4, gu_sh(CTL " attach --live %s bilvm3 2>/tmp/bilvm.err", loop));
	gu_sh_out(out, sizeof(out), "cat /tmp/bilvm.err");
	EXPECT_NE(NULL, strstr(out, "mounted")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "blkiso.conf")) TH_LOG("%s", out);
	EXPECT_NE(0, gu_sh("dmsetup info bilvm3 >/dev/null 2>&1"));
	gu_sh("umount /mnt/bilvm3; /usr/sbin/losetup -d %s; rm -f /tmp/bilvm.img", loop);
}

TEST_HARNESS_MAIN
