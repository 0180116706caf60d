#!/usr/bin/env bash
# One fact about a board from its folder (bitstreams/BOARD/board.conf): board.sh BOARD KEY
set -euo pipefail
conf="$(cd "$(dirname "$0")/.." && pwd)/$1/board.conf"
[ -f "$conf" ] || { echo "board.sh: no $conf" >&2; exit 2; }
v=$(sed -n "s/^$2[[:space:]]*=[[:space:]]*//p" "$conf")
[ -n "$v" ] || { echo "board.sh: $conf has no $2" >&2; exit 2; }
echo "$v"
