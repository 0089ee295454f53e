// What this deployment publishes (docs/network.md, "Publishing"): for each identifier linked to an
// entity its live history flags, an entry {tag, sealed label} under its own PRF, kept in
// network_published with a sequence number per change, so peers pull it incrementally; an
// identifier that stops being flagged (or whose entity is erased) becomes a tombstone, which the
// next pull carries to every peer.
//
// The set is brought up to date incrementally: only the identifiers whose history changed since
// the last refresh (flag events and identifier links ingested after its watermark) are looked at,
// in chunks of 500, each chunk's PRF work done before its write transaction (in the worker thread
// when it is more than a few), each chunk written in its own short transaction. Pulls read the
// stored set; they never recompute it.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Store } from '../store/db.ts';
import { ownEntries, prfInput } from './oprf.ts';
import { ownEntriesOff } from './oprf-thread.ts';
import type { NetworkIdentity } from './identity.ts';
import { ENTITY_TYPE, networkDb, type NetworkDb, storeTables } from './tables.ts';
import { changedSince, diff, flaggedNow, type Identifier } from './publish-plan.ts';
import {
  countPublished,
  lockPublishedSet,
  markPublishedThrough,
  publishedBefore,
  publishedHead,
  publishedThrough,
  relabelPublished,
  upsertPublished,
  withdrawPublished,
} from './publication-repository.ts';
import { settingValue, storeSetting } from '../changes/repository.ts';

const CHUNK = 500;
/** Up to this many new entries a chunk evaluates inline (a few ms each); more go to the worker thread. */
const INLINE_PRF = 16;
/**
 * A write is stamped with its ingestion time before it commits (group commit, a slow transaction):
 * each refresh looks this far behind its watermark so that none committed late is missed.
 */
const MARGIN_MS = 120_000;
const ENTITY_IDS_SETTING = 'network_published_entity_ids';

type Prf = Map<string, { tag: string; labelKey: string }>;

/**
 * Brings the rows of `ids` in line with the history, in one short transaction; `prf` holds the
 * tags of new entries (computed before). Answers false when an entry turned out to need a PRF it
 * was not given (the history changed meanwhile): the caller leaves it to the next refresh.
 */
const write = (store: Store, ids: Identifier[], entityIds: boolean, prf: Prf) =>
  networkDb(store.db)
    .transaction()
    .execute((trx) => writeIn(trx, store, ids, entityIds, prf));

/** write, inside the caller's transaction. */
async function writeIn(
  trx: NetworkDb,
  store: Store,
  ids: Identifier[],
  entityIds: boolean,
  prf: Prf,
): Promise<{ changed: number; complete: boolean }> {
  await lockPublishedSet(trx, store);
  const { fresh, relabel, withdraw } = await diff(trx, ids, entityIds);
  let seq = await publishedHead(trx);
  const now = Date.now();
  for (const tag of withdraw) await withdrawPublished(trx, tag, ++seq, now);
  for (const r of relabel) await relabelPublished(trx, r.tag, r.label, ++seq, now);
  const rows = fresh.flatMap((f) => {
    const out = prf.get(f.source);
    return out
      ? [
          {
            tag: out.tag,
            source: f.source,
            id_type: f.id.idType,
            label: f.label,
            label_key: out.labelKey,
            seq: ++seq,
            updated_at: now,
          },
        ]
      : [];
  });
  // A tombstone of the same identifier (flagged again after a withdrawal) is brought back.
  if (rows.length > 0) await upsertPublished(trx, rows, now);
  return { changed: withdraw.length + relabel.length + rows.length, complete: rows.length === fresh.length };
}

export interface RefreshResult {
  /** entries published now */
  published: number;
  /** identifiers looked at: those whose history changed since the last refresh (all flagged ones from the start) */
  examined: number;
  changed: number;
}

export interface PublishOptions {
  /** entity ids follow the members' common hashing: publish flagged entities under the `entity` type */
  entityIds: boolean;
}

/**
 * Brings network_published in line with the history since the last refresh (from the start the
 * first time, or when the entity-id setting changed, then withdrawing whatever is no longer
 * flagged). Chunks of 500 identifiers; the PRF of new ones before each chunk's transaction.
 */
export async function refreshPublished(
  store: Store,
  identity: NetworkIdentity,
  { entityIds }: PublishOptions,
): Promise<RefreshResult> {
  const db = networkDb(store.db);
  const started = Date.now();
  const self = await publishedThrough(db);
  const setting = await settingValue(storeTables(db), ENTITY_IDS_SETTING);
  const full = Number(self.published_through) === 0 || (setting?.value ?? '0') !== (entityIds ? '1' : '0');
  const ids = full
    ? await flaggedNow(db, entityIds)
    : await changedSince(db, Number(self.published_through) - MARGIN_MS, entityIds);
  let changed = 0;
  let complete = true;
  const wanted = new Set<string>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const planned = await diff(db, chunk, entityIds);
    for (const source of planned.wanted) wanted.add(source);
    const inputs = planned.fresh.map((f) => prfInput(f.id.idType, f.id.hash));
    const outputs =
      inputs.length === 0
        ? []
        : inputs.length <= INLINE_PRF
          ? ownEntries(identity.oprf.secretKey, inputs)
          : await ownEntriesOff(identity.oprf.secretKey, inputs);
    const prf: Prf = new Map(planned.fresh.map((f, j) => [f.source, outputs[j]!]));
    const result = await write(store, chunk, entityIds, prf);
    changed += result.changed;
    complete &&= result.complete;
    await yieldToLoop();
  }
  if (full) changed += await withdrawUnwanted(store, wanted, started);
  if (complete) {
    await markPublishedThrough(db, started);
    await storeSetting(storeTables(db), ENTITY_IDS_SETTING, entityIds ? '1' : '0');
  }
  const published = await countPublished(db);
  return { published, examined: ids.length, changed };
}

/** A refresh from the start: entries published before it began and no longer wanted become tombstones. */
async function withdrawUnwanted(store: Store, wanted: Set<string>, started: number): Promise<number> {
  const db = networkDb(store.db);
  const rows = await publishedBefore(db, started);
  const gone = rows.filter((r) => !wanted.has(r.source!)).map((r) => r.tag);
  for (let i = 0; i < gone.length; i += CHUNK) {
    await db.transaction().execute(async (trx) => {
      await lockPublishedSet(trx, store);
      let seq = await publishedHead(trx);
      for (const tag of gone.slice(i, i + CHUNK)) await withdrawPublished(trx, tag, ++seq, Date.now());
    });
  }
  return gone.length;
}

/**
 * In an erasure's transaction (src/trust/erasure.ts): the erased entity's identifiers, and its id
 * under the `entity` type, are relabelled from the history left or withdrawn at once, so the
 * published set never names an identifier the deployment no longer holds. No PRF is needed:
 * an erasure only removes.
 */
export async function withdrawErased(
  trx: NetworkDb,
  store: Store,
  entityId: string,
  identifiers: Identifier[],
): Promise<void> {
  const ids = [...identifiers, { idType: ENTITY_TYPE, hash: entityId }];
  for (let i = 0; i < ids.length; i += CHUNK) await writeIn(trx, store, ids.slice(i, i + CHUNK), true, new Map());
}
