// The condition shapes a desk writes, compiled from the checked AST to plain closures (issue 42,
// docs/rules.md "Variables"): comparisons, `in` a literal list, in_list, has, !, && and || over the
// request, entity and signal fields. Every other shape stays with cel-js, and so does every
// evaluation a closure cannot answer exactly as cel-js would: a value outside the plain JSON kinds
// (a map or list operand, an exotic object) makes the closure step aside (DEFER), and a run-time
// error (FAILED) is handed to cel-js too, so the error a rule reports is cel-js's own. What a
// closure does answer is cel-js's answer, checked by test/rules/predicate-equivalence.test.ts.
import type { ASTNode } from '@marcbachmann/cel-js';
import { listCall, type InListCall, type ListLookupFn } from './cel-env.ts';
import type { LazyActivation } from './predicate-activation.ts';
import { checkedType, has, member, root } from './predicate-reads.ts';
import { compareStatic, equalDyn, isPlain, orderOf, FAILED, DEFER, type Step } from './predicate-values.ts';

export { FAILED };

/** A compiled condition: true or false as cel-js would answer, FAILED where cel-js throws; may throw DEFER. */
export type Predicate = (a: LazyActivation, lookup: ListLookupFn, log: InListCall[] | null) => unknown;

/** The condition as a closure, or null when any part of it is a shape left to cel-js. */
export function compilePredicate(root: ASTNode, signalNames: readonly string[]): Predicate | null {
  try {
    declaredSignals = new Set(signalNames);
    return compileNode(root);
  } catch {
    return null;
  } finally {
    declaredSignals = NO_SIGNALS;
  }
}

const NO_SIGNALS: ReadonlySet<string> = new Set();
/** the signal names of the condition being compiled (compilePredicate is synchronous) */
let declaredSignals = NO_SIGNALS;
/**
 * Runs a compiled condition: true or false when it answered; undefined when cel-js must (an error,
 * whose message is cel-js's, or a value the closures do not handle). Never throws.
 */
export function runPredicate(
  p: Predicate,
  a: LazyActivation,
  lookup: ListLookupFn,
  log: InListCall[] | null,
): boolean | undefined {
  try {
    const v = p(a, lookup, log);
    return v === true ? true : v === false ? false : undefined;
  } catch {
    return undefined;
  }
}

function compileNode(node: ASTNode): Step | null {
  switch (node.op) {
    case 'value':
      return literal(node);
    case '-_':
      return literal(node);
    case 'id':
      return root(node.args);
    case '.':
      return member(node);
    case 'call':
      return call(node);
    case '&&':
    case '||':
      return logical(node);
    case '!_':
      return not(node);
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      return comparison(node);
    case 'in':
      return membership(node);
    default:
      return null;
  }
}

function literalValue(node: ASTNode): { value: unknown } | null {
  if (node.op === 'value') {
    const v: unknown = node.args;
    return v === null || ['string', 'number', 'bigint', 'boolean'].includes(typeof v) ? { value: v } : null;
  }
  if (node.op === '-_' && node.args.op === 'value') {
    const v: unknown = node.args.args;
    if (typeof v === 'number') return { value: -v };
    if (typeof v === 'bigint') return { value: -v };
  }
  return null;
}

function literal(node: ASTNode): Step | null {
  const c = literalValue(node);
  if (!c) return null;
  const v = c.value;
  return () => v;
}

function call(node: ASTNode): Step | null {
  if (node.op !== 'call') return null;
  const [fn, args] = node.args;
  if (fn === 'in_list' && args.length === 2) return inList(args[0]!, args[1]!);
  if (fn === 'has' && args.length === 1) return has(args[0]!, declaredSignals);
  return null;
}

function inList(nameNode: ASTNode, valueNode: ASTNode): Step | null {
  const name = literalValue(nameNode)?.value;
  const value = compileNode(valueNode);
  if (typeof name !== 'string' || !value) return null;
  return (a, lookup, log) => {
    const v = value(a, lookup, log);
    // a value that is not a string has no in_list overload: cel-js's error
    return typeof v === 'string' ? listCall(lookup, log, name, v) : FAILED;
  };
}

function logical(node: ASTNode): Step | null {
  if (node.op !== '&&' && node.op !== '||') return null;
  const left = compileNode(node.args[0]);
  const right = compileNode(node.args[1]);
  if (!left || !right) return null;
  // cel-js evaluates the right side whenever the left does not decide, and absorbs an error on
  // either side that the other side decides: `x && false` is false even when x fails
  if (node.op === '&&')
    return (a, k, g) => {
      const l = left(a, k, g);
      if (l === false) return false;
      const r = right(a, k, g);
      if (r === false) return false;
      return l === true && r === true ? true : FAILED;
    };
  return (a, k, g) => {
    const l = left(a, k, g);
    if (l === true) return true;
    const r = right(a, k, g);
    if (r === true) return true;
    return l === false && r === false ? false : FAILED;
  };
}

function not(node: ASTNode): Step | null {
  if (node.op !== '!_') return null;
  const operand = compileNode(node.args);
  if (!operand) return null;
  return (a, k, g) => {
    const v = operand(a, k, g);
    return v === true ? false : v === false ? true : FAILED;
  };
}

function comparison(node: ASTNode): Step | null {
  const [l, r] = node.args as [ASTNode, ASTNode];
  const left = compileNode(l);
  const right = compileNode(r);
  const lt = checkedType(l);
  const rt = checkedType(r);
  if (!left || !right || !lt || !rt) return null;
  let test: ((x: unknown, y: unknown) => unknown) | null;
  if (node.op === '==' || node.op === '!=') {
    // both sides typed when checked: the environment's overloads (an int literal against a double
    // converts the int); a dyn side: compared at run time by kind
    const equal = lt.hasDynType || rt.hasDynType ? equalDyn : compareStatic(lt.name, rt.name);
    if (!equal) return null;
    test = node.op === '==' ? equal : (x, y) => negate(equal(x, y));
  } else test = orderOf(node.op);
  if (!test) return null;
  const compare = test;
  const constant = literalValue(r);
  if (constant) {
    const c = constant.value;
    return (a, k, g) => {
      const x = left(a, k, g);
      return x === FAILED ? FAILED : compare(x, c);
    };
  }
  return (a, k, g) => {
    const x = left(a, k, g);
    if (x === FAILED) return FAILED;
    const y = right(a, k, g);
    return y === FAILED ? FAILED : compare(x, y);
  };
}

const negate = (v: unknown): unknown => (v === true ? false : v === false ? true : v);

/** `x in ["a", "b"]`: a list of literals, each compared as cel-js's list membership compares. */
function membership(node: ASTNode): Step | null {
  const [l, r] = node.args as [ASTNode, ASTNode];
  const left = compileNode(l);
  if (!left || r.op !== 'list') return null;
  const items: unknown[] = [];
  for (const item of r.args) {
    const c = literalValue(item);
    if (!c) return null;
    items.push(c.value);
  }
  if (items.every((i) => typeof i === 'string')) {
    const set = new Set(items as string[]);
    return (a, k, g) => {
      const x = left(a, k, g);
      if (typeof x === 'string') return set.has(x);
      if (x === FAILED) return FAILED;
      if (!isPlain(x)) throw DEFER;
      return false;
    };
  }
  return (a, k, g) => {
    const x = left(a, k, g);
    if (x === FAILED) return FAILED;
    if (!isPlain(x)) throw DEFER;
    for (const item of items) if (equalDyn(x, item) === true) return true;
    return false;
  };
}
