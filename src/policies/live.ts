// The policies a serving process scores with, kept current across instances (docs/api.md, "Policies"): an
// activation or shadow change writes a `policy` row into the revocation feed in its transaction;
// every process checks that feed before each authenticated request (auth/revocation.ts) and,
// when it reports a policy row, reloads the active and shadow policies before the request runs.
import type { FastifyInstance } from 'fastify';
import type { PolicyRegistry } from './registry.ts';

/** Keeps the registry equal to the store's active and shadow policies, per environment. */
export class LivePolicies {
  private pending: Promise<void> | undefined;
  private again = false;

  constructor(private readonly registry: PolicyRegistry) {}

  load(): Promise<void> {
    return this.registry.reload();
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
    // A callback hook: it runs on every request, and nothing is pending almost always.
    app.addHook('preHandler', (_request, _reply, done) => {
      const pending = this.pending;
      if (pending) pending.then(() => done(), done);
      else done();
    });
  }
}
