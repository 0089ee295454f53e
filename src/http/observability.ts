// Request ids, Prometheus metrics and the health endpoints.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Registry, Histogram, Counter, collectDefaultMetrics } from 'prom-client';
import { sendProblem } from './errors.ts';
import { clusterMetrics, shareWorkerMetrics } from './cluster-metrics.ts';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: { registry: Registry; counter(name: string, help: string, labelNames?: string[]): Counter };
  }
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Honour a caller's X-Request-Id when it is safe to echo into logs, else make one. */
export function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

export const observability = fp(async function observability(app: FastifyInstance, options: { ping: () => Promise<void>; degraded?: () => string[] }) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  shareWorkerMetrics(registry);
  const duration = new Histogram({
    name: 'vouch_http_request_duration_seconds',
    help: 'HTTP request duration by route, method and status',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const counters = new Map<string, Counter>();
  app.decorate('metrics', {
    registry,
    counter(name: string, help: string, labelNames: string[] = []) {
      let c = counters.get(name);
      if (!c) {
        c = new Counter({ name, help, labelNames, registers: [registry] });
        counters.set(name, c);
      }
      return c;
    },
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request: FastifyRequest, reply) => {
    duration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: reply.statusCode },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/healthz', { schema: { tags: ['ops'], summary: 'The process is alive' } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { tags: ['ops'], summary: 'The store is reachable' } }, async (request, reply) => {
    try {
      await options.ping();
    } catch {
      return sendProblem(request, reply, 503, 'unavailable', 'The store is unreachable.');
    }
    const degraded = options.degraded?.() ?? [];
    return { status: degraded.length === 0 ? 'ready' : 'degraded', degraded };
  });
  app.get('/metrics', { schema: { tags: ['ops'], summary: 'Prometheus metrics' } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return (await clusterMetrics()) ?? registry.metrics();
  });
});
