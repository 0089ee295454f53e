// A fit's labelled decisions held compactly (issue 20 item 5): one object with a parsed feature
// record and an entity id per decision cost ~1 KB, so a million labelled decisions outgrew the
// heap. Here a decision is its feature vector in SIGNAL_NAMES order (8 bytes a value, in blocks of
// plain Float64Arrays, never copied to grow), a label byte, its sample weight, its amount and a
// currency index: 217 bytes with today's 23 signals, outside the JS heap. The train / holdout side is decided as the
// decision arrives (the entity split of split.ts), so the two sides are two such columns.
import { SIGNAL_NAMES, type SignalName } from '../model/policy.ts';
import { logisticScore, modelValue, replayLogOdds } from '../model/arithmetic.ts';
import type { FeatureRecord } from '../model/feature-vector.ts';
import type { SampleBlock, Samples } from './fit.ts';
import type { Label } from './metrics.ts';
import { LABEL_ORIGINS, type LabelOrigin } from './labels.ts';
import type { ScoredOutcome } from './operating.ts';
import { DEFAULT_HOLDOUT_FRACTION, isHoldout } from './split.ts';

/** Rows per block: 16,384 rows of 23 values is 3 MB, small enough that the last block's slack is noise. */
const BLOCK_ROWS = 16_384;

interface Block extends SampleBlock {
  amount: Float64Array;
  currency: Uint16Array;
}

/** Labelled feature vectors, appended one at a time; the rows keep their arrival order. */
export class SampleColumns implements Samples {
  readonly width = SIGNAL_NAMES.length;
  private readonly blocks: Block[] = [];
  private readonly currencies: string[] = [];
  private readonly currencyIndex = new Map<string, number>();
  private rows = 0;
  private frauds = 0;

  get count(): number {
    return this.rows;
  }
  get fraud(): number {
    return this.frauds;
  }

  /**
   * Appends a decision: its values as the model sums them (modelValue), so a replay is exact, and
   * its sample weight (1, or a sampled review label's inverse rate: labels.ts, trainingExample).
   */
  push(features: FeatureRecord, label: Label, amount?: number | null, currency?: string | null, weight = 1): void {
    let block = this.blocks[this.blocks.length - 1];
    if (!block || block.n === BLOCK_ROWS) {
      block = {
        n: 0,
        x: new Float64Array(BLOCK_ROWS * this.width),
        y: new Uint8Array(BLOCK_ROWS),
        s: new Float64Array(BLOCK_ROWS),
        amount: new Float64Array(BLOCK_ROWS),
        currency: new Uint16Array(BLOCK_ROWS),
      };
      this.blocks.push(block);
    }
    const at = block.n;
    const offset = at * this.width;
    for (let j = 0; j < this.width; j++) block.x[offset + j] = modelValue(features[SIGNAL_NAMES[j]!]);
    block.y[at] = label;
    block.s![at] = weight;
    // NaN and index 0 stand for "not kept": the decision then counts, but in no currency.
    block.amount[at] = typeof amount === 'number' && Number.isFinite(amount) ? amount : Number.NaN;
    block.currency[at] = typeof currency === 'string' ? this.currencyId(currency) : 0;
    block.n++;
    this.rows++;
    this.frauds += label;
  }

  private currencyId(code: string): number {
    let id = this.currencyIndex.get(code);
    if (id === undefined) {
      // Index 0 is "none"; a holdout with more than 65,534 distinct currency codes is not a market.
      if (this.currencies.length >= 0xfffe) return 0;
      this.currencies.push(code);
      id = this.currencies.length;
      this.currencyIndex.set(code, id);
    }
    return id;
  }

  /** One signal's values in row order (the knots of a shaped fit are that column's quantiles). */
  column(j: number): Float64Array {
    const out = new Float64Array(this.rows);
    let k = 0;
    for (const b of this.blocks) for (let i = 0; i < b.n; i++) out[k++] = b.x[i * this.width + j]!;
    return out;
  }

  /** The largest value of a signal over the rows, 0 when none is positive (a shape plot's extent). */
  largest(name: SignalName): number {
    const j = SIGNAL_NAMES.indexOf(name);
    let max = 0;
    for (const b of this.blocks) for (let i = 0; i < b.n; i++) max = Math.max(max, b.x[i * this.width + j]!);
    return max;
  }

  /** The rows for fit.ts, block by block, in arrival order. */
  *each(): Iterable<SampleBlock> {
    yield* this.blocks;
  }

  /** Every row's sample weight, in row order. */
  weights(): number[] {
    const out: number[] = [];
    for (const b of this.blocks) for (let i = 0; i < b.n; i++) out.push(b.s![i]!);
    return out;
  }

  labels(): Label[] {
    const out: Label[] = [];
    for (const b of this.blocks) for (let i = 0; i < b.n; i++) out.push(b.y[i] as Label);
    return out;
  }

  /** Every row's score under `policy`: the live arithmetic (replayScore) on the row's values. */
  scores(policy: Parameters<typeof replayLogOdds>[0]): number[] {
    return this.logOdds(policy).map(logisticScore);
  }

  /** Every row's log-odds under `policy` (replayLogOdds): p = σ(z), for the decisions by money. */
  logOdds(policy: Parameters<typeof replayLogOdds>[0]): number[] {
    const record = {} as Record<SignalName, number>;
    const out: number[] = [];
    for (const b of this.blocks) {
      for (let i = 0; i < b.n; i++) {
        const offset = i * this.width;
        for (let j = 0; j < this.width; j++) record[SIGNAL_NAMES[j]!] = b.x[offset + j]!;
        out.push(replayLogOdds(policy, record));
      }
    }
    return out;
  }

  /** The rows as scored outcomes (operating.ts), `scores` in row order. */
  outcomes(scores: readonly number[]): ScoredOutcome[] {
    const out: ScoredOutcome[] = [];
    let k = 0;
    for (const b of this.blocks) {
      for (let i = 0; i < b.n; i++, k++) {
        const amount = b.amount[i]!;
        const currency = b.currency[i]!;
        out.push({
          score: scores[k]!,
          label: b.y[i] as Label,
          amount: Number.isNaN(amount) ? null : amount,
          currency: currency === 0 ? null : this.currencies[currency - 1]!,
        });
      }
    }
    return out;
  }
}

/** One labelled decision as a caller outside the store hands it over. */
export interface LabelledInput {
  entityId: string;
  features: FeatureRecord;
  label: Label;
  amount?: number | null;
  currency?: string | null;
  /** where the label came from (the report counts them); absent: not counted by source */
  source?: LabelOrigin;
  /** sample weight, default 1 */
  weight?: number;
  /** an approval drawn for review at the policy's sample rate */
  sampled?: boolean;
}

/** What the report says of the labels' origins and of the sampled approvals' weights. */
export interface LabelTally {
  sources: Record<LabelOrigin, number>;
  /** sampled approvals kept, the sum of their weights, and unsampled approvals left out for them */
  sampling: { decisions: number; weight: number; left_out: number };
}

/**
 * The train and holdout sides of a fit, filled a decision at a time: every decision of an entity
 * lands on the same side, exactly as splitByEntity would put it, in arrival order.
 */
export class LabelledSplit {
  readonly train = new SampleColumns();
  readonly holdout = new SampleColumns();
  // Recent entities' sides: hashing is cheap, but a page holds several decisions of one entity.
  // Bounded, so a million entities never become a million map entries.
  private readonly recent = new Map<string, boolean>();
  readonly tally: LabelTally = {
    sources: Object.fromEntries(LABEL_ORIGINS.map((o) => [o, 0])) as Record<LabelOrigin, number>,
    sampling: { decisions: 0, weight: 0, left_out: 0 },
  };

  constructor(
    private readonly fraction = DEFAULT_HOLDOUT_FRACTION,
    private readonly salt?: string,
  ) {
    if (!(fraction >= 0 && fraction <= 1)) throw new RangeError('split: the holdout fraction must be within 0 … 1');
  }

  add(d: LabelledInput): void {
    let held = this.recent.get(d.entityId);
    if (held === undefined) {
      held = isHoldout(d.entityId, this.fraction, this.salt);
      if (this.recent.size >= 50_000) this.recent.clear();
      this.recent.set(d.entityId, held);
    }
    const weight = d.weight ?? 1;
    if (!(Number.isFinite(weight) && weight >= 0))
      throw new RangeError('split: a sample weight must be a finite number ≥ 0');
    (held ? this.holdout : this.train).push(d.features, d.label, d.amount, d.currency, weight);
    if (d.source) this.tally.sources[d.source]++;
    if (d.sampled) {
      this.tally.sampling.decisions++;
      this.tally.sampling.weight += weight;
    }
  }

  /** An approval left out because sampled ones stand for it (labels.ts, trainingExample). */
  leaveOut(): void {
    this.tally.sampling.left_out++;
  }

  get count(): number {
    return this.train.count + this.holdout.count;
  }
  get fraud(): number {
    return this.train.fraud + this.holdout.fraud;
  }

  static of(rows: Iterable<LabelledInput>, fraction?: number, salt?: string): LabelledSplit {
    const split = new LabelledSplit(fraction, salt);
    for (const r of rows) split.add(r);
    return split;
  }
}
