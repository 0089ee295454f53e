// Lines the generator's slow requests (openloop.c --series) up with the server's record (stall-probe.mjs): a
// stall of S ms that starts at T makes every request due in [T, T + S] slow, so slow requests are grouped into
// episodes (from the first one's due time to the last one's answer), and each episode is printed with what the
// server recorded in it: garbage collections, slow statements, timers, the event loop's gaps (with the main
// thread's CPU time in the gap and its time waiting for the core), and the other threads' CPU in that second.
import { readFileSync } from 'node:fs';

interface ProbeLine {
  t: number;
  d: number;
  kind: 'loop' | 'gc' | 'sql' | 'timer' | 'threads';
  what: unknown;
  thread: number;
}

interface Episode {
  start: number;
  end: number;
  requests: number;
  worst: number;
}

/** Slow requests (over `slowMs` from their due time) grouped into episodes, on the monotonic clock in ms. */
function episodes(series: string, startNs: number, slowMs: number): Episode[] {
  const out: Episode[] = [];
  const start = startNs / 1e6;
  for (const line of readFileSync(series, 'utf8').split('\n')) {
    if (!line) continue;
    const [due, latencyUs] = line.split(' ').map(Number) as [number, number];
    const latency = latencyUs / 1000;
    if (latency <= slowMs) continue;
    const at = start + due;
    const last = out.at(-1);
    if (last && at <= last.end) {
      last.end = Math.max(last.end, at + latency);
      last.requests += 1;
      last.worst = Math.max(last.worst, latency);
    } else out.push({ start: at, end: at + latency, requests: 1, worst: latency });
  }
  return out;
}

const ms = (x: number) => Math.round(x * 10) / 10;

function describe(p: ProbeLine, from: number): string {
  const at = `+${ms(p.t - from)} ms, ${ms(p.d)} ms`;
  if (p.kind === 'threads') return `threads that second (CPU ms / wait ms): ${JSON.stringify(p.what)}`;
  return `${p.kind} (${at}${p.thread ? `, thread ${p.thread}` : ''}): ${typeof p.what === 'string' ? p.what : JSON.stringify(p.what)}`;
}

export function reportStalls(label: string, series: string, probe: string, startNs: number, slowMs = 10): void {
  const record: ProbeLine[] = readFileSync(probe, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ProbeLine);
  const found = episodes(series, startNs, slowMs).sort((a, b) => b.worst - a.worst);
  const first = startNs / 1e6;
  const totals = new Map<string, { n: number; ms: number; max: number }>();
  for (const p of record) {
    if (p.kind === 'threads' || p.t < first) continue;
    const key = p.kind === 'gc' ? `gc ${String(p.what)}` : p.kind;
    const s = totals.get(key) ?? { n: 0, ms: 0, max: 0 };
    totals.set(key, { n: s.n + 1, ms: s.ms + p.d, max: Math.max(s.max, p.d) });
  }
  console.log(`\n${label}: ${found.length} episodes of requests over ${slowMs} ms`);
  console.log(
    `  recorded over the run (from the first due request): ${[...totals]
      .map(([k, s]) => `${k} ×${s.n} (${ms(s.ms)} ms, max ${ms(s.max)})`)
      .join('; ')}`,
  );
  const causes = new Map<string, number>();
  for (const e of found) {
    const inside = record.filter(
      (p) => p.kind !== 'threads' && p.t < e.end && p.t + p.d > e.start - 2 && p.kind !== 'loop',
    );
    for (const k of new Set(inside.map((p) => (p.kind === 'gc' ? `gc ${String(p.what)}` : p.kind))))
      causes.set(k, (causes.get(k) ?? 0) + 1);
    if (inside.length === 0) causes.set('nothing recorded', (causes.get('nothing recorded') ?? 0) + 1);
  }
  console.log(`  episodes that overlap: ${[...causes].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  for (const e of found.slice(0, 12)) {
    console.log(
      `  at ${ms(e.start - first)} ms: ${e.requests} slow requests, worst ${ms(e.worst)} ms, ${ms(e.end - e.start)} ms long`,
    );
    const inside = record.filter(
      (p) =>
        (p.kind !== 'threads' && p.t < e.end && p.t + p.d > e.start - 2) ||
        (p.kind === 'threads' && p.t <= e.start && p.t + 1000 > e.start),
    );
    for (const p of inside.slice(0, 12)) console.log(`    ${describe(p, e.start)}`);
  }
}
