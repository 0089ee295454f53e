// RFC 9457 problem details: the one error shape every endpoint answers with.
import { Type } from 'typebox';

export type ProblemCode =
  | 'invalid_request'
  | 'validation_failed'
  | 'raw_identifier_rejected'
  | 'invalid_scope'
  | 'unauthenticated'
  | 'invalid_client'
  | 'insufficient_scope'
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

const TITLES: Record<ProblemCode, string> = {
  invalid_request: 'Invalid request',
  validation_failed: 'Validation failed',
  raw_identifier_rejected: 'Raw identifier rejected',
  invalid_scope: 'Invalid scope',
  unauthenticated: 'Unauthenticated',
  invalid_client: 'Invalid client',
  insufficient_scope: 'Insufficient scope',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  unsupported_media_type: 'Unsupported media type',
  conflict: 'Conflict',
  payload_too_large: 'Payload too large',
  idempotency_key_reused: 'Idempotency key reused',
  request_timeout: 'Request timeout',
  headers_too_large: 'Request header fields too large',
  rate_limited: 'Too many requests',
  insufficient_labels: 'Insufficient labels',
  internal: 'Internal error',
  unavailable: 'Service unavailable',
};

export interface FieldError {
  field: string;
  message: string;
}

export interface ProblemOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** token endpoint only: the RFC 6749 §5.2 `error` member, when the default mapping is not right */
  oauthError?: string;
}

/** An error a handler throws to answer with a problem document instead of a 500. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ProblemCode,
    readonly detail: string,
    readonly options: ProblemOptions = {},
  ) {
    super(detail);
  }
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

export function problemBody(status: number, code: ProblemCode, detail: string, requestId: string, errors?: FieldError[]): ProblemBody {
  const body: ProblemBody = { type: `/problems/${code}`, title: TITLES[code], status, detail, code, request_id: requestId };
  if (errors && errors.length > 0) body.errors = errors;
  return body;
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
