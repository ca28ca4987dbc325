#!/usr/bin/env bash
# Generate small real dumps with the shared corpus generators (cached in
# $HEAPSCOPE_WORK) and check `heapscope summary/tally --json` against the
# reference checker on each, plain and gzip, plus the external dumps of
# other Ruby versions.  Exit 77 (skip) only if the corpus is absent.
set -euo pipefail
: "${HEAPSCOPE:?}" "${HEAPSCOPE_CORPUS:?}" "${HEAPSCOPE_WORK:?}"
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$HEAPSCOPE_CORPUS/reference.py" ]; then
  echo "corpus not found at $HEAPSCOPE_CORPUS"; exit 77
fi
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
       "$HEAPSCOPE_CORPUS"/external/*.json "$HEAPSCOPE_CORPUS"/external/*.heap)
for f in "${dumps[@]}"; do
  python3 "$here/compare_reference.py" "$HEAPSCOPE" "$HEAPSCOPE_CORPUS/reference.py" "$f" || fail=1
done
# streamed tallies (no model) must equal tallies of the loaded heap, every key
for f in "$data"/leak_s1/heap_3.json "$data"/edge/format_edge.json "$data"/leak_s005_gz/heap_1.json.gz \
         "$HEAPSCOPE_CORPUS"/external/heapy_my_dump_1.json; do
  for k in type class file file:line file:line:class method generation gem; do
    if ! cmp -s <("$HEAPSCOPE" tally --json --top 0 --by "$k" "$f") \
                <("$HEAPSCOPE" tally --stream --json --top 0 --by "$k" "$f"); then
      echo "DIFF $f: tally --stream --by $k differs from the loaded heap's"; fail=1
    fi
  done
done
# the 3-snapshot diff against truth.json (every planted object) and the
# reference identity diff (nothing outside it)
for d in "$data"/leak_s1 "$data"/leak_s005_gz "$data"/leak_s3_gz; do
  python3 "$here/check_diff.py" "$HEAPSCOPE" "$HEAPSCOPE_CORPUS/reference.py" "$d" || fail=1
  python3 "$here/check_suspects.py" "$HEAPSCOPE" "$HEAPSCOPE_CORPUS/reference.py" "$d" || fail=1
done
# dominators: idoms and retained sizes equal the reference's on every small dump
for f in "$data"/leak_s1/heap_3.json "$data"/leak_s005_gz/heap_2.json.gz "$data"/edge/format_edge.json \
         "$data"/edge/full.json "$data"/edge/since.json "$data"/edge/stress.json \
         "$HEAPSCOPE_CORPUS"/external/*.json "$HEAPSCOPE_CORPUS"/external/*.heap; do
  python3 "$here/check_dominators.py" "$HEAPSCOPE" "$HEAPSCOPE_CORPUS/reference.py" "$f" || fail=1
done
# parallel parsing: identical output with 1, 2 and 8 threads; --max-line 64K
# makes the chunks small (many chunk boundaries) and treats the same long
# lines as too long on every path; strict-mode errors name the same line
nothr() { grep -v -E '"(seconds|mb_per_s|model_bytes|index_bytes|bytes_per_object)"'; }
for f in "$data"/edge/stress.json "$data"/edge/format_edge.json "$data"/leak_s005_gz/heap_1.json.gz \
         "$data"/leak_s1/heap_3.json; do
  want=$("$HEAPSCOPE" summary --json --max-line 65536 --threads 1 "$f" | nothr | md5sum)
  for t in 2 8; do
    got=$("$HEAPSCOPE" summary --json --max-line 65536 --threads $t "$f" | nothr | md5sum)
    [ "$want" = "$got" ] || { echo "DIFF $f: --threads $t differs from --threads 1"; fail=1; }
  done
  want=$("$HEAPSCOPE" tally --json --top 0 --max-line 65536 --threads 1 "$f" | md5sum)
  got=$("$HEAPSCOPE" tally --json --top 0 --max-line 65536 --threads 8 "$f" | md5sum)
  [ "$want" = "$got" ] || { echo "DIFF $f: tally with 8 threads differs"; fail=1; }
  # the streaming fold on the parallel parser: same rows as on one thread
  # and as the tally of the loaded model, for every kind of key
  for k in type class file:line:class gem generation; do
    want=$("$HEAPSCOPE" tally --json --top 0 --by $k --max-line 65536 --threads 1 "$f" | md5sum)
    for t in 1 2 8; do
      got=$("$HEAPSCOPE" tally --stream --json --top 0 --by $k --max-line 65536 --threads $t "$f" | md5sum)
      [ "$want" = "$got" ] || { echo "DIFF $f: tally --stream --by $k --threads $t differs from the loaded tally"; fail=1; }
    done
  done
done
# the 3-dump diff streams its bases, on the parallel parser too
dd="$data"/leak_s1
want=$("$HEAPSCOPE" diff --json --threads 1 "$dd"/heap_1.json "$dd"/heap_2.json "$dd"/heap_3.json | nothr | md5sum)
got=$("$HEAPSCOPE" diff --json --threads 8 "$dd"/heap_1.json "$dd"/heap_2.json "$dd"/heap_3.json | nothr | md5sum)
[ "$want" = "$got" ] || { echo "DIFF diff with 8 threads differs from 1 thread"; fail=1; }
s1=$("$HEAPSCOPE" tally --stream --strict --max-line 65536 --threads 1 "$data"/edge/format_edge.json 2>&1 || true)
s8=$("$HEAPSCOPE" tally --stream --strict --max-line 65536 --threads 8 "$data"/edge/format_edge.json 2>&1 || true)
[ "$s1" = "$s8" ] || { echo "streamed strict error differs with threads: '$s1' vs '$s8'"; fail=1; }
e1=$("$HEAPSCOPE" summary --strict --max-line 65536 --threads 1 "$data"/edge/format_edge.json 2>&1 || true)
e8=$("$HEAPSCOPE" summary --strict --max-line 65536 --threads 8 "$data"/edge/format_edge.json 2>&1 || true)
[ "$e1" = "$e8" ] || { echo "strict error differs with threads: '$e1' vs '$e8'"; fail=1; }
# redact: same answers, no string value left
red=$HEAPSCOPE_WORK/redacted.json.gz
"$HEAPSCOPE" redact "$data"/edge/format_edge.json "$red" 2>/dev/null
# (the dump's name: in "path" and at the start of each warning's message)
strip() { grep -v -E '"(path|message|seconds|mb_per_s|input_bytes|bytes|gzip|model_bytes|index_bytes)"'; }
if ! cmp -s <("$HEAPSCOPE" summary --json "$data"/edge/format_edge.json | strip) \
            <("$HEAPSCOPE" summary --json "$red" | strip); then
  echo "redact: the redacted dump gives a different summary"; fail=1
fi
left=$(zcat "$red" | grep -o '"value":"[^"]' | grep -vc '"value":"\[' || true)
if [ "$left" != "0" ]; then echo "redact: $left string values left in"; fail=1; fi
# the C examples agree with the CLI
if [ -n "${HEAPSCOPE_EXAMPLES:-}" ] && [ -x "$HEAPSCOPE_EXAMPLES/leak_diff" ]; then
  d=$data/leak_s1
  want=$("$HEAPSCOPE" diff --json "$d"/heap_1.json "$d"/heap_2.json "$d"/heap_3.json |
         python3 -c 'import json,sys; l=json.load(sys.stdin)["leaked"]; print("leaked: %d objects, %d bytes" % (l["count"], l["memsize"]))')
  got=$("$HEAPSCOPE_EXAMPLES/leak_diff" "$d"/heap_1.json "$d"/heap_2.json "$d"/heap_3.json | head -1)
  [ "$want" = "$got" ] || { echo "examples/c/leak_diff: '$got' != '$want'"; fail=1; }
  want=$("$HEAPSCOPE" tally --json --top 20 "$d"/heap_3.json |
         python3 -c 'import json,sys; [print("%10d %12d  %s" % (r["count"], r["memsize"], r["key"])) for r in json.load(sys.stdin)["groups"]]')
  got=$("$HEAPSCOPE_EXAMPLES/bleak_tally" "$d"/heap_3.json | tail -n +2)
  [ "$want" = "$got" ] || { echo "examples/c/bleak_tally disagrees with heapscope tally"; fail=1; }
fi
n=${#dumps[@]}
if [ $fail -ne 0 ]; then echo "corpus: some dumps disagree with reference.py"; exit 1; fi
echo "corpus: all $n dumps agree with reference.py"
