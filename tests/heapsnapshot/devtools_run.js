// devtools_run.js - Chrome DevTools' own heap snapshot code on a heapscope
// export: headless Chromium (/usr/bin/chromium, or $CHROMIUM) opens the
// DevTools front end bundled in it (devtools://devtools/bundled/), imports
// its heap snapshot worker module and feeds the file to its
// HeapSnapshotLoader in chunks, as the Memory panel's "Load profile" does;
// the snapshot it builds (its second-thread initialisation run on a
// MessageChannel in the same page) is then asked what the panel shows.
// Driven by puppeteer-core, which memlab depends on (NODE_PATH: the memlab
// packages of tests/heapsnapshot/package.json).
//
//   node devtools_run.js OUT FILE ID...
//       OUT gets {"nodes", "total", "statistics",
//                 "retained": [[id, retainedSize], ...] (every node),
//                 "classes": {className: [count, self, maxRetained]},
//                 "stacks": {ID: allocation stack frames}}
'use strict';

const fs = require('fs');

async function main() {
  const [outFile, file, ...ids] = process.argv.slice(2);
  if (!outFile || !file)
    throw new Error('usage: devtools_run.js OUT FILE ID...');
  const puppeteer = require('puppeteer-core');
  const text = fs.readFileSync(file, 'utf8');
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', e => errors.push(e.message));
    await page.goto('devtools://devtools/bundled/devtools_app.html', {waitUntil: 'load', timeout: 60000});
    const out = await page.evaluate(async (text, ids) => {
      const w = await import('./entrypoints/heap_snapshot_worker/heap_snapshot_worker.js');
      const loader = new w.HeapSnapshotLoader.HeapSnapshotLoader({sendEvent: () => {}});
      for (let i = 0; i < text.length; i += 1 << 16)
        loader.write(text.slice(i, i + (1 << 16)));
      loader.close();
      const channel = new MessageChannel();
      new w.HeapSnapshot.SecondaryInitManager(channel.port2);
      const snap = await loader.buildSnapshot(channel.port1);
      const fc = snap.nodeFieldCount, io = snap.nodeIdOffset;
      const retained = [];
      for (let o = 0; o < snap.nodeCount; o++)
        retained.push([snap.nodes.getValue(o * fc + io), snap.retainedSizes[o]]);
      const classes = {};
      for (const a of Object.values(snap.aggregatesWithFilter({})))
        classes[a.name] = [a.count, a.self, a.maxRet];
      const stacks = {};
      for (const id of ids) {
        const index = snap.nodeIndexForId(Number(id));
        stacks[id] = index === undefined || index < 0 ? null : snap.allocationStack(index);
      }
      return {nodes: snap.nodeCount, total: snap.totalSize, statistics: snap.getStatistics(),
              retained, classes, stacks};
    }, text, ids);
    out.page_errors = errors;
    fs.writeFileSync(outFile, JSON.stringify(out) + '\n');
  } finally {
    await browser.close();
  }
}

main().catch(e => {
  process.stderr.write('devtools_run.js: ' + (e && e.stack ? e.stack : String(e)) + '\n');
  process.exit(2);
});
