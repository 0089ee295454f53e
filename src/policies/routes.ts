// Changing policy versions over HTTP (docs/api.md, "Policies"): upload, fit, backtest, activate, shadow, and
// the report (JSON, or a self-contained HTML page of plots). Listing and showing are read-routes.ts.
import { Type } from 'typebox';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { type Policy } from '../model/policy.ts';
import { validatePolicy } from '../model/policy-document.ts';
import type { Store } from '../store/db.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import type { Environment } from '../lib/principal.ts';
import { InsufficientLabelsError } from './fit.ts';
import {
  ActivateBody,
  checkTarget,
  ConfirmProblem,
  EmptyBody,
  FitBody,
  JobConflictProblem,
  Params,
  PolicyDetail,
  problems,
  WindowBody,
} from './schemas.ts';
import { activationMove } from './activation.ts';
import {
  activatePolicy,
  activeRow,
  clearShadow,
  getPolicy,
  parseDocument,
  POLICY_FEED_KIND,
  shadowPolicy,
} from './repository.ts';
import { backtestFromStore, fitFromStore } from './service.ts';
import { fitEconomics } from './cost-fit.ts';
import { parseTime } from '../http/validation.ts';
import { policyReadRoutes } from './read-routes.ts';
import { policyDeriveRoutes } from './derive-routes.ts';
import { policyReportRoutes } from './report-routes.ts';
import { insertAudited } from './changes.ts';
import { sameFitCandidate } from './fit-candidates.ts';
import { principalAuditor } from '../audit-log/auditor.ts';
import { deferIfFourEyes } from '../changes/four-eyes.ts';
import { ChangeSchema } from '../changes/schemas.ts';
import { claimantOf, policyDetail, policyFieldErrors, requireRow } from './route-support.ts';

// The records are the CLI's too (cli.ts, cli-jobs.ts).

export function policyRoutes({ store, feed }: { store: Store; feed: ChangeFeed }): RouteDefinition[] {
  const db = store.db;
  const announce = (environment: Environment, version: string) =>
    feed.announce(POLICY_FEED_KIND, `${environment}:${version}`).catch(() => {});
  const tags = ['policies'];

  return [
    ...policyReadRoutes({ store }),
    ...policyDeriveRoutes({ store }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/policies',
      config: { scope: 'policy:write', role: 'operator' },
      schema: {
        tags,
        summary: 'Upload a policy document as a candidate',
        body: Type.Object({}, { additionalProperties: true }),
        response: { 201: PolicyDetail, ...problemResponses(409), ...problems },
      },
      handler: async (request, reply) => {
        let policy: Policy;
        try {
          policy = validatePolicy(request.body, 'policy');
        } catch (err) {
          const errors = policyFieldErrors((err as Error).message);
          throw new ApiError('validation_failed', 'The policy document is invalid.', { errors });
        }
        const row = await insertAudited(store, request.principal, { policy, source: 'upload' });
        reply.code(201).header('location', `/api/v1/policies/${encodeURIComponent(row.version)}`);
        return policyDetail(row);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/policies/fit',
      config: { scope: 'policy:write', role: 'operator', bodyOptional: true },
      schema: {
        tags,
        summary: 'Fit a candidate policy to the labelled score decisions',
        body: FitBody,
        description:
          'Answers 201 with a new candidate, or 200 with an existing fitted candidate of the same base when the fit gives the same policy again (no new labels). Requires the `policy:write` scope and role operator or admin (an API key must have been issued with it).',
        response: {
          200: PolicyDetail,
          201: PolicyDetail,
          409: JobConflictProblem,
          ...problemResponses(422),
          ...problems,
        },
      },
      handler: async (request, reply) => {
        const body = request.body ?? {};
        const { environment } = request.principal;
        const target = checkTarget(body.target);
        const baseRow =
          body.base_version !== undefined
            ? await requireRow(store, environment, body.base_version)
            : await activeRow(db, environment);
        if (!baseRow) throw new ApiError('conflict', 'There is no active policy to fit from.');
        const base = parseDocument(baseRow);
        const economics = fitEconomics(body, base);
        try {
          const { policy, report } = await fitFromStore(
            db,
            {
              environment,
              base,
              since: parseTime(body.since, 'since'),
              until: parseTime(body.until, 'until'),
              assumeLegitAfterDays: body.assume_legit_after_days,
              holdoutFraction: body.holdout_fraction,
              target,
              economics,
            },
            { store, claimant: claimantOf(request) },
          );
          const same = await sameFitCandidate(db, environment, baseRow.version, policy);
          if (same) {
            reply.header('location', `/api/v1/policies/${encodeURIComponent(same.version)}`);
            return policyDetail(same);
          }
          const row = await insertAudited(store, request.principal, {
            policy,
            source: 'fit',
            parentVersion: baseRow.version,
            report,
          });
          reply.code(201).header('location', `/api/v1/policies/${encodeURIComponent(row.version)}`);
          return policyDetail(row);
        } catch (err) {
          if (err instanceof InsufficientLabelsError) throw new ApiError('insufficient_labels', err.message);
          throw err;
        }
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/policies/:version/backtest',
      // A backtest reads every decision of the environment and holds its one job slot: an
      // operator's act, like a fit, not a service key's (docs/api.md, "Policies").
      config: { scope: 'policy:read', role: 'operator', bodyOptional: true },
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
        );
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/policies/:version/activate',
      config: { scope: 'policy:write', role: 'operator', bodyOptional: true },
      schema: {
        tags,
        summary:
          'Make this version the active policy on every instance; a large move of the operating point needs {"confirm": true}',
        description:
          'With four eyes on policies (docs/api.md, "Four eyes"), the activation waits for a second person: 202 with the pending change (after the operating-point check). Requires the `policy:write` scope and role operator or admin (an API key must have been issued with it).',
        params: Params,
        body: ActivateBody,
        response: { 200: PolicyDetail, 202: ChangeSchema, 409: ConfirmProblem, ...problems },
      },
      handler: async (request, reply) => {
        const { principal } = request;
        const { environment } = principal;
        const next = await requireRow(store, environment, request.params.version);
        const current = await activeRow(db, environment);
        if (current && current.version !== next.version && request.body?.confirm !== true) {
          const move = await activationMove(db, environment, parseDocument(current), parseDocument(next));
          if (move.exceeds) {
            const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
            throw new ApiError(
              'conflict',
              `Activating ${next.version} moves the share of recent decisions flagged high or above from ${pct(move.before.share_flagged_high)} to ${pct(move.after.share_flagged_high)} (${move.decisions} decisions); send {"confirm": true} to activate it.`,
              { extensions: { operating_point: move } },
            );
          }
        }
        if (next.status !== 'active') {
          const pending = await deferIfFourEyes(store, principal, {
            kind: 'policy_activation',
            target: `policy:${next.version}`,
            payload: { version: next.version },
          });
          if (pending) return reply.code(202).header('location', `/api/v1/changes/${pending.id}`).send(pending);
        }
        const audit = principalAuditor(store, principal);
        const row = await activatePolicy(store, environment, request.params.version, audit);
        await announce(environment, row.version);
        return policyDetail(row);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/policies/:version/shadow',
      config: { scope: 'policy:write', role: 'operator', bodyOptional: true },
      schema: {
        tags,
        summary: 'Score every request with this policy too, stored and never returned',
        params: Params,
        body: EmptyBody,
        response: { 200: PolicyDetail, ...problemResponses(409), ...problems },
      },
      handler: async (request) => {
        const { principal } = request;
        const audit = principalAuditor(store, principal);
        const row = await shadowPolicy(store, principal.environment, request.params.version, audit);
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
        const previous = await clearShadow(
          store,
          request.principal.environment,
          principalAuditor(store, request.principal),
        );
        if (previous) await announce(request.principal.environment, previous);
        return { shadow: null, previous: previous ?? null };
      },
    }),

    ...policyReportRoutes({ store }),
  ];
}
