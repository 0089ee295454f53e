// GET /problems/<code>: what a problem document's `type` points at (RFC 9457 §3.1.1 suggests a
// human-readable page). HTML unless the caller prefers JSON.
import type { FastifyRequest } from 'fastify';
import { defineRoute, type RouteDefinition } from './route.ts';
import { Type } from 'typebox';
import { ApiError, PROBLEMS, type ProblemCode } from './problem.ts';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The q of the best Accept entry matching `type` (exact, type/*, or * / *), 0 when none does. */
function quality(accept: string, type: string): number {
  let best = 0;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const [major] = type.split('/');
    if (range !== type && range !== `${major}/*` && range !== '*/*') continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    best = Math.max(best, q === undefined ? 1 : Number(q) || 0);
  }
  return best;
}

function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (!accept) return false;
  const json = Math.max(quality(accept, 'application/json'), quality(accept, 'application/problem+json'));
  return json > quality(accept, 'text/html');
}

function page(code: ProblemCode): string {
  const { status, title, meaning } = PROBLEMS[code];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} (${status}) · Vouch</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1f2328}code{background:#f3f4f6;padding:0 .25rem}</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
<p>HTTP status <strong>${status}</strong>, problem code <code>${escapeHtml(code)}</code>.</p>
<p>${escapeHtml(meaning)}</p>
<p>Every error is an RFC 9457 <code>application/problem+json</code> document whose <code>type</code> is this page;
its <code>detail</code> says what went wrong with that request and <code>request_id</code> identifies it in the service's logs.
See the <a href="/docs">API reference</a>.</p>
</body></html>
`;
}

export function problemRoutes(): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/problems/:code',
      schema: {
        tags: ['ops'],
        summary: 'Describe a problem type',
        description:
          "The page a problem document's `type` names: title, status and meaning of the code. HTML by default; JSON when the Accept header prefers application/json.",
        params: Type.Object({ code: Type.String({ maxLength: 64 }) }),
      },
      handler: async (request, reply) => {
        const code = request.params.code;
        if (!Object.hasOwn(PROBLEMS, code)) throw new ApiError('not_found', 'No such problem type.');
        const info = PROBLEMS[code as ProblemCode];
        reply.header('cache-control', 'public, max-age=86400').header('vary', 'Accept');
        if (wantsJson(request))
          return reply.type('application/json').send({ type: `/problems/${code}`, code, ...info });
        return reply
          .type('text/html; charset=utf-8')
          .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
          .send(page(code as ProblemCode));
      },
    }),
  ];
}
