// A rule test's figures in parts (docs/rules.md, "Testing a rule"): the window is replayed in
// slices, each by whichever worker is free (replay-thread.ts), and each slice's tally is a part —
// plain data (counts, sums per currency as exact integers, its last matches) that crosses threads.
// Parts merged in the window's order give exactly what one pass over the whole window gives: every
// figure is a sum, the earliest decision a minimum, and the examples the last matches of the last
// parts that had any.
import { OUTCOMES, type Outcome } from '../model/outcomes.ts';

type LabelKey = 'fraud' | 'legit' | 'unlabelled';
const LABEL_KEYS: readonly LabelKey[] = ['fraud', 'legit', 'unlabelled'];

export const MAX_EXAMPLES = 20;

export interface RuleExample {
  decision_id: string;
  created_at: string;
  reads: Record<string, unknown>;
  before: Outcome;
  after: Outcome;
  label: 'fraud' | 'legit' | null;
  amount: number | null;
  currency: string | null;
}

export interface RuleTestResult {
  decisions: number;
  matched: number;
  /** decisions on which the condition failed at run time (counted as no match, as in a live score) */
  errors: number;
  /** decisions replayed without stored rule inputs (made before rules existed): what they lacked read as absent */
  without_inputs: number;
  /** decisions whose outcome the rule changes */
  changed: number;
  outcomes: { before: Record<Outcome, number>; after: Record<Outcome, number> };
  labelled: { fraud: { matched: number; total: number }; legit: { matched: number; total: number } };
  /** the matched decisions' amounts summed per currency (amounts of different currencies never add up) */
  amount_matched: Record<string, number>;
  /** `changed` and `amount_matched` of the fraud, legit and unlabelled decisions apart */
  by_label: Record<LabelKey, { changed: number; amount_matched: Record<string, number> }>;
  /** decisions left out because their outcome before was one the test excludes */
  excluded: number;
  /** what a reader of the figures should know (a list the rule reads was empty for some decisions) */
  notes: string[];
  /** the most recent matched decisions, newest first, with what the condition read */
  examples: RuleExample[];
}

/** One slice's tally: plain data (bigints and Maps cross threads as they are). */
export interface TallyPart {
  decisions: number;
  matched: number;
  errors: number;
  without_inputs: number;
  changed: number;
  excluded: number;
  before: Record<Outcome, number>;
  after: Record<Outcome, number>;
  labelled: { fraud: { matched: number; total: number }; legit: { matched: number; total: number } };
  /** per label, per currency, in units of 10⁻⁸ */
  amounts: Record<LabelKey, Map<string, bigint>>;
  changed_by: Record<LabelKey, number>;
  /** the earliest decision's time (ms), Infinity when none */
  earliest: number;
  /** the slice's last matches, oldest first, MAX_EXAMPLES at most */
  examples: RuleExample[];
  /** each list the rule reads, with its first entry's time (ms) or null when it never had one */
  lists: Array<[name: string, first: number | null]>;
}

const outcomeCounts = (): Record<Outcome, number> =>
  Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;

export function emptyPart(lists: TallyPart['lists']): TallyPart {
  return {
    decisions: 0,
    matched: 0,
    errors: 0,
    without_inputs: 0,
    changed: 0,
    excluded: 0,
    before: outcomeCounts(),
    after: outcomeCounts(),
    labelled: { fraud: { matched: 0, total: 0 }, legit: { matched: 0, total: 0 } },
    amounts: { fraud: new Map(), legit: new Map(), unlabelled: new Map() },
    changed_by: { fraud: 0, legit: 0, unlabelled: 0 },
    earliest: Infinity,
    examples: [],
    lists,
  };
}

/**
 * Amounts are summed exactly, as integers of 10⁻⁸ (every currency's minor unit, BTC's included):
 * a float sum of a million two-decimal amounts shows its error (3018604.09000001).
 */
export const UNITS = 1e8;

/** Sums per currency, in units, as money: sorted by currency, never adding two currencies. */
function money(sums: ReadonlyArray<[string, bigint]>): Record<string, number> {
  const total = new Map<string, bigint>();
  for (const [c, v] of sums) total.set(c, (total.get(c) ?? 0n) + v);
  return Object.fromEntries([...total].sort(([a], [b]) => a.localeCompare(b)).map(([c, v]) => [c, Number(v) / UNITS]));
}

/** A list filled after the decisions it is tested on is why a list rule matches few or none. */
function notes(lists: TallyPart['lists'], decisions: number, earliest: number): string[] {
  if (decisions === 0) return [];
  const out: string[] = [];
  for (const [list, first] of lists) {
    if (first === null)
      out.push(`list "${list}" had no entries at any decision's time: each decision reads the lists as they were then`);
    else if (first > earliest)
      out.push(
        `list "${list}" got its first entry at ${new Date(first).toISOString()}: decisions before it read it empty`,
      );
  }
  return out;
}

const add = <K extends string>(into: Record<K, number>, from: Record<K, number>): void => {
  for (const k of Object.keys(from) as K[]) into[k] += from[k];
};

/** The parts of consecutive slices, in the window's order (oldest first), as one test's figures. */
export function mergeParts(parts: readonly TallyPart[], lists: TallyPart['lists']): RuleTestResult {
  const total = emptyPart(lists);
  const amounts: Record<LabelKey, Array<[string, bigint]>> = { fraud: [], legit: [], unlabelled: [] };
  for (const p of parts) {
    total.decisions += p.decisions;
    total.matched += p.matched;
    total.errors += p.errors;
    total.without_inputs += p.without_inputs;
    total.changed += p.changed;
    total.excluded += p.excluded;
    add(total.before, p.before);
    add(total.after, p.after);
    for (const l of ['fraud', 'legit'] as const) {
      total.labelled[l].matched += p.labelled[l].matched;
      total.labelled[l].total += p.labelled[l].total;
    }
    add(total.changed_by, p.changed_by);
    for (const k of LABEL_KEYS) amounts[k].push(...p.amounts[k]);
    total.earliest = Math.min(total.earliest, p.earliest);
    total.examples.push(...p.examples);
  }
  return {
    decisions: total.decisions,
    matched: total.matched,
    errors: total.errors,
    without_inputs: total.without_inputs,
    changed: total.changed,
    outcomes: { before: total.before, after: total.after },
    labelled: total.labelled,
    amount_matched: money(LABEL_KEYS.flatMap((k) => amounts[k])),
    by_label: Object.fromEntries(
      LABEL_KEYS.map((k) => [k, { changed: total.changed_by[k], amount_matched: money(amounts[k]) }]),
    ) as RuleTestResult['by_label'],
    excluded: total.excluded,
    notes: notes(lists, total.decisions, total.earliest),
    examples: total.examples.slice(-MAX_EXAMPLES).reverse(),
  };
}
