#!/usr/bin/env bash
# Generate small real dumps with the shared corpus generators (cached in
# $HEAPSCOPE_WORK) and check `heapscope summary/tally --json` against the
# reference checker on each, plain and gzip, plus the external dumps of
# other Ruby versions and our own workloads' dumps (examples/workloads).
# Exit 77 (skip) only if the corpus is absent.
set -euo pipefail
: "${HEAPSCOPE:?}" "${HEAPSCOPE_CORPUS:?}" "${HEAPSCOPE_WORK:?}"
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$HEAPSCOPE_CORPUS/reference.py" ]; then
  echo "SKIP: no corpus at $HEAPSCOPE_CORPUS (../shared/corpus, or -Dcorpus_dir): not checked:"
  echo "  summary, tally, diff, suspects, dominators vs reference.py on the corpus generators' dumps"
  echo "  and on our workloads' dumps,"
  echo "  the edge-case dumps of gen_edge.rb and the external dumps of other Ruby versions"
  echo "  (our own workloads are checked by the 'workloads' suite)"
  exit 77
fi
. "$here/../consistency.sh"
data=$HEAPSCOPE_WORK/corpus
mkdir -p "$data"
gen() { # dir, generator args...
  local d=$data/$1; shift
  if [ ! -f "$d/.done" ]; then
    rm -rf "$d"; mkdir -p "$d"
    ruby "$@" --out "$d" >/dev/null
    touch "$d/.done"
  fi
}
gen leak_s1 "$HEAPSCOPE_CORPUS/gen_leak.rb" --scale 1 --seed 42
gen leak_s005_gz "$HEAPSCOPE_CORPUS/gen_leak.rb" --scale 0.05 --seed 43 --gzip
gen leak_s3_gz "$HEAPSCOPE_CORPUS/gen_leak.rb" --scale 3 --seed 44 --gzip
gen edge "$HEAPSCOPE_CORPUS/gen_edge.rb"
gen tl "$HEAPSCOPE_CORPUS/gen_timeline.rb" --steps 3 --scale 1
# our own workloads (examples/workloads), checked here by reference.py too
ours=$(python3 "$here/../workloads/workloads.py" leak_s1 leak_s005_gz tl_s1)
o1=$(sed -n 1p <<<"$ours"); o005=$(sed -n 2p <<<"$ours"); otl=$(sed -n 3p <<<"$ours")
# gzip copies of plain dumps must give identical answers
for f in "$data"/leak_s1/heap_1.json "$data"/edge/format_edge.json; do
  [ -f "$f.gz" ] || gzip -6 -k -n "$f"
done
fail=0
dumps=("$data"/leak_s1/heap_*.json "$data"/leak_s1/heap_1.json.gz
       "$data"/leak_s005_gz/heap_*.json.gz
       "$data"/edge/format_edge.json "$data"/edge/format_edge.json.gz
       "$data"/edge/full.json "$data"/edge/since.json "$data"/edge/stress.json
       "$data"/tl/step_*.json
       "$HEAPSCOPE_CORPUS"/external/*.json "$HEAPSCOPE_CORPUS"/external/*.heap
       "$o1"/heap_*.json "$o005"/heap_1.json.gz "$otl"/step_01.json "$otl"/step_10.json)
for f in "${dumps[@]}"; do
  python3 "$here/compare_reference.py" "$HEAPSCOPE" "$HEAPSCOPE_CORPUS/reference.py" "$f" || fail=1
done
# heapscope's own paths agree (tests/consistency.sh): streamed and loaded
# tallies, 1/2/8 parser threads, the 3-dump diff's streamed bases, redact,
# the C examples
cons_stream_vs_loaded "$data"/leak_s1/heap_3.json "$data"/edge/format_edge.json \
  "$data"/leak_s005_gz/heap_1.json.gz "$HEAPSCOPE_CORPUS"/external/heapy_my_dump_1.json
# the 3-snapshot diff against truth.json (every planted object) and the
# reference identity diff (nothing outside it)
for d in "$data"/leak_s1 "$data"/leak_s005_gz "$data"/leak_s3_gz "$o1" "$o005"; do
  python3 "$here/check_diff.py" "$HEAPSCOPE" "$HEAPSCOPE_CORPUS/reference.py" "$d" || fail=1
  python3 "$here/check_suspects.py" "$HEAPSCOPE" "$HEAPSCOPE_CORPUS/reference.py" "$d" || fail=1
done
# dominators: idoms and retained sizes equal the reference's on every small dump
for f in "$data"/leak_s1/heap_3.json "$data"/leak_s005_gz/heap_2.json.gz "$data"/edge/format_edge.json \
         "$data"/edge/full.json "$data"/edge/since.json "$data"/edge/stress.json \
         "$HEAPSCOPE_CORPUS"/external/*.json "$HEAPSCOPE_CORPUS"/external/*.heap "$o1"/heap_3.json; do
  python3 "$here/check_dominators.py" "$HEAPSCOPE" "$HEAPSCOPE_CORPUS/reference.py" "$f" || fail=1
done
cons_threads "$data"/edge/stress.json "$data"/edge/format_edge.json "$data"/leak_s005_gz/heap_1.json.gz \
  "$data"/leak_s1/heap_3.json
dd="$data"/leak_s1
cons_diff_threads "$dd"/heap_1.json "$dd"/heap_2.json "$dd"/heap_3.json
# strict-mode errors name the same line on every path
s1=$("$HEAPSCOPE" tally --stream --strict --max-line 65536 --threads 1 "$data"/edge/format_edge.json 2>&1 || true)
s8=$("$HEAPSCOPE" tally --stream --strict --max-line 65536 --threads 8 "$data"/edge/format_edge.json 2>&1 || true)
[ "$s1" = "$s8" ] || { echo "streamed strict error differs with threads: '$s1' vs '$s8'"; fail=1; }
e1=$("$HEAPSCOPE" summary --strict --max-line 65536 --threads 1 "$data"/edge/format_edge.json 2>&1 || true)
e8=$("$HEAPSCOPE" summary --strict --max-line 65536 --threads 8 "$data"/edge/format_edge.json 2>&1 || true)
[ "$e1" = "$e8" ] || { echo "strict error differs with threads: '$e1' vs '$e8'"; fail=1; }
cons_redact "$data"/edge/format_edge.json "$HEAPSCOPE_WORK"/redacted.json.gz
if [ -n "${HEAPSCOPE_EXAMPLES:-}" ] && [ -x "$HEAPSCOPE_EXAMPLES/leak_diff" ]; then
  cons_examples "$data"/leak_s1/heap_1.json "$data"/leak_s1/heap_2.json "$data"/leak_s1/heap_3.json
fi
n=${#dumps[@]}
if [ $fail -ne 0 ]; then echo "corpus: some dumps disagree with reference.py"; exit 1; fi
echo "corpus: all $n dumps agree with reference.py"
