#!/usr/bin/env bash
# Run every test: the normal build, then the ASan+UBSan build.
# Usage: scripts/test.sh [--no-sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
meson test -C build --print-errorlogs --num-processes 2
if [ "${1:-}" != "--no-sanitize" ]; then
  if [ ! -d build-asan ]; then
    meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
      -Dbuildtype=debug >/dev/null
  fi
  ninja -C build-asan >/dev/null
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes 2
fi
