# Programs used by the system tests, linked against the project's verbs library.
TESTAPP_DIR := $(BUILD)/tests
TESTAPPS := $(TESTAPP_DIR)/inject_target $(TESTAPP_DIR)/verbs_errors $(TESTAPP_DIR)/rc_ops \
	$(TESTAPP_DIR)/open_close

$(TESTAPP_DIR)/%: tests/apps/%.c $(HOSTLIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Ihost-lib/include $< -o $@ $(HOSTLIB_LINK)

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
