// Property/fuzz tests for the scoring, events, entities, dispute and label endpoints: hostile
// bodies and paths never produce a 5xx, and every 4xx is a problem document.
import { test, before } from 'node:test';
import fc from 'fast-check';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { RUNS, JSON_TYPE, wellBehaved, bodies, nasty, value, objectText } from '../helpers/fuzz.ts';
import { hash, score } from '../helpers/trust.ts';
import { composedDisguise } from '../helpers/disguises.ts';

const SCORE_KEYS = ['entity_id', 'amount', 'currency', 'context'];
const CONTEXT_KEYS = [
  'counterparty_id',
  'side',
  'payment_method',
  'country',
  'counterparty_country',
  'account_created_at',
  'trade_id',
  'linked_identifiers',
];
const EVENT_KEYS = [
  'event_id',
  'type',
  'entity_id',
  'occurred_at',
  'amount',
  'currency',
  'counterparty_id',
  'trade_id',
  'resolution',
  'linked_identifiers',
];
const DISPUTE_KEYS = [
  'dispute_id',
  'trade',
  'buyer_id',
  'seller_id',
  'opened_by',
  'opened_at',
  'reason',
  'evidence',
  'context',
];

describeEachBackend('fuzz: the trust and dispute endpoints never answer 5xx', (ctx) => {
  let admin = '';
  before(async () => {
    admin = await ctx().token();
  });
  const post = (url: string, payload: string) =>
    ctx().inject({ method: 'POST', url, headers: { ...JSON_TYPE, ...bearer(admin) }, payload });

  test('POST /api/v1/trust/score with random bodies and contexts: never 5xx, 4xx always problem+json', async () => {
    const context = fc.array(fc.tuple(fc.constantFrom(...CONTEXT_KEYS), value), { maxLength: 4 }).map(objectText);
    const withContext = fc
      .tuple(
        fc.constantFrom(hash('fuzz'), 'x'),
        fc.oneof(fc.double(), fc.integer()),
        fc.constantFrom('USD', 'BTC', 'usd'),
        context,
      )
      .map(
        ([id, amount, currency, ctxText]) =>
          `{"entity_id":${JSON.stringify(id)},"amount":${JSON.stringify(amount) ?? 'null'},"currency":"${currency}","context":${ctxText}}`,
      );
    await fc.assert(
      fc.asyncProperty(fc.oneof(bodies(SCORE_KEYS), withContext), async (body) =>
        wellBehaved(await post('/api/v1/trust/score', body), body),
      ),
      { numRuns: RUNS },
    );
  });

  test('POST /api/v1/trust/events with random events: never 5xx, 4xx always problem+json', async () => {
    const events = fc.array(bodies(EVENT_KEYS), { maxLength: 3 }).map((evs) => `{"events":[${evs.join(',')}]}`);
    await fc.assert(
      fc.asyncProperty(fc.oneof(bodies(['events']), events), async (body) =>
        wellBehaved(await post('/api/v1/trust/events', body), body),
      ),
      { numRuns: RUNS },
    );
  });

  test('GET /api/v1/trust/entities/{id} with random ids: never 5xx, 4xx always problem+json', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(nasty, fc.string({ maxLength: 300 })), async (id) => {
        // A lone surrogate cannot be URI-encoded: send the bytes a careless client would (invalid UTF-8).
        let path = '%ED%A0%80';
        try {
          path = encodeURIComponent(id);
        } catch {
          /* keep the invalid bytes */
        }
        const res = await ctx().inject({
          method: 'GET',
          url: `/api/v1/trust/entities/${path}`,
          headers: bearer(admin),
        });
        wellBehaved(res, id);
      }),
      { numRuns: RUNS },
    );
  });

  test('POST /api/v1/decisions/{id}/label with random notes (control characters, disguised raw identifiers): never 5xx', async () => {
    const scored = await score(ctx(), admin, { entity_id: hash('fuzz-label'), amount: 10, currency: 'USD' });
    const url = `/api/v1/decisions/${String(scored.json().decision_id)}/label`;
    const note = fc.oneof(
      nasty,
      fc.string({ maxLength: 500 }),
      fc.string({ unit: 'binary', maxLength: 100 }),
      composedDisguise.map((d) => d.text.slice(0, 500)),
    );
    await fc.assert(
      fc.asyncProperty(note, async (text) => {
        const body = JSON.stringify({ label: 'legit', note: text });
        const res = await post(url, body);
        wellBehaved(res, body);
        if (/\p{Cc}/u.test(text) && res.statusCode === 200) throw new Error(`a control character was stored: ${body}`);
      }),
      { numRuns: RUNS },
    );
  });

  test('POST /api/v1/dispute/analyze with random bodies: never 5xx, 4xx always problem+json', async () => {
    await fc.assert(
      fc.asyncProperty(bodies(DISPUTE_KEYS), async (body) =>
        wellBehaved(await post('/api/v1/dispute/analyze', body), body),
      ),
      { numRuns: RUNS },
    );
  });
});
