// The model's derived computations as they were before issue 13 made them cheaper, kept verbatim
// as references: the property tests check that the faster code gives exactly the same numbers.
import cc from 'currency-codes';
import { SIGNAL_DIRECTIONS, SIGNAL_NAMES, type Policy, type SignalName } from '../../src/model/policy.ts';
import { computeSignals, prepare, type Prepared } from '../../src/model/signal-model.ts';
import { AMOUNT_SIGNALS, amountValues } from '../../src/model/amount-signals.ts';
import { describeSignal } from '../../src/model/descriptions.ts';
import type { EntityProfile, ScoreRequest, Signal } from '../../src/model/types.ts';

// The rounding and the sum as the model did them before issue 19 moved them to src/model/arithmetic.ts.
const round4 = (x: number): number => Math.round(x * 1e4) / 1e4 + 0;
function scoreFromSignals(bias: number, signals: readonly Signal[]): number {
  let z = bias;
  for (const s of signals) z += s.weight * s.value;
  return Math.round(100 / (1 + Math.exp(-z)));
}

/** assembleSignals before issue 13 (Object.entries, an inline comparator). */
export function referenceAssemble(raw: Record<SignalName, number>, policy: Policy): Signal[] {
  const signals: Signal[] = [];
  for (const [name, rawValue] of Object.entries(raw) as [SignalName, number][]) {
    const value = Number.isFinite(rawValue) ? round4(rawValue) : 0;
    const weight = policy.weights[name];
    if (weight * value !== 0) signals.push({ name, value, weight, description: '' });
  }
  return signals.sort((a, b) => {
    const diff = Math.abs(b.weight * b.value) - Math.abs(a.weight * a.value);
    return diff !== 0 ? diff : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

/** computeSignals before issue 13: one record of every raw value, assembled, then described. */
export function referenceComputeSignals(
  profile: EntityProfile,
  request: ScoreRequest,
  policy: Policy,
  now: number,
): Signal[] {
  const prepared = prepare(profile, request, policy, now);
  const raw = { ...prepared.fixed, ...amountValues(prepared.terms, request.amount) };
  const signals = referenceAssemble(raw, policy);
  const facts = { ...prepared.facts, amount: request.amount };
  for (const s of signals) s.description = describeSignal(s.name as SignalName, s.value, facts);
  return signals;
}

const PROBE_WEIGHTS = Object.fromEntries(
  SIGNAL_NAMES.map((n) => [n, SIGNAL_DIRECTIONS[n] === 'risk' ? 1 : -1]),
) as Policy['weights'];

/** featureValues before issue 13: computeSignals under unit weights. */
export function referenceFeatureValues(
  profile: EntityProfile,
  request: ScoreRequest,
  policy: Policy,
  now: number,
): Record<SignalName, number> {
  const values = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0])) as Record<SignalName, number>;
  for (const s of computeSignals(profile, request, { ...policy, weights: PROBE_WEIGHTS }, now))
    values[s.name as SignalName] = s.value;
  return values;
}

function minorUnitDigits(currency: string, cryptoAssets: readonly string[]): number {
  if (cryptoAssets.includes(currency)) return 8;
  const digits = cc.code(currency)?.digits;
  return typeof digits === 'number' && Number.isInteger(digits) && digits >= 0 && digits <= 8 ? digits : 2;
}

const MAX_UNITS = 2 ** 51;

function scoreAt(prepared: Prepared, policy: Policy, amount: number): number {
  const raw = { ...prepared.fixed, ...amountValues(prepared.terms, amount) } as Record<SignalName, number>;
  return scoreFromSignals(policy.bias, referenceAssemble(raw, policy));
}

const contribution = (weight: number, raw: number) => weight * (Number.isFinite(raw) ? round4(raw) : 0);

function fastScorer(prepared: Prepared, policy: Policy): (amount: number) => number {
  let fixedZ = policy.bias;
  for (const [name, raw] of Object.entries(prepared.fixed) as [SignalName, number][])
    fixedZ += contribution(policy.weights[name], raw);
  const w = AMOUNT_SIGNALS.map((n) => policy.weights[n]);
  return (amount) => {
    const v = amountValues(prepared.terms, amount);
    const z =
      fixedZ +
      contribution(w[0]!, v[AMOUNT_SIGNALS[0]]) +
      contribution(w[1]!, v[AMOUNT_SIGNALS[1]]) +
      contribution(w[2]!, v[AMOUNT_SIGNALS[2]]);
    return Math.round(100 / (1 + Math.exp(-z)));
  };
}

function locate(below: (amount: number) => boolean, at: (units: number) => number, top: number): number | null {
  if (below(Infinity)) return null;
  if (!below(at(1))) return 0;
  if (below(at(top))) return top;
  let lo = 1;
  let hi = top;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (below(at(mid))) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** safeAmount before issue 13. */
export function referenceSafeAmount(
  profile: EntityProfile,
  request: ScoreRequest,
  policy: Policy,
  now: number,
): number | null {
  const high = policy.thresholds.high;
  const prepared = prepare(profile, request, policy, now);
  const scale = 10 ** minorUnitDigits(request.currency, policy.cryptoAssets);
  const at = (units: number) => units / scale;
  const exact = (amount: number) => scoreAt(prepared, policy, amount) < high;
  const fast = fastScorer(prepared, policy);
  const t = prepared.terms;
  const saturated = Math.max(
    Math.exp(t.logMean + t.std * (t.toleranceSigma + t.cap)),
    t.limit * Math.exp(t.std * t.cap),
  );
  const top = t.hasHistory ? Math.min(MAX_UNITS, Math.max(2, Math.ceil(saturated * scale) + 1)) : MAX_UNITS;
  const found = locate((amount) => fast(amount) < high, at, top);
  const ok =
    found === null
      ? exact(Infinity)
      : found === 0
        ? !exact(at(1))
        : found === top
          ? exact(at(top))
          : exact(at(found)) && !exact(at(found + 1));
  const units = ok ? found : locate(exact, at, top);
  return units === null ? null : at(units);
}
