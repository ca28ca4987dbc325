#!/usr/bin/env python3
"""heapscope check --budget on our own workload, suite 'check'.

Each rule kind is tested on the leak workload's dumps (leak_s1, and the
gzip set leak_s005_gz) against an independent count over the dumps in
Python (workloads.py): the live objects and memsize of the last dump with
the dumper's objects left out by the documented rule, per class (the class
label), per gem (the gem rule of tally --by gem, for the application's and
Ruby's files), per site (a relative FILE:LINE:CLASS matching the dump's
absolute path), what the roots keep alive (a walk over references and
class edges from every ROOT), and the leak of the 3-dump series (the
identity diff), in all and per group ([leaked.site."lib/desk.rb:L:C"], the
leaked site with the most objects, which the workload's truth says is a
planted leak's with that count; [leaked.class."Desk::Subscription"]).

  1. a budget whose limits are the expected values: exit 0, every rule
     within budget with the expected actual value (JSON);
  2. the same limits minus one: exit 1, every rule over by exactly 1, the
     text says "by 1 object" / "by 1 B" and the verdict;
  3. the example budgets (examples/budgets): desk.toml passes, desk-no-leaks.toml
     fails (the planted leaks);
  4. exit 2: a budget that is not valid (FILE:LINE: key: ...), a missing
     budget, no --budget, two dumps, [leaked] with one dump, a dump that
     cannot be read, an unknown option;
  5. no verdict, exit 2: a [leaked] rule on dumps that cannot answer it
     (C B A: out of time order by the dumps' own generations; one dump
     three times; dumps of two processes), said first and last in the text
     and as "verdict": "none" with the reason in JSON; the same dumps
     without a [leaked] rule still get a verdict.

Usage: HEAPSCOPE=/path/to/heapscope check_budget.py
Needs ruby (the workload) and the Python standard library.
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402

CLI = os.environ['HEAPSCOPE']
REPO = workloads.REPO
check = workloads.Checks()
OWN = ('/heapscope/snapshot.rb', '/heapscope/fork.rb', '/heapscope/auto.rb')


def is_dumper(r):
    """heapscope's documented rule for the dumper's objects."""
    f = r.get('file') or ''
    return r.get('method') == 'dump_all' or os.path.basename(f) == 'objspace.rb' or f.endswith(OWN)


def gem_of(f):
    """The gem key (tally --by gem) of the files these workloads have."""
    if not f:
        return '(none)'
    if f.startswith('<internal:'):
        return '(ruby)'
    m = re.findall(r'/gems/([^/]+-[0-9a-f][^/]*)/', f)
    if m:
        return m[-1]
    if re.search(r'/lib/(?:[^/]+/)?ruby/\d+\.\d+\.\d+/', f):
        return '(stdlib)'
    return '(app)'


TRACER_STRUCT = 'ObjectTracing/allocation_info_tracer'


def is_tracer(r):
    """Ruby's allocation tracer (the workloads trace allocations)."""
    return r.get('type') == 'DATA' and r.get('struct') == TRACER_STRUCT


def expected(files):
    """What every rule of the budgets below must measure, from the dumps:
    the dumper's objects and Ruby's allocation tracer left out (a rule
    naming the tracer, class."<allocation tracer>", still measures it)."""
    last = workloads.Dump(files[-1])
    want = {}
    live = [r for r in last.objects.values() if not is_dumper(r) and not is_tracer(r)]
    want['total.objects'] = len(live)
    want['total.memsize'] = sum(r.get('memsize', 0) for r in live)
    by_class = collections.defaultdict(lambda: [0, 0])
    by_gem = collections.defaultdict(lambda: [0, 0])
    by_site = collections.defaultdict(lambda: [0, 0])
    for r in live:
        label = last.class_label(r)
        for table, key in ((by_class, label), (by_gem, gem_of(r.get('file'))),
                           (by_site, '%s:%d:%s' % (r.get('file') or '(none)', r.get('line') or 0,
                                                   label))):
            table[key][0] += 1
            table[key][1] += r.get('memsize', 0)
    for cls in ('String', 'Desk::Comment'):
        want['class."%s".objects' % cls], want['class."%s".memsize' % cls] = by_class[cls]
    for gem in ('(app)', '(stdlib)'):
        want['gem."%s".objects' % gem], want['gem."%s".memsize' % gem] = by_gem[gem]
    # the application site with the most objects, as a budget names it:
    # relative to the workloads directory, whatever the checkout's path
    app = [k for k in by_site if '/examples/workloads/lib/' in k]
    top = max(app, key=lambda k: (by_site[k][0], k))
    rel = top.split('/examples/workloads/', 1)[1]
    want['site."%s".objects' % rel], want['site."%s".memsize' % rel] = by_site[top]
    tracer = [r for r in last.objects.values() if is_tracer(r) and not is_dumper(r)]
    want['class."<allocation tracer>".objects'] = len(tracer)
    want['class."<allocation tracer>".memsize'] = sum(r.get('memsize', 0) for r in tracer)
    # reachable from the roots, over references and class edges, without
    # passing through the tracer: what stays is the heap without the tracer
    # and what it alone retains (the objects it dominates)
    skip = {r['address'] for r in tracer}
    seen, stack = set(skip), []
    for refs in last.roots.values():
        for a in refs:
            if a in last.objects and a not in seen:
                seen.add(a)
                stack.append(a)
    while stack:
        r = last.objects[stack.pop()]
        for b in (r.get('references') or []) + ([r['class']] if 'class' in r else []):
            if b in last.objects and b not in seen:
                seen.add(b)
                stack.append(b)
    want['total.retained'] = sum(last.objects[a].get('memsize', 0) for a in seen - skip)
    if len(files) == 3:
        d1, d2 = workloads.Dump(files[0]), workloads.Dump(files[1])
        leak = [last.objects[a] for a in workloads.identity_diff(d1, d2, last)
                if not is_dumper(last.objects[a]) and not is_tracer(last.objects[a])]
        want['leaked.objects'] = len(leak)
        want['leaked.memsize'] = sum(r.get('memsize', 0) for r in leak)
        # per group: the leaked application site with the most objects (a
        # planted leak's, checked against the truth in main) and a class
        lsite = collections.defaultdict(lambda: [0, 0])
        lclass = collections.defaultdict(lambda: [0, 0])
        for r in leak:
            label = last.class_label(r)
            for table, key in ((lsite, '%s:%d:%s' % (r.get('file') or '(none)', r.get('line') or 0,
                                                     label)), (lclass, label)):
                table[key][0] += 1
                table[key][1] += r.get('memsize', 0)
        app = [k for k in lsite if '/examples/workloads/lib/' in k]
        top = max(app, key=lambda k: (lsite[k][0], k))
        rel = top.split('/examples/workloads/', 1)[1]
        want['leaked.site."%s".objects' % rel], want['leaked.site."%s".memsize' % rel] = lsite[top]
        want['leaked.class."Desk::Subscription".objects'], \
            want['leaked.class."Desk::Subscription".memsize'] = lclass['Desk::Subscription']
    return want


def budget_text(want, delta):
    """A budget of every rule in `want`, each limit the value + delta."""
    sections = collections.OrderedDict()
    for rule, v in want.items():
        section, metric = rule.rsplit('.', 1)
        sections.setdefault(section, []).append('%s = %d' % (metric, v + delta))
    return ''.join('[%s]\n%s\n' % (s, '\n'.join(lines)) for s, lines in sections.items())


def run(*args):
    p = subprocess.run([CLI, 'check', *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=600)
    return p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')


def write(path, text):
    with open(path, 'w') as f:
        f.write(text)
    return path


def check_set(name, files, tmp):
    want = expected(files)
    print('--- %s: %s' % (name, ', '.join('%s=%d' % kv for kv in want.items())))
    check(all(v > 0 for v in want.values()), '%s: every expected value is above 0' % name)
    exact = write(os.path.join(tmp, name + '-exact.toml'), budget_text(want, 0))
    rc, out, err = run('--json', '--budget', exact, *files)
    doc = json.loads(out) if out else {}
    got = {r['rule']: r['actual'] for r in doc.get('rules', [])}
    check(rc == 0 and doc.get('within_budget') is True,
          '%s: limits = the expected values: exit 0, within budget (exit %d) %s' % (name, rc, err))
    check(got == want, '%s: every rule measures the expected value%s' % (
        name, '' if got == want else ': ' + str({k: (got.get(k), v) for k, v in want.items()
                                                 if got.get(k) != v})))
    check(all(r['found'] and not r['over'] and r['excess'] == 0 for r in doc.get('rules', [])),
          '%s: every group found, none over' % name)

    tight = write(os.path.join(tmp, name + '-tight.toml'), budget_text(want, -1))
    rc, out, err = run('--json', '--budget', tight, *files)
    doc = json.loads(out) if out else {}
    check(rc == 1 and doc.get('over_count') == len(want) and
          all(r['over'] and r['excess'] == 1 and r['actual'] == want[r['rule']]
              for r in doc.get('rules', [])),
          '%s: limits one below: exit 1, all %d rules over by exactly 1 (exit %d)'
          % (name, len(want), rc))
    rc, out, err = run('--budget', tight, *files)
    n_obj = sum(1 for k in want if k.endswith('.objects'))
    check(rc == 1 and out.count(' by 1 object') == n_obj
          and out.count(' by 1 B') == len(want) - n_obj
          and 'OVER BUDGET: %d of %d rules exceeded' % (len(want), len(want)) in out,
          '%s: the text says each rule is over by 1 object or 1 B, and the verdict' % name)
    tracer_checks(name, files, tmp, want)
    return want


def tracer_checks(name, files, tmp, want):
    """Ruby's allocation tracer: left out of the totals by default and said
    (JSON excluded_tracer, text); --keep-tracer puts exactly it back; a rule
    naming it measures it either way."""
    tn = want['class."<allocation tracer>".objects']
    tm = want['class."<allocation tracer>".memsize']
    keys = ('total.objects', 'total.memsize', 'class."<allocation tracer>".objects',
            'class."<allocation tracer>".memsize')
    b = write(os.path.join(tmp, name + '-tracer.toml'), budget_text({k: want[k] for k in keys}, 0))
    rc, out, err = run('--json', '--budget', b, files[-1])
    doc = json.loads(out) if out else {}
    check(rc == 0 and doc.get('excluded_tracer') == {'count': tn, 'memsize': tm}
          and doc.get('total') == {'count': want['total.objects'], 'memsize': want['total.memsize']},
          '%s: the totals leave out the tracer (%d object, %d B), said as excluded_tracer'
          % (name, tn, tm))
    rc, out, err = run('--json', '--keep-tracer', '--budget', b, files[-1])
    doc = json.loads(out) if out else {}
    got = {r['rule']: r['actual'] for r in doc.get('rules', [])}
    check(rc == 1 and doc.get('excluded_tracer') == {'count': 0, 'memsize': 0}
          and got == {keys[0]: want[keys[0]] + tn, keys[1]: want[keys[1]] + tm,
                      keys[2]: tn, keys[3]: tm},
          '%s: --keep-tracer: the totals grow by exactly the tracer, the tracer\'s rule is the '
          'same (%s)' % (name, got))
    rc, out, err = run('--budget', b, files[-1])
    check(rc == 0 and 'left out: the allocation tracer (trace_object_allocations), 1 object' in out,
          '%s: the text says the tracer was left out' % name)


def lev(a, b):
    """Edit distance (insert, delete, substitute: 1 each)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[len(b)]


def main():
    tmp = tempfile.mkdtemp(prefix='check-budget-', dir=os.environ.get('HEAPSCOPE_WORK'))
    d = workloads.ensure_set('leak_s1')
    files = [os.path.join(d, 'heap_%d.json' % i) for i in (1, 2, 3)]
    want = check_set('leak_s1', files, tmp)
    # the per-group [leaked] rules against the workload's own truth: the
    # site is a planted leak's, with the count the workload planted
    truth = workloads.truth(d)['leaked']['by_site']
    for rule, v in want.items():
        m = re.match(r'^leaked\.(site|class)\."(.*)"\.objects$', rule)
        if not m:
            continue
        if m.group(1) == 'site':
            planted = [n for k, n in truth.items() if k.endswith('/' + m.group(2))]
        else:
            planted = [sum(n for k, n in truth.items() if k.endswith(':' + m.group(2)))]
        check(planted == [v], 'leak_s1: %s = %d, the truth\'s planted count %s' % (rule, v, planted))
    rc, out, err = run('--budget', write(os.path.join(tmp, 'leaked-gone.toml'),
                                         '[leaked.site."lib/nowhere.rb:1:String"]\nobjects = 0\n'),
                       *files)
    check(rc == 0 and '(no such leaked.site in the dump)' in out and 'within budget' in out,
          'leaked.site of a site that leaked nothing: 0, not found, within budget (exit %d)' % rc)
    dz = workloads.ensure_set('leak_s005_gz')
    check_set('leak_s005_gz', [workloads.dump_path(dz, 'heap_%d.json' % i) for i in (1, 2, 3)],
              tmp)

    # the example budgets
    ex = os.path.join(REPO, 'examples', 'budgets')
    rc, out, err = run('--budget', os.path.join(ex, 'desk.toml'), *files)
    check(rc == 0 and 'within budget: 8 rules, none exceeded' in out,
          'examples/budgets/desk.toml: within budget, exit 0 (exit %d) %s' % (rc, err))
    rc, out, err = run('--budget', os.path.join(ex, 'desk-no-leaks.toml'), *files)
    check(rc == 1 and 'OVER leaked.objects' in out and 'by %d objects' % want['leaked.objects'] in out
          and 'OVER class."Desk::Subscription".objects' in out,
          'examples/budgets/desk-no-leaks.toml: over budget by the leak, exit 1 (exit %d)' % rc)

    # exit 2: no verdict
    bad = write(os.path.join(tmp, 'bad.toml'), '[total]\nobjects = 5\n\n[class."String"]\n'
                'memsize = "5 parsecs"\n')
    rc, out, err = run('--budget', bad, files[2])
    check(rc == 2 and '%s:5: memsize: unknown unit in "5 parsecs"' % bad in err and not out,
          'a budget that is not valid: exit 2, FILE:LINE: key in the message (%r)' % err.strip())
    leak_only = write(os.path.join(tmp, 'leak.toml'), '[total]\nobjects = 1\n[leaked]\nobjects = 0\n')
    site_one = write(os.path.join(tmp, 'leak-site.toml'),
                     '[leaked.site."lib/desk.rb:348:String"]\nobjects = 0\n')
    for text, msg in (('[leaked."String"]\nobjects = 1\n', '[leaked] takes no name (per group'),
                      ('[leaked.site."desk.rb"]\nobjects = 1\n', 'a site is "FILE:LINE:CLASS"'),
                      ('[leaked.class."String"]\nretained = 1\n', 'unknown key in [leaked.class'),
                      ('[leaked.gem."x"]\nobjects = 1\n', "expected ']'")):
        rc, out, err = run('--budget', write(os.path.join(tmp, 'bad-leaked.toml'), text), *files)
        check(rc == 2 and msg in err, 'bad per-group [leaked] section %r: exit 2, %r (%r)'
              % (text.split('\n')[0], msg, err.strip()))
    cases = [
        (['--budget', os.path.join(tmp, 'missing.toml'), files[2]], 'missing.toml'),
        ([files[2]], 'check needs --budget FILE'),
        (['--budget', leak_only, files[0], files[2]], 'check takes one DUMP, or three'),
        (['--budget', leak_only, files[2]], 'leak.toml:3: leaked: needs three dumps'),
        (['--budget', site_one, files[2]], 'leak-site.toml:1: leaked: needs three dumps'),
        (['--budget', leak_only, files[0], files[1], os.path.join(tmp, 'nope.json')], 'nope.json'),
        (['--budget', leak_only, '--bogus', files[2]], "unknown option '--bogus'"),
        (['--budget', leak_only, '--top', '3', files[2]], 'check has no --top option'),
    ]
    for args, msg in cases:
        rc, out, err = run(*args)
        check(rc == 2 and msg in err, 'exit 2 and "%s" for check %s (exit %d: %r)'
              % (msg, ' '.join(os.path.basename(a) for a in args), rc, err.strip()[:200]))
    # no verdict: a [leaked] rule on a series that cannot answer it.  The
    # order is the dumps' own: the newest generation of each (Python).
    newest = [max((r.get('generation') or 0) for r in workloads.records(f)) for f in files]
    check(newest[0] < newest[1] < newest[2], 'leak_s1: generations rise A < B < C %r' % newest)
    other = workloads.dump_path(dz, 'heap_3.json')
    nv = [([files[2], files[1], files[0]], 'out of time order'),
          ([files[0], files[0], files[0]], 'the same dump more than once'),
          ([files[0], files[1], other], 'dumps of different processes')]
    for dumps, why in nv:
        rc, out, err = run('--budget', leak_only, *dumps)
        lines = out.strip().splitlines()
        check(rc == 2 and lines and lines[0].startswith('NO VERDICT: ') and why in lines[0]
              and lines[-1].startswith('no verdict: ') and 'within budget' not in out,
              'no verdict on %s: exit 2, said first and last (exit %d: %r)' % (why, rc, out[:300]))
        rc, out, err = run('--json', '--budget', leak_only, *dumps)
        j = json.loads(out) if out.strip() else {}
        check(rc == 2 and j.get('verdict') == 'none' and why in (j.get('no_verdict') or '')
              and j.get('within_budget') is False,
              'no verdict on %s: JSON verdict "none" and the reason (exit %d)' % (why, rc))
        total_only = write(os.path.join(tmp, 'total.toml'), '[total]\nobjects = 100_000_000\n')
        rc, out, err = run('--budget', total_only, dumps[-1])
        check(rc == 0 and 'within budget' in out,
              'without [leaked] the last dump still gets a verdict (exit %d)' % rc)
    rc, out, err = run('--json', '--budget', leak_only, *files)
    j = json.loads(out)
    check(j['verdict'] in ('within', 'over') and j['no_verdict'] is None,
          'A B C in order: a verdict (%r)' % j['verdict'])

    # a rule naming a class the dump does not have: a warning with the
    # nearest class label of the dump (edit distance, computed here), and
    # no verdict with --strict-names
    labels = set()
    last = workloads.Dump(files[2])
    for r in last.objects.values():
        labels.add(last.class_label(r))
    typo = 'Desk::Tiket'
    near = [l for l in labels if l != typo and lev(typo, l) == min(lev(typo, x) for x in labels)]
    bud = write(os.path.join(tmp, 'typo.toml'), '[class."%s"]\nobjects = 10\n' % typo)
    rc, out, err = run('--budget', bud, files[2])
    check(rc == 0 and near and ('the dump has no class "%s"; closest: %s' % (typo, near[0])) in err,
          'a class the dump does not have: warned with the closest %r (%r)' % (near, err[-300:]))
    rc, out, err = run('--strict-names', '--json', '--budget', bud, files[2])
    j = json.loads(out)
    check(rc == 2 and j['verdict'] == 'none' and near[0] in j['no_verdict'],
          '--strict-names: no verdict, exit 2 (exit %d)' % rc)

    rc, out, err = run('--help')
    check(rc == 0 and 'Exit status: 0 within budget, 1 over budget, 2 no verdict' in out,
          'check --help says the exit status')
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    return check.finish()


if __name__ == '__main__':
    sys.exit(main())
