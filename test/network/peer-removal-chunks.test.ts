// Removing a peer that made this deployment hold many rows (docs/network.md, "A peer's limits"):
// it is suspended at once, its rows go a chunk at a time with the event loop turning between the
// chunks (on SQLite, one statement deleting them all would hold the process for its whole length),
// and nothing of it is left.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { deletePeerRows } from '../../src/network/peer-data-repository.ts';
import { removePeer } from '../../src/network/peers.ts';
import { syncStateDb } from '../../src/network/peer-sync-repository.ts';
import { networkDb, type NetworkDb } from '../../src/network/tables.ts';
import { backends, bearer, startApp, testConfig, type TestContext } from '../helpers/app.ts';
import { standInPeer } from './support.ts';

type App = TestContext & { close(): Promise<void> };

for (const backend of backends()) {
  describe(`a peer's rows go in chunks [${backend}]`, () => {
    let B: App;
    let db: NetworkDb;
    let token = '';
    before(async () => {
      B = await startApp(backend, { network: { ...testConfig().network, allowPrivate: true } });
      db = networkDb(B.store.db);
      token = await B.token();
    });
    after(() => B.close());

    const peerWithRows = async (rows: number) => {
      const res = await B.inject({
        method: 'POST',
        url: '/api/v1/network/peers',
        headers: bearer(token),
        payload: { name: 'M', url: 'https://93.184.216.34', signing_key: standInPeer().signingKey },
      });
      assert.equal(res.statusCode, 201, res.body);
      const id = res.json().id as string;
      for (let i = 0; i < rows; i += 1000) {
        const tags = Array.from({ length: Math.min(1000, rows - i) }, () => randomBytes(32).toString('base64url'));
        await db
          .insertInto('network_peer_flags')
          .values(tags.map((tag) => ({ peer_id: id, tag, sealed: 'x' })))
          .execute();
        await db
          .insertInto('network_resolved')
          .values(
            tags.slice(0, 100).map((tag) => ({
              peer_id: id,
              id_type: 'phone',
              hash: tag,
              oprf_public: 'k',
              tag,
              label_key: 'k',
              resolved_at: 0,
            })),
          )
          .execute();
      }
      await syncStateDb(db)
        .insertInto('network_peer_sync')
        .values({
          peer_id: id,
          flags_held: rows,
          growth_since: 0,
          growth_base: 0,
          growth_added: 0,
          oprf_seen: null,
          oprf_seen_at: 0,
          evaluate_after: 0,
          calls_after: 0,
        })
        .execute();
      return id;
    };
    const count = async (table: 'network_peer_flags' | 'network_resolved', id: string) =>
      (await db.selectFrom(table).select('peer_id').where('peer_id', '=', id).execute()).length;

    test('removal: the peer is suspended first, its rows go chunk by chunk with the event loop turning between, and nothing is left', async () => {
      const keep = await peerWithRows(1500);
      const id = await peerWithRows(9000);
      let turns = 0;
      // Each turn reads the status and the rows left in one statement (one snapshot): whenever some
      // of the peer's rows are already gone, the peer must read as suspended.
      const seen: Array<{ status: string; rows: number }> = [];
      let reading = false;
      const tick = () => {
        turns++;
        if (running) setImmediate(tick);
        if (reading) return; // one read at a time: the pool is the removal's too
        reading = true;
        void sql<{
          status: string;
          n: number | string;
        }>`select status, (select count(*) from network_peer_flags f where f.peer_id = ${id}) as n from network_peers where id = ${id}`
          .execute(db)
          .then((r) => r.rows[0] && seen.push({ status: r.rows[0].status, rows: Number(r.rows[0].n) }))
          .finally(() => (reading = false));
      };
      let running = true;
      setImmediate(tick);
      await removePeer(db, id);
      running = false;
      assert.ok(turns >= 4, `the event loop turned between the chunks (${turns} turns)`);
      const during = seen.filter((x) => x.rows < 9000);
      assert.ok(during.length > 0, 'some turns ran while the rows went');
      assert.deepEqual(
        during.filter((x) => x.status !== 'suspended'),
        [],
        'the peer no longer counts while its rows go',
      );
      assert.equal(await count('network_peer_flags', id), 0);
      assert.equal(await count('network_resolved', id), 0);
      assert.equal(
        await db.selectFrom('network_peers').select('id').where('id', '=', id).executeTakeFirst(),
        undefined,
      );
      assert.equal(
        await syncStateDb(db)
          .selectFrom('network_peer_sync')
          .select('peer_id')
          .where('peer_id', '=', id)
          .executeTakeFirst(),
        undefined,
      );
      assert.equal(await count('network_peer_flags', keep), 1500, "another peer's rows stay");
    });

    test("deletePeerRows deletes exactly the peer's rows, whatever the chunk", async () => {
      const id = await peerWithRows(2500);
      assert.equal(await deletePeerRows(db, 'network_peer_flags', id, 1000), 2500);
      assert.equal(await deletePeerRows(db, 'network_resolved', id, 7), 300);
      assert.equal(await count('network_peer_flags', id), 0);
    });
  });
}
