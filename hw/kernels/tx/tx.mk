TX_SRCS := hw/kernels/tx/tx.c hw/kernels/tx/tx_build.c
KERNEL_SRCS += $(TX_SRCS) hw/kernels/tx/tx_dpi.c
