# selftests/guest/build.mk - guest test programs (kselftest harness), built
# on the host and run inside the QEMU guest by selftests/guest/run-all.sh.
GUEST_TEST_SRCS := $(wildcard selftests/guest/*_test.c)
GUEST_TEST_BINS := $(patsubst selftests/guest/%.c,$(B)/guest/%,$(GUEST_TEST_SRCS))
GUEST_UTIL := selftests/guest/guest_util.c selftests/guest/guest_util.h

$(B)/guest/%: selftests/guest/%.c $(GUEST_UTIL) $(KSRC_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      guest/$(@F)"
	@$(CC) $(USER_CFLAGS) -Iselftests/guest -o $@ $< selftests/guest/guest_util.c $(USER_LDLIBS)

TEST_BINS += $(GUEST_TEST_BINS)

# The deterministic mode's ticker (see ticker.c), run by run-all.sh.
$(B)/guest/ticker: selftests/guest/ticker.c
	@mkdir -p $(@D)
	@echo "  CC      guest/$(@F)"
	@$(CC) $(USER_CFLAGS) -o $@ $<

TEST_BINS += $(B)/guest/ticker

# The interface fuzzer of make check-debug (iface_fuzz.c): the core for the
# grammar's key names, libdevmapper for messages and table loads.
$(B)/guest/iface_fuzz: selftests/guest/iface_fuzz.c $(GUEST_UTIL) $(CORE_SRCS) $(CORE_HDRS) $(KSRC_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      guest/$(@F)"
	@$(CC) $(USER_CFLAGS) -Iselftests/guest -o $@ $< selftests/guest/guest_util.c \
		$(CORE_SRCS) $(USER_LDLIBS) -ldevmapper

TEST_BINS += $(B)/guest/iface_fuzz
