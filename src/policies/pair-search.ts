// Which pairs a fit adds (docs/signals.md, "Pairs"), as explainable boosting machines pick their
// interactions (FAST, Lou et al. 2013): rank every pair of risk signals by how much its product
// would lower the train side's log-loss at the additive fit (the score test: the gradient squared
// over the curvature, one Newton step's gain), then add the best few one at a time, each kept only
// when the holdout's log-loss falls with it. Pure: the fit hands it the sides and a refit.
import { SIGNAL_DIRECTIONS, SIGNAL_NAMES, type Policy, type SignalName } from '../model/policy.ts';
import { MAX_PAIRS, pairValue, type Pair } from '../model/pairs.ts';
import type { SampleColumns } from './samples.ts';

type PairSignals = readonly [SignalName, SignalName];

/** Pairs tried at most (each a refit), and kept at most. */
const TRIED = 6;
const KEPT = Math.min(4, MAX_PAIRS);
/** A pair must lower the holdout's mean log-loss by this share to stay: noise does not buy a term. */
const MIN_GAIN = 0.005;
/** A pair needs this many train rows where both parts are non-zero: a product of two rarities says nothing. */
const MIN_SUPPORT = 30;

const RISK = SIGNAL_NAMES.map((n, j) => [n, j] as const).filter(([n]) => SIGNAL_DIRECTIONS[n] === 'risk');

const sigmoid = (z: number) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

/** The pairs whose product the additive fit under-rates the most (positive gradient only: weights are ≥ 0). */
export function rankPairs(train: SampleColumns, additive: Policy, limit = TRIED): PairSignals[] {
  const z = train.logOdds(additive);
  const m = RISK.length;
  const g = new Float64Array(m * m);
  const h = new Float64Array(m * m);
  const support = new Uint32Array(m * m);
  let row = 0;
  for (const block of train.each()) {
    for (let i = 0; i < block.n; i++, row++) {
      const p = sigmoid(z[row]!);
      const s = block.s ? block.s[i]! : 1;
      const r = s * (block.y[i]! - p);
      const c = s * p * (1 - p);
      const at = i * train.width;
      for (let a = 0; a < m; a++) {
        const va = block.x[at + RISK[a]![1]]!;
        if (!(va > 0)) continue;
        for (let b = a + 1; b < m; b++) {
          const v = pairValue(va, block.x[at + RISK[b]![1]]!);
          if (v === 0) continue;
          const k = a * m + b;
          g[k]! += r * v;
          h[k]! += c * v * v;
          support[k]!++;
        }
      }
    }
  }
  const ranked: Array<{ pair: PairSignals; gain: number }> = [];
  for (let a = 0; a < m; a++)
    for (let b = a + 1; b < m; b++) {
      const k = a * m + b;
      if (g[k]! > 0 && h[k]! > 0 && support[k]! >= MIN_SUPPORT)
        ranked.push({ pair: [RISK[a]![0], RISK[b]![0]], gain: (g[k]! * g[k]!) / h[k]! });
    }
  ranked.sort((x, y) => y.gain - x.gain || (x.pair.join('*') < y.pair.join('*') ? -1 : 1));
  return ranked.slice(0, limit).map((r) => r.pair);
}

/** Mean log-loss of `policy` on a side, each row at its sample weight. */
function meanLogLoss(side: SampleColumns, policy: Policy): number {
  const z = side.logOdds(policy);
  let loss = 0;
  let total = 0;
  let row = 0;
  for (const block of side.each()) {
    for (let i = 0; i < block.n; i++, row++) {
      const s = block.s ? block.s[i]! : 1;
      const zi = z[row]!;
      // log(1 + e^z) − y·z, stable for large |z|
      const softplus = zi > 0 ? zi + Math.log1p(Math.exp(-zi)) : Math.log1p(Math.exp(zi));
      loss += s * (softplus - block.y[i]! * zi);
      total += s;
    }
  }
  return total > 0 ? loss / total : 0;
}

interface PairTrial {
  signals: PairSignals;
  /** the holdout's mean log-loss with this pair added to those kept before it */
  holdout_log_loss: number;
  kept: boolean;
}

export interface PairSearch {
  /** the holdout's mean log-loss of the additive candidate */
  additive_log_loss: number;
  tried: PairTrial[];
}

/**
 * Greedy forward selection on the holdout: `refit(pairs)` gives the candidate with those pairs;
 * each ranked pair is added when it lowers the holdout's log-loss by MIN_GAIN of itself.
 */
export function searchPairs(
  sides: { train: SampleColumns; holdout: SampleColumns },
  additive: Policy,
  refit: (pairs: readonly PairSignals[]) => Policy,
): { policy: Policy; search: PairSearch } {
  let best = additive;
  let bestLoss = meanLogLoss(sides.holdout, additive);
  const search: PairSearch = { additive_log_loss: round6(bestLoss), tried: [] };
  const kept: PairSignals[] = [];
  for (const pair of rankPairs(sides.train, additive)) {
    if (kept.length >= KEPT) break;
    const candidate = refit([...kept, pair]);
    const loss = meanLogLoss(sides.holdout, candidate);
    const keep = loss < bestLoss * (1 - MIN_GAIN) && hasPair(candidate, pair);
    search.tried.push({ signals: pair, holdout_log_loss: round6(loss), kept: keep });
    if (!keep) continue;
    kept.push(pair);
    best = candidate;
    bestLoss = loss;
  }
  return { policy: best, search };
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const hasPair = (p: Policy, pair: PairSignals) =>
  (p.pairs ?? []).some((q: Pair) => q.signals[0] === pair[0] && q.signals[1] === pair[1] && q.weight > 0);
