// Policy versions over HTTP (docs/api.md, "Policies"): list, show, upload, fit, backtest, activate, shadow and
// the report (JSON, or a self-contained HTML page of plots).
import type { FastifyRequest } from 'fastify';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { decodeTimeKey, encodeTimeKey, nextCursor } from '../lib/pagination.ts';
import { Type, type Static } from 'typebox';
import { type Policy } from '../model/policy.ts';
import { validatePolicy } from '../model/policy-document.ts';
import type { Store } from '../store/db.ts';
import type { RevocationFeed } from '../auth/revocation.ts';
import { ApiError, ProblemSchema, type FieldError } from '../http/problem.ts';
import type { Environment } from '../lib/principal.ts';
import { InsufficientLabelsError } from './fit.ts';
import { JobConflictError, jobStatus, type JobStatus } from './jobs.ts';
import { JobTurnError, type Claimant } from './job-turns.ts';
import {
  ActivateBody,
  checkTarget,
  ConfirmProblem,
  EmptyBody,
  FitBody,
  JobConflictProblem,
  JobParams,
  JobSchema,
  ListQuery,
  Params,
  PolicyDetail,
  PolicyRecord,
  problems,
  WindowBody,
} from './schemas.ts';
import { activationMove } from './activation.ts';
import {
  activatePolicy,
  activeRow,
  clearShadow,
  getPolicy,
  insertPolicy,
  listPolicies,
  parseDocument,
  PolicyConflictError,
  PolicyNotFoundError,
  POLICY_FEED_KIND,
  shadowPolicy,
  summary,
  type PolicyRow,
} from './repository.ts';
import { backtestFromStore, fitFromStore } from './service.ts';

export function policyRecord(row: PolicyRow): Static<typeof PolicyRecord> {
  return {
    version: row.version,
    status: row.status as Static<typeof PolicyRecord>['status'],
    source: row.source as Static<typeof PolicyRecord>['source'],
    parent_version: row.parent_version,
    created_at: new Date(Number(row.created_at)).toISOString(),
    created_by: row.created_by,
    summary: summary(row),
  };
}

export function policyDetail(row: PolicyRow): Static<typeof PolicyDetail> {
  return {
    ...policyRecord(row),
    document: parseDocument(row),
    report: row.report ? (JSON.parse(row.report) as unknown) : null,
  };
}

/** No body, or an empty one, is `{}` (docs/api.md, "Policies": "no body, or {}"). */
async function emptyIsObject(request: FastifyRequest): Promise<void> {
  request.body ??= {};
}

/** validatePolicy's one-line message, split into the fields it names. */
function policyFieldErrors(message: string): FieldError[] {
  const body = message.replace(/^invalid [^:]*: /, '').replace(/ \(and \d+ more\)$/, '');
  return body.split(/; (?=\/)/).map((part) => {
    const m = /^(\/[^:]*): (.*)$/.exec(part);
    const field = m ? m[1]!.replace(/^\//, '').replace(/\//g, '.') || '(body)' : '(body)';
    return { field, message: m ? m[2]! : part };
  });
}

function parseTime(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t))
    throw new ApiError(400, 'validation_failed', `${field} must be an RFC 3339 time.`, {
      errors: [{ field, message: 'must be an RFC 3339 time' }],
    });
  return t;
}

async function requireRow(store: Store, environment: Environment, version: string): Promise<PolicyRow> {
  const row = await getPolicy(store.db, environment, version);
  if (!row) throw new ApiError(404, 'not_found', 'No such policy version.');
  return row;
}

function jobView(job: JobStatus): Static<typeof JobSchema> {
  return {
    id: job.id,
    kind: job.kind as Static<typeof JobSchema>['kind'],
    started_at: new Date(job.startedAt).toISOString(),
    updated_at: new Date(job.updatedAt).toISOString(),
    phase: job.phase,
    decisions_read: job.decisionsRead,
    labelled: job.labelled,
    total: job.total,
    fraction: job.total === null ? null : job.total === 0 ? 1 : Math.min(1, job.decisionsRead / job.total),
  };
}

function mapErrors(err: unknown): never {
  if (err instanceof PolicyNotFoundError) throw new ApiError(404, 'not_found', 'No such policy version.');
  if (err instanceof PolicyConflictError) throw new ApiError(409, 'conflict', err.message);
  // One fit or backtest per environment at a time (docs/decisions.md): the problem names the running job.
  if (err instanceof JobConflictError)
    throw new ApiError(409, 'conflict', err.message, { extensions: { job: err.running } });
  // The free slot is another waiting client's turn (job-turns.ts): no job to name, a time to retry.
  if (err instanceof JobTurnError)
    throw new ApiError(409, 'conflict', err.message, { headers: { 'retry-after': String(err.retryAfterSeconds) } });
  throw err;
}

/** Who asks for the job slot, for its fair share (job-turns.ts): one turn per client, admins first. */
const claimantOf = (request: FastifyRequest): Claimant => ({
  clientId: request.principal.clientId,
  admin: request.principal.role === 'admin',
});

export function policyRoutes({ store, feed }: { store: Store; feed: RevocationFeed }): RouteDefinition[] {
  const db = store.db;
  const announce = (environment: Environment, version: string) =>
    feed.announce(POLICY_FEED_KIND, `${environment}:${version}`).catch(() => {});
  const tags = ['policies'];

  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/policies',
      config: { scope: 'policy:read' },
      schema: {
        tags,
        summary: 'Policy versions, newest first',
        querystring: ListQuery,
        response: {
          200: Type.Object({ data: Type.Array(PolicyRecord), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const { limit = 50, cursor } = request.query;
        const position = cursor ? decodeTimeKey(cursor) : undefined;
        const page = await listPolicies(
          db,
          request.principal.environment,
          limit,
          position && { at: position.at, version: position.key },
        );
        return {
          data: page.rows.map(policyRecord),
          next_cursor: nextCursor(page, (last) => encodeTimeKey({ at: Number(last.created_at), key: last.version })),
        };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/policy-jobs',
      config: { scope: 'policy:read' },
      schema: {
        tags,
        summary: "The fit or backtest running in the caller's environment, with its progress (none or one)",
        response: { 200: Type.Object({ data: Type.Array(JobSchema) }), ...problems },
      },
      handler: async (request) => {
        const job = await jobStatus(db, request.principal.environment);
        return { data: job ? [jobView(job)] : [] };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/policy-jobs/:job_id',
      config: { scope: 'policy:read' },
      schema: {
        tags,
        summary: 'A running fit or backtest and its progress; 404 once it has finished',
        params: JobParams,
        response: { 200: JobSchema, ...problems },
      },
      handler: async (request) => {
        const job = await jobStatus(db, request.principal.environment);
        if (!job || job.id !== request.params.job_id)
          throw new ApiError(
            404,
            'not_found',
            'No such running job: it is unknown, of another environment, or finished.',
          );
        return jobView(job);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/policies/:version',
      config: { scope: 'policy:read' },
      schema: {
        tags,
        summary: 'One policy version with its document and report',
        params: Params,
        response: { 200: PolicyDetail, ...problems },
      },
      handler: async (request) =>
        policyDetail(await requireRow(store, request.principal.environment, request.params.version)),
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/policies',
      config: { scope: 'policy:write', role: 'operator' },
      schema: {
        tags,
        summary: 'Upload a policy document as a candidate',
        body: Type.Object({}, { additionalProperties: true }),
        response: { 201: PolicyDetail, 409: ProblemSchema, ...problems },
      },
      handler: async (request, reply) => {
        let policy: Policy;
        try {
          policy = validatePolicy(request.body, 'policy');
        } catch (err) {
          const errors = policyFieldErrors((err as Error).message);
          throw new ApiError(400, 'validation_failed', 'The policy document is invalid.', { errors });
        }
        const row = await insertPolicy(db, request.principal.environment, {
          policy,
          source: 'upload',
          createdBy: request.principal.id,
        }).catch(mapErrors);
        reply.code(201).header('location', `/api/v1/policies/${encodeURIComponent(row.version)}`);
        return policyDetail(row);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/policies/fit',
      preValidation: emptyIsObject,
      config: { scope: 'policy:write', role: 'operator' },
      schema: {
        tags,
        summary: 'Fit a candidate policy to the labelled score decisions',
        body: FitBody,
        response: { 201: PolicyDetail, 409: JobConflictProblem, 422: ProblemSchema, ...problems },
      },
      handler: async (request, reply) => {
        const body = request.body ?? {};
        const { environment } = request.principal;
        const target = checkTarget(body.target);
        const baseRow =
          body.base_version !== undefined
            ? await requireRow(store, environment, body.base_version)
            : await activeRow(db, environment);
        if (!baseRow) throw new ApiError(409, 'conflict', 'There is no active policy to fit from.');
        try {
          const { policy, report } = await fitFromStore(
            db,
            {
              environment,
              base: parseDocument(baseRow),
              since: parseTime(body.since, 'since'),
              until: parseTime(body.until, 'until'),
              assumeLegitAfterDays: body.assume_legit_after_days,
              holdoutFraction: body.holdout_fraction,
              target,
            },
            { store, claimant: claimantOf(request) },
          );
          const row = await insertPolicy(db, environment, {
            policy,
            source: 'fit',
            parentVersion: baseRow.version,
            createdBy: request.principal.id,
            report,
          });
          reply.code(201).header('location', `/api/v1/policies/${encodeURIComponent(row.version)}`);
          return policyDetail(row);
        } catch (err) {
          if (err instanceof InsufficientLabelsError) throw new ApiError(422, 'insufficient_labels', err.message);
          return mapErrors(err);
        }
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/policies/:version/backtest',
      preValidation: emptyIsObject,
      // A backtest reads every decision of the environment and holds its one job slot: an
      // operator's act, like a fit, not a service key's (docs/api.md, "Policies").
      config: { scope: 'policy:read', role: 'operator' },
      schema: {
        tags,
        summary: 'Replay a policy on the stored score decisions',
        params: Params,
        body: WindowBody,
        response: { 200: Type.Unknown(), 409: JobConflictProblem, ...problems },
      },
      handler: async (request) => {
        const { environment } = request.principal;
        const row = await requireRow(store, environment, request.params.version);
        const body = request.body ?? {};
        const window = { since: parseTime(body.since, 'since'), until: parseTime(body.until, 'until') };
        return backtestFromStore(
          db,
          environment,
          parseDocument(row),
          window,
          async (v) => {
            const r = await getPolicy(db, environment, v);
            return r ? parseDocument(r) : undefined;
          },
          { store, claimant: claimantOf(request) },
        ).catch(mapErrors);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/policies/:version/activate',
      preValidation: emptyIsObject,
      config: { scope: 'policy:write', role: 'operator' },
      schema: {
        tags,
        summary:
          'Make this version the active policy on every instance; a large move of the operating point needs {"confirm": true}',
        params: Params,
        body: ActivateBody,
        response: { 200: PolicyDetail, 409: ConfirmProblem, ...problems },
      },
      handler: async (request) => {
        const { environment } = request.principal;
        const next = await requireRow(store, environment, request.params.version);
        const current = await activeRow(db, environment);
        if (current && current.version !== next.version && request.body?.confirm !== true) {
          const move = await activationMove(db, environment, parseDocument(current), parseDocument(next));
          if (move.exceeds) {
            const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
            throw new ApiError(
              409,
              'conflict',
              `Activating ${next.version} moves the share of recent decisions flagged high or above from ${pct(move.before.share_flagged_high)} to ${pct(move.after.share_flagged_high)} (${move.decisions} decisions); send {"confirm": true} to activate it.`,
              { extensions: { operating_point: move } },
            );
          }
        }
        const row = await activatePolicy(store, environment, request.params.version).catch(mapErrors);
        await announce(request.principal.environment, row.version);
        return policyDetail(row);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/policies/:version/shadow',
      preValidation: emptyIsObject,
      config: { scope: 'policy:write', role: 'operator' },
      schema: {
        tags,
        summary: 'Score every request with this policy too, stored and never returned',
        params: Params,
        body: EmptyBody,
        response: { 200: PolicyDetail, 409: ProblemSchema, ...problems },
      },
      handler: async (request) => {
        const row = await shadowPolicy(store, request.principal.environment, request.params.version).catch(mapErrors);
        await announce(request.principal.environment, row.version);
        return policyDetail(row);
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/api/v1/policies/shadow',
      config: { scope: 'policy:write', role: 'operator' },
      schema: {
        tags,
        summary: 'End shadow mode',
        response: {
          200: Type.Object({ shadow: Type.Null(), previous: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const previous = await clearShadow(store, request.principal.environment);
        if (previous) await announce(request.principal.environment, previous);
        return { shadow: null, previous: previous ?? null };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/policies/:version/report',
      config: { scope: 'policy:read' },
      schema: {
        tags,
        summary: "A fitted policy's report: JSON, or with Accept: text/html a page of plots",
        params: Params,
        response: { 200: Type.Unknown(), ...problems },
      },
      handler: async (request, reply) => {
        const row = await requireRow(store, request.principal.environment, request.params.version);
        if (!row.report) throw new ApiError(404, 'not_found', 'This policy has no report: only fitted policies do.');
        const report = JSON.parse(row.report) as unknown;
        if (prefersHtml(request.headers.accept)) {
          // Loaded on first use: vega is large, and most processes never draw a report.
          const { reportHtml } = await import('./report-html.ts');
          const html = await reportHtml(policyRecord(row), report as never);
          return reply
            .type('text/html; charset=utf-8')
            .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
            .send(html);
        }
        return { version: row.version, report };
      },
    }),
  ];
}

/** text/html listed before (or without) application/json. */
function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((t) => t.split(';')[0]!.trim().toLowerCase());
  const html = types.indexOf('text/html');
  const json = types.findIndex((t) => t === 'application/json' || t === 'application/problem+json');
  return html !== -1 && (json === -1 || html < json);
}
