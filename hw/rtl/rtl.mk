# RTL sources of rnic_top. PicoRV32 comes from the PyPI package pythondata-cpu-picorv32 (the
# venv), never from the tree.
PICORV32_V = $(shell $(PY) -c 'import pythondata_cpu_picorv32 as p; print(p.data_location)')/picorv32.v
RTL_TOP := rnic_top
# the three kernel wrappers are generated from the spec (spec/gen/rnic_<k>_kernel.sv)
RTL_SRCS = $(SPEC_INC)/rnic_spec_pkg.sv $(PICORV32_V) \
	$(addprefix $(SPEC_INC)/,rnic_tx_kernel.sv rnic_rx_kernel.sv rnic_cq_kernel.sv) \
	$(addprefix $(ROOT)/hw/rtl/,rnic_fifo.sv rnic_bram_fifo.sv rnic_pkt_arb.sv rnic_eth_port.sv rnic_bar0.sv rnic_soc.sv \
	rnic_top.sv)
# the card's top: rnic_top, its DMA on an AXI4 master, its MSI-X as the PCIe bridge's interrupts
CARD_TOP := rnic_card
CARD_SRCS = $(RTL_SRCS) $(addprefix $(ROOT)/hw/rtl/,rnic_dma_axi.sv rnic_irq_usr.sv rnic_frame_cdc.sv rnic_bar_bridge.sv) \
	$(ROOT)/bitstreams/common/rnic_card.sv
RTL_VLT := $(ROOT)/hw/rtl/picorv32.vlt
VERILATOR_FLAGS := --timescale 1ns/1ps -Wno-fatal $(RTL_VLT)

# lint again only when a source changed (a stamp records the last clean run)
RTL_LINT_STAMP := $(BUILD)/rtl/lint.stamp
$(RTL_LINT_STAMP): $(CARD_SRCS) $(RTL_VLT)
	verilator --lint-only -Wall --timescale 1ns/1ps $(RTL_VLT) --top-module $(RTL_TOP) $(RTL_SRCS)
	verilator --lint-only -Wall --timescale 1ns/1ps $(RTL_VLT) --top-module $(CARD_TOP) $(CARD_SRCS)
	@mkdir -p $(dir $@)
	@touch $@

.PHONY: rtl-lint
rtl-lint: $(RTL_LINT_STAMP)

ALL_TARGETS += rtl-lint

# the card image's top: rnic_card with the board's pins and the vendor IP (bitstreams/common/vendor_ip.toml)
CARD_IMAGE_TOP := rnic_card_top
CARD_IMAGE_SRCS = $(CARD_SRCS) $(ROOT)/bitstreams/common/rnic_card_top.sv
VENDOR_IP := $(ROOT)/bitstreams/common/vendor_ip.toml

# Synthesizability check: Yosys synth_xilinx for UltraScale+ over all of the card image's RTL, the vendor IP as black boxes,
# `check -assert` and a resource table (figures in build/synth/resources.json), made again when a source changed. Not in
# `all`: it takes minutes; `make test` builds it beside `all` (tests/test_synth.py reads it).
SYNTH_TABLE := $(BUILD)/synth/table.txt
$(SYNTH_TABLE): $(CARD_IMAGE_SRCS) $(VENDOR_IP) $(ROOT)/hw/synth/yosys_synth.py
	@mkdir -p $(dir $@)
	$(PY) hw/synth/yosys_synth.py --top $(CARD_IMAGE_TOP) --blackboxes $(VENDOR_IP) --out $(BUILD)/synth \
		$(CARD_IMAGE_SRCS) > $@.tmp
	@mv $@.tmp $@

.PHONY: synth
synth: $(SYNTH_TABLE)
	@cat $<
