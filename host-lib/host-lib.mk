# The verbs library (librnicverbs.so) with its simulator backend, and the demo program.
HOSTLIB_DIR := $(BUILD)/host-lib
HOSTLIB_SO := $(HOSTLIB_DIR)/librnicverbs.so
HOSTLIB_SRCS := host-lib/src/verbs.c host-lib/src/sim_bus.c $(DRIVER_CORE_SRCS)
HOSTLIB_CFLAGS := $(CFLAGS_COMMON) -fPIC -pthread -I$(SPEC_INC) -Ihost-lib/include \
	-Ihost-lib/src -I$(DRIVER_CORE_INC)

$(HOSTLIB_SO): $(HOSTLIB_SRCS) $(wildcard host-lib/src/*.h host-lib/include/rnic/*.h) $(DRIVER_CORE_HDRS) \
		$(SPEC_INC)/rnic_spec.h host-lib/exports.map
	@mkdir -p $(dir $@)
	$(CC) $(HOSTLIB_CFLAGS) -shared -Wl,--version-script=host-lib/exports.map -o $@ $(HOSTLIB_SRCS) -lpthread

DEMO := $(BUILD)/demo/rnic-demo
$(DEMO): sim/demo/rnic_demo.c $(HOSTLIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Ihost-lib/include $< -o $@ -L$(HOSTLIB_DIR) -lrnicverbs -Wl,-rpath,$(HOSTLIB_DIR)

.PHONY: hostlib
hostlib: $(HOSTLIB_SO) $(DEMO)
ALL_TARGETS += hostlib
