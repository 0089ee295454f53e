// Issue 18, item 2, through the HTTP API: every disguise of the corpus and of the composed-disguise
// property is refused wherever an id goes (scored entity, counterparty, linked identifiers of a
// score or an event) with 400 raw_identifier_rejected naming the field, the value never echoed
// and nothing stored; the corpus's legitimate ids are scored and stored.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { composedDisguise, corpus } from '../helpers/disguises.ts';
import { event, hash } from '../helpers/trust.ts';

type Where = 'entity_id' | 'counterparty_id' | 'linked' | 'event' | 'event_linked';
const WHERE: Where[] = ['entity_id', 'counterparty_id', 'linked', 'event', 'event_linked'];
const FIELD: Record<Where, string> = {
  entity_id: 'entity_id',
  counterparty_id: 'context.counterparty_id',
  linked: 'context.linked_identifiers.0.hash',
  event: 'events.0.entity_id',
  event_linked: 'events.0.linked_identifiers.0.hash',
};

function send(ctx: TestContext, token: string, where: Where, id: string) {
  const headers = bearer(token);
  const base = { entity_id: hash('raw-http'), amount: 25, currency: 'USD' };
  if (where === 'event' || where === 'event_linked') {
    const ev =
      where === 'event'
        ? event('chargeback', id)
        : event('identifier.linked', hash('raw-http'), { linked_identifiers: [{ type: 'phone', hash: id }] });
    return ctx.inject({ method: 'POST', url: '/api/v1/trust/events', headers, payload: { events: [ev] } });
  }
  const body =
    where === 'entity_id'
      ? { ...base, entity_id: id }
      : {
          ...base,
          context:
            where === 'counterparty_id'
              ? { counterparty_id: id }
              : { linked_identifiers: [{ type: 'phone', hash: id }] },
        };
  return ctx.inject({ method: 'POST', url: '/api/v1/trust/score', headers, payload: body });
}

/** Rows of every table an accepted score or event writes to. */
async function storedRows(ctx: TestContext): Promise<number> {
  const db = ctx.store.db;
  let total = 0;
  for (const table of ['events', 'entities', 'identifiers', 'decisions'] as const) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    total += Number(row.n);
  }
  return total;
}

/** The raw value as it would appear in a JSON body, escapes included. */
const echoed = (body: string, raw: string) => body.includes(raw) || body.includes(JSON.stringify(raw).slice(1, -1));

describeEachBackend('raw identifiers in disguise over HTTP', (ctx) => {
  let token = '';
  before(async () => {
    token = await ctx().token();
  });

  async function assertRefused(where: Where, raw: string): Promise<void> {
    const res = await send(ctx(), token, where, raw);
    const body = problem(res, 400, 'raw_identifier_rejected');
    assert.deepEqual(
      (body.errors as Array<{ field: string }>).map((e) => e.field),
      [FIELD[where]],
      `${where}: ${JSON.stringify(raw)}`,
    );
    if (raw.trim().length >= 4)
      assert.ok(!echoed(res.body, raw), `the raw value is never echoed: ${JSON.stringify(raw)}`);
  }

  test('corpus: every disguised raw identifier is refused in every place an id goes, and nothing is stored', async () => {
    const rows = await storedRows(ctx());
    for (const { value } of corpus.refused) {
      for (const where of WHERE) await assertRefused(where, value);
    }
    assert.equal(await storedRows(ctx()), rows, 'no event, entity, identifier or decision was written');
  });

  test('corpus: every legitimate id is scored (200) and linked (200), and is stored', async () => {
    const rows = await storedRows(ctx());
    for (const { value } of corpus.accepted) {
      if (value.length === 0) continue; // too short for any id field
      const res = await send(ctx(), token, 'entity_id', value);
      assert.equal(res.statusCode, 200, `${JSON.stringify(value)}: ${res.body}`);
      if (value.length >= 8) {
        const linked = await send(ctx(), token, 'event_linked', value);
        assert.equal(linked.statusCode, 200, `${JSON.stringify(value)}: ${linked.body}`);
      }
    }
    assert.ok((await storedRows(ctx())) > rows, 'the accepted ids were stored');
  });

  test('property: a raw identifier under random stacked disguises is refused wherever it goes, and nothing is stored', async () => {
    const rows = await storedRows(ctx());
    await fc.assert(
      fc.asyncProperty(composedDisguise, fc.constantFrom(...WHERE), async ({ text }, where) => {
        fc.pre(text.length <= 256 && !/\p{Cc}/u.test(text)); // other 400s, not this one's
        await assertRefused(where, text);
      }),
      { numRuns: 150 },
    );
    assert.equal(await storedRows(ctx()), rows);
  });
});
