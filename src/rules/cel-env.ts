// The CEL environment rule conditions run in (docs/rules.md, "Variables" and "Limits"). One
// Environment per set of signal names (a policy's vocabulary), built once and cached: building one
// is far costlier than parsing a condition. Everything here is pure — the only state is the
// per-evaluation "current" slot the registered functions read, set and cleared synchronously
// around each evaluation (cel-js functions are called with their arguments only).
import { Environment } from '@marcbachmann/cel-js';
import { RE2JS } from '@bufbuild/re2';
import type { RuleFacts } from '../trust/outcomes.ts';

/** Save-time bounds (docs/rules.md, "Limits"). cel-js has no run-time cost limit, so the shape is bounded instead. */
export const RULE_LIMITS = {
  /** characters of a condition or cap expression */
  maxLength: 2_000,
  /** parser nesting: parentheses, calls, selects, indexes, aggregates */
  maxDepth: 32,
  maxAstNodes: 1_000,
  maxListElements: 100,
  maxMapEntries: 100,
  maxCallArguments: 8,
  /** a comprehension (all/exists/exists_one/map/filter) inside another's body is refused */
  maxComprehensionNesting: 1,
  /** cel.bind inside cel.bind: each level can double a string or list, so keep it shallow */
  maxBindNesting: 2,
  /** depth of the whole tree (unary and binary chains, which the parser does not count) */
  maxTreeDepth: 100,
} as const;

/** A list lookup as the caller provides it for one evaluation: is `value` on the list `name`? */
export type ListLookupFn = (name: string, value: string) => boolean;

interface Current {
  lookup: ListLookupFn;
  /** in_list calls made, for `reads` (bounded) */
  inLists: Array<{ name: string; value: string; result: boolean }>;
}
const NO_LISTS: ListLookupFn = () => false;
let current: Current = { lookup: NO_LISTS, inLists: [] };

/** Runs `fn` with `lookup` visible to in_list; synchronous, so evaluations cannot interleave. */
export function withLists<T>(lookup: ListLookupFn, fn: () => T): { value: T; inLists: Current['inLists'] } {
  const previous = current;
  const mine: Current = { lookup, inLists: [] };
  current = mine;
  try {
    return { value: fn(), inLists: mine.inLists };
  } finally {
    current = previous;
  }
}

function inList(name: string, value: string): boolean {
  // a lookup that throws is a bug of the caller's, not of the rule: count it as absent
  let result = false;
  try {
    result = current.lookup(name, value) === true;
  } catch {
    result = false;
  }
  if (current.inLists.length < 20) current.inLists.push({ name, value, result });
  return result;
}

/**
 * RE2 programs by pattern. Patterns are literals compiled when a rule is compiled (compile.ts), so
 * the handler never compiles on the hot path; the bound only guards against a pathological
 * number of distinct rules.
 */
const REGEXES = new Map<string, RE2JS>();
const MAX_REGEXES = 4_096;

/** Compiles an RE2 pattern (linear-time matching: no backtracking); throws with RE2's message. */
export function compileRegex(pattern: string): RE2JS {
  let re = REGEXES.get(pattern);
  if (re) return re;
  re = RE2JS.compile(pattern);
  if (REGEXES.size >= MAX_REGEXES) REGEXES.clear();
  REGEXES.set(pattern, re);
  return re;
}

function re2Matches(text: string, pattern: string): boolean {
  return compileRegex(pattern).test(text);
}

/** Entity facts as a CEL object type: a misspelt field is a save-time error. */
class EntityObject {}
/** Signals as a CEL object type with one double per signal of the policy, so `signals.nope` is refused when saved. */
class SignalsObject {}

export const ENTITY_FIELDS = {
  account_age_days: 'double',
  completed_trades: 'double',
  chargebacks: 'double',
  fraud_reports: 'double',
  disputes_lost: 'double',
  first_seen_at: 'dyn',
} as const;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The signal names a CEL type can carry as fields (identifiers); anything else could not be read anyway. */
export function usableSignalNames(signalNames: readonly string[]): string[] {
  return [...new Set(signalNames.filter((n) => IDENTIFIER.test(n) && n !== '__proto__' && n !== 'constructor'))].sort();
}

export interface RuleEnvironment {
  env: Environment;
  signalNames: readonly string[];
}

const ENVIRONMENTS = new Map<string, RuleEnvironment>();

/**
 * The environment for a policy's signal names. Numbers are all CEL doubles (JSON numbers); integer
 * literals mix with them (`amount * 2`, `score == 50`) through the operators registered below —
 * cel-spec has no mixed int/double arithmetic, and a desk should not have to write `2.0`.
 */
export function ruleEnvironment(signalNames: readonly string[]): RuleEnvironment {
  const names = usableSignalNames(signalNames);
  const key = names.join(',');
  const cached = ENVIRONMENTS.get(key);
  if (cached) return cached;
  const env = new Environment({
    unlistedVariablesAreDyn: false,
    homogeneousAggregateLiterals: true,
    enableOptionalTypes: false,
    limits: {
      maxAstNodes: RULE_LIMITS.maxAstNodes,
      maxDepth: RULE_LIMITS.maxDepth,
      maxListElements: RULE_LIMITS.maxListElements,
      maxMapEntries: RULE_LIMITS.maxMapEntries,
      maxCallArguments: RULE_LIMITS.maxCallArguments,
    },
  })
    .registerType('Entity', { ctor: EntityObject, fields: { ...ENTITY_FIELDS } })
    .registerType('Signals', { ctor: SignalsObject, fields: Object.fromEntries(names.map((n) => [n, 'double'])) })
    .registerVariable('entity_id', 'string')
    .registerVariable('amount', 'double')
    .registerVariable('currency', 'string')
    // double or null: `dyn`, so `amount_ref != null && amount_ref > 2` checks; a comparison with null is a run-time error (no match)
    .registerVariable('amount_ref', 'dyn')
    .registerVariable('context', 'map<string, dyn>')
    .registerVariable('entity', 'Entity')
    .registerVariable('signals', 'Signals')
    .registerVariable('score', 'double')
    .registerVariable('risk_level', 'string')
    .registerVariable('safe_amount', 'dyn')
    .registerFunction('in_list(string, string): bool', inList, { description: 'whether the value is on the named list' })
    .registerFunction('re2_matches(string, string): bool', re2Matches, {
      description: 'RE2 (linear-time) search of the text for the literal pattern',
    });
  registerMixedNumbers(env);
  const built = { env, signalNames: names };
  if (ENVIRONMENTS.size >= 32) ENVIRONMENTS.clear();
  ENVIRONMENTS.set(key, built);
  return built;
}

function registerMixedNumbers(env: Environment): void {
  const n = (v: bigint): number => Number(v);
  const ops: Array<[string, (a: number, b: number) => unknown]> = [
    ['+', (a, b) => a + b],
    ['-', (a, b) => a - b],
    ['*', (a, b) => a * b],
    ['/', (a, b) => a / b],
    // cel-js derives `!=` and the mirrored `int == double` from this one
    ['==', (a, b) => a === b],
  ];
  for (const [op, f] of ops) {
    env.registerOperator(`double ${op} int`, (a: number, b: bigint) => f(a, n(b)));
    if (op !== '==') env.registerOperator(`int ${op} double`, (a: bigint, b: number) => f(n(a), b));
  }
}

/**
 * What a condition sees. evaluateRules builds one per score and environment and shares it between
 * rules; nothing caches it by facts, since a caller (a replay) may reuse and refill a facts object.
 */
export type Activation = Record<string, unknown>;

export function activationFor(renv: RuleEnvironment, facts: RuleFacts): Activation {
  const entity = Object.assign(new EntityObject(), {
    account_age_days: num(facts.entity?.account_age_days),
    completed_trades: num(facts.entity?.completed_trades),
    chargebacks: num(facts.entity?.chargebacks),
    fraud_reports: num(facts.entity?.fraud_reports),
    disputes_lost: num(facts.entity?.disputes_lost),
    first_seen_at: facts.entity?.first_seen_at ?? null,
  });
  const signals = new SignalsObject() as Record<string, number>;
  // every signal of the policy is present, 0 when the score did not emit it (docs/rules.md)
  for (const name of renv.signalNames) {
    const v = Object.hasOwn(facts.signals ?? {}, name) ? facts.signals[name] : 0;
    signals[name] = num(v);
  }
  const activation: Activation = {
    entity_id: facts.entity_id,
    amount: num(facts.amount),
    currency: facts.currency,
    amount_ref: facts.amount_ref == null ? null : num(facts.amount_ref),
    // a copy without a prototype chain to reach: members are the request's own, nothing else
    context: Object.assign(Object.create(null) as Record<string, unknown>, facts.context ?? {}),
    entity,
    signals,
    score: num(facts.score),
    risk_level: facts.risk_level,
    safe_amount: facts.safe_amount == null ? null : num(facts.safe_amount),
  };
  return activation;
}

/** CEL doubles are JS numbers; anything else (a stored string, undefined) becomes NaN, which compares false. */
function num(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : Number.NaN;
}
