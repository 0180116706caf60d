#!/usr/bin/env bash
# rdma-core's own test suite, as Debian's python3-pyverbs ships it (/usr/share/doc/rdma-core/tests,
# some files gzipped), unpacked into DEST. Taken from the package's .deb when the installed copy
# lacks its documentation (an image that excludes /usr/share/doc).
set -euo pipefail
DEST=$1
SRC=/usr/share/doc/rdma-core/tests
rm -rf "$DEST"
mkdir -p "$(dirname "$DEST")"
if [ -f "$SRC/run_tests.py" ]; then
  cp -r "$SRC" "$DEST"
else
  tmp=$(mktemp -d)
  ver=$(dpkg-query -W -f='${Version}' python3-pyverbs)
  (cd "$tmp" && apt-get download -q "python3-pyverbs=$ver" >/dev/null)
  dpkg-deb -x "$tmp"/python3-pyverbs_*.deb "$tmp/x"
  cp -r "$tmp/x$SRC" "$DEST"
  rm -rf "$tmp"
fi
gunzip -f "$DEST"/*.gz
