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
import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Dialect } from '../store/dialect.ts';
import { PUBLISH_EVENT_TYPES } from '../store/migrations/020_network_incremental.ts';
import { ownEntries, prfInput, type Label } from './oprf.ts';
import { type FlagKind } from '../model/network-signal.ts';
import { ownEntriesOff } from './oprf-thread.ts';
import type { NetworkIdentity } from './identity.ts';
import { ENTITY_TYPE, type NetworkDb } from './tables.ts';

const CHUNK = 500;
const QUERY_CHUNK = 200;
/** Up to this many new entries a chunk evaluates inline (a few ms each); more go to the worker thread. */
const INLINE_PRF = 16;
/**
 * A write is stamped with its ingestion time before it commits (group commit, a slow transaction):
 * each refresh looks this far behind its watermark so that none committed late is missed.
 */
const MARGIN_MS = 120_000;
const ENTITY_IDS_SETTING = 'network_published_entity_ids';

export interface Identifier {
  idType: string;
  hash: string;
}

/** A local name for an identifier in the published set: its hash is not kept there. */
const sourceOf = (id: Identifier) =>
  createHash('sha256').update(`vouch-network/v1 source\0${id.idType}\0${id.hash}`).digest('base64url');
const keyOf = (id: Identifier) => `${id.idType}\0${id.hash}`;

const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

interface FlagRow {
  fraud_reports: number | string;
  chargebacks: number | string;
  blocklisted: number | string;
  disputes_lost: number | string;
  flagged_at: number | string;
  last_event_at: number | string;
}

function addTo(label: Label, row: FlagRow): void {
  const add = (kind: FlagKind, count: number) => {
    if (count > 0) label.kinds[kind] = (label.kinds[kind] ?? 0) + count;
  };
  add('fraud_report', Number(row.fraud_reports));
  add('chargeback', Number(row.chargebacks));
  add('blocklisted', Number(row.blocklisted));
  add('dispute_lost', Number(row.disputes_lost));
  // flagged_at dates the latest flag (017_rings); a lost dispute known only from the winner's side is dated by the last event.
  const month = monthOf(Number(row.flagged_at) > 0 ? Number(row.flagged_at) : Number(row.last_event_at));
  if (month > label.latest_month) label.latest_month = month;
}

const FLAG_COLUMNS = [
  'e.fraud_reports',
  'e.chargebacks',
  'e.blocklisted',
  'e.disputes_lost',
  'e.flagged_at',
  'e.last_event_at',
] as const;
/** The holder (entities as e) has a flag of a kind a label carries. */
const FLAGGED_HOLDER = sql<boolean>`(e.fraud_reports > 0 or e.chargebacks > 0 or e.blocklisted = 1 or e.disputes_lost > 0)`;

/** The labels `ids` carry now: summed over their flagged live holders (the `entity` type: that entity's own). */
async function labelsFor(db: NetworkDb, ids: Identifier[], entityIds: boolean): Promise<Map<string, Label>> {
  const labels = new Map<string, Label>();
  const add = (id: Identifier, row: FlagRow) => {
    const label = labels.get(keyOf(id)) ?? { kinds: {}, latest_month: '0000-01' };
    addTo(label, row);
    labels.set(keyOf(id), label);
  };
  const byType = new Map<string, string[]>();
  for (const id of ids) {
    const hashes = byType.get(id.idType);
    if (hashes) hashes.push(id.hash);
    else byType.set(id.idType, [id.hash]);
  }
  for (const [idType, hashes] of byType) {
    if (idType === ENTITY_TYPE && !entityIds) continue;
    for (let i = 0; i < hashes.length; i += QUERY_CHUNK) {
      const chunk = hashes.slice(i, i + QUERY_CHUNK);
      if (idType === ENTITY_TYPE) {
        const rows = await db
          .selectFrom('entities as e')
          .select(['e.entity_id', ...FLAG_COLUMNS])
          .where('e.environment', '=', 'live')
          .where('e.entity_id', 'in', chunk)
          .where(FLAGGED_HOLDER)
          .execute();
        for (const row of rows) add({ idType, hash: row.entity_id }, row);
      } else {
        const rows = await db
          .selectFrom('identifiers as i')
          .innerJoin('entities as e', (j) =>
            j.onRef('e.environment', '=', 'i.environment').onRef('e.entity_id', '=', 'i.entity_id'),
          )
          .select(['i.hash', ...FLAG_COLUMNS])
          .where('i.environment', '=', 'live')
          .where('i.id_type', '=', idType)
          .where('i.hash', 'in', chunk)
          .where(FLAGGED_HOLDER)
          .execute();
        for (const row of rows) add({ idType, hash: row.hash }, row);
      }
    }
  }
  return labels;
}

const canonical = (label: Label) =>
  JSON.stringify({ kinds: Object.fromEntries(Object.entries(label.kinds).sort()), latest_month: label.latest_month });

type Prf = Map<string, { tag: string; labelKey: string }>;

/** What a chunk needs: entries to add (they need a PRF), to relabel, to withdraw. */
async function diff(db: NetworkDb, ids: Identifier[], entityIds: boolean) {
  const labels = await labelsFor(db, ids, entityIds);
  const sources = ids.map(sourceOf);
  const stored = new Map<string, { tag: string; label: string | null }>();
  for (let i = 0; i < sources.length; i += QUERY_CHUNK) {
    const rows = await db
      .selectFrom('network_published')
      .select(['tag', 'source', 'label'])
      .where('source', 'in', sources.slice(i, i + QUERY_CHUNK))
      .execute();
    for (const row of rows) stored.set(row.source!, { tag: row.tag, label: row.label });
  }
  const fresh: Array<{ id: Identifier; source: string; label: string }> = [];
  const relabel: Array<{ tag: string; label: string }> = [];
  const withdraw: string[] = [];
  ids.forEach((id, i) => {
    const label = labels.get(keyOf(id));
    const held = stored.get(sources[i]!);
    if (!label) {
      if (held) withdraw.push(held.tag);
    } else if (!held) fresh.push({ id, source: sources[i]!, label: canonical(label) });
    else if (held.label !== canonical(label)) relabel.push({ tag: held.tag, label: canonical(label) });
  });
  return { fresh, relabel, withdraw, wanted: sources.filter((_, i) => labels.has(keyOf(ids[i]!))) };
}

/**
 * Brings the rows of `ids` in line with the history, in one short transaction; `prf` holds the
 * tags of new entries (computed before). Answers false when an entry turned out to need a PRF it
 * was not given (the history changed meanwhile): the caller leaves it to the next refresh.
 */
const write = (db: NetworkDb, dialect: Dialect, ids: Identifier[], entityIds: boolean, prf: Prf) =>
  db.transaction().execute((trx) => writeIn(trx, dialect, ids, entityIds, prf));

/** write, inside the caller's transaction. */
async function writeIn(
  trx: NetworkDb,
  dialect: Dialect,
  ids: Identifier[],
  entityIds: boolean,
  prf: Prf,
): Promise<{ changed: number; complete: boolean }> {
  // On PostgreSQL the identity row orders the writers, so sequence numbers commit in order.
  if (dialect === 'postgres')
    await trx.selectFrom('network_identity').select('id').where('id', '=', 'self').forUpdate().execute();
  const { fresh, relabel, withdraw } = await diff(trx, ids, entityIds);
  let seq = Number(
    (
      await trx
        .selectFrom('network_published')
        .select(sql<number>`max(seq)`.as('m'))
        .executeTakeFirst()
    )?.m ?? 0,
  );
  const now = Date.now();
  for (const tag of withdraw)
    await trx
      .updateTable('network_published')
      .set({ source: null, id_type: null, label: null, label_key: null, seq: ++seq, updated_at: now })
      .where('tag', '=', tag)
      .execute();
  for (const r of relabel)
    await trx
      .updateTable('network_published')
      .set({ label: r.label, seq: ++seq, updated_at: now })
      .where('tag', '=', r.tag)
      .execute();
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
  if (rows.length > 0) {
    await trx
      .insertInto('network_published')
      .values(rows)
      .onConflict((oc) =>
        oc.column('tag').doUpdateSet((eb) => ({
          source: eb.ref('excluded.source'),
          id_type: eb.ref('excluded.id_type'),
          label: eb.ref('excluded.label'),
          label_key: eb.ref('excluded.label_key'),
          seq: eb.ref('excluded.seq'),
          updated_at: now,
        })),
      )
      .execute();
  }
  return { changed: withdraw.length + relabel.length + rows.length, complete: rows.length === fresh.length };
}

/** Identifiers whose published entry may have changed since `since` (ingestion time). */
async function changedSince(db: NetworkDb, since: number, entityIds: boolean): Promise<Identifier[]> {
  const ids = new Map<string, Identifier>();
  const put = (id: Identifier) => ids.set(keyOf(id), id);
  const entities = new Set<string>();
  // The types as literals: SQLite uses the partial index (020) only when the query names the same list, not parameters.
  const events = await db
    .selectFrom('events')
    .select(['entity_id', 'type', 'payload'])
    .where('environment', '=', 'live')
    .where(sql<boolean>`type in (${sql.join(PUBLISH_EVENT_TYPES.map((t) => sql.lit(t)))})`)
    .where('ingested_at', '>=', since)
    .execute();
  for (const ev of events) {
    entities.add(ev.entity_id);
    // A dispute resolved in the entity's favour is a loss of its counterparty.
    if (ev.type !== 'dispute.resolved') continue;
    try {
      const other = (JSON.parse(ev.payload) as { counterparty_id?: unknown }).counterparty_id;
      if (typeof other === 'string') entities.add(other);
    } catch {
      // a payload that is not JSON names no counterparty
    }
  }
  const linked = await db
    .selectFrom('identifiers')
    .select(['id_type', 'hash'])
    .where('environment', '=', 'live')
    .where('created_at', '>=', since)
    .execute();
  for (const l of linked) put({ idType: l.id_type, hash: l.hash });
  const list = [...entities];
  for (let i = 0; i < list.length; i += QUERY_CHUNK) {
    const chunk = list.slice(i, i + QUERY_CHUNK);
    const held = await db
      .selectFrom('identifiers')
      .select(['id_type', 'hash'])
      .where('environment', '=', 'live')
      .where('entity_id', 'in', chunk)
      .execute();
    for (const h of held) put({ idType: h.id_type, hash: h.hash });
    if (entityIds) for (const e of chunk) put({ idType: ENTITY_TYPE, hash: e });
  }
  return [...ids.values()];
}

/** Every identifier the live history flags now (a refresh from the start). */
async function flaggedNow(db: NetworkDb, entityIds: boolean): Promise<Identifier[]> {
  const rows = await db
    .selectFrom('identifiers as i')
    .innerJoin('entities as e', (j) =>
      j.onRef('e.environment', '=', 'i.environment').onRef('e.entity_id', '=', 'i.entity_id'),
    )
    .select(['i.id_type', 'i.hash'])
    .distinct()
    .where('i.environment', '=', 'live')
    .where(FLAGGED_HOLDER)
    .execute();
  const ids = rows.map((r) => ({ idType: r.id_type, hash: r.hash }));
  if (entityIds) {
    const entities = await db
      .selectFrom('entities as e')
      .select('e.entity_id')
      .where('e.environment', '=', 'live')
      .where(FLAGGED_HOLDER)
      .execute();
    for (const e of entities) ids.push({ idType: ENTITY_TYPE, hash: e.entity_id });
  }
  return ids;
}

export interface RefreshResult {
  /** entries published now */
  published: number;
  /** identifiers looked at: those whose history changed since the last refresh (all flagged ones from the start) */
  examined: number;
  changed: number;
}

export interface PublishOptions {
  dialect: Dialect;
  /** entity ids follow the members' common hashing: publish flagged entities under the `entity` type */
  entityIds: boolean;
}

/**
 * Brings network_published in line with the history since the last refresh (from the start the
 * first time, or when the entity-id setting changed, then withdrawing whatever is no longer
 * flagged). Chunks of 500 identifiers; the PRF of new ones before each chunk's transaction.
 */
export async function refreshPublished(
  db: NetworkDb,
  identity: NetworkIdentity,
  { dialect, entityIds }: PublishOptions,
): Promise<RefreshResult> {
  const started = Date.now();
  const self = await db
    .selectFrom('network_identity')
    .select('published_through')
    .where('id', '=', 'self')
    .executeTakeFirstOrThrow();
  const setting = await db
    .selectFrom('settings')
    .select('value')
    .where('name', '=', ENTITY_IDS_SETTING)
    .executeTakeFirst();
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
    const result = await write(db, dialect, chunk, entityIds, prf);
    changed += result.changed;
    complete &&= result.complete;
    await yieldToLoop();
  }
  if (full) changed += await withdrawUnwanted(db, dialect, wanted, started);
  if (complete) {
    await db.updateTable('network_identity').set({ published_through: started }).where('id', '=', 'self').execute();
    await db
      .insertInto('settings')
      .values({ name: ENTITY_IDS_SETTING, value: entityIds ? '1' : '0' })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value: entityIds ? '1' : '0' }))
      .execute();
  }
  const published = Number(
    (
      await db
        .selectFrom('network_published')
        .select(sql<number>`count(*)`.as('n'))
        .where('label', 'is not', null)
        .executeTakeFirst()
    )?.n ?? 0,
  );
  return { published, examined: ids.length, changed };
}

/** A refresh from the start: entries published before it began and no longer wanted become tombstones. */
async function withdrawUnwanted(
  db: NetworkDb,
  dialect: Dialect,
  wanted: Set<string>,
  started: number,
): Promise<number> {
  const rows = await db
    .selectFrom('network_published')
    .select(['tag', 'source'])
    .where('source', 'is not', null)
    .where('updated_at', '<', started)
    .execute();
  const gone = rows.filter((r) => !wanted.has(r.source!)).map((r) => r.tag);
  for (let i = 0; i < gone.length; i += CHUNK) {
    await db.transaction().execute(async (trx) => {
      if (dialect === 'postgres')
        await trx.selectFrom('network_identity').select('id').where('id', '=', 'self').forUpdate().execute();
      let seq = Number(
        (
          await trx
            .selectFrom('network_published')
            .select(sql<number>`max(seq)`.as('m'))
            .executeTakeFirst()
        )?.m ?? 0,
      );
      for (const tag of gone.slice(i, i + CHUNK)) {
        await trx
          .updateTable('network_published')
          .set({ source: null, id_type: null, label: null, label_key: null, seq: ++seq, updated_at: Date.now() })
          .where('tag', '=', tag)
          .execute();
      }
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
  dialect: Dialect,
  entityId: string,
  identifiers: Identifier[],
): Promise<void> {
  const ids = [...identifiers, { idType: ENTITY_TYPE, hash: entityId }];
  for (let i = 0; i < ids.length; i += CHUNK) await writeIn(trx, dialect, ids.slice(i, i + CHUNK), true, new Map());
}
