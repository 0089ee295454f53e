// One walk over a parsed condition (docs/rules.md, "Limits"): what cel-js's own limits cannot
// refuse (the RegExp-backed `matches`, nested comprehensions, prototype names, deep operator
// chains), the list names in_list reads, the RE2 patterns to compile, and the variable paths the
// condition reads — computed once when a rule is compiled, so `reads` costs nothing to locate.
import type { ASTNode } from '@marcbachmann/cel-js';
import { RULE_LIMITS, VARIABLE_ROOTS, compileRegex } from './cel-env.ts';
import { PAYMENT_METHODS } from '../model/types.ts';

/** Variables whose values the score request's schema fixes. */
const ENUM_VARIABLES: ReadonlyMap<string, readonly string[]> = new Map([['context.payment_method', PAYMENT_METHODS]]);

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
/** Names that lead out of a value into JavaScript's object machinery. */
const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype', '__defineGetter__', '__lookupGetter__']);

/** A static path: a variable, then member names (`context.payment_method`, `signals.velocity_trades`). */
interface ReadPath {
  key: string;
  segments: readonly string[];
}

interface InListSite {
  list: string;
  /** the value's path when the value argument is one, else null (then the call is reported by value) */
  path: ReadPath | null;
}

export interface Inspection {
  problems: Array<{ message: string; start: number }>;
  paths: ReadPath[];
  inLists: InListSite[];
  /** list names in_list calls name, in order of appearance, without repeats */
  listNames: string[];
}

const MAX_PATHS = 32;

/** Walks a parsed condition. Never throws: every finding is a problem with its offset. */
export function inspectAst(root: ASTNode): Inspection {
  const out: Inspection = { problems: [], paths: [], inLists: [], listNames: [] };
  const seen = new Set<string>();
  const addPath = (p: ReadPath): void => {
    if (seen.has(p.key) || out.paths.length >= MAX_PATHS) return;
    seen.add(p.key);
    out.paths.push(p);
  };
  let tooDeep = false;

  const visit = (
    node: ASTNode,
    depth: number,
    comprehension: number,
    bind: number,
    bound: ReadonlySet<string>,
  ): void => {
    if (tooDeep) return;
    if (depth > RULE_LIMITS.maxTreeDepth) {
      tooDeep = true;
      out.problems.push({
        message: `the expression is nested deeper than ${RULE_LIMITS.maxTreeDepth} levels`,
        start: node.start,
      });
      return;
    }
    const next = depth + 1;
    switch (node.op) {
      case 'value':
        return;
      case 'id':
        if (VARIABLE_ROOTS.has(node.args) && !bound.has(node.args)) addPath({ key: node.args, segments: [node.args] });
        return;
      case '.':
      case '.?':
      case '[]':
      case '[?]': {
        const name = memberName(node);
        if (name !== null && FORBIDDEN_NAMES.has(name)) {
          out.problems.push({ message: `'${name}' cannot be read`, start: node.start });
          return;
        }
        const path = staticPath(node, bound);
        if (path) return addPath(path);
        for (const child of children(node)) visit(child, next, comprehension, bind, bound);
        return;
      }
      case 'call': {
        const [fn, args] = node.args;
        if (fn === 'matches') {
          out.problems.push({
            message:
              'matches() is not available (its regular expressions can run for minutes); use re2_matches(text, pattern)',
            start: node.start,
          });
          return;
        }
        if (fn === 'in_list') checkInList(args, node, bound, out);
        if (fn === 're2_matches') checkPattern(args[1], node, out);
        for (const a of args) visit(a, next, comprehension, bind, bound);
        return;
      }
      case 'rcall': {
        const [fn, receiver, args] = node.args;
        if (fn === 'matches') {
          out.problems.push({
            message:
              'matches() is not available (its regular expressions can run for minutes); use re2_matches(text, pattern)',
            start: node.start,
          });
          return;
        }
        if (fn === 'bind' && receiver.op === 'id' && receiver.args === 'cel') {
          if (bind + 1 > RULE_LIMITS.maxBindNesting) {
            out.problems.push({
              message: `cel.bind may be nested at most ${RULE_LIMITS.maxBindNesting} deep`,
              start: node.start,
            });
            return;
          }
          const variable = args[0];
          const inner = variable?.op === 'id' ? new Set([...bound, variable.args]) : bound;
          if (args[1]) visit(args[1], next, comprehension, bind + 1, bound);
          if (args[2]) visit(args[2], next, comprehension, bind + 1, inner);
          return;
        }
        visit(receiver, next, comprehension, bind, bound);
        if (COMPREHENSIONS.has(fn) && args[0]?.op === 'id') {
          if (comprehension + 1 > RULE_LIMITS.maxComprehensionNesting) {
            out.problems.push({
              message: `a comprehension (${fn}) inside another is not allowed: its cost multiplies`,
              start: node.start,
            });
            return;
          }
          const inner = new Set([...bound, args[0].args]);
          for (const a of args.slice(1)) visit(a, next, comprehension + 1, bind, inner);
          return;
        }
        for (const a of args) visit(a, next, comprehension, bind, bound);
        return;
      }
      case 'map':
        // a literal key such as "__proto__" would reach the object cel-js builds the map in
        for (const [key] of node.args) {
          if (key.op === 'value' && typeof key.args === 'string' && FORBIDDEN_NAMES.has(key.args)) {
            out.problems.push({ message: `'${key.args}' cannot be a map key`, start: key.start });
            return;
          }
        }
        for (const child of children(node)) visit(child, next, comprehension, bind, bound);
        return;
      default:
        if (node.op === '==' || node.op === '!=' || node.op === 'in') checkEnumLiterals(node, bound, out);
        for (const child of children(node)) visit(child, next, comprehension, bind, bound);
    }
  };

  function checkInList(args: ASTNode[], node: ASTNode, bound: ReadonlySet<string>, acc: Inspection): void {
    const name = args[0];
    if (!name || name.op !== 'value' || typeof name.args !== 'string') {
      acc.problems.push({
        message: 'in_list needs the list name as a string literal, e.g. in_list("mules", entity_id)',
        start: (name ?? node).start,
      });
      return;
    }
    if (!acc.listNames.includes(name.args)) acc.listNames.push(name.args);
    const value = args[1];
    const path = value ? (value.op === 'id' ? idPath(value, bound) : staticPath(value, bound)) : null;
    acc.inLists.push({ list: name.args, path });
  }

  visit(root, 0, 0, 0, new Set());
  return out;
}

/**
 * A literal compared with a variable of fixed values (`context.payment_method == "paypal"`) that
 * is not one of them: the rule would save and never match. Refused, naming the literal.
 */
function checkEnumLiterals(node: ASTNode, bound: ReadonlySet<string>, acc: Inspection): void {
  const [left, right] = node.args as [ASTNode, ASTNode];
  const [variable, other] = left.op === 'value' ? [right, left] : [left, right];
  const values = ENUM_VARIABLES.get(staticPath(variable, bound)?.key ?? '');
  if (!values) return;
  const literals = node.op === 'in' && other.op === 'list' ? (other.args as ASTNode[]) : [other];
  for (const literal of literals) {
    if (literal.op !== 'value' || typeof literal.args !== 'string' || values.includes(literal.args)) continue;
    acc.problems.push({
      message: `${staticPath(variable, bound)!.key} is never "${literal.args}": it is one of ${values.join(', ')}`,
      start: literal.start,
    });
  }
}

function checkPattern(pattern: ASTNode | undefined, node: ASTNode, acc: Inspection): void {
  if (!pattern || pattern.op !== 'value' || typeof pattern.args !== 'string') {
    acc.problems.push({ message: 're2_matches needs the pattern as a string literal', start: (pattern ?? node).start });
    return;
  }
  try {
    compileRegex(pattern.args);
  } catch (err) {
    acc.problems.push({
      message: `invalid RE2 pattern: ${err instanceof Error ? err.message : String(err)}`,
      start: pattern.start,
    });
  }
}

function memberName(node: ASTNode): string | null {
  if (node.op === '.' || node.op === '.?') return node.args[1];
  if (node.op === '[]' || node.op === '[?]') {
    const key = node.args[1];
    return key.op === 'value' && typeof key.args === 'string' ? key.args : null;
  }
  return null;
}

function idPath(node: ASTNode, bound: ReadonlySet<string>): ReadPath | null {
  if (node.op !== 'id' || !VARIABLE_ROOTS.has(node.args) || bound.has(node.args)) return null;
  return { key: node.args, segments: [node.args] };
}

/** `context.a.b` or `context["a b"]` rooted at a free variable, or null when any step is computed. */
function staticPath(node: ASTNode, bound: ReadonlySet<string>): ReadPath | null {
  const segments: string[] = [];
  let cur: ASTNode = node;
  for (;;) {
    if (cur.op === 'id') {
      const root = idPath(cur, bound);
      if (!root) return null;
      segments.unshift(cur.args);
      break;
    }
    const name = memberName(cur);
    if (name === null || (cur.op !== '.' && cur.op !== '.?' && cur.op !== '[]' && cur.op !== '[?]')) return null;
    segments.unshift(name);
    cur = cur.args[0];
  }
  const key = segments
    .map((s, i) => (i === 0 ? s : /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`))
    .join('');
  return { key, segments };
}

function children(node: ASTNode): ASTNode[] {
  switch (node.op) {
    case 'value':
    case 'id':
      return [];
    case '.':
    case '.?':
      return [node.args[0]];
    case 'call':
      return node.args[1];
    case 'rcall':
      return [node.args[1], ...node.args[2]];
    case 'list':
      return node.args;
    case 'map':
      return node.args.flat();
    case '!_':
    case '-_':
      return [node.args];
    default:
      return [...(node.args as readonly ASTNode[])];
  }
}

/** 1-based line and column of an offset in the source. */
export function lineColumn(input: string, offset: number): { line: number; column: number } {
  const before = input.slice(0, Math.max(0, Math.min(offset, input.length)));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return { line, column };
}

/** Resolves a path in an activation; absent members read as null (JSON has no undefined). */
export function resolvePath(activation: Record<string, unknown>, segments: readonly string[]): unknown {
  let cur: unknown = activation;
  for (const s of segments) {
    if (cur === null || typeof cur !== 'object' || FORBIDDEN_NAMES.has(s)) return null;
    // signals inherit their 0 defaults from a prototype (cel-env.ts); everything else is own members
    const proto: unknown = Object.getPrototypeOf(cur);
    const inherited = proto !== Object.prototype && proto !== null && !Array.isArray(cur) && s in cur;
    if (!Object.hasOwn(cur, s) && !inherited) return null;
    cur = (cur as Record<string, unknown>)[s];
    if (typeof cur === 'function') return null;
  }
  return cur === undefined ? null : cur;
}
