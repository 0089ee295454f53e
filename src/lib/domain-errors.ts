// What a feature throws when a request cannot be done: not found, conflict, invalid (with field
// errors), limited (with a retry time), forbidden, unauthenticated. Each names its problem code;
// http/problem.ts (`asProblem`) maps them, once, to RFC 9457 problems, its catalogue giving each
// code its status and title (docs/api.md, "Errors"). Nothing here knows HTTP.
import type { RawIdentifierKind } from './identifiers.ts';

/** One offending field, as a problem's `errors` lists it. */
export interface FieldError {
  field: string;
  message: string;
}

/** The problem codes a domain error carries; every one is in the catalogue (http/problem.ts). */
export type DomainCode =
  | 'not_found'
  | 'conflict'
  | 'validation_failed'
  | 'invalid_request'
  | 'raw_identifier_rejected'
  | 'rate_limited'
  | 'forbidden'
  | 'insufficient_scope'
  | 'unauthenticated';

export interface DomainErrorOptions {
  /** the offending fields */
  errors?: FieldError[];
  /** when to ask again (seconds): the Retry-After header */
  retryAfterSeconds?: number | string;
  /** how to authenticate: the WWW-Authenticate header */
  challenge?: string;
  /** RFC 9457 extension members (the route's response schema must declare them to be sent) */
  extensions?: Record<string, unknown>;
  /** the error's message (logs, the command line) when it says more than the detail a caller is sent */
  message?: string;
}

export abstract class DomainError extends Error {
  abstract readonly code: DomainCode;
  constructor(
    readonly detail: string,
    readonly options: DomainErrorOptions = {},
  ) {
    super(options.message ?? detail);
  }
}

/** No such resource, or one the caller may not see (its existence is not revealed). */
export class NotFound extends DomainError {
  readonly code = 'not_found';
}

/** The resource's state forbids the operation. */
export class Conflict extends DomainError {
  readonly code = 'conflict';
}

/** The input is wrong: `validation_failed` for a body, `invalid_request` for the rest of the request. */
export class Invalid extends DomainError {
  constructor(
    detail: string,
    errors?: FieldError[],
    readonly code: 'validation_failed' | 'invalid_request' | 'raw_identifier_rejected' = 'validation_failed',
    message?: string,
  ) {
    super(detail, { ...(errors ? { errors } : {}), ...(message !== undefined ? { message } : {}) });
  }
}

/** Over a rate limit: ask again in `retryAfterSeconds`. */
export class Limited extends DomainError {
  readonly code = 'rate_limited';
  constructor(detail: string, retryAfterSeconds: number | string) {
    super(detail, { retryAfterSeconds });
  }
}

/** The caller is known but may not do this: `insufficient_scope` when a scope or role would allow it. */
export class Forbidden extends DomainError {
  constructor(
    detail: string,
    readonly code: 'forbidden' | 'insufficient_scope' = 'forbidden',
    options: DomainErrorOptions = {},
  ) {
    super(detail, options);
  }
}

/** Credentials missing, unknown or refused. */
export class Unauthenticated extends DomainError {
  readonly code = 'unauthenticated';
}

/** The message for a raw identifier of `kind`; the value itself is never part of it. */
const KIND_WORDS: Record<RawIdentifierKind, string> = {
  iban: 'IBAN',
  card: 'card number',
  email: 'e-mail address',
  phone: 'phone number',
};
export const rawIdentifierMessage = (kind: RawIdentifierKind) =>
  `looks like a raw ${KIND_WORDS[kind]}; send a hash of it instead`;
export const RAW_IDENTIFIER_DETAIL = 'Identifiers must be hashed by the caller before they are sent.';

/** Raw personal data where a hash belongs (docs/api.md, "Raw identifiers"): the fields that hold it. */
export const rawIdentifierRejected = (errors: FieldError[]) =>
  new Invalid(RAW_IDENTIFIER_DETAIL, errors, 'raw_identifier_rejected');

/**
 * The `detail` sentence for a list of field errors: every missing field is named (up to 20, then
 * a count), and the first three other problems, then how many more there are.
 */
export function summarise(errors: FieldError[]): string {
  const missing = errors.filter((e) => e.message === 'is required').map((e) => e.field);
  const others = errors.filter((e) => e.message !== 'is required');
  const parts: string[] = [];
  if (missing.length === 1) parts.push(`missing field ${missing[0]}`);
  else if (missing.length > 1) {
    const named = missing.slice(0, 20).join(', ');
    parts.push(
      `${missing.length} missing fields: ${named}${missing.length > 20 ? ` and ${missing.length - 20} more` : ''}`,
    );
  }
  for (const e of others.slice(0, 3)) parts.push(`${e.field} ${e.message}`);
  if (others.length > 3) parts.push(`and ${others.length - 3} more (see errors)`);
  return parts.join('; ');
}

/**
 * The error for fields that break a schema; `context` is "body" or what else was checked (a path parameter, the
 * query).
 */
export function schemaMismatch(errors: FieldError[], context: string): Invalid {
  const listed = errors.slice(0, 50);
  if (context === 'body') return new Invalid(`The request does not match the schema: ${summarise(errors)}.`, listed);
  return new Invalid(`Invalid ${context}: ${summarise(errors)}.`, listed, 'invalid_request');
}
