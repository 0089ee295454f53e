// The rules a serving process scores with, kept current across instances (docs/api.md, "Rules and
// lists"): every rule or list change writes a `rules` row (subject: the environment) into the
// revocation feed in its transaction; every process checks the feed before each authenticated
// request (auth/revocation.ts) and, when it reports such a row, reloads that environment before
// the request runs — the same pattern as policies/live.ts.
import type { FastifyInstance } from 'fastify';
import type { Environment } from '../lib/principal.ts';
import type { RuleRegistry } from './registry.ts';

export class LiveRules {
  private pending: Promise<void> | undefined;
  /** environments changed since the running reload began */
  private readonly dirty = new Set<Environment>();

  constructor(private readonly registry: RuleRegistry) {}

  load(): Promise<void> {
    return this.registry.reload();
  }

  /** A rules row arrived on the feed: reload the environment; requests wait for it in the preHandler. */
  changed(environment: Environment): void {
    this.dirty.add(environment);
    if (this.pending) return;
    this.pending = (async () => {
      try {
        while (this.dirty.size > 0) {
          const envs = [...this.dirty];
          this.dirty.clear();
          for (const env of envs) await this.registry.reload(env);
        }
      } catch (err) {
        // retried by the next change; the requests waiting on this one see the error
        this.dirty.clear();
        throw err;
      } finally {
        this.pending = undefined;
      }
    })();
    this.pending.catch(() => {});
  }

  ready(): Promise<void> | undefined {
    return this.pending;
  }

  /** Runs after authentication (which polls the feed), before any handler. */
  install(app: FastifyInstance): void {
    // A callback hook: it runs on every request, and nothing is pending almost always.
    app.addHook('preHandler', (_request, _reply, done) => {
      const pending = this.pending;
      if (pending) pending.then(() => done(), done);
      else done();
    });
  }
}
