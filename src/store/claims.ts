// Claiming due rows (webhook deliveries, fan-out rows) so that concurrent workers — threads,
// processes, servers — never take the same one. The caller says which rows it wants and how it
// leases them; this file says how the store keeps two claims apart.
import { sql, type Expression, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { Store } from './db.ts';

/** Applies the claim's row locks to the query that reads the candidates (it must be applied). */
type SkipLocked = <Query extends { modifyEnd(modifier: Expression<unknown>): Query }>(query: Query) => Query;

export interface Claim<Candidate, Taken = Candidate> {
  /** The rows to take: read with `skipLocked`, then chosen among (e.g. within each endpoint's room). */
  choose(db: Kysely<Database>, skipLocked: SkipLocked): Promise<Candidate[]>;
  /**
   * Leases the chosen rows by a conditional update — only rows still due and not leased since they
   * were read — and returns those it leased.
   */
  take(db: Kysely<Database>, rows: Candidate[]): Promise<Taken[]>;
}

/**
 * PostgreSQL: the candidates are locked with SKIP LOCKED (only the rows of `lockOf`, the claimed
 * table's alias, not those joined to them) and leased in the same transaction, so concurrent
 * workers read, and claim, disjoint sets. SQLite: read and leased without a transaction; one
 * writer at a time makes each conditional update exclusive, so a row another worker leased after
 * this one read it is not taken again.
 */
export async function claimRows<Candidate, Taken>(
  store: Pick<Store, 'db' | 'dialect'>,
  claim: Claim<Candidate, Taken>,
  lockOf?: string,
): Promise<Taken[]> {
  if (store.dialect === 'postgres') {
    const clause =
      lockOf === undefined ? sql`for update skip locked` : sql`for update of ${sql.raw(lockOf)} skip locked`;
    return store.db.transaction().execute(async (trx) => {
      const rows = await claim.choose(trx, (query) => query.modifyEnd(clause));
      return rows.length === 0 ? [] : claim.take(trx, rows);
    });
  }
  const rows = await claim.choose(store.db, (query) => query);
  return rows.length === 0 ? [] : claim.take(store.db, rows);
}
