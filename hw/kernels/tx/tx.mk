TX_SRCS := hw/kernels/tx/tx_stages.c hw/kernels/tx/tx.c hw/kernels/tx/tx_build.c hw/kernels/tx/tx_sched.c hw/kernels/tx/tx_reset.c hw/kernels/tx/tx_egress.c hw/kernels/tx/tx_emit.c hw/kernels/tx/tx_rsq.c hw/kernels/tx/tx_rdport.c hw/kernels/tx/tx_wheel.c
KERNEL_SRCS += $(TX_SRCS) hw/kernels/tx/tx_dpi.c
