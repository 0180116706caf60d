#!/usr/bin/env bash
# QEMU with the rnic-pci device (sim/qemu/rnic_pci.c): Debian 12's QEMU 7.2 source (apt-get
# source, through a deb-src list of this machine's own suites, kept in the cache), the device
# added, one target, only the devices of rnic.mak, no GUI, no tools; user networking (slirp: the
# rxe guest's TCP to the host's tools). Built once per source version
# and hash of the files below, outside the clone; prints the binary's path.
#
#   sim/qemu/build.sh            # build if missing, print the path
#   RNIC_CACHE=DIR               # cache root (default ~/.cache/rnic)
set -euo pipefail
cd "$(dirname "$0")/../.."

# Debian's QEMU 7.2 of bookworm and its security updates. The archive keeps only the newest
# revision of a security update: when this one is gone the newest 7.2 revision is used (and said).
QEMU_DEB=1:7.2+dfsg-7+deb12u18
CACHE=${RNIC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rnic}/qemu
FILES=(sim/qemu/build.sh sim/qemu/rnic_pci.c sim/qemu/rnic.mak spec/gen/rnic_spec.h)
key=$(cat "${FILES[@]}" | sha256sum | cut -c1-16)

apt_src() {
  apt-get -q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$CACHE/apt/parts" \
    -o Dir::State::Lists="$CACHE/apt/lists" -o Dir::Cache="$CACHE/apt/cache" "$@"
}

for f in "$CACHE"/*-"$key"/qemu-system-x86_64; do
  [ -x "$f" ] && { echo "$f"; exit 0; }
done

mkdir -p "$CACHE/apt/parts" "$CACHE/apt/lists/partial" "$CACHE/apt/cache/archives/partial"
# this machine's suites as deb-src (its sources list deb only); read with the options above, so
# /etc/apt is left as it is
{
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" && echo
  done
} > "$CACHE/apt/parts/rnic-src.sources"
if [ -f /etc/apt/sources.list ]; then
  sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list > "$CACHE/apt/parts/rnic-src.list"
fi
apt_src update >&2
ver=$QEMU_DEB
if ! apt_src source --print-uris "qemu=$ver" >/dev/null 2>&1; then
  ver=$(apt_src showsrc qemu 2>/dev/null | sed -n 's/^Version: \(1:7\.2+dfsg-.*\)/\1/p' | sort -V | tail -n 1)
  [ -n "$ver" ] || { echo "qemu-build: no QEMU 7.2 source in this machine's suites" >&2; exit 1; }
  echo "qemu-build: $QEMU_DEB has left the archive; building $ver" >&2
fi
out=$CACHE/${ver#1:}-$key
work=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
t0=$(date +%s)
(cd "$work" && apt_src source "qemu=$ver" >&2)
src=$(echo "$work"/qemu-*/)
cp sim/qemu/rnic_pci.c spec/gen/rnic_spec.h "$src/hw/misc/"
printf '\nconfig RNIC_PCI\n    bool\n    depends on PCI && MSI_NONBROKEN\n' >> "$src/hw/misc/Kconfig"
printf "softmmu_ss.add(when: 'CONFIG_RNIC_PCI', if_true: files('rnic_pci.c'))\n" >> "$src/hw/misc/meson.build"
cp sim/qemu/rnic.mak "$src/configs/devices/x86_64-softmmu/rnic.mak"
mkdir "$src/build"
(cd "$src/build" && ../configure --meson=meson --target-list=x86_64-softmmu --without-default-devices \
  --with-devices-x86_64=rnic --without-default-features --enable-fdt=system --enable-slirp --enable-tcg --enable-kvm --disable-docs \
  --disable-tools --disable-guest-agent --disable-install-blobs --disable-werror --audio-drv-list= \
  --enable-trace-backends=nop >&2 && ninja qemu-system-x86_64 >&2)
mkdir -p "$out"
cp "$src/build/qemu-system-x86_64" "$out/"
echo "qemu-build: QEMU $ver with rnic-pci built in $(( $(date +%s) - t0 )) s: $out" >&2
echo "$out/qemu-system-x86_64"
