# tools/blkisoctl/build.mk - blkisoctl, the command-line tool for the
# /dev/blkiso ioctls and for attaching blkiso over a block device
# (tools/blkisoctl/blkisoctl.8).
BLKISOCTL_SRCS := $(wildcard tools/blkisoctl/*.c)
BLKISOCTL_HDRS := tools/blkisoctl/blkisoctl.h uapi/linux/blkiso.h

$(B)/tools/blkisoctl: $(BLKISOCTL_SRCS) $(BLKISOCTL_HDRS)
	@mkdir -p $(@D)
	@echo "  CC      tools/$(@F)"
	@$(CC) $(filter-out -isystem $(KSRC)/tools/testing/selftests,$(USER_CFLAGS)) \
		-Itools/blkisoctl -o $@ $(BLKISOCTL_SRCS) -ldevmapper
TOOL_BINS += $(B)/tools/blkisoctl

# selftests/unit/cli_test.c includes prom.c and runs both tools.
$(B)/unit/cli_test: tools/blkisoctl/prom.c $(BLKISOCTL_HDRS) $(B)/tools/blkisoctl \
	$(B)/tools/blkiso-sim
