// Why an entity lost its disputes (docs/api.md, "Events"): the losses whose dispute.resolved event
// named a fraud (a third-party payment, a fake proof, an underpayment or no payment at all), one
// count per reason, so the dispute analyser can say which fraud a party was caught at before.
// Rows written before this migration count none: their events were stored without a reason.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

const LOSS_REASON_COLUMNS = [
  'disputes_lost_third_party_payment',
  'disputes_lost_fake_proof',
  'disputes_lost_underpayment',
  'disputes_lost_no_payment',
] as const;

export function lossReasons(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      for (const column of LOSS_REASON_COLUMNS) {
        await db.schema
          .alterTable('entities')
          .addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0))
          .execute();
      }
    },
  };
}
