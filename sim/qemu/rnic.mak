# The devices of sim/qemu's QEMU (--without-default-devices --with-devices-x86_64=rnic): the q35
# machine, PCIe root ports (device_del needs a hotplug slot), the Intel IOMMU (DMA through IOVAs),
# virtio-net (the guests' own network) and the card.
CONFIG_Q35=y
CONFIG_PCIE_PORT=y
CONFIG_VTD=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_RNIC_PCI=y
