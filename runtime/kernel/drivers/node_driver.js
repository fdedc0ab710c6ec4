// The node driver: run inside the box as `node -e SOURCE`. Runs in the box (the workload).
//
// Cells run with vm in one persistent context (top-level let/const/function declarations stay
// visible to later cells). A cell's value (a promise is awaited first) comes back as text/plain
// from util.inspect; an exception prints its stack trimmed to the cell's frames and gives rc 1;
// process.exit(n) gives rc n and the kernel keeps serving. Cells arrive on fd 3 and are read by
// the event loop, so timers and promises of earlier cells keep running between cells. SIGINT
// stops a synchronous cell (vm's breakOnSigint) or abandons the awaited promise.
// stdout and stderr are pipes, which node writes synchronously on Linux: a cell's output is in
// the pipe before its end is reported on fd 4.
// Embedded in the kern binary at build time (runtime/kernel/embed_driver.cmake).
'use strict';
const vm = require('vm'), fs = require('fs'), util = require('util'), net = require('net');
const MAX = 60000;
const realExit = process.exit.bind(process);
class KernExit extends Error { constructor(code) { super('exit'); this.code = code; } }
function send(obj) {
  let data;
  try { data = Buffer.from(JSON.stringify(obj)); }
  catch (e) { data = Buffer.from(JSON.stringify({ nonce: obj.nonce, rc: obj.rc, results: [], error: String(e) })); }
  if (data.length <= MAX) { fs.writeSync(4, Buffer.concat([Buffer.from('W'), data])); return; }
  for (let i = 0; i < data.length; i += MAX) {
    const flag = i === 0 ? 'S' : (data.length - i <= MAX ? 'E' : 'M');
    fs.writeSync(4, Buffer.concat([Buffer.from(flag), data.subarray(i, i + MAX)]));
  }
}
function fmt(e) {
  if (e instanceof KernExit) return '';
  if (e && typeof e.stack === 'string') {
    const keep = e.stack.split('\n').filter((l) => !/^\s+at /.test(l) || /cell-/.test(l));
    return keep.join('\n') + '\n';
  }
  return 'Uncaught ' + util.inspect(e) + '\n';
}
const sandbox = {
  console, require, process, Buffer, setTimeout, clearTimeout, setInterval, clearInterval,
  setImmediate, clearImmediate, queueMicrotask, URL, URLSearchParams, TextEncoder, TextDecoder,
  structuredClone: globalThis.structuredClone, fetch: globalThis.fetch,
  module: { exports: {} }, __dirname: process.cwd(), __filename: '<cell>',
};
sandbox.global = sandbox;
sandbox.globalThis = sandbox;
const ctx = vm.createContext(sandbox);
process.exit = (code) => { throw new KernExit(code === undefined ? (process.exitCode || 0) : code); };
let interrupt = null;
process.on('SIGINT', () => { if (interrupt) interrupt(); });
process.on('uncaughtException', (e) => { try { process.stderr.write(fmt(e)); } catch (_) {} });
process.on('unhandledRejection', (e) => { try { process.stderr.write(fmt(e)); } catch (_) {} });
async function runCell(nonce, cid, code) {
  let rc = 0;
  const results = [];
  const stopped = new Promise((_, reject) => {
    interrupt = () => reject(Object.assign(new Error('Interrupted'), { name: 'Interrupted' }));
  });
  stopped.catch(() => {});
  try {
    const script = new vm.Script(code, { filename: 'cell-' + cid });
    let v = script.runInContext(ctx, { breakOnSigint: true, displayErrors: false });
    if (v && typeof v.then === 'function') v = await Promise.race([v, stopped]);
    if (v !== undefined) results.push({ 'text/plain': util.inspect(v) });
  } catch (e) {
    if (e instanceof KernExit) rc = Number(e.code) & 255;
    else { rc = 1; process.stderr.write(fmt(e)); }
  }
  interrupt = null;
  send({ nonce, rc, results });
}
let buf = Buffer.alloc(0), running = false;
function pump() {
  if (running) return;
  const nl = buf.indexOf(10);
  if (nl < 0) return;
  // "K2 CELL_ID NBYTES\n" CODE "NONCE\n"
  const parts = buf.subarray(0, nl).toString('latin1').split(' ');
  const len = Number(parts[2]);
  const end = buf.indexOf(10, nl + 1 + len);
  if (end < 0) return;
  const code = buf.subarray(nl + 1, nl + 1 + len).toString('utf8');
  const nonce = buf.subarray(nl + 1 + len, end).toString('latin1');
  buf = buf.subarray(end + 1);
  running = true;
  runCell(nonce, parts[1], code).finally(() => { running = false; pump(); });
}
const input = new net.Socket({ fd: 3, readable: true, writable: false });
input.on('data', (d) => { buf = buf.length ? Buffer.concat([buf, d]) : d; pump(); });
input.on('end', () => realExit(0));
send({ ready: true, lang: 'node', version: process.version, pid: process.pid });
