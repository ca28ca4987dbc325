#!/usr/bin/env bash
# heapscope's own paths agree on our workload dumps (tests/consistency.sh):
# streamed and loaded tallies for every key, 1/2/8 parser threads with small
# chunks, the 3-dump diff on 1 and 8 threads, redact, the C examples; and a
# gzip copy of a plain dump gives the same summary.  Needs no expected
# answer; the 'workload-leaks' test checks the answers against the truth.
set -euo pipefail
: "${HEAPSCOPE:?}" "${HEAPSCOPE_WORK:?}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../consistency.sh"
sets=$(python3 "$here/workloads.py" leak_s1 leak_s005_gz leak_s3_gz tl_s1)
s1=$(sed -n 1p <<<"$sets"); s005=$(sed -n 2p <<<"$sets"); s3=$(sed -n 3p <<<"$sets"); tl=$(sed -n 4p <<<"$sets")
fail=0
gz=$HEAPSCOPE_WORK/workload_heap_1.json.gz
gzip -6 -n -c "$s1"/heap_1.json > "$gz"
# (the dump's name: in "path" and at the start of each warning's message)
strip() { grep -v -E '"(path|message|seconds|mb_per_s|input_bytes|gzip)"'; }
cmp -s <("$HEAPSCOPE" summary --json "$s1"/heap_1.json | strip) <("$HEAPSCOPE" summary --json "$gz" | strip) ||
  { echo "DIFF: a gzip copy of $s1/heap_1.json gives another summary"; fail=1; }
cons_stream_vs_loaded "$s1"/heap_3.json "$gz" "$s005"/heap_1.json.gz "$s3"/heap_3.json.gz "$tl"/step_10.json
cons_threads "$s1"/heap_3.json "$s005"/heap_1.json.gz "$s3"/heap_2.json.gz
cons_diff_threads "$s1"/heap_1.json "$s1"/heap_2.json "$s1"/heap_3.json
cons_diff_threads "$s3"/heap_1.json.gz "$s3"/heap_2.json.gz "$s3"/heap_3.json.gz
cons_redact "$s1"/heap_3.json "$HEAPSCOPE_WORK"/workload_redacted.json.gz
cons_examples "$s1"/heap_1.json "$s1"/heap_2.json "$s1"/heap_3.json
if [ $fail -ne 0 ]; then echo "workloads: heapscope disagrees with itself"; exit 1; fi
echo "workloads: streamed = loaded, 1/2/8 threads, diff bases, redact, C examples: all agree"
