# selftests/bench/build.mk - benchmarks (reported, not timed tests).
# fastpath_bench: token-engine per-bio fast path, measured under callgrind
# by selftests/bench/fastpath.sh.
$(B)/bench/fastpath_bench: selftests/bench/fastpath_bench.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(filter-out -isystem $(KSRC)/tools/testing/selftests,$(USER_CFLAGS)) \
		-o $@ $< $(CORE_SRCS) $(USER_LDLIBS)
TOOL_BINS += $(B)/bench/fastpath_bench

# shared_line_bench: what the tenant's shared latency histogram line costs a
# completion when completions hop between CPUs (issue 18; doc/metering.md,
# "Many CPUs"): host threads, one shared line against one line each.
$(B)/bench/shared_line_bench: selftests/bench/shared_line_bench.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -pthread -o $@ $<
TOOL_BINS += $(B)/bench/shared_line_bench
