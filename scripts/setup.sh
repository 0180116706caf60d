#!/usr/bin/env bash
# Install what the build and the tests need: Debian packages (apt-get) and a project-local venv
# with pinned PyPI packages.  Idempotent: does nothing when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

# NAME or NAME=VERSION. The verbs packages are pinned: the project's libibverbs.so.1 stands in for
# rdma-core 44.0-2's, and Debian's tools of exactly these versions run against it. So is Yosys: the
# RTL keeps to the SystemVerilog subset its 0.23 reads (make synth). The VMs' QEMU (sim/qemu) is built
# from Debian's QEMU 7.2 source with meson and these libraries; its firmware comes from seabios and
# qemu-system-data (whose revision follows QEMU's security updates, as glib's does: only the newest
# stays in the archive, so those two are not pinned). clang-14 and llvm-14 give the kernels' timing
# model (tests/hls_timing.py) the LLVM IR Vitis HLS's own front end would see.
DEB_PKGS=(
  build-essential verilator yosys=0.23-6 clang-14=1:14.0.6-12 llvm-14=1:14.0.6-12
  gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf
  libibverbs-dev=44.0-2 ibverbs-utils=44.0-2 libibverbs1=44.0-2 python3-pyverbs=44.0-2
  librdmacm-dev=44.0-2 rdmacm-utils=44.0-2 perftest=4.5+0.17-1
  tshark python3-venv
  libpci-dev pciutils
  sparse linux-headers-amd64
  valgrind=1:3.19.0-1
  gdb=13.1-3
  meson=1.0.1-5 ninja-build=1.11.1-2~deb12u1 libglib2.0-dev libpixman-1-dev=0.42.2-1 libfdt-dev=1.6.1-4+b1
  libslirp-dev=4.7.0-1
  seabios=1.16.2-1 qemu-system-data cpio
)

missing=()
for p in "${DEB_PKGS[@]}"; do
  name=${p%%=*}
  want=${p#*=}
  [ "$want" = "$p" ] && want=""
  st=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
  case "$st" in
    "install ok installed ${want}"*) ;;
    *) missing+=("$p") ;;
  esac
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

# The kernel module is also built against the newest 6.12 kernel Debian 12 offers (backports of
# the kernel API drift): its headers package name changes with each upload, so it is looked up.
if ! ls -d /usr/src/linux-headers-6.12*-amd64 >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  newer=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' | cut -d' ' -f1 | sort -V | tail -n 1)
  if [ -z "$newer" ]; then
    $SUDO apt-get update -q
    newer=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' | cut -d' ' -f1 | sort -V | tail -n 1)
  fi
  if [ -n "$newer" ]; then
    echo "setup: installing $newer"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "$newer"
  fi
fi

PY=${PYTHON:-python3}
stamp=.venv/.requirements
if [ ! -x .venv/bin/python ] || ! cmp -s requirements.txt "$stamp"; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
  cp requirements.txt "$stamp"
fi

# checkpatch.pl ships only with the kernel's source: taken from Debian's linux-source-6.1 package
# into the project-local venv (three files of the tarball).
CP=.venv/share/checkpatch
if [ ! -f "$CP/checkpatch.pl" ]; then
  echo "setup: fetching checkpatch.pl from Debian's linux-source-6.1"
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -q linux-source-6.1 >/dev/null 2>&1)
  dpkg-deb --fsys-tarfile "$tmp"/linux-source-6.1_*.deb | tar -xO ./usr/src/linux-source-6.1.tar.xz |
    tar -xJ -C "$tmp" linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
      linux-source-6.1/scripts/const_structs.checkpatch
  mkdir -p "$CP"
  cp "$tmp"/linux-source-6.1/scripts/{checkpatch.pl,spelling.txt,const_structs.checkpatch} "$CP"/
  rm -rf "$tmp"
fi
