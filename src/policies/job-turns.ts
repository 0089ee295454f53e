// A fair share of the environment's one fit-or-backtest slot (jobs.ts; issue 29 item 11,
// docs/decisions.md 2026-11-27). Without it, the slot goes to whoever asks first once it frees,
// so a client that starts its next job the moment its last one ends keeps the slot for ever and
// everyone else sees 409. Here a client refused while the slot was busy takes the next turn: when
// the slot frees, only that client (or an admin) may claim it, for as long as it keeps asking
// (TURN_HOLD_MS after its last refused attempt). An admin's turn outranks a non-admin's, and an
// admin never waits behind a non-admin's turn, so admins are not starved by the clients they run.
// The statements are job-repository.ts's.
import type { Kysely } from 'kysely';
import type { Environment } from '../lib/principal.ts';
import { Conflict } from '../lib/domain-errors.ts';
import type { Database } from '../store/schema.ts';
import { deleteTurn, turnRow, upsertTurn } from './job-repository.ts';

/** Who asks for the slot; the CLI's jobs (the host's operator) name none and are never held back. */
export interface Claimant {
  clientId: string;
  admin: boolean;
}

/** A turn lapses this long after its client last asked: a client that gave up does not hold the slot. */
export const TURN_HOLD_MS = 60_000;

/** The free slot is another client's turn. Maps to 409 conflict with Retry-After. */
// No job to name, a time to retry.
export class JobTurnError extends Conflict {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'The next fit or backtest of this environment is the turn of another client that was refused while the last one ran; try again later.',
      { retryAfterSeconds },
    );
    this.name = 'JobTurnError';
  }
}

/** Throws JobTurnError when a live turn belongs to another client that `claimant` does not outrank. */
export async function checkTurn(
  db: Kysely<Database>,
  environment: Environment,
  claimant: Claimant,
  now: number,
): Promise<void> {
  const row = await turnRow(db, environment);
  if (!row) return;
  const reservedAt = Number(row.reserved_at);
  if (reservedAt < now - TURN_HOLD_MS || row.client_id === claimant.clientId) return;
  if (claimant.admin && Number(row.admin) === 0) return;
  throw new JobTurnError(Math.max(1, Math.ceil((reservedAt + TURN_HOLD_MS - now) / 1000)));
}

/** The claimant got the slot: its turn, if it had one, is used up. */
export async function endTurn(db: Kysely<Database>, environment: Environment, claimant: Claimant): Promise<void> {
  await deleteTurn(db, environment, claimant.clientId);
}

/**
 * The claimant was refused: it takes the next turn, or keeps it (its asking again refreshes it),
 * unless another client's live turn stands that it does not outrank. One statement, so two
 * clients refused at once cannot both end up holding the turn.
 */
export async function awaitTurn(
  db: Kysely<Database>,
  environment: Environment,
  claimant: Claimant,
  now: number,
): Promise<void> {
  await upsertTurn(db, environment, claimant, now, now - TURN_HOLD_MS);
}
