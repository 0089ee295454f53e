// application/x-www-form-urlencoded bodies, for the routes that declare `config.oauth` (the token
// endpoint: RFC 6749 clients send forms). Every other route answers such a body 415, as it answers
// any type but JSON. Repeated fields become arrays, so the schema refuses them rather than one
// value silently winning.
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
        done(new ApiError(415, 'unsupported_media_type', 'Send the body as application/json.'), undefined);
        return;
      }
      done(null, parseForm(body as string));
    },
  );
}
