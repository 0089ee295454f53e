// Walking the whole audit log with the chain's check (docs/api.md, "Audit log"), a page at a time:
// `vouch audit verify` prints what this finds.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { ChainCheck, type ChainBreak } from './chain.ts';
import { auditPage } from './repository.ts';

export interface Verification {
  /** entries whose place and hash check out, from the first */
  checked: number;
  /** the last entry that checked out: a reader who noted it earlier sees a cut-off tail */
  last?: { seq: number; id: string; hash: string };
  /** the first break, with the id of the entry found there (a gap names the entry after it) */
  broken?: ChainBreak & { id: string };
}

export async function verifyAuditLog(db: Kysely<Database>, pageSize = 1000): Promise<Verification> {
  const check = new ChainCheck();
  let last: Verification['last'];
  let after = 0;
  for (;;) {
    const rows = await auditPage(db, after, pageSize);
    for (const row of rows) {
      const entry = { ...row, seq: Number(row.seq), at: Number(row.at) };
      const broken = check.add(entry);
      if (broken) return { checked: check.checked, ...(last ? { last } : {}), broken: { ...broken, id: row.id } };
      last = { seq: entry.seq, id: row.id, hash: row.hash };
    }
    if (rows.length < pageSize) return { checked: check.checked, ...(last ? { last } : {}) };
    after = Number(rows[rows.length - 1]!.seq);
  }
}
