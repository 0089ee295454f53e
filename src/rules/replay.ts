// Testing a rule on the past (docs/rules.md, "Testing a rule"; docs/api.md, "Rules and lists"):
// the pure part. Each stored score decision is turned back into the facts a rule read when it was
// made (its request, its stored signal values, the rule inputs stored beside them) and the tested
// rule runs on them with the lists as they were at that decision's time (replay-lists.ts). The
// tally keeps counts, money per currency and twenty examples: a million decisions cost the same
// memory as a hundred. No I/O here; replay-worker.ts feeds it pages off the event loop.
import { OUTCOMES, type MatchedRule, type Outcome, type RuleFacts, type EntityFacts } from '../model/outcomes.ts';
import type { CompiledRule, ListLookup } from './compile.ts';
import type { evaluateRules } from './decide.ts';
import { replayableFeatures, type FeatureRecord } from '../model/feature-vector.ts';
import type { Policy } from '../model/policy.ts';
import type { ListHistory } from './replay-lists.ts';

/** A stored score decision as the store gives it: JSON columns still text (they cross to the worker). */
export interface ReplayRow {
  id: string;
  subject_id: string;
  created_at: number;
  /** the request summary {amount, currency, side, payment_method, country, …}; null before it was kept */
  request: string | null;
  /** null too when the rule reads no signal (the column is then not read: replay-columns.ts) */
  features: string | null;
  feature_set: number | null;
  /** the score response as answered (score, risk_level, safe_amount); null when the rule reads neither */
  result: string | null;
  risk_level: string | null;
  /** null for decisions made before outcomes existed */
  outcome: string | null;
  /** the matched active rules, MatchedRule[] JSON, null when none */
  rules: string | null;
  label: string | null;
  /** {amount_ref, context, entity, safe_amount}; null for decisions made before rules existed */
  rule_inputs: string | null;
}

/** What the test needs besides the decisions: plain data, built again in the worker. */
export interface ReplaySettings {
  /** risk level → the policy's outcome (the active policy's `outcomes` map, defaults filled in) */
  outcomes: Record<string, Outcome>;
  signalNames: readonly string[];
  disputePrior: Policy['disputePrior'];
  /** decisions whose outcome before was one of these are left out (what the policy already stops) */
  exclude?: readonly Outcome[];
}

type LabelKey = 'fraud' | 'legit' | 'unlabelled';
const LABEL_KEYS: readonly LabelKey[] = ['fraud', 'legit', 'unlabelled'];

interface RuleExample {
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

export const MAX_EXAMPLES = 20;
/** The id a rule under test has when it is not stored yet: no stored decision names it. */
export const UNSAVED_RULE_ID = 'rule_under_test';

const isOutcome = (v: unknown): v is Outcome => typeof v === 'string' && (OUTCOMES as readonly string[]).includes(v);
const finite = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function parse(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

// The score response is large (every signal with its description) and only two numbers of it are
// needed: read them by pattern instead of parsing it. `"score":` and `"safe_amount":` can only
// occur unescaped as keys (a string value escapes its quotes), and `score` comes right after
// `entity_id`, so its first occurrence is the top-level one.
const SCORE = /"score":(-?[0-9.eE+-]+)/;
const SAFE_AMOUNT = /"safe_amount":(-?[0-9.eE+-]+|null)/;
function numberIn(text: string | null, pattern: RegExp): number | null {
  if (text === null) return null;
  const m = pattern.exec(text);
  if (!m || m[1] === 'null') return null;
  return finite(Number(m[1]));
}

/** The facts a live score gave its rules, rebuilt from a stored decision; missing facts are absent. */
export function factsOf(
  row: ReplayRow,
  settings: ReplaySettings,
): { facts: RuleFacts; complete: boolean; amount: number | null } {
  const request = parse(row.request) ?? {};
  const inputs = parse(row.rule_inputs);
  // Today's definitions of the signals (features.ts), since the rule is written against them.
  const stored = parse(row.features) as FeatureRecord | null;
  const values = stored ? replayableFeatures(stored, row.feature_set, settings.disputePrior) : null;
  const signals: Record<string, number> = {};
  if (values) for (const name of settings.signalNames) signals[name] = finite(values[name as keyof FeatureRecord]) ?? 0;
  // Before rule inputs were stored, the request summary kept the context members an operator
  // reads (side, payment method, countries, trade id): they are the context such a decision has.
  const { amount: _a, currency: _c, ...summaryContext } = request;
  const context = (inputs?.context as Record<string, unknown> | undefined) ?? summaryContext;
  const facts: RuleFacts = {
    entity_id: row.subject_id,
    amount: finite(request.amount) ?? Number.NaN,
    currency: typeof request.currency === 'string' ? request.currency : '',
    amount_ref: finite(inputs?.amount_ref),
    context,
    // No entity facts: an empty object, so a condition reading one fails (no match) instead of
    // reading an invented zero.
    entity: (inputs?.entity as EntityFacts | undefined) ?? ({} as EntityFacts),
    signals,
    score: numberIn(row.result, SCORE) ?? Number.NaN,
    risk_level: row.risk_level ?? '',
    safe_amount: inputs && 'safe_amount' in inputs ? finite(inputs.safe_amount) : numberIn(row.result, SAFE_AMOUNT),
  };
  return { facts, complete: inputs !== null, amount: finite(request.amount) };
}

/** A stored matched rule, standing in for itself in the precedence: it matched, with its action. */
function asMatched(stored: MatchedRule): CompiledRule {
  return {
    id: stored.id,
    name: stored.name,
    version: stored.version,
    status: 'active',
    action: stored.action ?? null,
    override: stored.override === true,
    final: stored.final === true,
    lists: [],
    cost: 0,
    evaluate: () => ({ matched: true, reads: {}, cap: null }),
  } as CompiledRule;
}

function storedRules(text: string | null): MatchedRule[] {
  if (text === null) return [];
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v)
      ? (v as MatchedRule[]).filter((r) => r !== null && typeof r === 'object' && typeof r.id === 'string')
      : [];
  } catch {
    return [];
  }
}

const counts = (): Record<Outcome, number> =>
  Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
/**
 * Amounts are summed exactly, as integers of 10⁻⁸ (every currency's minor unit, BTC's included):
 * a float sum of a million two-decimal amounts shows its error (3018604.09000001).
 */
const UNITS = 1e8;
const units = (amount: number): bigint => BigInt(Math.round(amount * UNITS));

/**
 * A rule test fed one decision at a time. The "after" outcome is the decision's outcome with the
 * tested rule active (docs/rules.md, precedence): the rule joins the rules that matched then, so an
 * override approve still loses to a stored final decline. When the decision's own rules include
 * the tested rule (an earlier version), that version is replaced, and the outcome is decided
 * again from the policy's outcome for the decision's risk level.
 */
/** Sums per currency, in units, as money: sorted by currency, never adding two currencies. */
function money(sums: ReadonlyArray<[string, bigint]>): Record<string, number> {
  const total = new Map<string, bigint>();
  for (const [c, v] of sums) total.set(c, (total.get(c) ?? 0n) + v);
  return Object.fromEntries([...total].sort(([a], [b]) => a.localeCompare(b)).map(([c, v]) => [c, Number(v) / UNITS]));
}

export class RuleTestTally {
  private decisions = 0;
  private matched = 0;
  private errors = 0;
  private withoutInputs = 0;
  private changed = 0;
  private readonly before = counts();
  private readonly after = counts();
  private readonly labelled = { fraud: { matched: 0, total: 0 }, legit: { matched: 0, total: 0 } };
  private readonly amounts: Record<LabelKey, Map<string, bigint>> = {
    fraud: new Map(),
    legit: new Map(),
    unlabelled: new Map(),
  };
  private readonly changedBy: Record<LabelKey, number> = { fraud: 0, legit: 0, unlabelled: 0 };
  private excluded = 0;
  private earliest = Infinity;
  /** a ring of the last MAX_EXAMPLES matches */
  private readonly examples: RuleExample[] = [];
  private nextExample = 0;
  private failed = false;

  constructor(
    private readonly rule: CompiledRule,
    private readonly lists: ListHistory,
    private readonly settings: ReplaySettings,
    private readonly decide: typeof evaluateRules,
  ) {}

  private readonly onError = (): void => {
    this.failed = true;
  };

  private policyOutcome(row: ReplayRow): Outcome {
    return this.settings.outcomes[row.risk_level ?? ''] ?? 'approve';
  }

  add(row: ReplayRow): void {
    this.decisions++;
    this.earliest = Math.min(this.earliest, row.created_at);
    const { facts, complete, amount } = factsOf(row, this.settings);
    if (!complete) this.withoutInputs++;
    const before = isOutcome(row.outcome) ? row.outcome : this.policyOutcome(row);
    if (this.settings.exclude?.includes(before)) {
      this.excluded++;
      return;
    }
    const stored = row.outcome === null ? [] : storedRules(row.rules);
    const replaced = stored.some((r) => r.id === this.rule.id);
    const others = stored.filter((r) => r.id !== this.rule.id && r.action !== null).map(asMatched);
    const lookup: ListLookup = this.lists.at(row.created_at);
    this.failed = false;
    const verdict = this.decide(
      [...others, this.rule],
      facts,
      replaced ? this.policyOutcome(row) : before,
      lookup,
      this.onError,
    );
    if (this.failed) this.errors++;
    const match = verdict.rules.find((r) => r.id === this.rule.id);
    const after = match || replaced ? verdict.outcome : before;
    this.before[before]++;
    this.after[after]++;
    const label = row.label === 'fraud' || row.label === 'legit' ? row.label : null;
    if (after !== before) {
      this.changed++;
      this.changedBy[label ?? 'unlabelled']++;
    }
    if (label) this.labelled[label].total++;
    if (!match) return;
    this.matched++;
    if (label) this.labelled[label].matched++;
    const currency = facts.currency === '' ? null : facts.currency;
    if (currency !== null && amount !== null) {
      const sums = this.amounts[label ?? 'unlabelled'];
      sums.set(currency, (sums.get(currency) ?? 0n) + units(amount));
    }
    const example: RuleExample = {
      decision_id: row.id,
      created_at: new Date(row.created_at).toISOString(),
      reads: match.reads,
      before,
      after,
      label,
      amount,
      currency,
    };
    if (this.examples.length < MAX_EXAMPLES) this.examples.push(example);
    else this.examples[this.nextExample] = example;
    this.nextExample = (this.nextExample + 1) % MAX_EXAMPLES;
  }

  /** A list filled after the decisions it is tested on is why a list rule matches few or none. */
  private notes(): string[] {
    if (this.decisions === 0) return [];
    const out: string[] = [];
    for (const list of this.rule.lists) {
      const first = this.lists.firstEntryAt(list);
      if (first === undefined)
        out.push(
          `list "${list}" had no entries at any decision's time: each decision reads the lists as they were then`,
        );
      else if (first > this.earliest)
        out.push(
          `list "${list}" got its first entry at ${new Date(first).toISOString()}: decisions before it read it empty`,
        );
    }
    return out;
  }

  result(): RuleTestResult {
    // The ring's oldest entry is at nextExample once it is full: rotate, then newest first.
    const ordered =
      this.examples.length < MAX_EXAMPLES
        ? [...this.examples]
        : [...this.examples.slice(this.nextExample), ...this.examples.slice(0, this.nextExample)];
    return {
      decisions: this.decisions,
      matched: this.matched,
      errors: this.errors,
      without_inputs: this.withoutInputs,
      changed: this.changed,
      outcomes: { before: { ...this.before }, after: { ...this.after } },
      labelled: { fraud: { ...this.labelled.fraud }, legit: { ...this.labelled.legit } },
      amount_matched: money(LABEL_KEYS.flatMap((k) => [...this.amounts[k]])),
      by_label: Object.fromEntries(
        LABEL_KEYS.map((k) => [k, { changed: this.changedBy[k], amount_matched: money([...this.amounts[k]]) }]),
      ) as RuleTestResult['by_label'],
      excluded: this.excluded,
      notes: this.notes(),
      examples: ordered.reverse(),
    };
  }
}
