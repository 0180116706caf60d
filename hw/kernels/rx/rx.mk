KERNEL_SRCS += hw/kernels/rx/rx.c hw/kernels/rx/rx_dpi.c
