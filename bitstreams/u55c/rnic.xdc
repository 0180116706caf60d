# Alveo U55C (xcu55c-fsvh2892-2L-e): the pins of rnic_card_top. Pin facts: open-nic-shell
# (constr/au55c/pins.xdc and its au55c board files), Corundum (fpga/mqnic/Alveo/.../fpga_au55.xdc,
# "Alveo U55C/Alveo U55N/Varium C1100"). The GT lanes are the IP's to place: the XDMA's from the
# board interface pci_express_x16, the CMAC's from its CMAC_CORE_SELECT and GT_GROUP_SELECT
# (board.conf).

# PCIe: 100 MHz reference on MGTREFCLK0 of GTY quad 225 (x16), PERST# in a 1.8 V bank
set_property PACKAGE_PIN AR15 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AR14 [get_ports pcie_refclk_n]
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN BF41 IOSTANDARD LVCMOS18 PULLUP TRUE} [get_ports pcie_perst_n]

# QSFP0 (GTY bank 130): 161.1328125 MHz from the SI5394 (OUT0), the only QSFP reference this card has
set_property PACKAGE_PIN AD42 [get_ports qsfp_refclk_p]
set_property PACKAGE_PIN AD43 [get_ports qsfp_refclk_n]
create_clock -period 6.206 -name qsfp_refclk [get_ports qsfp_refclk_p]

# a 100 MHz board clock (SI5394 OUT2 clk_100mhz_1), free running from power-up
set_property -dict {PACKAGE_PIN BK43 IOSTANDARD LVDS} [get_ports sysclk_p]
set_property -dict {PACKAGE_PIN BK44 IOSTANDARD LVDS} [get_ports sysclk_n]
create_clock -period 10.000 -name sysclk [get_ports sysclk_p]

# HBM_CATTRIP to the card's satellite controller: high (or floating) makes it cut the card's
# power; no HBM here, so it is driven low, and pulled low until the FPGA is configured
# (open-nic-shell constr/au55c/pins.xdc; AMD AR 72926)
set_property -dict {PACKAGE_PIN BE45 IOSTANDARD LVCMOS18 PULLDOWN TRUE} [get_ports hbm_cattrip]
