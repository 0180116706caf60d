# HLS C kernels, built for the host: libkernels.a for rnic-sim (DPI-C), libkernels.so for the
# Python cycle-by-cycle tests (same DPI-C entry points through ctypes).
# The ICRC's seed is generated (icrc_seed.py) into KERNEL_GEN, which every build of the
# kernels puts on its include path.
KERNEL_GEN := $(BUILD)/kernels/gen
# on x86, the CRC's carry-less multiply for the simulator and the tests (rnic_crc.c); nothing newer,
# so that valgrind still runs them
KERNEL_ISA := $(if $(filter x86_64,$(shell uname -m)),-mpclmul -msse4.1)
KERNEL_CFLAGS := $(CFLAGS_COMMON) $(KERNEL_ISA) -Wno-unknown-pragmas -fPIC \
	-I$(ROOT)/hw/kernels/common -I$(SPEC_INC) -I$(KERNEL_GEN) -I/usr/share/verilator/include/vltstd
# what more than one kernel is built from: the CRC, the ICRC's stages
COMMON_SRCS := hw/kernels/common/rnic_crc.c hw/kernels/common/rnic_icrc.c
KERNEL_SRCS := $(COMMON_SRCS)
KERNEL_HDRS := hw/kernels/common/rnic_kernel.h hw/kernels/common/rnic_frame.h hw/kernels/common/rnic_crc_clmul.h \
	hw/kernels/common/rnic_fifo.h hw/kernels/common/rnic_icrc.h $(SPEC_INC)/rnic_spec.h $(SPEC_INC)/rnic_ports.h \
	$(KERNEL_GEN)/rnic_icrc_seed.h

$(KERNEL_GEN)/rnic_icrc_seed.h: hw/kernels/common/icrc_seed.py
	@mkdir -p $(dir $@)
	python3 $< $@

include hw/kernels/tx/tx.mk
include hw/kernels/rx/rx.mk
include hw/kernels/cq/cq.mk

KERNEL_OBJS := $(patsubst %.c,$(BUILD)/kernels/%.o,$(KERNEL_SRCS))
KERNEL_LIB := $(BUILD)/kernels/libkernels.a
KERNEL_SO := $(BUILD)/kernels/libkernels.so

$(BUILD)/kernels/%.o: %.c $(KERNEL_HDRS) $(wildcard hw/kernels/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_CFLAGS) -c $< -o $@

$(KERNEL_LIB): $(KERNEL_OBJS)
	rm -f $@
	ar rcs $@ $^

$(KERNEL_SO): $(KERNEL_OBJS)
	$(CC) -shared -o $@ $^

.PHONY: kernels
kernels: $(KERNEL_LIB) $(KERNEL_SO)
ALL_TARGETS += kernels
