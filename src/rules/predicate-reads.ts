// How a compiled predicate (predicate.ts) reads the variables of docs/rules.md, "Variables", as
// cel-js reads them: a root of its declared type, one member of `context` (an own member of the
// request's map), `entity` or `signals` (declared fields), and `has` of one such member. A read
// cel-js would refuse is FAILED; a value cel-js types otherwise than the activation builds it
// (a Map context, a signals object with a constructor member) is DEFERred to cel-js.
import type { ASTNode } from '@marcbachmann/cel-js';
import { EntityObject, NOT_PLAIN, SignalsObject, type LazyActivation } from './predicate-activation.ts';
import { DEFER, FAILED, isPlain, type Step } from './predicate-values.ts';

const hasOwn = Object.hasOwn;

/** The type cel-js's checker gave a node (set on the AST by `check()`; not in cel-js's declarations). */
export function checkedType(node: ASTNode): { name: string; hasDynType: boolean } | undefined {
  return (node as { checkedType?: { name: string; hasDynType: boolean } }).checkedType;
}

const ENTITY_FIELDS: ReadonlyMap<string, string> = new Map(
  Object.keys(new EntityObject(undefined)).map((f) => [f, f === 'first_seen_at' ? 'dyn' : 'double']),
);

// One reader per root: a variable cel-js would refuse (undefined, or not of its declared type) is FAILED.
const ROOTS: Readonly<Record<string, Step>> = {
  entity_id: (a) => str(a.entity_id),
  currency: (a) => str(a.currency),
  risk_level: (a) => str(a.risk_level),
  amount: (a) => a.amount,
  score: (a) => a.score,
  amount_ref: (a) => a.amount_ref,
  safe_amount: (a) => a.safe_amount,
};
const str = (v: unknown): unknown => (typeof v === 'string' ? v : FAILED);

export function root(name: string): Step | null {
  return hasOwn(ROOTS, name) ? ROOTS[name]! : null;
}

/** `context.f`, `entity.f`, `signals.f`: one member of a root, read as cel-js reads it. */
export function member(node: ASTNode): Step | null {
  if (node.op !== '.') return null;
  const [base, field] = node.args;
  if (base.op !== 'id' || typeof field !== 'string') return null;
  if (base.args === 'context') {
    return (a) => {
      const m = contextOf(a);
      if (m === FAILED) return FAILED;
      const v = hasOwn(m, field) ? m[field] : undefined;
      return v === undefined ? FAILED : v;
    };
  }
  const object = objectRoot(base.args);
  if (!object) return null;
  const type = checkedType(node)?.name;
  if (type !== 'double' && type !== 'dyn') return null;
  const double = type === 'double';
  if (base.args === 'signals' && double) {
    return (a) => {
      let v = a.signal(field);
      if (v === NOT_PLAIN) v = object(a)[field];
      return v === undefined || typeof v !== 'number' ? FAILED : v;
    };
  }
  return (a) => {
    const o = object(a);
    const v = o[field];
    if (v === undefined) return FAILED;
    return double && typeof v !== 'number' ? FAILED : v;
  };
}

/** The context map, FAILED when it is not a map (cel-js's type check); DEFER for a Map. */
function contextOf(a: LazyActivation): Record<string, unknown> | typeof FAILED {
  const m: unknown = a.context;
  if (m === null || typeof m !== 'object') return FAILED;
  const c: unknown = m.constructor;
  if (c === undefined || c === Object) return m as Record<string, unknown>;
  if (c === Map) throw DEFER;
  return FAILED;
}

type ObjectRoot = (a: LazyActivation) => Record<string, unknown>;

function objectRoot(name: string): ObjectRoot | null {
  // cel-js types an object by its constructor; anything but the activation's own objects is left to it
  if (name === 'entity')
    return (a) => {
      const e = a.entity as unknown as Record<string, unknown>;
      if (e?.constructor !== EntityObject) throw DEFER;
      return e;
    };
  if (name === 'signals')
    return (a) => {
      const s = a.signals as Record<string, unknown>;
      if (s?.constructor !== SignalsObject) throw DEFER;
      return s;
    };
  return null;
}

/** `has(context.f)`, `has(entity.f)`, `has(signals.f)`: one level, as cel-js's has macro reads it. */
export function has(arg: ASTNode, declaredSignals: ReadonlySet<string>): Step | null {
  if (arg.op !== '.' || arg.args[0].op !== 'id' || typeof arg.args[1] !== 'string') return null;
  const field = arg.args[1];
  if (arg.args[0].args === 'context') {
    return (a) => {
      const m = contextOf(a);
      if (m === FAILED) return FAILED;
      const v = hasOwn(m, field) ? m[field] : undefined;
      if (v === undefined) return false;
      if (!isPlain(v)) throw DEFER;
      return true;
    };
  }
  const object = objectRoot(arg.args[0].args);
  // has's argument is not type-checked by cel-js: only a declared field is compiled
  const type =
    arg.args[0].args === 'signals' ? (declaredSignals.has(field) ? 'double' : undefined) : ENTITY_FIELDS.get(field);
  if (!object || type === undefined) return null;
  const double = type === 'double';
  return (a) => {
    const v = object(a)[field];
    if (v === undefined) return false;
    if (double) return typeof v === 'number' ? true : FAILED;
    if (!isPlain(v)) throw DEFER;
    return true;
  };
}
