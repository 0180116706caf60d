#!/usr/bin/env bash
# The card image of one board: HLS IP of the three kernels (then, once written, Vivado in batch
# mode with the project generated under OUTDIR, bitstream and QSPI flash image).
#   build.sh BOARD OUTDIR BUILD_ID FW_HEX
# Never run here (no Vivado on these machines): docs/ARCHITECTURE.md, "On a card".
set -euo pipefail
board=$1 out=$2 build_id=$3 fw_hex=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/hls"
for k in tx rx cq; do
  if command -v v++ >/dev/null && v++ --help 2>&1 | grep -q -- "--mode"; then
    # Vitis 2025.1 and later: the unified compiler in HLS mode
    v++ -c --mode hls --config "$root/bitstreams/common/hls.cfg" --hls.syn.top "rnic_${k}_top" \
      --part "$(bash "$root/bitstreams/common/board.sh" "$board" part)" --work_dir "$out/hls/$k"
  else
    # Vitis HLS up to 2024.2
    (cd "$out/hls" && vitis_hls -f "$root/bitstreams/common/hls.tcl" -tclargs "$root" "$k" \
      "$(bash "$root/bitstreams/common/board.sh" "$board" part)")
  fi
done
# The card-level top (XDMA in bridge mode: BAR0 to rnic_top's AXI4-Lite port, rnic_top's DMA
# ports to the host through the slave bridge; CMAC to its Ethernet port) and the Vivado project
# around it are not written yet: stop here, with the kernels' IP built.
echo "bitstream: HLS IP of the kernels is in $out/hls; the Vivado stage (card top, XDMA, CMAC," \
  "implementation, $out/rnic_${board}.mcs with build ID $build_id) is not written yet" >&2
exit 3
