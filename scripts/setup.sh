#!/usr/bin/env bash
# Install what the build and the tests need: Debian packages (apt-get) and a project-local venv
# with pinned PyPI packages.  Idempotent: does nothing when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PKGS=(
  build-essential verilator
  gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf
  libibverbs-dev ibverbs-utils
  tshark python3-venv
)

missing=()
for p in "${DEB_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

PY=${PYTHON:-python3}
stamp=.venv/.requirements
if [ ! -x .venv/bin/python ] || ! cmp -s requirements.txt "$stamp"; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
  cp requirements.txt "$stamp"
fi
