// RFC 9457 problem details: the one error shape every endpoint answers with.
import { Type } from 'typebox';
import { DomainError, type DomainCode, type FieldError } from '../lib/domain-errors.ts';

export type { FieldError };

export type ProblemCode =
  | 'invalid_request'
  | 'validation_failed'
  | 'raw_identifier_rejected'
  | 'invalid_scope'
  | 'unauthenticated'
  | 'invalid_client'
  | 'insufficient_scope'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'conflict'
  | 'payload_too_large'
  | 'idempotency_key_reused'
  | 'request_timeout'
  | 'headers_too_large'
  | 'rate_limited'
  | 'insufficient_labels'
  | 'internal'
  | 'unavailable';

export interface ProblemInfo {
  /** the status this code is always sent with */
  status: number;
  title: string;
  /** what it means and what to do: the page at /problems/<code> (docs/operations.md, "Problem types") */
  meaning: string;
}

export const PROBLEMS: Record<ProblemCode, ProblemInfo> = {
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    meaning:
      'The request is malformed: invalid JSON, a bad query or path parameter, a header sent twice, or both credential headers at once. The detail and errors name what to fix.',
  },
  validation_failed: {
    status: 400,
    title: 'Validation failed',
    meaning:
      "The body does not match the operation's schema (unknown top-level fields are rejected). errors lists each offending field with a message.",
  },
  raw_identifier_rejected: {
    status: 400,
    title: 'Raw identifier rejected',
    meaning:
      'An entity id looks like a raw phone number, e-mail address, IBAN or card number. Send a salted digest or an opaque id instead; raw personal data is never stored.',
  },
  invalid_scope: {
    status: 400,
    title: 'Invalid scope',
    meaning:
      "The token request asked for a scope the client does not hold. Request a subset of the client's scopes, or none to get all of them.",
  },
  unauthenticated: {
    status: 401,
    title: 'Unauthenticated',
    meaning:
      'Credentials are missing, malformed, unknown, expired or deactivated. Send Authorization: Bearer <token> or X-API-Key: <key>; fetch a new token when yours has expired.',
  },
  invalid_client: {
    status: 401,
    title: 'Invalid client',
    meaning:
      'The token endpoint did not accept the client credentials: unknown client, wrong secret, or a deactivated client.',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    meaning:
      'The credentials are valid but lack the scope or role this operation needs, or a key would get more than its creator holds. WWW-Authenticate names the scope.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    meaning:
      'The caller is known but may not do this: a console request without its CSRF token, or a person approving their own pending change (docs/api.md, "People").',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    meaning: 'No such route, or a resource the caller may not see (existence is not revealed).',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    meaning: 'The path exists but not with this method; the Allow header lists the methods it takes.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    meaning:
      'Send the body as application/json (the token endpoint also takes application/x-www-form-urlencoded), uncompressed.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    meaning:
      "The resource's state forbids the operation: for example rotating an inactive key, a per-client limit reached (100 active API keys, webhooks), a job already running, or an idempotent request still in progress.",
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    meaning:
      "The body is over the operation's limit: 64 KiB, or 1 MiB for event ingestion and score batches. The detail names the limit; split the request.",
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused',
    meaning: 'The Idempotency-Key was already used with a different body. Use a new key for a different request.',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    meaning: 'The request headers or body did not arrive within 10 seconds; the connection is closed.',
  },
  headers_too_large: {
    status: 431,
    title: 'Request header fields too large',
    meaning: 'The request headers are larger than the server accepts.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    meaning:
      'The principal (or, for tokens, the source address) is over its rate limit. Wait for the time in Retry-After; RateLimit-* headers show the budget.',
  },
  insufficient_labels: {
    status: 422,
    title: 'Insufficient labels',
    meaning: 'Fitting or backtesting a policy needs more labelled decisions than exist; label more decisions first.',
  },
  internal: {
    status: 500,
    title: 'Internal error',
    meaning: 'An unexpected error. It has been logged with the request id; quote request_id when reporting it.',
  },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    meaning:
      'The store is unreachable or the server is shutting down. Retry shortly (Retry-After), on another instance if there is one.',
  },
};

/** Every code an error body can carry. */
export const PROBLEM_CODES = Object.keys(PROBLEMS) as ProblemCode[];

export interface ProblemOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** token endpoint only: the RFC 6749 §5.2 `error` member, when the default mapping is not right */
  oauthError?: string;
  /** RFC 9457 extension members (the route's response schema must declare them to be sent) */
  extensions?: Record<string, unknown>;
}

/**
 * An error the HTTP layer or a route throws to answer with a problem document instead of a 500;
 * its status is the catalogue's for its code. Features below the routes throw domain errors
 * (lib/domain-errors.ts) instead, which `asProblem` maps.
 */
export class ApiError extends Error {
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly options: ProblemOptions = {},
  ) {
    super(detail);
  }

  get status(): number {
    return PROBLEMS[this.code].status;
  }
}

// Every code a domain error carries has its page and its status here.
const DOMAIN_CODES: Record<DomainCode, ProblemCode> = {
  not_found: 'not_found',
  conflict: 'conflict',
  validation_failed: 'validation_failed',
  invalid_request: 'invalid_request',
  raw_identifier_rejected: 'raw_identifier_rejected',
  rate_limited: 'rate_limited',
  forbidden: 'forbidden',
  insufficient_scope: 'insufficient_scope',
  unauthenticated: 'unauthenticated',
};

/**
 * The one place a domain error becomes a problem: its code, detail, field errors and extension
 * members, a retry time as Retry-After and a challenge as WWW-Authenticate. Undefined for an error
 * that is neither (a bug, a store outage: errors.ts classifies those).
 */
export function asProblem(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (!(err instanceof DomainError)) return undefined;
  const { errors, retryAfterSeconds, challenge, extensions } = err.options;
  const headers: Record<string, string> = {};
  if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
  if (challenge !== undefined) headers['www-authenticate'] = challenge;
  return new ApiError(DOMAIN_CODES[err.code], err.detail, {
    ...(errors ? { errors } : {}),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(extensions ? { extensions } : {}),
  });
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  request_id: string;
  errors?: FieldError[];
  error?: string;
  error_description?: string;
}

export function problemBody(
  status: number,
  code: ProblemCode,
  detail: string,
  requestId: string,
  errors?: FieldError[],
): ProblemBody {
  const body: ProblemBody = {
    type: `/problems/${code}`,
    title: PROBLEMS[code].title,
    status,
    detail,
    code,
    request_id: requestId,
  };
  if (errors && errors.length > 0) body.errors = errors;
  return body;
}

/**
 * The problem document for a refusal inside a batch (one item of a score or label batch), as the
 * single call would have answered it; undefined when `err` is not a refusal.
 */
export function problemBodyOf(err: unknown, requestId: string): ProblemBody | undefined {
  const problem = asProblem(err);
  return problem && problemBody(problem.status, problem.code, problem.detail, requestId, problem.options.errors);
}

/** OpenAPI description of the problem document, shared by every route's error responses. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    error: Type.Optional(Type.String()),
    error_description: Type.Optional(Type.String()),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);

/**
 * A route schema's error responses: each status given answers with the problem document. One
 * call per route (or per group of routes that answer alike), spread into `response`.
 */
export function problemResponses<const S extends number>(...statuses: S[]): Record<S, typeof ProblemSchema> {
  return Object.fromEntries(statuses.map((status) => [status, ProblemSchema])) as Record<S, typeof ProblemSchema>;
}
