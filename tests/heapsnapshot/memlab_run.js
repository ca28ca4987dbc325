// memlab_run.js - memlab (npm @memlab/*, pinned by package.json beside
// this file, found through NODE_PATH) on heapscope's heap snapshots; what
// memlab computed, as one JSON document in the file OUT (memlab draws its
// progress on stdout), for check_heapsnapshot.py to compare with heapscope
// and the workload's truth.
//
//   node memlab_run.js OUT graph FILE
//       memlab's heap graph of FILE (@memlab/heap-analysis
//       getFullHeapFromFile: parse, shortest paths, its dominator tree):
//       {"nodes", "edges", "root": {id, name, retained},
//        "retained": [[id, retainedSize, dominatorId, name, type], ...]}
//       for every node
//   node memlab_run.js OUT leaks BASELINE TARGET FINAL WORKDIR
//       memlab's leak detection (@memlab/api findLeaksBySnapshotFilePaths):
//       memlab itself keeps the objects (by node id) of TARGET that are
//       not in BASELINE and still in FINAL; its default leak filter is
//       for browsers (detached DOM, React fibers), so a leakFilter that
//       takes every such object but memlab's own "hidden" (system) nodes
//       is set, as a scenario's leakFilter would; memlab then finds each
//       one's retainer trace and clusters them.
//       {"candidates": [ids the filter saw], "traces": [[node ids from the
//        root to the leaked object], ...]}
'use strict';

const fs = require('fs');

function fail(msg) {
  process.stderr.write('memlab_run.js: ' + msg + '\n');
  process.exit(2);
}

async function graph(file) {
  const {getFullHeapFromFile} = require('@memlab/heap-analysis');
  const heap = await getFullHeapFromFile(file);
  const rows = [];
  heap.nodes.forEach(node => {
    const dom = node.dominatorNode;
    rows.push([node.id, Number(node.retainedSize), dom ? dom.id : null, node.name, node.type]);
  });
  const root = heap.nodes.get(0);
  return {
    nodes: heap.nodes.length,
    edges: heap.edges.length,
    root: {id: root.id, name: root.name, retained: Number(root.retainedSize)},
    retained: rows,
  };
}

async function leaks(baseline, target, final, workDir) {
  const {findLeaksBySnapshotFilePaths} = require('@memlab/api');
  const {config} = require('@memlab/core');
  const candidates = [];
  config.externalLeakFilter = {
    leakFilter: node => {
      candidates.push(node.id);
      return node.type !== 'hidden';
    },
  };
  const traces = await findLeaksBySnapshotFilePaths(baseline, target, final,
                                                    {workDir, consoleMode: 'SILENT'});
  // A serialized trace is an object whose keys "N: ... @ID ..." are the
  // steps from the root; the node ids are what the test needs.
  const paths = traces.map(t => Object.keys(t)
    .filter(k => /^\d+:/.test(k))
    .sort((a, b) => parseInt(a, 10) - parseInt(b, 10))
    .map(k => {
      const m = /\]\([^)]*\) @(\d+)/.exec(k);
      if (!m)
        fail('cannot read a node id in the trace step ' + JSON.stringify(k));
      return parseInt(m[1], 10);
    }));
  return {candidates, traces: paths};
}

(async () => {
  const [outFile, cmd, ...args] = process.argv.slice(2);
  let out;
  if (cmd === 'graph' && args.length === 1)
    out = await graph(args[0]);
  else if (cmd === 'leaks' && args.length === 4)
    out = await leaks(...args);
  else
    fail('usage: memlab_run.js OUT graph FILE | OUT leaks BASELINE TARGET FINAL WORKDIR');
  fs.writeFileSync(outFile, JSON.stringify(out) + '\n');
})().catch(e => fail(e && e.stack ? e.stack : String(e)));
