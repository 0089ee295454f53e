// What rules add to a score (issue 42, item 5: 100 realistic active rules add at most 20 µs):
// evaluateRules core-µs per score with 0, 10 and 100 active rules, by process.cpuUsage over many
// iterations — see measure() for the two figures. Two rule sets: the seven shapes a desk writes
// (SHAPES, tuned so that a score matches a few of them, as a desk's rules do: comparisons, `in` a
// list, in_list, has, !, && and ||, all compiled to predicates), and the earlier mix (TEMPLATES:
// most rules do not match a given score, a few do and record their reads, some look up lists, one
// in ten carries a cap expression, and some are shapes only cel-js runs: a comprehension,
// re2_matches). Each set runs twice in the same process, alternating: every condition in cel-js
// (`compileRule(..., { predicates: false })`, the baseline) and compiled.
// Run: `tsx bench/rules-cost.ts` (pin it: `taskset -c 1 node --import tsx bench/rules-cost.ts`).
import { compileRule, isCompiledPredicate, type CompiledRule, type RuleBody } from '../src/rules/compile.ts';
import { evaluateRules } from '../src/rules/decide.ts';
import { SIGNAL_NAMES } from '../src/model/policy.ts';
import type { RuleFacts } from '../src/model/outcomes.ts';

type Template = (i: number) => Omit<RuleBody, 'name'>;

/** The seven shapes of a desk's rules (issue 42), each with its thresholds varied by i. */
const SHAPES: Template[] = [
  (i) => ({
    condition: `amount > ${3000 + i * 100} && context.payment_method in ["card", "e_wallet", "mobile_money"]`,
    action: 'review',
  }),
  (i) => ({
    condition: `has(context.${['counterparty_id', 'ip', 'device'][i % 3]}) && in_list("mules_${i % 3}", context.${['counterparty_id', 'ip', 'device'][i % 3]})`,
    action: 'decline',
    final: true,
  }),
  (i) => ({ condition: `signals.velocity_trades > 0.8${i % 10}`, action: 'hold' }),
  (i) => ({
    condition: `entity.account_age_days < ${7 + i} && amount_ref != null && amount_ref > ${5 + (i % 3)}`,
    action: 'hold',
  }),
  (i) => ({
    condition: `has(context.country) && context.country == "${['NG', 'GH', 'KE'][i % 3]}" && amount > ${3000 + i * 10}.0`,
    cap: 200 + i,
  }),
  (i) => ({ condition: `risk_level == "high" && signals.new_counterparty > 0.8${i % 10}`, action: 'decline' }),
  (i) => ({
    condition: `!(currency == "USDT" || currency == "EUR") || entity.chargebacks > ${i % 3} && score >= ${60 + (i % 40)}`,
    action: 'review',
  }),
];

const TEMPLATES: Template[] = [
  (i) => ({ condition: `amount > ${1000 + i * 250}.0 && context.payment_method == "card"`, action: 'review' }),
  (i) => ({
    condition: `entity.completed_trades == 0 && amount_ref != null && amount_ref > ${2 + i}.0`,
    action: 'hold',
  }),
  (i) => ({ condition: `in_list("mules_${i % 3}", context.counterparty_id)`, action: 'decline', final: true }),
  (i) => ({ condition: `signals.velocity_trades > 0.${(i % 9) + 1} && risk_level != "low"`, action: 'review' }),
  (i) => ({
    condition: `has(context.country) && context.country in ["NG", "GH", "KE"] && entity.account_age_days < ${7 + i}.0`,
    cap: `amount_ref != null ? ${100 + i}.0 * amount_ref : 200.0`,
  }),
  (i) => ({ condition: `score >= ${60 + (i % 40)} && currency == "USDT"`, action: 'hold' }),
  (i) => ({ condition: `entity.chargebacks > ${i % 4} || entity.fraud_reports > 0`, action: 'decline' }),
  (i) => ({ condition: `context.items.exists(x, x > ${100 * (i + 1)}.0)`, action: 'review' }),
  (i) => ({ condition: `re2_matches(entity_id, "^ent_test_${i}[0-9]+$")`, action: 'approve', override: true }),
  (i) => ({
    condition: `amount > ${500 + i}.0 && entity.completed_trades < 3 && signals.new_counterparty > 0.5`,
    cap: 300 + i,
  }),
];

function rules(templates: Template[], n: number, predicates: boolean): CompiledRule[] {
  return Array.from({ length: n }, (_, i) => {
    const body = {
      name: `rule ${i}`,
      ...templates[i % templates.length]!(Math.floor(i / templates.length)),
    } as RuleBody;
    return compileRule({ id: `rul_${i}`, version: 1, status: 'active', body }, SIGNAL_NAMES, { predicates });
  });
}

function facts(k: number): RuleFacts {
  return {
    entity_id: `ent_${k.toString(36)}`,
    amount: 200 + (k % 40) * 100,
    currency: k % 3 === 0 ? 'EUR' : 'USDT',
    amount_ref: k % 5 === 0 ? null : 0.5 + (k % 7),
    context: {
      payment_method: k % 2 ? 'card' : 'sepa',
      country: ['NG', 'DE', 'KE', 'FR'][k % 4]!,
      counterparty_id: `ent_cp${k % 50}`,
      ...(k % 3 === 0 ? { ip: `10.0.0.${k % 200}` } : {}),
      ...(k % 4 === 0 ? {} : { device: `dev_${k % 97}` }),
      items: [10, 20 + (k % 30)],
    },
    entity: {
      account_age_days: k % 30,
      completed_trades: k % 4,
      chargebacks: k % 11 === 0 ? 1 : 0,
      fraud_reports: 0,
      disputes_lost: 0,
      first_seen_at: null,
    },
    signals: Object.fromEntries(SIGNAL_NAMES.map((n, j) => [n, ((k + j) % 10) / 10])),
    score: k % 100,
    risk_level: ['low', 'medium', 'high', 'critical'][k % 4]!,
    safe_amount: 1000 + (k % 20) * 50,
  };
}

const MULES = new Set(['ent_cp7', 'ent_cp13', '10.0.0.9', 'dev_5']);
const lookup = (name: string, value: string): boolean => name.startsWith('mules_') && MULES.has(value);

/**
 * Two figures per rule count. core-µs: process.cpuUsage (user + system) over 15 rounds, the least
 * round — CPU time, so waiting for a core does not count, though a busy machine still slows the
 * core through caches and hyper-threads. min-µs: the least wall time over 400 rounds short enough
 * (~1 ms) to fit in one scheduler slice — the figure an idle machine would show.
 */
function measure(
  set: CompiledRule[],
  inputs: RuleFacts[],
  perRound: number,
): { core: number; min: number; matched: number } {
  let matched = 0;
  let k = 0;
  const once = (): void => {
    matched += evaluateRules(set, inputs[k++ % inputs.length]!, 'approve', lookup).rules.length;
  };
  for (let i = 0; i < 3_000; i++) once();
  let core = Infinity;
  for (let r = 0; r < 15; r++) {
    const before = process.cpuUsage();
    for (let i = 0; i < perRound; i++) once();
    const used = process.cpuUsage(before);
    core = Math.min(core, (used.user + used.system) / perRound);
  }
  const short = Math.max(5, Math.round(perRound / 200));
  let min = Infinity;
  for (let r = 0; r < 400; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < short; i++) once();
    min = Math.min(min, Number(process.hrtime.bigint() - t0) / 1e3 / short);
  }
  return { core, min, matched: matched / k };
}

const inputs = Array.from({ length: 1_000 }, (_, k) => facts(k));
const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
console.log(`node ${process.version}; load average ${load}; µs per score (added: over 0 rules)\n`);
const base = measure([], inputs, 20_000);
console.log(`0 rules: core-µs ${base.core.toFixed(2)}, min-µs ${base.min.toFixed(2)}\n`);
console.log('rule set         rules  engine     core-µs   added    min-µs   added   matched/score  compiled');
const SETS: Array<[string, Template[]]> = [
  ['seven shapes', SHAPES],
  ['earlier mix', TEMPLATES],
];
for (const [label, templates] of SETS) {
  for (const n of [10, 100]) {
    // alternated in one process: the baseline and the compiled rules see the same machine
    for (const predicates of [false, true, false, true]) {
      const set = rules(templates, n, predicates);
      const r = measure(set, inputs, n === 100 ? 2_000 : 10_000);
      const compiled = set.filter(isCompiledPredicate).length;
      const row = [
        r.core.toFixed(2),
        (r.core - base.core).toFixed(2),
        r.min.toFixed(2),
        (r.min - base.min).toFixed(2),
        r.matched.toFixed(2),
      ];
      console.log(
        `${label.padEnd(15)} ${String(n).padStart(6)}  ${(predicates ? 'compiled' : 'cel-js').padEnd(8)} ${row[0]!.padStart(9)}  ${row[1]!.padStart(6)}   ${row[2]!.padStart(7)}  ${row[3]!.padStart(6)}   ${row[4]!.padStart(13)}  ${String(compiled).padStart(8)}`,
      );
    }
  }
}
