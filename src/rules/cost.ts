// The worst-case cost of a rule expression, estimated when it is saved (docs/rules.md, "Cost"), as
// Kubernetes' CEL admission and cel-go estimate theirs: every input has a declared largest size
// (the context's bounds, identifier lengths, literal sizes), every operation's size and cost follow
// from its operands', and a comprehension costs its body once per element of the largest list it
// can be handed. Units are calibrated so one unit is about 5 ns on this project's reference
// machine: one character of a string operation is 1, one evaluated node 4, one comprehension step
// 10. Pure: an AST in, a number and the largest intermediate value out.
import type { ASTNode } from '@marcbachmann/cel-js';
import { CONTEXT_BOUNDS } from '../model/context-bounds.ts';

/** The largest a value can be: `chars` when it is a string, `items` (and their shape) when a list or map. */
interface Shape {
  chars: number;
  items: number;
  elem: Shape | null;
}

interface Estimate {
  cost: number;
  shape: Shape;
}

const NODE = 4;
const STEP = 10;

const SCALAR: Shape = { chars: 0, items: 0, elem: null };
/** a `dyn` member of the context: any JSON value within CONTEXT_BOUNDS (its elements are too) */
const DYN: Shape = { chars: CONTEXT_BOUNDS.maxString, items: CONTEXT_BOUNDS.maxItems, elem: null };
(DYN as { elem: Shape | null }).elem = DYN;
const string = (chars: number): Shape => ({ chars, items: 0, elem: null });
/** a member of a record (entity, signals): the numbers, and first_seen_at (an RFC 3339 string) */
const RECORD_FIELD = string(40);

const INPUTS: Record<string, Shape> = {
  entity_id: string(256),
  currency: string(10),
  risk_level: string(16),
  context: {
    chars: 0,
    items: Math.max(CONTEXT_BOUNDS.maxMembers, CONTEXT_BOUNDS.maxItems),
    elem: DYN,
  },
  entity: { chars: 0, items: 6, elem: RECORD_FIELD },
  signals: { chars: 0, items: 64, elem: SCALAR },
};

function join(a: Shape, b: Shape): Shape {
  if (a === b) return a;
  return {
    chars: Math.max(a.chars, b.chars),
    items: Math.max(a.items, b.items),
    elem: a.elem && b.elem ? (a.elem === b.elem ? a.elem : join(a.elem, b.elem)) : (a.elem ?? b.elem),
  };
}

/**
 * An upper bound on the states of a pattern's automaton: its length, times every counted
 * repetition's largest count (`[a-z]{500}` is 500 states, not 10 characters; nested or not, the
 * product bounds them).
 */
export function patternStates(pattern: string): number {
  let states = Math.max(1, pattern.length);
  for (const m of pattern.matchAll(/\{(\d{1,6})(?:,(\d{0,6}))?\}/g)) {
    const low = Number(m[1]);
    const high = m[2] === undefined ? low : m[2] === '' ? low + 1 : Number(m[2]);
    states *= Math.max(1, high);
    if (states > 1e12) return 1e12;
  }
  return states;
}

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

export interface CostEstimate {
  /** worst-case units of one evaluation */
  cost: number;
  /** the largest string (characters) or list (elements) any step can build */
  largest: number;
}

/** Estimates one parsed expression. Never throws; an unknown construct is charged as its operands' sizes. */
export function estimateCost(root: ASTNode): CostEstimate {
  let largest = 0;
  const note = (s: Shape): Shape => {
    largest = Math.max(largest, s.chars, s.items);
    return s;
  };

  const visit = (node: ASTNode, scope: ReadonlyMap<string, Shape>): Estimate => {
    switch (node.op) {
      case 'value':
        return { cost: NODE, shape: typeof node.args === 'string' ? note(string(node.args.length)) : SCALAR };
      case 'id':
        return { cost: NODE, shape: scope.get(node.args) ?? INPUTS[node.args] ?? SCALAR };
      case '.':
      case '.?': {
        const obj = visit(node.args[0], scope);
        return { cost: obj.cost + NODE, shape: obj.shape.elem ?? SCALAR };
      }
      case '[]':
      case '[?]': {
        const obj = visit(node.args[0], scope);
        const key = visit(node.args[1], scope);
        return { cost: obj.cost + key.cost + NODE + key.shape.chars, shape: obj.shape.elem ?? SCALAR };
      }
      case '!_':
      case '-_': {
        const inner = visit(node.args, scope);
        return { cost: inner.cost + NODE, shape: SCALAR };
      }
      case '?:': {
        const [c, a, b] = node.args.map((n: ASTNode) => visit(n, scope)) as [Estimate, Estimate, Estimate];
        return { cost: c.cost + Math.max(a.cost, b.cost) + NODE, shape: join(a.shape, b.shape) };
      }
      case 'list': {
        let cost = NODE;
        let elem: Shape | null = null;
        for (const child of node.args) {
          const e = visit(child, scope);
          cost += e.cost + 1;
          elem = elem ? join(elem, e.shape) : e.shape;
        }
        return { cost, shape: note({ chars: 0, items: node.args.length, elem }) };
      }
      case 'map': {
        let cost = NODE;
        let elem: Shape | null = null;
        for (const [k, v] of node.args) {
          const ke = visit(k, scope);
          const ve = visit(v, scope);
          cost += ke.cost + ve.cost + ke.shape.chars + 1;
          elem = elem ? join(elem, ve.shape) : ve.shape;
        }
        return { cost, shape: note({ chars: 0, items: node.args.length, elem }) };
      }
      case 'call':
        return call(node.args[0], node.args[1], scope);
      case 'rcall':
        return receiverCall(node.args[0], node.args[1], node.args[2], scope);
      default:
        return binary(node.op, node.args as readonly ASTNode[], scope);
    }
  };

  const binary = (op: string, args: readonly ASTNode[], scope: ReadonlyMap<string, Shape>): Estimate => {
    const [a, b] = args.map((n) => visit(n, scope)) as [Estimate, Estimate];
    const cost = a.cost + b.cost + NODE;
    switch (op) {
      case '+': {
        const chars = a.shape.chars + b.shape.chars;
        const items = a.shape.items + b.shape.items;
        const elem = a.shape.elem && b.shape.elem ? join(a.shape.elem, b.shape.elem) : (a.shape.elem ?? b.shape.elem);
        return { cost: cost + chars + items, shape: note({ chars, items, elem }) };
      }
      case '==':
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=': {
        // strings compare by character, lists and maps by element
        const elemChars = Math.min(a.shape.elem?.chars ?? 0, b.shape.elem?.chars ?? 0);
        const items = Math.min(a.shape.items, b.shape.items);
        return { cost: cost + Math.min(a.shape.chars, b.shape.chars) + items * (NODE + elemChars), shape: SCALAR };
      }
      case 'in': {
        const elemChars = Math.min(a.shape.chars, b.shape.elem?.chars ?? 0);
        return { cost: cost + b.shape.items * (NODE + elemChars), shape: SCALAR };
      }
      default:
        return { cost, shape: SCALAR };
    }
  };

  const call = (fn: string, args: readonly ASTNode[], scope: ReadonlyMap<string, Shape>): Estimate => {
    const es = args.map((n) => visit(n, scope));
    const cost = es.reduce((s, e) => s + e.cost, NODE);
    const first = es[0]?.shape ?? SCALAR;
    switch (fn) {
      case 'has':
      case 'size':
        return { cost, shape: SCALAR };
      case 'in_list':
        return { cost: cost + (es[1]?.shape.chars ?? 0), shape: SCALAR };
      case 're2_matches': {
        // RE2 simulates the pattern's automaton over the text: characters × (1 + states / 16)
        const pattern = args[1]?.op === 'value' && typeof args[1].args === 'string' ? args[1].args : '';
        return { cost: cost + first.chars * (1 + Math.ceil(patternStates(pattern) / 16)), shape: SCALAR };
      }
      case 'string':
        return { cost: cost + first.chars + 32, shape: note(string(Math.max(first.chars, 32))) };
      default:
        // conversions (int, double, bool, dyn, …): linear in what they read
        return { cost: cost + first.chars + first.items, shape: first };
    }
  };

  const receiverCall = (
    fn: string,
    receiver: ASTNode,
    args: readonly ASTNode[],
    scope: ReadonlyMap<string, Shape>,
  ): Estimate => {
    if (fn === 'bind' && receiver.op === 'id' && receiver.args === 'cel' && args[0]?.op === 'id' && args[2]) {
      const init = visit(args[1]!, scope);
      const inner = new Map(scope).set(args[0].args, init.shape);
      const body = visit(args[2], inner);
      return { cost: init.cost + body.cost + NODE, shape: body.shape };
    }
    const recv = visit(receiver, scope);
    if (COMPREHENSIONS.has(fn) && args[0]?.op === 'id') {
      const n = recv.shape.items;
      const inner = new Map(scope).set(args[0].args, recv.shape.elem ?? DYN);
      let perElement = STEP;
      let last: Shape = SCALAR;
      for (const body of args.slice(1)) {
        const e = visit(body, inner);
        perElement += e.cost;
        last = e.shape;
      }
      const cost = recv.cost + n * perElement;
      if (fn === 'map') return { cost, shape: note({ chars: 0, items: n, elem: last }) };
      if (fn === 'filter') return { cost, shape: recv.shape };
      return { cost, shape: SCALAR };
    }
    const es = args.map((a) => visit(a, scope));
    const cost = es.reduce((s, e) => s + e.cost, recv.cost + NODE);
    const argChars = es.reduce((s, e) => s + e.shape.chars, 0);
    const chars = recv.shape.chars;
    switch (fn) {
      case 'size':
        return { cost, shape: SCALAR };
      case 'startsWith':
      case 'endsWith':
        return { cost: cost + argChars, shape: SCALAR };
      case 'contains':
      case 'indexOf':
      case 'lastIndexOf':
        return { cost: cost + chars + argChars, shape: SCALAR };
      case 'lowerAscii':
      case 'upperAscii':
      case 'trim':
      case 'substring':
        return { cost: cost + chars, shape: note(string(chars)) };
      case 'split':
        // split("") makes one element per character
        return { cost: cost + 2 * chars, shape: note({ chars: 0, items: chars + 1, elem: string(chars) }) };
      case 'join': {
        const total = recv.shape.items * ((recv.shape.elem?.chars ?? 0) + argChars);
        return { cost: cost + total + recv.shape.items, shape: note(string(total)) };
      }
      default:
        return { cost: cost + chars + recv.shape.items + argChars, shape: recv.shape };
    }
  };

  const { cost } = visit(root, new Map());
  return { cost, largest };
}
