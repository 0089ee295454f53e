// The decayed count of an entity's disputes lost for a fraud (docs/signals.md,
// `fraudulent_dispute_losses`): the losses whose dispute.resolved named a third-party payment, a
// fake proof, an underpayment or no payment, faded with the policy's half-life like the other
// `d_` counts, relative to the same `decay_at`. Existing rows get their per-reason counts
// (019_loss_reasons) faded as their lost disputes as a whole have faded (d_disputes_lost /
// disputes_lost): the reasons are not dated, and every loss with a reason is one of those.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function fraudulentLosses(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('entities')
        .addColumn('d_disputes_lost_fraudulent', 'double precision', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`
        update entities set d_disputes_lost_fraudulent = d_disputes_lost
          * cast(disputes_lost_third_party_payment + disputes_lost_fake_proof + disputes_lost_underpayment + disputes_lost_no_payment as double precision)
          / cast(disputes_lost as double precision)
        where disputes_lost > 0
          and disputes_lost_third_party_payment + disputes_lost_fake_proof + disputes_lost_underpayment + disputes_lost_no_payment > 0`.execute(
        db,
      );
    },
  };
}
