#!/usr/bin/env bash
# Quick start: install, build, run a small leaking Ruby application of our
# own (examples/workloads/leak_series.rb, Ruby from apt) that writes three
# heap dumps, then summarise the last one and ask what leaks between them.
set -euo pipefail
cd "$(dirname "$0")/.."
# the tests' ruby.wasm packages are not needed here (scripts/test.sh gets them)
HEAPSCOPE_SETUP_RUBIES=0 scripts/setup.sh build
OUT=${TMPDIR:-/tmp}/heapscope-quickstart
rm -rf "$OUT"
ruby examples/workloads/leak_series.rb --scale 1 --out "$OUT"
echo
echo "\$ build/heapscope summary $OUT/heap_3.json"
./build/heapscope summary "$OUT/heap_3.json"
echo
echo "\$ build/heapscope suspects --top 5 $OUT/heap_1.json $OUT/heap_2.json $OUT/heap_3.json"
./build/heapscope suspects --top 5 "$OUT"/heap_{1,2,3}.json
echo
echo "The leaks this run planted, with their holders: $OUT/truth.json (examples/workloads/README.md)"
