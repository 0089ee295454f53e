// What this deployment publishes (docs/network.md, "Publishing"): for each identifier linked to an
// entity its live history flags, an entry {tag, sealed label} under its own PRF. The set is kept
// in network_published with a sequence number per change, so peers pull it incrementally; an
// identifier that stops being flagged (or whose entity is erased) becomes a tombstone, which the
// next pull carries to every peer.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Store } from '../store/db.ts';
import { deriveLabelKey, deriveTag, evaluateOwn, fromB64, prfInput, sealLabel, type FlagKind, type Label } from './oprf.ts';
import type { NetworkIdentity } from './identity.ts';
import type { NetworkDb, NetworkPeersTable } from './tables.ts';
import { publishedKinds } from './peers.ts';

const FLAG_EVENT_TYPES = ['fraud.reported', 'chargeback', 'entity.blocklisted', 'dispute.resolved'];
const CHUNK = 500;

/** A local name for an identifier in the published set: its hash is not kept there. */
const sourceOf = (idType: string, hash: string) => createHash('sha256').update(`vouch-network/v1 source\0${idType}\0${hash}`).digest('base64url');

const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

interface Wanted {
  idType: string;
  hash: string;
  label: Label;
}

/** Flagged identifiers of the live environment and their labels, summed over the entities holding them. */
async function wantedSet(db: NetworkDb): Promise<Map<string, Wanted>> {
  const rows = await db.selectFrom('identifiers as i')
    .innerJoin('entities as e', (j) => j.onRef('e.environment', '=', 'i.environment').onRef('e.entity_id', '=', 'i.entity_id'))
    .select(['i.id_type', 'i.hash', 'e.entity_id', 'e.fraud_reports', 'e.chargebacks', 'e.blocklisted', 'e.disputes_lost', 'e.last_event_at'])
    .where('i.environment', '=', 'live')
    .where((eb) => eb.or([eb('e.fraud_reports', '>', 0), eb('e.chargebacks', '>', 0), eb('e.blocklisted', '=', 1), eb('e.disputes_lost', '>', 0)]))
    .execute();
  const latest = new Map<string, number>();
  const entities = [...new Set(rows.map((r) => r.entity_id))];
  for (let i = 0; i < entities.length; i += CHUNK) {
    const found = await db.selectFrom('events').select(['entity_id', sql<number>`max(occurred_at)`.as('at')])
      .where('environment', '=', 'live').where('entity_id', 'in', entities.slice(i, i + CHUNK)).where('type', 'in', FLAG_EVENT_TYPES)
      .groupBy('entity_id').execute();
    for (const f of found) latest.set(f.entity_id, Number(f.at));
  }
  const wanted = new Map<string, Wanted>();
  for (const row of rows) {
    const source = sourceOf(row.id_type, row.hash);
    const entry = wanted.get(source) ?? { idType: row.id_type, hash: row.hash, label: { kinds: {}, latest_month: '0000-01' } };
    const add = (kind: FlagKind, count: number) => {
      if (count > 0) entry.label.kinds[kind] = (entry.label.kinds[kind] ?? 0) + count;
    };
    add('fraud_report', Number(row.fraud_reports));
    add('chargeback', Number(row.chargebacks));
    add('blocklisted', Number(row.blocklisted));
    add('dispute_lost', Number(row.disputes_lost));
    const month = monthOf(latest.get(row.entity_id) ?? Number(row.last_event_at));
    if (month > entry.label.latest_month) entry.label.latest_month = month;
    wanted.set(source, entry);
  }
  return wanted;
}

const canonical = (label: Label) => JSON.stringify({ kinds: Object.fromEntries(Object.entries(label.kinds).sort()), latest_month: label.latest_month });

export interface RefreshResult {
  published: number;
  changed: number;
}

/**
 * Brings network_published in line with the history. Only new identifiers cost a PRF evaluation.
 * On PostgreSQL the identity row is locked, so processes refreshing at once take turns.
 */
export async function refreshPublished(store: Store, db: NetworkDb, identity: NetworkIdentity): Promise<RefreshResult> {
  return db.transaction().execute(async (trx) => {
    if (store.dialect === 'postgres') await trx.selectFrom('network_identity').select('id').where('id', '=', 'self').forUpdate().execute();
    const wanted = await wantedSet(trx);
    const current = await trx.selectFrom('network_published').select(['tag', 'source', 'label']).where('source', 'is not', null).execute();
    let seq = Number((await trx.selectFrom('network_published').select(sql<number>`max(seq)`.as('m')).executeTakeFirst())?.m ?? 0);
    const now = Date.now();
    let changed = 0;
    const held = new Set<string>();
    for (const row of current) {
      const want = wanted.get(row.source!);
      held.add(row.source!);
      if (!want) {
        await trx.updateTable('network_published').set({ source: null, label: null, label_key: null, seq: ++seq, updated_at: now }).where('tag', '=', row.tag).execute();
        changed++;
      } else if (canonical(want.label) !== row.label) {
        await trx.updateTable('network_published').set({ label: canonical(want.label), seq: ++seq, updated_at: now }).where('tag', '=', row.tag).execute();
        changed++;
      }
    }
    for (const [source, want] of wanted) {
      if (held.has(source)) continue;
      const output = evaluateOwn(identity.oprf.secretKey, prfInput(want.idType, want.hash));
      const values = { tag: deriveTag(output), source, label: canonical(want.label), label_key: deriveLabelKey(output).toString('base64url'), seq: ++seq, updated_at: now };
      // A tombstone of the same identifier (flagged again after a withdrawal) is brought back.
      await trx.insertInto('network_published').values(values)
        .onConflict((oc) => oc.column('tag').doUpdateSet({ source: values.source, label: values.label, label_key: values.label_key, seq: values.seq, updated_at: now }))
        .execute();
      changed++;
    }
    return { published: wanted.size, changed };
  });
}

export interface FlagsPage {
  epoch: string;
  entries: Array<{ tag: string; sealed: string } | { tag: string; withdrawn: true }>;
  next_cursor: string | null;
  since: string;
}

const CURSOR = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

export function parseCursor(cursor: string | undefined): { seq: number; tag: string } | undefined | null {
  if (cursor === undefined) return undefined;
  const m = CURSOR.exec(cursor);
  return m ? { seq: Number(m[1]), tag: m[2]! } : null;
}

/**
 * One page of the set as `peer` may see it: entries changed after `since`, in sequence order,
 * each label cut down to the kinds published to that peer (nothing left: a tombstone). A pull
 * from the start leaves tombstones out.
 */
export async function flagsPage(db: NetworkDb, epochBase: number, peer: NetworkPeersTable, since: number, cursor: { seq: number; tag: string } | undefined, limit: number): Promise<FlagsPage> {
  let query = db.selectFrom('network_published').select(['tag', 'label', 'label_key', 'seq']).where('seq', '>', since);
  if (cursor) query = query.where((eb) => eb.or([eb('seq', '>', cursor.seq), eb.and([eb('seq', '=', cursor.seq), eb('tag', '>', cursor.tag)])]));
  if (since === 0) query = query.where('label', 'is not', null);
  const rows = await query.orderBy('seq').orderBy('tag').limit(limit + 1).execute();
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  const kinds = new Set(publishedKinds(peer));
  const entries: FlagsPage['entries'] = page.map((row) => {
    const label = row.label === null ? undefined : (JSON.parse(row.label) as Label);
    const shown = label ? Object.fromEntries(Object.entries(label.kinds).filter(([k]) => kinds.has(k as FlagKind))) : {};
    const key = row.label_key === null ? undefined : fromB64(row.label_key, 32);
    if (!label || !key || Object.keys(shown).length === 0) return { tag: row.tag, withdrawn: true as const };
    return { tag: row.tag, sealed: sealLabel({ kinds: shown, latest_month: label.latest_month }, Buffer.from(key), row.tag) };
  });
  const last = page[page.length - 1];
  return {
    epoch: `${epochBase}.${Number(peer.publish_epoch)}`,
    entries,
    next_cursor: more && last ? `${Number(last.seq)}.${last.tag}` : null,
    since: String(last ? Number(last.seq) : since),
  };
}
