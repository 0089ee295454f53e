// A policy version changed in a few fields, without uploading the whole document (docs/api.md,
// "Policies"): POST /api/v1/policies/{version}/derive with a JSON merge patch (RFC 7396) of the
// document. The result is validated as any upload and stored as a candidate whose parent is the
// version it came from; activating it is the usual step (so a change of the review sample rate
// or of the economics goes live the way every other change does).
import { Type } from 'typebox';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import { validatePolicy } from '../model/policy-document.ts';
import type { Policy } from '../model/policy.ts';
import type { Store } from '../store/db.ts';
import { mergePatch, MergePatchError } from '../lib/merge-patch.ts';
import { parseDocument } from './repository.ts';
import { insertAudited } from './changes.ts';
import { policyDetail, policyFieldErrors, requireRow } from './route-support.ts';
import { Params, PolicyDetail, problems } from './schemas.ts';

const DeriveBody = Type.Object(
  {
    version: Type.String({ minLength: 1, maxLength: 64, description: 'the new version' }),
    changes: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'a JSON merge patch (RFC 7396) of the policy document: members to change; null removes one (its default applies)',
      },
    ),
  },
  { additionalProperties: false },
);

export function policyDeriveRoutes({ store }: { store: Store }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/policies/:version/derive',
      config: { scope: 'policy:write', role: 'operator', operationId: 'derivePolicy' },
      schema: {
        tags: ['policies'],
        summary: 'A new candidate: this version with a few fields changed (a JSON merge patch), e.g. reviewSampleRate',
        params: Params,
        body: DeriveBody,
        response: { 201: PolicyDetail, ...problemResponses(409), ...problems },
      },
      handler: async (request, reply) => {
        const { environment } = request.principal;
        const base = await requireRow(store, environment, request.params.version);
        let policy: Policy;
        try {
          const merged = mergePatch(parseDocument(base), { ...request.body.changes, version: request.body.version });
          policy = validatePolicy(merged, 'changes');
        } catch (err) {
          const message = (err as Error).message;
          const errors =
            err instanceof MergePatchError
              ? [{ field: 'changes', message }]
              : policyFieldErrors(message).map((e) => ({ ...e, field: `changes.${e.field}` }));
          throw new ApiError('validation_failed', 'The derived policy document is invalid.', { errors });
        }
        const row = await insertAudited(store, request.principal, {
          policy,
          source: 'derived',
          parentVersion: base.version,
        });
        reply.code(201).header('location', `/api/v1/policies/${encodeURIComponent(row.version)}`);
        return policyDetail(row);
      },
    }),
  ];
}
