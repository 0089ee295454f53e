// The bound on what an environment's lists hold (docs/api.md, "Rules and lists"): entries not
// removed and their values' characters, counted by each list with its changes (031_list_held) so
// an add checks a few list rows, never a count of entries; expired entries are swept, in slices,
// only when an add would pass it. The statements are list-repository.ts's.
import type { Environment } from '../lib/principal.ts';
import { chunks } from '../store/chunks.ts';
import type { Db } from './revisions.ts';
import { expiredValues, heldByLists, liveListIds, moveHeld, removeAtExpiry } from './list-repository.ts';

/**
 * What an environment's lists may hold over all their lists: present entries, and their values'
 * characters (500,000 SHA-256 hex digests fill both). An entry costs a serving process about 210
 * bytes beside its value's characters when it expires, 60 when it does not, so both environments
 * at their bounds hold under 300 MB of the documented 1 GB heap (docs/operations.md, "Memory";
 * bench/list-expiry.ts).
 */
export const LIST_BOUND: ListBound = { entries: 500_000, chars: 32 * 1024 * 1024 };
export interface ListBound {
  entries: number;
  chars: number;
}

export const charsOf = (values: readonly string[]) => values.reduce((n, v) => n + v.length, 0);

/**
 * Marks the environment's expired entries removed at their expiry (what a rule test reads of them
 * is unchanged: it takes the earlier of the two) and stops holding them. Runs only when an add
 * would pass the bound, so its cost is paid once per expired entry.
 */
async function sweepExpired(db: Db, environment: Environment, now: number): Promise<void> {
  const lists = await liveListIds(db, environment);
  for (const { id } of lists) {
    // in slices, so the event loop serves between them
    for (;;) {
      const values = await expiredValues(db, id, now, SWEEP_SLICE);
      if (values.length === 0) break;
      for (const part of chunks(values)) await removeAtExpiry(db, id, part, EXPIRY);
      await moveHeld(db, id, -values.length, -charsOf(values));
      if (values.length < SWEEP_SLICE) break;
    }
  }
}

const SWEEP_SLICE = 2_000;

/** Who removed an entry that was swept after it expired. */
const EXPIRY = 'expiry';

/** Whether what the environment's lists hold passes either bound; expired entries are swept first. */
export async function overBound(db: Db, environment: Environment, now: number, bound: ListBound): Promise<boolean> {
  const over = (h: { entries: number; chars: number }) => h.entries > bound.entries || h.chars > bound.chars;
  if (!over(await heldByLists(db, environment))) return false;
  await sweepExpired(db, environment, now);
  return over(await heldByLists(db, environment));
}
