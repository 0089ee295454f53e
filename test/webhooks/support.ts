// Webhook test support: an app (or several) on one store with private destinations allowed and
// short worker timings, and a real HTTP receiver on loopback whose answers a test scripts.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import type { Config } from '../../src/config/env.ts';
import type { WorkerOptions } from '../../src/webhooks/worker.ts';
import { freshStore, testConfig, ADMIN_ID, ADMIN_SECRET, type Backend, type TestStore } from '../helpers/app.ts';

// The circuit breaker is out of the way here (its own tests set it): these tests count retries.
// The lease is far above any attempt, even on a loaded machine: only a test that means to let a
// lease run out (with a claim of its own) ever sees one end.
export const FAST_WORKER: WorkerOptions = {
  pollMs: 25,
  timeoutMs: 400,
  leaseMs: 10_000,
  retryDelaysMs: [50, 50, 50, 50, 50],
  breakerFailures: 1000,
};

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** the request path: tests give each webhook its own path to tell their deliveries apart */
  path: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** answers in order, then `fallback`; a delay above the worker's timeout makes a timeout */
  script: Array<{ status: number; delayMs?: number }>;
  fallback: { status: number; delayMs?: number };
  close(): Promise<void>;
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver: Partial<Receiver> & {
    received: Received[];
    script: Receiver['script'];
    fallback: Receiver['fallback'];
  } = { received: [], script: [], fallback: { status: 200 } };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.received.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        path: req.url ?? '',
      });
      const answer = receiver.script.shift() ?? receiver.fallback;
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'text/plain' }).end('ok');
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  receiver.url = `http://127.0.0.1:${port}/hook`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  receiver.waitFor = async (predicate, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(receiver.received)) {
      if (Date.now() > deadline)
        throw new Error(`receiver: condition not met within ${timeoutMs} ms (${receiver.received.length} received)`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return receiver as Receiver;
}

/**
 * The deliveries received, one per webhook (path) and webhook-id. Delivery is at least once: on a
 * loaded machine an attempt can outlive the test worker's 400 ms timeout and be sent again with the
 * same webhook-id, which is a retry, not a second event.
 */
export const distinctDeliveries = (received: readonly Received[]): Received[] => [
  ...new Map(received.map((r) => [`${r.path} ${String(r.headers['webhook-id'])}`, r])).values(),
];

export interface WebhookWorld {
  fresh: TestStore;
  config: Config;
  apps: FastifyInstance[];
  /** another app on the same store (a second server) */
  spawn(worker?: WorkerOptions & { enabled?: boolean }): Promise<FastifyInstance>;
  token(app: FastifyInstance, scope?: string): Promise<string>;
  close(): Promise<void>;
}

export async function webhookWorld(
  backend: Backend,
  overrides: Partial<Config> = {},
  worker: WorkerOptions & { enabled?: boolean } = FAST_WORKER,
): Promise<WebhookWorld & { app: FastifyInstance }> {
  const fresh = await freshStore(backend);
  const config = testConfig({ webhookAllowPrivate: true, ...overrides });
  await ensureBootstrapAdmin(fresh.store, config);
  const apps: FastifyInstance[] = [];
  const spawn = async (options: WorkerOptions & { enabled?: boolean } = worker) => {
    const app = await buildApp({ config, store: fresh.store, logger: false, webhookWorker: options });
    await app.ready();
    apps.push(app);
    return app;
  };
  const app = await spawn();
  return {
    fresh,
    config,
    apps,
    app,
    spawn,
    async token(on: FastifyInstance, scope?: string) {
      const res = await on.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET, ...(scope ? { scope } : {}) },
      });
      return res.json().access_token as string;
    },
    async close() {
      for (const a of apps) await a.close().catch(() => {});
      await fresh.drop();
    },
  };
}
