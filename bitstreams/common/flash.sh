#!/usr/bin/env bash
# Write the card's QSPI flash with XRT's xbflash.qspi, then remove the PCIe function and rescan
# the bus so the new image's device comes back (a cold boot also does).
#   flash.sh [--dry-run] --image FILE.mcs --find RNIC_PCI_FIND [--bdf DDDD:BB:DD.F] [-- libpci options]
# Without --bdf the card is found with libpci (rnic-pci-find): exactly one must be present.
# Debian's xbutil/xbmgmt/xclbinutil wrappers are broken and exit 0: only xbflash.qspi is used.
set -euo pipefail
dry=0 image="" find="" bdf=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --image) image=$2; shift ;;
    --find) find=$2; shift ;;
    --bdf) bdf=$2; shift ;;
    --) shift; break ;;
    *) echo "flash: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
run() {
  if [ "$dry" = 1 ]; then echo "would run: $*"; else "$@"; fi
}
[ -n "$image" ] && [ -n "$find" ] || { echo "flash: --image and --find are required" >&2; exit 2; }
if [ "$dry" = 0 ] && [ ! -f "$image" ]; then
  echo "flash: no flash image $image (make bitstream BOARD=... first)" >&2; exit 2
fi
if [ -z "$bdf" ]; then
  set +e
  cards=$("$find" "$@")
  rc=$?
  set -e
  [ $rc -le 1 ] || { echo "flash: cannot scan the PCI bus" >&2; exit 2; }
  n=$(printf '%s' "$cards" | grep -c . || true)
  if [ "$n" -eq 0 ]; then
    echo "flash: no RNIC card found; pass BDF=... for a card still running another image" >&2
    exit 1
  fi
  if [ "$n" -gt 1 ]; then
    echo "flash: $n RNIC cards found, pick one with BDF=...:" >&2; echo "$cards" >&2; exit 1
  fi
  bdf=${cards%% *}
fi
echo "flash: card $bdf, image $image"
if [ "$dry" = 0 ] && ! command -v xbflash.qspi >/dev/null; then
  echo "flash: xbflash.qspi not found: apt-get install libxrt-utils (XRT's flash tool)" >&2; exit 2
fi
if [ "$dry" = 0 ] && [ "$(id -u)" -ne 0 ]; then
  echo "flash: writing the flash and rescanning PCIe need root" >&2; exit 2
fi
run xbflash.qspi --primary "$image" --card "$bdf" --force
# the driver lets go of the card and binds again (remove + rescan: a hot reset of its function);
# the FPGA itself loads the flash image only at power-up
run sh -c "echo 1 > /sys/bus/pci/devices/$bdf/remove"
run sh -c "echo 1 > /sys/bus/pci/rescan"
for f in /sys/bus/pci/devices/"$bdf"/misc/rnic*/build_id; do
  [ -r "$f" ] && echo "flash: the running image reports build ID $(cat "$f")"
done
echo "flash: done. The card runs the new image after a cold reboot (power cycle) of the host;" \
  "then: modprobe rnic (or insmod build/kmod/\$(uname -r)/rnic.ko) and scripts/rnic-run ibv_devinfo"
