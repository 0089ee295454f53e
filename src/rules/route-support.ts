// What the rule and list routes share with the four-eyes appliers (four-eyes.ts), which apply an
// approved change later: the save-time check, and the repository's errors as problems.
import { ApiError } from '../http/problem.ts';
import { RAW_IDENTIFIER_DETAIL } from '../http/validation.ts';
import { SIGNAL_NAMES } from '../model/policy.ts';
import { checkRule } from './compile.ts';
import { RuleConflictError, RuleNotFoundError, type BodyCheck } from './repository.ts';
import { ListConflictError, ListNotFoundError, ListValueError } from './lists.ts';

/** The engine's save-time check, as a 400 whose errors name the field and the line:column. */
export const checkOrThrow: BodyCheck = (body, lists) => {
  const problems = checkRule(body, SIGNAL_NAMES, lists);
  if (problems.length > 0)
    throw new ApiError(
      400,
      'validation_failed',
      `The rule does not check: ${problems[0]!.field} ${problems[0]!.message}`,
      { errors: problems.map((p) => ({ field: p.field, message: p.message })) },
    );
};

export function ruleErrors(err: unknown): never {
  if (err instanceof RuleNotFoundError) throw new ApiError(404, 'not_found', 'No such rule in this environment.');
  if (err instanceof RuleConflictError) throw new ApiError(409, 'conflict', err.message);
  throw err;
}

export function listErrors(err: unknown): never {
  if (err instanceof ListNotFoundError)
    throw new ApiError(
      404,
      'not_found',
      err.message.startsWith('no list') ? 'No such list in this environment.' : 'No such entry on this list.',
    );
  if (err instanceof ListConflictError) {
    throw new ApiError(409, 'conflict', err.message, err.rules.length > 0 ? { extensions: { rules: err.rules } } : {});
  }
  if (err instanceof ListValueError) {
    if (err.raw.length > 0)
      throw new ApiError(400, 'raw_identifier_rejected', RAW_IDENTIFIER_DETAIL, { errors: err.raw });
    throw new ApiError(
      400,
      'validation_failed',
      `The values do not fit the list's kind: ${err.invalid[0]!.field} ${err.invalid[0]!.message}`,
      { errors: err.invalid },
    );
  }
  throw err;
}
