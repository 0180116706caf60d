#!/usr/bin/env bash
# The card image of one board: HLS IP of the three kernels, then Vivado in batch mode with the
# project generated under OUTDIR (vivado.tcl): OUTDIR/rnic_BOARD.bit and the QSPI flash image
# OUTDIR/rnic_BOARD.mcs, BUILD_ID in the ID block and in USR_ACCESS.
#   build.sh BOARD OUTDIR BUILD_ID FW_HEX BUILD_TIME MAC IPV4
# MAC and IPv4 address are the image's own (straps of rnic_top): one image per card.
# Never run here (no Vivado on these machines): docs/ARCHITECTURE.md, "On a card".
set -euo pipefail
board=$1 out=$2 build_id=$3 fw_hex=$4 build_time=$5 mac=$6 ipv4=$7
[[ $mac =~ ^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$ ]] || { echo "bitstream: MAC=$mac is not aa:bb:cc:dd:ee:ff" >&2; exit 2; }
IFS=. read -r a b c d <<<"$ipv4"
for o in "$a" "$b" "$c" "$d"; do
  [[ $o =~ ^[0-9]+$ && $o -le 255 ]] || { echo "bitstream: IPV4=$ipv4 is not an IPv4 address" >&2; exit 2; }
done
mac_hex=${mac//:/} ipv4_hex=$(printf '%02x%02x%02x%02x' "$a" "$b" "$c" "$d")
root=$(cd "$(dirname "$0")/../.." && pwd)
conf() { bash "$root/bitstreams/common/board.sh" "$board" "$1"; }
mkdir -p "$out/hls"
for k in tx rx cq; do
  if command -v v++ >/dev/null && v++ --help 2>&1 | grep -q -- "--mode"; then
    # Vitis 2025.1 and later: the unified compiler in HLS mode
    v++ -c --mode hls --config "$root/bitstreams/common/hls.cfg" --hls.syn.top "rnic_${k}_top" \
      --part "$(conf part)" --work_dir "$out/hls/$k"
  else
    # Vitis HLS up to 2024.2
    (cd "$out/hls" && vitis_hls -f "$root/bitstreams/common/hls.tcl" -tclargs "$root" "$k" \
      "$(conf part)")
  fi
done
vivado -mode batch -nojournal -log "$out/vivado.log" -source "$root/bitstreams/common/vivado.tcl" \
  -tclargs "$root" "$board" "$out" "$build_id" "$build_time" "$fw_hex" "$mac_hex" "$ipv4_hex"
echo "bitstream: $out/rnic_$board.bit, flash image $out/rnic_$board.mcs (build ID $build_id)"
