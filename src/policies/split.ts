// Train / holdout split BY ENTITY (docs/api.md, "Policies"): every decision of one entity lands on the same
// side, so the holdout never sees an entity the fit learned from (a fraudster's second trade would
// otherwise flatter the holdout figures). The side is a hash of the entity id, so the same data
// always splits the same way, and adding data never moves an entity across.
import { createHash } from 'node:crypto';

export const DEFAULT_HOLDOUT_FRACTION = 0.3;
/** Fixed, so splits are reproducible across processes and releases; change it only deliberately. */
const DEFAULT_SPLIT_SALT = 'vouch-policy-fit-split-v1';

/** The entity's position in [0, 1), uniform over entities. */
export function entityFraction(entityId: string, salt = DEFAULT_SPLIT_SALT): number {
  const digest = createHash('sha256').update(salt).update('\0').update(entityId).digest();
  // 48 bits are exact in a double and plenty for a fraction.
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** Whether the entity's decisions go to the holdout. */
export function isHoldout(entityId: string, fraction = DEFAULT_HOLDOUT_FRACTION, salt = DEFAULT_SPLIT_SALT): boolean {
  return entityFraction(entityId, salt) < fraction;
}

export interface SplitOptions {
  /** share of entities held out, 0 … 1; default 0.3 */
  fraction?: number;
  salt?: string;
}

/** Splits rows by their entity, keeping the input order within each side. */
export function splitByEntity<T>(
  rows: readonly T[],
  entityOf: (row: T) => string,
  options: SplitOptions = {},
): { train: T[]; holdout: T[] } {
  const fraction = options.fraction ?? DEFAULT_HOLDOUT_FRACTION;
  if (!(fraction >= 0 && fraction <= 1)) throw new RangeError('split: the holdout fraction must be within 0 … 1');
  const salt = options.salt ?? DEFAULT_SPLIT_SALT;
  const side = new Map<string, boolean>();
  const train: T[] = [];
  const holdout: T[] = [];
  for (const row of rows) {
    const entity = entityOf(row);
    let held = side.get(entity);
    if (held === undefined) {
      held = isHoldout(entity, fraction, salt);
      side.set(entity, held);
    }
    (held ? holdout : train).push(row);
  }
  return { train, holdout };
}
