// The one owner of the policies a serving process scores with (docs/api.md, "Policies"), per
// environment: the active policy and the shadow policy scored beside it (stored, never returned).
// Scoring, the batch route, ingestion and dispute analysis read it; live.ts reloads it from the
// store when another instance (or this one) activates or shadows a policy.
import type { Policy } from '../model/policy.ts';
import { ENVIRONMENTS, type Environment } from '../lib/principal.ts';
import type { Store } from '../store/db.ts';
import { loadLivePolicies } from './repository.ts';

/** The pair one request works with: read once, handed on, so a reload mid-request changes nothing. */
export interface LivePolicy {
  readonly active: Policy;
  readonly shadow: Policy | null;
}

export class PolicyRegistry {
  private readonly current: Record<Environment, LivePolicy>;

  /** `initial`: what both environments score with until `reload` reads the stored policies. */
  constructor(
    private readonly store: Store,
    initial: Policy,
  ) {
    this.current = { live: { active: initial, shadow: null }, test: { active: initial, shadow: null } };
  }

  /** The active and shadow policies of `environment`, as one value. */
  get(environment: Environment): LivePolicy {
    return this.current[environment];
  }

  active(environment: Environment): Policy {
    return this.current[environment].active;
  }

  shadow(environment: Environment): Policy | null {
    return this.current[environment].shadow;
  }

  /** Reads the stored active and shadow policies; an environment without an active one keeps its current policy. */
  async reload(): Promise<void> {
    for (const environment of ENVIRONMENTS) {
      const { active, shadow } = await loadLivePolicies(this.store.db, environment);
      this.current[environment] = { active: active ?? this.current[environment].active, shadow: shadow ?? null };
    }
  }
}
