#!/usr/bin/env bash
# Regenerate the committed ABI baseline (abi/) from a fresh build, on
# purpose: at release time, or with a deliberate break that comes with a new
# SONAME (docs/ABI.md).  One command; review and commit abi/ afterwards.
#
#   scripts/abi-update.sh [BUILDDIR]        (default: build; set up if missing)
#
# Writes abi/libheapscope.abi.xml (abidw, libabigail) and abi/constants.txt
# (public integer constants), after checking that the exported symbols equal
# the linker map and the header rules hold; then runs scripts/abi-check.sh,
# which must pass against the new baseline.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
tool=$root/tests/abi/abi_header.py
header=$root/include/heapscope/heapscope.h

command -v abidw >/dev/null || { echo "abidw not found: install abigail-tools" >&2; exit 1; }
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$root" >/dev/null   # debugoptimized: has debug info
fi
ninja -C "$build" >/dev/null
lib=$build/libheapscope.so
readelf -S --wide "$lib" | grep -q '\.debug_info' || {
  echo "$lib has no debug info: use buildtype debug or debugoptimized" >&2; exit 1; }

# Never record a baseline from a library whose exports are wrong.
python3 "$tool" exports --lib "$lib" --map "$root/src/libheapscope.map" --header "$header"
python3 "$tool" lint --header "$header"

mkdir -p "$root/abi"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# Hash type ids and no locations/paths/architecture: the file depends on the
# ABI only, not on where or on which machine it was built.
abidw --type-id-style hash --no-corpus-path --no-comp-dir-path --no-show-locs \
      --no-architecture --out-file "$tmp" "$lib"
# Translation-unit paths are relative to the build directory; keep them
# relative to the source root.
sed -E "s#path='[^']*/(src|include)/#path='\\1/#" "$tmp" >"$root/abi/libheapscope.abi.xml"
python3 "$tool" constants --header "$header" -I "$root/include" -I "$build/include" \
  --write "$root/abi/constants.txt"

"$root/scripts/abi-check.sh" "$build" >/dev/null
echo "abi-update: baseline regenerated from $lib ($(cd "$root" && git describe --always --dirty 2>/dev/null || echo 'no git'))"
(cd "$root" && git status --short -- abi/ 2>/dev/null) || true
