// GET /api/v1/desk/day (docs/api.md, "Reviews"): the desk's day from known decisions and reviews,
// every figure worked out by hand below; a machine client sees only its own, a person and an
// admin every client's; the scope and the window's bounds.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { asPerson, person, type Person } from '../helpers/people.ts';
import { hash } from '../helpers/trust.ts';
import { newId } from '../../src/lib/ids.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.ts';
import { desk, reviewerKey } from './support.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MIN = 60_000;
const URL = '/api/v1/desk/day?days=7';

interface Seed {
  owner: string;
  at: number;
  outcome: 'approve' | 'review' | 'hold' | 'decline';
  label?: ['fraud' | 'legit', 'api' | 'event' | 'review'];
  money?: [number, string];
  rules?: string[];
  shadow?: string[];
  review?: { due: number; resolved?: [number, 'approve' | 'decline', string] };
}

const RULES: Record<string, string> = { rul_a: 'big first trade', rul_b: 'card burst', rul_c: 'other client' };
const matched = (ids: string[] | undefined) =>
  ids
    ? JSON.stringify(ids.map((id) => ({ id, name: RULES[id] ?? id, version: 1, action: 'review', reads: {} })))
    : null;

async function seed(db: Kysely<Database>, s: Seed): Promise<void> {
  const id = newId('dec');
  const entity = hash(id);
  const [amount, currency] = s.money ?? [10, 'EUR'];
  await db
    .insertInto('decisions')
    .values({
      environment: 'live',
      id,
      kind: 'score',
      principal_id: s.owner,
      owner_client_id: s.owner,
      subject_id: entity,
      request_digest: 'digest',
      result: JSON.stringify({ outcome: s.outcome }),
      policy_version: 'test-policy',
      created_at: s.at,
      cache_key: null,
      cache_state: null,
      request: JSON.stringify({ amount, currency }),
      outcome: s.outcome,
      rules: matched(s.rules),
      shadow_rules: matched(s.shadow),
      label: s.label?.[0] ?? null,
      label_source: s.label?.[1] ?? null,
      labelled_at: s.label ? s.at + DAY : null,
    })
    .execute();
  if (!s.review) return;
  const resolved = s.review.resolved;
  await db
    .insertInto('reviews')
    .values({
      id: newId('rev'),
      environment: 'live',
      owner_client_id: s.owner,
      decision_id: id,
      entity_id: entity,
      outcome: s.outcome,
      reason: 'outcome',
      sample_rate: null,
      status: resolved ? 'resolved' : 'open',
      opened_at: s.at,
      due_at: s.review.due,
      assignee: resolved?.[2] ?? null,
      claimed_at: null,
      resolution: resolved?.[1] ?? null,
      resolution_label: null,
      note: null,
      added_to_list: null,
      resolved_at: resolved?.[0] ?? null,
      resolved_by: resolved?.[2] ?? null,
    })
    .execute();
}

interface Day {
  day: string;
  [k: string]: unknown;
}

describeEachBackend('the desk day', (ctx) => {
  let a: { id: string; token: string };
  let b: { id: string; token: string };
  let keyId = '';
  let analyst: Person;
  let analystName = '';
  let viewer: Person;
  const today = Math.floor(Date.now() / DAY) * DAY;
  const Y = today - DAY;
  const DBY = today - 2 * DAY;
  const iso = (t: number) => new Date(t).toISOString().slice(0, 10);

  before(async () => {
    a = await desk(ctx());
    b = await desk(ctx());
    keyId = (await reviewerKey(ctx(), a.token)).id;
    analyst = await person(ctx(), 'analyst');
    viewer = await person(ctx(), 'viewer');
    const u = analyst.id;
    analystName = (
      await ctx().store.db.selectFrom('users').select('name').where('id', '=', u).executeTakeFirstOrThrow()
    ).name;
    const seeds: Seed[] = [
      // yesterday, client A
      { owner: a.id, at: Y + HOUR, outcome: 'approve', label: ['fraud', 'api'], money: [100, 'EUR'], rules: ['rul_a'] },
      { owner: a.id, at: Y + HOUR, outcome: 'approve', label: ['legit', 'api'], shadow: ['rul_s'] },
      { owner: a.id, at: Y + HOUR, outcome: 'decline', label: ['fraud', 'event'], rules: ['rul_a', 'rul_b'] },
      { owner: a.id, at: Y + HOUR, outcome: 'decline', label: ['legit', 'api'] },
      // review declined by the analyst in 30 min, labelled by the review (not a check)
      {
        owner: a.id,
        at: Y + HOUR,
        outcome: 'review',
        label: ['fraud', 'review'],
        rules: ['rul_b'],
        review: { due: Y + 25 * HOUR, resolved: [Y + HOUR + 30 * MIN, 'decline', u] },
      },
      // hold approved by the analyst 6 h after opening, 2 h late; a chargeback says fraud: passed, disagreed
      {
        owner: a.id,
        at: Y + 2 * HOUR,
        outcome: 'hold',
        label: ['fraud', 'event'],
        money: [50, 'USD'],
        review: { due: Y + 6 * HOUR, resolved: [Y + 8 * HOUR, 'approve', u] },
      },
      // review declined by the key in 10 min; the API says fraud: caught, agreed
      {
        owner: a.id,
        at: Y + 3 * HOUR,
        outcome: 'review',
        label: ['fraud', 'api'],
        rules: ['rul_b'],
        review: { due: Y + 27 * HOUR, resolved: [Y + 3 * HOUR + 10 * MIN, 'decline', keyId] },
      },
      // open and overdue; open and not yet due
      { owner: a.id, at: Y + 4 * HOUR, outcome: 'review', review: { due: Y + 5 * HOUR } },
      { owner: a.id, at: Y + 5 * HOUR, outcome: 'hold', review: { due: Date.now() + 2 * HOUR } },
      // the day before, client A: approved by the analyst in 20 min, the API says legit: agreed
      {
        owner: a.id,
        at: DBY + HOUR,
        outcome: 'review',
        label: ['legit', 'api'],
        review: { due: DBY + 25 * HOUR, resolved: [DBY + HOUR + 20 * MIN, 'approve', u] },
      },
      { owner: a.id, at: DBY + 2 * HOUR, outcome: 'decline' },
      // yesterday, client B
      { owner: b.id, at: Y + HOUR, outcome: 'decline', label: ['fraud', 'api'], rules: ['rul_c'] },
      {
        owner: b.id,
        at: Y + HOUR,
        outcome: 'review',
        label: ['fraud', 'review'],
        review: { due: Y + 25 * HOUR, resolved: [Y + HOUR + 40 * MIN, 'decline', b.id] },
      },
      // an approval sampled for review, declined 5 min later: the trade had passed all the same
      {
        owner: b.id,
        at: Y + 2 * HOUR,
        outcome: 'approve',
        label: ['fraud', 'review'],
        money: [30, 'USD'],
        review: { due: Y + 26 * HOUR, resolved: [Y + 2 * HOUR + 5 * MIN, 'decline', b.id] },
      },
    ];
    for (const s of seeds) await seed(ctx().store.db, s);
  });

  const read = async (headers: Record<string, string>) => {
    const res = await ctx().inject({ method: 'GET', url: URL, headers });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as {
      since: string;
      days: Day[];
      backlog: Record<string, unknown>;
      top_rules: unknown[];
      rules_truncated: boolean;
      analysts: Array<Record<string, unknown>>;
    };
  };
  const day = (days: Day[], t: number) => days.find((d) => d.day === iso(t))!;
  const EMPTY = { fraud_caught: 0, legit_declined: 0, fraud_money_passed: {} };

  test('every client’s figures for an admin and for a person: outcomes, fraud, reviews, backlog, rules, analysts', async () => {
    const admin = await read(bearer(await ctx().token()));
    const asViewer = await read(asPerson(viewer));
    assert.deepEqual({ ...asViewer, until: '' }, { ...admin, until: '' });
    assert.equal(admin.days.length, 7);
    assert.equal(admin.days[6]!.day, iso(today));
    assert.equal(admin.since, new Date(today - 6 * DAY).toISOString());
    // yesterday: fraud caught = the two declines labelled fraud, the three reviews declined; passed: the
    // approval (100 EUR), the hold approved (50 USD), the sampled approval (30 USD); resolved in 5, 10,
    // 30, 40 and 360 min (the median 30), the hold late; 2 open at the day's end (and now)
    assert.deepEqual(day(admin.days, Y), {
      day: iso(Y),
      approve: 3,
      review: 4,
      hold: 2,
      decline: 3,
      fraud_caught: 5,
      fraud_money_passed: { EUR: 100, USD: 80 },
      legit_declined: 1,
      reviews_opened: 7,
      reviews_resolved: 5,
      resolved_late: 1,
      median_minutes_to_resolve: 30,
      open_at_end: 2,
    });
    assert.deepEqual(day(admin.days, DBY), {
      day: iso(DBY),
      approve: 0,
      review: 1,
      hold: 0,
      decline: 1,
      ...EMPTY,
      reviews_opened: 1,
      reviews_resolved: 1,
      resolved_late: 0,
      median_minutes_to_resolve: 20,
      open_at_end: 0,
    });
    assert.deepEqual(day(admin.days, today), {
      day: iso(today),
      approve: 0,
      review: 0,
      hold: 0,
      decline: 0,
      ...EMPTY,
      reviews_opened: 0,
      reviews_resolved: 0,
      resolved_late: 0,
      median_minutes_to_resolve: null,
      open_at_end: 2,
    });
    // the window's resolutions: 5, 10, 20, 30, 40, 360 min (the median 25), 5 of 6 by their due time
    assert.deepEqual(admin.backlog, {
      open: 2,
      overdue: 1,
      resolved: 6,
      median_minutes_to_resolve: 25,
      resolved_on_time_share: 0.8333,
    });
    assert.deepEqual(admin.top_rules, [
      { rule_id: 'rul_b', name: 'card burst', hits: 3 },
      { rule_id: 'rul_a', name: 'big first trade', hits: 2 },
      { rule_id: 'rul_c', name: 'other client', hits: 1 },
    ]);
    assert.equal(admin.rules_truncated, false);
    assert.deepEqual(admin.analysts[0], {
      id: analyst.id,
      name: analystName,
      type: 'user',
      resolved: 3,
      median_minutes: 30,
      checked: 2,
      agreement: 0.5,
    });
    const rest = admin.analysts.slice(1).sort((x, y) => String(x.id).localeCompare(String(y.id)));
    assert.deepEqual(
      rest,
      [
        { id: keyId, name: 'reviewer', type: 'client', resolved: 1, median_minutes: 10, checked: 1, agreement: 1 },
        { id: b.id, name: 'test', type: 'client', resolved: 2, median_minutes: 22.5, checked: 0, agreement: null },
      ].sort((x, y) => x.id.localeCompare(y.id)),
    );
  });

  test('a machine client without admin sees only its own decisions and reviews', async () => {
    const mine = await read(bearer(a.token));
    assert.deepEqual(day(mine.days, Y), {
      day: iso(Y),
      approve: 2,
      review: 3,
      hold: 2,
      decline: 2,
      fraud_caught: 3,
      fraud_money_passed: { EUR: 100, USD: 50 },
      legit_declined: 1,
      reviews_opened: 5,
      reviews_resolved: 3,
      resolved_late: 1,
      median_minutes_to_resolve: 30,
      open_at_end: 2,
    });
    assert.deepEqual(mine.backlog, {
      open: 2,
      overdue: 1,
      resolved: 4,
      median_minutes_to_resolve: 25,
      resolved_on_time_share: 0.75,
    });
    assert.deepEqual(
      mine.top_rules.map((r) => (r as { rule_id: string }).rule_id),
      ['rul_b', 'rul_a'],
    );
    assert.deepEqual(
      mine.analysts.map((x) => [x.id, x.resolved]),
      [
        [analyst.id, 3],
        [keyId, 1],
      ],
    );
    const other = await read(bearer(b.token));
    const ofB = day(other.days, Y);
    assert.deepEqual(
      [ofB.approve, ofB.review, ofB.decline, ofB.fraud_caught, ofB.fraud_money_passed],
      [1, 1, 1, 2, { USD: 30 }],
    );
    assert.deepEqual(other.backlog, {
      open: 0,
      overdue: 0,
      resolved: 2,
      median_minutes_to_resolve: 22.5,
      resolved_on_time_share: 1,
    });
  });

  test('at most 30 a minute per caller: 429 with Retry-After beyond', async () => {
    const token = await ctx().token(['reviews:read']);
    for (let i = 0; i < 30; i++) {
      const res = await ctx().inject({ method: 'GET', url: URL, headers: bearer(token) });
      assert.equal(res.statusCode, 200, `ask ${i + 1}: ${res.body}`);
    }
    const res = await ctx().inject({ method: 'GET', url: URL, headers: bearer(token) });
    problem(res, 429, 'rate_limited');
    assert.ok(Number(res.headers['retry-after']) > 0);
  });

  test('the scope is reviews:read; days is 1–90', async () => {
    const noScope = await ctx().token(['audit:read']);
    problem(await ctx().inject({ method: 'GET', url: URL, headers: bearer(noScope) }), 403, 'insufficient_scope');
    problem(await ctx().inject({ method: 'GET', url: URL }), 401, 'unauthenticated');
    for (const days of ['0', '91', 'x'])
      problem(
        await ctx().inject({ method: 'GET', url: `/api/v1/desk/day?days=${days}`, headers: bearer(a.token) }),
        400,
        'invalid_request',
      );
    const one = await read(bearer(a.token));
    assert.equal(one.days.length, 7);
    const single = await ctx().inject({ method: 'GET', url: '/api/v1/desk/day?days=1', headers: bearer(a.token) });
    assert.equal(single.statusCode, 200, single.body);
    assert.deepEqual(
      (single.json() as { days: Day[] }).days.map((d) => d.day),
      [iso(today)],
    );
  });
});
