// Three deployments as real `vouch serve` processes on loopback, each with its own SQLite store
// (docs/network.md): A flags a phone hash; B, which links the same hash to a new entity, learns
// after a sync that A flagged it; C, which never saw the phone, learns nothing. A's logs and store
// never hold what B alone asked about; suspending A at B removes the match at once; erasure at A
// withdraws it at B's next sync; an unreachable peer only reports an error.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { TEST_TIMEOUT_MS, adminToken, call, freePort, startServer, type ServerProcess } from '../helpers/processes.ts';

const PHONE = '7d1c'.repeat(16);
const B_ONLY = 'b0e1'.repeat(16);
const C_ONLY = 'c0e1'.repeat(16);
const ENTITY = { a: 'a1'.repeat(32), b: 'b2'.repeat(32), c: 'c3'.repeat(32) };

interface Deployment {
  name: string;
  server: ServerProcess;
  dir: string;
  token: string;
  descriptor: { signing_key: string; oprf_public_key: string };
}

test(
  'three deployments: a flag crosses from A to B without any identifier leaving either',
  { timeout: TEST_TIMEOUT_MS * 2 },
  async (t) => {
    const deployments: Deployment[] = [];
    t.after(async () => {
      for (const d of deployments) await d.server.stop().catch(() => undefined);
      for (const d of deployments) rmSync(d.dir, { recursive: true, force: true });
    });
    const start = async (name: string): Promise<Deployment> => {
      const dir = mkdtempSync(join(tmpdir(), `vouch-net-${name}-`));
      const server = await startServer({
        env: {
          VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}`,
          VOUCH_NETWORK_ALLOW_PRIVATE: '1',
          VOUCH_NETWORK_NAME: name,
          VOUCH_LOG_LEVEL: 'info',
        },
      });
      const token = await adminToken(server.url);
      const descriptor = (await call(server.url, 'GET', '/network/v1/descriptor')).body as Deployment['descriptor'];
      return { name, server, dir, token, descriptor };
    };
    deployments.push(...(await Promise.all(['A', 'B', 'C'].map(start))));
    const [A, B, C] = deployments as [Deployment, Deployment, Deployment];
    const admin = (d: Deployment, method: string, path: string, body?: unknown) =>
      call(d.server.url, method, path, {
        headers: { authorization: `Bearer ${d.token}` },
        ...(body === undefined ? {} : { body }),
      });
    const peerIds = new Map<string, string>();
    for (const from of deployments) {
      for (const to of deployments) {
        if (from === to) continue;
        const res = await admin(from, 'POST', '/api/v1/network/peers', {
          name: to.name,
          url: to.server.url,
          signing_key: to.descriptor.signing_key,
        });
        assert.equal(res.status, 201, res.text);
        peerIds.set(`${from.name}->${to.name}`, res.body.id as string);
      }
    }
    const events = async (d: Deployment, list: object[]) => {
      const res = await admin(d, 'POST', '/api/v1/trust/events', { events: list });
      assert.equal(res.status, 200, res.text);
    };
    const now = new Date(Date.now() - 60_000).toISOString();
    await events(A, [
      {
        event_id: 'a-1',
        type: 'fraud.reported',
        entity_id: ENTITY.a,
        occurred_at: now,
        linked_identifiers: [{ type: 'phone', hash: PHONE }],
      },
    ]);
    await events(B, [
      {
        event_id: 'b-1',
        type: 'identifier.linked',
        entity_id: ENTITY.b,
        occurred_at: now,
        linked_identifiers: [
          { type: 'phone', hash: PHONE },
          { type: 'email', hash: B_ONLY },
        ],
      },
    ]);
    await events(C, [
      {
        event_id: 'c-1',
        type: 'identifier.linked',
        entity_id: ENTITY.c,
        occurred_at: now,
        linked_identifiers: [{ type: 'email', hash: C_ONLY }],
      },
    ]);
    // An unreachable peer at B: it only reports an error, the other peers sync as usual.
    const dead = await admin(B, 'POST', '/api/v1/network/peers', {
      name: 'gone',
      url: `http://127.0.0.1:${await freePort()}`,
      signing_key: 'O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik',
    });
    assert.equal(dead.status, 201, dead.text);

    type SyncReport = { peers: Array<{ id: string; flags_pulled: number; matched: number; error?: string }> };
    const sync = async (d: Deployment) => {
      const res = await admin(d, 'POST', '/api/v1/network/sync');
      assert.equal(res.status, 200, res.text);
      return new Map((res.body as SyncReport).peers.map((p) => [p.id, p]));
    };
    const matches = async (d: Deployment, entity: string) => {
      const res = await admin(d, 'GET', `/api/v1/network/matches?entity_id=${entity}`);
      assert.equal(res.status, 200, res.text);
      return res.body as {
        peers: Array<{ id: string; name: string; kinds: Record<string, number> }>;
        signal: { value: number; description: string };
      };
    };

    const atB = await sync(B);
    assert.deepEqual({ ...atB.get(peerIds.get('B->A')!) }, { id: peerIds.get('B->A'), flags_pulled: 1, matched: 1 });
    assert.equal(atB.get(peerIds.get('B->C')!)?.matched, 0);
    assert.match(String(atB.get(dead.body.id as string)?.error), /.+/);
    const seen = await matches(B, ENTITY.b);
    assert.deepEqual(
      seen.peers.map((p) => [p.name, p.kinds]),
      [['A', { fraud_report: 1 }]],
    );
    assert.ok(seen.signal.value > 0);
    assert.match(seen.signal.description, /flagged by 1 other marketplace in the last 90 days \(fraud report\)/);

    // B's next score carries network_flags, and its decision names A as the contributing peer.
    type Scored = { decision_id: string; signals: Array<{ name: string; value: number; description: string }> };
    const score = async (d: Deployment, entity: string, amount = 100) => {
      const res = await admin(d, 'POST', '/api/v1/trust/score', { entity_id: entity, amount, currency: 'USD' });
      assert.equal(res.status, 200, res.text);
      return res.body as Scored;
    };
    const networkSignal = (body: Scored) => body.signals.find((s) => s.name === 'network_flags');
    const scoredAtB = await score(B, ENTITY.b);
    assert.equal(networkSignal(scoredAtB)?.value, 0.5);
    assert.match(networkSignal(scoredAtB)!.description, /flagged by 1 other marketplace/);
    const decision = await admin(B, 'GET', `/api/v1/decisions/${scoredAtB.decision_id}`);
    assert.deepEqual(decision.body.network_peers, [{ id: peerIds.get('B->A'), name: 'A', contribution: 0.5 }]);

    // C holds no phone: it pulls A's opaque entries and can open none of them.
    const atC = await sync(C);
    assert.deepEqual({ ...atC.get(peerIds.get('C->A')!) }, { id: peerIds.get('C->A'), flags_pulled: 1, matched: 0 });
    assert.deepEqual((await matches(C, ENTITY.c)).peers, []);
    assert.equal(networkSignal(await score(C, ENTITY.c)), undefined);

    // A never sees B's query input: not in its logs, not in its store. (Its own phone hash is in its
    // store, as its history; it is not in its logs.)
    const logs = A.server.output();
    assert.ok(logs.length < 60 * 1024, 'the whole log is still in the captured output');
    assert.match(logs, /network_evaluated/);
    for (const secret of [B_ONLY, PHONE]) assert.ok(!logs.includes(secret), 'A logged an identifier');
    const stored = ['vouch.db', 'vouch.db-wal']
      .map((f) => join(A.dir, f))
      .filter(existsSync)
      .map((f) => readFileSync(f).toString('latin1'))
      .join('');
    assert.ok(stored.includes(PHONE), 'the store files are readable as expected');
    assert.ok(!stored.includes(B_ONLY), "B's query input reached A's store");

    // Suspending A at B removes its contribution at once; making it active brings it back.
    const suspend = (status: string) => admin(B, 'PATCH', `/api/v1/network/peers/${peerIds.get('B->A')}`, { status });
    assert.equal((await suspend('suspended')).status, 200);
    assert.deepEqual((await matches(B, ENTITY.b)).peers, []);
    assert.equal(
      networkSignal(await score(B, ENTITY.b)),
      undefined,
      'the same request, no longer served from the cache',
    );
    assert.equal((await sync(B)).get(peerIds.get('B->A')!), undefined, 'a suspended peer is not synced');
    assert.equal((await suspend('active')).status, 200);
    assert.equal((await matches(B, ENTITY.b)).peers.length, 1);
    assert.equal(networkSignal(await score(B, ENTITY.b))?.value, 0.5);

    // A peer that accepts connections and never answers: B's sync waits on it, B's scores do not.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t.after(
      () =>
        new Promise<void>((resolve) => {
          silent.closeAllConnections();
          silent.close(() => resolve());
        }),
    );
    const stuck = await admin(B, 'POST', '/api/v1/network/peers', {
      name: 'silent',
      url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      signing_key: String(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x),
    });
    assert.equal(stuck.status, 201, stuck.text);
    let syncDone = false;
    const slowSync = sync(B).then((r) => {
      syncDone = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 5; i++) assert.equal(networkSignal(await score(B, ENTITY.b, 200 + i))?.value, 0.5);
    assert.equal(syncDone, false, 'the scores were answered while the sync still waited on the silent peer');
    assert.match(String((await slowSync).get(stuck.body.id as string)?.error), /.+/);
    assert.equal((await admin(B, 'DELETE', `/api/v1/network/peers/${stuck.body.id}`)).status, 200);

    // A suspends B: B's requests are refused (403), reported as an error, and its earlier matches stay.
    assert.equal(
      (await admin(A, 'PATCH', `/api/v1/network/peers/${peerIds.get('A->B')}`, { status: 'suspended' })).status,
      200,
    );
    assert.match(String((await sync(B)).get(peerIds.get('B->A')!)?.error), /HTTP 403/);
    assert.equal(
      (await admin(A, 'PATCH', `/api/v1/network/peers/${peerIds.get('A->B')}`, { status: 'active' })).status,
      200,
    );

    // Erasure at A withdraws the flag at B's next sync.
    assert.equal((await admin(A, 'DELETE', `/api/v1/trust/entities/${ENTITY.a}`)).status, 200);
    const afterErasure = await sync(B);
    assert.deepEqual(
      { ...afterErasure.get(peerIds.get('B->A')!) },
      { id: peerIds.get('B->A'), flags_pulled: 1, matched: 0 },
    );
    assert.deepEqual((await matches(B, ENTITY.b)).peers, []);

    const metrics = await call(A.server.url, 'GET', '/metrics');
    assert.match(metrics.text, /vouch_network_evaluations_total\{direction="served"\} [1-9]/);
    assert.match(metrics.text, /vouch_network_requests_total\{endpoint="\/network\/v1\/flags",status="2xx"\} [1-9]/);
  },
);
