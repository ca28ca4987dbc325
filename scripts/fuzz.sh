#!/usr/bin/env bash
# Build the libFuzzer targets (clang + ASan/UBSan + libFuzzer, in build-fuzz)
# and fuzz each target for SECONDS, on a scratch copy of its seed corpus.
#
# Usage: scripts/fuzz.sh [--real] [SECONDS] [TARGET...]
#   --real   also seed every target with slices of real heap dumps, written
#            here by the installed Ruby (tests/fuzz/real_seeds.rb: whole
#            dumps of a varied heap, plain and full: true, cut into runs of
#            lines of up to 16 KB); for the longer campaigns, e.g.
#            `nice -n 15 scripts/fuzz.sh --real 720` (12 minutes a target,
#            an hour in all; tests/fuzz/README.md keeps the results)
#   SECONDS  per target, default 60
#   TARGET   fuzz_parse, fuzz_gzip, fuzz_line, fuzz_index, fuzz_blocks, fuzz_budget
#            (default: all; one after another, or FUZZ_JOBS at a time)
#
# Environment:
#   FUZZ_BUILD  build directory (default build-fuzz; configured if missing)
#   FUZZ_WORK   scratch directory (default: a new mktemp -d); it keeps, per
#               target, corpus/ (seeds + what the run found), artifacts/
#               (crash-*, leak-*, timeout-*, oom-* reproducers) and fuzz.log
#   FUZZ_JOBS   targets fuzzed at a time (default 1); scripts/test.sh uses 2
#   FUZZ_BUILD_ONLY  set: configure and build, do not fuzz (scripts/test.sh
#               builds while other tests run)
#   FUZZ_ARGS   extra libFuzzer flags, after the script's own (a repeated
#               flag wins), e.g. "-entropic=1" or "-jobs=2 -workers=2"
#
# Exit status: 0 if no target found anything, 1 if any run crashed or left a
# reproducer in artifacts/, 2 on usage or build errors.
#
# Seeds: tests/fuzz/corpus/<target>/ (fuzz_gzip, fuzz_line and fuzz_blocks
# also start from the fuzz_parse seeds), and with --real the real-dump
# slices.  Saved reproducers (crash-*, leak-*, timeout-*, oom-*) are left
# out of the seeds: they are for the fuzz-replay meson tests, which run them.
# Nothing is suppressed or stepped around: any sanitizer report, invariant
# violation, hang (the harnesses' watchdog prints every thread's stack after
# 20 s; libFuzzer's -timeout is 25 s) or leak fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

# Everything in a function, read whole before it runs: editing or updating
# this file during a long run cannot derail the run.
main() {
  REAL=0
  if [ "${1:-}" = --real ]; then REAL=1; shift; fi
  SECS=${1:-60}
  JOBS=${FUZZ_JOBS:-1}
  if ! [[ "$JOBS" =~ ^[1-9][0-9]*$ ]]; then
    echo "fuzz: FUZZ_JOBS must be a positive number, not '$JOBS'" >&2
    exit 2
  fi
  if [ $# -gt 0 ]; then shift; fi
  if ! [[ "$SECS" =~ ^[0-9]+$ ]] || [ "$SECS" -eq 0 ]; then
    echo "usage: scripts/fuzz.sh [--real] [SECONDS] [fuzz_parse|fuzz_gzip|fuzz_line|fuzz_index|fuzz_blocks|fuzz_budget ...]" >&2
    exit 2
  fi
  ALL=(fuzz_parse fuzz_gzip fuzz_line fuzz_index fuzz_blocks fuzz_budget)
  TARGETS=("$@")
  [ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL[@]}")
  for t in "${TARGETS[@]}"; do
    case " ${ALL[*]} " in
      *" $t "*) ;;
      *) echo "fuzz: unknown target '$t' (expected: ${ALL[*]})" >&2; exit 2 ;;
    esac
  done

  BUILD=${FUZZ_BUILD:-build-fuzz}
  if [ ! -f "$BUILD/build.ninja" ]; then
    echo "fuzz: configuring $BUILD (clang, ASan+UBSan, libFuzzer, zlib only)"
    # zlib only (no ISA-L, whose assembly ASan cannot see): the gzip
    # fuzzer then reaches our zlib reader with its recovery of truncated
    # streams; scripts/test.sh also runs every suite in this build.
    CC=clang meson setup "$BUILD" -Dfuzz=true -Db_sanitize=address,undefined \
      -Db_lundef=false -Dbuildtype=debugoptimized -Disal=disabled >/dev/null || exit 2
  fi
  if ! ninja -C "$BUILD" "${TARGETS[@]/#/tests/fuzz/}" heapscope >/dev/null; then
    echo "fuzz: build failed (is $BUILD configured with CC=clang -Dfuzz=true?)" >&2
    exit 2
  fi
  if [ -n "${FUZZ_BUILD_ONLY:-}" ]; then
    echo "fuzz: built ${TARGETS[*]} in $BUILD"
    return 0
  fi

  WORK=${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/heapscope-fuzz.XXXXXX")}
  mkdir -p "$WORK"
  DICT=tests/fuzz/heapdump.dict

  # Stop at the first error of any kind, with a stack trace; leaks count.
  # No suppressions: every bug the fuzzers found is fixed, and its
  # reproducer is replayed by meson (suite fuzz-replay).
  export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:symbolize=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:symbolize=1}

  REALDIR=
  if [ "$REAL" = 1 ]; then
    command -v ruby >/dev/null || { echo "fuzz: --real needs ruby" >&2; exit 2; }
    REALDIR="$WORK/real"
    ruby tests/fuzz/real_seeds.rb "$REALDIR" --max-bytes 16000 --slices 60 || exit 2
    # fuzz_index reads index images: index a few slices with the CLI
    mkdir -p "$REALDIR/index"
    local n=0 f
    for f in "$REALDIR"/slices/*start* "$REALDIR"/slices/*class* "$REALDIR"/slices/*random-1.json \
             "$REALDIR"/slices/*random-2.json "$REALDIR"/slices/*none*; do
      [ -f "$f" ] || continue
      n=$((n + 1))
      "$BUILD/heapscope" index --out "$REALDIR/index/real-$n.hsx" "$f" >/dev/null 2>&1 || true
    done
  fi
  real_seed() { # real_seed TARGET DEST: the real-dump slices, as TARGET reads them
    local f b
    [ -n "$REALDIR" ] || return 0
    case "$1" in
      fuzz_index) cp "$REALDIR"/index/*.hsx "$2/" 2>/dev/null || true ;;
      fuzz_blocks) # 3 option bytes first: strict/limit/threads, then the block size
        for f in "$REALDIR"/slices/*; do
          b=$(basename "$f")
          { printf '\000\100\000'; cat "$f"; } >"$2/b64-$b"
          { printf '\011\007\000'; cat "$f"; } >"$2/b7-strict-3t-$b"
        done ;;
      *) cp "$REALDIR"/slices/* "$2/" ;;
    esac
  }

  seed() { # seed DIR DEST: copy seeds, leaving out saved reproducers
    local f
    for f in "$1"/*; do
      [ -f "$f" ] || continue
      case "$(basename "$f")" in
        crash-*|leak-*|timeout-*|oom-*) ;;
        *) cp "$f" "$2/$(basename "$1")-$(basename "$f")" ;;
      esac
    done
  }

  # One target's run; its summary line goes to $WORK/<target>/result and
  # its exit status says whether it found anything.
  run_target() {
    local t=$1 dir="$WORK/$1" rc found last execs speed cov ft corp line
    mkdir -p "$dir/corpus" "$dir/artifacts"
    seed "tests/fuzz/corpus/$t" "$dir/corpus"
    if [ "$t" != fuzz_parse ] && [ "$t" != fuzz_index ]; then
      seed tests/fuzz/corpus/fuzz_parse "$dir/corpus"
    fi
    real_seed "$t" "$dir/corpus"
    echo "fuzz: $t for ${SECS}s (work: $dir)"
    rc=0
    # -entropic=0: the entropic scheduler's bookkeeping took two thirds of
    # the time with these harnesses (many features per input); without it
    # fuzz_parse runs twice as fast at the same coverage.
    # shellcheck disable=SC2086
    "$BUILD/tests/fuzz/$t" -max_total_time="$SECS" -max_len=65536 -timeout=25 \
      -entropic=0 -dict="$DICT" -artifact_prefix="$dir/artifacts/" -print_final_stats=1 \
      ${FUZZ_ARGS:-} "$dir/corpus" >"$dir/fuzz.log" 2>&1 || rc=$?
    found=$(find "$dir/artifacts" -type f | wc -l)
    last=$(grep -E '^#[0-9]+' "$dir/fuzz.log" | tail -1 || true)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/fuzz.log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/fuzz.log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")
    line="$t: ${execs:-?} execs, ${speed:-?} exec/s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
    if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
      line="$line: FOUND $found reproducer(s) in $dir/artifacts (exit $rc)"
      grep -E -m1 -A12 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|invariant violated' \
        "$dir/fuzz.log" >&2 || tail -n 30 "$dir/fuzz.log" >&2
      rc=1
    fi
    echo "fuzz: $line"
    echo "$line" >"$dir/result"
    return "$rc"
  }

  # FUZZ_JOBS targets at a time (each libFuzzer run uses one core)
  status=0
  for t in "${TARGETS[@]}"; do
    if [ "$JOBS" -gt 1 ]; then
      while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
      run_target "$t" &
    else
      run_target "$t" || true
    fi
  done
  wait
  summary=()
  for t in "${TARGETS[@]}"; do
    if [ -f "$WORK/$t/result" ]; then
      line=$(cat "$WORK/$t/result")
    else
      line="$t: no result (the run did not finish)"
    fi
    case "$line" in *FOUND*|*"no result"*) status=1 ;; esac
    summary+=("$line")
  done

  echo
  echo "fuzz: summary (${SECS}s per target; logs and corpora in $WORK)"
  printf '  %s\n' "${summary[@]}"
  exit $status
}

main "$@"
