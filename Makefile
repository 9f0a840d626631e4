# blkiso - top-level Makefile.
#
# Every output (module objects, user tools, tests, downloaded guest kernels,
# guest run logs) goes below build/, which git ignores.
#
#   make deps        install every Debian package and unpack guest kernels (root)
#   make             module (for KDIR), user tools, unit and guest test programs
#   make unit        freestanding-core unit tests on the host
#   make mutate      mutation testing of kmod/core against the unit suite
#                    (not in CI, 15-40 min): MUTATE_N mutants a file (30),
#                    MUTATE_SEED (17), MUTATE_FILES (all); killed/total per
#                    file, build/mutate/report.json (doc/mechanisms.md)
#   make check       deps, build, unit, fuzz smoke, cluster (Redis), host (install, packages,
#                    systemd guest) and guest tests on 6.1
#   make check-all   the same, guest tests on 6.1 and 6.12 (make guest-both)
#   make check-full  check-all plus DKMS builds and meter suites for both
#                    kernels, the long guest runs (GUEST_FULL=1) and
#                    check-debug: the suites too long for CI
#   make debug-kernel  the checking guest kernel (KASAN, lockdep, UBSAN,
#                    kmemleak, DEBUG_OBJECTS, fault injection) from Debian's
#                    linux-source-6.1, cached in build/debug-kernel/
#   make check-debug the meter, target, feedback and robustness suites, the
#                    interface fuzzer with fault injection, and a kmemleak
#                    scan on it; any report fails (doc/robustness.md).  Run
#                    it before merging a change to kmod/
#   make vm-run SCRIPT=path [KVER=6.1|6.12] [ICOUNT=1]   any script in a guest
#   make demo        the main job (see README)
#   make bench       blkiso against io.max, iocost, BFQ: bench.json, plots (doc/bench.md)
#   make install     module, tools, unit, udev rules onto this host (dist/install.mk)
#   make deb         blkiso-dkms and blkiso-tools .debs in build/deb (debian/)

SHELL     := /bin/bash
TOP       := $(CURDIR)
B         := $(TOP)/build
KSRC      := $(B)/ksrc
CC        ?= gcc
CLANG     ?= clang

include kmod/core/sources.mk
CORE_SRCS := $(addprefix kmod/core/,$(BLKISO_CORE_SRCS))
CORE_HDRS := $(wildcard kmod/core/*.h)

# User space: warning-free with -Wall -Wextra -Werror.  The kselftest headers
# come from Debian's linux-source-6.1 at build time (-isystem: their own code
# warns under -Wextra).
USER_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	-Ikmod/core -Iuapi -isystem $(KSRC)/tools/testing/selftests
USER_LDLIBS := -lpthread
# A package build adds the distribution's hardening flags (debian/rules).
USER_CFLAGS += $(BLKISO_EXTRA_CFLAGS)

# Fragments: tools/*/build.mk and selftests/*/build.mk add their own rules and
# append to TOOL_BINS, TEST_BINS and FUZZ_TARGETS.
TOOL_BINS :=
TEST_BINS :=
FUZZ_TARGETS :=
include $(sort $(wildcard tools/*/build.mk selftests/*/build.mk))

.DEFAULT_GOAL := all

.PHONY: all deps ksrc module tools tests unit mutate fuzz fuzz-smoke guest guest-both runner-test smoke check check-all vm-run cluster-check \
	host-check deb deb-check systemd-check check-full debug-kernel check-debug \
	demo bench bench-smoke checkpatch clean
all: module tools tests

deps:
	@bash selftests/vm/deps.sh

# The kselftest harness and checkpatch, from Debian's linux-source-6.1.
KSRC_STAMP := $(KSRC)/.stamp
$(KSRC_STAMP):
	@bash selftests/vm/ksrc.sh $(KSRC)
ksrc: $(KSRC_STAMP)

# ---- the module: built in build/kmod-<release>/, a symlink mirror of the tree ----
ifeq ($(KDIR),)
KDIR := $(shell bash selftests/vm/kdir.sh $(KVER))
endif
KREL := $(patsubst linux-headers-%,%,$(notdir $(realpath $(KDIR))))
MODDIR := $(B)/kmod-$(KREL)

module:
	@test -n "$(KDIR)" || { echo "no kernel headers: run 'make deps'"; exit 1; }
	@mkdir -p $(MODDIR)
	@cp -rsf $(wildcard $(TOP)/Kbuild $(TOP)/kmod $(TOP)/uapi) $(MODDIR)/
	$(MAKE) -C $(KDIR) M=$(MODDIR) BLKISO_WERROR=y W=1 modules
	@echo "built $(MODDIR)/blkiso.ko"

include dist/install.mk

# ---- unit tests: every selftests/unit/*_test.c against the whole core ----
UNIT_SRCS := $(wildcard selftests/unit/*_test.c)
UNIT_BINS := $(patsubst selftests/unit/%.c,$(B)/unit/%,$(UNIT_SRCS))
UNIT_LIB_SRCS := $(filter-out %_test.c,$(wildcard selftests/unit/*.c))
UNIT_LIB_HDRS := $(wildcard selftests/unit/*.h)

$(B)/unit/%: selftests/unit/%.c $(CORE_SRCS) $(CORE_HDRS) $(UNIT_LIB_SRCS) $(UNIT_LIB_HDRS) $(KSRC_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $(@F)"
	@$(CC) $(USER_CFLAGS) -Iselftests/unit -o $@ $< $(CORE_SRCS) $(UNIT_LIB_SRCS) $(USER_LDLIBS)

tools: $(TOOL_BINS)

tests: $(UNIT_BINS) $(TEST_BINS)

# ... and selftests/unit/mechanisms_doc.sh: doc/mechanisms.md has a row for
# every mechanism ID cited and names only tests that exist; summary_test.sh:
# the summary that make check passes or fails on counts a missing stage;
# bench_late_test.sh: the bench's split of the victim's late I/Os.
unit: $(UNIT_BINS)
	@bash selftests/run-suite.sh unit $(UNIT_BINS) selftests/unit/mechanisms_doc.sh \
		selftests/unit/summary_test.sh selftests/unit/bench_late_test.sh

# Mutation testing (selftests/unit/mutate.py): each mutant of a core file
# must fail a unit test; exits 1 when a file kills under 90 %.
MUTATE_N ?= 30
MUTATE_SEED ?= 17
mutate: $(KSRC_STAMP)
	@python3 selftests/unit/mutate.py --per-file $(MUTATE_N) --seed $(MUTATE_SEED) \
		--cc $(CC) $(MUTATE_FILES)

# ---- guest tests: two boots per kernel run every program of build/guest ----
# one in the deterministic mode (rates, capacities), one with 2 vCPUs.
GUEST_SERIES ?= 6.1
guest: tests
	@$(MAKE) --no-print-directory module KVER=$(GUEST_SERIES) >/dev/null
	@bash selftests/vm/guest-suite.sh $(GUEST_SERIES) 1; a=$$?; \
		bash selftests/vm/guest-suite.sh $(GUEST_SERIES) 0; b=$$?; \
		exit $$((a | b))

# Both kernels: the two deterministic boots side by side (icount: guest
# time counts guest instructions, so sharing the host's cores changes their
# wall time only; each console goes to its log, shown when both are done),
# then the two ordinary boots one after the other (their rate floors want
# the cores to themselves).  check-all: ~10 min less than four in a row.
guest-both: tests
	@$(MAKE) --no-print-directory module KVER=6.1 >/dev/null
	@$(MAKE) --no-print-directory module KVER=6.12 >/dev/null
	@bash selftests/vm/guest-suite.sh 6.1 1 >/dev/null & p=$$!; \
		bash selftests/vm/guest-suite.sh 6.12 1 >/dev/null; b=$$?; wait $$p; a=$$?; \
		cat $(B)/results/guest-6.1-icount.log $(B)/results/guest-6.12-icount.log; \
		bash selftests/vm/guest-suite.sh 6.1 0; c=$$?; \
		bash selftests/vm/guest-suite.sh 6.12 0; d=$$?; \
		exit $$((a | b | c | d))

# Run any script in a guest: make vm-run SCRIPT=path [KVER=6.12] [ICOUNT=1]
vm-run: tests
	@test -n "$(SCRIPT)" || { echo "usage: make vm-run SCRIPT=path [KVER=6.1|6.12] [ICOUNT=1]"; exit 2; }
	@$(MAKE) --no-print-directory module KVER=$(or $(KVER),6.1) >/dev/null
	@bash selftests/vm/run.sh -k $(or $(KVER),6.1) $(if $(filter 1,$(ICOUNT)),-i) $(SCRIPT)

# The runner itself: panics and hangs become prompt failures.
runner-test:
	@mkdir -p $(B)/results
	@bash selftests/vm/runner_test.sh | tee $(B)/results/runner.log

fuzz-smoke: $(FUZZ_TARGETS)
	@mkdir -p $(B)/results
	@bash selftests/run-fuzz.sh $(or $(FUZZ_SECONDS),30) $(FUZZ_TARGETS) | tee $(B)/results/fuzz.log

fuzz: $(FUZZ_TARGETS)
	@bash selftests/run-fuzz.sh $(or $(FUZZ_SECONDS),600) $(FUZZ_TARGETS)

# Short runs of make demo and make bench with sanity checks (CI).
smoke: tools $(B)/cluster/cluster_test
	@$(MAKE) --no-print-directory module KVER=6.1 >/dev/null
	@mkdir -p $(B)/results
	@bash selftests/smoke.sh | tee $(B)/results/smoke.log

# blkiso as a host installs it: make install, the unit, module autoload,
# apply as blkiso.service runs it, udev names (selftests/host/run.sh).
host-check: tools
	@mkdir -p $(B)/results
	@bash selftests/host/run.sh 6.1 | tee $(B)/results/host.log

# Debian packages (debian/: debhelper, dh-dkms) in build/deb.
deb:
	@bash dist/mkdeb.sh

# The packages as a host gets them (selftests/host/dkms.sh): make deb,
# lintian without errors, dkms build against the 6.1 headers (~1.5 min).
deb-check:
	@mkdir -p $(B)/results
	@bash selftests/host/dkms.sh --lintian 6.1 | tee $(B)/results/deb.log

# blkiso.service booted for real: the host's systemd as the guest's PID 1,
# udev, an fstab mount by UUID= on a blkiso device (selftests/host/systemd.sh,
# ~1.5 min).
systemd-check: tools
	@mkdir -p $(B)/results
	@bash selftests/host/systemd.sh 6.1 | tee $(B)/results/systemd.log

# Cluster-wide quotas (selftests/cluster): 16 simulated hosts' agents
# against redis-servers of its own on 127.0.0.1 (~2 min: one failover runs
# in real time).
cluster-check: $(B)/cluster/cluster_test
	@mkdir -p $(B)/results
	@$(B)/cluster/cluster_test | tee $(B)/results/cluster.log

checkpatch: ksrc
	@mkdir -p $(B)/results
	@bash selftests/checkpatch.sh | tee $(B)/results/checkpatch.log

# check: everything on the 6.1 guest; check-all: 6.1 and 6.12.  Each stage
# must leave its log with results (CHECK_LOGS): a stage that does not build
# counts as failed, not as nothing.
CHECK_LOGS := unit fuzz checkpatch runner smoke host deb systemd cluster \
	guest-6.1-icount guest-6.1-smp
check: deps
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -k unit fuzz-smoke checkpatch runner-test smoke host-check \
		deb-check systemd-check cluster-check guest GUEST_SERIES=6.1; \
		bash selftests/summary.sh --expect "$(CHECK_LOGS)" $(B)/results/*.log | \
			tee $(B)/results/summary; \
		tail -n 1 $(B)/results/summary | grep -q '^[0-9]* passed, 0 failed'

check-all: deps
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -k unit fuzz-smoke checkpatch runner-test smoke host-check deb-check \
		systemd-check cluster-check; \
		$(MAKE) --no-print-directory guest-both; \
		bash selftests/summary.sh --expect "$(CHECK_LOGS) guest-6.12-icount guest-6.12-smp" \
			$(B)/results/*.log | tee $(B)/results/summary; \
		tail -n 1 $(B)/results/summary | grep -q '^[0-9]* passed, 0 failed'

# The debug kernel and the suites run on it (not part of check-all: a cold
# build and KASAN guests under TCG take too long for CI).
debug-kernel:
	@bash selftests/vm/debug-kernel.sh

DEBUG_SUITES ?= meter_test target_test feedback_test robust_test lifetime_test
check-debug: debug-kernel tests
	@$(MAKE) --no-print-directory module KVER=debug >/dev/null
	@mkdir -p $(B)/results
	@bash selftests/vm/debug-suite.sh $(DEBUG_SUITES) | tee $(B)/results/debug.log; \
		exit $${PIPESTATUS[0]}

# check-all plus the long suites: the packages installed and purged on
# this machine (apt, DKMS's own build for the 6.1 headers), dkms build for
# 6.1 and 6.12 with the meter suite on each DKMS-built module (~9 min);
# the guest tests that only run with GUEST_FULL=1 (writeback_test: one and two
# writers, the 30 s backpressure flood, fsync under a flood; lvm_test:
# every rollback step of attach --live, LVM's devices file, activation
# after a reboot, and the whole program on 6.12), deterministic mode, 6.1
# and 6.12 (about 25 minutes); lifetime_test's 60 s stress run in the
# ordinary mode (2 vCPUs), 6.1 and 6.12 (~2 min each); manycpu_test in a
# deterministic guest with 4 vCPUs (booted with one, the test onlines the
# rest: doc/robustness.md), 6.1 and 6.12 (~2 min each); then check-debug (a cold debug
# kernel build is about an hour on 2 cores).
GUEST_FULL_TESTS := writeback_test lvm_test
check-full: check-all
	@mkdir -p $(B)/results
	@bash selftests/host/dkms.sh --install --meter 6.1 6.12 | tee $(B)/results/deb-full.log; \
	for k in 6.1 6.12; do \
		$(MAKE) --no-print-directory module KVER=$$k >/dev/null || exit 1; \
		GUEST_FULL=1 bash selftests/vm/run.sh -k $$k -i -t 3000 \
			selftests/guest/run-all.sh $(GUEST_FULL_TESTS) | tee $(B)/results/guest-full-$$k.log; \
		GUEST_FULL=1 bash selftests/vm/run.sh -k $$k -t 1200 \
			selftests/guest/run-all.sh lifetime_test | tee $(B)/results/guest-life-$$k.log; \
		GUEST_FULL=1 bash selftests/vm/run.sh -k $$k -i -c 4 -t 1200 \
			selftests/guest/run-all.sh manycpu_test | tee $(B)/results/guest-manycpu-$$k.log; \
	done; \
	$(MAKE) --no-print-directory check-debug; \
	bash selftests/summary.sh $(B)/results/*.log | tee $(B)/results/summary; \
	tail -n 1 $(B)/results/summary | grep -q '^[0-9]* passed, 0 failed'

clean:
	rm -rf $(B)/kmod-* $(B)/unit $(B)/guest $(B)/tools $(B)/fuzz $(B)/results $(B)/vm

# Benchmarks (figures, not tests; doc/bench.md): blkiso against io.max,
# iocost, BFQ and nothing, in deterministic 6.1 guests: accuracy, noisy
# neighbour, overhead, convergence, scale, buffered writer neighbour, rate step;
# build/bench/bench.json, plots,
# and README.md's Results section.  BENCH_SCENARIOS="..." runs a subset,
# BENCH_SECS=n sets the guest seconds per run.  bench-smoke: seconds per
# scenario, in build/bench-smoke, README untouched.
bench: tools $(B)/cluster/cluster_test
	@t0=$$(date +%s); $(MAKE) --no-print-directory module KVER=6.1 >/dev/null && \
		BENCH_T0=$$t0 bash tools/bench/run.sh -k 6.1

bench-smoke: tools $(B)/cluster/cluster_test
	@$(MAKE) --no-print-directory module KVER=6.1 >/dev/null
	@BENCH_SMOKE=1 BENCH_OUT=$(B)/bench-smoke BENCH_README=0 \
		bash tools/bench/run.sh -k 6.1

# The main job: a noisy neighbour against a victim on one SSD-like null_blk
# device, without and with blkiso, in the deterministic 6.1 guest; the table
# on stdout, build/demo/demo.json and build/demo/demo.png (see README).
demo: deps
	@t0=$$(date +%s); echo "[demo] building the module, tools and tests (make all, module for 6.1)"; \
		$(MAKE) --no-print-directory all >/dev/null && \
		$(MAKE) --no-print-directory module KVER=6.1 >/dev/null && \
		DEMO_T0=$$t0 bash tools/demo/run.sh -k 6.1
