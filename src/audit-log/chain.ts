// The audit log's chain (docs/api.md, "Audit log"): each entry's hash is SHA-256 over the previous
// entry's hash and the entry's own fields in a fixed order, so an edited entry no longer matches its
// hash, a deleted one leaves a gap in `seq` and breaks the next entry's `prev_hash`, and a rewritten
// tail needs every later hash rewritten too. Pure: the repository stores what this computes, and
// `vouch audit verify` walks the stored rows with it.
import { createHash } from 'node:crypto';

/** The hash before the first entry. */
export const GENESIS = '0'.repeat(64);

/** The actor's id inside the hashed actor (its stored JSON), or undefined when it holds none. */
function actorIdOf(actor: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(actor);
    const id = typeof parsed === 'object' && parsed !== null ? (parsed as { id?: unknown }).id : undefined;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** An entry as it is hashed: the stored columns, JSON fields as their stored text. */
export interface ChainEntry {
  seq: number;
  id: string;
  environment: string;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  before: string | null;
  after: string | null;
}

/** hash = SHA-256(prev_hash ‖ JSON of the fields in this order): unambiguous, whatever the text holds. */
export function entryHash(prevHash: string, e: ChainEntry): string {
  const fields = [e.seq, e.id, e.environment, e.at, e.actor, e.action, e.target, e.before, e.after];
  return createHash('sha256').update(prevHash).update(JSON.stringify(fields)).digest('hex');
}

export interface ChainBreak {
  seq: number;
  reason: 'gap' | 'prev_hash' | 'hash' | 'actor_id';
  detail: string;
}

/**
 * Walks entries in `seq` order from `from` (the first seq expected, and the hash before it):
 * the first place the chain breaks, or null. Fed page by page, so a long log is never held whole.
 */
export class ChainCheck {
  private expectedSeq: number;
  private prevHash: string;
  checked = 0;
  constructor(from: { seq: number; prevHash: string } = { seq: 1, prevHash: GENESIS }) {
    this.expectedSeq = from.seq;
    this.prevHash = from.prevHash;
  }

  /**
   * `actor_id`, when given, is the column `?actor=` filters on: outside the hash, so it must equal
   * the hashed actor's id, or an edit there would move an entry out of an auditor's search unseen.
   */
  add(row: ChainEntry & { prev_hash: string; hash: string; actor_id?: string }): ChainBreak | null {
    if (row.seq !== this.expectedSeq)
      return {
        seq: this.expectedSeq,
        reason: 'gap',
        detail: `entry ${this.expectedSeq} is missing (next is ${row.seq})`,
      };
    if (row.prev_hash !== this.prevHash)
      return { seq: row.seq, reason: 'prev_hash', detail: `entry ${row.seq} does not follow the entry before it` };
    if (entryHash(row.prev_hash, row) !== row.hash)
      return { seq: row.seq, reason: 'hash', detail: `entry ${row.seq} was changed after it was written` };
    if (row.actor_id !== undefined && row.actor_id !== actorIdOf(row.actor))
      return { seq: row.seq, reason: 'actor_id', detail: `entry ${row.seq}'s actor_id does not match its actor` };
    this.expectedSeq++;
    this.prevHash = row.hash;
    this.checked++;
    return null;
  }
}
