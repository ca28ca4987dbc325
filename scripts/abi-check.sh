#!/usr/bin/env bash
# Compare the built libheapscope with the committed ABI baseline (abi/).
#
#   scripts/abi-check.sh [--only abidiff|constants] [BUILDDIR]   (default: build)
#
# abidiff: BUILDDIR/libheapscope.so against abi/libheapscope.abi.xml
#   (libabigail, Debian package abigail-tools).  Fails when abidiff reports
#   an incompatible change (exit bit 8, ABIDIFF_ABI_INCOMPATIBLE_CHANGE: a
#   removed function or symbol) and also when an existing interface changed
#   in any other way that abidiff reports (exit bit 4 with additions left
#   out): a parameter or return type, a struct member moved or resized.
#   abidiff 2.2 puts e.g. "int32_t parameter became int64_t" under bit 4
#   only, so bit 8 alone would let it through.  Passes on:
#     - added functions (new symbols, in a new version node);
#     - members appended at the end of a size-versioned public struct;
#     - any change inside an opaque handle (hscope_heap_t...).
#   The last two come from a suppression file generated from the header
#   (tests/abi/abi_header.py suppressions), so new handles and structs are
#   covered without editing anything.
# constants: every integer constant of the baseline (abi/constants.txt:
#   HSCOPE_* macros and enum values) still exists with the same value.
#
# Exit 0: compatible (additions are listed).  Exit 1: incompatible, or a
# tool failed.  If the break is intended (a new SONAME), or at release time,
# regenerate the baseline with scripts/abi-update.sh and commit abi/.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
only=
if [ "${1:-}" = --only ]; then only=$2; shift 2; fi
build=${1:-$root/build}
lib=$build/libheapscope.so
header=$root/include/heapscope/heapscope.h
baseline=$root/abi/libheapscope.abi.xml
constants=$root/abi/constants.txt
tool=$root/tests/abi/abi_header.py

die() { echo "abi-check: $*" >&2; exit 1; }

check_abidiff() {
  command -v abidiff >/dev/null || die "abidiff not found: install abigail-tools (scripts/setup.sh)"
  [ -f "$lib" ] || die "$lib not found: build first (ninja -C $build)"
  [ -f "$baseline" ] || die "no baseline $baseline: run scripts/abi-update.sh"
  readelf -S --wide "$lib" | grep -q '\.debug_info' ||
    die "$lib has no debug info: use buildtype debug or debugoptimized"
  local tmp rc rc2
  tmp=$(mktemp -d) || die "mktemp failed"
  trap 'rm -rf "$tmp"' RETURN
  python3 "$tool" suppressions --header "$header" >"$tmp/heapscope.abignore" ||
    die "cannot generate the suppression file"
  local args=(--no-architecture --no-default-suppression --fail-no-debug-info
              --suppressions "$tmp/heapscope.abignore")
  echo "+ abidiff ${args[*]} abi/libheapscope.abi.xml $lib"
  abidiff "${args[@]}" "$baseline" "$lib"
  rc=$?
  if (( rc & 3 )); then
    die "abidiff failed (exit $rc: $( ((rc & 1)) && echo error)$( ((rc & 2)) && echo usage))"
  fi
  if (( rc & 8 )); then
    echo "abi-check: FAIL: incompatible ABI change (abidiff exit $rc: bit 8, a function or symbol was removed)"
    return 1
  fi
  if (( rc & 4 )); then
    # Something changed; fine if it is only additions.
    abidiff "${args[@]}" --no-added-syms "$baseline" "$lib" >"$tmp/changed.txt"
    rc2=$?
    if (( rc2 & 4 )); then
      echo "abi-check: FAIL: an existing interface changed (abidiff exit $rc; without the"
      echo "additions still $rc2).  Existing functions, their parameter and return types and"
      echo "the layout of public structs are frozen; add a new function instead (docs/ABI.md)."
      return 1
    fi
    echo "abi-check: ok: compatible additions only (listed above); the baseline gets"
    echo "them at the next scripts/abi-update.sh (release time)."
    return 0
  fi
  echo "abi-check: ok: no ABI change against abi/libheapscope.abi.xml"
  return 0
}

check_constants() {
  [ -f "$constants" ] || die "no baseline $constants: run scripts/abi-update.sh"
  [ -f "$build/include/heapscope/version.h" ] || die "$build/include/heapscope/version.h missing: build first"
  echo "+ abi_header.py constants --baseline abi/constants.txt"
  python3 "$tool" constants --header "$header" -I "$root/include" -I "$build/include" \
    --baseline "$constants"
}

status=0
case "$only" in
  '') check_abidiff || status=1; check_constants || status=1 ;;
  abidiff) check_abidiff || status=1 ;;
  constants) check_constants || status=1 ;;
  *) die "--only abidiff|constants" ;;
esac
exit $status
