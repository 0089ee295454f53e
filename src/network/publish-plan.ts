// What a refresh of the published set (publisher.ts) looks at, and what it would change: the
// identifiers whose history changed since a watermark (or every flagged one, from the start), the
// label each carries now, summed over its flagged live holders, and how that differs from the
// entry stored for it.
import { createHash } from 'node:crypto';
import type { Label } from './oprf.ts';
import { type FlagKind } from '../model/network-signal.ts';
import { ENTITY_TYPE, type NetworkDb, storeTables } from './tables.ts';
import { publishedBySource } from './publication-repository.ts';
import { flaggedEntitiesAmong, flaggedEntityIds } from '../entities/entity-repository.ts';
import { publishEventsSince } from '../entities/event-repository.ts';
import {
  flaggedHoldersOf,
  flaggedIdentifiers,
  identifiersLinkedSince,
  identifiersOfEntities,
} from '../entities/identifier-repository.ts';

const QUERY_CHUNK = 200;

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
  // flagged_at dates the latest flag (017_rings); a lost dispute known only from the winner's side is dated by the last
  // event.
  const month = monthOf(Number(row.flagged_at) > 0 ? Number(row.flagged_at) : Number(row.last_event_at));
  if (month > label.latest_month) label.latest_month = month;
}

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
        const rows = await flaggedEntitiesAmong(storeTables(db), chunk);
        for (const row of rows) add({ idType, hash: row.entity_id }, row);
      } else {
        const rows = await flaggedHoldersOf(storeTables(db), idType, chunk);
        for (const row of rows) add({ idType, hash: row.hash }, row);
      }
    }
  }
  return labels;
}

const canonical = (label: Label) =>
  JSON.stringify({ kinds: Object.fromEntries(Object.entries(label.kinds).sort()), latest_month: label.latest_month });

/** What a chunk needs: entries to add (they need a PRF), to relabel, to withdraw. */
export async function diff(db: NetworkDb, ids: Identifier[], entityIds: boolean) {
  const labels = await labelsFor(db, ids, entityIds);
  const sources = ids.map(sourceOf);
  const stored = new Map<string, { tag: string; label: string | null }>();
  for (let i = 0; i < sources.length; i += QUERY_CHUNK) {
    const rows = await publishedBySource(db, sources.slice(i, i + QUERY_CHUNK));
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

/** Identifiers whose published entry may have changed since `since` (ingestion time). */
export async function changedSince(db: NetworkDb, since: number, entityIds: boolean): Promise<Identifier[]> {
  const ids = new Map<string, Identifier>();
  const put = (id: Identifier) => ids.set(keyOf(id), id);
  const entities = new Set<string>();
  const events = await publishEventsSince(storeTables(db), since);
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
  const linked = await identifiersLinkedSince(storeTables(db), since);
  for (const l of linked) put({ idType: l.id_type, hash: l.hash });
  const list = [...entities];
  for (let i = 0; i < list.length; i += QUERY_CHUNK) {
    const chunk = list.slice(i, i + QUERY_CHUNK);
    const held = await identifiersOfEntities(storeTables(db), chunk);
    for (const h of held) put({ idType: h.id_type, hash: h.hash });
    if (entityIds) for (const e of chunk) put({ idType: ENTITY_TYPE, hash: e });
  }
  return [...ids.values()];
}

/** Every identifier the live history flags now (a refresh from the start). */
export async function flaggedNow(db: NetworkDb, entityIds: boolean): Promise<Identifier[]> {
  const rows = await flaggedIdentifiers(storeTables(db));
  const ids = rows.map((r) => ({ idType: r.id_type, hash: r.hash }));
  if (entityIds) {
    const entities = await flaggedEntityIds(storeTables(db));
    for (const e of entities) ids.push({ idType: ENTITY_TYPE, hash: e.entity_id });
  }
  return ids;
}
