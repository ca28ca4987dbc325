#!/usr/bin/env bash
# Install what heapscope needs on Debian 12 (as root), then build it.
# Idempotent: safe to run again.  Usage: scripts/setup.sh [BUILDDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PKGS=(meson ninja-build pkg-config gcc clang zlib1g-dev libisal-dev libxxhash-dev libcmocka-dev
      ruby ruby-dev python3 gzip time libclang-rt-14-dev valgrind ruby-activesupport
      librsvg2-bin postgresql abigail-tools ruby-ffi g++ make rake chromium
      # ruby-rspec: the gem's RSpec matcher (bindings/ruby/test/test_leak_apps.rb)
      ruby-rspec
      # python3-jsonschema: the --json outputs are validated against docs/schema/
      python3-jsonschema
      # groff: the man page test (tests/docs) renders docs/heapscope.1
      groff-base
      # libsimdjson-dev: the decode-only baseline the benchmarks set the
      # load against (bench/simdjson_decode.cpp, built where it is found)
      libsimdjson-dev
      # gdb: the test watchdog (tests/watchdog.h) prints a hung test's stacks
      gdb
      # the JSON Schemas of every --json output (tests/json)
      python3-jsonschema
      # golang-go: Go's own pprof (go tool pprof) reads the pprof export
      # (tests/pprof, suite pprof; docs/FLEET.md)
      golang-go
      # libmicrohttpd-dev: the HTTP server of `heapscope serve` (src/serve):
      # GNU's embeddable server, widely used and packaged; it parses HTTP
      # and runs the connection threads, so we write no HTTP parsing
      libmicrohttpd-dev)
# Node and npm run CRuby for WASI, the version matrix (tests/versions):
# Debian's packages only where the machine has none of its own (and not for
# HEAPSCOPE_SETUP_RUBIES=0, see below).
if [ "${HEAPSCOPE_SETUP_RUBIES:-1}" != 0 ]; then
  command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
  command -v npm >/dev/null 2>&1 || PKGS+=(npm)
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -d "$BUILD" ]; then
  meson setup "$BUILD" >/dev/null
fi
ninja -C "$BUILD" >/dev/null
echo "setup: built $BUILD/heapscope"
# The pinned ruby.wasm packages (tests/versions/package.json) into the cache
# (~/.cache/heapscope or $HEAPSCOPE_CACHE), for the tests; without npm or
# the registry the version tests of 3.2..head are skipped, which this says.
# HEAPSCOPE_SETUP_RUBIES=0 (the quick start) leaves them out.
if [ "${HEAPSCOPE_SETUP_RUBIES:-1}" != 0 ]; then
  python3 tests/versions/rubies.py install >/dev/null
  # memlab (tests/heapsnapshot/package.json), the consumer that tests the
  # V8 heap snapshot export; the same cache, the same skip without npm
  python3 tests/heapsnapshot/check_heapsnapshot.py install >/dev/null
fi
