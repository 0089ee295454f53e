// One page of GET /network/v1/flags (docs/network.md, "Publishing"), read from the stored set
// (network_published): entries changed after `since`, in sequence order, each label cut down to
// the kinds published to the calling peer and sealed for this answer. Nothing is recomputed here.
import { fromB64, sealLabel, type Label } from './oprf.ts';
import { type FlagKind } from '../model/network-signal.ts';
import type { NetworkDb, NetworkPeersTable } from './tables.ts';
import { publishedKinds } from './peers.ts';
import { publishedHead, publishedPage } from './publication-repository.ts';

export interface FlagsPage {
  epoch: string;
  entries: Array<{ tag: string; sealed: string } | { tag: string; withdrawn: true }>;
  next_cursor: string | null;
  since: string;
}

/** Where the next page starts; a pull from the start also carries the head of the set when it began. */
export interface Cursor {
  seq: number;
  tag: string;
  head?: number;
}

const CURSOR = /^(\d{1,15})\.([A-Za-z0-9_-]{43})(?:\.(\d{1,15}))?$/;

export function parseCursor(cursor: string | undefined): Cursor | undefined | null {
  if (cursor === undefined) return undefined;
  const m = CURSOR.exec(cursor);
  return m ? { seq: Number(m[1]), tag: m[2]!, ...(m[3] === undefined ? {} : { head: Number(m[3]) }) } : null;
}

/**
 * One page of the set as `peer` may see it (nothing left of a label for it: a tombstone). A pull
 * from the start leaves tombstones out; its last page answers as `since` the head of the set when
 * its first page was read, so that whatever changed during the pull (a withdrawal too) reaches the
 * peer at its next pull, however many syncs the pull took.
 */
export async function flagsPage(
  db: NetworkDb,
  epochBase: number,
  peer: NetworkPeersTable,
  since: number,
  cursor: Cursor | undefined,
  limit: number,
): Promise<FlagsPage> {
  const head = since === 0 ? (cursor?.head ?? (await publishedHead(db))) : undefined;
  const rows = await publishedPage(db, since, cursor, since === 0, limit + 1);
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  const kinds = new Set(publishedKinds(peer));
  const entries: FlagsPage['entries'] = page.map((row) => {
    const label = row.label === null ? undefined : (JSON.parse(row.label) as Label);
    const shown = label
      ? Object.fromEntries(Object.entries(label.kinds).filter(([k]) => kinds.has(k as FlagKind)))
      : {};
    const key = row.label_key === null ? undefined : fromB64(row.label_key, 32);
    if (!label || !key || Object.keys(shown).length === 0) return { tag: row.tag, withdrawn: true as const };
    return {
      tag: row.tag,
      sealed: sealLabel({ kinds: shown, latest_month: label.latest_month }, Buffer.from(key), row.tag),
    };
  });
  const last = page[page.length - 1];
  const next = more && last ? `${Number(last.seq)}.${last.tag}${head === undefined ? '' : `.${head}`}` : null;
  const through = last ? Number(last.seq) : since;
  return {
    epoch: `${epochBase}.${Number(peer.publish_epoch)}`,
    entries,
    next_cursor: next,
    since: String(head ?? through),
  };
}
