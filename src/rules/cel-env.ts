// The CEL environment rule conditions run in (docs/rules.md, "Variables" and "Limits"). One
// Environment per set of signal names (a policy's vocabulary), built once and cached: building one
// is far costlier than parsing a condition. Everything here is pure — the only state is the
// per-evaluation "current" slot the registered functions read, set and cleared synchronously
// around each evaluation (cel-js functions are called with their arguments only).
import { Environment } from '@marcbachmann/cel-js';
import { RE2JS } from '@bufbuild/re2';
import type { RuleFacts } from '../model/outcomes.ts';
import { EntityObject, LazyActivation, SignalsObject, type Activation } from './predicate-activation.ts';

export type { Activation };

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
  return listCall(lookupNow, logNow, name, value);
}

/** One in_list call, as cel-js and a compiled predicate (predicate.ts) both make it: looked up, and recorded. */
export function listCall(lookup: ListLookupFn, log: InListCall[] | null, name: string, value: string): boolean {
  // a lookup that throws is a bug of the caller's, not of the rule: count it as absent
  let result = false;
  try {
    result = lookup(name, value) === true;
  } catch {
    result = false;
  }
  if (log !== null && log.length < 20) log.push({ name, value, result });
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

const ENTITY_FIELDS = {
  account_age_days: 'double',
  completed_trades: 'double',
  chargebacks: 'double',
  fraud_reports: 'double',
  disputes_lost: 'double',
  first_seen_at: 'dyn',
} as const;

/**
 * The variables a condition reads and their CEL types (docs/rules.md, "Variables"): the one list of
 * roots, which the environment registers, the AST walk (engine-ast.ts) and the console's examples
 * (variables.ts) recognise, and the lazy activation (predicate-activation.ts) provides.
 */
const VARIABLE_TYPES = {
  entity_id: 'string',
  amount: 'double',
  currency: 'string',
  // double or null: `dyn`, so `amount_ref != null && amount_ref > 2` checks; a comparison with null is a run-time
  // error (no match)
  amount_ref: 'dyn',
  context: 'map<string, dyn>',
  entity: 'Entity',
  signals: 'Signals',
  score: 'double',
  risk_level: 'string',
  safe_amount: 'dyn',
} as const satisfies Record<keyof LazyActivation & keyof RuleFacts, string>;

export const VARIABLE_ROOTS: ReadonlySet<string> = new Set(Object.keys(VARIABLE_TYPES));

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
    .registerFunction('in_list(string, string): bool', inList, {
      description: 'whether the value is on the named list',
    })
    .registerFunction('re2_matches(string, string): bool', re2Matches, {
      description: 'RE2 (linear-time) search of the text for the literal pattern',
    });
  for (const [name, type] of Object.entries(VARIABLE_TYPES)) env.registerVariable(name, type);
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
 * What a condition sees: built once per score and environment by evaluateRules and shared between
 * rules, each root computed when a rule first reads it (predicate-activation.ts). Nothing caches
 * it by facts, since a caller (a replay) may reuse and refill a facts object.
 */
export function activationFor(renv: RuleEnvironment, facts: RuleFacts): Activation {
  return new LazyActivation(facts, renv.signalDefaults);
}
