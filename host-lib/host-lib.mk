# The verbs library: libibverbs.so.1, a drop-in for rdma-core 44's (same version nodes and
# symbol map, host-lib/libibverbs.map), with its simulator and card backends; and the demo program.
HOSTLIB_DIR := $(BUILD)/host-lib
HOSTLIB_SO := $(HOSTLIB_DIR)/libibverbs.so.1
HOSTLIB_SRCS := host-lib/src/verbs.c host-lib/src/device.c host-lib/src/datapath.c host-lib/src/verbs_ex.c host-lib/src/events.c host-lib/src/compat.c \
	host-lib/src/cm_dv.c host-lib/src/sim_bus.c host-lib/src/pci_bus.c $(DRIVER_CORE_SRCS)
HOSTLIB_CFLAGS := $(CFLAGS_COMMON) -fPIC -fno-semantic-interposition -pthread -I$(SPEC_INC) -Ihost-lib/include \
	-Ihost-lib/src -I$(DRIVER_CORE_INC) -Idriver/include/uapi

$(HOSTLIB_SO): $(HOSTLIB_SRCS) $(wildcard host-lib/src/*.h host-lib/include/rnic/*.h) $(DRIVER_CORE_HDRS) \
		$(SPEC_INC)/rnic_spec.h driver/include/uapi/rnic/rnic_uapi.h host-lib/libibverbs.map
	@mkdir -p $(dir $@)
	$(CC) $(HOSTLIB_CFLAGS) -shared -Wl,-soname,libibverbs.so.1 -Wl,--version-script=host-lib/libibverbs.map \
		-Wl,-z,now -Wl,--no-undefined -o $@ $(HOSTLIB_SRCS) -lpthread
	ln -sf libibverbs.so.1 $(HOSTLIB_DIR)/libibverbs.so

# librdmacm.so.1, a drop-in for rdma-core 44's, over the NIC's firmware CM and the library above
RDMACM_SO := $(HOSTLIB_DIR)/librdmacm.so.1
RDMACM_SRCS := host-lib/src/rdmacm.c host-lib/src/rdmacm_id.c host-lib/src/rdmacm_ep.c
$(RDMACM_SO): $(RDMACM_SRCS) host-lib/src/rdmacm.h host-lib/include/rnic/rnicdv.h $(SPEC_INC)/rnic_spec.h \
		host-lib/librdmacm.map $(HOSTLIB_SO)
	$(CC) $(CFLAGS_COMMON) -fPIC -pthread -I$(SPEC_INC) -Ihost-lib/include -shared -Wl,-soname,librdmacm.so.1 \
		-Wl,--version-script=host-lib/librdmacm.map -Wl,-z,now -Wl,--no-undefined -o $@ $(RDMACM_SRCS) \
		-L$(HOSTLIB_DIR) -libverbs -lpthread
	ln -sf librdmacm.so.1 $(HOSTLIB_DIR)/librdmacm.so

# programs of the project link against it, found at run time through their rpath
HOSTLIB_LINK := -L$(HOSTLIB_DIR) -libverbs -Wl,-rpath,$(HOSTLIB_DIR)

DEMO := $(BUILD)/demo/rnic-demo
$(DEMO): sim/demo/rnic_demo.c $(HOSTLIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Ihost-lib/include $< -o $@ $(HOSTLIB_LINK)

# rnic-stat: the datapath counters and the context caches' figures
RNIC_STAT := $(HOSTLIB_DIR)/rnic-stat
$(RNIC_STAT): host-lib/tools/rnic_stat.c host-lib/include/rnic/rnicdv.h $(SPEC_INC)/rnic_spec.h $(HOSTLIB_SO)
	$(CC) $(CFLAGS_COMMON) -Ihost-lib/include -I$(SPEC_INC) $< -o $@ $(HOSTLIB_LINK)

.PHONY: hostlib
hostlib: $(HOSTLIB_SO) $(RDMACM_SO) $(DEMO) $(RNIC_STAT)
ALL_TARGETS += hostlib
