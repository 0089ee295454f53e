// @vouch/client: a typed client for the Vouch API. The types come from schema.d.ts, generated
// from the service's OpenAPI document (npm run sdk:generate); requests go through openapi-fetch.
//
// - Credentials: an API key (X-API-Key) or client credentials, exchanged for access tokens at
//   POST /api/v1/auth/token, refreshed before they expire and once more on a 401.
// - Idempotency: every POST except the token endpoint carries an Idempotency-Key (a random UUID),
//   the SAME on each automatic retry of that call, so a retried POST never has two effects.
// - Retries: network errors, 429 and 5xx (and a 409 saying the keyed first attempt is still
//   running), a few times with growing delays (Retry-After honoured).
// - Errors: the convenience methods throw VouchError with the RFC 9457 problem body.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.d.ts';

export type { paths } from './schema.d.ts';
export { canonicalIdentifier, hashIdentifier, type IdentifierType } from './identifiers.ts';
export { VouchError, type Problem } from './errors.ts';
import { VouchError, problemOf, type Problem } from './errors.ts';

type JsonBody<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends {
  requestBody: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type Ok<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer R } } };
}
  ? R
  : never;

export type ScoreRequest = JsonBody<'/api/v1/trust/score', 'post'>;
export type ScoreResponse = Ok<'/api/v1/trust/score', 'post'>;
export type ScoreBatchRequest = JsonBody<'/api/v1/trust/score/batch', 'post'>;
export type ScoreBatchResponse = Ok<'/api/v1/trust/score/batch', 'post'>;
export type EventsRequest = JsonBody<'/api/v1/trust/events', 'post'>;
export type TrustEvent = EventsRequest['events'][number];
export type EventsResponse = Ok<'/api/v1/trust/events', 'post'>;
export type DisputeRequest = JsonBody<'/api/v1/dispute/analyze', 'post'>;
export type DisputeResponse = Ok<'/api/v1/dispute/analyze', 'post'>;
export type Decision = Ok<'/api/v1/decisions/{id}', 'get'>;
export type LabelRequest = JsonBody<'/api/v1/decisions/{id}/label', 'post'>;
export type LabelResponse = Ok<'/api/v1/decisions/{id}/label', 'post'>;
export type LabelsRequest = JsonBody<'/api/v1/labels', 'post'>;
export type LabelsResponse = Ok<'/api/v1/labels', 'post'>;
/** One item of a bulk label call (the service validates each on its own). */
export interface LabelItem {
  decision_id: string;
  label: LabelRequest['label'];
  note?: string;
}
export type TokenResponse = Ok<'/api/v1/auth/token', 'post'>;

export const TOKEN_PATH = '/api/v1/auth/token';

export interface TokenProviderOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** space-separated subset of the client's scopes; absent = all of them */
  scope?: string;
  fetch?: typeof globalThis.fetch;
  /** refresh this many seconds before expiry (default 30, at most half the lifetime) */
  refreshBeforeSeconds?: number;
  /** the clock, in milliseconds (tests) */
  now?: () => number;
}

/** Client-credentials access tokens, fetched on demand and refreshed before they expire. */
export class TokenProvider {
  private token: { value: string; refreshAt: number } | undefined;
  private pending: Promise<string> | undefined;
  /** how many tokens have been fetched */
  fetched = 0;

  constructor(private readonly options: TokenProviderOptions) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** A valid token: the cached one, or a fresh one when it is near expiry or was invalidated. */
  async get(): Promise<string> {
    if (this.token && this.now() < this.token.refreshAt) return this.token.value;
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Forgets the cached token (after a 401), unless it has already been replaced. */
  invalidate(value?: string): void {
    if (value === undefined || this.token?.value === value) this.token = undefined;
  }

  private async fetchToken(): Promise<string> {
    const { baseUrl, clientId, clientSecret, scope } = this.options;
    const doFetch = this.options.fetch ?? globalThis.fetch;
    const res = await doFetch(new URL(TOKEN_PATH, baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ client_id: clientId, client_secret: clientSecret, ...(scope ? { scope } : {}) }),
    });
    if (!res.ok) throw new VouchError(res.status, await problemOf(res));
    const body = (await res.json()) as TokenResponse;
    const lifetime = body.expires_in * 1000;
    const early = Math.min((this.options.refreshBeforeSeconds ?? 30) * 1000, lifetime / 2);
    this.token = { value: body.access_token, refreshAt: this.now() + lifetime - early };
    this.fetched += 1;
    return body.access_token;
  }
}

export interface RetryOptions {
  /** retries after the first attempt (default 3) */
  retries?: number;
  /** first delay in ms, doubled each time, with jitter (default 200) */
  baseDelayMs?: number;
  /** cap on one delay, Retry-After included (default 5000) */
  maxDelayMs?: number;
}

export interface VouchClientOptions {
  /** the service's origin, e.g. https://vouch.example.com */
  baseUrl: string;
  /** an API key (vch_live_… / vch_test_…); or clientId + clientSecret */
  apiKey?: string;
  clientId?: string;
  clientSecret?: string;
  /** token scope (client credentials only) */
  scope?: string;
  /** the transport (default globalThis.fetch) */
  fetch?: typeof globalThis.fetch;
  retry?: RetryOptions;
  /** extra token-provider settings (clock, refresh margin) */
  token?: Pick<TokenProviderOptions, 'refreshBeforeSeconds' | 'now'>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const RETRY_STATUS = (s: number) => s === 429 || s >= 500;

function retryAfterMs(res: Response): number | undefined {
  const value = res.headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * The transport under openapi-fetch: credentials, Idempotency-Key on POSTs, bounded retries on
 * network errors / 429 / 5xx / in-progress 409 (same key each time), one token refresh on a 401.
 */
function transport(
  options: VouchClientOptions,
  tokens: TokenProvider | undefined,
): (request: Request) => Promise<Response> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const retries = Math.max(0, Math.min(options.retry?.retries ?? 3, 10));
  const base = options.retry?.baseDelayMs ?? 200;
  const max = options.retry?.maxDelayMs ?? 5000;
  return async (request) => {
    const url = new URL(request.url);
    const headers = new Headers(request.headers);
    const body = request.body === null ? undefined : await request.arrayBuffer();
    if (request.method === 'POST' && url.pathname !== TOKEN_PATH && !headers.has('idempotency-key')) {
      headers.set('idempotency-key', crypto.randomUUID());
    }
    if (options.apiKey) headers.set('x-api-key', options.apiKey);
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      let token: string | undefined;
      if (tokens) {
        token = await tokens.get();
        headers.set('authorization', `Bearer ${token}`);
      }
      let res: Response;
      try {
        res = await doFetch(
          new Request(request.url, {
            method: request.method,
            headers,
            ...(body !== undefined ? { body } : {}),
            signal: request.signal,
          }),
        );
      } catch (err) {
        if (request.signal.aborted || attempt >= retries) throw err;
        await sleep(Math.min(max, base * 2 ** attempt * (0.5 + Math.random() / 2)));
        continue;
      }
      if (res.status === 401 && tokens && token && !refreshed) {
        refreshed = true;
        tokens.invalidate(token);
        await res.body?.cancel();
        attempt--; // a refresh is not one of the retries
        continue;
      }
      // 409 with Retry-After on a keyed POST: the first attempt is still running on the server.
      const inProgress = res.status === 409 && headers.has('idempotency-key') && res.headers.has('retry-after');
      if ((RETRY_STATUS(res.status) || inProgress) && attempt < retries) {
        const delay = Math.min(max, retryAfterMs(res) ?? base * 2 ** attempt * (0.5 + Math.random() / 2));
        await res.body?.cancel();
        await sleep(delay);
        continue;
      }
      return res;
    }
  };
}

export interface VouchClient {
  /** the openapi-fetch client: every path of the API, typed */
  raw: Client<paths>;
  /** the token provider (client credentials only) */
  tokens: TokenProvider | undefined;
  score(body: ScoreRequest): Promise<ScoreResponse>;
  scoreBatch(requests: ScoreBatchRequest['requests']): Promise<ScoreBatchResponse>;
  sendEvents(events: TrustEvent[]): Promise<EventsResponse>;
  analyzeDispute(body: DisputeRequest): Promise<DisputeResponse>;
  getDecision(id: string): Promise<Decision>;
  labelDecision(id: string, label: LabelRequest['label'], note?: string): Promise<LabelResponse>;
  /** up to 1,000 labels in one call: a label record or a problem per item, in order */
  labelDecisions(labels: LabelItem[]): Promise<LabelsResponse>;
}

async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) {
    const problem = (
      error && typeof error === 'object'
        ? error
        : { status: response.status, detail: String(error ?? response.statusText) }
    ) as Problem;
    throw new VouchError(response.status, problem);
  }
  return data;
}

export function createVouchClient(options: VouchClientOptions): VouchClient {
  const hasClient = Boolean(options.clientId && options.clientSecret);
  if (!options.apiKey && !hasClient)
    throw new TypeError('createVouchClient: give apiKey, or clientId and clientSecret');
  if (options.apiKey && hasClient)
    throw new TypeError('createVouchClient: give apiKey or client credentials, not both');
  const tokens = hasClient
    ? new TokenProvider({
        baseUrl: options.baseUrl,
        clientId: options.clientId!,
        clientSecret: options.clientSecret!,
        ...(options.scope ? { scope: options.scope } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...options.token,
      })
    : undefined;
  const raw = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: transport(options, tokens) });
  return {
    raw,
    tokens,
    score: (body) => unwrap(raw.POST('/api/v1/trust/score', { body })),
    scoreBatch: (requests) => unwrap(raw.POST('/api/v1/trust/score/batch', { body: { requests } })),
    sendEvents: (events) => unwrap(raw.POST('/api/v1/trust/events', { body: { events } })),
    analyzeDispute: (body) => unwrap(raw.POST('/api/v1/dispute/analyze', { body })),
    getDecision: (id) => unwrap(raw.GET('/api/v1/decisions/{id}', { params: { path: { id } } })),
    labelDecision: (id, label, note) =>
      unwrap(
        raw.POST('/api/v1/decisions/{id}/label', {
          params: { path: { id } },
          body: { label, ...(note !== undefined ? { note } : {}) },
        }),
      ),
    labelDecisions: (labels) => unwrap(raw.POST('/api/v1/labels', { body: { labels } })),
  };
}
