# Alveo U280 (xcu280-fsvh2892-2L-e): the pins of rnic_card_top. Pin facts: Xilinx's board files
# (au280 part0_pins.xml), as Corundum (fpga/mqnic/Alveo/fpga_100g/fpga_au280.xdc) and open-nic-shell
# (constr/au280/pins.xdc) also give them. The GT lanes are the IP's to place: the XDMA's from the
# board interface pci_express_x16, the CMAC's from its CMAC_CORE_SELECT and GT_GROUP_SELECT
# (board.conf).

# PCIe: 100 MHz reference on MGTREFCLK0 of GTY quad 225 (x16), PERST# in a 1.8 V bank
set_property PACKAGE_PIN AR15 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AR14 [get_ports pcie_refclk_n]
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN BH26 IOSTANDARD LVCMOS18 PULLUP TRUE} [get_ports pcie_perst_n]

# QSFP0 (GTY bank 134): 156.25 MHz reference from the SI570 on MGTREFCLK0 (board interface
# qsfp0_156mhz; the SI546's 161.13 MHz on MGTREFCLK1 needs its OE and FS pins driven)
set_property PACKAGE_PIN T42 [get_ports qsfp_refclk_p]
set_property PACKAGE_PIN T43 [get_ports qsfp_refclk_n]
create_clock -period 6.400 -name qsfp_refclk [get_ports qsfp_refclk_p]

# the 100 MHz board clock (sysclk0, SI53340), free running from power-up
set_property -dict {PACKAGE_PIN BJ43 IOSTANDARD LVDS} [get_ports sysclk_p]
set_property -dict {PACKAGE_PIN BJ44 IOSTANDARD LVDS} [get_ports sysclk_n]
create_clock -period 10.000 -name sysclk [get_ports sysclk_p]

# HBM_CATTRIP to the card's satellite controller: high (or floating) makes it cut the card's
# power; no HBM here, so it is driven low, and pulled low until the FPGA is configured
# (open-nic-shell constr/au280/pins.xdc, "Fix the CATTRIP issue for custom flow")
set_property -dict {PACKAGE_PIN D32 IOSTANDARD LVCMOS18 PULLDOWN TRUE} [get_ports hbm_cattrip]
