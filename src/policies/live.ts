// The policies a serving process scores with, kept current across instances (docs/api.md, "Policies"): an
// activation or shadow change writes a `policy` row into the revocation feed in its transaction;
// every process checks that feed before each authenticated request (auth/revocation.ts) and,
// when it reports a policy row, reloads the active and shadow policies before the request runs.
import type { FastifyInstance } from 'fastify';
import type { Policy } from './policy.ts';
import { ENVIRONMENTS } from '../auth/principal.ts';
import type { Store } from '../store/db.ts';
import type { ScoringService } from '../trust/scoring.ts';
import type { EntityProfile, ScoreRequest, ScoreResult } from '../trust/types.ts';
import { FEATURE_SET, featureValues } from './features.ts';
import { replayScore } from './backtest.ts';
import { loadLivePolicies } from './repository.ts';

/**
 * The columns docs/api.md, "Outcomes and labels" adds to a score decision: every signal's value (zeros included, JSON
 * keeps full double precision), the trade id, the level for filtering, and the shadow policy's
 * score replayed from the same values (no extra store round trip). The values are the ones
 * `result` was scored from (scoreEntity keeps them), not computed a second time.
 */
export function learningColumns(profile: EntityProfile, request: ScoreRequest, result: ScoreResult, policy: Policy, shadow: Policy | null, now: number) {
  const features = featureValues(profile, request, policy, now, result);
  const tradeId = request.context.trade_id;
  return {
    features: JSON.stringify(features),
    feature_set: FEATURE_SET,
    trade_id: typeof tradeId === 'string' ? tradeId : null,
    risk_level: result.riskLevel,
    shadow_version: shadow ? shadow.version : null,
    shadow_score: shadow ? replayScore(shadow, features) : null,
  };
}

/** Keeps the scoring service's policies equal to the store's active and shadow ones, per environment. */
export class LivePolicies {
  private pending: Promise<void> | undefined;
  private again = false;

  constructor(private readonly store: Store, private readonly scoring: ScoringService) {}

  async load(): Promise<void> {
    for (const environment of ENVIRONMENTS) {
      const { active, shadow } = await loadLivePolicies(this.store.db, environment);
      this.scoring.setPolicies(environment, active, shadow ?? null);
    }
  }

  /** A policy row arrived on the feed: reload; requests wait for it in `ready`. */
  changed(): void {
    if (this.pending) {
      this.again = true;
      return;
    }
    this.pending = (async () => {
      try {
        do {
          this.again = false;
          await this.load();
        } while (this.again);
      } finally {
        this.pending = undefined;
      }
    })();
    // A failed reload is retried by the next change; a request waiting on it sees the error.
    this.pending.catch(() => {});
  }

  ready(): Promise<void> | undefined {
    return this.pending;
  }

  /** Runs after authentication (which polls the feed), before any handler. */
  install(app: FastifyInstance): void {
    app.addHook('preHandler', async () => {
      const pending = this.pending;
      if (pending) await pending;
    });
  }
}
