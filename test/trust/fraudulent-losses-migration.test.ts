// 023_fraudulent_losses over entities stored before it: the per-reason losses of 019 become the
// decayed count, faded as the entity's lost disputes as a whole have faded; no reason, no count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backends } from '../helpers/app.ts';
import { storeMigratedBefore } from '../helpers/migrations.ts';
import { blankEntity } from '../../src/trust/aggregate-state.ts';

for (const backend of backends()) {
  test(`023_fraudulent_losses backfills the decayed count from the per-reason losses [${backend}]`, async (t) => {
    const { store, drop } = await storeMigratedBefore(backend, '023');
    t.after(drop);
    const row = (entity_id: string, extra: Record<string, number>) => {
      const { d_disputes_lost_fraudulent: _new, ...old } = { ...blankEntity('live', entity_id), version: 1, ...extra };
      return old;
    };
    await store.db
      .insertInto('entities')
      .values([
        // 4 losses decayed to 2, two of them for a fraud: 1
        row('faded', {
          disputes_lost: 4,
          d_disputes_lost: 2,
          disputes_lost_fake_proof: 1,
          disputes_lost_no_payment: 1,
        }),
        row('no-reason', { disputes_lost: 3, d_disputes_lost: 3 }),
        row('clean', {}),
      ] as never)
      .execute();
    await store.migrate();
    const rows = await store.db
      .selectFrom('entities')
      .select(['entity_id', 'd_disputes_lost_fraudulent'])
      .orderBy('entity_id')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.entity_id, Number(r.d_disputes_lost_fraudulent)]),
      [
        ['clean', 0],
        ['faded', 1],
        ['no-reason', 0],
      ],
    );
  });
}
