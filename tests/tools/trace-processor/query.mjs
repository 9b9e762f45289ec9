// Perfetto's trace processor (WebAssembly) driven from node: loads a trace, runs SQL queries and
// prints each result as one line of JSON. The package's glue code is built for a Web Worker in a
// browser; three of its lines are changed before it runs so that it works in node (a 32-bit
// memory, the wasm bytes given directly instead of fetched, and the bridge object kept).
//
//   node query.mjs ASSETS_DIR TRACE "SQL" ["SQL" ...]
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import {pathToFileURL} from 'node:url';

const [assets, tracePath, ...queries] = process.argv.slice(2);

// The changes to the glue, each required to apply exactly once.
const kGlueChanges = [
  ['this.useMemory64 = hasMemory64Support();', 'this.useMemory64 = false;'],
  ['locateFile: (s) => s,', 'locateFile: (s) => s, wasmBinary: globalThis.ppsimWasm,'],
  ['const wasmBridge = new wasm_bridge_1.WasmBridge();',
   'const wasmBridge = new wasm_bridge_1.WasmBridge(); globalThis.ppsimBridge = wasmBridge;'],
];

function loadGlue() {
  let code = fs.readFileSync(path.join(assets, 'engine_bundle.node.js'), 'utf8');
  for (const [from, to] of kGlueChanges) {
    if (code.split(from).length !== 2) throw new Error(`glue changed upstream: ${from}`);
    code = code.replace(from, to);
  }
  // The worker scope the glue expects.
  Object.defineProperty(globalThis, 'self', {value: globalThis, writable: true, configurable: true});
  globalThis.WorkerGlobalScope = function WorkerGlobalScope() {};
  Object.defineProperty(globalThis, 'location', {
    value: {href: pathToFileURL(assets).href + '/'}, writable: true, configurable: true});
  globalThis.ppsimWasm = new Uint8Array(fs.readFileSync(path.join(assets, 'trace_processor.wasm')));
  vm.runInThisContext(code, {filename: 'engine_bundle.node.js'});
  return globalThis.ppsimBridge;
}

async function openEngine() {
  const {EngineBase} = await import(pathToFileURL(path.join(assets, 'engine.mjs')).href);
  const bridge = loadGlue();
  const {port1, port2} = new MessageChannel();
  bridge.initialize(port1);
  class NodeEngine extends EngineBase {
    mode = 'WASM';
    id = 'ppsim';
    constructor() {
      super();
      port2.onmessage = (m) => {
        if (m.data instanceof Uint8Array) this.onRpcResponseBytes(m.data);
      };
    }
    rpcSendRequestBytes(bytes) { port2.postMessage(bytes); }
  }
  const engine = new NodeEngine();
  // The module instantiates asynchronously; requests sent before it is ready are lost.
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.PPSIM_TP_INIT_MS || 1500)));
  return engine;
}

// A newer trace processor answers with a field this EngineBase does not know: harmless.
const warn = console.warn.bind(console);
console.warn = (...args) => {
  if (!/Unexpected QueryResult field/.test(String(args[0] ?? ''))) warn(...args);
};

const engine = await openEngine();
const trace = fs.readFileSync(tracePath);
const kChunk = 16 << 20;
for (let offset = 0; offset < trace.length; offset += kChunk) {
  await engine.parse(new Uint8Array(trace.buffer, trace.byteOffset + offset,
                                    Math.min(kChunk, trace.length - offset)));
}
await engine.notifyEof();

let failed = false;
for (const sql of queries) {
  let result;
  try {
    result = await engine.query(sql);
  } catch (e) {
    result = {error: () => String(e.message ?? e).split('\n').pop()};
  }
  if (result.error()) {
    console.log(JSON.stringify({sql, error: String(result.error())}));
    failed = true;
    continue;
  }
  const columns = result.columns();
  const rows = [];
  for (const it = result.iter({}); it.valid(); it.next()) {
    rows.push(columns.map((c) => {
      const v = it.get(c);
      return typeof v === 'bigint' ? Number(v) : v;
    }));
  }
  console.log(JSON.stringify({sql, columns, rows}));
}
process.exit(failed ? 1 : 0);
