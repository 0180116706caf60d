RX_SRCS := hw/kernels/rx/rx_stages.c hw/kernels/rx/rx_mac.c hw/kernels/rx/rx_icrc.c hw/kernels/rx/rx_parse.c hw/kernels/rx/rx_store.c hw/kernels/rx/rx_ctx.c hw/kernels/rx/rx.c hw/kernels/rx/rx_req.c hw/kernels/rx/rx_rdq.c hw/kernels/rx/rx_rdport.c hw/kernels/rx/rx_reset.c
KERNEL_SRCS += $(RX_SRCS) hw/kernels/rx/rx_dpi.c
