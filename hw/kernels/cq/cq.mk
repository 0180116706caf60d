CQ_SRCS := hw/kernels/cq/cq.c hw/kernels/cq/cq_take.c hw/kernels/cq/cq_ring.c hw/kernels/cq/cq_write.c
KERNEL_SRCS += $(CQ_SRCS) hw/kernels/cq/cq_dpi.c
