// Webhooks across real server processes on one store (docs/api.md, "Integration", issue 11): two `vouch serve`
// processes deliver a backlog exactly once between them; after a kill -9 of one mid-backlog the
// other delivers everything (what the dead one had claimed, once its lease runs out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { backends, freshStore } from '../helpers/app.ts';
import { TEST_TIMEOUT_MS, adminToken, call, startServer, type ServerProcess } from '../helpers/processes.ts';
import { enqueueWebhookEvent } from '../../src/webhooks/repository.ts';
import { startReceiver } from './support.ts';

for (const backend of backends()) {
  test(
    `two server processes deliver a backlog exactly once; a kill -9 of one loses nothing [${backend}]`,
    { timeout: TEST_TIMEOUT_MS },
    async (t) => {
      const fresh = await freshStore(backend);
      const receiver = await startReceiver();
      const servers: ServerProcess[] = [];
      t.after(async () => {
        for (const s of servers) await s.kill().catch(() => undefined);
        await receiver.close();
        await fresh.drop();
      });
      const env = {
        VOUCH_DATABASE_URL: fresh.url,
        VOUCH_WEBHOOK_ALLOW_PRIVATE: '1',
        VOUCH_SECRET_KEY: 'webhook-process-test-secret-key-0123456789',
      };
      servers.push(await startServer({ env }), await startServer({ env }));
      const [a] = servers as [ServerProcess, ServerProcess];
      const token = await adminToken(a.url);
      const created = await call(a.url, 'POST', '/api/v1/webhooks', {
        headers: { authorization: `Bearer ${token}` },
        body: { url: receiver.url, events: ['policy.activated'] },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const secret = (created.body as { secret: string }).secret;
      const enqueue = async (n: number, tag: string) => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++)
          ids.push(
            (await fresh.store.db
              .transaction()
              .execute((trx) => enqueueWebhookEvent(trx, 'live', 'policy.activated', { version: `${tag}-${i}` })))!,
          );
        return ids;
      };
      const counts = () => {
        const m = new Map<string, number>();
        for (const r of receiver.received) {
          new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
          m.set(String(r.headers['webhook-id']), (m.get(String(r.headers['webhook-id'])) ?? 0) + 1);
        }
        return m;
      };

      // Both processes running: each event once.
      receiver.fallback = { status: 200, delayMs: 20 };
      const first = await enqueue(30, 'both');
      await receiver.waitFor(() => first.every((id) => counts().has(id)), 30_000);
      await new Promise((r) => setTimeout(r, 1500));
      assert.deepEqual(
        [...counts().entries()].filter(([, n]) => n > 1),
        [],
        'no event delivered twice',
      );
      assert.equal(receiver.received.length, 30);

      // kill -9 mid-backlog: nothing lost. What the dead process had in flight may arrive twice
      // (at-least-once, as Standard Webhooks specifies); nothing else does.
      receiver.received.length = 0;
      receiver.fallback = { status: 200, delayMs: 300 };
      const second = await enqueue(24, 'kill');
      await receiver.waitFor((r) => r.length >= 4, 30_000);
      await a.kill();
      await receiver.waitFor(() => second.every((id) => counts().has(id)), 60_000);
      const twice = [...counts().entries()].filter(([, n]) => n > 1);
      assert.ok(twice.length <= 10, `at most one claimed batch repeats, got ${twice.length}`);
    },
  );
}
