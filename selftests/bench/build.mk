# selftests/bench/build.mk - benchmarks (reported, not timed tests).
# fastpath_bench: token-engine per-bio fast path, measured under callgrind
# by selftests/bench/fastpath.sh.
$(B)/bench/fastpath_bench: selftests/bench/fastpath_bench.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(filter-out -isystem $(KSRC)/tools/testing/selftests,$(USER_CFLAGS)) \
		-o $@ $< $(CORE_SRCS) $(USER_LDLIBS)
TOOL_BINS += $(B)/bench/fastpath_bench
