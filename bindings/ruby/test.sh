#!/usr/bin/env bash
# Test the Ruby binding (gem libheapscope, require "heapscope") the way users
# get it:
#   1. gem build (vendors the library's sources into ext/heapscope/vendor);
#   2. gem install of that .gem, linked against a fresh meson build of
#      libheapscope (HEAPSCOPE_BUILD, via its meson-uninstalled pkg-config
#      file), into a scratch gem directory;
#   3. the minitest suite against the installed gem (load, snapshot, diff,
#      errors, GC safety, auto, examples compared with examples/c);
#   4. the two Ruby examples on fresh dumps, output compared with the C ones;
#   5. gem install of the same .gem from its vendored sources only (no
#      libheapscope anywhere), exported symbols checked, and the tests that
#      go through every part of the library (load, errors, diff, reports,
#      HTML, timeline, waste, redact) run again on it.
#
# Usage: HEAPSCOPE_BUILD=/path/to/meson/build bindings/ruby/test.sh [--no-vendored]
# (HEAPSCOPE_RB_TESTS="redact check" runs only those files of test/ in step 3)
# (HEAPSCOPE_BUILD defaults to the repository's build/; nothing is installed
# outside a temporary directory, which is removed unless HEAPSCOPE_RB_KEEP=1.)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${HEAPSCOPE_BUILD:-$repo/build}
vendored=1
[ "${1:-}" = "--no-vendored" ] && vendored=0

if [ ! -f "$build/meson-uninstalled/heapscope-uninstalled.pc" ]; then
  echo "test.sh: $build is not a meson build of heapscope; build one first:" >&2
  echo "  meson setup BUILD -Dtests=false && ninja -C BUILD; HEAPSCOPE_BUILD=BUILD $0" >&2
  exit 2
fi
build=$(cd "$build" && pwd)
if [ ! -e "$build/libheapscope.so" ]; then
  echo "test.sh: $build has no libheapscope.so (run ninja -C $build)" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/heapscope-rb.XXXXXX")
cleanup() { [ "${HEAPSCOPE_RB_KEEP:-0}" = 1 ] && echo "test.sh: kept $work" || rm -rf "$work"; }
trap cleanup EXIT

sys_gem_path=$(ruby -e 'print Gem.path.join(":")')
step() { printf '\n== %s\n' "$*"; }

# ---------------------------------------------------------------- 1. build
step "gem build"
(cd "$here" && gem build libheapscope.gemspec --output "$work/libheapscope.gem") | sed 's/^/   /'

# ------------------------------------------------ 2. install against build
step "gem install (linked to $build)"
HEAPSCOPE_BUILD=$build gem install --local --no-document --ignore-dependencies \
  --install-dir "$work/gems" "$work/libheapscope.gem" | sed 's/^/   /'
so=$(find "$work/gems" -name heapscope.so -path '*extensions*' | head -1)
[ -n "$so" ] || so=$(find "$work/gems" -name heapscope.so | head -1)
# (ldd's output is kept first: with pipefail, `ldd | grep -q` fails when
# grep exits before ldd has written everything)
ldd "$so" > "$work/ldd.txt"
grep -q "$build/libheapscope.so" "$work/ldd.txt" || { echo "test.sh: $so does not use $build" >&2; cat "$work/ldd.txt" >&2; exit 1; }
check_exports() {
  local exports
  exports=$(nm -D --defined-only "$1" | awk '{print $3}' | sort -u)
  if [ "$exports" != "Init_heapscope" ]; then
    echo "test.sh: $1 exports more than Init_heapscope:" >&2
    echo "$exports" >&2
    exit 1
  fi
  echo "   exports: $exports"
}
check_exports "$so"

# ------------------------------------------------------------ 3. the suite
run_suite() { # GEM_HOME [TEST NAMES]
  (
    cd "$here"
    export GEM_HOME=$1 GEM_PATH="$1:$sys_gem_path"
    export HEAPSCOPE_BUILD=$build HEAPSCOPE_CLI=$build/heapscope
    ruby -e 'require "heapscope"; so = $LOADED_FEATURES.grep(/heapscope\.so\z/)[0]
             abort "loaded #{so}, not the installed gem" unless so.start_with?(ENV["GEM_HOME"])
             spec = Gem.loaded_specs["libheapscope"]
             abort "require \"heapscope\" did not activate the gem libheapscope" unless spec
             abort "GEM_NAME #{Heapscope::GEM_NAME}" unless Heapscope::GEM_NAME == spec.name
             puts "   gem #{spec.name} #{Heapscope::VERSION} (library #{Heapscope::LIBRARY_VERSION}) from #{so}"'
    # what Bundler does for `gem "libheapscope"`: require the gem's name
    ruby -e 'require "libheapscope"
             abort "require \"libheapscope\" did not load Heapscope" unless defined?(Heapscope::Heap)
             abort "not from the gem" unless Gem.loaded_specs["libheapscope"]
             puts "   require \"libheapscope\": Heapscope #{Heapscope::VERSION}, library #{Heapscope::LIBRARY_VERSION}"'
    # all of test/test_*.rb, or those named in HEAPSCOPE_RB_TESTS
    HEAPSCOPE_RB_TESTS=${2:-} ruby -w -Itest -e '
      names = ENV["HEAPSCOPE_RB_TESTS"].to_s.split
      files = names.empty? ? Dir["test/test_*.rb"].sort : names.map { |n| "test/test_#{n}.rb" }
      files.each { |f| require File.expand_path(f) }'
  )
}
step "minitest suite (installed gem, linked)"
# HEAPSCOPE_RB_TESTS="redact format" runs only those test files here
run_suite "$work/gems" "${HEAPSCOPE_RB_TESTS:-}"

# ----------------------------------------------------------- 4. examples
step "examples/ruby vs examples/c"
cat > "$work/gen.rb" <<'RUBY'
require "objspace"
ObjectSpace.trace_object_allocations_start
Item = Struct.new(:name, :tags)
$cache = {}
3.times do |round|
  500.times { |i| $cache["k#{round}-#{i}"] = Item.new("item #{i}", [round, i]) if i.even?; "tmp #{i}" * 4 }
  GC.start
  File.open("#{ARGV[0]}/ex_#{round + 1}.json", "w") { |f| ObjectSpace.dump_all(output: f) }
end
RUBY
ruby --disable-gems "$work/gen.rb" "$work"
(
  export GEM_HOME=$work/gems GEM_PATH="$work/gems:$sys_gem_path"
  ruby "$repo/examples/ruby/bleak_tally.rb" "$work/ex_3.json" > "$work/bleak.rb.txt"
  ruby "$repo/examples/ruby/leak_diff.rb" "$work"/ex_{1,2,3}.json > "$work/leak.rb.txt"
)
head -3 "$work/bleak.rb.txt" | sed 's/^/   /'
head -3 "$work/leak.rb.txt" | sed 's/^/   /'
grep -q "^ *250  .*gen.rb:6:Item$" "$work/leak.rb.txt" || { echo "test.sh: leak_diff.rb missed the planted leak" >&2; exit 1; }
[ "$(wc -l < "$work/bleak.rb.txt")" -eq 21 ] || { echo "test.sh: bleak_tally.rb printed $(wc -l < "$work/bleak.rb.txt") lines" >&2; exit 1; }
if [ -x "$build/examples/bleak_tally" ] && [ -x "$build/examples/leak_diff" ]; then
  "$build/examples/bleak_tally" "$work/ex_3.json" > "$work/bleak.c.txt"
  "$build/examples/leak_diff" "$work"/ex_{1,2,3}.json > "$work/leak.c.txt"
  diff -u "$work/bleak.c.txt" "$work/bleak.rb.txt"
  diff -u "$work/leak.c.txt" "$work/leak.rb.txt"
  echo "   identical to examples/c output"
else
  echo "   ($build/examples not built: C comparison skipped)"
fi

# ------------------------------------------------- 5. vendored-only install
if [ "$vendored" = 1 ]; then
  step "gem install (vendored sources, no libheapscope)"
  env -u HEAPSCOPE_BUILD PKG_CONFIG_PATH= gem install --local --no-document --ignore-dependencies \
    --install-dir "$work/gems-vendored" "$work/libheapscope.gem" -- --disable-system-libheapscope | sed 's/^/   /'
  so=$(find "$work/gems-vendored" -name heapscope.so -path '*extensions*' | head -1)
  ldd "$so" > "$work/ldd.txt"
  if grep -q libheapscope "$work/ldd.txt"; then echo "test.sh: vendored build links libheapscope" >&2; exit 1; fi
  check_exports "$so"
  # The vendored build differs from the linked one in how the library is
  # compiled and linked (extconf, not meson), not in the binding: the tests
  # that load, analyse and write through every part of the library run
  # again; those of the binding's own Ruby code (fork, GC, apps) ran above.
  step "minitest, library parts (installed gem, vendored)"
  run_suite "$work/gems-vendored" "load errors diff report html_report timeline waste redact"
fi

step "OK"
