// A rule body, checked when saved and compiled for scoring (docs/rules.md). The condition is CEL,
// type-checked against the variables of docs/rules.md and the policy's signal names; everything
// cel-js cannot bound by itself is refused by the AST walk of engine-ast.ts. A compiled rule
// evaluates without ever throwing: a run-time error is a rule that did not match.
import { HIDDEN_CHARACTERS_MESSAGE, hasHiddenCharacters } from '../lib/plain-text.ts';
import { OUTCOMES, type Outcome, type RuleFacts } from '../model/outcomes.ts';
import {
  RULE_LIMITS,
  activationFor,
  ruleEnvironment,
  runProgram,
  type Activation,
  type InListCall,
  type RuleEnvironment,
} from './cel-env.ts';
import { inspectAst, lineColumn, resolvePath } from './engine-ast.ts';
import { checkExpression, errorSummary, findListLiteral, type Checked, type RuleProblem } from './check-expression.ts';
import { compilePredicate, runPredicate } from './predicate.ts';

export interface RuleBody {
  name: string;
  condition: string;
  action?: Outcome;
  override?: boolean;
  final?: boolean;
  cap?: number | string;
  description?: string;
}

/** list name → kind, of the environment */
export type ListKinds = ReadonlyMap<string, string>;
export type ListLookup = (name: string, value: string) => boolean;

export interface CompiledRule {
  id: string;
  name: string;
  version: number;
  status: 'active' | 'shadow';
  action: Outcome | null;
  override: boolean;
  final: boolean;
  lists: readonly string[];
  /** estimated worst-case units of one evaluation, condition and cap (cost.ts) */
  cost: number;
  /** never throws: {matched:false, error} on a run-time error */
  evaluate(
    facts: RuleFacts,
    lists: ListLookup,
  ): { matched: boolean; reads: Record<string, unknown>; cap: number | null; error?: string };
}

export type RuleEvaluation = ReturnType<CompiledRule['evaluate']>;

interface Analysis {
  problems: RuleProblem[];
  condition?: Checked;
  cap?: Checked | number;
}

function analyse(body: RuleBody, signalNames: readonly string[]): Analysis {
  const renv = ruleEnvironment(signalNames);
  const problems: RuleProblem[] = [];
  const action = body.action;
  if (action !== undefined && action !== null && !(OUTCOMES as readonly string[]).includes(action)) {
    problems.push({ field: 'action', message: `must be one of ${OUTCOMES.join(', ')}` });
  }
  const hasCap = body.cap !== undefined && body.cap !== null;
  if ((action === undefined || action === null) && !hasCap) {
    problems.push({ field: 'action', message: 'a rule needs an action, a cap, or both' });
  }
  if (body.override === true && action !== 'approve')
    problems.push({ field: 'override', message: 'only an approve rule can override' });
  if (body.final === true && action !== 'decline')
    problems.push({ field: 'final', message: 'only a decline rule can be final' });
  const condition = checkExpression(renv, 'condition', body.condition, 'bool');
  problems.push(...condition.problems);
  let cap: Checked | number | undefined;
  if (typeof body.cap === 'number') {
    if (!Number.isFinite(body.cap) || body.cap < 0)
      problems.push({ field: 'cap', message: 'must be a number ≥ 0 or an expression' });
    else cap = body.cap;
  } else if (hasCap) {
    const c = checkExpression(renv, 'cap', body.cap, 'number');
    problems.push(...c.problems);
    cap = c.checked;
  }
  return {
    problems,
    ...(condition.checked ? { condition: condition.checked } : {}),
    ...(cap !== undefined ? { cap } : {}),
  };
}

/** Save-time check of a rule body: [] when valid. `lists` are the environment's lists, which in_list must name. */
export function checkRule(body: RuleBody, signalNames: readonly string[], lists: ListKinds): RuleProblem[] {
  const analysis = analyse(body, signalNames);
  const problems = [...analysis.problems];
  // checked when saved, not when compiled: a stored rule keeps working whatever its name holds
  if (typeof body.name === 'string' && hasHiddenCharacters(body.name))
    problems.push({ field: 'name', message: HIDDEN_CHARACTERS_MESSAGE });
  if (typeof body.description === 'string' && hasHiddenCharacters(body.description, { lines: true }))
    problems.push({ field: 'description', message: HIDDEN_CHARACTERS_MESSAGE });
  for (const [field, checked] of [
    ['condition', analysis.condition],
    ['cap', analysis.cap],
  ] as const) {
    if (!checked || typeof checked === 'number') continue;
    for (const name of checked.inspection.listNames) {
      if (lists.has(name)) continue;
      const at = findListLiteral(checked.program.ast, name);
      const source = field === 'condition' ? body.condition : String(body.cap);
      const pos = at === undefined ? undefined : lineColumn(source, at);
      problems.push({
        field,
        message: `${pos ? `line ${pos.line}, column ${pos.column}: ` : ''}there is no list named "${name}"`,
        ...(pos ?? {}),
      });
    }
  }
  return problems;
}

/** The list names a condition's in_list calls name (string literals); [] when it does not parse. */
export function listsNamed(condition: string): string[] {
  if (typeof condition !== 'string' || condition.length > RULE_LIMITS.maxLength) return [];
  try {
    return inspectAst(ruleEnvironment([]).env.parse(condition).ast).listNames;
  } catch {
    return [];
  }
}

interface Internal {
  renv: RuleEnvironment;
  run: (activation: Activation, lists: ListLookup) => RuleEvaluation;
  /** whether the condition runs as a compiled predicate (predicate.ts) or in cel-js */
  compiled: boolean;
}
/** a property of each compiled rule, not enumerable (a rule's JSON and equality ignore it); cheaper than a map */
const INTERNAL = Symbol('evaluate with');

/** Internal: evaluation against a prepared activation, so evaluateRules builds it once per score. */
export function internalOf(rule: CompiledRule): Internal | undefined {
  return (rule as { [INTERNAL]?: Internal })[INTERNAL];
}

/** Whether a rule's condition runs as a compiled predicate (false: cel-js evaluates it). */
export function isCompiledPredicate(rule: CompiledRule): boolean {
  return internalOf(rule)?.compiled === true;
}

/**
 * Compiles a stored rule version; throws an Error listing the problems when it does not check.
 * `predicates: false` keeps every condition in cel-js (the benches' baseline in the same run).
 */
export function compileRule(
  stored: { id: string; version: number; status: 'active' | 'shadow'; body: RuleBody },
  signalNames: readonly string[],
  options: { predicates?: boolean } = {},
): CompiledRule {
  const { body } = stored;
  const analysis = analyse(body, signalNames);
  if (analysis.problems.length > 0 || !analysis.condition) {
    throw new Error(
      `rule ${stored.id} v${stored.version} does not check: ${analysis.problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`,
    );
  }
  const renv = ruleEnvironment(signalNames);
  const condition = analysis.condition;
  const cap = analysis.cap;
  const paths = condition.inspection.paths;
  const sites = condition.inspection.inLists;

  const records = condition.inspection.listNames.length > 0;
  const predicate = options.predicates === false ? null : compilePredicate(condition.program.ast, renv.signalNames);
  const run = (activation: Activation, lists: ListLookup): RuleEvaluation => {
    const inLists: InListCall[] | null = records ? [] : null;
    let matched: unknown = predicate === null ? undefined : runPredicate(predicate, activation, lists, inLists);
    if (matched === undefined) {
      // not compiled, or a case the predicate leaves to cel-js (an error: its message is cel-js's)
      if (inLists !== null) inLists.length = 0;
      try {
        matched = runProgram(condition.program, activation, lists, inLists);
      } catch (err) {
        return { matched: false, reads: {}, cap: null, error: `condition: ${errorSummary(err)}` };
      }
    }
    if (matched !== true) {
      return matched === false
        ? NOT_MATCHED
        : { matched: false, reads: {}, cap: null, error: 'condition: did not return a bool' };
    }
    const reads = readsOf(activation, lists, inLists);
    if (cap === undefined) return { matched: true, reads, cap: null };
    if (typeof cap === 'number') return { matched: true, reads, cap };
    let value: unknown;
    try {
      value = runProgram(cap.program, activation, lists, null);
    } catch (err) {
      return { matched: true, reads, cap: null, error: `cap: ${errorSummary(err)}` };
    }
    const n = typeof value === 'bigint' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
      return { matched: true, reads, cap: null, error: `cap: returned ${String(value)}, not a number ≥ 0` };
    }
    return { matched: true, reads, cap: n };
  };

  const readsOf = (
    activation: Activation,
    lists: ListLookup,
    inLists: readonly InListCall[] | null,
  ): Record<string, unknown> => {
    const reads: Record<string, unknown> = {};
    for (const p of paths) reads[p.key] = plain(resolvePath(activation as unknown as Activated, p.segments));
    const covered = new Set<string>();
    for (const site of sites) {
      if (!site.path) continue;
      const value = resolvePath(activation as unknown as Activated, site.path.segments);
      const result = typeof value === 'string' ? safeLookup(lists, site.list, value) : false;
      reads[`in_list(${site.list}, ${site.path.key})`] = result;
      if (typeof value === 'string') covered.add(`${site.list}\u0000${value}`);
    }
    // calls whose value was computed: reported by the value they looked up
    for (const call of inLists ?? []) {
      if (!covered.has(`${call.name}\u0000${call.value}`))
        reads[`in_list(${call.name}, ${JSON.stringify(call.value)})`] = call.result;
    }
    return reads;
  };

  const rule: CompiledRule = {
    id: stored.id,
    name: body.name,
    version: stored.version,
    status: stored.status,
    action: body.action ?? null,
    override: body.override === true,
    final: body.final === true,
    cost: condition.cost + (cap && typeof cap !== 'number' ? cap.cost : 0),
    lists: [
      ...new Set([
        ...condition.inspection.listNames,
        ...(cap && typeof cap !== 'number' ? cap.inspection.listNames : []),
      ]),
    ],
    evaluate(facts, lists) {
      try {
        return run(activationFor(renv, facts), lists);
      } catch (err) {
        return { matched: false, reads: {}, cap: null, error: `condition: ${errorSummary(err)}` };
      }
    },
  };
  const internal: Internal = { renv, run, compiled: predicate !== null };
  Object.defineProperty(rule, INTERNAL, { value: internal });
  return rule;
}

/** The evaluation of every rule that did not match without an error: one object, never changed. */
const NOT_MATCHED: RuleEvaluation = Object.freeze({ matched: false, reads: Object.freeze({}), cap: null });

/** an activation as resolvePath walks it: its roots are getters (predicate-activation.ts) */
type Activated = Record<string, unknown>;

function safeLookup(lists: ListLookup, name: string, value: string): boolean {
  try {
    return lists(name, value) === true;
  } catch {
    return false;
  }
}

/** Reads kept per value (docs/rules.md, "Limits"): a longer string is cut, a larger list or map replaced. */
const READ_BOUNDS = { maxString: 256, maxJson: 1_024 } as const;

/**
 * A read value as JSON can carry it, bounded: entity and signals objects become plain objects (signals with
 * their inherited 0s); a string over READ_BOUNDS.maxString is cut with a marker, a list or map whose JSON
 * is over READ_BOUNDS.maxJson is replaced by a note of its size — a rule must not turn a request into a
 * response or a stored row many times its size.
 */
function plain(v: unknown): unknown {
  if (typeof v === 'string')
    return v.length > READ_BOUNDS.maxString ? `${v.slice(0, READ_BOUNDS.maxString)}…[${v.length} characters]` : v;
  if (v === null || typeof v !== 'object') return typeof v === 'bigint' ? Number(v) : v;
  let out: unknown = v;
  if (!Array.isArray(v)) {
    const copy: Record<string, unknown> = {};
    for (const k in v as Record<string, unknown>) copy[k] = (v as Record<string, unknown>)[k];
    out = copy;
  }
  const json = JSON.stringify(out, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x)) ?? '';
  return json.length > READ_BOUNDS.maxJson
    ? `[${Array.isArray(v) ? 'list' : 'map'} of ${json.length} characters]`
    : out;
}
