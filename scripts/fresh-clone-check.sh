#!/usr/bin/env bash
# A fresh clone is all a user needs: copy this repository's files (git
# ls-files: tracked and new, not ignored; as in the working tree) into an
# empty temporary directory, with no ../shared beside it and no
# HEAPSCOPE_CORPUS, and run the README's quick start and quick tests there:
#
#   scripts/quickstart.sh && scripts/test.sh --quick
#
# Then read the copy's meson test log: every test must have passed, except
# the corpus-only tests (CORPUS_ONLY), which must have been skipped, and the
# WASI Rubies' version tests (versions-3.2 .. versions-head), which may be
# skipped only where this machine cannot install them (no Node, npm or
# registry; the copy shares their cache); and the copy must have
# run the same tests as this tree's build/ defines.  Fails (exit 1)
# otherwise, naming the tests.  scripts/test.sh runs it.
#
# Usage: scripts/fresh-clone-check.sh [--keep]   (--keep: leave the copy)
set -euo pipefail
cd "$(dirname "$0")/.."
# the tests that need ../shared/corpus and skip (77) without it
CORPUS_ONLY=(corpus-reference timeline-corpus threads-corpus)

keep=0
[ "${1:-}" = "--keep" ] && keep=1
base=$(mktemp -d "${TMPDIR:-/tmp}/heapscope-fresh.XXXXXX")
cleanup() { if [ $keep = 1 ]; then echo "fresh-clone-check: kept $base"; else rm -rf "$base"; fi; }
trap cleanup EXIT
copy=$base/heapscope
mkdir "$copy" "$base/tmp"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$copy"
else   # an unpacked release: everything but build directories
  tar --exclude='./build*' --exclude='./.git' -cf - . | tar -xf - -C "$copy"
fi
if [ -e "$base/shared" ] || [ -e "$copy/../shared" ]; then
  echo "fresh-clone-check: $base/shared exists" >&2; exit 1
fi
echo "fresh-clone-check: $(find "$copy" -type f | wc -l) files copied to $copy (no ../shared, no HEAPSCOPE_CORPUS)"

t0=$(date +%s)
rc=0
(
  cd "$copy"
  export TMPDIR=$base/tmp
  unset HEAPSCOPE_CORPUS
  scripts/quickstart.sh
  scripts/test.sh --quick
) > "$base/run.log" 2>&1 || rc=$?
t1=$(date +%s)
echo "fresh-clone-check: quick start + scripts/test.sh --quick: exit $rc, $((t1 - t0)) s"
if [ $rc -ne 0 ]; then echo "--- last lines of the run:"; tail -40 "$base/run.log"; fi

log=$copy/build/meson-logs/testlog.json
want=$(meson test -C build --list 2>/dev/null | sed -n 's/^[^ ]* \/ //p' | sort)
# The WASI Rubies' version tests may skip only where they cannot be
# installed here (no Node, npm or registry): the copy shares the cache.
wasi=installed
if python3 tests/versions/rubies.py install 2>&1 >/dev/null | grep -q 'not installed'; then
  wasi=missing
fi
python3 - "$log" "$rc" "${CORPUS_ONLY[*]}" "$want" "$wasi" <<'PY'
import json, sys
log, rc, corpus_only, want = sys.argv[1], int(sys.argv[2]), set(sys.argv[3].split()), sys.argv[4].split()
may_skip = {n for n in want if n.startswith('versions-') and n != 'versions-native'} \
    if sys.argv[5] == 'missing' else set()
try:
    results = [json.loads(l) for l in open(log)]
except OSError as e:
    print('fresh-clone-check: FAIL: no test log (%s): the quick start or the build failed' % e)
    sys.exit(1)
# names in the log are "project:suite / test"
got = {r['name'].split(' / ')[-1]: r['result'] for r in results}
problems = []
for name, res in sorted(got.items()):
    if name in corpus_only:
        if res != 'SKIP':
            problems.append('%s: %s, but without ../shared it must be skipped (did it find a corpus?)'
                            % (name, res))
    elif name in may_skip and res == 'SKIP':
        pass
    elif res != 'OK':
        problems.append('%s: %s%s' % (name, res, ' (it must not need ../shared)' if res == 'SKIP' else ''))
missing = sorted(set(want) - set(got))
if missing:
    problems.append('not run in the copy: %s' % ', '.join(missing))
if rc != 0:
    problems.append('the quick start or scripts/test.sh --quick exited %d' % rc)
ok = sum(1 for n, r in got.items() if r == 'OK')
skipped = sorted(n for n, r in got.items() if r == 'SKIP')
print('fresh-clone-check: %d tests: %d passed, skipped %s (corpus-only: %s)'
      % (len(got), ok, ', '.join(skipped) or 'none', ', '.join(sorted(corpus_only))))
longest = sorted(results, key=lambda r: -r.get('duration', 0))[:8]
print('fresh-clone-check: longest tests: %s' % ', '.join(
    '%s %.0f s' % (r['name'].split(' / ')[-1], r.get('duration', 0)) for r in longest))
for p in problems:
    print('fresh-clone-check: FAIL: ' + p)
for r in results:
    if r['name'].split(' / ')[-1] in {p.split(':')[0] for p in problems}:
        print('--- %s (%s) stdout, last lines:' % (r['name'], r['result']))
        print('\n'.join((r.get('stdout') or '').splitlines()[-15:]))
sys.exit(1 if problems else 0)
PY
