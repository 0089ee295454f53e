// CORS for browser callers (docs/api.md, "Integration"): off unless VOUCH_CORS_ORIGINS lists origins. Each listed
// origin is echoed (never `*`), others get no CORS headers and their preflights are not answered.
import type { FastifyInstance } from 'fastify';
import cors from '@fastify/cors';

const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-API-Key'];
// What a browser script may read back: ids, pagination and retry hints, replays.
const EXPOSED_HEADERS = [
  'Location',
  'X-Request-Id',
  'Idempotent-Replayed',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'WWW-Authenticate',
];

export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  await app.register(cors, {
    // A function (not the list) so an unlisted origin disables CORS for the request entirely:
    // its preflight falls through to the ordinary 404/405 instead of a bare 204.
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: ['GET', 'HEAD', 'POST', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    // Bearer tokens and API keys travel in headers, never cookies.
    credentials: false,
    maxAge: 600,
    // A preflight without Access-Control-Request-Method would get a text/plain 400 from the plugin.
    strictPreflight: false,
    hideOptionsRoute: true,
  });
}
