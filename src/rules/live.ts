// The rules a serving process scores with, kept current across instances (docs/api.md, "Rules and
// lists"): every rule or list change writes a `rules` row (subject: the environment) on the change
// feed in its transaction (store/change-feed.ts); every process checks the feed before each
// authenticated request and, when it reports such a row, reloads that environment before the
// request runs — the same reloader as policies/live.ts.
import type { FastifyInstance } from 'fastify';
import { ENVIRONMENTS, type Environment } from '../lib/principal.ts';
import { Reloader } from '../lib/reloader.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import type { RuleRegistry } from './registry.ts';
import { RULES_FEED_KIND } from './revisions.ts';

export class LiveRules extends Reloader<Environment> {
  constructor(
    private readonly registry: RuleRegistry,
    failed: (name: string, err: unknown) => void = () => {},
  ) {
    super({
      name: 'live rules',
      load: async (environments) => {
        if (!environments) return registry.reload();
        for (const environment of environments) await registry.reload(environment);
      },
      failed,
    });
  }

  /** Reloads an environment on each of its `rules` rows, and every environment after an erasure. */
  follow(feed: Pick<ChangeFeed, 'on'>): this {
    feed.on(RULES_FEED_KIND, (subject) => {
      if ((ENVIRONMENTS as readonly string[]).includes(subject)) this.changed(subject as Environment);
    });
    // An erasure rewrote an entity list's entry in place (list-erasure-repository.ts): read the lists whole.
    feed.on('entity', () => {
      this.registry.rereadWhole();
      this.changed();
    });
    return this;
  }

  /** Requests wait for a reload in progress, after authentication (which polls the feed), before any handler. */
  install(app: FastifyInstance): void {
    app.addHook('preHandler', this.waitForReload);
  }
}
