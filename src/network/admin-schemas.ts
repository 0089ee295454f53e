// The schemas of the network admin API (docs/network.md, "Admin API"): its answers and what they are asked.
import { Type } from 'typebox';
import { problemResponses } from '../http/problem.ts';
import { EntityId } from '../model/identifier-schemas.ts';
import { PeerRecord } from './peers.ts';

export const problems = problemResponses(400, 401, 403, 404, 429);
export const Params = Type.Object({ peer_id: Type.String({ description: 'peer_<26-char ULID>' }) });
export const SyncResponse = Type.Object({
  peers: Type.Array(
    Type.Object({
      id: Type.String(),
      flags_pulled: Type.Integer(),
      matched: Type.Integer(),
      error: Type.Optional(Type.String()),
    }),
  ),
});
export const MatchesQuery = Type.Object({ entity_id: EntityId }, { additionalProperties: false });
const MatchPeer = Type.Object({
  id: Type.String(),
  name: Type.String(),
  weight: Type.Number(),
  kinds: Type.Record(Type.String(), Type.Integer()),
  latest_month: Type.String(),
});
const MatchSignal = Type.Object({
  name: Type.Literal('network_flags'),
  value: Type.Number(),
  description: Type.String(),
});
export const MatchesResponse = Type.Object({
  entity_id: Type.String(),
  peers: Type.Array(MatchPeer, {
    description:
      'the peers flagging an identifier events linked to the entity (or its own id under the common entity hashing): what every score of it counts',
  }),
  signal: MatchSignal,
  with_named_identifiers: Type.Object(
    {
      identifiers: Type.Integer({
        description:
          'identifiers score requests named for the entity in their context.linked_identifiers in the last 30 days, and no event linked',
      }),
      peers: Type.Array(MatchPeer),
      signal: MatchSignal,
    },
    {
      description:
        'what a score counts whose request names those identifiers again (a score counts the ones its own request names, never those only another request named)',
    },
  ),
});

export const StatusResponse = Type.Object({
  name: Type.String(),
  signing_key: Type.String(),
  oprf_public_key: Type.String(),
  published: Type.Integer({ description: 'entries this deployment publishes' }),
  peers: Type.Array(
    Type.Intersect([
      PeerRecord,
      Type.Object({
        last_error: Type.Union([Type.String(), Type.Null()]),
        flags_held: Type.Integer(),
        identifiers_resolved: Type.Integer(),
        matched: Type.Integer(),
        evaluations_today: Type.Integer({
          description:
            "evaluations this peer asked of this deployment in the last 24 hours (the budget's rolling window; the field keeps its former name)",
        }),
      }),
    ]),
  ),
});
