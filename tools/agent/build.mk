# tools/agent/build.mk - blkiso-agent (tools/agent/blkiso-agent.8), the
# per-host daemon of cluster-wide quotas; needs hiredis (libhiredis-dev),
# so it is built with the tests (make all), not by `make tools` and the
# Debian packages.
AGENT_LIB_SRCS := tools/agent/agent_core.c tools/agent/agent_store.c tools/agent/agent_conf.c
AGENT_LIB_HDRS := tools/agent/agent.h uapi/linux/blkiso.h

$(B)/tools/blkiso-agent: tools/agent/blkiso-agent.c $(AGENT_LIB_SRCS) $(AGENT_LIB_HDRS) \
	$(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	@echo "  CC      tools/$(@F)"
	@$(CC) $(filter-out -isystem $(KSRC)/tools/testing/selftests,$(USER_CFLAGS)) \
		-Itools/agent -o $@ $< $(AGENT_LIB_SRCS) $(CORE_SRCS) -lhiredis

TEST_BINS += $(B)/tools/blkiso-agent
