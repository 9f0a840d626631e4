# tools/sim/build.mk - blkiso-sim, the discrete-event simulator (doc/sim.md).
# The engine is also compiled into selftests/unit/sim_test.c, which
# #includes the tools/sim/*.c files it needs, so `make unit` runs the
# end-to-end scenarios without a rule of its own here.
SIM_SRCS := tools/sim/blkiso-sim.c tools/sim/sim_scenario.c \
	tools/sim/sim_device.c tools/sim/sim_engine.c tools/sim/sim_output.c
SIM_HDRS := tools/sim/sim_engine.h

# sim_test is rebuilt when the engine it #includes changes
$(B)/unit/sim_test: $(SIM_SRCS) $(SIM_HDRS)

$(B)/tools/blkiso-sim: $(SIM_SRCS) $(SIM_HDRS) $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(filter-out -isystem $(KSRC)/tools/testing/selftests,$(USER_CFLAGS)) \
		-Itools/sim -o $@ $(SIM_SRCS) $(CORE_SRCS) $(USER_LDLIBS)
TOOL_BINS += $(B)/tools/blkiso-sim
