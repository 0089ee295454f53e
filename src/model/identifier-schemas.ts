// The identifier vocabulary every feature's schemas share: an id the caller hashed (never a raw
// phone, e-mail, IBAN or card), timestamps and currencies, and the checks JSON Schema cannot
// express (raw identifiers in free text, hashed-id mode), thrown as domain errors (lib/domain-errors.ts).
import { Type } from 'typebox';
import { rawIdentifierMessage, rawIdentifierRejected, schemaMismatch, type FieldError } from '../lib/domain-errors.ts';
import { NO_RAW_IDENTIFIER, PATTERN_MESSAGE } from '../lib/schema-keywords.ts';
import { isDigest, rawIdentifierIn } from '../lib/identifiers.ts';

/** Options of the checks beyond the schema. */
export interface CheckOptions {
  /** VOUCH_REQUIRE_HASHED_IDS: entity ids, counterparty ids and linked hashes must be digests */
  requireHashedIds?: boolean;
}

/**
 * An identifier or reference: no control characters (Unicode Cc: never part of a hash, and
 * PostgreSQL cannot store NUL) and no unpaired UTF-16 surrogate (stored as U+FFFD, it would merge
 * distinct ids). Ajv compiles patterns with the `u` flag, so a surrogate range only matches a
 * lone surrogate.
 */
export function Identifier(maxLength: number, options: object = {}) {
  return Type.String({
    minLength: 1,
    maxLength,
    pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff]+$',
    [PATTERN_MESSAGE]: 'must not contain control characters or unpaired UTF-16 surrogates',
    ...options,
  });
}

/** An identifier the caller must hash: a raw phone, e-mail, IBAN or card is refused at the schema. */
export const HashedIdentifier = (options: object) => Identifier(256, { [NO_RAW_IDENTIFIER]: true, ...options });

export const EntityId = HashedIdentifier({ description: "the caller's hash of the identifier" });
export const Rfc3339 = Type.String({ format: 'date-time', maxLength: 40 });
export const Currency = Type.String({
  minLength: 2,
  maxLength: 10,
  pattern: '^[A-Z0-9]+$',
  [PATTERN_MESSAGE]:
    'must be upper-case letters and digits: an ISO 4217 code such as USD, or a crypto asset such as BTC',
  description: 'upper-case ISO 4217 code or a crypto asset of the policy',
});

/**
 * Field errors for raw identifiers; the value itself is never echoed or logged. A field may name
 * the object holding its value (see rawIdentifierIn): a value the schema keyword already found
 * clean in that very object is not scanned again.
 */
export function rawIdentifierErrors(fields: Array<[string, string | undefined, object?]>): FieldError[] {
  const errors: FieldError[] = [];
  for (const [field, value, holder] of fields) {
    const kind = value === undefined ? null : rawIdentifierIn(value, holder);
    if (kind) errors.push({ field, message: rawIdentifierMessage(kind) });
  }
  return errors;
}

const NOT_A_DIGEST = 'must be a hex or base64url digest of at least 32 characters';

/** VOUCH_REQUIRE_HASHED_IDS: field errors for identifiers that are not digests. */
export function hashedIdErrors(
  fields: Array<[string, string | undefined, object?]>,
  options: CheckOptions,
): FieldError[] {
  if (!options.requireHashedIds) return [];
  return fields
    .filter(([, value]) => value !== undefined && !isDigest(value))
    .map(([field]) => ({ field, message: NOT_A_DIGEST }));
}

export function throwRawIdentifiers(errors: FieldError[]): void {
  if (errors.length > 0) throw rawIdentifierRejected(errors.slice(0, 50));
}

export function throwValidation(errors: FieldError[]): void {
  if (errors.length > 0) {
    throw schemaMismatch(errors, 'body');
  }
}

/**
 * Checks of an entity id in a path. A path parameter that breaks a rule is invalid_request
 * (docs/api.md, "Errors"), as for any other path parameter.
 */
export function checkEntityParam(id: string, options: CheckOptions = {}): void {
  throwRawIdentifiers(rawIdentifierErrors([['entity_id', id]]));
  const errors = hashedIdErrors([['entity_id', id]], options);
  if (errors.length > 0) throw schemaMismatch(errors, 'path parameter');
}
