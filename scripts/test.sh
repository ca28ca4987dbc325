#!/usr/bin/env bash
# Run every test.  Usage: scripts/test.sh [--quick]
#   --quick: the main build's meson suites (unit, api, workloads, versions:
#      Ruby 3.1 native and ruby.wasm 3.2..head, timeline, report, abi, pprof:
#      go tool pprof reads the pprof export, ...;
#      the optional reference corpus when it is there: README, "Tests") and heapscope
#      check on a passing and a failing budget, in build/.
# The full run does each test once, in this order:
#   1. a fresh clone: a copy of the repository with nothing beside it
#      runs the quick start and `scripts/test.sh --quick` (every meson suite
#      and the budgets); every test but the corpus-only ones must pass there
#      (scripts/fresh-clone-check.sh)
#   2. in build/, the tests that read the optional reference corpus
#      (the copy had to skip them or ran them without it)
#   3. the Ruby binding: gem built, installed linked to build/ (whole
#      minitest suite, examples) and from its vendored sources (the tests
#      that go through the library: bindings/ruby/test.sh); the sanitizer
#      and fuzzing builds compile meanwhile on the other core
#   4. valgrind memcheck over the unit and API suites (zero leaks, no errors;
#      but api-alloc, whose every allocation failure runs under ASan in 5)
#   5. one clang build with ASan+UBSan (build-fuzz/, zlib only, no ISA-L),
#      also the fuzzers' build: every suite that runs our C code (not the
#      layering and man page checks, not the corpus-reference and
#      timeline-corpus tests, not memlab's and DevTools' own parsing: suite
#      consumers, not Ruby 4.0's dumps, whose writer is head's, not the
#      browser half of serve; unit-handoff at a quarter of its loads, as
#      under TSan)
#   6. ThreadSanitizer build (gcc): the concurrency test
#   7. bounded fuzzing: each libFuzzer target for $HEAPSCOPE_FUZZ_SECONDS
#      (default 30), two targets at a time, under ASan+UBSan
#      (scripts/fuzz.sh; long campaigns are its own command)
# Each step prints how long it took, and the run ends with the list.
set -euo pipefail
cd "$(dirname "$0")/.."
t_run=$(date +%s)
t_step=$t_run
times=()
step_end() {
  if [ -n "${cur:-}" ]; then times+=("$(printf '%5d s  %s' $(($(date +%s) - t_step)) "$cur")"); fi
  t_step=$(date +%s)
}
step() { step_end; cur=$*; printf '\n== %s\n' "$*"; }
finish() {
  step_end
  printf '\n== time by step\n'
  printf '  %s\n' "${times[@]}"
  printf '  %5d s  in all\n' $(($(date +%s) - t_run))
}

step "setup: packages and build/ (scripts/setup.sh)"
scripts/setup.sh build

if [ "${1:-}" = "--quick" ]; then
  step "tests (build/)"
  meson test -C build --print-errorlogs --num-processes 2

  step "budgets in CI: heapscope check on a passing and a failing budget (examples/budgets)"
  desk=$(python3 tests/workloads/workloads.py leak_s1 | tail -n 1)
  build/heapscope check --budget examples/budgets/desk.toml "$desk"/heap_{1,2,3}.json
  rc=0
  build/heapscope check --budget examples/budgets/desk-no-leaks.toml "$desk"/heap_{1,2,3}.json || rc=$?
  if [ "$rc" -ne 1 ]; then
    echo "heapscope check: the failing budget exited $rc, not 1" >&2
    exit 1
  fi
  finish
  exit 0
fi

step "a fresh clone with nothing beside it: quick start and quick tests (scripts/fresh-clone-check.sh)"
scripts/fresh-clone-check.sh

step "tests that read the optional reference corpus, in build/"
# where meson looks for it by default (README, "Tests"; -Dcorpus_dir)
if [ -d "${HEAPSCOPE_CORPUS:-../shared/corpus}" ]; then
  meson test -C build --print-errorlogs --num-processes 2 \
    corpus-reference timeline-corpus threads-corpus unit-blocks \
    abi-example-write-report abi-example-html-report
else
  echo "no reference corpus here: the copy's run was the whole test"
fi

step "Ruby binding: gem build + install against build/, minitest, examples"
# The sanitizer and fuzzing builds compile meanwhile on the other core
# (the gem's tests run on one); their steps wait for them.
sanitizer_builds() {
  # One clang ASan+UBSan build serves the suites and the fuzzers: the
  # library is compiled under ASan once, not once per compiler (the main
  # build and the fresh clone are gcc's, so both compilers' warnings and
  # sanitizers still see the code).  -Disal=disabled: the main build
  # inflates with ISA-L where it can, so this is the build that runs the
  # whole suite on the zlib-only reader.
  if [ -f build-fuzz/build.ninja ]; then
    meson configure build-fuzz -Disal=disabled >/dev/null
  fi
  FUZZ_BUILD_ONLY=1 scripts/fuzz.sh
  ninja -C build-fuzz -j1
  if [ ! -d build-tsan ]; then
    meson setup build-tsan -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debugoptimized
  fi
  ninja -C build-tsan -j1 tests/api/api_threads tests/api/api_dominators tests/unit/unit_blocks \
    tests/unit/unit_handoff
}
nice -n 5 bash -c "$(declare -f sanitizer_builds); set -euo pipefail; sanitizer_builds" \
  > build/sanitizer-builds.log 2>&1 &
builds_pid=$!
trap '[ -z "${builds_pid:-}" ] || kill "$builds_pid" 2>/dev/null || true' EXIT
HEAPSCOPE_BUILD=build bindings/ruby/test.sh
wait_builds() {
  if [ -n "${builds_pid:-}" ]; then
    if ! wait "$builds_pid"; then
      echo "the sanitizer and fuzzing builds failed:" >&2
      tail -30 build/sanitizer-builds.log >&2
      exit 1
    fi
    builds_pid=
  fi
}

# The names of B's tests in the given suites (meson's own selection
# options), less the names given after --except.
tests_of() { # BUILD [meson test options] [--except NAME...]
  local b=$1 sel=() skip=() x=0
  shift
  for a in "$@"; do
    if [ "$a" = --except ]; then x=1; elif [ $x = 1 ]; then skip+=("$a"); else sel+=("$a"); fi
  done
  meson test -C "$b" --list "${sel[@]}" 2>/dev/null | sed -n 's/^[^ ]* \/ //p' |
    grep -vxF -f <(printf '%s\n' "${skip[@]}" '')
}

step "valgrind memcheck: unit and api suites"
# api-alloc fails every allocation of a load in turn: it runs under ASan
# (leaks included) below, where it is four times as fast as here.
mapfile -t vg < <(tests_of build --suite unit --suite api --no-suite threads --except api-alloc)
meson test -C build --print-errorlogs --num-processes 2 --timeout-multiplier 4 \
  --wrap='valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect --quiet' \
  "${vg[@]}"

step "tests under ASan+UBSan (build-fuzz/: clang, gzip by zlib only)"
wait_builds
ninja -C build-fuzz >/dev/null
# timeline-corpus: the timeline of the corpus's dumps, whose code the
# timeline suite runs on ours.  versions-4.0: Ruby 4.0's dump writer is
# head's, whose test runs here.
# serve-browser: its time is Chromium's; serve-http drives the same server
# code.  unit-handoff: a quarter of its loads, as under TSan
# (HEAPSCOPE_STRESS is read by that test only).
mapfile -t asan < <(tests_of build-fuzz --no-suite layering --no-suite docs --no-suite corpus \
  --no-suite consumers --except timeline-corpus versions-4.0 serve-browser)
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  HEAPSCOPE_STRESS=0.25 \
  meson test -C build-fuzz --print-errorlogs --num-processes 2 --timeout-multiplier 3 "${asan[@]}"

step "concurrency under ThreadSanitizer (build-tsan/)"
ninja -C build-tsan tests/api/api_threads tests/api/api_dominators tests/unit/unit_blocks \
  tests/unit/unit_handoff >/dev/null
# suite threads: api_threads, and unit_handoff (the parallel parser's
# handoff under stress; a quarter of its default loads, and
# the watchdog's limits tripled, as TSan runs it about ten times slower)
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 HEAPSCOPE_STRESS=0.25 \
  HEAPSCOPE_WATCHDOG_SCALE=3 \
  meson test -C build-tsan --print-errorlogs --no-rebuild --suite threads
# the parallel parser's block mode: workers read their own blocks
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  meson test -C build-tsan --print-errorlogs --no-rebuild unit-blocks
# the dominator tree's predecessor lists, filled in two halves on two
# threads (graphs of 2^16 vertices and more)
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  build-tsan/tests/api/api_dominators test_large_graphs

step "bounded fuzzing (${HEAPSCOPE_FUZZ_SECONDS:-30} s per target, two at a time, clang, ASan+UBSan)"
FUZZ_JOBS=2 scripts/fuzz.sh "${HEAPSCOPE_FUZZ_SECONDS:-30}"
finish
