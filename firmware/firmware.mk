# Firmware for the RV32IM soft core (Debian's riscv64-unknown-elf-gcc), and its logic built for
# the host with a fake HAL for the unit tests.
FW_DIR := $(BUILD)/fw
FW_SRCS := $(addprefix firmware/src/,start.S main.c fw.c util.c mem.c hal_rv.c)
FW_HDRS := firmware/src/fw.h firmware/src/hal.h $(SPEC_INC)/rnic_spec.h
FW_CC := riscv64-unknown-elf-gcc
FW_CFLAGS := -march=rv32im -mabi=ilp32 -Os -ffreestanding -nostdlib -nostartfiles -Wall -Wextra -Werror \
	-std=gnu11 -I$(SPEC_INC) -Ifirmware/src -Wl,--no-warn-rwx-segments -Wl,-T,firmware/src/link.ld
FW_HEX := $(FW_DIR)/rnic-fw.hex

$(FW_DIR)/rnic-fw.elf: $(FW_SRCS) $(FW_HDRS) firmware/src/link.ld
	@mkdir -p $(dir $@)
	$(FW_CC) $(FW_CFLAGS) $(FW_SRCS) -lgcc -o $@

$(FW_DIR)/rnic-fw.bin: $(FW_DIR)/rnic-fw.elf
	riscv64-unknown-elf-objcopy -O binary $< $@
	truncate -s %4 $@

$(FW_HEX): $(FW_DIR)/rnic-fw.bin
	od -An -v -tx4 -w4 $< | sed 's/^ //' > $@


.PHONY: fw
fw: $(FW_HEX)
ALL_TARGETS += fw

# the firmware's logic on the host, with a fake HAL (firmware/tests)
FW_TEST := $(FW_DIR)/test_fw
$(FW_TEST): firmware/tests/test_fw.c firmware/src/fw.c firmware/src/util.c $(FW_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -I$(SPEC_INC) -Ifirmware/src firmware/tests/test_fw.c firmware/src/fw.c \
		firmware/src/util.c -o $@

# the same with ASan and UBSan, for its command fuzzer (make fuzz)
FW_TEST_ASAN := $(FW_DIR)/test_fw_asan
$(FW_TEST_ASAN): firmware/tests/test_fw.c firmware/src/fw.c firmware/src/util.c $(FW_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -fsanitize=address,undefined -fno-sanitize-recover=all -I$(SPEC_INC) -Ifirmware/src \
		firmware/tests/test_fw.c firmware/src/fw.c firmware/src/util.c -o $@

.PHONY: fw-test
fw-test: $(FW_TEST) $(FW_TEST_ASAN)
ALL_TARGETS += fw-test
