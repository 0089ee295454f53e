// What a rule condition reads (docs/rules.md, "Variables"), built lazily from a score's facts: one
// object per score, shared by every rule, each root computed when a rule first reads it — a score
// whose rules read only `amount` and `context` never builds the entity or the ~40 signals. cel-js
// reads a variable as `activation[name]` and compiled predicates (predicate.ts) read the same
// getters, so both see one value per root.
import type { RuleFacts } from '../model/outcomes.ts';

/** Entity facts as a CEL object type: a misspelt field is a save-time error. */
export class EntityObject {
  account_age_days: number;
  completed_trades: number;
  chargebacks: number;
  fraud_reports: number;
  disputes_lost: number;
  first_seen_at: unknown;
  constructor(e: Partial<RuleFacts['entity']> | undefined) {
    this.account_age_days = num(e?.account_age_days);
    this.completed_trades = num(e?.completed_trades);
    this.chargebacks = num(e?.chargebacks);
    this.fraud_reports = num(e?.fraud_reports);
    this.disputes_lost = num(e?.disputes_lost);
    this.first_seen_at = e?.first_seen_at ?? null;
  }
}

/**
 * Signals as a CEL object type with one double per signal of the policy, so `signals.nope` is
 * refused when saved. cel-js finds the type by `constructor` and reads fields with `obj[key]`, so
 * an activation's signals are one Object.assign over a per-environment prototype holding a 0 for
 * every signal — "0 when not present" without a store per name on every score.
 */
export class SignalsObject {}

/**
 * The roots of one score's activation. Every getter is a variable of cel-env.ts's VARIABLE_TYPES
 * (its `satisfies` clause holds the two lists together); the costlier roots are kept once built.
 */
export class LazyActivation {
  #entity: EntityObject | undefined = undefined;
  #signals: object | undefined = undefined;
  #context: object | undefined = undefined;
  #plainSignals: boolean | undefined = undefined;
  readonly #facts: RuleFacts;
  readonly #signalDefaults: object;

  constructor(facts: RuleFacts, signalDefaults: object) {
    this.#facts = facts;
    this.#signalDefaults = signalDefaults;
  }

  get entity_id(): unknown {
    return this.#facts.entity_id;
  }
  get amount(): number {
    return num(this.#facts.amount);
  }
  get currency(): unknown {
    return this.#facts.currency;
  }
  get amount_ref(): number | null {
    const v = this.#facts.amount_ref;
    return v == null ? null : num(v);
  }
  get context(): object {
    if (this.#context !== undefined) return this.#context;
    const context = this.#facts.context ?? {};
    // cel-js reads only own members of a plain object; anything else is copied into one without a prototype
    this.#context =
      Object.getPrototypeOf(context) === Object.prototype
        ? context
        : Object.assign(Object.create(null) as Record<string, unknown>, context);
    return this.#context;
  }
  get entity(): EntityObject {
    return (this.#entity ??= new EntityObject(this.#facts.entity));
  }
  /**
   * `signals[name]` for a compiled predicate, without building the signals object when the facts'
   * signals are a plain record (what Object.assign would copy decides it, else the 0 default);
   * NOT_PLAIN when they are not, and the predicate then reads the built object as cel-js does.
   */
  signal(name: string): unknown {
    const s = this.#facts.signals as unknown;
    if (this.#signals === undefined && (this.#plainSignals ??= plainRecord(s))) {
      return s != null && isEnumerable.call(s, name)
        ? (s as Record<string, unknown>)[name]
        : (this.#signalDefaults as Record<string, unknown>)[name];
    }
    return NOT_PLAIN;
  }
  get signals(): object {
    if (this.#signals !== undefined) return this.#signals;
    const signals = Object.create(this.#signalDefaults) as Record<string, unknown>;
    if (this.#facts.signals) Object.assign(signals, this.#facts.signals);
    return (this.#signals = signals);
  }
  get score(): number {
    return num(this.#facts.score);
  }
  get risk_level(): unknown {
    return this.#facts.risk_level;
  }
  get safe_amount(): number | null {
    const v = this.#facts.safe_amount;
    return v == null ? null : num(v);
  }
}

export type Activation = LazyActivation;

export const NOT_PLAIN: unique symbol = Symbol('not a plain record');
const isEnumerable = Object.prototype.propertyIsEnumerable;

/** Absent, or a record whose own members Object.assign copies as they are (no prototype or constructor key). */
function plainRecord(s: unknown): boolean {
  if (s === undefined || s === null) return true;
  return (
    typeof s === 'object' &&
    Object.getPrototypeOf(s) === Object.prototype &&
    !Object.hasOwn(s, '__proto__') &&
    !Object.hasOwn(s, 'constructor')
  );
}

/** CEL doubles are JS numbers; anything else (a stored string, undefined) becomes NaN, which compares false. */
function num(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : Number.NaN;
}
