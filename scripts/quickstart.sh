#!/usr/bin/env bash
# Quick start: install, build, generate a small real heap dump with the
# corpus generator (Ruby from apt) and summarise it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
CORPUS=${HEAPSCOPE_CORPUS:-../shared/corpus}
OUT=${TMPDIR:-/tmp}/heapscope-quickstart
if [ ! -f "$OUT/heap_3.json" ]; then
  mkdir -p "$OUT"
  ruby "$CORPUS/gen_leak.rb" --scale 1 --seed 42 --no-verify --out "$OUT" >/dev/null
fi
./build/heapscope summary "$OUT/heap_3.json"
