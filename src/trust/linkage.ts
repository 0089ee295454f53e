// identifier_stats, kept current by ingestion: per identifier, the entities holding it and how
// many of them are flagged (fraud-reported or blocklisted), and a version that cached scores of its
// holders check (profile.ts). It replaces walking every holder of an identifier, which made one
// device hash shared by 20,000 accounts cost a score 350 ms and a fraud batch seconds.
import type { Transaction } from 'kysely';
import type { Database, EntitiesTable, IdentifiersTable } from '../store/schema.ts';
import { chunks } from '../store/chunks.ts';
import type { Environment } from '../lib/principal.ts';
import { addIdentifierStats, insertNewLinks, linksOf } from '../entities/identifier-repository.ts';

type Flaggable = Pick<EntitiesTable, 'entity_id' | 'fraud_reports' | 'blocklisted'>;

export const isFlagged = (e: Pick<EntitiesTable, 'fraud_reports' | 'blocklisted'>) =>
  e.fraud_reports > 0 || e.blocklisted === 1;

/**
 * Keeps identifier_stats current: a new link adds its entity (flagged or not) to the identifier;
 * an entity whose flagged status changed moves each identifier it already held. The cost is the
 * number of identifiers of the batch's entities, whatever the number of entities sharing them.
 */
export async function writeIdentifiers(
  trx: Transaction<Database>,
  environment: Environment,
  entities: ReadonlyMap<string, Flaggable>,
  wasFlagged: ReadonlyMap<string, boolean>,
  links: Iterable<IdentifiersTable>,
): Promise<void> {
  const deltas = new IdentifierDeltas(environment, entities);
  // Read before the batch's new links are written: these are the links the entity already had.
  for (const ids of chunks(flagChanged(entities, wasFlagged))) {
    deltas.held(await linksOf(trx, environment, ids));
  }
  // Only links that are new count: one already stored returns nothing.
  for (const rows of chunks([...links])) deltas.added(await insertNewLinks(trx, rows));
  for (const batch of chunks(deltas.rows())) await addIdentifierStats(trx, batch);
}

/** The batch's entities whose flagged status changed: each identifier they already held moves. */
export const flagChanged = (entities: ReadonlyMap<string, Flaggable>, wasFlagged: ReadonlyMap<string, boolean>) =>
  [...entities.values()].filter((e) => isFlagged(e) !== wasFlagged.get(e.entity_id)).map((e) => e.entity_id);

type Link = Pick<IdentifiersTable, 'id_type' | 'hash' | 'entity_id'>;

/** What a batch changes in identifier_stats (writeIdentifiers; the SQLite direct path, ingest-direct.ts). */
export class IdentifierDeltas {
  private readonly deltas = new Map<
    string,
    {
      environment: Environment;
      id_type: string;
      hash: string;
      entities: number;
      flagged_entities: number;
      version: number;
    }
  >();

  constructor(
    private readonly environment: Environment,
    private readonly entities: ReadonlyMap<string, Flaggable>,
  ) {}

  private delta(idType: string, hash: string, entities: number, flagged: number): void {
    const key = `${idType}\u0000${hash}`;
    const d = this.deltas.get(key) ?? {
      environment: this.environment,
      id_type: idType,
      hash,
      entities: 0,
      flagged_entities: 0,
      // one more version for each row changed (an upsert adds it)
      version: 1,
    };
    d.entities += entities;
    d.flagged_entities += flagged;
    this.deltas.set(key, d);
  }

  /** Links a flag-changed entity held before the batch: its identifiers' flagged count moves with it. */
  held(links: readonly Link[]): void {
    for (const h of links) this.delta(h.id_type, h.hash, 0, isFlagged(this.entities.get(h.entity_id)!) ? 1 : -1);
  }

  /** Links the batch stored that were new. */
  added(links: readonly Link[]): void {
    for (const a of links) this.delta(a.id_type, a.hash, 1, isFlagged(this.entities.get(a.entity_id)!) ? 1 : 0);
  }

  /** The identifier_stats changes, in key order, so concurrent batches lock shared rows in the same order. */
  rows() {
    return [...this.deltas.entries()]
      .filter(([, d]) => d.entities !== 0 || d.flagged_entities !== 0)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, d]) => d);
  }
}
