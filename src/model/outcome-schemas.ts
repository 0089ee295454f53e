// The shapes of an outcome's parts in responses (docs/rules.md): a matched rule, as a score, a batch
// item and a stored decision show it.
import { Type } from 'typebox';
import { StringEnum } from '../lib/schema-keywords.ts';
import { OUTCOMES } from './outcomes.ts';

/** A matched rule as a score and its decision show it (model/outcomes.ts, MatchedRule). */
export const MatchedRuleSchema = Type.Object({
  id: Type.String({ description: 'the rule (GET /api/v1/rules/{id})' }),
  name: Type.String(),
  version: Type.Integer({ minimum: 1, description: 'the version of the rule that matched' }),
  action: Type.Union([StringEnum(OUTCOMES), Type.Null()], {
    description: 'the outcome the rule asks for; null for a rule that only caps',
  }),
  override: Type.Optional(
    Type.Boolean({ description: 'an approve that wins over every other outcome but a final decline' }),
  ),
  final: Type.Optional(Type.Boolean({ description: 'a decline that no override can lift' })),
  cap: Type.Optional(
    Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description: "the cap it set on safe_amount, in the request's currency",
    }),
  ),
  reads: Type.Record(Type.String(), Type.Unknown(), {
    description: 'the variables its condition read, with their values at this score',
  }),
});
