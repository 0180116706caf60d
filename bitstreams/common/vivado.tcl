# The card image in Vivado batch mode: vivado -mode batch -source vivado.tcl -tclargs ROOT BOARD OUT \
#   BUILD_ID BUILD_TIME FW_HEX MAC_HEX IPV4_HEX
# BOARD's facts come from bitstreams/BOARD/board.conf (board.sh), its pins from bitstreams/BOARD/rnic.xdc.
# The top is RTL (bitstreams/common/rnic_card_top.sv); the vendor IP it instantiates is created here
# under its module names, ports as bitstreams/common/vendor_ip.toml lists them:
#   rnic_xdma  XDMA in AXI bridge mode, Gen3 x16: BAR0 1 MiB -> AXI4 master at offset 0 (the NIC and
#              the flash controller: rnic_bar_bridge), the MSI-X table and PBA in BAR 2 (spec MSIX_*),
#              its AXI4 slave -> host memory, 16 user interrupts = 16 MSI-X vectors (one per context)
#   rnic_cmac  CMAC 100G (CAUI-4, RS-FEC) with its GTs on the board's QSFP0, AXI4-Stream, no
#              AXI4-Lite (rnic_card_top brings it up), no pause frames
#   rnic_qspi  AXI Quad SPI, quad mode, Micron, through STARTUPE3, 256-byte FIFO: what XRT's
#              xbflash.qspi drives at BAR0 offset BAR0_QSPI_BASE
# and the kernels are the Vitis HLS IP in OUT/hls. The project is generated under OUT/vivado (never
# committed). Never run: it targets Vivado 2023.2-2025.1 and has not met Vivado yet
# (docs/ARCHITECTURE.md, "On a card").
lassign $argv root board out build_id build_time fw_hex mac ipv4
proc conf {key} {
  global root board
  return [exec bash $root/bitstreams/common/board.sh $board $key]
}
proc spec {name} {
  global root
  return [exec python3 -c "import sys; sys.path.insert(0, '$root/spec/gen'); import rnic_spec as S; print(S.$name)"]
}

create_project rnic_$board $out/vivado -part [conf part] -force
set_property board_part [conf board_part] [current_project]
set_property ip_repo_paths [glob -nocomplain $out/hls/*/impl/ip $out/hls/*/*/impl/ip] [current_project]
update_ip_catalog

# RTL: the generated package and kernel wrappers (RNIC_HLS_KERNELS: they instantiate the HLS IP),
# PicoRV32 from the venv, the NIC, the card's part of it and the top
set picorv32 [exec $root/.venv/bin/python -c "import pythondata_cpu_picorv32 as p; print(p.data_location)"]
add_files -norecurse [concat \
  [list $root/spec/gen/rnic_spec_pkg.sv $picorv32/picorv32.v] \
  [glob $root/spec/gen/rnic_*_kernel.sv] \
  [glob $root/hw/rtl/*.sv] \
  [list $root/bitstreams/common/rnic_card.sv $root/bitstreams/common/rnic_card_top.sv]]
set defines {RNIC_HLS_KERNELS}
if {[conf hbm_cattrip] eq "yes"} { lappend defines RNIC_HBM_CATTRIP }
set_property verilog_define $defines [current_fileset]
foreach k {tx rx cq} {
  create_ip -name rnic_${k}_top -vendor rnic -library hls -version 1.0 -module_name rnic_${k}_top
}

set msix_bar "BAR_[expr {[spec MSIX_BAR] + 1}]:[spec MSIX_BAR]"
create_ip -name xdma -vendor xilinx.com -library ip -module_name rnic_xdma
set_property -dict [list \
  CONFIG.functional_mode {AXI_Bridge} CONFIG.mode_selection {Advanced} \
  CONFIG.device_port_type {PCI_Express_Endpoint_device} CONFIG.PCIE_BOARD_INTERFACE {pci_express_x16} \
  CONFIG.pl_link_cap_max_link_width {X16} CONFIG.pl_link_cap_max_link_speed {8.0_GT/s} \
  CONFIG.axi_data_width {512_bit} CONFIG.axisten_freq {250} \
  CONFIG.pf0_device_id [format %04x [spec DEVICE_ID]] CONFIG.pf0_class_code_base {02} CONFIG.pf0_class_code_sub {80} \
  CONFIG.pf0_bar0_enabled {true} CONFIG.pf0_bar0_64bit {true} CONFIG.pf0_bar0_size {1} \
  CONFIG.pf0_bar0_scale {Megabytes} CONFIG.pciebar2axibar_0 {0x0} \
  CONFIG.pf0_bar2_enabled {true} CONFIG.pf0_bar2_64bit {true} \
  CONFIG.pf0_bar2_size [expr {[spec MSIX_BAR_SIZE] >> 10}] CONFIG.pf0_bar2_scale {Kilobytes} \
  CONFIG.pciebar2axibar_2 [format 0x%x [spec BAR0_SIZE]] \
  CONFIG.axibar_num {1} CONFIG.axibar_0 {0x0} CONFIG.axibar_highaddr_0 {0xFFFFFFFFFFFFFFFF} CONFIG.axibar2pciebar_0 {0x0} \
  CONFIG.pf0_msix_enabled {true} CONFIG.pf0_msix_impl_locn {Internal} \
  CONFIG.pf0_msix_cap_table_size [format %03X [expr {[spec NUM_CTX] - 1}]] \
  CONFIG.pf0_msix_cap_table_bir $msix_bar CONFIG.pf0_msix_cap_table_offset [format %08X [spec MSIX_TABLE_OFF]] \
  CONFIG.pf0_msix_cap_pba_bir $msix_bar CONFIG.pf0_msix_cap_pba_offset [format %08X [spec MSIX_PBA_OFF]] \
  CONFIG.xdma_num_usr_irq [spec NUM_CTX] \
] [get_ips rnic_xdma]

# the CMAC's four lanes of its GT group, X1Y44~X1Y47 -> X1Y44 .. X1Y47
regexp {X(\d+)Y(\d+)~} [conf cmac_gt_group] - gx gy
create_ip -name cmac_usplus -vendor xilinx.com -library ip -module_name rnic_cmac
set_property -dict [list \
  CONFIG.CMAC_CAUI4_MODE {1} CONFIG.NUM_LANES {4x25} CONFIG.USER_INTERFACE {AXIS} \
  CONFIG.GT_REF_CLK_FREQ [conf qsfp_refclk_mhz] CONFIG.GT_DRP_CLK {125.00} \
  CONFIG.CMAC_CORE_SELECT [conf cmac_core] CONFIG.GT_GROUP_SELECT [conf cmac_gt_group] \
  CONFIG.LANE1_GT_LOC X${gx}Y$gy CONFIG.LANE2_GT_LOC X${gx}Y[expr {$gy + 1}] \
  CONFIG.LANE3_GT_LOC X${gx}Y[expr {$gy + 2}] CONFIG.LANE4_GT_LOC X${gx}Y[expr {$gy + 3}] \
  CONFIG.RX_GT_BUFFER {1} CONFIG.GT_RX_BUFFER_BYPASS {0} \
  CONFIG.INCLUDE_RS_FEC {1} CONFIG.ENABLE_AXI_INTERFACE {0} CONFIG.INCLUDE_STATISTICS_COUNTERS {0} \
  CONFIG.TX_FLOW_CONTROL {0} CONFIG.RX_FLOW_CONTROL {0} \
] [get_ips rnic_cmac]

create_ip -name axi_quad_spi -vendor xilinx.com -library ip -module_name rnic_qspi
set_property -dict [list \
  CONFIG.C_SPI_MODE {2} CONFIG.C_SPI_MEMORY {2} CONFIG.C_USE_STARTUP {1} CONFIG.C_USE_STARTUP_INT {1} \
  CONFIG.C_FIFO_DEPTH {256} CONFIG.C_SCK_RATIO {2} CONFIG.C_TYPE_OF_AXI4_INTERFACE {0} \
  CONFIG.C_XIP_MODE {0} CONFIG.C_NUM_SS_BITS {1} CONFIG.Async_Clk {1} \
] [get_ips rnic_qspi]
generate_target all [get_ips]

add_files -fileset constrs_1 -norecurse [list $root/bitstreams/common/config.xdc $root/bitstreams/common/cdc.xdc \
  $root/bitstreams/$board/rnic.xdc]
set_property top rnic_card_top [current_fileset]
set_property generic [list FW_HEX=\"$fw_hex\" BUILD_ID=32'h$build_id BUILD_TIME=32'd$build_time \
  MAC=48'h$mac IPV4=32'h$ipv4 SYSCLK_MHZ=[conf sysclk_mhz]] [current_fileset]

# the build ID twice: in the ID block (BUILD_ID, what the driver reads) and in USR_ACCESS
# (readable by JTAG tools without the driver)
set_property STEPS.WRITE_BITSTREAM.TCL.PRE [file join $out usr_access.tcl] [get_runs impl_1]
set f [open [file join $out usr_access.tcl] w]
puts $f "set_property BITSTREAM.CONFIG.USR_ACCESS 0x$build_id \[current_design\]"
close $f

launch_runs impl_1 -to_step write_bitstream -jobs 8
wait_on_run impl_1
if {[get_property PROGRESS [get_runs impl_1]] ne "100%"} {
  error "implementation failed: see $out/vivado/rnic_$board.runs/impl_1"
}
open_run impl_1
report_utilization -file $out/utilization.rpt
report_timing_summary -file $out/timing.rpt
report_cdc -file $out/cdc.rpt
if {[get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]] < 0} {
  puts "WARNING: timing not met: $out/timing.rpt"
}
file copy -force [glob $out/vivado/rnic_$board.runs/impl_1/rnic_card_top.bit] $out/rnic_$board.bit
# the user image of the card's dual-image QSPI flash (the golden image stays below flash_offset)
write_cfgmem -force -format mcs -size 128 -interface [conf flash_interface] \
  -loadbit "up [conf flash_offset] $out/rnic_$board.bit" -file $out/rnic_$board.mcs
