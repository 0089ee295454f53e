// application/x-www-form-urlencoded bodies, for the routes that declare `config.oauth` (the token
// endpoint: RFC 6749 clients send forms). Every other route answers such a body 415, as it answers
// any type but JSON. Repeated fields become arrays, so the schema refuses them rather than one
// value silently winning. A compressed body is refused too (415).
import type { FastifyInstance } from 'fastify';
import { ApiError } from './problem.ts';

const FORM_LIMIT = 64 * 1024;

export function parseForm(body: string): Record<string, string | string[]> {
  const fields = new Map<string, string | string[]>();
  for (const [name, value] of new URLSearchParams(body)) {
    const seen = fields.get(name);
    fields.set(name, seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]);
  }
  // fromEntries defines own properties: a field named __proto__ stays a field.
  return Object.fromEntries(fields);
}

export function acceptFormsOnOauthRoutes(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT },
    (request, body, done) => {
      if (!request.routeOptions.config.oauth) {
        done(new ApiError('unsupported_media_type', 'Send the body as application/json.'), undefined);
        return;
      }
      done(null, parseForm(body as string));
    },
  );
}

/**
 * A compressed body would reach the JSON parser as binary: refuse it plainly. A callback hook:
 * every request runs it, and an async hook costs a promise each.
 */
export function refuseEncodedBodies(app: FastifyInstance): void {
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      done(new ApiError('unsupported_media_type', 'Content-Encoding is not supported; send the body uncompressed.'));
      return;
    }
    done(null, payload);
  });
}
