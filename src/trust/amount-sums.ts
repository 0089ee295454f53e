// The score and the log-odds of one entity and context as functions of the amount (docs/api.md,
// "Trust scoring", safe_amount): the fixed terms summed or sorted once, the amount signals and the
// pairs that move with them (docs/signals.md, "Pairs") re-evaluated at each amount. The exact sum
// gives the live model's score to the last bit (its values, its bySize order, its rounding); the
// fast sum adds in name order (a few ulps off), for the search and for p (`fastLogOdds`).
import type { Policy, SignalName } from '../model/policy.ts';
import { bySize, logisticScore, modelValue, weightAt } from '../model/arithmetic.ts';
import type { Prepared } from '../model/signal-model.ts';
import { AMOUNT_SIGNALS, amountValuesInto } from '../model/amount-signals.ts';
import { pairName, pairValue, type PairName } from '../model/pairs.ts';

/** One signal (or pair) of the sum: its value as summed, its weight, and |weight·value| (the sort key). */
interface Term {
  name: SignalName | PairName;
  value: number;
  weight: number;
  size: number;
}

/** The term as scoreValues sums it: a shaped signal's weight is its effective slope at the value. */
const term = (policy: Policy, name: SignalName, raw: number): Term => {
  const value = modelValue(raw);
  const weight = weightAt(policy, name, value);
  return { name, value, weight, size: Math.abs(weight * value) };
};
/** weight·value as scoreValues sums it, without building the term. */
const contribution = (policy: Policy, name: SignalName, raw: number) => {
  const value = modelValue(raw);
  return weightAt(policy, name, value) * value;
};

/** bySize (model/arithmetic.ts) on precomputed sizes: larger first, ties by name. */
const before = (a: Term, b: Term): boolean => (a.size !== b.size ? a.size > b.size : a.name < b.name);

/**
 * The fixed part, built once for both sums: its name-order sum (bias first) and, when `terms`, its
 * non-zero terms in bySize order (the fast sum alone, for p, needs no terms).
 */
interface Fixed {
  z: number;
  sorted: Term[];
  pairs: ReturnType<typeof pairParts>;
}

function fixedPart(prepared: Prepared, policy: Policy, terms: boolean): Fixed {
  let z = policy.bias;
  const sorted: Term[] = [];
  for (const key in prepared.fixed) {
    const name = key as keyof Prepared['fixed'];
    if (!terms) {
      z += contribution(policy, name, prepared.fixed[name]);
      continue;
    }
    const t = term(policy, name, prepared.fixed[name]);
    // the same product as contribution's, so the same sum
    z += t.weight * t.value;
    if (t.weight * t.value !== 0) sorted.push(t);
  }
  const pairs = pairParts(prepared, policy);
  for (const p of pairs.fixed) {
    z += p.weight * p.value;
    if (terms && p.weight * p.value !== 0) sorted.push(p);
  }
  sorted.sort((a, b) => bySize(a, b));
  return { z, sorted, pairs };
}

/**
 * The score exactly as computeSignals + scoreFromSignals give it: the same rounded values, the
 * non-zero contributions only, summed in bySize order (a total order, so sorting the fixed signals
 * once and merging the three amount signals into them gives the very order computeSignals sorts
 * the whole list into, and so the same floating-point sum).
 */
function exactFrom(prepared: Prepared, policy: Policy, { sorted: fixed, pairs }: Fixed): (amount: number) => number {
  const values = [0, 0, 0];
  const moving: Term[] = [];
  return (amount) => {
    amountValuesInto(prepared.terms, amount, values);
    moving.length = 0;
    for (let i = 0; i < AMOUNT_SIGNALS.length; i++) {
      const t = term(policy, AMOUNT_SIGNALS[i]!, values[i]!);
      if (t.weight * t.value !== 0) moving.push(t);
    }
    for (const p of pairs.moving) {
      const t = p.at(values);
      if (t.weight * t.value !== 0) moving.push(t);
    }
    moving.sort((a, b) => bySize(a, b));
    let z = policy.bias;
    let i = 0;
    for (const m of moving) {
      while (i < fixed.length && before(fixed[i]!, m)) z += fixed[i]!.weight * fixed[i++]!.value;
      z += m.weight * m.value;
    }
    while (i < fixed.length) z += fixed[i]!.weight * fixed[i++]!.value;
    return logisticScore(z);
  };
}

const AMOUNT_INDEX = new Map<SignalName, number>(AMOUNT_SIGNALS.map((n, i) => [n, i]));

/**
 * The policy's pairs (docs/signals.md, "Pairs") as terms: those of two fixed signals once, those
 * with an amount signal as a function of the amount signals' raw values (amountValuesInto's order).
 */
function pairParts(
  prepared: Prepared,
  policy: Policy,
): { fixed: Term[]; moving: Array<{ at: (amountValues: readonly number[]) => Term }> } {
  const fixed: Term[] = [];
  const moving: Array<{ at: (amountValues: readonly number[]) => Term }> = [];
  const fixedValue = (n: SignalName) => modelValue(prepared.fixed[n as keyof Prepared['fixed']]);
  for (const pair of policy.pairs ?? []) {
    const name = pairName(pair);
    const [a, b] = pair.signals.map((n) => AMOUNT_INDEX.get(n) ?? -1) as [number, number];
    const made = (value: number): Term => ({ name, value, weight: pair.weight, size: Math.abs(pair.weight * value) });
    if (a < 0 && b < 0) {
      fixed.push(made(pairValue(fixedValue(pair.signals[0]), fixedValue(pair.signals[1]))));
      continue;
    }
    const va = a < 0 ? fixedValue(pair.signals[0]) : 0;
    const vb = b < 0 ? fixedValue(pair.signals[1]) : 0;
    moving.push({
      at: (v) => made(pairValue(a < 0 ? va : modelValue(v[a]), b < 0 ? vb : modelValue(v[b]))),
    });
  }
  return { fixed, moving };
}

/** The fast log-odds two ways (see amountSums): of an amount, and of the amount signals' raw values. */
interface Fast {
  ofAmount: (amount: number) => number;
  ofValues: (values: readonly number[]) => number;
}

/**
 * The log-odds with the fixed part summed once, in name order: the exact sum's up to a few ulps
 * (the order differs), so its rounded score can differ only on a rounding boundary. Used to find
 * the step quickly (then checked with the exact score), and as p's log-odds for decisions by money.
 */
function fastFrom(prepared: Prepared, policy: Policy, { z: fixedZ, pairs }: Fixed): Fast {
  const [a0, a1, a2] = AMOUNT_SIGNALS;
  const ofValues = (v: readonly number[]): number => {
    let z =
      fixedZ + contribution(policy, a0, v[0]!) + contribution(policy, a1, v[1]!) + contribution(policy, a2, v[2]!);
    for (const p of pairs.moving) {
      const t = p.at(v);
      z += t.weight * t.value;
    }
    return z;
  };
  const v = [0, 0, 0];
  return {
    ofValues,
    ofAmount: (amount) => {
      amountValuesInto(prepared.terms, amount, v);
      return ofValues(v);
    },
  };
}

/** The fast log-odds of an amount (fastFrom): p's log-odds for decisions by money. */
export function fastLogOdds(prepared: Prepared, policy: Policy): (amount: number) => number {
  return fastFrom(prepared, policy, fixedPart(prepared, policy, false)).ofAmount;
}

/**
 * Both sums over one pass of the fixed part: `exact`, the live model's score of an amount;
 * `fast`, the fast log-odds of an amount; `fastOfValues`, the same fast sum bit for bit of the
 * amount signals' raw values (amountValuesInto's order), chosen directly: the safe amount's closed
 * form (safe-amount-closed.ts) steps through the 4-decimal values instead of amounts.
 */
export function amountSums(
  prepared: Prepared,
  policy: Policy,
): { exact: (amount: number) => number; fast: (amount: number) => number; fastOfValues: Fast['ofValues'] } {
  const fixed = fixedPart(prepared, policy, true);
  const fast = fastFrom(prepared, policy, fixed);
  return { exact: exactFrom(prepared, policy, fixed), fast: fast.ofAmount, fastOfValues: fast.ofValues };
}
