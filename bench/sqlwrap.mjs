// `node --import ./bench/sqlwrap.mjs dist/cli.js serve`: times every better-sqlite3 statement of a running
// server by its SQL text and prints the heaviest on SIGINT (bench/ingest-http.ts with EXECARGV).
/* global process, performance */
import Database from 'better-sqlite3';
const times = new Map();
const proto = Database.prototype;
const prepare = proto.prepare;
proto.prepare = function (text) {
  const stmt = prepare.call(this, text);
  const flat = text.replace(/\s+/g, ' ');
  const key = flat.length > 150 ? `${flat.slice(0, 70)} … ${flat.slice(-80)}` : flat;
  for (const m of ['run', 'all', 'get', 'iterate']) {
    const f = stmt[m];
    stmt[m] = function (...a) {
      const t0 = performance.now();
      try {
        return f.apply(this, a);
      } finally {
        const e = times.get(key) ?? [0, 0];
        e[0] += performance.now() - t0;
        e[1] += 1;
        times.set(key, e);
      }
    };
  }
  return stmt;
};
const dump = () => {
  const out = [...times]
    .sort((a, b) => b[1][0] - a[1][0])
    .slice(0, 25)
    .map(
      ([k, [ms, c]]) =>
        `${ms.toFixed(0).padStart(7)} ms ${String(c).padStart(7)}× ${((ms / c) * 1000).toFixed(1).padStart(7)} µs  ${k}`,
    )
    .join('\n');
  process.stderr.write(out + '\n');
};
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    dump();
    process.exit(0);
  });
