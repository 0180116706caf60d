KERNEL_SRCS += hw/kernels/tx/tx.c hw/kernels/tx/tx_dpi.c
