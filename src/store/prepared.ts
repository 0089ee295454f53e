// Compiles a query shape once and reuses its SQL text: building and compiling a Kysely query
// costs more than running a point lookup, and the hot paths run the same few shapes.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { CompiledQuery, type Kysely } from 'kysely';
import { directOf } from './direct.ts';
import { dialectOf, type Dialect } from './dialect.ts';

interface Compilable<R> {
  compile(): CompiledQuery<R>;
}

const SENTINEL = '\u0000vouch-arg:';

/**
 * The SQL texts of every compiled hot shape, by the dialect they were compiled for (a process may
 * hold stores of both). On PostgreSQL the store runs its texts as named prepared statements
 * (preparesHotShapes below), so the server parses and plans each once per connection instead of per call.
 */
export const PREPARED_TEXTS: Readonly<Record<Dialect, Set<string>>> = { sqlite: new Set(), postgres: new Set() };

/**
 * `build` receives placeholder arguments and returns a query; every parameter of the compiled
 * query must be one of those arguments (constants are inlined by the caller as arguments too).
 */
export class PreparedQuery<A extends unknown[], R> {
  private text: string | undefined;
  private order: number[] = [];

  constructor(
    private readonly db: Kysely<never>,
    private readonly arity: number,
    private readonly build: (db: Kysely<never>, ...args: unknown[]) => Compilable<R> | CompiledQuery<R>,
  ) {}

  private prepare(): void {
    const placeholders = Array.from({ length: this.arity }, (_, i) => `${SENTINEL}${i}`);
    const built = this.build(this.db, ...placeholders);
    const compiled = 'compile' in built ? built.compile() : built;
    this.order = compiled.parameters.map((p) => {
      const index = typeof p === 'string' && p.startsWith(SENTINEL) ? Number(p.slice(SENTINEL.length)) : -1;
      if (index < 0) throw new Error('prepared query has a parameter that is not an argument');
      return index;
    });
    this.text = compiled.sql;
    PREPARED_TEXTS[dialectOf(this.db)].add(compiled.sql);
  }

  /** The statement's text and its parameters for `args`, to run elsewhere (direct.ts). */
  bind(...args: A): { text: string; parameters: unknown[] } {
    if (this.text === undefined) this.prepare();
    return { text: this.text!, parameters: this.order.map((i) => args[i]) };
  }

  async execute(...args: A): Promise<R[]> {
    return this.executeIn(this.db, ...args);
  }

  /** As `execute`, on `executor`: a transaction of the same store, so the statement joins it. */
  async executeIn(executor: { executeQuery: Kysely<never>['executeQuery'] }, ...args: A): Promise<R[]> {
    const { text, parameters } = this.bind(...args);
    // SQLite with no transaction open: the statement itself, synchronously (direct.ts).
    const rows = directOf(executor)?.run(text, parameters);
    if (rows) return rows as R[];
    const result = await executor.executeQuery<R>(CompiledQuery.raw(text, parameters));
    return result.rows;
  }
}

const PREPARES = Symbol('vouch.prepares');
const statementNames = new Map<string, string>();

/**
 * Kysely sends every query as text; for the hot shapes (PREPARED_TEXTS) this client (each new pool
 * client, db.ts) sends a named statement instead, which node-postgres parses once per connection
 * and then only binds: the profile query's parse and plan cost PostgreSQL more than running it.
 */
export function preparesHotShapes(client: pg.PoolClient): void {
  const target = client as pg.PoolClient & { [PREPARES]?: true };
  if (target[PREPARES]) return;
  target[PREPARES] = true;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (
    text: unknown,
    values?: unknown,
    ...rest: unknown[]
  ) => {
    if (typeof text !== 'string' || !Array.isArray(values) || !PREPARED_TEXTS.postgres.has(text))
      return query(text, values, ...rest);
    let name = statementNames.get(text);
    if (!name)
      statementNames.set(text, (name = `vouch_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`));
    return query({ name, text, values }, ...rest);
  };
}
