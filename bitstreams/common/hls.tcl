# Vitis HLS (up to 2024.2): one kernel's IP from the same C the simulator runs.
#   vitis_hls -f hls.tcl -tclargs ROOT KERNEL PART   (after make: the ICRC's seed is generated into build/kernels/gen)
lassign $argv root k part
open_project -reset rnic_$k
set_top rnic_${k}_top
set cflags "-I$root/hw/kernels/common -I$root/hw/kernels/$k -I$root/spec/gen -I$root/build/kernels/gen -I$root/hw/kernels/tx -I$root/hw/kernels/rx -I$root/hw/kernels/cq"
foreach f {tx/tx_stages.c tx/tx.c tx/tx_build.c tx/tx_sched.c tx/tx_reset.c tx/tx_egress.c tx/tx_emit.c tx/tx_rsq.c tx/tx_rdport.c tx/tx_wheel.c rx/rx_stages.c rx/rx_mac.c rx/rx_icrc.c rx/rx_parse.c rx/rx_store.c rx/rx_ctx.c rx/rx.c rx/rx_req.c rx/rx_rdq.c rx/rx_rdport.c rx/rx_reset.c cq/cq.c cq/cq_take.c cq/cq_ring.c cq/cq_write.c common/rnic_crc.c common/rnic_icrc.c} { add_files $root/hw/kernels/$f -cflags $cflags }
add_files $root/bitstreams/common/hls_top.c -cflags $cflags
open_solution -reset sol -flow_target vivado
set_part $part
create_clock -period 4.0 -name ap_clk
config_rtl -reset all -reset_level high
csynth_design
export_design -format ip_catalog -output ip_$k.zip
exit
