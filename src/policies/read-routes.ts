// Reading policy versions and the running job over HTTP (docs/api.md, "Policies"): the list, one
// version, and the fit or backtest in progress.
import { Type } from 'typebox';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { decodeTimeKey, encodeTimeKey, nextCursor } from '../lib/pagination.ts';
import type { Store } from '../store/db.ts';
import { ApiError } from '../http/problem.ts';
import { jobStatus } from './jobs.ts';
import { JobParams, JobSchema, ListQuery, Params, PolicyDetail, PolicyRecord, problems } from './schemas.ts';
import { listPolicies } from './repository.ts';
import { jobView, policyDetail, policyRecord, requireRow } from './route-support.ts';

export function policyReadRoutes({ store }: { store: Store }): RouteDefinition[] {
  const db = store.db;
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
          throw new ApiError('not_found', 'No such running job: it is unknown, of another environment, or finished.');
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
  ];
}
