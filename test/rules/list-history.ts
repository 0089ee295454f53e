// A list and its entries as a rule test reads them (docs/rules.md, "Testing a rule"): written
// straight to the store with the times a test needs, so a test can say which entries a decision of a
// given moment saw. Shared by the rule-test suites (replay-api, replay-workers).
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.ts';

export interface HistoryEntry {
  value: string;
  addedAt: number;
  expiresAt?: number | null;
  removedAt?: number | null;
}

/** An entity list `name` (id `lst_<name>`) created at `createdAt`, with `entries`. */
export async function listWithHistory(
  db: Kysely<Database>,
  name: string,
  createdAt: number,
  entries: HistoryEntry[],
): Promise<void> {
  const id = `lst_${name}`;
  await db
    .insertInto('lists')
    .values({
      id,
      environment: 'live',
      name,
      kind: 'entity',
      description: null,
      created_at: createdAt,
      created_by: 'x',
      deleted_at: null,
    })
    .execute();
  if (entries.length === 0) return;
  await db
    .insertInto('list_entries')
    .values(
      entries.map((e) => ({
        list_id: id,
        value: e.value,
        added_at: e.addedAt,
        added_by: 'x',
        reason: null,
        expires_at: e.expiresAt ?? null,
        removed_at: e.removedAt ?? null,
        removed_by: e.removedAt ? 'x' : null,
      })),
    )
    .execute();
}
