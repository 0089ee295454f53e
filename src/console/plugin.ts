// Serves the operator console (docs/api.md, "Console"): the static build of console/ under /console, with a
// strict Content-Security-Policy. Any /console/* path that is not a built file is the single-page
// app's own route, so it gets index.html and the app's router takes over.
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import { sendProblem } from '../http/errors.ts';

/** Same origin only and nothing inline; no upgrade-insecure-requests, so plain HTTP on any host name works. */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/** console/dist at the repository root, whether this file runs from src/ (tsx) or dist/ (built). */
export const CONSOLE_DIST = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'console', 'dist');

export interface ConsoleOptions {
  /** the built console; defaults to console/dist */
  root?: string;
}

export default async function consolePlugin(app: FastifyInstance, { root = CONSOLE_DIST }: ConsoleOptions = {}) {
  // serve: false: only reply.sendFile, so the routes below decide what is a file and what is the app.
  await app.register(fastifyStatic, { serve: false });

  const serve = async (request: FastifyRequest, reply: FastifyReply, path: string) => {
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    if (!existsSync(join(root, 'index.html'))) {
      return sendProblem(request, reply, 503, 'unavailable', 'The console has not been built: run `npm run build`.');
    }
    const file = builtFile(root, path);
    if (file) {
      // Vite names assets by content hash: they never change under the same name.
      if (file.startsWith('assets/')) return reply.sendFile(file, root, { maxAge: '365d', immutable: true });
      return reply.header('cache-control', 'no-cache').sendFile(file, root, { cacheControl: false });
    }
    reply.header('cache-control', 'no-cache');
    return reply.sendFile('index.html', root, { cacheControl: false });
  };

  app.get('/console', { schema: { hide: true } }, (request, reply) => serve(request, reply, ''));
  app.get('/console/*', { schema: { hide: true } }, (request, reply) =>
    serve(request, reply, (request.params as { '*': string })['*']),
  );
}

/** The path relative to root when it names a regular file inside root, else undefined. */
function builtFile(root: string, path: string): string | undefined {
  if (path === '' || path.includes('\0')) return undefined;
  const full = resolve(root, path);
  if (!full.startsWith(root + sep)) return undefined;
  try {
    if (!statSync(full).isFile()) return undefined;
  } catch {
    return undefined;
  }
  return full
    .slice(root.length + 1)
    .split(sep)
    .join('/');
}
