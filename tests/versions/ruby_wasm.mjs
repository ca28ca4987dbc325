// Run a Ruby script with CRuby compiled for WASI (npm @ruby/X-wasm-wasi,
// ruby+stdlib.wasm) under Node, with host directories mapped into the
// guest's file system.  Used by tests/versions/rubies.py.
//
//   node --single-threaded-gc --no-incremental-marking ruby_wasm.mjs \
//        --modules NODE_MODULES --wasm RUBY.wasm [--dir HOST:GUEST]... \
//        -- SCRIPT [ARGS...]
//
// SCRIPT and ARGS are guest paths.  The exit status is the script's (exit,
// abort, or 1 for an uncaught exception).  ruby+stdlib.wasm imports the
// "rb-js-abi-host" interface, so a plain WASI start() cannot run it: the
// RubyVM of @ruby/wasm-wasi instantiates it with our own WASI instance
// (for the preopened directories) and evaluates a small prelude that sets
// ARGV and $0 and loads the script.  Ruby runs with --disable-gems, as the
// tests run Debian's Ruby.  The V8 flags above: Node 20's V8 crashed in its
// own GC at exit without them (Node 18 does not need them; both accept them).
import fs from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { WASI } from "node:wasi";

function usage(msg) {
  process.stderr.write(`ruby_wasm.mjs: ${msg}\nusage: ruby_wasm.mjs --modules DIR --wasm FILE ` +
                       `[--dir HOST:GUEST]... -- SCRIPT [ARGS...]\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
let modules = null, wasm = null;
const preopens = {};
let i = 0;
for (; i < argv.length && argv[i] !== "--"; i++) {
  const a = argv[i], v = argv[i + 1];
  if (v === undefined) usage(`${a} needs a value`);
  if (a === "--modules") modules = v;
  else if (a === "--wasm") wasm = v;
  else if (a === "--dir") {
    const k = v.lastIndexOf(":");
    if (k <= 0) usage(`--dir wants HOST:GUEST, not ${v}`);
    preopens[v.slice(k + 1)] = v.slice(0, k);
  } else usage(`unknown option ${a}`);
  i++;
}
if (!modules || !wasm || i >= argv.length - 1) usage("--modules, --wasm and a script are required");
const [script, ...args] = argv.slice(i + 1);

const host = path.join(modules, "@ruby", "wasm-wasi", "dist", "esm", "index.js");
const { RubyVM } = await import(pathToFileURL(host).href);
const wasi = new WASI({ version: "preview1", args: ["ruby.wasm"], env: {}, preopens,
                        returnOnExit: true });
const mod = await WebAssembly.compile(await fs.readFile(wasm));
const { vm } = await RubyVM.instantiateModule({
  module: mod, wasip1: wasi, args: ["ruby.wasm", "--disable-gems", "-EUTF-8", "-e_=0"],
});
// single-quoted Ruby literals: only \ and ' need escaping
const q = (s) => "'" + s.replace(/\\/g, "\\\\").replace(/'/g, "\\'") + "'";
const prelude = `ARGV.replace([${args.map(q).join(", ")}])
$0 = ${q(script)}
begin
  load $0
  0
rescue SystemExit => e
  e.status
rescue Exception => e
  $stderr.puts(e.full_message)
  1
end`;
process.exitCode = Number(vm.eval(prelude).toString());
