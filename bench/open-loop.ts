// Open-loop load at a fixed rate, for "p99 at 1,000 req/s offered" (issue 13). Request i is due at
// t0 + i/rate whatever the server is doing, and its latency runs from that due time to the end of
// its response: a stalled server or a late generator counts against the latency instead of
// quietly lowering the offered load (coordinated omission). autocannon's `overallRate` is not this:
// each connection sends its per-second quota back to back at the start of every second and then
// idles, so its "1,000 req/s" is a saturated burst.
import http from 'node:http';

export interface OpenLoopRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface OpenLoopOptions {
  url: string;
  rate: number;
  durationS: number;
  /** excluded from the figures: connections open and code warms up */
  warmupS?: number;
  maxConnections?: number;
  /** how long a request's socket may stay silent before it counts as an error */
  timeoutMs?: number;
  request: () => OpenLoopRequest;
}

export interface OpenLoopResult {
  offered_rps: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  non2xx: number;
  errors: number;
  /** requests sent more than 2 ms after they were due: the generator itself fell behind */
  late_sends: number;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const target = new URL(o.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.maxConnections ?? 64 });
  const warmupMs = (o.warmupS ?? 1) * 1000;
  const totalMs = warmupMs + o.durationS * 1000;
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let late = 0;
  let completed = 0;
  let pending = 0;
  let measuredSent = 0;

  const send = (dueAt: number, measured: boolean) => {
    const req = o.request();
    if (measured && performance.now() - dueAt > 2) late += 1;
    pending += 1;
    let finished = false;
    // A response that fails after its headers can also fail its request: count it once.
    const finish = (ok: boolean, status?: number) => {
      if (finished) return;
      finished = true;
      pending -= 1;
      if (!measured) return;
      completed += 1;
      if (!ok) errors += 1;
      else {
        if (status === undefined || status < 200 || status >= 300) non2xx += 1;
        latencies.push(performance.now() - dueAt);
      }
    };
    const r = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.path,
        headers: req.headers,
        agent,
        timeout: o.timeoutMs ?? 10_000,
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => finish(true, res.statusCode));
        res.on('error', () => finish(false));
      },
    );
    r.on('timeout', () => r.destroy(new Error('timeout')));
    r.on('error', () => finish(false));
    r.end(req.body);
  };

  const start = performance.now();
  const intervalMs = 1000 / o.rate;
  let next = 0;
  await new Promise<void>((resolve) => {
    // Wakes every millisecond or so and sends everything that has fallen due since.
    const tick = () => {
      const now = performance.now();
      while (next * intervalMs <= Math.min(now - start, totalMs)) {
        const dueAt = start + next * intervalMs;
        const measured = next * intervalMs >= warmupMs;
        if (measured) measuredSent += 1;
        send(dueAt, measured);
        next += 1;
      }
      if (now - start < totalMs) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  // The last requests' responses.
  const deadline = performance.now() + (o.timeoutMs ?? 10_000) + 1000;
  while (pending > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  return {
    offered_rps: o.rate,
    rps: Math.round(completed / o.durationS),
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    p999: round(percentile(sorted, 99.9)),
    max: round(sorted.at(-1) ?? 0),
    non2xx,
    errors: errors + (measuredSent - completed),
    late_sends: late,
  };
}
