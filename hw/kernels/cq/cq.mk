KERNEL_SRCS += hw/kernels/cq/cq.c hw/kernels/cq/cq_dpi.c
