// What the rule and list routes share with the four-eyes appliers (four-eyes.ts), which apply an
// approved change later: the save-time check. (The repository's errors are domain errors,
// lib/domain-errors.ts: they reach the caller as problems with no mapping here.)
import { Invalid } from '../lib/domain-errors.ts';
import { SIGNAL_NAMES } from '../model/policy.ts';
import { checkRule } from './compile.ts';
import type { BodyCheck } from './repository.ts';

/** The engine's save-time check, as a 400 whose errors name the field and the line:column. */
export const checkOrThrow: BodyCheck = (body, lists) => {
  const problems = checkRule(body, SIGNAL_NAMES, lists);
  if (problems.length > 0)
    throw new Invalid(
      `The rule does not check: ${problems[0]!.field} ${problems[0]!.message}`,
      problems.map((p) => ({ field: p.field, message: p.message })),
    );
};
