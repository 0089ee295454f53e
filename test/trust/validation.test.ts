// Validation of the trust endpoints (issue 8): disguised raw identifiers, lone surrogates and
// control characters, dates before 2009, optional trade amounts, raw-identifier precedence,
// error wording, country codes, linked-identifier caps, deep nesting, and hashed-id mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import fc from 'fast-check';
import { digest as anyDigest, disguisedRawIdentifier } from '../helpers/fuzz.ts';
import { event, hash, postEvents, score } from '../helpers/trust.ts';

type Ev = Record<string, unknown>;
interface FieldErr {
  field: string;
  message: string;
}

const postBody = (ctx: TestContext, token: string, url: string, payload: string) =>
  ctx.inject({ method: 'POST', url, headers: { ...bearer(token), 'content-type': 'application/json' }, payload });
const events = (ctx: TestContext, token: string, evs: Ev[]) =>
  ctx.inject({ method: 'POST', url: '/api/v1/trust/events', headers: bearer(token), payload: { events: evs } });
const entity = (ctx: TestContext, token: string, id: string) =>
  ctx.inject({ method: 'GET', url: `/api/v1/trust/entities/${encodeURIComponent(id)}`, headers: bearer(token) });
const errorsOf = (body: Record<string, unknown>) => body.errors as FieldErr[];
const fields = (body: Record<string, unknown>) => errorsOf(body).map((e) => e.field);

describeEachBackend('trust validation', (ctx) => {
  let admin = '';
  const token = async () => (admin ||= await ctx().token());
  const base = { entity_id: hash('validation'), amount: 10, currency: 'USD' };

  test('disguised raw identifiers: 400 raw_identifier_rejected on score and events, never echoed', async () => {
    const disguised = [
      'tel:+14155552671',
      'John Doe <alice@example.com>',
      'alice@example.com.',
      'alice\uff20example.com',
      '\u0664\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661',
      '4111.1111.1111.1111',
      'IBAN GB82 WEST 1234 5698 7654 32',
      'mailto:bob@example.org',
      '+1_415_555_2671',
    ];
    for (const raw of disguised) {
      const s = problem(await score(ctx(), await token(), { ...base, entity_id: raw }), 400, 'raw_identifier_rejected');
      assert.deepEqual(fields(s), ['entity_id'], raw);
      assert.ok(!JSON.stringify(s).includes(raw));
      const e = problem(
        await events(ctx(), await token(), [event('chargeback', hash('ok'), { counterparty_id: raw })]),
        400,
        'raw_identifier_rejected',
      );
      assert.deepEqual(fields(e), ['events.0.counterparty_id'], raw);
    }
  });

  test('property: a disguised raw identifier anywhere an id goes is 400 raw_identifier_rejected, never echoed', async () => {
    const where = fc.constantFrom('entity_id', 'counterparty_id', 'linked', 'event');
    await fc.assert(
      fc.asyncProperty(disguisedRawIdentifier, where, async ({ text }, at) => {
        const res =
          at === 'event'
            ? await events(ctx(), await token(), [event('chargeback', text)])
            : await score(
                ctx(),
                await token(),
                at === 'entity_id'
                  ? { ...base, entity_id: text }
                  : {
                      ...base,
                      context:
                        at === 'counterparty_id'
                          ? { counterparty_id: text }
                          : { linked_identifiers: [{ type: 'other', hash: text }] },
                    },
              );
        const body = problem(res, 400, 'raw_identifier_rejected');
        assert.ok(!res.body.includes(JSON.stringify(text).slice(1, -1)), 'the raw value is never echoed');
        assert.equal(fields(body).length, 1);
      }),
      { numRuns: 150 },
    );
  });

  test('a raw identifier and another error in one batch: the raw identifier is reported (400 raw_identifier_rejected)', async () => {
    const raw = 'carol@example.com';
    const batches: Ev[][] = [
      // a semantic error elsewhere in the batch
      [event('trade.completed', hash('a'), { amount: 5, currency: 'usd' }), event('chargeback', raw)],
      [event('chargeback', raw), event('dispute.resolved', hash('a'))],
      // a schema error elsewhere in the batch
      [event('chargeback', hash('a'), { note: 'x' }), event('chargeback', raw)],
      [
        event('chargeback', hash('a'), { occurred_at: 'yesterday' }),
        event('fraud.reported', hash('b'), { counterparty_id: raw }),
      ],
      // both in the same event
      [event('trade.exploded', raw)],
      [event('chargeback', raw, { occurred_at: '0001-01-01T00:00:00Z' })],
    ];
    for (const batch of batches) {
      const body = problem(await events(ctx(), await token(), batch), 400, 'raw_identifier_rejected');
      assert.ok(!JSON.stringify(body).includes(raw), 'the raw value is never echoed');
      assert.ok(
        fields(body).some((f) => /entity_id|counterparty_id/.test(f)),
        fields(body).join(','),
      );
    }
    const s = problem(
      await score(ctx(), await token(), { entity_id: raw, amount: -1, currency: 'usd' }),
      400,
      'raw_identifier_rejected',
    );
    assert.ok(!JSON.stringify(s).includes(raw));
  });

  // The validation side is covered in validation-rules.test.ts; storing such a trade needs the
  // ingest side of the same item (src/trust/ingest.ts, another branch): drop the todo once merged.
  test('trade.completed without amount and currency is accepted (200) and counts as a trade', async () => {
    const id = hash('no-amount');
    assert.deepEqual(await postEvents(ctx(), await token(), [event('trade.completed', id)]), {
      accepted: 1,
      duplicates: 0,
    });
    assert.equal((await entity(ctx(), await token(), id)).json().trades_completed, 1);
    // amount and currency still go together
    for (const [extra, field] of [
      [{ amount: 5 }, 'events.0.currency'],
      [{ currency: 'USD' }, 'events.0.amount'],
    ] as const) {
      const body = problem(
        await events(ctx(), await token(), [event('trade.completed', id, extra)]),
        400,
        'validation_failed',
      );
      assert.deepEqual(fields(body), [field]);
    }
  });

  test('lone surrogates and control characters (Cc, C1 included) in identifiers: 400 validation_failed', async () => {
    const bad = [
      '\ud800',
      'abc\udfffdef',
      `${hash('x').slice(0, 10)}\udc00`,
      'a\u0085b',
      'a\u009fb',
      'a\u007fb',
      'a\u0000b',
    ];
    for (const v of bad) {
      const cases: Array<[Ev, string]> = [
        [event('chargeback', v), 'events.0.entity_id'],
        [{ ...event('chargeback', hash('s')), event_id: v }, 'events.0.event_id'],
        [event('chargeback', hash('s'), { counterparty_id: v }), 'events.0.counterparty_id'],
        [event('chargeback', hash('s'), { trade_id: v }), 'events.0.trade_id'],
        [
          event('identifier.linked', hash('s'), { linked_identifiers: [{ type: 'device', hash: `device-${v}` }] }),
          'events.0.linked_identifiers.0.hash',
        ],
      ];
      for (const [ev, field] of cases) {
        const body = problem(await events(ctx(), await token(), [ev]), 400, 'validation_failed');
        assert.ok(fields(body).includes(field), `${JSON.stringify(v)}: ${fields(body).join(',')}`);
        assert.match(errorsOf(body).find((e) => e.field === field)!.message, /control character|surrogate/);
      }
      for (const [payload, field] of [
        [{ ...base, entity_id: v }, 'entity_id'],
        [{ ...base, context: { counterparty_id: v } }, 'context.counterparty_id'],
        [{ ...base, context: { trade_id: v } }, 'context.trade_id'],
        [
          { ...base, context: { linked_identifiers: [{ type: 'phone', hash: `hash-${v}-1` }] } },
          'context.linked_identifiers.0.hash',
        ],
      ] as const) {
        const body = problem(await score(ctx(), await token(), payload), 400, 'validation_failed');
        assert.ok(fields(body).includes(field), `${JSON.stringify(v)}: ${fields(body).join(',')}`);
      }
    }
    // the ids were refused, so nothing merged into one U+FFFD id
    problem(await entity(ctx(), await token(), '\ufffd'), 404, 'not_found');
    // astral characters (a valid surrogate pair) are fine
    assert.deepEqual(await postEvents(ctx(), await token(), [event('chargeback', 'entity-💥-1')]), {
      accepted: 1,
      duplicates: 0,
    });
  });

  test('dates before 2009-01-01: 400 validation_failed with a clear message (occurred_at, account_created_at)', async () => {
    for (const when of [
      '0001-01-01T00:00:00Z',
      '1970-01-01T00:00:00Z',
      '2008-12-31T23:59:59Z',
      '2009-01-01T00:59:59+01:00',
    ]) {
      const body = problem(
        await events(ctx(), await token(), [event('chargeback', hash('old'), { occurred_at: when })]),
        400,
        'validation_failed',
      );
      assert.deepEqual(errorsOf(body), [
        { field: 'events.0.occurred_at', message: 'must not be before 2009-01-01T00:00:00Z' },
      ]);
      const s = problem(
        await score(ctx(), await token(), { ...base, context: { account_created_at: when } }),
        400,
        'validation_failed',
      );
      assert.deepEqual(errorsOf(s), [
        { field: 'context.account_created_at', message: 'must not be before 2009-01-01T00:00:00Z' },
      ]);
    }
    assert.deepEqual(
      await postEvents(ctx(), await token(), [
        event('chargeback', hash('old'), { occurred_at: '2009-01-01T00:00:00Z' }),
      ]),
      { accepted: 1, duplicates: 0 },
    );
    assert.equal(
      (await score(ctx(), await token(), { ...base, context: { account_created_at: '2009-01-01T00:00:00Z' } }))
        .statusCode,
      200,
    );
  });

  test('error messages say patterns and formats in words, never as a regex', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ ...base, currency: 'usd' }, 'currency', /upper-case letters and digits/],
      [{ ...base, context: { country: 'germany' } }, 'context.country', /ISO 3166-1 alpha-2/],
      [{ ...base, context: { counterparty_country: 'de' } }, 'context.counterparty_country', /ISO 3166-1 alpha-2/],
      [{ ...base, entity_id: 'a\u0001b' }, 'entity_id', /control characters/],
      [{ ...base, context: { account_created_at: 'yesterday' } }, 'context.account_created_at', /RFC 3339 date-time/],
    ];
    for (const [payload, field, words] of cases) {
      const body = problem(await score(ctx(), await token(), payload), 400, 'validation_failed');
      const e = errorsOf(body).find((x) => x.field === field);
      assert.ok(e, `${field}: ${JSON.stringify(body.errors)}`);
      assert.match(e.message, words);
      assert.doesNotMatch(JSON.stringify(body), /pattern|\^\[|\\u00|format "/, JSON.stringify(body));
    }
  });

  test('detail names every missing field, and counts the rest', async () => {
    const body = problem(
      await postBody(ctx(), await token(), '/api/v1/trust/score', '{"context":{}}'),
      400,
      'validation_failed',
    );
    for (const f of ['entity_id', 'amount', 'currency']) assert.match(String(body.detail), new RegExp(`\\b${f}\\b`));
    const many = Array.from({ length: 6 }, (_, i) => ({ event_id: `e${i}`, occurred_at: new Date().toISOString() }));
    const ev = problem(await events(ctx(), await token(), many), 400, 'validation_failed');
    for (let i = 0; i < 6; i++)
      for (const f of ['type', 'entity_id'])
        assert.ok(String(ev.detail).includes(`events.${i}.${f}`), String(ev.detail));
    const mixed = problem(
      await score(ctx(), await token(), {
        ...base,
        amount: -1,
        currency: 'usd',
        context: { side: 'x', payment_method: 'y', country: 'z' },
      }),
      400,
      'validation_failed',
    );
    assert.match(String(mixed.detail), /and 2 more/);
  });

  test('country codes must be assigned ISO 3166-1 alpha-2 codes: ZZ is 400, DE and XK are accepted', async () => {
    for (const key of ['country', 'counterparty_country']) {
      for (const code of ['ZZ', 'AA', 'QM', 'UK', 'EU']) {
        const body = problem(
          await score(ctx(), await token(), { ...base, context: { [key]: code } }),
          400,
          'validation_failed',
        );
        assert.deepEqual(fields(body), [`context.${key}`], code);
        assert.match(errorsOf(body)[0]!.message, /ISO 3166-1 alpha-2/);
      }
      for (const code of ['DE', 'GB', 'NG', 'XK'])
        assert.equal((await score(ctx(), await token(), { ...base, context: { [key]: code } })).statusCode, 200, code);
    }
  });

  test('linked_identifiers: at most 20 per score request and per event (21: 400 validation_failed)', async () => {
    const links = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'device', hash: hash(`dev-${i}`) }));
    const s = problem(
      await score(ctx(), await token(), { ...base, context: { linked_identifiers: links(21) } }),
      400,
      'validation_failed',
    );
    assert.deepEqual(fields(s), ['context.linked_identifiers']);
    assert.match(errorsOf(s)[0]!.message, /at most 20/);
    assert.equal(
      (await score(ctx(), await token(), { ...base, context: { linked_identifiers: links(20) } })).statusCode,
      200,
    );
    const e = problem(
      await events(ctx(), await token(), [
        event('identifier.linked', hash('links'), { linked_identifiers: links(21) }),
      ]),
      400,
      'validation_failed',
    );
    assert.deepEqual(fields(e), ['events.0.linked_identifiers']);
    assert.deepEqual(
      await postEvents(ctx(), await token(), [
        event('identifier.linked', hash('links'), { linked_identifiers: links(20) }),
      ]),
      { accepted: 1, duplicates: 0 },
    );
  });

  test('deep nesting within 64 KiB: 400, never a 5xx (score context, whole bodies)', async () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const n = 32_000;
    const s = problem(
      await postBody(
        ctx(),
        await token(),
        '/api/v1/trust/score',
        `{"entity_id":"${hash('d')}","amount":1,"currency":"USD","context":{"x":${deep(n)}}}`,
      ),
      400,
      'validation_failed',
    );
    assert.deepEqual(fields(s), ['context']);
    for (const url of ['/api/v1/trust/score', '/api/v1/trust/events']) {
      problem(await postBody(ctx(), await token(), url, deep(n)), 400, 'validation_failed');
    }
    problem(
      await postBody(ctx(), await token(), '/api/v1/trust/events', `{"events":[${deep(n)}]}`),
      400,
      'validation_failed',
    );
  });
});

describeEachBackend(
  'trust validation with VOUCH_REQUIRE_HASHED_IDS=1',
  (ctx) => {
    let admin = '';
    const token = async () => (admin ||= await ctx().token());
    const digest = hash('hashed-mode');
    const MESSAGE = 'must be a hex or base64url digest of at least 32 characters';

    test('ids that are not digests of >= 32 chars: 400 validation_failed with a clear message', async () => {
      const notDigests = [
        'user_12345',
        'f'.repeat(31),
        'usr_01HZX3K4M5N6P7Q8R9S0T1V2W3',
        `${digest}!`,
        'a b'.repeat(20),
      ];
      for (const id of notDigests) {
        const s = problem(
          await score(ctx(), await token(), { entity_id: id, amount: 1, currency: 'USD' }),
          400,
          'validation_failed',
        );
        assert.deepEqual(errorsOf(s), [{ field: 'entity_id', message: MESSAGE }]);
        const c = problem(
          await score(ctx(), await token(), {
            entity_id: digest,
            amount: 1,
            currency: 'USD',
            context: { counterparty_id: id, linked_identifiers: [{ type: 'device', hash: id }] },
          }),
          400,
          'validation_failed',
        );
        assert.deepEqual(fields(c), ['context.counterparty_id', 'context.linked_identifiers.0.hash']);
        const e = problem(
          await events(ctx(), await token(), [
            event('identifier.linked', id, { counterparty_id: id, linked_identifiers: [{ type: 'device', hash: id }] }),
          ]),
          400,
          'validation_failed',
        );
        assert.deepEqual(fields(e), [
          'events.0.entity_id',
          'events.0.counterparty_id',
          'events.0.linked_identifiers.0.hash',
        ]);
        // a path parameter is invalid_request (docs/api.md, "Errors"), with the same message
        const g = problem(await entity(ctx(), await token(), id), 400, 'invalid_request');
        assert.deepEqual(errorsOf(g), [{ field: 'entity_id', message: MESSAGE }]);
      }
    });

    test('property: any hex or base64url digest of >= 32 characters is accepted as an entity id (200)', async () => {
      await fc.assert(
        fc.asyncProperty(anyDigest, async (id) => {
          const res = await score(ctx(), await token(), { entity_id: id, amount: 1, currency: 'USD' });
          assert.equal(res.statusCode, 200, `${id}: ${res.body}`);
        }),
        { numRuns: 100 },
      );
    });

    test('hex and base64url digests are accepted; a raw identifier is still raw_identifier_rejected', async () => {
      const b64 = Buffer.from(digest, 'hex').toString('base64url');
      assert.equal(
        (
          await score(ctx(), await token(), {
            entity_id: b64,
            amount: 1,
            currency: 'USD',
            context: { counterparty_id: digest },
          })
        ).statusCode,
        200,
      );
      assert.deepEqual(
        await postEvents(ctx(), await token(), [
          event('trade.completed', digest, { counterparty_id: b64, amount: 1, currency: 'USD' }),
        ]),
        { accepted: 1, duplicates: 0 },
      );
      assert.equal((await entity(ctx(), await token(), digest)).statusCode, 200);
      problem(
        await score(ctx(), await token(), { entity_id: 'alice@example.com', amount: 1, currency: 'USD' }),
        400,
        'raw_identifier_rejected',
      );
    });
  },
  { requireHashedIds: true },
);
