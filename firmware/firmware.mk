# Firmware for the RV32IM soft core (Debian's riscv64-unknown-elf-gcc), and its logic built for
# the host with a fake HAL for the unit tests.
FW_DIR := $(BUILD)/fw
FW_SRCS := $(addprefix firmware/src/,start.S main.c fw.c alloc.c icm.c neigh.c cm.c cm_id.c gsi.c prf.c util.c mem.c hal_rv.c)
FW_HDRS := firmware/src/fw.h firmware/src/cm.h firmware/src/hal.h firmware/src/prf.h $(SPEC_INC)/rnic_spec.h hw/kernels/common/rnic_frame.h
FW_CC := riscv64-unknown-elf-gcc
# the RAM's size from the spec (link.ld's LENGTH)
FW_RAM_SIZE = $(shell sed -n 's/^\#define RNIC_FW_RAM_SIZE \(0x[0-9a-f]*\)u.*/\1/p' $(SPEC_INC)/rnic_spec.h)
# -O2, not -Os: the soft core takes several clocks an instruction, and a connection's commands
# run a fifth faster (the image has room: 39 KB of code in 256 KiB)
FW_CFLAGS := -march=rv32im -mabi=ilp32 -O2 -ffreestanding -nostdlib -nostartfiles -Wall -Wextra -Werror \
	-std=gnu11 -Wno-unknown-pragmas -I$(SPEC_INC) -Ifirmware/src -Ihw/kernels/common -Wl,--no-warn-rwx-segments \
	-Wl,--defsym=__fw_ram_size=$(FW_RAM_SIZE) -Wl,-T,firmware/src/link.ld
FW_HEX := $(FW_DIR)/rnic-fw.hex

$(FW_DIR)/rnic-fw.elf: $(FW_SRCS) $(FW_HDRS) firmware/src/link.ld firmware/firmware.mk
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
FW_LOGIC := firmware/src/fw.c firmware/src/alloc.c firmware/src/icm.c firmware/src/neigh.c firmware/src/cm.c firmware/src/cm_id.c firmware/src/gsi.c firmware/src/prf.c firmware/src/util.c
FW_TEST := $(FW_DIR)/test_fw
FW_TEST_SRCS := firmware/tests/test_fw.c firmware/tests/fuzz_cm.c firmware/tests/fake_hal.c
$(FW_TEST): $(FW_TEST_SRCS) firmware/tests/fake_hal.h firmware/tests/fuzz_cm.h $(FW_LOGIC) $(FW_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Wno-unknown-pragmas -I$(SPEC_INC) -Ifirmware/src -Ihw/kernels/common \
		$(FW_TEST_SRCS) $(FW_LOGIC) -o $@

# the same with ASan and UBSan, for its command fuzzer (make fuzz)
FW_TEST_ASAN := $(FW_DIR)/test_fw_asan
$(FW_TEST_ASAN): $(FW_TEST_SRCS) firmware/tests/fake_hal.h firmware/tests/fuzz_cm.h $(FW_LOGIC) $(FW_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Wno-unknown-pragmas -fsanitize=address,undefined -fno-sanitize-recover=all \
		-I$(SPEC_INC) -Ifirmware/src -Ihw/kernels/common $(FW_TEST_SRCS) $(FW_LOGIC) -o $@

.PHONY: fw-test
fw-test: $(FW_TEST) $(FW_TEST_ASAN)
ALL_TARGETS += fw-test
