#!/usr/bin/env python3
"""The Ruby version matrix: our workloads run by Debian's own Ruby
("native", 3.1 on Debian 12) and by CRuby compiled for WASI (npm
@ruby/X-wasm-wasi, run under Node) 3.2, 3.3, 3.4, 4.0 and head.

  rubies.py install          install the pinned npm packages into the cache
                             (scripts/setup.sh runs it; exit 0 with a
                             message when npm or the registry is missing)
  rubies.py sets VERSION...  generate (or find in the cache) each version's
                             sets; print VERSION NAME DIR per set
  rubies.py versions         the versions, one a line

The npm packages are pinned exactly by package.json and package-lock.json
(beside this file): `npm ci` installs them into
CACHE/ruby-wasm/<hash of the lock>/.  A version's dumps are generated once
and kept in CACHE/dumps/VERSION/NAME-<key>/, the key a hash of what makes
them: the Ruby (package version and lock, or `ruby -v`), the workload's
sources and the arguments.  So the test run of the main build generates
them and the sanitizer build and the fresh-clone check reuse them; a
change to the workload or a new package version makes new ones.  CACHE is
$HEAPSCOPE_CACHE, else $XDG_CACHE_HOME/heapscope, else ~/.cache/heapscope.

Python 3 standard library only; Node (18 or later) and npm for the WASI
versions.  Nothing here calls heapscope.
"""
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'workloads'))
import workloads  # noqa: E402

VERSIONS = ['native', '3.2', '3.3', '3.4', '4.0', 'head']
WASM_PACKAGE = {v: '@ruby/%s-wasm-wasi' % v for v in VERSIONS if v != 'native'}
HOST_PACKAGE = '@ruby/wasm-wasi'
NODE_FLAGS = ['--single-threaded-gc', '--no-incremental-marking', '--no-warnings']

# The sets of each version: name -> (workload kind, arguments).  The leak
# series also writes the full: / shapes: false / since: variants.
SETS = {
    'leak': ('leak', ['--scale', '1', '--seed', '42', '--variants']),
    'timeline': ('timeline', ['--steps', '6', '--warmup', '5', '--scale', '1', '--seed', '42']),
}
KEEP = 2  # cached sets kept per version and name besides the current one


class Unavailable(Exception):
    """A version cannot run here (no Node, no npm, registry unreachable)."""


def cache_dir():
    d = os.environ.get('HEAPSCOPE_CACHE')
    if not d:
        base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
        d = os.path.join(base, 'heapscope')
    os.makedirs(d, exist_ok=True)
    return d


def lock_hash(src=HERE):
    h = hashlib.sha256()
    for f in ('package.json', 'package-lock.json'):
        with open(os.path.join(src, f), 'rb') as fh:
            h.update(fh.read())
    return h.hexdigest()[:16]


def pinned_version(pkg):
    with open(os.path.join(HERE, 'package.json')) as f:
        return json.load(f)['dependencies'][pkg]


def npm_root(src=HERE, name='ruby-wasm'):
    return os.path.join(cache_dir(), name, lock_hash(src))


def node_modules():
    return os.path.join(npm_root(), 'node_modules')


def npm_installed(src, name, packages):
    root = npm_root(src, name)
    return os.path.exists(os.path.join(root, '.installed')) and all(
        os.path.exists(os.path.join(root, 'node_modules', p, 'package.json')) for p in packages)


def installed():
    return npm_installed(HERE, 'ruby-wasm', list(WASM_PACKAGE.values()) + [HOST_PACKAGE])


def node_version():
    node = shutil.which('node')
    if not node:
        return None
    r = subprocess.run([node, '--version'], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def npm_install(src, name, packages, quiet=False):
    """npm ci of the packages pinned by SRC/package.json and
    package-lock.json into CACHE/NAME/<hash of the lock>/ (once; concurrent
    callers wait for one another); returns its node_modules.  Install
    scripts are not run (puppeteer's browser download, for one).  Raises
    Unavailable with the reason."""
    root = npm_root(src, name)
    if npm_installed(src, name, packages):
        return os.path.join(root, 'node_modules')
    if not node_version():
        raise Unavailable('no node on PATH (scripts/setup.sh installs Debian\'s nodejs)')
    npm = shutil.which('npm')
    if not npm:
        raise Unavailable('no npm on PATH (scripts/setup.sh installs Debian\'s npm)')
    os.makedirs(os.path.dirname(root), exist_ok=True)
    with open(root + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if npm_installed(src, name, packages):
            return os.path.join(root, 'node_modules')
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
        for f in ('package.json', 'package-lock.json'):
            shutil.copy(os.path.join(src, f), root)
        t0 = time.time()
        env = dict(os.environ, PUPPETEER_SKIP_DOWNLOAD='1')
        r = subprocess.run([npm, 'ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel', 'error'],
                           cwd=root, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            shutil.rmtree(root, ignore_errors=True)
            raise Unavailable('npm ci of %s failed (registry unreachable?): %s'
                              % (', '.join(sorted(packages)), (r.stderr or r.stdout).strip()[-400:]))
        with open(os.path.join(root, '.installed'), 'w') as f:
            f.write('%s\n' % time.strftime('%Y-%m-%d %H:%M:%S'))
        if not quiet:
            print('npm: installed %s into %s in %.0f s' % (', '.join(sorted(packages)), root, time.time() - t0),
                  file=sys.stderr)
    return os.path.join(root, 'node_modules')


def install(quiet=False):
    """npm ci of the pinned ruby.wasm packages into the cache (once;
    concurrent callers wait for one another).  Raises Unavailable with the
    reason."""
    return npm_install(HERE, 'ruby-wasm', list(WASM_PACKAGE.values()) + [HOST_PACKAGE], quiet)


def runtime_id(version):
    """What identifies the Ruby that writes the dumps (part of the cache key)."""
    if version == 'native':
        r = subprocess.run(['ruby', '--disable-gems', '-e', 'print RUBY_DESCRIPTION'], capture_output=True, text=True)
        if r.returncode != 0:
            raise Unavailable('no native ruby')
        return 'native ' + r.stdout
    return '%s@%s lock %s' % (WASM_PACKAGE[version], pinned_version(WASM_PACKAGE[version]), lock_hash())


def command(version, out, script_args):
    """The command that runs a workload script (kind's script name first in
    script_args) for `version`, writing into the host directory `out`."""
    script, args = script_args[0], script_args[1:]
    if version == 'native':
        return ['ruby', '--disable-gems', os.path.join(workloads.WORKLOADS, script), '--out', out] + args
    nm = install()
    wasm = os.path.join(nm, WASM_PACKAGE[version], 'dist', 'ruby+stdlib.wasm')
    return (['node'] + NODE_FLAGS + [os.path.join(HERE, 'ruby_wasm.mjs'), '--modules', nm, '--wasm', wasm,
             '--dir', '%s:/workloads' % workloads.WORKLOADS, '--dir', '%s:/out' % out, '--',
             '/workloads/' + script, '--out', '/out'] + args)


def ensure(version, name):
    """The directory of set `name` of `version`, generated if it is not in
    the cache.  Raises Unavailable when the version cannot run here."""
    kind, args = SETS[name]
    key = hashlib.sha256(json.dumps([runtime_id(version), kind, args, workloads.sources_digest()])
                         .encode()).hexdigest()[:16]
    base = os.path.join(cache_dir(), 'dumps', version)
    os.makedirs(base, exist_ok=True)
    d = os.path.join(base, '%s-%s' % (name, key))
    with open(os.path.join(base, name + '.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(d, '.generated')):
            os.utime(d)
            return d
        tmp = tempfile.mkdtemp(prefix='.%s-' % name, dir=base)
        cmd = command(version, tmp, [workloads.SCRIPTS[kind]] + args)
        t0 = time.time()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors='replace')
        secs = time.time() - t0
        if r.returncode != 0 or not os.path.exists(os.path.join(tmp, 'truth.json')):
            shutil.rmtree(tmp, ignore_errors=True)
            raise SystemExit('rubies: %s %s failed (exit %d): %s\n%s'
                             % (version, name, r.returncode, ' '.join(cmd), r.stdout[-2000:]))
        with open(os.path.join(tmp, '.generated'), 'w') as f:
            json.dump({'command': cmd, 'seconds': round(secs, 2), 'output': r.stdout.strip()}, f)
        shutil.rmtree(d, ignore_errors=True)
        os.rename(tmp, d)
        print('rubies: generated %s %s in %.1f s: %s' % (version, name, secs, r.stdout.strip()), file=sys.stderr)
        prune(base, name, d)
    return d


def prune(base, name, keep):
    """Drop all but the KEEP most recently used other sets of this name."""
    others = [os.path.join(base, e) for e in os.listdir(base)
              if e.startswith(name + '-') and os.path.join(base, e) != keep]
    others.sort(key=lambda p: os.path.getmtime(p), reverse=True)
    for p in others[KEEP:]:
        shutil.rmtree(p, ignore_errors=True)


def generation_seconds(d):
    try:
        with open(os.path.join(d, '.generated')) as f:
            return json.load(f).get('seconds')
    except (OSError, ValueError):
        return None


def main(argv):
    if argv[:1] == ['install']:
        try:
            print(install())
        except Unavailable as e:
            print('rubies: the WASI Rubies are not installed: %s; the version tests will skip them' % e,
                  file=sys.stderr)
        return 0
    if argv[:1] == ['versions']:
        print('\n'.join(VERSIONS))
        return 0
    if argv[:1] == ['sets'] and len(argv) > 1 and all(v in VERSIONS for v in argv[1:]):
        for v in argv[1:]:
            for name in SETS:
                print(v, name, ensure(v, name))
        return 0
    print('usage: rubies.py install | versions | sets VERSION...  (versions: %s)' % ' '.join(VERSIONS),
          file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
