// 010_webhook_isolation over webhooks stored before it: each gets a closed circuit and keeps its
// pending deliveries claimable; the fan-out table starts empty.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { backends } from '../helpers/app.ts';
import { storeMigratedBefore } from '../helpers/migrations.ts';
import { claimDue } from '../../src/webhooks/claims.ts';

for (const backend of backends()) {
  test(`010_webhook_isolation: a webhook stored before it has a closed circuit and its deliveries are claimed [${backend}]`, async (t) => {
    const { store, drop } = await storeMigratedBefore(backend, '010');
    t.after(drop);
    const now = Date.now();
    await sql`insert into webhooks (id, environment, owner_client_id, url, events, description, secret, created_at)
      values ('whk_old', 'live', 'cli_old', 'https://93.184.216.34/x', 'entity.flagged', null, '{}', ${now})`.execute(
      store.db,
    );
    await sql`insert into webhook_events (id, environment, type, owner_client_id, data, created_at) values ('msg_old', 'live', 'entity.flagged', 'cli_old', '{}', ${now})`.execute(
      store.db,
    );
    await sql`insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, lease_until, created_at)
      values ('whd_old', 'whk_old', 'msg_old', 'pending', 0, ${now}, 0, ${now})`.execute(store.db);
    await store.migrate();
    const hook = await store.db.selectFrom('webhooks').selectAll().executeTakeFirstOrThrow();
    assert.equal(Number(hook.consecutive_failures), 0);
    assert.equal(Number(hook.paused_until), 0);
    assert.deepEqual(await store.db.selectFrom('webhook_fanouts').selectAll().execute(), []);
    const claimed = await claimDue(store, 5, 1000);
    assert.deepEqual(
      claimed.map((c) => [c.id, c.owner_client_id]),
      [['whd_old', 'cli_old']],
    );
  });
}
