// Two validators: bodies are checked strictly (no coercion, no silently dropped fields, every
// error listed); query strings and path params may coerce "10" to 10.
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

function make(options: Options): Ajv {
  const ajv = new Ajv({ removeAdditional: false, useDefaults: true, strict: false, ...options });
  addFormats.default(ajv);
  return ajv;
}

export function installValidators(app: FastifyInstance): void {
  const strict = make({ coerceTypes: false, allErrors: true });
  const coercing = make({ coerceTypes: true, allErrors: false });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema as object) as never,
  );
}

/**
 * A string that must be one of a fixed list: `{type: 'string', enum: [...]}` rather than a union
 * of literals, so OpenAPI shows an enum and a failure reads "must be one of: a, b, c".
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: object = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
