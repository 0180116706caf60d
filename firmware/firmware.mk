# Firmware for the RV32IM soft core (Debian's riscv64-unknown-elf-gcc), and its logic built for
# the host with a fake HAL for the unit tests.
FW_DIR := $(BUILD)/fw
FW_SRCS := $(addprefix firmware/src/,start.S main.c fw.c alloc.c icm.c neigh.c cm.c cm_answer.c cm_id.c gsi.c prf.c util.c mem.c hal_rv.c)
FW_HDRS := firmware/src/fw.h firmware/src/cm.h firmware/src/hal.h firmware/src/prf.h $(SPEC_INC)/rnic_spec.h hw/kernels/common/rnic_frame.h
FW_CC := riscv64-unknown-elf-gcc
# a constant of the spec as a number link.ld and start.S can take (the header's carry a 'u')
fw_spec = $(shell sed -n 's/^\#define RNIC_$(1) \(0x[0-9a-f]*\)u.*/\1/p' $(SPEC_INC)/rnic_spec.h)
# link.ld and start.S: the RAM's size, the guard band, the stack's paint, the registers the boot
# code writes (shared with the soft-core testbench's attack firmware, tests/tests.mk)
FW_LDFLAGS := -Wl,--no-warn-rwx-segments -Wl,-T,firmware/src/link.ld \
	-Wl,--defsym=__fw_ram_size=$(call fw_spec,FW_RAM_SIZE) \
	-Wl,--defsym=__stack_guard_bytes=$(call fw_spec,STACK_GUARD_BYTES) \
	-Wl,--defsym=__stack_paint=$(call fw_spec,STACK_PAINT) \
	-Wl,--defsym=__fw_reg_code_end=$(call fw_spec,FW_REG_BASE)+$(call fw_spec,FW_CODE_END) \
	-Wl,--defsym=__fw_reg_stack_guard=$(call fw_spec,FW_REG_BASE)+$(call fw_spec,FW_STACK_GUARD)
# -O2, not -Os: the soft core takes several clocks an instruction, and a connection's commands
# run a fifth faster (the image has room: 47 KB of code in 256 KiB). A canary in every frame with
# an array or an address taken (main.c: __stack_chk_guard); each function's frame and calls
# (rnic-fw.elf-*.su and .ci) for the stack's measure (tests/test_firmware.py).
FW_BASE_CFLAGS := -march=rv32im -mabi=ilp32 -O2 -ffreestanding -nostdlib -nostartfiles -Wall -Wextra -Werror \
	-std=gnu11 -I$(SPEC_INC) $(FW_LDFLAGS)
FW_CFLAGS := $(FW_BASE_CFLAGS) -Wno-unknown-pragmas -fstack-protector-strong -fstack-usage -fcallgraph-info=su \
	-Ifirmware/src -Ihw/kernels/common
FW_HEX := $(FW_DIR)/rnic-fw.hex

$(FW_DIR)/rnic-fw.elf: $(FW_SRCS) $(FW_HDRS) firmware/src/link.ld firmware/firmware.mk
	@mkdir -p $(dir $@)
	rm -f $@-*.su $@-*.ci
	$(FW_CC) $(FW_CFLAGS) $(FW_SRCS) -lgcc -o $@

# an image as the RAM takes it (rnic_soc's FW_HEX): one 32-bit word a line
$(BUILD)/%.bin: $(BUILD)/%.elf
	riscv64-unknown-elf-objcopy -O binary $< $@
	truncate -s %4 $@

$(BUILD)/%.hex: $(BUILD)/%.bin
	od -An -v -tx4 -w4 $< | sed 's/^ //' > $@


.PHONY: fw
fw: $(FW_HEX) $(FW_DIR)/rnic-fw.bin
ALL_TARGETS += fw

# the firmware's logic on the host, with a fake HAL (firmware/tests), its frames checked by glibc's
# stack protector as the soft core's are by main.c's
FW_LOGIC := firmware/src/fw.c firmware/src/alloc.c firmware/src/icm.c firmware/src/neigh.c firmware/src/cm.c firmware/src/cm_answer.c firmware/src/cm_id.c firmware/src/gsi.c firmware/src/prf.c firmware/src/util.c
FW_TEST := $(FW_DIR)/test_fw
FW_TEST_SRCS := firmware/tests/test_fw.c firmware/tests/fuzz_cm.c firmware/tests/fake_hal.c
$(FW_TEST): $(FW_TEST_SRCS) firmware/tests/fake_hal.h firmware/tests/fuzz_cm.h $(FW_LOGIC) $(FW_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Wno-unknown-pragmas -fstack-protector-strong -I$(SPEC_INC) -Ifirmware/src \
		-Ihw/kernels/common $(FW_TEST_SRCS) $(FW_LOGIC) -o $@

# the same with ASan and UBSan, for its command fuzzer (make fuzz)
FW_TEST_ASAN := $(FW_DIR)/test_fw_asan
$(FW_TEST_ASAN): $(FW_TEST_SRCS) firmware/tests/fake_hal.h firmware/tests/fuzz_cm.h $(FW_LOGIC) $(FW_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Wno-unknown-pragmas -fsanitize=address,undefined -fno-sanitize-recover=all \
		-I$(SPEC_INC) -Ifirmware/src -Ihw/kernels/common $(FW_TEST_SRCS) $(FW_LOGIC) -o $@

.PHONY: fw-test
fw-test: $(FW_TEST) $(FW_TEST_ASAN)
ALL_TARGETS += fw-test
