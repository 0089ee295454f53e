// POST /api/v1/dispute/analyze through HTTP: the P2P scenario table with real party histories,
// the response shape, determinism, audit, feedback through dispute.resolved, validation and scope.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { event, hash, postEvents, tradeHistory } from '../helpers/trust.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';

interface Flag {
  code: string;
  severity: string;
  party: string;
  message: string;
}
interface Party {
  entity_id: string;
  score: number;
  risk_level: string;
}
interface Analysis {
  dispute_id: string;
  analysis_id: string;
  recommendation: string;
  confidence: number;
  risk_flags: Flag[];
  parties: { buyer: Party; seller: Party };
  policy_version: string;
  missing_evidence: Array<{ code: string; party: string; message: string }>;
}

const GOOD = { payment_proof_submitted: true, bank_reference_matches: true, payer_name_matches: true };
const BUYER = hash('dispute-clean-buyer');
const SELLER = hash('dispute-clean-seller');
const DAY = 86_400_000;

let seq = 0;
function dispute(
  evidence: Record<string, unknown> | undefined,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  seq += 1;
  return {
    dispute_id: `dsp-${process.pid}-${seq}`,
    // paid two hours ago, so the dispute is not "unusually fast"
    trade: {
      trade_id: `trd-${seq}`,
      amount: 100,
      currency: 'USD',
      payment_method: 'bank_transfer',
      created_at: new Date(Date.now() - 3 * 3_600_000).toISOString(),
      paid_at: new Date(Date.now() - 2 * 3_600_000).toISOString(),
    },
    buyer_id: BUYER,
    seller_id: SELLER,
    opened_by: 'buyer',
    reason: 'asset_not_released',
    ...(evidence === undefined ? {} : { evidence }),
    ...over,
  };
}

const analyze = (ctx: TestContext, token: string | null, payload: unknown) =>
  ctx.inject({
    method: 'POST',
    url: '/api/v1/dispute/analyze',
    headers: token ? bearer(token) : {},
    payload: payload as Record<string, unknown>,
  });

async function ok(ctx: TestContext, token: string, payload: Record<string, unknown>): Promise<Analysis> {
  const res = await analyze(ctx, token, payload);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as Analysis;
}
const flag = (a: Analysis, code: string, party?: string) =>
  a.risk_flags.find((f) => f.code === code && (party === undefined || f.party === party));
const fields = (body: Record<string, unknown>) => (body.errors as Array<{ field: string }>).map((e) => e.field);

describeEachBackend('dispute analysis over HTTP', (ctx) => {
  let admin = '';
  before(async () => {
    admin = await ctx().token();
    // Both parties have a year of clean trading in the trade's currency at about the trade's amount.
    await postEvents(ctx(), admin, tradeHistory(BUYER, 40, 365));
    await postEvents(ctx(), admin, tradeHistory(SELLER, 40, 365));
  });

  test('clean case (proof, reference, payer name, seller confirmed): release_to_buyer with confidence ≥ 0.9', async () => {
    const a = await ok(ctx(), admin, dispute({ ...GOOD, seller_confirmed_receipt: true, amount_paid: 100 }));
    assert.equal(a.recommendation, 'release_to_buyer');
    assert.ok(a.confidence >= 0.9, `confidence ${a.confidence}`);
    assert.ok(
      !a.risk_flags.some((f) => f.severity === 'high' || f.severity === 'critical'),
      JSON.stringify(a.risk_flags),
    );
    assert.equal(a.parties.buyer.risk_level, 'low');
    assert.equal(a.parties.seller.risk_level, 'low');
  });

  test('payment reversed: never release_to_buyer, by evidence or by reason', async () => {
    for (const body of [
      dispute({ ...GOOD, seller_confirmed_receipt: true, payment_reversed: true }),
      dispute({ ...GOOD, seller_confirmed_receipt: true }, { reason: 'payment_reversed', opened_by: 'seller' }),
      dispute({ payment_reversed: true }, { reason: 'payment_reversed', opened_by: 'seller' }),
    ]) {
      const a = await ok(ctx(), admin, body);
      assert.notEqual(a.recommendation, 'release_to_buyer');
      assert.equal(flag(a, 'payment_reversed')?.severity, 'critical');
    }
  });

  test('third-party payer: not release_to_buyer, with a critical payer_name_mismatch flag on the buyer', async () => {
    for (const body of [
      dispute({ ...GOOD, payer_name_matches: false, seller_confirmed_receipt: true }),
      dispute({ payment_proof_submitted: true }, { reason: 'third_party_payment', opened_by: 'seller' }),
    ]) {
      const a = await ok(ctx(), admin, body);
      assert.notEqual(a.recommendation, 'release_to_buyer');
      const f = flag(a, 'payer_name_mismatch');
      assert.equal(f?.severity, 'critical');
      assert.equal(f?.party, 'buyer');
      assert.match(f?.message ?? '', /triangulation/);
      assert.equal(a.risk_flags[0]?.severity, 'critical');
    }
  });

  test('fake-proof pattern (proof, reference mismatch, seller denies): return_to_seller or manual_review', async () => {
    const a = await ok(
      ctx(),
      admin,
      dispute(
        { payment_proof_submitted: true, bank_reference_matches: false, seller_confirmed_receipt: false },
        { reason: 'payment_not_received', opened_by: 'seller' },
      ),
    );
    assert.ok(['return_to_seller', 'manual_review'].includes(a.recommendation), a.recommendation);
    assert.equal(flag(a, 'bank_reference_mismatch')?.severity, 'high');
  });

  test('unresponsive seller with good buyer evidence: release_to_buyer', async () => {
    const a = await ok(
      ctx(),
      admin,
      dispute(
        { ...GOOD, seller_response_minutes: 300, buyer_response_minutes: 5 },
        { reason: 'unresponsive_counterparty' },
      ),
    );
    assert.equal(a.recommendation, 'release_to_buyer', JSON.stringify(a));
    assert.ok(a.confidence >= DEFAULT_POLICY.dispute.confidenceFloor);
    const f = flag(a, 'unresponsive_party');
    assert.equal(f?.party, 'seller');
    assert.match(f?.message ?? '', /300 minutes/);
  });

  test('conflicting evidence (proof and matching reference vs a seller who denies receipt): manual_review', async () => {
    const a = await ok(
      ctx(),
      admin,
      dispute({ payment_proof_submitted: true, bank_reference_matches: true, seller_confirmed_receipt: false }),
    );
    assert.equal(a.recommendation, 'manual_review', JSON.stringify(a));
    assert.ok(a.confidence < DEFAULT_POLICY.dispute.confidenceFloor);
  });

  test('no evidence at all: manual_review', async () => {
    const a = await ok(ctx(), admin, dispute(undefined));
    assert.equal(a.recommendation, 'manual_review');
    assert.equal(flag(a, 'no_payment_proof')?.severity, 'low');
  });

  test('party history ingested through /trust/events: the buyer gets prior_fraud_reports and prior_lost_disputes flags and a higher score', async () => {
    const shady = hash('dispute-shady-buyer');
    await postEvents(ctx(), admin, [
      ...tradeHistory(shady, 20, 200),
      event('fraud.reported', shady, {}, 10 * DAY),
      event('dispute.opened', shady, { trade_id: 'old-1' }, 30 * DAY),
      event('dispute.resolved', shady, { trade_id: 'old-1', resolution: 'against' }, 29 * DAY),
      event('dispute.opened', shady, { trade_id: 'old-2' }, 20 * DAY),
      event('dispute.resolved', shady, { trade_id: 'old-2', resolution: 'against' }, 19 * DAY),
    ]);
    const evidence = { payment_proof_submitted: true, bank_reference_matches: true, seller_confirmed_receipt: false };
    const a = await ok(ctx(), admin, dispute(evidence, { buyer_id: shady }));
    assert.match(flag(a, 'prior_fraud_reports', 'buyer')?.message ?? '', /1 fraud report\b/);
    assert.match(flag(a, 'prior_lost_disputes', 'buyer')?.message ?? '', /lost 2 earlier disputes/);
    assert.equal(flag(a, 'prior_fraud_reports', 'seller'), undefined);
    assert.ok(
      a.parties.buyer.score > a.parties.seller.score,
      `buyer ${a.parties.buyer.score} vs seller ${a.parties.seller.score}`,
    );
    assert.equal(a.parties.buyer.entity_id, shady);
    assert.notEqual(a.recommendation, 'release_to_buyer');
    // the same evidence with the clean buyer leans further towards the buyer
    const clean = await ok(ctx(), admin, dispute(evidence));
    assert.equal(flag(clean, 'prior_fraud_reports'), undefined);
    assert.ok(clean.parties.buyer.score < a.parties.buyer.score);
    // a blocklisted seller is flagged critical on the seller's side
    const blocked = hash('dispute-blocked-seller');
    await postEvents(ctx(), admin, [...tradeHistory(blocked, 20, 200), event('entity.blocklisted', blocked, {}, DAY)]);
    const b = await ok(ctx(), admin, dispute({ ...GOOD, seller_confirmed_receipt: true }, { seller_id: blocked }));
    assert.equal(flag(b, 'blocklisted_party', 'seller')?.severity, 'critical');
    assert.equal(b.parties.seller.risk_level, 'critical');
  });

  test('response shape: dispute_id, analysis_id dan_…, parties with entity_id/score/risk_level, policy_version', async () => {
    const body = dispute({ ...GOOD, seller_confirmed_receipt: true });
    const a = await ok(ctx(), admin, body);
    assert.deepEqual(Object.keys(a).sort(), [
      'analysis_id',
      'confidence',
      'dispute_id',
      'missing_evidence',
      'parties',
      'policy_version',
      'recommendation',
      'risk_flags',
    ]);
    assert.deepEqual(a.missing_evidence, [], 'a clean, confirmed case needs nothing more');
    assert.equal(a.dispute_id, body.dispute_id);
    assert.match(a.analysis_id, /^dan_[0-9A-Z]{26}$/);
    assert.equal(a.policy_version, DEFAULT_POLICY.version);
    for (const [side, id] of [
      ['buyer', BUYER],
      ['seller', SELLER],
    ] as const) {
      const p = a.parties[side];
      assert.deepEqual(Object.keys(p).sort(), ['entity_id', 'risk_level', 'safe_amount', 'score']);
      assert.equal(p.entity_id, id);
      assert.ok(Number.isInteger(p.score) && p.score >= 0 && p.score <= 100);
      assert.ok(['low', 'medium', 'high', 'critical'].includes(p.risk_level));
    }
    assert.ok(a.confidence >= 0 && a.confidence <= 1);
    for (const f of a.risk_flags) {
      assert.deepEqual(Object.keys(f).sort(), ['code', 'message', 'party', 'severity']);
      assert.ok(!f.message.includes(BUYER) && !f.message.includes(SELLER), 'messages carry no ids');
    }
  });

  test('the same input gives the same recommendation, confidence and flags (and a new analysis_id)', async () => {
    const body = dispute({
      payment_proof_submitted: true,
      bank_reference_matches: false,
      seller_confirmed_receipt: false,
      amount_paid: 90,
      seller_response_minutes: 30,
    });
    const a = await ok(ctx(), admin, body);
    const b = await ok(ctx(), admin, body);
    assert.notEqual(a.analysis_id, b.analysis_id);
    assert.deepEqual({ ...b, analysis_id: '' }, { ...a, analysis_id: '' });
  });

  test('the analysis is stored: GET /api/v1/decisions/{analysis_id} with audit:read returns kind dispute_analysis', async () => {
    const client = await ctx().client(['dispute:analyze', 'audit:read']);
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { client_id: client.id, client_secret: client.secret },
    });
    const token = res.json().access_token as string;
    const body = dispute({ ...GOOD, seller_confirmed_receipt: true });
    const a = await ok(ctx(), token, body);
    const got = await ctx().inject({
      method: 'GET',
      url: `/api/v1/decisions/${a.analysis_id}`,
      headers: bearer(token),
    });
    assert.equal(got.statusCode, 200, got.body);
    const d = got.json();
    assert.equal(d.id, a.analysis_id);
    assert.equal(d.kind, 'dispute_analysis');
    assert.equal(d.subject_id, body.dispute_id);
    assert.equal(d.principal_id, client.id);
    assert.equal(d.policy_version, a.policy_version);
    assert.match(d.request_digest, /^[0-9a-f]{64}$/);
    assert.deepEqual(d.result, a);
    assert.ok(!Number.isNaN(Date.parse(d.created_at)));
    // dispute:analyze alone does not read decisions
    problem(
      await ctx().inject({
        method: 'GET',
        url: `/api/v1/decisions/${a.analysis_id}`,
        headers: bearer(await ctx().token(['dispute:analyze'])),
      }),
      403,
      'insufficient_scope',
    );
  });

  test('a later dispute.resolved feeds the outcome back: disputes_won for one party, disputes_lost for the other', async () => {
    const buyer = hash('feedback-buyer');
    const seller = hash('feedback-seller');
    // The seller's one loss must be above the prior's 1 in 10 to move its score (docs/signals.md:
    // dispute_rate counts only the excess), so it has 5 trades, not 20.
    await postEvents(ctx(), admin, [...tradeHistory(buyer, 20, 200), ...tradeHistory(seller, 5, 200)]);
    const body = dispute(
      { ...GOOD, seller_response_minutes: 400 },
      { buyer_id: buyer, seller_id: seller, reason: 'unresponsive_counterparty' },
    );
    const first = await ok(ctx(), admin, body);
    assert.equal(flag(first, 'prior_lost_disputes'), undefined);
    const tradeId = (body.trade as { trade_id: string }).trade_id;
    await postEvents(ctx(), admin, [
      // One event per dispute: the counterparty receives the mirrored outcome.
      event('dispute.opened', buyer, { trade_id: tradeId, counterparty_id: seller }, 60_000),
      event('dispute.resolved', buyer, { trade_id: tradeId, counterparty_id: seller, resolution: 'in_favor' }, 1000),
    ]);
    const get = async (id: string) =>
      (await ctx().inject({ method: 'GET', url: `/api/v1/trust/entities/${id}`, headers: bearer(admin) })).json();
    const [b, s] = [await get(buyer), await get(seller)];
    assert.deepEqual([b.disputes_opened, b.disputes_won, b.disputes_lost], [1, 1, 0]);
    assert.deepEqual([s.disputes_opened, s.disputes_won, s.disputes_lost], [1, 0, 1]);
    const second = await ok(ctx(), admin, { ...body, dispute_id: `${String(body.dispute_id)}-again` });
    assert.match(flag(second, 'prior_lost_disputes', 'seller')?.message ?? '', /lost 1 earlier dispute\b/);
    assert.equal(flag(second, 'prior_lost_disputes', 'buyer'), undefined);
    assert.ok(
      second.parties.seller.score > first.parties.seller.score,
      `${first.parties.seller.score} → ${second.parties.seller.score}`,
    );
  });

  test('validation errors: 400 validation_failed naming the field', async () => {
    const base = dispute({ ...GOOD });
    const without = (k: string) => Object.fromEntries(Object.entries(base).filter(([key]) => key !== k));
    const trade = base.trade as Record<string, unknown>;
    const cases: Array<[unknown, string]> = [
      ...['dispute_id', 'trade', 'buyer_id', 'seller_id', 'opened_by', 'reason'].map((k): [unknown, string] => [
        without(k),
        k,
      ]),
      [{ ...base, trade: { ...trade, trade_id: undefined } }, 'trade.trade_id'],
      [{ ...base, trade: { amount: 1, currency: 'USD' } }, 'trade.trade_id'],
      [{ ...base, trade: { trade_id: 't' } }, 'trade.amount'],
      [{ ...base, trade: { trade_id: 't', amount: 1 } }, 'trade.currency'],
      [{ ...base, dispute_id: '' }, 'dispute_id'],
      [{ ...base, reason: 'changed_my_mind' }, 'reason'],
      [{ ...base, opened_by: 'arbiter' }, 'opened_by'],
      [{ ...base, seller_id: BUYER }, 'seller_id'],
      [{ ...base, buyer_id: '' }, 'buyer_id'],
      [{ ...base, trade: { ...trade, currency: 'usd' } }, 'trade.currency'],
      [{ ...base, trade: { ...trade, currency: 'ZZZ' } }, 'trade.currency'],
      [{ ...base, trade: { ...trade, amount: -100 } }, 'trade.amount'],
      [{ ...base, trade: { ...trade, amount: 0 } }, 'trade.amount'],
      [{ ...base, trade: { ...trade, amount: '100' } }, 'trade.amount'],
      [{ ...base, trade: { ...trade, payment_method: 'barter' } }, 'trade.payment_method'],
      [{ ...base, trade: { ...trade, paid_at: 'yesterday' } }, 'trade.paid_at'],
      [{ ...base, trade: { ...trade, paid_at: '2016-12-31T23:59:60Z', created_at: undefined } }, 'trade.paid_at'],
      [{ ...base, trade: { ...trade, created_at: new Date().toISOString() } }, 'trade.paid_at'],
      [{ ...base, trade: { ...trade, escrow: 'x' } }, 'trade.escrow'],
      [{ ...base, opened_at: '2024-01-01T00:00:00+01' }, 'opened_at'],
      [{ ...base, opened_at: new Date(Date.now() - 10 * 3_600_000).toISOString() }, 'opened_at'],
      [{ ...base, evidence: { payment_proof_submitted: 'yes' } }, 'evidence.payment_proof_submitted'],
      [{ ...base, evidence: { payer_name_matches: 1 } }, 'evidence.payer_name_matches'],
      [{ ...base, evidence: { seller_confirmed_receipt: null } }, 'evidence.seller_confirmed_receipt'],
      [{ ...base, evidence: { amount_paid: -1 } }, 'evidence.amount_paid'],
      [{ ...base, evidence: { seller_response_minutes: 'long' } }, 'evidence.seller_response_minutes'],
      [{ ...base, evidence: { messages_count: 1.5 } }, 'evidence.messages_count'],
      [{ ...base, evidence: { screenshot_url: 'https://x' } }, 'evidence.screenshot_url'],
      [{ ...base, evidence: 'all good' }, 'evidence'],
      [{ ...base, context: 'x' }, 'context'],
      [{ ...base, verdict: 'buyer' }, 'verdict'],
    ];
    for (const [payload, field] of cases) {
      const body = problem(await analyze(ctx(), admin, payload), 400, 'validation_failed');
      assert.ok(
        fields(body).includes(field),
        `${JSON.stringify(payload).slice(0, 100)}… → ${fields(body).join(',')} (want ${field})`,
      );
    }
  });

  test('a raw identifier as buyer_id or seller_id: 400 raw_identifier_rejected, never echoed', async () => {
    for (const [key, raw] of [
      ['buyer_id', '+44 7700 900123'],
      ['buyer_id', 'alice@example.com'],
      ['seller_id', 'GB82 WEST 1234 5698 7654 32'],
      ['seller_id', '4111-1111-1111-1111'],
    ] as const) {
      const body = problem(
        await analyze(ctx(), admin, dispute({ ...GOOD }, { [key]: raw })),
        400,
        'raw_identifier_rejected',
      );
      assert.deepEqual(fields(body), [key]);
      assert.ok(!JSON.stringify(body).includes(raw));
    }
  });

  test('scope dispute:analyze is enforced: 403 insufficient_scope; no credentials: 401', async () => {
    const reader = await ctx().token(['trust:read', 'audit:read']);
    const res = await analyze(ctx(), reader, dispute({ ...GOOD }));
    problem(res, 403, 'insufficient_scope');
    assert.match(String(res.headers['www-authenticate']), /dispute:analyze/);
    const anon = await analyze(ctx(), null, dispute({ ...GOOD }));
    problem(anon, 401, 'unauthenticated');
    assert.match(String(anon.headers['www-authenticate']), /^Bearer realm="vouch"/);
    assert.equal((await analyze(ctx(), await ctx().token(['dispute:analyze']), dispute({ ...GOOD }))).statusCode, 200);
  });
});
