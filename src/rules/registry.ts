// The rules a serving process scores with (docs/rules.md), per environment: the compiled active and
// shadow rules and the present entries of the environment's lists, in memory, so a score evaluates
// its rules without a query. live.ts reloads an environment when a `rules` row arrives on the feed
// (any instance's change), before the next request runs. Scoring reaches this only through the
// Decider seam (model/outcomes.ts), handed to it by the composition root.
import type { Counter } from 'prom-client';
import { ENVIRONMENTS, type Environment } from '../lib/principal.ts';
import type { Store } from '../store/db.ts';
import type { Decider, Outcome, RuleFacts, RuleVerdict } from '../model/outcomes.ts';
import { SIGNAL_NAMES } from '../model/policy.ts';
import { compileRule, type CompiledRule, type ListLookup } from './compile.ts';
import { evaluateRules, type RuleGuard } from './decide.ts';
import { RULE_LIMITS } from './cel-env.ts';
import { liveRules } from './repository.ts';
import { parseBody } from './rule-body.ts';
import { currentRevision } from './rule-revision-repository.ts';
import { entryChanges, liveLists, type EntryChange } from './list-repository.ts';
import { MinHeap } from '../lib/min-heap.ts';

interface Loaded {
  /** rule_revisions of the environment when it was loaded */
  revision: number;
  rules: CompiledRule[];
  /** list id → value → expiry (ms; Infinity when none), kept across reloads and changed by deltas */
  entries: Map<string, Map<string, number>>;
  /** list name → its values (the maps of `entries`), rebuilt at each reload */
  lists: Map<string, Map<string, number>>;
  /**
   * the expiry of every entry that has one, as [list id, value] (the strings `entries` holds, not
   * copies); pairs of entries since removed or renewed stay until popped, and are dropped then
   */
  due: MinHeap<readonly [string, string]>;
  /** stored active or shadow rules that no longer compile (skipped) */
  skipped: Array<{ id: string; error: string }>;
}

const empty = (): Loaded => ({
  revision: -1,
  rules: [],
  entries: new Map(),
  lists: new Map(),
  due: new MinHeap(),
  skipped: [],
});

/** Expired entries dropped from memory per call on the scoring path; a larger backlog waits for the next ones. */
const PRUNE_PER_CALL = 5_000;

/**
 * Drops the entries that expired by `now` from memory (at most `max`); true when none is left due.
 * The store keeps them, for rule tests on the past.
 */
function pruneExpired(l: Loaded, now: number, max: number): boolean {
  for (let n = 0; n < max; n++) {
    const next = l.due.peek();
    if (next === undefined || next > now) return true;
    const {
      time,
      item: [list, value],
    } = l.due.pop()!;
    const values = l.entries.get(list);
    if (values?.get(value) === time) values.delete(value);
  }
  const next = l.due.peek();
  return next === undefined || next > now;
}

/** Called once when a rule kept exceeding the run-time budget: it should be set to draft, with `rule.changed`. */
export type SuspendRule = (environment: Environment, rule: CompiledRule, ms: number) => Promise<void>;

export class RuleRegistry implements Decider {
  private readonly loaded: Record<Environment, Loaded> = { live: empty(), test: empty() };
  private errors: Counter<'rule'> | undefined;
  /** consecutive evaluations over the run-time budget, by `<id> v<version>` */
  private readonly overBudget = new Map<string, number>();
  /** rule versions this process stopped evaluating, until the store's status catches up */
  private readonly suspended = new Set<string>();
  private suspend: SuspendRule | undefined;
  private readonly guards: Record<Environment, RuleGuard> = {
    live: this.guardFor('live'),
    test: this.guardFor('test'),
  };

  /** The run-time budget's guard of an environment, as decide() uses it (tests drive it directly). */
  guardOf(environment: Environment): RuleGuard {
    return this.guards[environment];
  }

  constructor(
    private readonly store: Store,
    private readonly signalNames: readonly string[] = SIGNAL_NAMES,
  ) {}

  /** Run-time errors (and rules that no longer compile) are counted here: vouch_rule_errors_total{rule}. */
  meter(errors: Counter<'rule'>): void {
    this.errors = errors;
    for (const environment of ENVIRONMENTS)
      for (const s of this.loaded[environment].skipped) errors.inc({ rule: s.id });
  }

  /** How a rule that keeps exceeding the run-time budget is suspended (the composition root writes it). */
  suspendWith(suspend: SuspendRule): void {
    this.suspend = suspend;
  }

  private guardFor(environment: Environment): RuleGuard {
    return {
      within: (rule) => {
        if (this.overBudget.size > 0) this.overBudget.delete(versionKey(rule));
      },
      exceeded: (rule, ms) => {
        const key = versionKey(rule);
        const count = (this.overBudget.get(key) ?? 0) + 1;
        this.overBudget.set(key, count);
        if (count < RULE_LIMITS.suspendAfter || this.suspended.has(key)) return;
        this.suspended.add(key);
        const l = this.loaded[environment];
        l.rules = l.rules.filter((r) => r !== rule);
        this.suspend?.(environment, rule, ms).catch(() => {
          // the store refused (it is down, or the rule changed meanwhile): this process keeps it out
        });
      },
    };
  }

  /**
   * Reads the environment's (or every environment's) rules and list entries. The revision is read
   * first: a change committed during the load then moves it again, and the feed brings another
   * reload, so a cache key never names data older than what it was computed from.
   */
  /**
   * The next reload of each environment reads its list entries whole, not by delta: an erasure
   * rewrites an entry's value in place (list-erasure-repository.ts), which a delta cannot express.
   */
  rereadWhole(): void {
    for (const env of ENVIRONMENTS) this.whole.add(env);
  }

  private readonly whole = new Set<Environment>();

  async reload(environment?: Environment): Promise<void> {
    for (const env of environment ? [environment] : ENVIRONMENTS) this.loaded[env] = await this.read(env);
  }

  /**
   * The rules are read whole (they are few); the list entries whole the first time, then only
   * those changed since the revision last loaded (030_list_entry_revisions), so a list change
   * costs its delta. Every query runs before anything changes, so a failed read changes nothing.
   */
  private async read(environment: Environment): Promise<Loaded> {
    const db = this.store.db;
    const previous = this.loaded[environment];
    const revision = await currentRevision(db, environment);
    const rows = await liveRules(db, environment);
    const names = await liveLists(db, environment);
    const ids = [...names.keys()];
    const known = previous.revision >= 0 && !this.whole.delete(environment);
    const now = Date.now();
    const changes = known
      ? await entryChanges(db, ids, previous.revision)
      : await entryChanges(db, ids, undefined, now);
    const rules: CompiledRule[] = [];
    const skipped: Loaded['skipped'] = [];
    // a rule whose version and status did not change is not compiled again (a change costs one compile)
    const compiled = new Map(previous.rules.map((r) => [`${versionKey(r)} ${r.status}`, r]));
    for (const row of rows) {
      if (this.suspended.has(`${row.id} v${row.version}`)) continue;
      const reused = compiled.get(`${row.id} v${row.version} ${row.status}`);
      if (reused) {
        rules.push(reused);
        continue;
      }
      try {
        rules.push(
          compileRule(
            { id: row.id, version: row.version, status: row.status as 'active' | 'shadow', body: parseBody(row) },
            this.signalNames,
          ),
        );
      } catch (err) {
        // A rule saved under another engine or signal set: skipped, never a failed score.
        skipped.push({ id: row.id, error: err instanceof Error ? err.message : String(err) });
        this.errors?.inc({ rule: row.id });
      }
    }
    const next: Loaded = known ? { ...previous, revision, rules, skipped } : { ...empty(), revision, rules, skipped };
    applyChanges(next, names, changes, now);
    pruneExpired(next, now, Infinity);
    return next;
  }

  /**
   * `<rule_revisions>.<the next expiry after now>`: two scores with the same revision have no
   * expiry between them, so the same lists, on any instance that loaded it, whenever it loaded
   * (the entries that expired before a load are not held, and not needed to say what is next).
   * While more expired entries are held than one call drops, it names `now` itself: no cache key
   * is shared across an expiry that is not yet dropped.
   */
  revision(environment: Environment, now: number): string {
    const l = this.loaded[environment];
    if (!pruneExpired(l, now, PRUNE_PER_CALL)) return `${l.revision}.~${now}`;
    return `${l.revision}.${l.due.peek() ?? 'never'}`;
  }

  decide(environment: Environment, facts: RuleFacts, policyOutcome: Outcome, now: number): RuleVerdict {
    const l = this.loaded[environment];
    if (l.rules.length === 0)
      return { outcome: policyOutcome, rules: [], shadow_rules: [], safe_amount: facts.safe_amount };
    const lookup: ListLookup = (name, value) => {
      const until = l.lists.get(name)?.get(value);
      return until !== undefined && until > now;
    };
    return evaluateRules(
      l.rules,
      facts,
      policyOutcome,
      lookup,
      (rule) => this.errors?.inc({ rule: rule.id }),
      this.guards[environment],
    );
  }

  /** Whether `value` is a present entry of the list at `now`, as a rule's in_list reads it. */
  has(environment: Environment, list: string, value: string, now: number): boolean {
    const until = this.loaded[environment].lists.get(list)?.get(value);
    return until !== undefined && until > now;
  }

  /** What is loaded, for tests and diagnostics. */
  summary(environment: Environment): { revision: number; rules: number; skipped: number; entries: number } {
    const l = this.loaded[environment];
    let entries = 0;
    for (const v of l.lists.values()) entries += v.size;
    return { revision: l.revision, rules: l.rules.length, skipped: l.skipped.length, entries };
  }
}

const versionKey = (rule: Pick<CompiledRule, 'id' | 'version'>): string => `${rule.id} v${rule.version}`;

/**
 * Applies entry changes in place (synchronously: a score never sees half of them). Removals
 * first: a value has at most one present entry at a time, so whatever is present after them is
 * the value's one entry, whichever order its changes were made in.
 */
function applyChanges(
  l: Loaded,
  names: ReadonlyMap<string, string>,
  changes: readonly EntryChange[],
  now: number,
): void {
  for (const id of [...l.entries.keys()]) if (!names.has(id)) l.entries.delete(id);
  // an entry read already expired is the value's one entry, gone: as a removal
  const gone = (c: EntryChange) => !c.present || (c.expires_at !== null && c.expires_at <= now);
  for (const c of changes) if (gone(c)) l.entries.get(c.list_id)?.delete(c.value);
  for (const c of changes) {
    if (gone(c)) continue;
    let values = l.entries.get(c.list_id);
    if (!values) l.entries.set(c.list_id, (values = new Map()));
    values.set(c.value, c.expires_at ?? Infinity);
    if (c.expires_at !== null) l.due.push(c.expires_at, [c.list_id, c.value]);
  }
  l.lists = new Map();
  let held = 0;
  for (const [id, name] of names) {
    const values = l.entries.get(id) ?? new Map<string, number>();
    l.lists.set(name, values);
    held += values.size;
  }
  // pairs of entries since removed or renewed are dropped only when due: rebuilt when they could outnumber the rest
  if (l.due.size > 2 * held + 1024) l.due = MinHeap.of(expiringPairs(l.entries));
}

function* expiringPairs(entries: Loaded['entries']): Generator<[number, readonly [string, string]]> {
  for (const [list, values] of entries)
    for (const [value, until] of values) if (until !== Infinity) yield [until, [list, value]];
}
