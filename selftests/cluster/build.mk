# selftests/cluster/build.mk - the host-side cluster test (cluster_test.c):
# blkiso-agent's decision and store client over the core's meter, 16 hosts
# against a real redis-server on 127.0.0.1.  Run by `make cluster-check`.

$(B)/cluster/cluster_test: selftests/cluster/cluster_test.c $(wildcard tools/agent/agent*) \
	$(CORE_SRCS) $(CORE_HDRS) $(KSRC_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      cluster/$(@F)"
	@$(CC) $(USER_CFLAGS) -Itools/agent -o $@ $< $(wildcard tools/agent/agent_*.c) $(CORE_SRCS) \
		$(USER_LDLIBS) -lhiredis

TEST_BINS += $(B)/cluster/cluster_test
