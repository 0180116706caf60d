# Portable driver core: compiled into the host library now, into the kernel module later.
DRIVER_CORE_INC := $(ROOT)/driver/core
DRIVER_CORE_SRCS := driver/core/rnic_core.c
DRIVER_CORE_HDRS := driver/core/rnic_core.h

# The Linux kernel module, built against each Debian kernel's headers that are installed (kbuild,
# W=1, sparse with C=2) in a copy of its sources under build/kmod/<release>/: make kmod
KMOD_SRCS := driver/linux/Kbuild driver/linux/rnic_main.c driver/linux/rnic_ioctl.c driver/linux/rnic_drv.h $(wildcard driver/linux/compat/*.h) \
	driver/core/rnic_core.c driver/core/rnic_core.h $(SPEC_INC)/rnic_spec.h driver/include/uapi/rnic/rnic_uapi.h
KMOD_KERNELS = $(notdir $(patsubst %/,%,$(dir $(wildcard /usr/src/linux-headers-*-amd64/Makefile))))

# built again only when a source changed (a stamp records the last build for every kernel)
KMOD_STAMP := $(BUILD)/kmod/build.stamp
.PHONY: kmod
kmod: $(KMOD_STAMP)
$(KMOD_STAMP): $(KMOD_SRCS)
	@test -n "$(KMOD_KERNELS)" || { echo "kmod: no kernel headers in /usr/src (apt-get install linux-headers-amd64)" >&2; exit 2; }
	@for k in $(KMOD_KERNELS); do \
	  kver=$${k#linux-headers-}; d=$(BUILD)/kmod/$$kver; mkdir -p $$d/compat; \
	  cp driver/linux/Kbuild driver/linux/rnic_main.c driver/linux/rnic_ioctl.c driver/linux/rnic_drv.h driver/core/rnic_core.c driver/core/rnic_core.h \
	    $(SPEC_INC)/rnic_spec.h driver/include/uapi/rnic/rnic_uapi.h $$d/; \
	  cp driver/linux/compat/*.h $$d/compat/; \
	  echo "kmod: $$kver"; \
	  $(MAKE) -C /usr/src/$$k M=$$d W=1 C=2 CHECK="sparse -Wno-unknown-attribute" modules || exit 1; \
	done
	@touch $@
