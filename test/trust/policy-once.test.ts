// POST /api/v1/trust/score and its batch read the environment's policies once per request and
// hand them on: the crypto-asset check, the score, its cache key, its safe amount and the shadow
// score all use that one read (src/trust/routes.ts, src/trust/batch.ts, src/trust/scoring.ts).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { backends, freshStore } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import type { LivePolicy, PolicyRegistry } from '../../src/policies/registry.ts';
import type { Principal } from '../../src/lib/principal.ts';
import type { Metrics } from '../../src/http/observability.ts';
import type { RouteDefinition } from '../../src/http/route.ts';
import type { ScoringService } from '../../src/trust/scoring.ts';
import { AnswerText, ScoringService as Scoring } from '../../src/trust/scoring.ts';
import { DecisionWriter } from '../../src/audit/decisions.ts';
import { trustRoutes } from '../../src/trust/routes.ts';
import { batchRoutes } from '../../src/trust/batch.ts';
import type { Store } from '../../src/store/db.ts';

const principal: Principal = {
  id: 'key_1',
  kind: 'api_key',
  clientId: 'client_1',
  role: 'service',
  scopes: new Set(['trust:read']),
  environment: 'test',
};
const pair: LivePolicy = { active: { ...DEFAULT_POLICY, version: 'handed-1' }, shadow: null };

/** A registry that counts its reads. */
function countingRegistry() {
  const reads = { count: 0 };
  const registry = {
    get: () => (reads.count++, pair),
    active: () => (reads.count++, pair.active),
    shadow: () => (reads.count++, pair.shadow),
  } as unknown as PolicyRegistry;
  return { registry, reads };
}

const metrics = { counter: () => ({ inc() {} }) } as unknown as Metrics;
const scores = { inc() {} } as never;
/** Enough of a reply for a route that sends its answer as text. */
const reply = {
  type() {
    return this;
  },
  send(payload: unknown) {
    return payload;
  },
} as unknown as FastifyReply;

function handler(routes: RouteDefinition[], url: string) {
  const route = routes.find((r) => r.url === url && r.method === 'POST');
  assert.ok(route, url);
  return (body: unknown) =>
    route.handler({ body, principal, id: 'req-1' } as unknown as FastifyRequest, reply) as Promise<
      Record<string, unknown>
    >;
}

describe('the score routes read the policies once and hand them on', () => {
  test('POST /api/v1/trust/score: one read, the same pair handed to the scoring service', async () => {
    const { registry, reads } = countingRegistry();
    const handed: LivePolicy[] = [];
    const scoring = {
      answer: async (_b: unknown, _p: Principal, live: LivePolicy) => (
        handed.push(live),
        new AnswerText('{"risk_level":"low"}', 'low', false)
      ),
    } as unknown as ScoringService;
    const routes = trustRoutes({ store: {} as Store, scoring, policies: registry, metrics, scores });
    await handler(routes, '/api/v1/trust/score')({ entity_id: hash('a'), amount: 10, currency: 'USD' });
    assert.equal(reads.count, 1);
    assert.deepEqual(handed, [pair]);
    assert.equal(handed[0], pair);
  });

  test('POST /api/v1/trust/score/batch: one read for the whole batch, every item scored with it', async () => {
    const { registry, reads } = countingRegistry();
    const handed: LivePolicy[] = [];
    const scoring = {
      answer: async (_b: unknown, _p: Principal, live: LivePolicy) => (
        handed.push(live),
        new AnswerText('{"risk_level":"low"}', 'low', false)
      ),
    } as unknown as ScoringService;
    const routes = batchRoutes({ scoring, policies: registry, check: {}, scores });
    const item = (n: string) => ({ entity_id: hash(n), amount: 10, currency: 'USD' });
    await handler(routes, '/api/v1/trust/score/batch')({ requests: [item('a'), item('b'), item('c')] });
    assert.equal(reads.count, 1);
    assert.equal(handed.length, 3);
    assert.ok(handed.every((live) => live === pair));
  });
});

for (const backend of backends()) {
  describe(`ScoringService scores with the policies it is handed (${backend})`, () => {
    test('version, level thresholds and shadow score come from the handed pair', async () => {
      const { store, drop } = await freshStore(backend);
      const decisions = new DecisionWriter(store.db);
      try {
        const scoring = new Scoring(store, 30, decisions);
        const active = { ...DEFAULT_POLICY, version: 'handed-2', bias: 3 };
        const shadow = { ...DEFAULT_POLICY, version: 'shadow-2', bias: -3 };
        const response = await scoring.score({ entity_id: hash('someone'), amount: 10, currency: 'USD' }, principal, {
          active,
          shadow,
        });
        assert.equal(response.policy_version, 'handed-2');
        assert.ok(response.score > 90, `bias 3 scores high: ${response.score}`);
        const row = await store.db
          .selectFrom('decisions')
          .select(['policy_version', 'shadow_version', 'shadow_score'])
          .where('id', '=', response.decision_id)
          .executeTakeFirstOrThrow();
        assert.equal(row.policy_version, 'handed-2');
        assert.equal(row.shadow_version, 'shadow-2');
        const asActive = await scoring.score({ entity_id: hash('someone'), amount: 10, currency: 'USD' }, principal, {
          active: shadow,
          shadow: null,
        });
        assert.equal(Number(row.shadow_score), asActive.score);
        assert.ok(asActive.score < response.score);
      } finally {
        await decisions.drain();
        await drop();
      }
    });
  });
}
