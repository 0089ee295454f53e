// The one validation of a score request (docs/api.md, "Trust scoring"), for POST /trust/score and
// for each item of /trust/score/batch: the schema (shape, formats, raw identifiers first), then
// what the schema cannot say (the policy's crypto assets, context depth, dates, countries, hashed
// ids). It runs in the handler, once, with the policy the handler read: the route's schema only
// documents the body (its Fastify validation is off, see `documentedOnly`), so a body is never
// checked twice or against two readings of the policy.
import type { FastifySchemaCompiler } from 'fastify';
import { compileBodyValidator } from '../http/validation.ts';
import { ScoreBody, checkScoreBody } from './schemas.ts';
import { type CheckOptions } from '../model/identifier-schemas.ts';

/**
 * Throws the problem the request deserves (400 raw_identifier_rejected or validation_failed), else returns the body
 * typed.
 */
export type ScoreValidator = (body: unknown, cryptoAssets: readonly string[]) => ScoreBody;

export function scoreValidator(options: CheckOptions): ScoreValidator {
  const schema = compileBodyValidator(ScoreBody);
  return (body, cryptoAssets) => {
    const invalid = schema(body ?? null);
    if (invalid) throw invalid;
    checkScoreBody(body as ScoreBody, cryptoAssets, options);
    return body as ScoreBody;
  };
}

/**
 * The validator compiler of a route whose body the handler validates with a ScoreValidator: the
 * body's schema is documentation only. A route with other parts to validate cannot use it.
 */
export const documentedOnly: FastifySchemaCompiler<unknown> = ({ httpPart, url }) => {
  if (httpPart !== 'body') throw new Error(`${url}: only a body may be left to the handler's validation`);
  return () => true;
};
