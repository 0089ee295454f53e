// The operating-point check before an activation (docs/api.md, "Policies"): the active and the
// new policy replayed on the environment's most recent score decisions, so the desk sees how its
// workload at `high` would move before it happens (operating.ts, operatingMove, holds the rule).
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import type { Policy } from '../model/policy.ts';
import { replayScore } from '../model/arithmetic.ts';
import { decodeFeatures, replayableFeatures, type FeatureRecord } from '../model/feature-vector.ts';
import { recentScoreFeatures } from '../audit/decision-history-repository.ts';
import { operatingMove, type OperatingMove } from './operating.ts';

/** Recent decisions replayed: enough for a share to ±1 point, few enough to stay a short read. */
const SAMPLE = 5000;

export async function activationMove(
  db: Kysely<Database>,
  environment: Environment,
  active: Policy,
  next: Policy,
): Promise<OperatingMove> {
  const rows = await recentScoreFeatures(db, environment, SAMPLE);
  const before: number[] = [];
  const after: number[] = [];
  for (const r of rows) {
    let stored: FeatureRecord;
    try {
      stored = decodeFeatures(r.features!);
    } catch {
      continue;
    }
    const setId = r.feature_set === null || r.feature_set === undefined ? null : Number(r.feature_set);
    before.push(replayScore(active, replayableFeatures(stored, setId, active.disputePrior)));
    after.push(replayScore(next, replayableFeatures(stored, setId, next.disputePrior)));
  }
  return operatingMove(
    { version: active.version, high: active.thresholds.high, scores: before },
    { version: next.version, high: next.thresholds.high, scores: after },
  );
}
