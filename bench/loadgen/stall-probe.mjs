// `node --import ./bench/loadgen/stall-probe.mjs dist/cli.js serve` (bench/open-loop.ts --probe): a record of what
// might stall the server, for lining up with the generator's slow requests (bench/loadgen/stalls.ts). Each line of
// $VOUCH_BENCH_PROBE is JSON: t (CLOCK_MONOTONIC ms, the clock of the generator's start_ns), d (ms), kind, what.
//   loop   the event loop did not come back for d ms; cpu: the main thread's CPU time in the gap, wait: its time
//          runnable but not running (another thread or process had the core: /proc/self/task/TID/schedstat)
//   gc     a garbage collection (every major one; minor ones over 1 ms)
//   sql    a better-sqlite3 statement, transaction or pragma over 1 ms, by its text (in the checkpoint thread too)
//   timer  a timer's callback over 1 ms, by where the timer was made (timers of 50 ms or more)
//   threads  once a second, each thread's CPU ms in that second (by name)
// Costs a little (a 5 ms tick reading one /proc file): compare figures only between runs that both had it.
/* global process, performance */
import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PerformanceObserver } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { isMainThread, threadId } from 'node:worker_threads';

const out = process.env.VOUCH_BENCH_PROBE;
// The probe's own ticks run on the timers as they were, so that they never record themselves.
const setIntervalAsItWas = globalThis.setInterval;
const SLOW_MS = 1;
const TICK_MS = 5;
const LOOP_MS = 8;
// performance.now() is on the monotonic clock; this is its offset to process.hrtime (CLOCK_MONOTONIC) in ms.
const offset = Number(process.hrtime.bigint()) / 1e6 - performance.now();
const mono = () => offset + performance.now();
let lines = [];
const note = (t, d, kind, what) => {
  const line = `${JSON.stringify({ t: Math.round(t * 1000) / 1000, d: Math.round(d * 1000) / 1000, kind, what, thread: threadId })}\n`;
  if (isMainThread) lines.push(line);
  else appendFileSync(out, line);
};
const flush = () => {
  if (lines.length === 0) return;
  appendFileSync(out, lines.join(''));
  lines = [];
};

const shorten = (text) => {
  const flat = String(text).replace(/\s+/g, ' ');
  return flat.length > 140 ? `${flat.slice(0, 70)} … ${flat.slice(-60)}` : flat;
};
const timed = (fn, what) =>
  function (...args) {
    const t0 = mono();
    try {
      return fn.apply(this, args);
    } finally {
      const d = mono() - t0;
      if (d > SLOW_MS) note(t0, d, 'sql', what(args));
    }
  };

if (out) {
  const Database = createRequire(`${process.cwd()}/`)('better-sqlite3');
  const proto = Database.prototype;
  const prepare = proto.prepare;
  proto.prepare = function (text) {
    const stmt = prepare.call(this, text);
    for (const m of ['run', 'get', 'all', 'iterate']) stmt[m] = timed(stmt[m], () => shorten(text));
    return stmt;
  };
  proto.pragma = timed(proto.pragma, (args) => `pragma ${args[0]}`);
  proto.exec = timed(proto.exec, (args) => shorten(args[0]));
  const transaction = proto.transaction;
  proto.transaction = function (fn) {
    const tx = transaction.call(this, fn);
    const wrapped = timed(tx, () => `transaction ${fn.name || '(anonymous)'}`);
    for (const mode of ['deferred', 'immediate', 'exclusive'])
      wrapped[mode] = timed(tx[mode], () => `transaction ${fn.name || '(anonymous)'}`);
    return wrapped;
  };
}

if (out && isMainThread) {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = e.detail?.kind ?? e.kind;
      const name = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak callbacks' }[kind] ?? String(kind);
      if (kind !== 1 || e.duration > SLOW_MS) note(offset + e.startTime, e.duration, 'gc', name);
    }
  }).observe({ entryTypes: ['gc'] });

  // Timers made for 50 ms or more are the background work (pollers, flushes, sweeps): where each was made.
  for (const name of ['setTimeout', 'setInterval']) {
    const original = globalThis[name];
    globalThis[name] = function (callback, delay, ...rest) {
      if (typeof callback !== 'function' || !(delay >= 50)) return original.call(this, callback, delay, ...rest);
      const site = (new Error().stack ?? '').split('\n').slice(2, 4).join(' <').replace(/\s+/g, ' ');
      const wrapped = function (...args) {
        const t0 = mono();
        try {
          return callback.apply(this, args);
        } finally {
          const d = mono() - t0;
          if (d > SLOW_MS) note(t0, d, 'timer', `${name}(${delay}) ${callback.name} ${site}`);
        }
      };
      return original.call(this, wrapped, delay, ...rest);
    };
    // util.promisify(setTimeout), as close-with-grace uses it, reads this.
    globalThis[name][promisify.custom] = original[promisify.custom];
  }

  const schedstat = (tid) => {
    try {
      const [cpu, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      return { cpu: cpu / 1e6, wait: wait / 1e6 };
    } catch {
      return { cpu: 0, wait: 0 };
    }
  };
  let last = mono();
  let lastStat = schedstat(process.pid);
  const tick = setIntervalAsItWas(() => {
    const now = mono();
    const stat = schedstat(process.pid);
    if (now - last > LOOP_MS + TICK_MS)
      note(last, now - last, 'loop', {
        cpu: Math.round((stat.cpu - lastStat.cpu) * 100) / 100,
        wait: Math.round((stat.wait - lastStat.wait) * 100) / 100,
      });
    last = now;
    lastStat = stat;
  }, TICK_MS);
  tick.unref();

  let threads = new Map();
  const perThread = setIntervalAsItWas(() => {
    const now = new Map();
    const spent = {};
    for (const tid of readdirSync('/proc/self/task')) {
      let name = '?';
      try {
        name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      } catch {
        continue;
      }
      const { cpu, wait } = schedstat(tid);
      now.set(tid, { cpu, wait });
      const before = threads.get(tid) ?? { cpu, wait };
      const key = tid === String(process.pid) ? 'main' : name;
      const s = (spent[key] ??= { cpu: 0, wait: 0 });
      s.cpu = Math.round((s.cpu + cpu - before.cpu) * 100) / 100;
      s.wait = Math.round((s.wait + wait - before.wait) * 100) / 100;
    }
    threads = now;
    note(mono() - 1000, 1000, 'threads', spent);
    flush();
  }, 1000);
  perThread.unref();
  process.on('exit', flush);
}
