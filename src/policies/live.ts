// The policies a serving process scores with, kept current across instances (docs/api.md, "Policies"): an
// activation or shadow change writes a `policy` row on the change feed in its transaction
// (store/change-feed.ts); every process checks that feed before each authenticated request and,
// when it reports a policy row, reloads the active and shadow policies before the request runs.
import type { FastifyInstance } from 'fastify';
import { Reloader } from '../lib/reloader.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import type { PolicyRegistry } from './registry.ts';
import { POLICY_FEED_KIND } from './repository.ts';

/** Keeps the registry equal to the store's active and shadow policies, per environment. */
export class LivePolicies extends Reloader {
  constructor(registry: PolicyRegistry, failed: (name: string, err: unknown) => void = () => {}) {
    super({ name: 'live policies', load: () => registry.reload(), failed });
  }

  /** Reloads on every policy row of the feed. */
  follow(feed: Pick<ChangeFeed, 'on'>): this {
    feed.on(POLICY_FEED_KIND, () => this.changed());
    return this;
  }

  /** Requests wait for a reload in progress, after authentication (which polls the feed), before any handler. */
  install(app: FastifyInstance): void {
    app.addHook('preHandler', this.waitForReload);
  }
}
