// The CEL environment rule conditions run in (docs/rules.md, "Variables" and "Limits"). One
// Environment per set of signal names (a policy's vocabulary), built once and cached: building one
// is far costlier than parsing a condition. Everything here is pure — the only state is the
// per-evaluation "current" slot the registered functions read, set and cleared synchronously
// around each evaluation (cel-js functions are called with their arguments only).
import { Environment } from '@marcbachmann/cel-js';
import { RE2JS } from '@bufbuild/re2';
import type { RuleFacts } from '../model/outcomes.ts';

/**
 * Save-time bounds (docs/rules.md, "Limits" and "Cost"). cel-js has no run-time cost limit, so the
 * shape and the estimated worst-case cost (cost.ts) are bounded when saved, and the run-time budget
 * (registry.ts) is the second line.
 */
export const RULE_LIMITS = {
  /** estimated worst-case units of one evaluation of a condition or a cap (cost.ts; ≈ 1 ms) */
  maxCost: 200_000,
  /**
   * run time of one rule's evaluation beyond which it counts as no match (the second line, for what
   * the estimate missed); rules estimated under `timedFromCost` cannot reach it and are not timed
   */
  runtimeBudgetMs: 5,
  timedFromCost: 20_000,
  /** consecutive evaluations over the run-time budget after which a rule is suspended (set to draft) */
  suspendAfter: 3,
  /** active and shadow rules per environment: every score evaluates all of them */
  maxLiveRules: 200,
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

export interface InListCall {
  name: string;
  value: string;
  result: boolean;
}

const NO_LISTS: ListLookupFn = () => false;
let lookupNow: ListLookupFn = NO_LISTS;
/** where in_list records its calls for `reads`; null when the rule has no in_list (nothing to record) */
let logNow: InListCall[] | null = null;

/**
 * Runs a compiled program with `lookup` visible to in_list (and its calls recorded into `log`).
 * Synchronous, so evaluations cannot interleave; no closure or object is allocated per call, since
 * this runs once per rule per score.
 */
export function runProgram(
  program: (activation: Activation) => unknown,
  activation: Activation,
  lookup: ListLookupFn,
  log: InListCall[] | null,
): unknown {
  const previousLookup = lookupNow;
  const previousLog = logNow;
  lookupNow = lookup;
  logNow = log;
  try {
    return program(activation);
  } finally {
    lookupNow = previousLookup;
    logNow = previousLog;
  }
}

function inList(name: string, value: string): boolean {
  // a lookup that throws is a bug of the caller's, not of the rule: count it as absent
  let result = false;
  try {
    result = lookupNow(name, value) === true;
  } catch {
    result = false;
  }
  if (logNow !== null && logNow.length < 20) logNow.push({ name, value, result });
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
class EntityObject {
  account_age_days: number;
  completed_trades: number;
  chargebacks: number;
  fraud_reports: number;
  disputes_lost: number;
  first_seen_at: unknown;
  constructor(e: Partial<RuleFacts['entity']> | undefined) {
    this.account_age_days = num(e?.account_age_days);
    this.completed_trades = num(e?.completed_trades);
    this.chargebacks = num(e?.chargebacks);
    this.fraud_reports = num(e?.fraud_reports);
    this.disputes_lost = num(e?.disputes_lost);
    this.first_seen_at = e?.first_seen_at ?? null;
  }
}
/**
 * Signals as a CEL object type with one double per signal of the policy, so `signals.nope` is
 * refused when saved. cel-js finds the type by `constructor` and reads fields with `obj[key]`, so
 * an activation's signals are one Object.assign over a per-environment prototype holding a 0 for
 * every signal — "0 when not present" without a store per name on every score.
 */
class SignalsObject {}

const ENTITY_FIELDS = {
  account_age_days: 'double',
  completed_trades: 'double',
  chargebacks: 'double',
  fraud_reports: 'double',
  disputes_lost: 'double',
  first_seen_at: 'dyn',
} as const;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The signal names a CEL type can carry as fields (identifiers); anything else could not be read anyway. */
function usableSignalNames(signalNames: readonly string[]): string[] {
  return [...new Set(signalNames.filter((n) => IDENTIFIER.test(n) && n !== '__proto__' && n !== 'constructor'))].sort();
}

export interface RuleEnvironment {
  env: Environment;
  signalNames: readonly string[];
  /** a SignalsObject with every signal at 0, the prototype of each activation's signals */
  signalDefaults: object;
}

const ENVIRONMENTS = new Map<string, RuleEnvironment>();
/**
 * By array identity first: callers pass the same policy array over and over, and normalising it costs more than a
 * parse.
 */
const BY_ARRAY = new WeakMap<readonly string[], RuleEnvironment>();

/**
 * The environment for a policy's signal names. Numbers are all CEL doubles (JSON numbers); integer
 * literals mix with them (`amount * 2`, `score == 50`) through the operators registered below —
 * cel-spec has no mixed int/double arithmetic, and a desk should not have to write `2.0`.
 */
export function ruleEnvironment(signalNames: readonly string[]): RuleEnvironment {
  const byArray = BY_ARRAY.get(signalNames);
  if (byArray) return byArray;
  const names = usableSignalNames(signalNames);
  const key = names.join(',');
  const cached = ENVIRONMENTS.get(key);
  if (cached) {
    BY_ARRAY.set(signalNames, cached);
    return cached;
  }
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
    // double or null: `dyn`, so `amount_ref != null && amount_ref > 2` checks; a comparison with null is a run-time
    // error (no match)
    .registerVariable('amount_ref', 'dyn')
    .registerVariable('context', 'map<string, dyn>')
    .registerVariable('entity', 'Entity')
    .registerVariable('signals', 'Signals')
    .registerVariable('score', 'double')
    .registerVariable('risk_level', 'string')
    .registerVariable('safe_amount', 'dyn')
    .registerFunction('in_list(string, string): bool', inList, {
      description: 'whether the value is on the named list',
    })
    .registerFunction('re2_matches(string, string): bool', re2Matches, {
      description: 'RE2 (linear-time) search of the text for the literal pattern',
    });
  registerMixedNumbers(env);
  const signalDefaults = Object.create(SignalsObject.prototype) as Record<string, number>;
  for (const name of names) signalDefaults[name] = 0;
  const built = { env, signalNames: names, signalDefaults };
  if (ENVIRONMENTS.size >= 32) ENVIRONMENTS.clear();
  ENVIRONMENTS.set(key, built);
  BY_ARRAY.set(signalNames, built);
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
  const signals = Object.create(renv.signalDefaults) as Record<string, unknown>;
  if (facts.signals) Object.assign(signals, facts.signals);
  const context = facts.context ?? {};
  return {
    entity_id: facts.entity_id,
    amount: num(facts.amount),
    currency: facts.currency,
    amount_ref: facts.amount_ref == null ? null : num(facts.amount_ref),
    // cel-js reads only own members of a plain object; anything else is copied into one without a prototype
    context:
      Object.getPrototypeOf(context) === Object.prototype
        ? context
        : Object.assign(Object.create(null) as Record<string, unknown>, context),
    entity: new EntityObject(facts.entity),
    signals,
    score: num(facts.score),
    risk_level: facts.risk_level,
    safe_amount: facts.safe_amount == null ? null : num(facts.safe_amount),
  };
}

/** CEL doubles are JS numbers; anything else (a stored string, undefined) becomes NaN, which compares false. */
function num(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : Number.NaN;
}
