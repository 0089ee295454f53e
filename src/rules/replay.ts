// Testing a rule on the past (docs/rules.md, "Testing a rule"; docs/api.md, "Rules and lists"):
// the pure part. Each stored score decision is turned back into the facts a rule read when it was
// made (its request, its stored signal values, the rule inputs stored beside them) and the tested
// rule runs on them with the lists as they were at that decision's time (replay-lists.ts). The
// tally keeps counts, money per currency and twenty examples: a million decisions cost the same
// memory as a hundred. No I/O here; replay-worker.ts feeds it pages off the event loop.
import { OUTCOMES, type MatchedRule, type Outcome, type RuleFacts, type EntityFacts } from '../model/outcomes.ts';
import type { CompiledRule, ListLookup } from './compile.ts';
import type { evaluateRules } from './decide.ts';
import { decodeFeaturesOrNull, replayableFeatures, type FeatureRecord } from '../model/feature-vector.ts';
import { storedContext, storedEntity } from '../model/stored-rule-inputs.ts';
import type { Policy } from '../model/policy.ts';
import type { ListHistory } from './replay-lists.ts';
import { finite, numberIn, SAFE_AMOUNT, SCORE, storedRules } from './replay-text.ts';
import { parseJsonObject as parse } from '../lib/json-object.ts';
import {
  emptyPart,
  mergeParts,
  MAX_EXAMPLES,
  UNITS,
  type RuleExample,
  type RuleTestResult,
  type TallyPart,
} from './replay-merge.ts';

export { MAX_EXAMPLES, type RuleTestResult } from './replay-merge.ts';

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
  /**
   * {amount_ref, context, entity, safe_amount}, or its short form (model/stored-rule-inputs.ts);
   * null for decisions made before rules existed
   */
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

/** The test's id of a rule that is not stored yet: no stored decision names it. */
export const UNSAVED_RULE_ID = 'rule_under_test';

const isOutcome = (v: unknown): v is Outcome => typeof v === 'string' && (OUTCOMES as readonly string[]).includes(v);

/**
 * The facts a live score gave its rules, rebuilt from a stored decision; missing facts are absent.
 * Each is decoded when first read: after reading the rows, decoding JSON is most of a test's work,
 * and a condition that reads only `amount` and `entity` never parses the feature vector or the
 * score response (docs/benchmarks.md, "Rule tests"). The rule's activation reads these getters
 * (predicate-activation.ts); the precedence reads `safe_amount` for every decision, so it is
 * decoded only when the rule reads it (`readsSafeAmount`, replay-columns.ts) and null otherwise.
 */
export class StoredFacts implements RuleFacts {
  #request: Record<string, unknown> | undefined;
  #inputs: Record<string, unknown> | null | undefined;
  #context: Record<string, unknown> | undefined;
  #signals: Record<string, number> | undefined;
  #entity: EntityFacts | undefined;

  constructor(
    private readonly row: ReplayRow,
    private readonly settings: ReplaySettings,
    private readonly readsSafeAmount = true,
  ) {}

  private get request(): Record<string, unknown> {
    return (this.#request ??= parse(this.row.request) ?? {});
  }
  private get inputs(): Record<string, unknown> | null {
    if (this.#inputs === undefined) this.#inputs = parse(this.row.rule_inputs);
    return this.#inputs;
  }
  get entity_id(): string {
    return this.row.subject_id;
  }
  get amount(): number {
    return finite(this.request.amount) ?? Number.NaN;
  }
  get currency(): string {
    const c = this.request.currency;
    return typeof c === 'string' ? c : '';
  }
  get amount_ref(): number | null {
    return finite(this.inputs?.amount_ref);
  }
  get context(): Record<string, unknown> {
    if (this.#context) return this.#context;
    // The request summary keeps the context members an operator reads (side, payment method,
    // countries, trade id): the short form stores only the others, and a decision made before rule
    // inputs were stored has those.
    const inputs = this.inputs;
    const { amount: _a, currency: _c, ...summaryContext } = inputs?.context == null ? this.request : {};
    return (this.#context = storedContext(inputs, summaryContext));
  }
  get entity(): EntityFacts {
    // No entity facts: an empty object, so a condition reading one fails (no match) instead of
    // reading an invented zero.
    return (this.#entity ??= storedEntity(this.inputs, Number(this.row.created_at)) ?? ({} as EntityFacts));
  }
  get signals(): Record<string, number> {
    if (this.#signals) return this.#signals;
    // Today's definitions of the signals (features.ts), since the rule is written against them.
    const stored = decodeFeaturesOrNull(this.row.features);
    const values = stored ? replayableFeatures(stored, this.row.feature_set, this.settings.disputePrior) : null;
    const signals: Record<string, number> = {};
    if (values)
      for (const name of this.settings.signalNames) signals[name] = finite(values[name as keyof FeatureRecord]) ?? 0;
    return (this.#signals = signals);
  }
  get score(): number {
    return numberIn(this.row.result, SCORE) ?? Number.NaN;
  }
  get risk_level(): string {
    return this.row.risk_level ?? '';
  }
  get safe_amount(): number | null {
    if (!this.readsSafeAmount) return null;
    const inputs = this.inputs;
    return inputs && 'safe_amount' in inputs ? finite(inputs.safe_amount) : numberIn(this.row.result, SAFE_AMOUNT);
  }
  /** The request's amount, null when it has none. */
  get requestAmount(): number | null {
    return finite(this.request.amount);
  }
}

/** The facts of a stored decision, whether it had rule inputs, and its amount. */
export function factsOf(
  row: ReplayRow,
  settings: ReplaySettings,
): { facts: StoredFacts; complete: boolean; amount: number | null } {
  const facts = new StoredFacts(row, settings);
  return { facts, complete: row.rule_inputs !== null, amount: facts.requestAmount };
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

const units = (amount: number): bigint => BigInt(Math.round(amount * UNITS));

/**
 * A rule test fed one decision at a time, in the window's order. The "after" outcome is the
 * decision's outcome with the tested rule active (docs/rules.md, precedence): the rule joins the
 * rules that matched then, so an override approve still loses to a stored final decline. When the
 * decision's own rules include the tested rule (an earlier version), that version is replaced, and
 * the outcome is decided again from the policy's outcome for the decision's risk level.
 */
export class RuleTestTally {
  private readonly tally: TallyPart;
  /** the last MAX_EXAMPLES matches, a ring whose oldest entry is at nextExample once it is full */
  private nextExample = 0;
  private failed = false;

  constructor(
    private readonly rule: CompiledRule,
    private readonly lists: ListHistory,
    private readonly settings: ReplaySettings,
    private readonly decide: typeof evaluateRules,
    /** whether the rule reads `safe_amount` (replay-columns.ts, columnsRead); true unless told */
    private readonly readsSafeAmount = true,
  ) {
    this.tally = emptyPart(rule.lists.map((name) => [name, lists.firstEntryAt(name) ?? null]));
  }

  private readonly onError = (): void => {
    this.failed = true;
  };

  private policyOutcome(row: ReplayRow): Outcome {
    return this.settings.outcomes[row.risk_level ?? ''] ?? 'approve';
  }

  add(row: ReplayRow): void {
    const t = this.tally;
    t.decisions++;
    if (row.created_at < t.earliest) t.earliest = row.created_at;
    if (row.rule_inputs === null) t.without_inputs++;
    const before = isOutcome(row.outcome) ? row.outcome : this.policyOutcome(row);
    if (this.settings.exclude?.includes(before)) {
      t.excluded++;
      return;
    }
    const facts = new StoredFacts(row, this.settings, this.readsSafeAmount);
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
    if (this.failed) t.errors++;
    const match = verdict.rules.find((r) => r.id === this.rule.id);
    const after = match || replaced ? verdict.outcome : before;
    t.before[before]++;
    t.after[after]++;
    const label = row.label === 'fraud' || row.label === 'legit' ? row.label : null;
    if (after !== before) {
      t.changed++;
      t.changed_by[label ?? 'unlabelled']++;
    }
    if (label) t.labelled[label].total++;
    if (!match) return;
    t.matched++;
    if (label) t.labelled[label].matched++;
    const money = { amount: facts.requestAmount, currency: facts.currency === '' ? null : facts.currency };
    if (money.currency !== null && money.amount !== null) {
      const sums = t.amounts[label ?? 'unlabelled'];
      sums.set(money.currency, (sums.get(money.currency) ?? 0n) + units(money.amount));
    }
    const example: RuleExample = {
      decision_id: row.id,
      created_at: new Date(row.created_at).toISOString(),
      reads: match.reads,
      before,
      after,
      label,
      ...money,
    };
    if (t.examples.length < MAX_EXAMPLES) t.examples.push(example);
    else t.examples[this.nextExample] = example;
    this.nextExample = (this.nextExample + 1) % MAX_EXAMPLES;
  }

  /** The tally so far as a part (replay-merge.ts): its examples oldest first. */
  part(): TallyPart {
    const examples =
      this.tally.examples.length < MAX_EXAMPLES
        ? [...this.tally.examples]
        : [...this.tally.examples.slice(this.nextExample), ...this.tally.examples.slice(0, this.nextExample)];
    return { ...this.tally, examples };
  }

  result(): RuleTestResult {
    return mergeParts([this.part()], this.tally.lists);
  }
}
