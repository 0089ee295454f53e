// A fitted policy's report (docs/api.md, "Policies"): GET /api/v1/policies/{version}/report, its JSON, or
// with Accept: text/html a page of plots drawn on first use (vega is large, and most processes never
// draw one). Kept last in the policy routes' table, where it always was.
import { Type } from 'typebox';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { ApiError } from '../http/problem.ts';
import type { Store } from '../store/db.ts';
import { policyRecord, prefersHtml, requireRow } from './route-support.ts';
import { Params, problems } from './schemas.ts';

export function policyReportRoutes({ store }: { store: Store }): RouteDefinition[] {
  const tags = ['policies'];
  return [
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
        if (!row.report) throw new ApiError('not_found', 'This policy has no report: only fitted policies do.');
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
