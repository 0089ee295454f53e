// The bench's closed-loop scenarios, each run with wrk (the default when installed: it leaves the
// server most of the machine) or autocannon (`--load autocannon`, and where wrk is missing), and
// the open-loop fixed-rate one. Both generators send the same request shapes.
import autocannon, { type Options, type Result } from 'autocannon';
import { runWrk, type WrkMode, type WrkResult } from './wrk.ts';
import { openLoop, type OpenLoopResult } from './open-loop.ts';
import { entityId, rng, scoreBody } from './data.ts';

export type Load = 'wrk' | 'autocannon';
export type Scenario = 'hello' | 'score' | 'hit' | 'dispute' | 'batch' | 'events';

export interface ScenarioOptions {
  load: Load;
  url: string;
  entities: number;
  durationS: number;
  connections: number;
  /** a header line, "name: value" */
  auth?: string;
  seed: number;
}

/** Score requests per batch call (the endpoint's maximum). */
export const BATCH = 100;

/** A random score request (a cache miss): entity, amount and counterparty drawn from `random`. */
function disputeBody(random: () => number, entities: number) {
  const b = Math.floor(random() * (entities - 1));
  return {
    dispute_id: `d-${b}`,
    trade: { trade_id: `t-${b}`, amount: 150, currency: 'USD', payment_method: 'bank_transfer' },
    buyer_id: entityId(b),
    seller_id: entityId(b + 1),
    opened_by: 'buyer',
    reason: 'asset_not_released',
    evidence: {
      payment_proof_submitted: true,
      bank_reference_matches: random() < 0.8,
      payer_name_matches: random() < 0.9,
    },
  };
}

let eventSeq = 0;
function eventsBody(entities: number) {
  const at = new Date().toISOString();
  return {
    events: Array.from({ length: BATCH }, () => {
      eventSeq += 1;
      return {
        event_id: `live-${Date.now()}-${eventSeq}`,
        type: 'trade.completed',
        entity_id: entityId(eventSeq % entities),
        occurred_at: at,
        amount: 100,
        currency: 'USD',
      };
    }),
  };
}

const PATHS: Record<Exclude<Scenario, 'hello'>, string> = {
  score: '/api/v1/trust/score',
  hit: '/api/v1/trust/score',
  dispute: '/api/v1/dispute/analyze',
  batch: '/api/v1/trust/score/batch',
  events: '/api/v1/trust/events',
};

function headerObject(auth: string | undefined): Record<string, string> {
  if (!auth) return {};
  const at = auth.indexOf(':');
  return { [auth.slice(0, at).trim()]: auth.slice(at + 1).trim() };
}

/** The body of one request of the scenario (autocannon and the open loop build them here). */
function bodyFor(scenario: Exclude<Scenario, 'hello'>, random: () => number, entities: number): unknown {
  switch (scenario) {
    case 'score':
      return scoreBody(random, entities);
    case 'hit':
      return { entity_id: entityId(7), amount: 100, currency: 'USD', context: { payment_method: 'bank_transfer' } };
    case 'dispute':
      return disputeBody(random, entities);
    case 'batch':
      return { requests: Array.from({ length: BATCH }, () => scoreBody(random, entities)) };
    case 'events':
      return eventsBody(entities);
  }
}

export interface Measured {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

let idsCache: { n: number; ids: string[] } | undefined;
function ids(n: number): string[] {
  if (idsCache?.n !== n) idsCache = { n, ids: Array.from({ length: n }, (_, i) => entityId(i)) };
  return idsCache.ids;
}

export async function closedLoop(scenario: Scenario, o: ScenarioOptions): Promise<Measured> {
  if (o.load === 'wrk') {
    const mode: WrkMode = scenario === 'hello' ? 'fixed' : scenario;
    const r: WrkResult = await runWrk({
      url: o.url,
      mode,
      durationS: o.durationS,
      connections: o.connections,
      seed: o.seed,
      ...(o.auth ? { auth: o.auth } : {}),
      ...(scenario === 'hello' ? {} : { ids: ids(o.entities) }),
    });
    return r;
  }
  const random = rng(o.seed);
  const opts: Options =
    scenario === 'hello'
      ? { url: o.url }
      : {
          url: o.url,
          requests: [
            {
              method: 'POST',
              path: PATHS[scenario],
              headers: { 'content-type': 'application/json', ...headerObject(o.auth) },
              setupRequest: (req) => ({ ...req, body: JSON.stringify(bodyFor(scenario, random, o.entities)) }),
            },
          ],
        };
  const r = await new Promise<Result>((resolve, reject) => {
    autocannon({ connections: o.connections, duration: o.durationS, ...opts }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
  return {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
  };
}

/** Score requests (cache misses) at a fixed offered rate, open loop (bench/open-loop.ts). */
export function fixedRate(
  o: Omit<ScenarioOptions, 'load' | 'connections'> & { rate: number },
): Promise<OpenLoopResult> {
  const random = rng(o.seed);
  const headers = { 'content-type': 'application/json', ...headerObject(o.auth) };
  return openLoop({
    url: o.url,
    rate: o.rate,
    durationS: o.durationS,
    request: () => ({
      method: 'POST',
      path: PATHS.score,
      headers,
      body: JSON.stringify(scoreBody(random, o.entities)),
    }),
  });
}
