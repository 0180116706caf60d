# Programs used by the system tests, linked against the project's verbs library.
TESTAPP_DIR := $(BUILD)/tests
TESTAPPS := $(TESTAPP_DIR)/inject_target $(TESTAPP_DIR)/verbs_errors $(TESTAPP_DIR)/rc_ops \
	$(TESTAPP_DIR)/open_close $(TESTAPP_DIR)/cm_pair $(TESTAPP_DIR)/cm_cycles $(TESTAPP_DIR)/hostpath

$(TESTAPP_DIR)/%: tests/apps/%.c $(HOSTLIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Ihost-lib/include -I$(SPEC_INC) $< -o $@ $(HOSTLIB_LINK)

# bad arguments to rnic.ko's ioctls, run in a VM on a simulated card (tests/test_vm.py): libc only
KMOD_IOCTLS := $(TESTAPP_DIR)/kmod_ioctls
$(KMOD_IOCTLS): tests/apps/kmod_ioctls.c driver/include/uapi/rnic/rnic_uapi.h $(SPEC_INC)/rnic_spec.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Idriver/include/uapi/rnic -I$(SPEC_INC) $< -o $@

# rc_ops: its checks, and its mix, bench and limits modes, over common RC set-up
RC_OPS_SRCS := tests/apps/rc_ops.c tests/apps/rc_common.c tests/apps/rc_mix.c tests/apps/rc_bench.c tests/apps/rc_limits.c \
	tests/apps/rc_faults.c
$(TESTAPP_DIR)/rc_ops: $(RC_OPS_SRCS) tests/apps/rc_common.h $(HOSTLIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Ihost-lib/include -I$(SPEC_INC) $(RC_OPS_SRCS) -o $@ -pthread $(HOSTLIB_LINK)

# one through librdmacm: the project's, as a program built against Debian's headers finds it
$(TESTAPP_DIR)/cm_cycles: tests/apps/cm_cycles.c $(RDMACM_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $< -o $@ -pthread -L$(HOSTLIB_DIR) -lrdmacm $(HOSTLIB_LINK)

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
$(FUZZ_RX): tests/fuzz/fuzz_rx.c $(RX_SRCS) $(COMMON_SRCS) hw/kernels/rx/rx.h hw/kernels/rx/rx_int.h $(KERNEL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Wno-unknown-pragmas -fsanitize=address,undefined -fno-sanitize-recover=all \
		-Ihw/kernels/common -Ihw/kernels/rx -I$(SPEC_INC) -I$(KERNEL_GEN) $< $(RX_SRCS) $(COMMON_SRCS) -o $@

.PHONY: fuzz-build
fuzz-build: $(FUZZ_RX)
ALL_TARGETS += fuzz-build

# The table check's build of the kernels (tests/tblchk/tblchk.c): every access of the kernels'
# code reported to it (gcc -fsanitize=kernel-address, a call per access), their memories mapped by
# scripts/mem_budget.py, their step functions renamed so that the check marks each clock; the DPI
# glue as it is. kernel_tb.py takes it with RNIC_KERNELS_LIB (make tblchk). tblchk_kernels builds
# one into $(1) with the kernels' sizes changed by the flags $(2) (the memories still those of the
# default build).
TBLCHK := $(BUILD)/tblchk
TBLCHK_LIB := $(TBLCHK)/libkernels.so
TBLCHK_FLAGS := -fsanitize=kernel-address --param asan-instrumentation-with-call-threshold=0 \
	--param asan-stack=0 --param asan-globals=0 $(foreach k,tx rx cq,-Drnic_$(k)_step=rnic_$(k)_step_k)
define tblchk_kernels
$(1)/tblchk_map.h: scripts/mem_budget.py $$(KERNEL_HDRS) $$(wildcard hw/kernels/*/*.h)
	@mkdir -p $$(dir $$@)
	$$(PY) scripts/mem_budget.py --c-map $(2) > $$@.tmp && mv $$@.tmp $$@
$(1)/libkernels.a: tests/tblchk/tblchk.c $(1)/tblchk_map.h $$(KERNEL_SRCS) $$(KERNEL_HDRS) $$(wildcard hw/kernels/*/*.h)
	rm -rf $(1)/obj && mkdir -p $(1)/obj
	set -e; for f in $$(TX_SRCS) $$(RX_SRCS) $$(CQ_SRCS) $$(COMMON_SRCS); do \
		$$(CC) $$(KERNEL_CFLAGS) $$(addprefix -Ihw/kernels/,tx rx cq) $$(TBLCHK_FLAGS) $(2) -c $$$$f \
			-o $(1)/obj/$$$$(basename $$$$f .c).o; done
	$$(CC) $$(KERNEL_CFLAGS) -I$(1) $$(addprefix -Ihw/kernels/,tx rx cq) $(2) -c tests/tblchk/tblchk.c \
		-o $(1)/obj/tblchk.o
	rm -f $$@ && ar rcs $$@ $(1)/obj/*.o
endef
$(eval $(call tblchk_kernels,$(TBLCHK),))
$(TBLCHK_LIB): $(TBLCHK)/libkernels.a
	$(CC) $(KERNEL_CFLAGS) -shared -o $@ $(filter %_dpi.c,$(KERNEL_SRCS)) -Wl,--whole-archive $< -Wl,--no-whole-archive
# the simulator's own objects but rnic_sim.o (the kernels are outside the Verilated model), for
# builds with kernels of their own
SIM_OBJS := $(addprefix $(SIM_DIR)/obj/,host.o eth.o verilated.o verilated_dpi.o verilated_threads.o Vrnic_top__ALL.a)
$(TBLCHK)/sim/rnic-sim: $(SIM_BIN) $(TBLCHK)/libkernels.a
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $(SIM_DIR)/obj/rnic_sim.o $(SIM_OBJS) $(TBLCHK)/libkernels.a -pthread -latomic

# rnic-sim with a QPC cache of two lines (RX_QC_LOG=1), TLBs of four lines (RNIC_TLB_LOG=2), MPT
# caches of two (RNIC_MPT_LOG=1) and the table check: with four QPs, frames miss and evict each
# other's contexts mid-message all the time, and over scattered host pages each page's
# translation and each key's entry too (tests/test_transport.py); the
# caches' memories are checked as block RAMs under it. The Verilated model is the simulator's
# own; the kernels and rnic_sim.cpp (which holds their state) are built again.
QC2 := $(BUILD)/qc2
QC2_FLAGS := -DRX_QC_LOG=1 -DRNIC_TLB_LOG=2 -DRNIC_MPT_LOG=1
$(eval $(call tblchk_kernels,$(QC2),$(QC2_FLAGS)))
$(QC2)/sim/rnic-sim: $(SIM_BIN) $(QC2)/libkernels.a sim/rnic_sim.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -faligned-new -I$(SIM_DIR)/obj -I/usr/share/verilator/include \
		-I/usr/share/verilator/include/vltstd -DVM_COVERAGE=0 -DVM_SC=0 -DVM_TRACE=0 -DVM_TRACE_FST=0 \
		-DVM_TRACE_VCD=0 -I$(SPEC_INC) $(addprefix -I$(ROOT)/hw/kernels/,common tx rx cq) $(QC2_FLAGS) \
		-c sim/rnic_sim.cpp -o $(QC2)/rnic_sim.o
	$(CXX) -o $@ $(QC2)/rnic_sim.o $(SIM_OBJS) $(QC2)/libkernels.a -pthread -latomic
ALL_TARGETS += $(QC2)/sim/rnic-sim

# the kernels' cycle tests (tests/test_tblchk.py: make test), then two simulators under traffic
.PHONY: tblchk-kernels tblchk
tblchk-kernels: $(TBLCHK_LIB) $(KERNEL_LIB)
	RNIC_KERNELS_LIB=$(TBLCHK_LIB) RNIC_TBLCHK_REPORT=$(TBLCHK)/report.txt $(PY) -m pytest -q -p no:cacheprovider \
		tests/test_kernels.py -k "not crc"
	cat $(TBLCHK)/report.txt
tblchk: tblchk-kernels $(TBLCHK)/sim/rnic-sim
	RNIC_SIM=$(TBLCHK)/sim/rnic-sim $(PY) sim/transport.py tblchk

# The soft core alone (rnic_soc) under Verilator, running an attack firmware booted by the NIC
# firmware's own start.S and link.ld (tests/soc_tb, tests/test_fw_guard.py). The image is read when
# the testbench starts: a new one needs no new testbench.
SOC_TB := $(BUILD)/soc_tb
$(SOC_TB)/attack.elf: tests/soc_tb/attack.c firmware/src/start.S firmware/src/link.ld $(SPEC_INC)/rnic_spec.h \
		firmware/firmware.mk
	@mkdir -p $(dir $@)
	$(FW_CC) $(FW_BASE_CFLAGS) firmware/src/start.S $< -lgcc -o $@
$(SOC_TB)/tb_soc: tests/soc_tb/tb_soc.cpp tests/card_tb/tb_check.h $(SPEC_INC)/rnic_spec_pkg.sv $(SPEC_INC)/rnic_spec.h \
		hw/rtl/rnic_soc.sv $(RTL_VLT)
	@mkdir -p $(dir $@)
	verilator --cc --exe --build -j 2 -O2 $(VERILATOR_FLAGS) --top-module rnic_soc -GFW_HEX='"$(SOC_TB)/attack.hex"' \
		$(SPEC_INC)/rnic_spec_pkg.sv $(PICORV32_V) $(ROOT)/hw/rtl/rnic_soc.sv $(ROOT)/tests/soc_tb/tb_soc.cpp \
		-CFLAGS "-I$(SPEC_INC) -I$(ROOT)/tests/card_tb" -Mdir $(SOC_TB)/obj -o $@

.PHONY: soc-tb
soc-tb: $(SOC_TB)/tb_soc $(SOC_TB)/attack.hex
ALL_TARGETS += soc-tb
