// Request ids, Prometheus metrics and the health endpoints.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { defineRoute, type RouteDefinition } from './route.ts';
import { Registry, Histogram, Counter, Gauge, collectDefaultMetrics } from 'prom-client';
import { sendProblem, storeRecentlyFull } from './errors.ts';
import { clusterMetrics, shareWorkerMetrics } from './cluster-metrics.ts';

/** The process's metrics: the registry /metrics serves, and counters features create on it. */
export interface Metrics {
  registry: Registry;
  counter(name: string, help: string, labelNames?: string[]): Counter;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Honour a caller's X-Request-Id when it is safe to echo into logs, else make one. */
export function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  // Digests of equal length: timingSafeEqual needs them, and the token's length does not leak.
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}

export interface ObservabilityOptions {
  /** hooks that report store queries and Redis commands to the latency histograms */
  observeQueries?: (observer: ((operation: string, seconds: number, failed: boolean) => void) | undefined) => void;
  observeRedis?: (observer: ((command: string, seconds: number, failed: boolean) => void) | undefined) => void;
}

/** Probes ask every few seconds: at info they would bury everything else. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

export type RequestLogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * The level of a request's "request completed" line (docs/operations.md, "Logs"): what needs a
 * look (5xx) at error, what a caller got wrong (4xx) at info, routine successes and probes at
 * debug (the request metrics count them all); a failing probe at warn.
 */
export function requestLogLevel(route: string | undefined, status: number): RequestLogLevel {
  if (route !== undefined && PROBES.has(route)) return status >= 500 ? 'warn' : 'debug';
  if (status >= 500) return 'error';
  if (status >= 400) return 'info';
  return 'debug';
}

/** Fastify's per-request log lines, at the levels above (its own are always info). */
export class LeveledRequestLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.trace({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
      return;
    }
    const level = requestLogLevel(request.routeOptions.url, reply.statusCode);
    reply.log[level]({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

const LATENCY_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export const observability = fp(async function observability(app: FastifyInstance, options: ObservabilityOptions) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  shareWorkerMetrics(registry);
  // 'first': under `serve --workers N` the primary's aggregation would otherwise sum it to N.
  new Gauge({
    name: 'vouch_build_info',
    help: 'Always 1; the labels say which build runs',
    labelNames: ['version', 'node'],
    aggregator: 'first',
    registers: [registry],
  }).set({ version: VERSION, node: process.version }, 1);
  if (options.observeQueries) {
    const queries = new Histogram({
      name: 'vouch_store_query_seconds',
      help: 'Store query duration by operation and outcome',
      labelNames: ['operation', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    options.observeQueries((operation, seconds, failed) =>
      queries.observe({ operation, outcome: failed ? 'error' : 'ok' }, seconds),
    );
    app.addHook('onClose', async () => options.observeQueries?.(undefined));
  }
  if (options.observeRedis) {
    const commands = new Histogram({
      name: 'vouch_redis_command_seconds',
      help: 'Redis command duration by command and outcome',
      labelNames: ['command', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    options.observeRedis((command, seconds, failed) =>
      commands.observe({ command, outcome: failed ? 'error' : 'ok' }, seconds),
    );
    app.addHook('onClose', async () => options.observeRedis?.(undefined));
  }
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

  // Callback hooks, not async ones: every request runs them, and an async hook costs a promise each.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request: FastifyRequest, reply, done) => {
    duration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: reply.statusCode },
      reply.elapsedTime / 1000,
    );
    done();
  });
});

export interface HealthRouteOptions {
  ping: () => Promise<void>;
  /** the shared services that are down while the store is up (Redis) */
  degraded?: () => string[];
  /** VOUCH_METRICS_TOKEN */
  metricsToken?: string;
  metrics: Metrics;
}

/** Liveness, readiness and the Prometheus scrape. */
export function healthRoutes(options: HealthRouteOptions): RouteDefinition[] {
  const { registry } = options.metrics;
  const metricsToken = options.metricsToken === undefined ? undefined : digest(options.metricsToken);
  return [
    defineRoute({
      method: 'GET',
      url: '/healthz',
      schema: { tags: ['ops'], summary: 'The process is alive' },
      handler: async () => ({ status: 'ok' }),
    }),
    defineRoute({
      method: 'GET',
      url: '/readyz',
      schema: { tags: ['ops'], summary: 'The store is reachable' },
      handler: async (request, reply) => {
        try {
          await options.ping();
        } catch {
          return sendProblem(request, reply, 503, 'unavailable', 'The store is unreachable.');
        }
        // a store that answers but cannot write: a load balancer should send writes elsewhere
        if (storeRecentlyFull(request.server)) {
          reply.header('retry-after', '30');
          return sendProblem(request, reply, 503, 'unavailable', 'The store has no space left to write.');
        }
        const degraded = options.degraded?.() ?? [];
        return { status: degraded.length === 0 ? 'ready' : 'degraded', degraded };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/metrics',
      schema: { tags: ['ops'], summary: 'Prometheus metrics (a bearer token when VOUCH_METRICS_TOKEN is set)' },
      handler: async (request, reply) => {
        if (metricsToken && !bearerMatches(request.headers.authorization, metricsToken)) {
          reply.header('www-authenticate', 'Bearer realm="vouch-metrics"');
          return sendProblem(
            request,
            reply,
            401,
            'unauthenticated',
            'The metrics endpoint requires Authorization: Bearer <VOUCH_METRICS_TOKEN>.',
          );
        }
        reply.type(registry.contentType);
        return (await clusterMetrics()) ?? registry.metrics();
      },
    }),
  ];
}
