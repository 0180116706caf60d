# The card image: HLS kernels (Vitis HLS), RTL, soft core with its firmware, 100G CMAC and PCIe
# DMA (Vivado, batch mode), and the flash image; then flashing with XRT's xbflash.qspi.
#   make bitstream BOARD=u280 [MAC=02:00:00:00:00:01] [IPV4=10.0.0.1]
#                                    build/bitstreams/u280/rnic_u280.{bit,mcs}
#   make flash BOARD=u280 [BDF=0000:3b:00.0] [DRY_RUN=1]
# Nothing here has run with Vivado or on a card: see docs/ARCHITECTURE.md, "On a card". The RTL's
# synthesizability is checked here with Yosys (make synth), the HLS C with tests/hls_lint.py.
BOARDS := u250 u280 u55c
BITSTREAM_DIR := $(BUILD)/bitstreams
PCI_FIND := $(BITSTREAM_DIR)/rnic-pci-find

$(PCI_FIND): bitstreams/tools/rnic_pci_find.c $(SPEC_INC)/rnic_spec.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -I$(SPEC_INC) $< -o $@ -lpci

.PHONY: bitstream flash pci-find
pci-find: $(PCI_FIND)
ALL_TARGETS += pci-find

bitstream: $(FW_HEX) $(KERNEL_GEN)/rnic_icrc_seed.h
	@case " $(BOARDS) " in *" $(BOARD) "*) ;; *) echo "bitstream: BOARD must be one of: $(BOARDS)" >&2; exit 2;; esac
	@command -v vivado >/dev/null || { echo "bitstream: vivado is not on PATH. The flows need AMD Vivado and Vitis HLS 2023.2-2024.2 (vitis_hls) or 2025.1+ (v++ -c --mode hls), with the board files of the Alveo $(BOARD); source their settings64.sh first." >&2; exit 2; }
	@command -v vitis_hls >/dev/null || command -v v++ >/dev/null || { echo "bitstream: neither vitis_hls nor v++ is on PATH (Vitis HLS synthesizes hw/kernels)" >&2; exit 2; }
	bash bitstreams/common/build.sh $(BOARD) $(BITSTREAM_DIR)/$(BOARD) $(BUILD_ID) $(FW_HEX) $(BUILD_TIME) \
		$(or $(MAC),02:00:00:00:00:01) $(or $(IPV4),10.0.0.1)

flash: $(PCI_FIND)
	@case " $(BOARDS) " in *" $(BOARD) "*) ;; *) echo "flash: BOARD must be one of: $(BOARDS)" >&2; exit 2;; esac
	bash bitstreams/common/flash.sh $(if $(DRY_RUN),--dry-run) --image $(BITSTREAM_DIR)/$(BOARD)/rnic_$(BOARD).mcs \
		--find $(PCI_FIND) $(if $(BDF),--bdf $(BDF))
