# Alveo U250 (xcu250-figd2104-2L-e): the pins of rnic_card_top. Pin facts: Xilinx's board files
# (au250 1.3 part0_pins.xml), as Corundum (fpga/mqnic/Alveo/fpga_100g/fpga_au200.xdc, "AU200/AU250")
# and open-nic-shell (constr/au250/pins.xdc) also give them. The GT lanes are the IP's to place:
# the XDMA's from the board interface pci_express_x16, the CMAC's from its CMAC_CORE_SELECT and
# GT_GROUP_SELECT (board.conf).

# PCIe: 100 MHz reference on MGTREFCLK0 of GTY quad 226, PERST# in a 1.2 V bank
set_property PACKAGE_PIN AM11 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AM10 [get_ports pcie_refclk_n]
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN BD21 IOSTANDARD LVCMOS12 PULLUP TRUE} [get_ports pcie_perst_n]

# QSFP0 (GTY bank 231): 156.25 MHz reference from the SI570 on MGTREFCLK0 (board interface
# qsfp0_156mhz; the SI5335's 161.13 MHz on MGTREFCLK1 needs its FS pins driven)
set_property PACKAGE_PIN M11 [get_ports qsfp_refclk_p]
set_property PACKAGE_PIN M10 [get_ports qsfp_refclk_n]
create_clock -period 6.400 -name qsfp_refclk [get_ports qsfp_refclk_p]

# the 300 MHz board clock (default_300mhz_clk0, the DDR4 C0 reference), free running from power-up
set_property -dict {PACKAGE_PIN AY37 IOSTANDARD LVDS} [get_ports sysclk_p]
set_property -dict {PACKAGE_PIN AY38 IOSTANDARD LVDS} [get_ports sysclk_n]
create_clock -period 3.333 -name sysclk [get_ports sysclk_p]
