# RTL sources of rnic_top. PicoRV32 comes from the PyPI package pythondata-cpu-picorv32 (the
# venv), never from the tree.
PICORV32_V = $(shell $(PY) -c 'import pythondata_cpu_picorv32 as p; print(p.data_location)')/picorv32.v
RTL_TOP := rnic_top
# the three kernel wrappers are generated from the spec (spec/gen/rnic_<k>_kernel.sv)
RTL_SRCS = $(SPEC_INC)/rnic_spec_pkg.sv $(PICORV32_V) \
	$(addprefix $(SPEC_INC)/,rnic_tx_kernel.sv rnic_rx_kernel.sv rnic_cq_kernel.sv) \
	$(addprefix $(ROOT)/hw/rtl/,rnic_fifo.sv rnic_pkt_arb.sv rnic_bar0.sv rnic_soc.sv rnic_top.sv)
RTL_VLT := $(ROOT)/hw/rtl/picorv32.vlt
VERILATOR_FLAGS := --timescale 1ns/1ps -Wno-fatal $(RTL_VLT)

.PHONY: rtl-lint
rtl-lint:
	verilator --lint-only -Wall --timescale 1ns/1ps $(RTL_VLT) --top-module $(RTL_TOP) $(RTL_SRCS)

ALL_TARGETS += rtl-lint
