// How cel-js compares values, for the compiled predicates (predicate.ts): the overloads of
// cel-js's operators.js and overloads.js with the environment's mixed numbers (cel-env.ts), on the
// plain kinds only — string, double (a JS number), int (a bigint), bool and null. Any other value
// makes the predicate step aside (DEFER) and cel-js answer instead.

import type { InListCall, ListLookupFn } from './cel-env.ts';
import type { LazyActivation } from './predicate-activation.ts';

/** One compiled node: its value, FAILED where cel-js throws; may throw DEFER. */
export type Step = (a: LazyActivation, lookup: ListLookupFn, log: InListCall[] | null) => unknown;

/** Where cel-js throws: the rule does not match (cel-js is asked for its message). */
export const FAILED: unique symbol = Symbol('failed');

/** Thrown when a value is outside the plain kinds: cel-js evaluates the condition instead. */
export const DEFER = new Error('left to cel-js');

/** A value of one of the plain kinds. */
export function isPlain(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'bigint':
    case 'boolean':
      return true;
    case 'object':
      return v === null;
    default:
      return false;
  }
}

/**
 * `==` with a dyn side: cel-js looks the overload up by the run-time kinds — the same kind compares
 * with ===, an int and a double exactly (JS `==` between a bigint and a number), any other pair of
 * plain kinds is not equal.
 */
export function equalDyn(x: unknown, y: unknown): unknown {
  if (x === y) return true;
  const tx = typeof x;
  const ty = typeof y;
  if (tx === 'number') {
    if (ty === 'bigint') return x == y;
  } else if (tx === 'bigint') {
    if (ty === 'number') return x == y;
  }
  if (!isPlain(x) || !isPlain(y)) throw DEFER;
  return false;
}

const sameKind = (x: unknown, y: unknown): unknown => x === y;
/** the environment's `double == int` (cel-env.ts), which converts the int to a double */
const doubleInt = (x: unknown, y: unknown): unknown => x === Number(y as bigint);
const intDouble = (x: unknown, y: unknown): unknown => Number(x as bigint) === y;

/** `==` with both sides typed when checked, by the checked type names; null for a pair left to cel-js. */
export function compareStatic(left: string, right: string): ((x: unknown, y: unknown) => unknown) | null {
  const plain = ['string', 'double', 'int', 'bool', 'null'];
  if (!plain.includes(left) || !plain.includes(right)) return null;
  if (left === right) return sameKind;
  if (left === 'double' && right === 'int') return doubleInt;
  if (left === 'int' && right === 'double') return intDouble;
  return null;
}

type Order = (x: unknown, y: unknown) => unknown;

/**
 * `<`, `<=`, `>`, `>=`: cel-js's overloads are JS's operators on two strings, two bools, or any two
 * numbers (int and double mixed exactly); any other pair of plain kinds has no overload (FAILED).
 */
export function orderOf(op: string): Order | null {
  switch (op) {
    case '<':
      return (x, y) => (orderable(x, y) ? (x as number) < (y as number) : FAILED);
    case '<=':
      return (x, y) => (orderable(x, y) ? (x as number) <= (y as number) : FAILED);
    case '>':
      return (x, y) => (orderable(x, y) ? (x as number) > (y as number) : FAILED);
    case '>=':
      return (x, y) => (orderable(x, y) ? (x as number) >= (y as number) : FAILED);
    default:
      return null;
  }
}

function orderable(x: unknown, y: unknown): boolean {
  const tx = typeof x;
  const ty = typeof y;
  if (tx === 'number' || tx === 'bigint') {
    if (ty === 'number' || ty === 'bigint') return true;
  } else if ((tx === 'string' || tx === 'boolean') && tx === ty) return true;
  if (!isPlain(x) || !isPlain(y)) throw DEFER;
  return false;
}
