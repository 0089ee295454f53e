// Two validators: bodies are checked strictly (no coercion, no silently dropped fields, every
// error listed); query strings and path params may coerce "10" to 10. Ajv's messages are reworded
// for people (a pattern is never shown as a regex), and an identifier that looks like a raw
// phone number, e-mail, IBAN or card number wins over every other error (docs/api.md, "Trust scoring").
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './problem.ts';
import { toFieldErrors } from './field-errors.ts';
import {
  rawIdentifierMessage,
  rawIdentifierRejected,
  schemaMismatch,
  type FieldError,
  type Invalid,
} from '../lib/domain-errors.ts';
import { NO_RAW_IDENTIFIER, PATTERN_MESSAGE, StringEnum } from '../lib/schema-keywords.ts';
import { rawIdentifierIn } from '../lib/identifiers.ts';

// The schema vocabulary and the raw-identifier words live in lib/ (the model uses them too); the
// features import them from here, with the validator that reads them.
export { PATTERN_MESSAGE, StringEnum, rawIdentifierMessage };

function make(options: Options): Ajv {
  // verbose: the failing schema is needed to word a pattern error; the data it also attaches is
  // dropped before the errors leave this module.
  const ajv = new Ajv({ removeAdditional: false, useDefaults: true, strict: false, verbose: true, ...options });
  addFormats.default(ajv);
  ajv.addKeyword({
    keyword: NO_RAW_IDENTIFIER,
    type: 'string',
    schemaType: 'boolean',
    errors: true,
    validate: function noRaw(enabled: boolean, data: string, _schema?: unknown, where?: { parentData?: unknown }) {
      // Remembered for the object holding the value, so the handler's own check of it is a lookup.
      const kind = enabled ? rawIdentifierIn(data, where?.parentData) : null;
      if (kind === null) return true;
      (noRaw as { errors?: Partial<ErrorObject>[] }).errors = [
        { keyword: NO_RAW_IDENTIFIER, message: rawIdentifierMessage(kind), params: { kind } },
      ];
      return false;
    },
  });
  return ajv;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'must be a string',
  number: 'must be a number',
  integer: 'must be an integer',
  boolean: 'must be true or false',
  object: 'must be an object',
  array: 'must be an array',
  null: 'must be null',
};
const FORMAT_WORDS: Record<string, string> = {
  'date-time': 'must be an RFC 3339 date-time such as 2024-05-01T12:00:00Z',
  date: 'must be a date such as 2024-05-01',
  uri: 'must be an absolute URI',
  email: 'must be an e-mail address',
  uuid: 'must be a UUID',
};
const plural = (n: unknown, word: string) => `${String(n)} ${word}${n === 1 ? '' : 's'}`;

/** Ajv's message in words a client developer reads without knowing JSON Schema. */
function reword(e: ErrorObject): string | undefined {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'pattern': {
      const words = (e.parentSchema as Record<string, unknown> | undefined)?.[PATTERN_MESSAGE];
      return typeof words === 'string' ? words : 'is not in the expected format';
    }
    case 'format':
      return FORMAT_WORDS[String(p.format)] ?? `must be a valid ${String(p.format)}`;
    case 'type':
      return TYPE_WORDS[String(p.type)] ?? e.message;
    case 'maxLength':
      return `must be at most ${plural(p.limit, 'character')} long`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${plural(p.limit, 'character')} long`;
    case 'maxItems':
      return `must have at most ${plural(p.limit, 'item')}`;
    case 'minItems':
      return p.limit === 1 ? 'must not be empty' : `must have at least ${plural(p.limit, 'item')}`;
    case 'uniqueItems':
      return 'must not list the same item twice';
    case 'maxProperties':
      return `must have at most ${plural(p.limit, 'member')}`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`;
    default:
      return e.message;
  }
}

/** A JSON pointer as the dotted path the problem documents use (`/events/0/entity_id` → `events.0.entity_id`). */
const dotted = (pointer: string) =>
  pointer
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');

type Validator = ((data: unknown, ctx?: unknown) => boolean | { error: Error }) & {
  errors?: ErrorObject[] | null;
  schemaEnv?: unknown;
};

function wrap(validate: ValidateFunction): Validator {
  const wrapped: Validator = (data, ctx) => {
    if ((validate as (d: unknown, c?: unknown) => boolean)(data, ctx)) return true;
    const errors = validate.errors ?? [];
    const raw = errors.filter((e) => e.keyword === NO_RAW_IDENTIFIER);
    if (raw.length > 0) {
      const fieldErrors = raw.slice(0, 50).map((e) => ({
        field: dotted(e.instancePath) || '(body)',
        message: e.message ?? 'looks like a raw identifier',
      }));
      return { error: rawIdentifierRejected(fieldErrors) };
    }
    // Only what errors.ts reads is kept: never the data (which may be long or sensitive).
    wrapped.errors = errors.map((e) => ({
      instancePath: e.instancePath,
      schemaPath: e.schemaPath,
      keyword: e.keyword,
      params: e.params,
      message: reword(e),
    }));
    return false;
  };
  // Fastify passes the parent object to an Ajv function (it has schemaEnv) so root defaults apply.
  wrapped.schemaEnv = (validate as { schemaEnv?: unknown }).schemaEnv;
  return wrapped;
}

/**
 * A body check outside HTTP (the CLI's event import) that words its errors exactly as the API does:
 * raw identifiers first (the value never shown), then the schema errors as problem `errors`.
 */
export function compileBodyCheck(schema: object): (data: unknown) => FieldError[] {
  const validate = wrap(make({ coerceTypes: false, allErrors: true }).compile(schema));
  return (data) => {
    const result = validate(data);
    if (result === true) return [];
    if (typeof result === 'object') return (result.error as Invalid).options.errors ?? [];
    return toFieldErrors(undefined, validate.errors ?? []);
  };
}

/**
 * A body check outside the route schema (each item of a score batch): the error the route
 * would have answered with (raw identifiers first, then validation_failed), or undefined.
 */
export function compileBodyValidator(schema: object): (data: unknown) => Invalid | undefined {
  const validate = wrap(make({ coerceTypes: false, allErrors: true }).compile(schema));
  return (data) => {
    const result = validate(data);
    if (result === true) return undefined;
    if (typeof result === 'object') return result.error as Invalid;
    return schemaMismatch(toFieldErrors('body', validate.errors ?? []), 'body');
  };
}

/**
 * The two Ajv instances the routes' checks are compiled with, one a process: Ajv keeps what it
 * compiled by schema object, and every app of a process declares the same route schemas, so an
 * app built after the first (a second store, a test's fresh app) reuses the compiled checks
 * instead of compiling some 400 again. A compiled check holds no state between calls (wrap).
 */
let routeCompilers: { strict: Ajv; coercing: Ajv } | undefined;

export function installValidators(app: FastifyInstance): void {
  routeCompilers ??= {
    strict: make({ coerceTypes: false, allErrors: true }),
    coercing: make({ coerceTypes: true, allErrors: false }),
  };
  const { strict, coercing } = routeCompilers;
  app.setValidatorCompiler(
    ({ schema, httpPart }) => wrap((httpPart === 'body' ? strict : coercing).compile(schema as object)) as never,
  );
}

/** A time in a request body or query (RFC 3339) as epoch ms; 400 naming `field` when it is not one. */
export function parseTime(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t))
    throw new ApiError('validation_failed', `${field} must be an RFC 3339 time.`, {
      errors: [{ field, message: 'must be an RFC 3339 time' }],
    });
  return t;
}
