# Clock-domain crossings of the card's RTL, each through a synchronizer (ASYNC_REG flops), and only
# those: the NIC's 250 MHz (XDMA axi_aclk), the CMAC's 322.27 MHz (gt_txusrclk2), the 125 MHz init
# clock. Vivado derives the clocks from the IP; everything else between them is timed.

# rnic_frame_cdc: Gray-coded counts (frames written, the read pointer, the drop counters), each bit
# sampled by a two-flop synchronizer: the bits of one value must land within one period of the
# faster clock (3.103 ns), so a skewed sample is at most one step off, never a mix
set_max_delay -datapath_only 3.1 -from [get_cells -hier -filter {NAME =~ *_cdc/frames_gray_reg*}] \
  -to [get_cells -hier -filter {NAME =~ *_cdc/frames_m1_reg*}]
set_max_delay -datapath_only 3.1 -from [get_cells -hier -filter {NAME =~ *_cdc/rd_gray_reg*}] \
  -to [get_cells -hier -filter {NAME =~ *_cdc/rd_gray_s1_reg*}]
set_max_delay -datapath_only 3.1 -from [get_cells -hier -filter {NAME =~ *_cdc/drops_*_gray_reg*}] \
  -to [get_cells -hier -filter {NAME =~ *_cdc/*_m1_reg*}]
# the `last` bits (LUT RAM, written in the writer's clock, read in the reader's): a beat is read
# only after the frame count that covers it has crossed, four reader clocks after it was written
set_max_delay -datapath_only 4.0 -from [get_cells -hier -filter {NAME =~ *_cdc/last_mem_reg*}]
# level signals through two-flop synchronizers: each side's reset into the other, the MAC's
# stat_rx_aligned into the NIC's clock, the MMCM's lock into the init clock
set_false_path -to [get_cells -hier -filter {NAME =~ *_cdc/s_rst_from_m_reg[0]*}]
set_false_path -to [get_cells -hier -filter {NAME =~ *_cdc/m_rst_from_s_reg[0]*}]
set_false_path -to [get_cells -hier -filter {NAME =~ nic/aligned_sync_reg[0]*}]
set_false_path -to [get_cells -hier -filter {NAME =~ locked_sync_reg[0]*}]
# PERST# is asynchronous to everything; the XDMA synchronizes it
set_false_path -from [get_ports pcie_perst_n]
