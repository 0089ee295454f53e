// What a policy decides besides the score (docs/rules.md, "Outcomes"; docs/api.md, "Reviews"): the
// outcome of each risk level when no rule says otherwise, how long a review or a hold may wait, and
// the share of approvals sampled for review. All optional in a document: a policy that predates
// them, or leaves a member out, gets the defaults below, so stored policies stay valid.
import { Type, type Static } from 'typebox';
import { OUTCOME_SEVERITY, type Outcome } from './outcomes.ts';
import type { RiskLevel } from './types.ts';

const strict = { additionalProperties: false } as const;
const OutcomeValue = Type.Union([
  Type.Literal('approve'),
  Type.Literal('review'),
  Type.Literal('hold'),
  Type.Literal('decline'),
]);
const Hours = Type.Number({ exclusiveMinimum: 0, maximum: 720 });

/** risk level → outcome; a level left out takes its default */
export const OutcomesSchema = Type.Object(
  {
    low: Type.Optional(OutcomeValue),
    medium: Type.Optional(OutcomeValue),
    high: Type.Optional(OutcomeValue),
    critical: Type.Optional(OutcomeValue),
  },
  strict,
);
/**
 * hours from a review's opening to its due time, by the outcome that opened it (a sampled approval waits as a review)
 */
export const ReviewHoursSchema = Type.Object({ review: Type.Optional(Hours), hold: Type.Optional(Hours) }, strict);
/** the share of approvals that open a review anyway (reason 'sample'), so labels also come from the unflagged */
export const ReviewSampleRateSchema = Type.Number({ minimum: 0, maximum: 1 });

/**
 * the entity lists a reviewer without `rules:write` may add a review's entity to (add_to_list); absent: none
 */
export const ReviewListsSchema = Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }), {
  maxItems: 50,
  uniqueItems: true,
});

export type OutcomeMap = Readonly<Record<RiskLevel, Outcome>>;
export type ReviewHours = Readonly<{ review: number; hold: number }>;

const DEFAULT_OUTCOMES: OutcomeMap = Object.freeze({
  low: 'approve',
  medium: 'approve',
  high: 'review',
  critical: 'decline',
});
const DEFAULT_REVIEW_HOURS: ReviewHours = Object.freeze({ review: 24, hold: 4 });

interface OutcomeFields {
  outcomes?: Static<typeof OutcomesSchema>;
  reviewHours?: Static<typeof ReviewHoursSchema>;
  reviewSampleRate?: number;
  reviewLists?: readonly string[];
}

// Policies are frozen and long-lived: the filled-in maps are computed once per policy object.
const outcomeMaps = new WeakMap<object, OutcomeMap>();
const hourMaps = new WeakMap<object, ReviewHours>();

/** The policy's outcome per risk level, defaults filled in. */
export function outcomesOf(policy: OutcomeFields): OutcomeMap {
  if (!policy.outcomes) return DEFAULT_OUTCOMES;
  let map = outcomeMaps.get(policy);
  if (!map) outcomeMaps.set(policy, (map = { ...DEFAULT_OUTCOMES, ...policy.outcomes }));
  return map;
}

/** The policy's review times in hours, defaults filled in. */
export function reviewHoursOf(policy: OutcomeFields): ReviewHours {
  if (!policy.reviewHours) return DEFAULT_REVIEW_HOURS;
  let hours = hourMaps.get(policy);
  if (!hours) hourMaps.set(policy, (hours = { ...DEFAULT_REVIEW_HOURS, ...policy.reviewHours }));
  return hours;
}

export function reviewSampleRateOf(policy: OutcomeFields): number {
  return policy.reviewSampleRate ?? 0;
}

/** Whether the policy opens the list to reviewers who cannot write rules (docs/api.md, "Reviews"). */
export function reviewListOpen(policy: OutcomeFields, list: string): boolean {
  return policy.reviewLists?.includes(list) === true;
}

const LEVELS = ['low', 'medium', 'high', 'critical'] as const;

/** A riskier level never gets a milder outcome than a less risky one. */
export function outcomeProblems(policy: OutcomeFields): string[] {
  if (!policy.outcomes) return [];
  const map = { ...DEFAULT_OUTCOMES, ...policy.outcomes };
  const problems: string[] = [];
  for (let i = 1; i < LEVELS.length; i++) {
    const level = LEVELS[i]!;
    const prev = LEVELS[i - 1]!;
    if (OUTCOME_SEVERITY[map[level]] < OUTCOME_SEVERITY[map[prev]]) {
      problems.push(
        `/outcomes/${level}: must be at least as severe as outcomes.${prev} (${map[prev]}); decline > hold > review > approve`,
      );
    }
  }
  return problems;
}
