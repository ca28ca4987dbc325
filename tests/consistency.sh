# Checks that need no expected answer, only agreement between heapscope's
# own paths: sourced by tests/corpus/run_corpus.sh (the corpus dumps) and
# tests/workloads/run_consistency.sh (our workload dumps).  Each function
# prints a line per disagreement and sets fail=1.  Needs $HEAPSCOPE.

# drop the lines of --json output that depend on timing and threads
cons_nothr() { grep -v -E '"(seconds|mb_per_s|model_bytes|index_bytes|bytes_per_object)"'; }

# streamed tallies (no model) equal tallies of the loaded heap, every key
cons_stream_vs_loaded() { # FILE...
  local f k
  for f in "$@"; do
    for k in type class file file:line file:line:class method generation gem; do
      if ! cmp -s <("$HEAPSCOPE" tally --json --top 0 --by "$k" "$f") \
                  <("$HEAPSCOPE" tally --stream --json --top 0 --by "$k" "$f"); then
        echo "DIFF $f: tally --stream --by $k differs from the loaded heap's"; fail=1
      fi
    done
  done
}

# parallel parsing: identical output with 1, 2 and 8 threads; --max-line 64K
# makes the chunks small (many chunk boundaries) and treats the same long
# lines as too long on every path
cons_threads() { # FILE...
  local f t k want got
  for f in "$@"; do
    want=$("$HEAPSCOPE" summary --json --max-line 65536 --threads 1 "$f" | cons_nothr | md5sum)
    for t in 2 8; do
      got=$("$HEAPSCOPE" summary --json --max-line 65536 --threads $t "$f" | cons_nothr | md5sum)
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
}

# the 3-dump diff streams its bases, on the parallel parser too
cons_diff_threads() { # H1 H2 H3
  local want got
  want=$("$HEAPSCOPE" diff --json --threads 1 "$@" | cons_nothr | md5sum)
  got=$("$HEAPSCOPE" diff --json --threads 8 "$@" | cons_nothr | md5sum)
  [ "$want" = "$got" ] || { echo "DIFF diff of $*: 8 threads differ from 1 thread"; fail=1; }
}

# redact: the same answers, no string value left
cons_redact() { # IN OUT.json.gz
  local strip left
  "$HEAPSCOPE" redact "$1" "$2" 2>/dev/null
  # (the dump's name: in "path" and at the start of each warning's message)
  strip() { grep -v -E '"(path|message|seconds|mb_per_s|input_bytes|bytes|gzip|model_bytes|index_bytes)"'; }
  if ! cmp -s <("$HEAPSCOPE" summary --json "$1" | strip) <("$HEAPSCOPE" summary --json "$2" | strip); then
    echo "redact: the redacted $1 gives a different summary"; fail=1
  fi
  left=$(zcat "$2" | grep -o '"value":"[^"]' | grep -vc '"value":"\[' || true)
  if [ "$left" != "0" ]; then echo "redact: $left string values left in $2"; fail=1; fi
}

# the C examples (examples/c, built in $HEAPSCOPE_EXAMPLES) agree with the CLI
cons_examples() { # H1 H2 H3
  local want got
  if [ -z "${HEAPSCOPE_EXAMPLES:-}" ] || [ ! -x "$HEAPSCOPE_EXAMPLES/leak_diff" ]; then
    echo "examples/c not built in '${HEAPSCOPE_EXAMPLES:-}'"; fail=1; return
  fi
  want=$("$HEAPSCOPE" diff --json "$1" "$2" "$3" |
         python3 -c 'import json,sys; l=json.load(sys.stdin)["leaked"]; print("leaked: %d objects, %d bytes" % (l["count"], l["memsize"]))')
  got=$("$HEAPSCOPE_EXAMPLES/leak_diff" "$1" "$2" "$3" | head -1)
  [ "$want" = "$got" ] || { echo "examples/c/leak_diff: '$got' != '$want'"; fail=1; }
  want=$("$HEAPSCOPE" tally --json --top 20 "$3" |
         python3 -c 'import json,sys; [print("%10d %12d  %s" % (r["count"], r["memsize"], r["key"])) for r in json.load(sys.stdin)["groups"]]')
  got=$("$HEAPSCOPE_EXAMPLES/bleak_tally" "$3" | tail -n +2)
  [ "$want" = "$got" ] || { echo "examples/c/bleak_tally disagrees with heapscope tally on $3"; fail=1; }
}
