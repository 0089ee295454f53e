// Reviews for the queue tests, opened the way scores open them: a decision row carrying its
// ReviewOpening, committed by a DecisionWriter (audit/decisions.ts) on the suite's store.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.ts';
import { DecisionWriter, type DecisionRow } from '../../src/audit/decisions.ts';
import { newId } from '../../src/lib/ids.ts';
import { bearer, type TestContext } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import type { Role } from '../../src/lib/principal.ts';

export const REVIEWS = '/api/v1/reviews';
export const HOUR = 3_600_000;

export interface Seed {
  owner: string;
  entity?: string;
  outcome?: 'review' | 'hold' | 'approve';
  /** due in this many ms from now (negative: overdue) */
  dueIn?: number;
  environment?: 'live' | 'test';
  score?: number;
  /** false: a decision that opens no review */
  review?: boolean;
}

/** A score decision row as trust/scoring.ts writes it, opening a review unless told not to. */
export function decisionRow(seed: Seed, now = Date.now()): DecisionRow {
  const entity = seed.entity ?? hash(`review-${randomBytes(6).toString('hex')}`);
  const outcome = seed.outcome ?? 'review';
  const score = seed.score ?? 72;
  const id = newId('dec');
  return {
    id,
    kind: 'score',
    environment: seed.environment ?? 'live',
    principal_id: seed.owner,
    owner_client_id: seed.owner,
    subject_id: entity,
    request_digest: 'digest',
    policy_version: 'test-policy',
    created_at: now,
    risk_level: 'high',
    result: JSON.stringify({
      entity_id: entity,
      score,
      risk_level: 'high',
      signals: [{ name: 'chargebacks', value: 1, weight: 30, description: 'one chargeback' }],
      decision_id: id,
      outcome,
      rules: [],
    }),
    request: JSON.stringify({ amount: 25_000, currency: 'EUR' }),
    features: JSON.stringify({ chargebacks: 1 }),
    outcome,
    rules: JSON.stringify([
      { id: 'rul_x', name: 'big first trade', version: 1, action: outcome, reads: { amount: 25_000 } },
    ]),
    review:
      seed.review === false
        ? null
        : {
            id: newId('rev'),
            outcome,
            reason: outcome === 'approve' ? 'sample' : 'outcome',
            sample_rate: outcome === 'approve' ? 0.02 : null,
            due_at: now + (seed.dueIn ?? (outcome === 'hold' ? 4 : 24) * HOUR),
          },
  };
}

/** Opens reviews through a DecisionWriter; returns the rows (review ids in row.review.id). */
export async function seedReviews(db: Kysely<Database>, seeds: readonly Seed[]): Promise<DecisionRow[]> {
  const writer = new DecisionWriter(db);
  const rows = seeds.map((s) => decisionRow(s));
  await Promise.all(rows.map((r) => writer.write(r)));
  await writer.drain();
  return rows;
}

/** A client with the review scopes (and keys:write, to make its reviewers' keys), and its token. */
export async function desk(
  ctx: TestContext,
  role: Role = 'operator',
  scopes = ['reviews:read', 'reviews:write', 'keys:write', 'audit:read', 'labels:write'],
): Promise<{ id: string; token: string }> {
  const c = await ctx.client(scopes, role);
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/auth/token',
    payload: { client_id: c.id, client_secret: c.secret },
  });
  assert.equal(res.statusCode, 200, res.body);
  return { id: c.id, token: res.json().access_token as string };
}

/** `n` API keys of the desk's client: distinct principals (reviewers) of one client. */
export async function reviewerKeys(ctx: TestContext, token: string, n: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < n; i++) keys.push((await reviewerKey(ctx, token)).key);
  return keys;
}

/** One reviewer key of the desk's client: the secret, and the key id (the principal a review names). */
export async function reviewerKey(ctx: TestContext, token: string): Promise<{ key: string; id: string }> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/keys',
    headers: bearer(token),
    payload: { name: 'reviewer', scopes: ['reviews:read', 'reviews:write'], role: 'operator' },
  });
  assert.equal(res.statusCode, 201, res.body);
  return { key: res.json().key as string, id: res.json().id as string };
}

export const asKey = (key: string) => ({ 'x-api-key': key });
