#!/bin/busybox sh
# /init of the VMs' guest (sim/qemu/guest.py): mount the kernel's filesystems, load the modules,
# run the script the harness hands over (fw_cfg file opt/rnic/run), report its exit status on the
# console, power off.
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
kver=$(uname -r)
for m in $(cat "/lib/modules/$kver/load"); do
	insmod "/lib/modules/$kver/$m"
done
ip link set lo up
echo "rnic-guest: up at $(cut -d' ' -f1 /proc/uptime) s"
run=/sys/firmware/qemu_fw_cfg/by_name/opt/rnic/run/raw
if [ -f "$run" ]; then
	cp "$run" /tmp/run
	sh -e /tmp/run
	echo "rnic-guest: exit $?"
fi
# the kernel's log whole (the console shows only warnings and worse): the harness checks it
echo "rnic-guest: dmesg"
dmesg
poweroff -f
