# The card image in Vivado batch mode: vivado -mode batch -source vivado.tcl -tclargs \
#   ROOT BOARD OUT BUILD_ID BUILD_TIME FW_HEX PART BOARD_PART QSFP QSFP_CLOCK FLASH FLASH_IF FLASH_OFFSET
#   MAC_HEX IPV4_HEX
# The project is generated under OUT/vivado (never committed). Block design: XDMA in AXI bridge
# mode (Gen3 x16, BAR0 1 MiB -> rnic_card's AXI4-Lite port through a SmartConnect; rnic_card's
# AXI4 master -> the bridge's slave port = host memory; 16 user interrupts = 16 MSI-X vectors,
# one per context), CMAC 100G on the board's QSFP28 (AXI4-Stream, RS-FEC), its 322 MHz streams
# crossed to the 250 MHz NIC clock by AXI4-Stream clock converters; rnic_card is a module
# reference (RTL of hw/rtl, the kernels as the Vitis HLS IP in OUT/hls). Never run: it targets
# Vivado 2023.2-2025.1 and has not met Vivado yet (docs/ARCHITECTURE.md, "On a card").
lassign $argv root board out build_id build_time fw_hex part board_part qsfp qsfp_clock flash flash_if flash_off \
  mac ipv4

create_project rnic_$board $out/vivado -part $part -force
set_property board_part $board_part [current_project]
set_property ip_repo_paths [glob -nocomplain $out/hls/*/impl/ip $out/hls/*/*/impl/ip] [current_project]
update_ip_catalog

# RTL: the generated package and kernel wrappers (RNIC_HLS_KERNELS: they instantiate the HLS
# IP), PicoRV32 from the venv, the NIC and the card adapters
set picorv32 [exec $root/.venv/bin/python -c "import pythondata_cpu_picorv32 as p; print(p.data_location)"]
add_files -norecurse [concat \
  [list $root/spec/gen/rnic_spec_pkg.sv $picorv32/picorv32.v] \
  [glob $root/spec/gen/rnic_*_kernel.sv] \
  [glob $root/hw/rtl/*.sv] \
  [list $root/bitstreams/common/rnic_card.sv]]
set_property verilog_define {RNIC_HLS_KERNELS} [current_fileset]
foreach k {tx rx cq} {
  create_ip -name rnic_${k}_top -vendor rnic -library hls -version 1.0 -module_name rnic_${k}_top
}

create_bd_design rnic
set xdma [create_bd_cell -type ip -vlnv xilinx.com:ip:xdma xdma]
set_property -dict [list \
  CONFIG.functional_mode {AXI_Bridge} CONFIG.mode_selection {Advanced} CONFIG.device_port_type {PCI_Express_Endpoint_device} \
  CONFIG.pl_link_cap_max_link_width {X16} CONFIG.pl_link_cap_max_link_speed {8.0_GT/s} \
  CONFIG.axi_data_width {512_bit} CONFIG.axisten_freq {250} \
  CONFIG.pf0_device_id {9038} CONFIG.pf0_class_code_base {02} CONFIG.pf0_class_code_sub {80} \
  CONFIG.pf0_bar0_enabled {true} CONFIG.pf0_bar0_64bit {true} CONFIG.pf0_bar0_size {1} \
  CONFIG.pf0_bar0_scale {Megabytes} CONFIG.pciebar2axibar_0 {0x0} \
  CONFIG.axibar_num {1} CONFIG.axibar_0 {0x0} CONFIG.axibar_highaddr_0 {0xFFFFFFFFFFFFFFFF} CONFIG.axibar2pciebar_0 {0x0} \
  CONFIG.pf0_msix_enabled {true} CONFIG.pf0_msix_cap_table_size {00F} CONFIG.msix_type {HARD} \
  CONFIG.num_vectors {16} CONFIG.xdma_num_usr_irq {16} \
] $xdma
apply_board_connection -board_interface pci_express -ip_intf xdma/pcie_mgt -diagram rnic
apply_board_connection -board_interface pcie_perstn -ip_intf xdma/RST.sys_rst_n -diagram rnic
create_bd_cell -type ip -vlnv xilinx.com:ip:util_ds_buf refclk
set_property CONFIG.C_BUF_TYPE {IBUFDSGTE} [get_bd_cells refclk]
apply_board_connection -board_interface pcie_refclk -ip_intf refclk/CLK_IN_D -diagram rnic
connect_bd_net [get_bd_pins refclk/IBUF_OUT] [get_bd_pins xdma/sys_clk_gt]
connect_bd_net [get_bd_pins refclk/IBUF_DS_ODIV2] [get_bd_pins xdma/sys_clk]

set nic [create_bd_cell -type module -reference rnic_card nic]
set_property -dict [list CONFIG.FW_HEX "\"$fw_hex\"" CONFIG.BUILD_ID "32'h$build_id" \
  CONFIG.BUILD_TIME "32'd$build_time" CONFIG.MAC "48'h$mac" CONFIG.IPV4 "32'h$ipv4"] $nic
connect_bd_net [get_bd_pins xdma/axi_aclk] [get_bd_pins nic/clk]
connect_bd_net [get_bd_pins xdma/axi_aresetn] [get_bd_pins nic/rst_n]
set sc [create_bd_cell -type ip -vlnv xilinx.com:ip:smartconnect bar0]
set_property -dict [list CONFIG.NUM_SI {1} CONFIG.NUM_MI {1}] $sc
connect_bd_net [get_bd_pins xdma/axi_aclk] [get_bd_pins bar0/aclk]
connect_bd_net [get_bd_pins xdma/axi_aresetn] [get_bd_pins bar0/aresetn]
connect_bd_intf_net [get_bd_intf_pins xdma/M_AXI_B] [get_bd_intf_pins bar0/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins bar0/M00_AXI] [get_bd_intf_pins nic/s_axil]
connect_bd_intf_net [get_bd_intf_pins nic/m_axi] [get_bd_intf_pins xdma/S_AXI_B]
connect_bd_net [get_bd_pins nic/usr_irq_req] [get_bd_pins xdma/usr_irq_req]
connect_bd_net [get_bd_pins xdma/usr_irq_ack] [get_bd_pins nic/usr_irq_ack]

set cmac [create_bd_cell -type ip -vlnv xilinx.com:ip:cmac_usplus cmac]
set_property -dict [list CONFIG.CMAC_CAUI4_MODE {1} CONFIG.NUM_LANES {4x25} CONFIG.USER_INTERFACE {AXIS} \
  CONFIG.INCLUDE_RS_FEC {1} CONFIG.ENABLE_AXI_INTERFACE {0} CONFIG.INCLUDE_STATISTICS_COUNTERS {0} \
  CONFIG.TX_FLOW_CONTROL {0} CONFIG.RX_FLOW_CONTROL {0}] $cmac
apply_board_connection -board_interface $qsfp -ip_intf cmac/gt_serial_port -diagram rnic
apply_board_connection -board_interface $qsfp_clock -ip_intf cmac/gt_ref_clk -diagram rnic
# the MAC's 322 MHz user clock <-> the NIC's 250 MHz
foreach {name si mi sclk dclk} {
    eth_tx nic/m_axis_eth_tx cmac/axis_tx xdma/axi_aclk cmac/gt_txusrclk2
    eth_rx cmac/axis_rx nic/s_axis_eth_rx cmac/gt_rxusrclk2 xdma/axi_aclk} {
  create_bd_cell -type ip -vlnv xilinx.com:ip:axis_clock_converter $name
  connect_bd_intf_net [get_bd_intf_pins $si] [get_bd_intf_pins $name/S_AXIS]
  connect_bd_intf_net [get_bd_intf_pins $name/M_AXIS] [get_bd_intf_pins $mi]
  connect_bd_net [get_bd_pins $sclk] [get_bd_pins $name/s_axis_aclk]
  connect_bd_net [get_bd_pins $dclk] [get_bd_pins $name/m_axis_aclk]
  create_bd_cell -type ip -vlnv xilinx.com:ip:proc_sys_reset ${name}_rst
  connect_bd_net [get_bd_pins $sclk] [get_bd_pins ${name}_rst/slowest_sync_clk]
  connect_bd_net [get_bd_pins xdma/axi_aresetn] [get_bd_pins ${name}_rst/ext_reset_in]
  connect_bd_net [get_bd_pins ${name}_rst/peripheral_aresetn] [get_bd_pins $name/s_axis_aresetn]
  connect_bd_net [get_bd_pins ${name}_rst/peripheral_aresetn] [get_bd_pins $name/m_axis_aresetn]
}
# CMAC bring-up without its AXI4-Lite: RS-FEC on, transmit and receive enabled, init clock from
# the board's free-running clock
apply_board_connection -board_interface [lindex [get_board_part_interfaces -filter {NAME =~ "*sysclk*" || NAME =~ "*300mhz*"}] 0] \
  -ip_intf cmac/init_clk -diagram rnic
foreach {pin v} {ctl_rx_enable 1 ctl_tx_enable 1 ctl_rsfec_ieee_error_indication_mode 0 \
                 ctl_rx_rsfec_enable 1 ctl_rx_rsfec_enable_correction 1 ctl_rx_rsfec_enable_indication 1 \
                 ctl_tx_rsfec_enable 1 ctl_tx_send_idle 0 ctl_tx_send_rfi 0 ctl_tx_send_lfi 0} {
  set c [create_bd_cell -type ip -vlnv xilinx.com:ip:xlconstant const_$pin]
  set_property -dict [list CONFIG.CONST_VAL $v CONFIG.CONST_WIDTH 1] $c
  connect_bd_net [get_bd_pins const_$pin/dout] [get_bd_pins cmac/$pin]
}
assign_bd_address
validate_bd_design
save_bd_design
make_wrapper -files [get_files $out/vivado/rnic_$board.srcs/sources_1/bd/rnic/rnic.bd] -top
add_files -norecurse [glob $out/vivado/rnic_$board.gen/sources_1/bd/rnic/hdl/rnic_wrapper.v]
set_property top rnic_wrapper [current_fileset]

# the build ID twice: in the ID block (BUILD_ID, what the driver reads) and in USR_ACCESS
# (readable by JTAG tools without the driver)
set_property STEPS.WRITE_BITSTREAM.TCL.PRE [file join $out usr_access.tcl] [get_runs impl_1]
set f [open [file join $out usr_access.tcl] w]
puts $f "set_property BITSTREAM.CONFIG.USR_ACCESS 0x$build_id \[current_design\]"
puts $f "set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 \[current_design\]"
puts $f "set_property BITSTREAM.CONFIG.CONFIGRATE 63.8 \[current_design\]"
puts $f "set_property BITSTREAM.GENERAL.COMPRESS TRUE \[current_design\]"
close $f

launch_runs impl_1 -to_step write_bitstream -jobs 8
wait_on_run impl_1
if {[get_property PROGRESS [get_runs impl_1]] ne "100%"} {
  error "implementation failed: see $out/vivado/rnic_$board.runs/impl_1"
}
open_run impl_1
report_utilization -file $out/utilization.rpt
report_timing_summary -file $out/timing.rpt
if {[get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]] < 0} {
  puts "WARNING: timing not met: $out/timing.rpt"
}
file copy -force [glob $out/vivado/rnic_$board.runs/impl_1/rnic_wrapper.bit] $out/rnic_$board.bit
# the user image of the card's dual-image QSPI flash (the golden image stays below flash_off)
write_cfgmem -force -format mcs -size 128 -interface $flash_if \
  -loadbit "up $flash_off $out/rnic_$board.bit" -file $out/rnic_$board.mcs
