# selftests/fuzz/build.mk - libFuzzer targets (clang, ASan + UBSan); make
# fuzz-smoke runs each for 30 s, make fuzz longer.  Each target appends its
# own lines below.

# bucket_fuzz: random call sequences into the token-bucket engine.
BUCKET_FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Ikmod/core -Iuapi
$(B)/fuzz/bucket_fuzz: selftests/fuzz/bucket_fuzz.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(BUCKET_FUZZ_CFLAGS) -o $@ $< $(CORE_SRCS)
FUZZ_TARGETS += $(B)/fuzz/bucket_fuzz

# grammar_fuzz: random bytes into the key=value grammar (parse/merge,
# tenant/device); checks transactionality and the canonical fixed point.
GRAMMAR_FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Ikmod/core -Iuapi
$(B)/fuzz/grammar_fuzz: selftests/fuzz/grammar_fuzz.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(GRAMMAR_FUZZ_CFLAGS) -o $@ $< $(CORE_SRCS)
FUZZ_TARGETS += $(B)/fuzz/grammar_fuzz

# glob_fuzz: random globs and cgroup paths into the rule matcher.
$(B)/fuzz/glob_fuzz: selftests/fuzz/glob_fuzz.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(GRAMMAR_FUZZ_CFLAGS) -o $@ $< $(CORE_SRCS)
FUZZ_TARGETS += $(B)/fuzz/glob_fuzz
