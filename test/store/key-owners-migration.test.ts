// 037_key_owners over a store that already holds keys: the owner column no longer references
// `clients` (a person may own a key), every key row and the table's indexes stay, and on SQLite
// the foreign-key check passes afterwards. Run twice, it changes nothing the second time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { backends } from '../helpers/app.ts';
import { storeMigratedBefore } from '../helpers/migrations.ts';
import { keyOwners } from '../../src/store/migrations/037_key_owners.ts';

for (const backend of backends()) {
  test(`037_key_owners keeps every key and lets a person own one [${backend}]`, async () => {
    const { store, drop } = await storeMigratedBefore(backend, '037');
    try {
      const db = store.db;
      await db
        .insertInto('clients')
        .values({
          environment: 'live',
          id: 'cli_m',
          name: 'm',
          secret_hash: 'x',
          role: 'admin',
          scopes: 'keys:write',
          created_at: 1,
          deactivated_at: null,
        })
        .execute();
      const key = (id: string, owner: string) => ({
        id,
        name: id,
        prefix: 'vk_test',
        key_hash: `hash-${id}`,
        scopes: 'trust:read',
        role: 'service',
        environment: 'live',
        owner_client_id: owner,
        created_at: 2,
        expires_at: null,
        last_used_at: null,
        deactivated_at: null,
        rotated_at: null,
      });
      await db.insertInto('api_keys').values(key('key_a', 'cli_m')).execute();
      await assert.rejects(db.insertInto('api_keys').values(key('key_early', 'usr_x')).execute());
      const before = await db.selectFrom('api_keys').selectAll().orderBy('id').execute();

      await keyOwners(backend).up(db as Kysely<unknown>);
      await keyOwners(backend).up(db as Kysely<unknown>);

      assert.deepEqual(await db.selectFrom('api_keys').selectAll().orderBy('id').execute(), before);
      await db.insertInto('api_keys').values(key('key_b', 'usr_someone')).execute();
      assert.equal((await db.selectFrom('api_keys').select('id').execute()).length, 2);
      if (backend === 'sqlite') {
        const indexes = await sql<{ name: string }>`
          select name from sqlite_master where tbl_name = 'api_keys' and type = 'index' order by name`.execute(db);
        assert.ok(indexes.rows.some((r) => r.name === 'api_keys_owner_created'));
        assert.ok(indexes.rows.some((r) => r.name === 'api_keys_created'));
        assert.deepEqual((await sql`pragma foreign_key_check`.execute(db)).rows, []);
      }
    } finally {
      await drop();
    }
  });
}
