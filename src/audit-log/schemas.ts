// The audit log's shapes on the wire (docs/api.md, "Audit log"): who acted, and one entry of the
// chain. The pending changes of four eyes name their requester and decider with the same actor.
import { Type, type Static } from 'typebox';
import { StringEnum } from '../http/validation.ts';
import type { Actor } from '../lib/principal.ts';

export const ActorSchema = Type.Object(
  {
    type: StringEnum(['user', 'client'] as const, { description: 'a person, or a machine client or API key' }),
    id: Type.String({ description: "the user's id, or the client's or API key's id (`cli` for the command line)" }),
    name: Type.String(),
  },
  { description: 'who did it' },
);

/**
 * Who changed a record that keeps its actor's id (docs/api.md, "Audit log", "Who"): the `*_actor`
 * sibling of a `*_by` id, or a `*_by` of its own; null where nobody did (yet) or it was not kept.
 */
export const nullableActor = (description: string) => Type.Union([ActorSchema, Type.Null()], { description });

/** The `*_actor` sibling of a `*_by` id that is always there: the same principal, named as it is now. */
export const actorSibling = (field: string) =>
  Type.Object(ActorSchema.properties, { description: `\`${field}\` named as it is now: \`{type, id, name}\`` });

/** The actor as stored (JSON text), checked field by field: a row written by hand cannot break a response. */
export function parseActor(stored: string): Static<typeof ActorSchema> {
  const value = JSON.parse(stored) as Partial<Actor>;
  return {
    type: value.type === 'user' ? 'user' : 'client',
    id: String(value.id ?? ''),
    name: String(value.name ?? value.id ?? ''),
  };
}

export const AuditEntrySchema = Type.Object({
  id: Type.String({ description: 'aud_<26-char ULID>' }),
  at: Type.String({ format: 'date-time' }),
  actor: ActorSchema,
  action: Type.String({ description: 'what was done, e.g. rule.updated, key.created, change.approved' }),
  target: Type.Union([Type.String(), Type.Null()], { description: 'what it was done to, e.g. rule:rul_…' }),
  before: Type.Optional(Type.Unknown({ description: 'the changed fields before (never a secret)' })),
  after: Type.Optional(Type.Unknown({ description: 'the changed fields after (never a secret)' })),
  hash: Type.String({ description: "SHA-256 (hex) over prev_hash and this entry's fields" }),
  prev_hash: Type.String({ description: 'the hash of the entry before it in the chain (64 zeros for the first)' }),
});
