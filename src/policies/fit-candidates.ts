// A fit run again on the same labels gives the same policy (docs/api.md, "Policies"): the fit
// route answers the candidate already stored rather than storing it twice. Its read is the
// repository's (fitCandidatesOf).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import type { Policy } from '../model/policy.ts';
import { fitCandidatesOf, parseDocument, type PolicyRow } from './repository.ts';
import { namePolicy } from './policy-actors.ts';

/**
 * A fitted candidate of `parent` whose document is `policy`'s but for its version: a fit run again
 * on the same labels gives the same policy, and storing it twice only buries the first.
 */
export async function sameFitCandidate(
  db: Kysely<Database> | Transaction<Database>,
  environment: Environment,
  parent: string,
  policy: Policy,
): Promise<PolicyRow | undefined> {
  const rows = await fitCandidatesOf(db, environment, parent);
  const content = (p: Policy) => JSON.stringify({ ...p, version: '' });
  const wanted = content(policy);
  const same = rows.find((row) => content(parseDocument(row)) === wanted);
  return same && namePolicy(db, same);
}
