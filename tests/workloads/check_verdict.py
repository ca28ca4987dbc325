#!/usr/bin/env python3
"""No verdict where the dumps cannot give one, on our own workload's dumps
(leak_s1: heap_1, heap_2, heap_3 of one process, allocation tracing on).

Expectations come from the dumps themselves (Python): the order of the
dumps is that of each dump's newest generation.

  1. diff and suspects on C B A: stdout starts with "NO VERDICT:", says
     the right order (the generations' order, computed here), and the JSON
     has "no_verdict" with the same; on A B C there is no such line and
     "no_verdict" is null;
  2. file times: copies of A B C whose mtimes run backwards (as after scp
     or kubectl cp) are not "out of order": the dumps' generations say the
     order is right;
  3. a since: dump (B's objects newer than A, no ROOT records, as
     ObjectSpace.dump_all(since:) writes) is not "another process";
  4. report on two dumps: a "new since A" card, never "leaked".

Usage: HEAPSCOPE=/path/to/heapscope check_verdict.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402

CLI = os.environ['HEAPSCOPE']
check = workloads.Checks()


def run(*args):
    p = subprocess.run([CLI, *args, '--no-progress'], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    return p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')


def newest(path):
    return max((r.get('generation') or 0) for r in workloads.records(path)
               if r.get('type') not in workloads.NOT_OBJECTS)


def main():
    d = workloads.ensure_set('leak_s1')
    files = [os.path.join(d, 'heap_%d.json' % i) for i in (1, 2, 3)]
    gens = {f: newest(f) for f in files}
    right = sorted(files, key=lambda f: gens[f])
    check(right == files, 'the generations put A B C in order: %r' % list(gens.values()))
    rev = files[::-1]
    # 1. diff and suspects on C B A, and on A B C
    for cmd in ('diff', 'suspects'):
        rc, out, err = run(cmd, *rev)
        first = out.splitlines()[0] if out else ''
        check(rc == 0 and first.startswith('NO VERDICT: ')
              and ('the right order is: ' + ' '.join(right)) in first,
              '%s C B A: stdout starts with NO VERDICT and the right order (%r)' % (cmd, first[:300]))
        rc, out, err = run(cmd, '--json', *rev)
        j = json.loads(out)
        check(j.get('no_verdict') and ('the right order is: ' + ' '.join(right)) in j['no_verdict'],
              '%s --json C B A: no_verdict with the right order' % cmd)
        rc, out, err = run(cmd, *files)
        check(rc == 0 and 'NO VERDICT' not in out, '%s A B C: a verdict' % cmd)
        j = json.loads(run(cmd, '--json', *files)[1])
        check('no_verdict' in j and j['no_verdict'] is None, '%s --json A B C: no_verdict null' % cmd)
    rc, out, err = run('diff', files[0], files[0], files[0])
    check(out.startswith('NO VERDICT: ') and 'same file' in out.splitlines()[0],
          'diff A A A: NO VERDICT first (%r)' % out[:200])

    tmp = tempfile.mkdtemp(prefix='verdict-', dir=os.environ.get('HEAPSCOPE_WORK'))
    try:
        # 2. copies whose file times run backwards
        copies = []
        for i, f in enumerate(files):
            c = os.path.join(tmp, 'copy_%d.json' % (i + 1))
            shutil.copyfile(f, c)
            t = 2000000000 - 3600 * i        # A newest on disk, C oldest
            os.utime(c, (t, t))
            copies.append(c)
        rc, out, err = run('diff', '--json', *copies)
        j = json.loads(out)
        check(j['no_verdict'] is None and 'out of order' not in err
              and not [w for w in j['warnings'] if 'mtime' in w['message']],
              'file times backwards, generations in order: not "out of order" (%r)' % err[:300])
        # ... but where the dumps carry no generations, file times decide
        untraced = []
        for i, f in enumerate(files[:2]):
            c = os.path.join(tmp, 'untraced_%d.json' % (i + 1))
            with open(c, 'w') as fh:
                for r in workloads.records(f):
                    for k in ('generation', 'file', 'line', 'method'):
                        r.pop(k, None)
                    fh.write(json.dumps(r) + '\n')
            t = 2000000000 - 3600 * i
            os.utime(c, (t, t))
            untraced.append(c)
        rc, out, err = run('diff', *untraced)
        check('file mtime' in err and 'out of order' in err,
              'no generations: file times still say the order is backwards (%r)' % err[:300])
        # 3. a since: dump of B (its objects newer than A, no ROOT records)
        since = os.path.join(tmp, 'since_b.json')
        with open(since, 'w') as fh:
            for r in workloads.records(files[1]):
                if r.get('type') == 'ROOT':
                    continue
                if r.get('type') in workloads.NOT_OBJECTS or (r.get('generation') or 0) > gens[files[0]]:
                    fh.write(json.dumps(r) + '\n')
        rc, out, err = run('diff', '--json', files[0], since)
        j = json.loads(out)
        check(j['no_verdict'] is None and 'different processes' not in err
              and any(w['code'] == 'partial' for w in j['warnings']),
              'a since: dump is not another process (%r)' % err[:300])
        # 4. report on two dumps: "new since A", not "leaked"
        page = os.path.join(tmp, 'two.html')
        rc, out, err = run('report', '--no-waste', '--out', page, files[0], files[1])
        html = open(page, encoding='utf-8').read()
        check(rc == 0 and 'new since A' in html and '>leaked<' not in html,
              'report on two dumps: "new since A", no "leaked" card')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return check.finish()


if __name__ == '__main__':
    sys.exit(main())
