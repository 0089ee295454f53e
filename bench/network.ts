// Network figures (docs/benchmarks.md, "Network"): evaluate throughput, a sync of 100k flags, and
// score latency with three peers configured (one unreachable) against none. Real `vouch serve`
// processes (one worker each, SQLite) on loopback; this process plays a peer where it measures
// the protocol itself.
//
//   npx tsx bench/network.ts [--flags 100000] [--rate 300] [--seconds 20] [--evaluate-batches 40]
import { generateKeyPairSync, createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adminToken, call, createKey, startServer, type ServerProcess } from '../test/helpers/processes.ts';
import type { NetworkIdentity } from '../src/network/identity.ts';
import { b64, blindInputs, evaluateBlinded, generateOprfKey, prfInput } from '../src/network/oprf.ts';
import { signRequest } from '../src/network/peer-auth.ts';
import { openLoop, type OpenLoopResult } from './open-loop.ts';

const { values: args } = parseArgs({
  options: {
    flags: { type: 'string', default: '100000' },
    rate: { type: 'string', default: '300' },
    seconds: { type: 'string', default: '20' },
    'evaluate-batches': { type: 'string', default: '40' },
  },
});
const FLAGS = Number(args.flags);
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const EVALUATE_BATCHES = Number(args['evaluate-batches']);

/**
 * CPU seconds used so far by a server's process group (its primary, worker and their threads):
 * on a shared machine, work per CPU second is the figure that does not depend on the neighbours.
 */
function cpuSeconds(group: number): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === group) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks / 100;
}

const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const log = (line: string) => process.stderr.write(`${line}\n`);
const results: Record<string, unknown> = {};

interface Deployment {
  name: string;
  server: ServerProcess;
  dir: string;
  token: string;
  signingKey: string;
}

function benchPeer(): NetworkIdentity {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const oprf = generateOprfKey();
  return {
    signingKey: String(publicKey.export({ format: 'jwk' }).x),
    privateKey,
    oprf,
    oprfPublicKey: b64(oprf.publicKey),
    createdAt: Date.now(),
  };
}

async function deploy(name: string): Promise<Deployment> {
  const dir = mkdtempSync(join(tmpdir(), `vouch-bench-net-${name}-`));
  const server = await startServer({
    env: {
      VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}`,
      VOUCH_NETWORK_ALLOW_PRIVATE: '1',
      VOUCH_NETWORK_NAME: name,
      VOUCH_NETWORK_SYNC_SECONDS: '86400',
      VOUCH_TOKEN_TTL_SECONDS: '7200',
      VOUCH_RATE_LIMIT_PER_SECOND: '10000000',
      VOUCH_RATE_LIMIT_BURST: '20000000',
    },
  });
  const token = await adminToken(server.url);
  const descriptor = await call(server.url, 'GET', '/network/v1/descriptor');
  return { name, server, dir, token, signingKey: descriptor.body.signing_key as string };
}

const admin = async (d: Deployment, method: string, path: string, body?: unknown, timeoutMs = 600_000) => {
  const res = await call(d.server.url, method, path, {
    headers: { authorization: `Bearer ${d.token}` },
    ...(body === undefined ? {} : { body }),
    timeoutMs,
  });
  if (res.status >= 300) throw new Error(`${d.name} ${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.body;
};

/** A signed peer request over node:http. */
function peerCall(
  d: Deployment,
  peer: NetworkIdentity,
  method: 'GET' | 'POST',
  path: string,
  payload?: unknown,
): Promise<{ status: number; bytes: number; body: Record<string, unknown> }> {
  const body = payload === undefined ? '' : JSON.stringify(payload);
  const headers = {
    ...signRequest(peer, d.signingKey, method, path, body),
    ...(body ? { 'content-type': 'application/json' } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = request(`${d.server.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({
            status: res.statusCode ?? 0,
            bytes: Buffer.byteLength(text),
            body: JSON.parse(text) as Record<string, unknown>,
          });
        } catch (err) {
          reject(err as Error);
        }
      });
    });
    req.on('error', reject);
    req.end(body || undefined);
  });
}

/** `count` fraud-reported entities at `d`, each linking one phone hash of its own. */
async function flagPhones(d: Deployment, count: number, prefix: string): Promise<void> {
  const at = new Date(Date.now() - 3_600_000).toISOString();
  for (let i = 0; i < count; i += 1000) {
    const events = Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({
      event_id: `${prefix}-${i + j}`,
      type: 'fraud.reported',
      entity_id: hex(`${prefix}-entity-${i + j}`),
      occurred_at: at,
      linked_identifiers: [{ type: 'phone', hash: hex(`phone-${i + j}`) }],
    }));
    await admin(d, 'POST', '/api/v1/trust/events', { events });
  }
}

const PROBES = blindInputs(Array.from({ length: 1000 }, (_, i) => prfInput('phone', hex(`probe-${i}`)))).map(
  (b) => b.blinded,
);

/** Evaluate (with its batch proof) in this process, one core: before any server runs. */
function pureEvaluate(): number {
  const keys = generateOprfKey();
  evaluateBlinded(keys, PROBES);
  const cpu0 = process.cpuUsage();
  const rounds = 3;
  for (let i = 0; i < rounds; i++) evaluateBlinded(keys, PROBES);
  const used = process.cpuUsage(cpu0);
  return Math.round((rounds * 1000) / ((used.user + used.system) / 1e6));
}

/** Evaluate throughput over HTTP against one `vouch serve` worker (1,000-element batches). */
async function evaluateThroughput(a: Deployment, pure: number): Promise<void> {
  const elements = PROBES;
  const peer = benchPeer();
  await admin(a, 'POST', '/api/v1/network/peers', {
    name: 'bench-evaluate',
    url: 'http://127.0.0.1:9',
    signing_key: peer.signingKey,
    budget_per_day: 10_000_000,
  });
  const payload = { elements: elements.map(b64) };
  const first = await peerCall(a, peer, 'POST', '/network/v1/evaluate', payload);
  if (first.status !== 200) throw new Error(`evaluate: ${first.status} ${JSON.stringify(first.body)}`);
  const t0 = performance.now();
  const cpu0 = cpuSeconds(a.server.pid);
  // Two requests in flight keep the server's one worker busy while the other is on the wire.
  let next = 0;
  const worker = async () => {
    while (next < EVALUATE_BATCHES) {
      next++;
      const res = await peerCall(a, peer, 'POST', '/network/v1/evaluate', payload);
      if (res.status !== 200) throw new Error(`evaluate: ${res.status}`);
    }
  };
  await Promise.all([worker(), worker()]);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(a.server.pid) - cpu0;
  results.evaluate = {
    pure_elements_per_cpu_s: pure,
    http_elements_per_server_cpu_s: Math.round((EVALUATE_BATCHES * 1000) / cpu),
    http_elements_per_s_one_worker: Math.round((EVALUATE_BATCHES * 1000) / seconds),
    http_ms_per_1000_batch: Math.round((seconds * 1000 * 2) / EVALUATE_BATCHES),
    request_bytes: Buffer.byteLength(JSON.stringify(payload)),
    response_bytes: first.bytes,
  };
  log(`evaluate: ${JSON.stringify(results.evaluate)}`);
}

/**
 * A sync of `FLAGS` flags: A publishes them (in the background, scores timed meanwhile); a stand-in peer pulls them
 * (bytes); B and C sync (time).
 */
async function syncFigures(a: Deployment, b: Deployment, c: Deployment): Promise<void> {
  let t0 = performance.now();
  await flagPhones(a, FLAGS, 'a');
  const ingestS = (performance.now() - t0) / 1000;
  // B holds 1,000 phones, 100 of them among A's flags.
  const at = new Date(Date.now() - 3_600_000).toISOString();
  await admin(b, 'POST', '/api/v1/trust/events', {
    events: Array.from({ length: 1000 }, (_, i) => ({
      event_id: `b-${i}`,
      type: 'identifier.linked',
      entity_id: hex(`b-entity-${i}`),
      occurred_at: at,
      linked_identifiers: [{ type: 'phone', hash: hex(i < 100 ? `phone-${i * 7}` : `b-only-${i}`) }],
    })),
  });

  // The first pull starts A's publishing (one PRF evaluation per new flagged identifier, in
  // chunks of 500 in its worker thread) and is answered within seconds with what is ready; the
  // rest is published in the background. Meanwhile scores at A are timed: publishing must not
  // hold them (before: one write transaction held SQLite's lock for the whole publish).
  const peer = benchPeer();
  await admin(a, 'POST', '/api/v1/network/peers', {
    name: 'bench-pull',
    url: 'http://127.0.0.1:9',
    signing_key: peer.signingKey,
  });
  const keyA = (await createKey(a.server.url, a.token, ['trust:read', 'trust:write'])).key;
  t0 = performance.now();
  let cpu0 = cpuSeconds(a.server.pid);
  const firstPage = await peerCall(a, peer, 'GET', '/network/v1/flags?limit=1000');
  if (firstPage.status !== 200) throw new Error(`flags: ${firstPage.status}`);
  const firstPageS = (performance.now() - t0) / 1000;
  const scoreMs: number[] = [];
  for (let i = 0; ; i++) {
    const s0 = performance.now();
    const scored = await call(a.server.url, 'POST', '/api/v1/trust/score', {
      headers: { 'x-api-key': keyA },
      body: { entity_id: hex(`a-entity-${i % FLAGS}`), amount: 50, currency: 'USD' },
    });
    if (scored.status !== 200) throw new Error(`score at A: ${scored.status}`);
    scoreMs.push(performance.now() - s0);
    const status = (await admin(a, 'GET', '/api/v1/network/status')) as { published: number };
    if (status.published >= FLAGS) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const publishS = (performance.now() - t0) / 1000;
  const publishCpu = cpuSeconds(a.server.pid) - cpu0;
  scoreMs.sort((x, y) => x - y);
  const pct = (q: number) =>
    Math.round(scoreMs[Math.min(scoreMs.length - 1, Math.floor(q * scoreMs.length))]! * 10) / 10;

  // The whole set, pulled from the stored set in pages of 1,000 (as a sync does).
  t0 = performance.now();
  cpu0 = cpuSeconds(a.server.pid);
  let bytes = 0;
  let entries = 0;
  let cursor: string | undefined;
  for (;;) {
    const query = new URLSearchParams({ limit: '1000', ...(cursor ? { cursor } : {}) });
    const page = await peerCall(a, peer, 'GET', `/network/v1/flags?${query}`);
    if (page.status !== 200) throw new Error(`flags: ${page.status}`);
    bytes += page.bytes;
    entries += (page.body.entries as unknown[]).length;
    cursor = page.body.next_cursor as string | undefined;
    if (!cursor) break;
  }
  const pullS = (performance.now() - t0) / 1000;
  const pullCpu = cpuSeconds(a.server.pid) - cpu0;

  for (const [from, to] of [
    [b, a],
    [c, a],
    [a, b],
    [a, c],
  ] as const)
    await admin(from, 'POST', '/api/v1/network/peers', {
      name: to.name,
      url: to.server.url,
      signing_key: to.signingKey,
    });
  t0 = performance.now();
  cpu0 = cpuSeconds(a.server.pid);
  const cpuB0 = cpuSeconds(b.server.pid);
  const atB = (await admin(b, 'POST', '/api/v1/network/sync')) as {
    peers: Array<{ flags_pulled: number; matched: number; error?: string }>;
  };
  const syncBS = (performance.now() - t0) / 1000;
  const syncCpu = {
    a: Math.round((cpuSeconds(a.server.pid) - cpu0) * 10) / 10,
    b: Math.round((cpuSeconds(b.server.pid) - cpuB0) * 10) / 10,
  };
  t0 = performance.now();
  const again = (await admin(b, 'POST', '/api/v1/network/sync')) as {
    peers: Array<{ flags_pulled: number; matched: number }>;
  };
  const resyncS = (performance.now() - t0) / 1000;
  results.sync = {
    flags: FLAGS,
    flags_ingest_s: Math.round(ingestS * 10) / 10,
    first_page_s: Math.round(firstPageS * 10) / 10,
    publish_s: Math.round(publishS * 10) / 10,
    publish_cpu_s_at_a: Math.round(publishCpu * 10) / 10,
    score_ms_at_a_while_publishing: { n: scoreMs.length, p50: pct(0.5), p99: pct(0.99), max: pct(1) },
    pull_all_pages_s: Math.round(pullS * 10) / 10,
    pull_cpu_s_at_a: Math.round(pullCpu * 10) / 10,
    pulled_entries: entries,
    pulled_bytes: bytes,
    bytes_per_entry: Math.round(bytes / Math.max(1, entries)),
    b_full_sync_s: Math.round(syncBS * 10) / 10,
    b_full_sync_cpu_s: syncCpu,
    b_result: atB.peers,
    b_incremental_sync_s: Math.round(resyncS * 100) / 100,
    b_incremental_result: again.peers,
  };
  log(`sync: ${JSON.stringify(results.sync)}`);
}

async function scoreLatency(b: Deployment, label: string, key: string): Promise<OpenLoopResult> {
  let i = 0;
  const result = await openLoop({
    url: b.server.url,
    rate: RATE,
    durationS: SECONDS,
    warmupS: 3,
    request: () => ({
      method: 'POST',
      path: '/api/v1/trust/score',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ entity_id: hex(`b-entity-${i++ % 1000}`), amount: 50 + (i % 500), currency: 'USD' }),
    }),
  });
  log(`score ${label}: ${JSON.stringify(result)}`);
  return result;
}

async function main(): Promise<void> {
  const deployments: Deployment[] = [];
  let closeSilent = () => {};
  results.load_average_at_start = loadavg().map((l) => Math.round(l * 10) / 10);
  const pure = pureEvaluate();
  try {
    deployments.push(...(await Promise.all(['A', 'B', 'C'].map(deploy))));
    const [a, b, c] = deployments as [Deployment, Deployment, Deployment];
    const key = (await createKey(b.server.url, b.token, ['trust:read', 'trust:write'])).key;

    await evaluateThroughput(a, pure);
    await syncFigures(a, b, c);

    // Score latency at B: no peer, then three peers (A, C and an unreachable one: it accepts
    // connections and never answers) with syncs running all along, one a second after the last —
    // each waits on the unreachable peer until the per-call timeout (10 s).
    const peers = (await admin(b, 'GET', '/api/v1/network/peers')) as { data: Array<{ id: string }> };
    for (const p of peers.data) await admin(b, 'DELETE', `/api/v1/network/peers/${p.id}`);
    const none = await scoreLatency(b, 'no peer', key);
    await admin(b, 'POST', '/api/v1/network/peers', { name: 'A', url: a.server.url, signing_key: a.signingKey });
    await admin(b, 'POST', '/api/v1/network/peers', { name: 'C', url: c.server.url, signing_key: c.signingKey });
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    closeSilent = () => {
      silent.closeAllConnections();
      silent.close();
    };
    await admin(b, 'POST', '/api/v1/network/peers', {
      name: 'unreachable',
      url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      signing_key: benchPeer().signingKey,
    });
    await admin(b, 'POST', '/api/v1/network/sync');
    let syncing = true;
    let syncs = 0;
    const loop = (async () => {
      while (syncing) {
        await admin(b, 'POST', '/api/v1/network/sync');
        syncs++;
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    const three = await scoreLatency(b, 'three peers, one unreachable, syncing', key);
    syncing = false;
    const waited = performance.now();
    await loop;
    log(`the last sync ended ${Math.round(performance.now() - waited)} ms after the scores`);
    results.score = {
      rate: RATE,
      seconds: SECONDS,
      no_peer: none,
      three_peers_one_unreachable_syncing: { ...three, syncs_during: syncs },
    };
    results.load_average_at_end = loadavg().map((l) => Math.round(l * 10) / 10);
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  } finally {
    closeSilent();
    for (const d of deployments) await d.server.stop().catch(() => undefined);
    for (const d of deployments) rmSync(d.dir, { recursive: true, force: true });
  }
}

await main();
