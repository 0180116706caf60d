# rnic-sim: the Verilated rnic_top with its C++ models of the PCIe and Ethernet surroundings. It
# steps the kernels itself (RNIC_KERNELS_OUTSIDE): rnic_top's kernel ports become its own.
SIM_DIR := $(BUILD)/sim
SIM_BIN := $(SIM_DIR)/rnic-sim
SIM_SRCS := $(addprefix $(ROOT)/sim/,rnic_sim.cpp host.cpp eth.cpp)

# $(call verilate_sim,BINARY,KERNELS_LIBRARY): rnic-sim with that build of the kernels
define verilate_sim
	@mkdir -p $(dir $(1))
	@# Verilator's own make does not relink when only the kernels library changed
	rm -f $(1)
	verilator --cc --exe --build -O3 -j 2 $(VERILATOR_FLAGS) +define+RNIC_KERNELS_OUTSIDE --top-module $(RTL_TOP) \
		-Mdir $(dir $(1))obj -o $(1) \
		-GFW_HEX='"$(FW_HEX)"' -GBUILD_ID=32\'h$(BUILD_ID) -GBUILD_TIME=$(BUILD_TIME) \
		-CFLAGS "-std=c++17 -I$(SPEC_INC) $(addprefix -I$(ROOT)/hw/kernels/,common tx rx cq)" -MAKEFLAGS "OPT_FAST=-O3 OPT_GLOBAL=-O2" \
		$(RTL_SRCS) $(SIM_SRCS) $(2)
endef

$(SIM_BIN): $(SIM_SRCS) $(wildcard sim/*.h) $(RTL_SRCS) $(KERNEL_LIB) $(KERNEL_HDRS) $(FW_HEX)
	$(call verilate_sim,$(SIM_BIN),$(KERNEL_LIB))

# rnic-card-sim: the card's RTL (rnic_card: AXI4 DMA, user interrupts, the frame FIFOs to the MAC's
# 322.27 MHz clock) around rnic_top, with models of the XDMA bridge and the CMAC (sim/card_models.h)
CARD_SIM_BIN := $(SIM_DIR)/card/rnic-card-sim
$(CARD_SIM_BIN): $(SIM_SRCS) $(wildcard sim/*.h) $(CARD_SRCS) $(KERNEL_LIB) $(KERNEL_HDRS) $(FW_HEX)
	@mkdir -p $(dir $@)
	rm -f $@
	verilator --cc --exe --build -O3 -j 2 $(VERILATOR_FLAGS) +define+RNIC_KERNELS_OUTSIDE --top-module $(CARD_TOP) \
		-Mdir $(dir $@)obj -o $@ \
		-GFW_HEX='"$(FW_HEX)"' -GBUILD_ID=32\'h$(BUILD_ID) -GBUILD_TIME=$(BUILD_TIME) \
		-CFLAGS "-std=c++17 -DRNIC_CARD -I$(ROOT)/sim -I$(SPEC_INC) $(addprefix -I$(ROOT)/hw/kernels/,common tx rx cq)" \
		-MAKEFLAGS "OPT_FAST=-O3 OPT_GLOBAL=-O2" $(CARD_SRCS) $(SIM_SRCS) $(KERNEL_LIB)

.PHONY: sim
sim: $(SIM_BIN) $(CARD_SIM_BIN)
ALL_TARGETS += sim

# The VMs (sim/qemu, issue 17): QEMU 7.2 with the rnic-pci device (built once per source version and
# device, in ~/.cache/rnic) and the guest's kernel and initramfs; their paths in one file
VM_PATHS := $(BUILD)/vm/paths.json
$(VM_PATHS): $(addprefix sim/qemu/,build.sh rnic_pci.c rnic.mak guest.py init.sh) $(SPEC_INC)/rnic_spec.h \
		$(KMOD_STAMP) $(HOSTLIB_SO) $(RDMACM_SO) $(BUILD)/tests/kmod_ioctls $(HOSTLIB_DIR)/rnic-stat
	@mkdir -p $(dir $@)
	q=$$(bash sim/qemu/build.sh) && g=($$($(PY) sim/qemu/guest.py)) && \
	  printf '{"qemu": "%s", "kernel": "%s", "initrd": "%s"}\n' "$$q" "$${g[0]}" "$${g[1]}" > $@.tmp && mv $@.tmp $@

.PHONY: vm
vm: $(VM_PATHS)
ALL_TARGETS += vm
