# Programs used by the system tests, linked against the project's verbs library.
TESTAPP_DIR := $(BUILD)/tests
TESTAPPS := $(TESTAPP_DIR)/inject_target $(TESTAPP_DIR)/verbs_errors $(TESTAPP_DIR)/rc_ops \
	$(TESTAPP_DIR)/open_close $(TESTAPP_DIR)/cm_pair $(TESTAPP_DIR)/cm_cycles $(TESTAPP_DIR)/hostpath

$(TESTAPP_DIR)/%: tests/apps/%.c $(HOSTLIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Ihost-lib/include -I$(SPEC_INC) $< -o $@ $(HOSTLIB_LINK)

# rc_ops: its checks, and its mix and bench modes, over common RC set-up
RC_OPS_SRCS := tests/apps/rc_ops.c tests/apps/rc_common.c tests/apps/rc_mix.c tests/apps/rc_bench.c
$(TESTAPP_DIR)/rc_ops: $(RC_OPS_SRCS) tests/apps/rc_common.h $(HOSTLIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Ihost-lib/include -I$(SPEC_INC) $(RC_OPS_SRCS) -o $@ $(HOSTLIB_LINK)

# one through librdmacm: the project's, as a program built against Debian's headers finds it
$(TESTAPP_DIR)/cm_cycles: tests/apps/cm_cycles.c $(RDMACM_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $< -o $@ -L$(HOSTLIB_DIR) -lrdmacm $(HOSTLIB_LINK)

.PHONY: testapps
testapps: $(TESTAPPS)
ALL_TARGETS += testapps

# rdma-core's test suite (tests/test_rdma_core.py runs it on a simulated NIC)
RDMA_CORE_TESTS := $(BUILD)/rdma-core/tests
$(RDMA_CORE_TESTS)/run_tests.py: scripts/rdma-core-tests.sh
	bash $< $(RDMA_CORE_TESTS)

.PHONY: rdma-core-tests
rdma-core-tests: $(RDMA_CORE_TESTS)/run_tests.py
ALL_TARGETS += rdma-core-tests

# Fuzzer of the RX kernel, with sanitizers (make fuzz runs it long, make test briefly)
FUZZ_RX := $(BUILD)/fuzz/fuzz_rx
$(FUZZ_RX): tests/fuzz/fuzz_rx.c $(RX_SRCS) hw/kernels/common/rnic_crc.c hw/kernels/rx/rx.h hw/kernels/rx/rx_int.h $(KERNEL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Wno-unknown-pragmas -fsanitize=address,undefined -fno-sanitize-recover=all \
		-Ihw/kernels/common -Ihw/kernels/rx -I$(SPEC_INC) -I$(KERNEL_GEN) $< $(RX_SRCS) hw/kernels/common/rnic_crc.c -o $@

.PHONY: fuzz-build
fuzz-build: $(FUZZ_RX)
ALL_TARGETS += fuzz-build
