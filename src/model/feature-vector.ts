// Feature vectors of stored score decisions (docs/api.md, "Outcomes and labels"), in the one order every learning
// module uses: SIGNAL_NAMES. The values are the ones the model sums, so a fit and a replay see exactly what the live
// score saw.
import { SIGNAL_DIRECTIONS, SIGNAL_NAMES, type Policy, type SignalName } from './policy.ts';
import { modelValue, replayScore, type SignalValues } from './arithmetic.ts';
import { signalValues } from './signal-model.ts';
import { INTERACTIONS } from './features.ts';
import type { EntityProfile, ScoreRequest, ScoreResult } from './types.ts';
import { ringSizeFromFirstDefinition } from './ring-signals.ts';

/** A stored feature vector: every signal's value; a missing name counts as 0. */
export type FeatureRecord = SignalValues;

/**
 * The definition of the values live scoring stores now (the decisions' `feature_set`). 1 (stored
 * as null): `dispute_rate` was the Beta-smoothed rate itself, the prior's mean included; 2: the
 * rate's excess over the prior mean, floored at 0 (src/model/features.ts, disputeExcess); 3: the
 * amount signals measure a clean entity's amount against its new-account tier limit too
 * (src/model/amount-signals.ts), and `ring_size` counts only the entities beyond a household
 * (src/model/ring-signals.ts, HOUSEHOLD).
 */
export const FEATURE_SET = 3;

/** The first set whose `dispute_rate` is the excess over the prior mean. */
const CENTRED_DISPUTE_RATE = 2;

/**
 * A stored vector in the current definition, so that vectors stored before and after a
 * definition changed can be fitted and replayed together. Set 1's `dispute_rate` loses the prior
 * mean of `prior` (the replaying policy's; when it differs from the deciding policy's the replay
 * is approximate, as for any FEATURE_PARAMETERS change); sets 1 and 2's `ring_size` loses the
 * household (ringSizeFromFirstDefinition), and their amount values are kept as stored: without the
 * tiers they are never below what set 3 gives (docs/decisions.md, "New-account tiers"). The stored
 * record is not modified.
 */
export function replayableFeatures(
  stored: FeatureRecord,
  featureSet: number | null | undefined,
  prior: Policy['disputePrior'],
): FeatureRecord {
  const set = featureSet ?? 1;
  const current = withInteractions(stored);
  if (set >= FEATURE_SET) return current;
  let translated = current;
  const rate = current.dispute_rate;
  if (set < CENTRED_DISPUTE_RATE && rate !== undefined && Number.isFinite(rate)) {
    translated = {
      ...translated,
      dispute_rate: modelValue(Math.max(0, rate - prior.alpha / (prior.alpha + prior.beta))),
    };
  }
  const size = current.ring_size;
  if (size !== undefined && Number.isFinite(size))
    translated = { ...translated, ring_size: modelValue(ringSizeFromFirstDefinition(size)) };
  return translated;
}

/**
 * A vector stored before the interactions (docs/signals.md, "Interactions") existed gets them from
 * its stored parts, the same products of the same rounded values live scoring computes (a part
 * the vector lacks counts as 0, so the interaction is 0). A vector that has them is returned as is.
 */
function withInteractions(stored: FeatureRecord): FeatureRecord {
  const names = Object.keys(INTERACTIONS) as (keyof typeof INTERACTIONS)[];
  if (names.every((n) => stored[n] !== undefined)) return stored;
  const parts = {
    new_counterparty: modelValue(stored.new_counterparty),
    payment_method_risk: modelValue(stored.payment_method_risk),
    cross_border: modelValue(stored.cross_border),
  };
  const derived: FeatureRecord = { ...stored };
  for (const n of names) derived[n] ??= modelValue(INTERACTIONS[n](parts));
  return derived;
}

/**
 * The order of the values in a stored vector (the decisions' `features` column, docs/api.md,
 * "Outcomes and labels"): FROZEN and append-only. A stored array's i-th value is this list's i-th
 * signal's, whatever order SIGNAL_NAMES takes later; a new signal is appended here, never
 * inserted, and a shorter array (stored before it, or with trailing zeros left out) reads 0 for
 * the names past its end. test/model/stored-feature-order.test.ts pins the list.
 */
export const STORED_FEATURE_ORDER = [
  'completed_trades',
  'dispute_rate',
  'cancellation_rate',
  'chargebacks',
  'fraud_reports',
  'blocklisted',
  'new_account',
  'cold_start',
  'velocity_trades',
  'velocity_volume',
  'amount_vs_history',
  'new_counterparty',
  'payment_method_risk',
  'cross_border',
  'linked_flagged_entities',
  'cash_out_burst',
  'dormant_reactivation',
  'young_account_reversible_method',
  'shared_identifier_entities',
  'new_counterparty_large_trade',
  'network_flags',
  'ring_flagged_entities',
  'ring_size',
  'reversible_new_counterparty',
  'cross_border_new_counterparty',
  'fraudulent_dispute_losses',
] as const satisfies readonly SignalName[];

/**
 * A vector as the `features` column stores it: its values in STORED_FEATURE_ORDER as a JSON array
 * (JSON keeps every double exactly), trailing zeros left out. About 70–100 bytes where the object
 * of names was about 600 (issue 42).
 */
export function encodeFeatures(values: Readonly<Record<SignalName, number>>): string {
  const out: number[] = STORED_FEATURE_ORDER.map((name) => values[name]);
  // JSON writes -0 as 0, as the object form did: either reads back as 0
  while (out.length > 0 && out[out.length - 1] === 0) out.pop();
  return JSON.stringify(out);
}

/**
 * A stored `features` text as the record of names → values, in either form: the array
 * (encodeFeatures; a name past its end reads 0) or the object of names the column held before
 * (returned as parsed, so a reader sees exactly what it stored). `feature_set` says what the
 * values mean, whatever the form. Throws as JSON.parse does on text that is not JSON.
 */
export function decodeFeatures(text: string): FeatureRecord {
  const parsed = JSON.parse(text) as unknown;
  if (!Array.isArray(parsed)) return parsed as FeatureRecord;
  const record: FeatureRecord = {};
  for (let i = 0; i < STORED_FEATURE_ORDER.length; i++)
    record[STORED_FEATURE_ORDER[i]!] = i < parsed.length ? (parsed[i] as number) : 0;
  return record;
}

/** decodeFeatures for readers that skip what does not decode: null for null, non-JSON or a non-vector. */
export function decodeFeaturesOrNull(text: string | null | undefined): FeatureRecord | null {
  if (text === null || text === undefined) return null;
  try {
    const record = decodeFeatures(text);
    return record !== null && typeof record === 'object' ? record : null;
  } catch {
    return null;
  }
}

/** The schema's range for every weight and for the bias (src/model/policy.ts). */
export const WEIGHT_LIMIT = 100;

/** The vector in SIGNAL_NAMES order, each value as the model sums it. */
export function toVector(features: FeatureRecord | readonly number[]): number[] {
  if (Array.isArray(features)) {
    if (features.length !== SIGNAL_NAMES.length) {
      throw new RangeError(
        `a feature vector needs ${SIGNAL_NAMES.length} values in SIGNAL_NAMES order, got ${features.length}`,
      );
    }
    return features.map((v: number) => modelValue(v));
  }
  const record = features as FeatureRecord;
  return SIGNAL_NAMES.map((name) => modelValue(record[name]));
}

export interface Bounds {
  lower: number[];
  upper: number[];
}

/**
 * Per-weight bounds, SIGNAL_NAMES order: the schema's ±100, cut at zero on the side the signal's
 * direction forbids (risk ⇒ ≥ 0, protective ⇒ ≤ 0), so any fit keeps §5's monotonicity.
 */
export function signalBounds(limit = WEIGHT_LIMIT): Bounds {
  return {
    lower: SIGNAL_NAMES.map((n) => (SIGNAL_DIRECTIONS[n] === 'risk' ? 0 : -limit)),
    upper: SIGNAL_NAMES.map((n) => (SIGNAL_DIRECTIONS[n] === 'risk' ? limit : 0)),
  };
}

export function toRecord(vector: readonly number[]): Record<SignalName, number> {
  return Object.fromEntries(SIGNAL_NAMES.map((n, i) => [n, vector[i] ?? 0])) as Record<SignalName, number>;
}

/**
 * Every signal's value as the model sums it (rounded to 4 decimals), zeros included: the feature
 * vector docs/api.md, "Outcomes and labels" stores with a score decision, computed afresh. A live
 * score has these already (model/signal-model.ts, evaluate) and hands them to learningColumns.
 */
export function featureValues(
  profile: EntityProfile,
  request: ScoreRequest,
  policy: Policy,
  now: number,
): Record<SignalName, number> {
  return signalValues(profile, request, policy, now);
}

/**
 * The columns docs/api.md, "Outcomes and labels" adds to a score decision: every signal's value
 * (`values`, the ones `result` was scored from, as encodeFeatures stores them: JSON keeps full double precision),
 * the trade id, the level for filtering, and the shadow policy's score replayed from the same
 * values (no extra store round trip).
 */
export function learningColumns(
  values: Record<SignalName, number>,
  request: ScoreRequest,
  result: ScoreResult,
  shadow: Policy | null,
) {
  const tradeId = request.context.trade_id;
  return {
    features: encodeFeatures(values),
    feature_set: FEATURE_SET,
    trade_id: typeof tradeId === 'string' ? tradeId : null,
    risk_level: result.riskLevel,
    shadow_version: shadow ? shadow.version : null,
    shadow_score: shadow ? replayScore(shadow, values) : null,
  };
}
