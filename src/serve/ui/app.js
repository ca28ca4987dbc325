// heapscope serve: the page.  Every string of the dump reaches the page as
// a text node (el() below, textContent): nothing from the server is ever
// parsed as HTML.  One view per URL (#/overview, #/tally/KEY, #/class/NAME,
// #/members/KEY/ROW, #/object/0xADDR, #/domtree, #/domtree/0xADDR, #/leaks,
// #/timeline, #/search?q=TEXT), so a link can be shared.
'use strict';

let info = null;
let generation = 0; // the view being shown; answers for an older one are dropped

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, String(v));
  }
  for (const k of kids.flat()) {
    if (k === null || k === undefined || k === false) continue;
    e.appendChild(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

const enc = encodeURIComponent;
function bytes(n) {
  if (n === undefined || n === null) return '';
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0, v = Number(n);
  while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return i ? v.toFixed(1) + ' ' + u[i] : v + ' B';
}
function count(n) { return n === undefined || n === null ? '' : Number(n).toLocaleString('en-US'); }
function num(v, f) { return el('td', { class: 'n' }, f ? f(v) : v); }

// Links: an address is always a link to its object, a class to its objects.
function addrLink(a) { return el('a', { href: '#/object/' + a, class: 'mono addr' }, a); }
function classLink(c) { return el('a', { href: '#/class/' + enc(c), class: 'cls' }, c); }
function objLabel(o) {
  if (!o) return el('span', {}, '');
  return el('span', {}, addrLink(o.address), ' ', o.type ? el('span', { class: 'muted' }, o.type + ' ') : null,
    o.class !== undefined ? classLink(o.class) : (o.label !== undefined ? classLink(o.label) : null),
    o.label !== undefined && o.class !== undefined && o.label !== o.class ? el('span', { class: 'muted' }, ' (' + o.label + ')') : null);
}

async function api(path, onPending) {
  for (;;) {
    const r = await fetch('/api/' + path, { credentials: 'same-origin' });
    let body;
    try { body = await r.json(); } catch (e) { body = { error: 'HTTP ' + r.status }; }
    if (r.status === 202) {
      if (onPending) onPending(body);
      await new Promise(res => setTimeout(res, 400));
      continue;
    }
    if (!r.ok) throw new Error(body.error || ('HTTP ' + r.status));
    return body;
  }
}

// A section filled when its answer comes: "computing ..." meanwhile.
function section(title, path, fill, level) {
  const gen = generation;
  const body = el('div', { class: 'pending' }, 'loading…');
  const s = el('section', {}, title ? el(level || 'h2', {}, title) : null, body);
  api(path, p => { if (gen === generation) body.textContent = 'computing ' + p.what + '… ' + p.seconds + ' s'; })
    .then(d => { if (gen !== generation) return; body.className = ''; body.textContent = ''; fill(body, d); })
    .catch(e => { if (gen !== generation) return; body.className = 'bad'; body.textContent = e.message; });
  return s;
}

function table(cols, rows, opts) {
  // cols: [{title, num, get(row) -> Node|string, sort(row) -> value}]
  const tbody = el('tbody');
  const t = el('table', { class: (opts && opts.cls) || '' });
  let sortCol = -1, asc = false;
  const draw = () => {
    tbody.textContent = '';
    let rs = rows.slice();
    const f = opts && opts.filter && opts.filter.value.toLowerCase();
    if (f) rs = rs.filter(r => String(opts.key(r)).toLowerCase().includes(f));
    if (sortCol >= 0 && cols[sortCol].sort) {
      const g = cols[sortCol].sort;
      rs.sort((a, b) => { const x = g(a), y = g(b); return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1); });
    }
    for (const r of rs) tbody.appendChild(el('tr', {}, cols.map(c => c.num ? num(c.get(r)) : el('td', { class: c.cls || '' }, c.get(r)))));
  };
  const head = el('tr', {}, cols.map((c, i) => el('th', { scope: 'col' }, c.sort
    ? el('button', { type: 'button', onclick: () => { asc = sortCol === i ? !asc : false; sortCol = i; draw(); } }, c.title)
    : c.title)));
  t.appendChild(el('thead', {}, head));
  t.appendChild(tbody);
  if (opts && opts.filter) opts.filter.addEventListener('input', draw);
  draw();
  return t;
}

function warnings(d) {
  return (d.warnings || []).map(w => el('p', { class: 'warn' }, 'warning: ' + w.message));
}

// ---- views ----

function viewOverview(v) {
  v.appendChild(el('h2', {}, 'Overview'));
  v.appendChild(section(null, 'summary?limit=15', (b, d) => {
    b.appendChild(el('div', { class: 'cards', id: 'summary-cards' },
      card('objects', count(d.total.count)), card('memsize', bytes(d.total.memsize)),
      card('references', count(d.references)), card('dangling references', count(d.dangling.references)),
      card('loaded in', d.load.seconds + ' s' + (d.load.from_index ? ' (saved index)' : ''))));
    b.appendChild(el('div', {}, warnings(d)));
    b.appendChild(el('h3', {}, 'By type'));
    b.appendChild(tallyTable(d.by_type.groups, 'type'));
    b.appendChild(el('h3', {}, 'Top classes'));
    b.appendChild(tallyTable(d.by_class.groups, 'class'));
  }));
  if (info.leaks) v.appendChild(section('Leak verdict', 'suspects?limit=5', (b, d) => {
    b.appendChild(el('p', { id: 'leak-verdict' }, count(d.leaked.count) + ' objects (' + bytes(d.leaked.memsize) +
      ') born between A and B are still alive in C. ', el('a', { href: '#/leaks' }, 'Suspects')));
  }));
  v.appendChild(section('Top retainers', 'retained?limit=10', (b, d) => {
    b.appendChild(table([
      { title: 'object', get: o => objLabel(o) },
      { title: 'retained', num: 1, get: o => bytes(o.retained.memsize) },
      { title: 'objects', num: 1, get: o => count(o.retained.count) },
      { title: 'tree', get: o => el('a', { href: '#/domtree/' + o.address }, 'subtree') }], d.objects));
  }));
  v.appendChild(section('Waste', 'waste?limit=5', (b, d) => {
    // the waste document (docs/JSON.md, kind "waste"): "recoverable" is
    // what the findings would save, "total" the whole heap
    const r = d.recoverable, t = d.total;
    b.appendChild(el('p', { id: 'waste-total', 'data-bytes': r.memsize }, 'could shrink by ' + bytes(r.memsize) +
      ' (' + (100 * r.share).toFixed(1) + '% of ' + bytes(t.memsize) + ') in ' + count(d.group_count) + ' places'));
    for (const w of d.warnings || [])
      if (w.code === 'no_values')
        b.appendChild(el('p', { id: 'waste-no-values', class: 'muted' },
          'duplicate strings not compared: the dumps are served without their values (heapscope serve --values)'));
  }));
}

function card(k, v) { return el('div', { class: 'card' }, el('div', { class: 'v' }, v), el('div', { class: 'k' }, k)); }

function rowLink(by, key) {
  if (by === 'class') return classLink(key);
  return el('a', { href: '#/members/' + enc(by) + '/' + enc(key), class: 'row' }, key);
}

function tallyTable(groups, by, filter) {
  const max = Math.max(1, ...groups.map(g => g.memsize));
  return table([
    { title: by, cls: 'key', get: g => rowLink(by, g.key), sort: g => g.key },
    { title: 'objects', num: 1, get: g => count(g.count), sort: g => g.count },
    { title: 'memsize', num: 1, get: g => bytes(g.memsize), sort: g => g.memsize },
    { title: '', get: g => el('span', { class: 'bar', style: null, 'data-w': g.memsize / max }) }],
    groups, { cls: 'tally', filter, key: g => g.key });
}

const KEYS = ['class', 'type', 'file:line:class', 'file:line', 'file', 'method', 'gem', 'generation'];

function viewTally(v, by) {
  const sel = el('select', { id: 'by', 'aria-label': 'group by' }, KEYS.map(k => el('option', { value: k, selected: k === by }, k)));
  sel.addEventListener('change', () => { location.hash = '#/tally/' + sel.value; });
  const filter = el('input', { type: 'search', id: 'filter', placeholder: 'filter', 'aria-label': 'filter rows' });
  v.appendChild(el('h2', {}, 'Tally by ', sel));
  v.appendChild(el('p', {}, filter, ' ', el('span', { class: 'muted' }, 'the 2000 largest groups by memsize; click a heading to sort')));
  v.appendChild(section(null, 'tally?by=' + enc(by) + '&limit=2000', (b, d) => {
    b.appendChild(el('p', { class: 'muted' }, count(d.group_count) + ' groups, ' + count(d.total.count) + ' objects, ' + bytes(d.total.memsize)));
    b.appendChild(tallyTable(d.groups, by, filter));
  }));
}

function viewMembers(v, by, key) {
  v.appendChild(el('h2', {}, (by === 'class' ? 'Class ' : by + ' ') , el('span', { class: 'mono', id: 'members-key' }, key)));
  const q = new URLSearchParams(location.hash.split('?')[1] || '');
  const off = Math.max(0, parseInt(q.get('offset') || '0', 10) || 0);
  const base = '#/' + (by === 'class' ? 'class/' + enc(key) : 'members/' + enc(by) + '/' + enc(key));
  v.appendChild(section(null, 'members?by=' + enc(by) + '&key=' + enc(key) + '&offset=' + off + '&limit=100', (b, d) => {
    b.appendChild(el('p', { id: 'members-count' }, count(d.count) + ' objects, ' + bytes(d.memsize)));
    b.appendChild(table([
      { title: 'address', get: o => addrLink(o.address) },
      { title: 'type', get: o => o.type },
      { title: 'label', get: o => o.label },
      { title: 'memsize', num: 1, get: o => bytes(o.memsize), sort: o => o.memsize }], d.objects, { cls: 'members' }));
    const pager = el('div', { class: 'pager' });
    if (off > 0) pager.appendChild(el('a', { href: base + '?offset=' + Math.max(0, off - 100) }, '← previous'));
    pager.appendChild(el('span', { class: 'muted' }, (d.objects.length ? (off + 1) + '–' + (off + d.objects.length) : '0') + ' of ' + count(d.count)));
    if (off + 100 < d.count) pager.appendChild(el('a', { href: base + '?offset=' + (off + 100) }, 'next →'));
    b.appendChild(pager);
  }));
}

function refsTable(list, id) {
  return table([
    { title: 'address', get: o => addrLink(o.address) },
    { title: 'type', get: o => o.type },
    { title: 'class', get: o => o.class !== undefined && o.class !== null ? classLink(o.class) : '' },
    { title: 'memsize', num: 1, get: o => bytes(o.memsize), sort: o => o.memsize }], list, { cls: id });
}

// An object's references or referrers: the first page came with the object;
// "more" asks for the next 100 (an object may be referenced by millions).
function refsList(addr, list, title, first, total, id) {
  const rows = first.slice();
  const box = el('div', {});
  const draw = () => {
    box.textContent = '';
    box.appendChild(el('h3', {}, title + ' (' + count(total) + ')'));
    box.appendChild(refsTable(rows, id));
    if (rows.length < total) {
      const more = el('button', { type: 'button', id: id + '-more', class: 'more' },
        'more (' + count(rows.length) + ' of ' + count(total) + ' shown)');
      more.addEventListener('click', () => {
        more.disabled = true;
        api('object?addr=' + enc(addr) + '&list=' + list + '&offset=' + rows.length + '&limit=100')
          .then(d => { rows.push(...d.objects); draw(); })
          .catch(e => { more.replaceWith(el('p', { class: 'bad' }, e.message)); });
      });
      box.appendChild(el('p', { class: 'pager' }, more));
    }
  };
  draw();
  return box;
}

function pathList(root, path) {
  return el('ol', { class: 'path' }, el('li', {}, el('a', { href: '#/domtree' }, '(root) ' + (root || ''))),
    (path || []).map(o => el('li', {}, objLabel(o))));
}

function viewObject(v, addr) {
  v.appendChild(el('h2', {}, 'Object ', el('span', { class: 'mono' }, addr)));
  v.appendChild(section(null, 'object?addr=' + enc(addr), (b, d) => {
    const o = d.objects[0];
    const rows = [['type', o.type], ['class', o.class !== null ? classLink(o.class) : ''], ['label', o.label],
      ['memsize', bytes(o.memsize)], ['size', o.size], ['detail', o.detail],
      ['allocated at', o.file ? el('a', { href: '#/members/file:line:class/' + enc(o.file + ':' + o.line + ':' + o.class) }, o.file + ':' + o.line) : '(not traced)'],
      ['method', o.method], ['generation', o.generation], ['flags', (o.flags || []).join(', ')]];
    if (o.value !== undefined) rows.push(['value', o.value]);
    b.appendChild(el('table', { id: 'record' }, el('tbody', {}, rows.map(r => el('tr', {}, el('th', { scope: 'row' }, r[0]), el('td', { class: 'key' }, r[1] === null || r[1] === undefined ? '' : r[1]))))));
    b.appendChild(refsList(addr, 'references', 'References', o.references, o.references_count, 'refs'));
    b.appendChild(refsList(addr, 'referrers', 'Referrers', o.referrers, o.referrers_count, 'referrers'));
  }));
  v.appendChild(section('Paths from the roots', 'paths?addr=' + enc(addr) + '&max=3', (b, d) => {
    for (const p of d.paths) {
      if (!p.path || !p.path.length) b.appendChild(el('p', { class: 'warn' }, 'no root reaches it'));
      else b.appendChild(pathList(p.root, p.path));
    }
  }));
  v.appendChild(section('Dominator chain', 'domtree?addr=' + enc(addr) + '&depth=1&limit=20', (b, d) => {
    b.appendChild(el('div', { id: 'chain' }, pathList(d.root, d.chain)));
    if (d.tree) b.appendChild(el('p', {}, 'retains ' + bytes(d.tree.retained.memsize) + ' in ' + count(d.tree.retained.count) + ' objects. ',
      el('a', { href: '#/domtree/' + addr }, 'Its subtree')));
  }));
}

// The dominator tree: each node's children are asked for when it is opened.
function treeNode(o) {
  const li = el('li', {});
  const kids = el('ul', { class: 'tree', hidden: true });
  const has = !o.retained || o.retained.count > 1;
  const btn = el('button', { type: 'button', class: 'tw', 'aria-expanded': 'false', 'aria-label': 'expand ' + o.address, disabled: !has }, has ? '+' : '·');
  let loaded = false;
  btn.addEventListener('click', () => {
    const open = btn.getAttribute('aria-expanded') !== 'true';
    btn.setAttribute('aria-expanded', open ? 'true' : 'false');
    btn.textContent = open ? '−' : '+';
    kids.hidden = !open;
    if (open && !loaded) {
      loaded = true;
      kids.appendChild(section(null, 'domtree?addr=' + enc(o.address) + '&depth=1&limit=50', (b, d) => {
        for (const c of d.tree.children) b.appendChild(el('ul', { class: 'tree' }, treeNode(c)));
        if (d.tree.children_total > d.tree.children.length)
          b.appendChild(el('p', { class: 'muted' }, (d.tree.children_total - d.tree.children.length) + ' smaller children not shown'));
      }));
    }
  });
  li.appendChild(btn);
  li.appendChild(objLabel(o));
  if (o.retained) li.appendChild(el('span', { class: 'muted' }, ' self ' + bytes(o.memsize) + ', retained ' + bytes(o.retained.memsize) + ' in ' + count(o.retained.count) + ' objects'));
  li.appendChild(kids);
  return li;
}

function viewDomtree(v, addr) {
  v.appendChild(el('h2', {}, 'Dominator tree', addr ? el('span', { class: 'mono' }, ' below ' + addr) : null));
  v.appendChild(el('p', { class: 'muted' }, 'what each object keeps alive: open a node to see what it dominates, largest first'));
  const path = addr ? 'domtree?addr=' + enc(addr) + '&depth=1&limit=50' : 'domtree?depth=1&limit=50';
  v.appendChild(section(null, path, (b, d) => {
    b.appendChild(el('p', {}, 'reachable: ' + count(d.reachable.count) + ' objects, ' + bytes(d.reachable.memsize) +
      '; unreachable: ' + count(d.unreachable.count) + ' objects, ' + bytes(d.unreachable.memsize)));
    const ul = el('ul', { class: 'tree', id: 'domtree' });
    if (d.tree) {
      b.appendChild(el('div', {}, 'chain: ', pathList(d.root, d.chain)));
      ul.appendChild(treeNode(d.tree));
    } else {
      for (const r of d.top) {
        const li = el('li', {}, el('strong', {}, r.root), el('span', { class: 'muted' }, ' ' + count(r.children_total) + ' children'));
        const kids = el('ul', { class: 'tree' });
        for (const c of r.children) kids.appendChild(treeNode(c));
        li.appendChild(kids);
        ul.appendChild(li);
      }
    }
    b.appendChild(ul);
  }));
}

function viewLeaks(v) {
  v.appendChild(el('h2', {}, 'Leaks: A → B → C'));
  if (!info.leaks) { v.appendChild(el('p', {}, 'the leak views need three dumps A B C')); return; }
  v.appendChild(section('Suspects', 'suspects?limit=20', (b, d) => {
    b.appendChild(el('p', {}, count(d.leaked.count) + ' leaked objects, ' + bytes(d.leaked.memsize)));
    b.appendChild(el('div', {}, warnings(d)));
    const ol = el('ol', { id: 'suspects' });
    for (const s of d.suspects) {
      ol.appendChild(el('li', {}, objLabel(s.address ? s : null), s.root && !s.address ? s.root : '',
        el('span', {}, ' keeps ' + count(s.leaked.count) + ' leaked objects (' + bytes(s.leaked.memsize) + ')'),
        s.path ? pathList(s.root, s.path) : null));
    }
    b.appendChild(ol);
  }));
  const sel = el('select', { 'aria-label': 'diff by' }, KEYS.map(k => el('option', { value: k, selected: k === 'file:line:class' }, k)));
  const holder = el('div');
  const load = () => { holder.textContent = ''; holder.appendChild(section(null, 'diff?by=' + enc(sel.value) + '&limit=50', (b, d) => {
    b.appendChild(tallyTable(d.groups || [], sel.value));
  })); };
  sel.addEventListener('change', load);
  v.appendChild(el('h2', {}, 'Leaked objects by ', sel));
  v.appendChild(holder);
  load();
}

function viewTimeline(v) {
  v.appendChild(el('h2', {}, 'Timeline'));
  if (!info.timeline) { v.appendChild(el('p', {}, 'the timeline needs two dumps or more')); return; }
  v.appendChild(section(null, 'timeline?by=class&limit=30', (b, d) => {
    b.appendChild(el('div', { class: 'chart' }, el('img', { src: '/api/timeline?by=class&limit=10&format=svg', alt: 'memsize per class over the dumps' })));
    b.appendChild(el('div', {}, warnings(d)));
    b.appendChild(table([
      { title: 'class', cls: 'key', get: g => classLink(g.key) },
      { title: 'growing', get: g => g.growing ? el('span', { class: 'bad' }, 'growing') : '' },
      { title: 'first', num: 1, get: g => bytes((g.memsize || [])[0]) },
      { title: 'last', num: 1, get: g => bytes((g.memsize || []).slice(-1)[0]) }], d.groups || [], { cls: 'timeline' }));
  }));
}

function viewSearch(v, q) {
  v.appendChild(el('h2', {}, 'Search: ', el('span', { class: 'mono' }, q)));
  v.appendChild(section(null, 'search?q=' + enc(q), (b, d) => {
    if (d.object) b.appendChild(el('p', {}, 'object: ', objLabel(d.object)));
    for (const [by, rows] of Object.entries(d.rows)) {
      b.appendChild(el('h3', {}, by + ' (' + rows.length + ')'));
      b.appendChild(tallyTable(rows, by));
    }
  }));
}

function route() {
  generation++;
  const v = document.getElementById('view');
  v.textContent = '';
  const h = location.hash || '#/overview';
  const [p, query] = h.slice(2).split('?');
  const parts = p.split('/').map(decodeURIComponent);
  document.body.dataset.view = parts[0];
  for (const a of document.querySelectorAll('nav a'))
    a.classList.toggle('here', a.getAttribute('href') === '#/' + p);
  switch (parts[0]) {
    case 'tally': viewTally(v, KEYS.includes(parts[1]) ? parts[1] : 'class'); break;
    case 'class': viewMembers(v, 'class', parts.slice(1).join('/')); break;
    case 'members': viewMembers(v, parts[1], parts.slice(2).join('/')); break;
    case 'object': viewObject(v, parts[1]); break;
    case 'domtree': viewDomtree(v, parts[1]); break;
    case 'leaks': viewLeaks(v); break;
    case 'timeline': viewTimeline(v); break;
    case 'search': viewSearch(v, new URLSearchParams(query || '').get('q') || ''); break;
    default: viewOverview(v);
  }
  v.focus({ preventScroll: true });
}

// Bars: a width from data-w (no inline style attribute: the page's CSP).
const bars = new MutationObserver(() => {
  for (const b of document.querySelectorAll('.bar[data-w]')) {
    b.style.width = Math.max(1, Math.round(120 * Number(b.dataset.w))) + 'px';
    b.removeAttribute('data-w');
  }
});

async function start() {
  bars.observe(document.getElementById('view'), { childList: true, subtree: true });
  document.getElementById('search').addEventListener('submit', e => {
    e.preventDefault();
    const q = document.getElementById('q').value.trim();
    if (q) location.hash = '#/search?q=' + enc(q);
  });
  try {
    info = await api('info');
  } catch (e) {
    document.getElementById('view').appendChild(el('p', { class: 'bad' }, e.message));
    return;
  }
  document.getElementById('dumps').textContent = info.dumps.join(' → ');
  document.getElementById('nav-leaks').hidden = !info.leaks;
  document.getElementById('nav-timeline').hidden = !info.timeline;
  window.addEventListener('hashchange', route);
  route();
}

start();
