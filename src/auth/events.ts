// What the auth layer tells operators: one info line per security-relevant change or failure,
// and Prometheus counters. Lines name ids (client, key, principal), never a credential, a raw
// key or a token; a failed login names its client only when that client exists, so a secret
// pasted into the client_id field is not written to the log.
import { hostname } from 'node:os';
import type { Metrics } from '../http/observability.ts';
import type { FastifyRequest } from 'fastify';

/** Every reason a request fails authentication; a fixed set, so the metric stays small. */
type AuthFailureReason =
  | 'missing_credentials'
  | 'unsupported_scheme'
  | 'malformed_token'
  | 'invalid_token'
  | 'invalid_api_key'
  | 'conflicting_credentials'
  | 'insufficient_scope'
  | 'unknown_client'
  | 'wrong_secret'
  | 'deactivated_client'
  | 'token_lockout'
  | 'invalid_session'
  | 'wrong_password'
  | 'user_lockout';

/** The little of a pino logger the store-level functions need (the CLI may pass none). */
export interface AuthLog {
  info(details: Record<string, unknown>, message: string): void;
}

export const silentLog: AuthLog = { info: () => {} };

const QUIET = new Set(['warn', 'error', 'fatal', 'silent']);

/**
 * For work done before (or without) a Fastify app: the start-up of a serving process or cluster
 * primary (bootstrap admin, sealing signing keys) and CLI commands. Lines have pino's shape
 * (level 30 = info) so they read like the app's own; `out` is stderr for commands whose stdout
 * is their result.
 */
export function lineLog(level: string, out: NodeJS.WritableStream = process.stdout): AuthLog {
  if (QUIET.has(level)) return silentLog;
  const host = hostname();
  return {
    info(details, message) {
      out.write(
        `${JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, hostname: host, ...details, msg: message })}\n`,
      );
    },
  };
}

export interface AuthEvents {
  failure(
    request: FastifyRequest,
    reason: AuthFailureReason,
    ids?: { client_id?: string; principal_id?: string },
  ): void;
  tokenIssued(request: FastifyRequest, clientId: string, scopes: readonly string[]): void;
}

export function authEvents(metrics: Metrics): AuthEvents {
  const failures = metrics.counter('vouch_auth_failures_total', 'Failed authentications and authorisations by reason', [
    'reason',
  ]);
  const issued = metrics.counter('vouch_tokens_issued_total', 'Access tokens issued by the token endpoint');
  return {
    failure(request, reason, ids = {}) {
      failures.inc({ reason });
      request.log.info(
        { event: 'auth_failure', reason, route: request.routeOptions.url, ...ids },
        'authentication failed',
      );
    },
    tokenIssued(request, clientId, scopes) {
      issued.inc();
      request.log.debug(
        { event: 'token_issued', client_id: clientId, scopes: scopes.join(' ') },
        'access token issued',
      );
    },
  };
}
