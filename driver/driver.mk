# Portable driver core: compiled into the host library now, into the kernel module later.
DRIVER_CORE_INC := $(ROOT)/driver/core
DRIVER_CORE_SRCS := driver/core/rnic_core.c
DRIVER_CORE_HDRS := driver/core/rnic_core.h
