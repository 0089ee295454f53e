// `npx tsx bench/safe-amount.ts`: how long safe_amount takes in-process, before and after its
// closed form (issue 42, item 4; src/trust/safe-amount-closed.ts), and how often the closed form
// lands. "Before" is safeAmountByBisection, the same code without the closed form; or, with
// BASE=<dir holding another copy of src/>, that copy's safeAmountFrom (as in bench/micro-cpu.ts).
// Both run in one process, interleaved round by round, so they read on the same machine state.
// Inputs: the market-like entities of the property tests (test/helpers/market-profiles.ts) in the
// currencies they quote (0, 2, 3 and 8 decimals), several seeds, and the veteran of docs/api.md's
// worked example with a new counterparty. CPU time, median of the rounds after the first (the
// machine may be shared). Timings live here, not in the tests, which a busy shared machine would
// make flaky. Under tsx each closure made per call also pays esbuild's keepNames wrapper, which
// the built server (tsc) does not: absolute figures here are higher than in production. About
// twenty seconds.
//   N=2000 ROUNDS=7 SEEDS=1,2,3 npx tsx bench/safe-amount.ts
//   cp -r src /tmp/base/ && ln -s $PWD/node_modules /tmp/base/ && BASE=/tmp/base npx tsx bench/safe-amount.ts
import fc from 'fast-check';
import { DEFAULT_POLICY, type Policy } from '../src/model/policy.ts';
import { evaluate, prepare, type Prepared } from '../src/model/signal-model.ts';
import type { EntityProfile, ScoreRequest } from '../src/model/types.ts';
import { safeAmountByBisection, safeAmountFrom, type SafeAmountPaths } from '../src/trust/safe-amount.ts';
import { NOW, requestArb, veteranProfile } from '../test/helpers/profiles.ts';
import { marketPolicyArb, marketProfileArb } from '../test/helpers/market-profiles.ts';

type SafeAmountFrom = (prepared: Prepared, currency: string, policy: Policy) => number | null;
const before: SafeAmountFrom = process.env.BASE
  ? ((await import(`${process.env.BASE}/src/trust/safe-amount.ts`)) as { safeAmountFrom: SafeAmountFrom })
      .safeAmountFrom
  : safeAmountByBisection;
const N = Number(process.env.N ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const SEEDS = (process.env.SEEDS ?? '1,2,3').split(',').map(Number);

interface Case {
  profile: EntityProfile;
  request: ScoreRequest;
  policy: Policy;
  prepared: Prepared;
}

const cases = (seed: number): Case[] =>
  fc
    .sample(fc.tuple(marketProfileArb, requestArb, marketPolicyArb), { numRuns: N, seed })
    .map(([profile, request, policy]) => ({
      profile,
      request,
      policy,
      prepared: prepare(profile, request, policy, NOW),
    }));

const veteran = (): Case[] => {
  const profile = veteranProfile();
  profile.counterpartyTrades = 0;
  const request: ScoreRequest = {
    entity_id: 'e1',
    amount: 100,
    currency: 'USD',
    context: { counterparty_id: 'cp', payment_method: 'bank_transfer' },
  };
  const prepared = prepare(profile, request, DEFAULT_POLICY, NOW);
  return Array.from({ length: N }, () => ({ profile, request, policy: DEFAULT_POLICY, prepared }));
};

type Step = (c: Case) => unknown;
const steps: Record<string, [before: Step, after: Step]> = {
  'safe amount (prepared terms)': [
    (c) => before(c.prepared, c.request.currency, c.policy),
    (c) => safeAmountFrom(c.prepared, c.request.currency, c.policy),
  ],
  // The whole score with its safe amount, as src/trust/scoring.ts runs them (evaluate, then safeAmountFrom).
  'score + safe amount': [
    (c) => before(evaluate(c.profile, c.request, c.policy, NOW).prepared, c.request.currency, c.policy),
    (c) => safeAmountFrom(evaluate(c.profile, c.request, c.policy, NOW).prepared, c.request.currency, c.policy),
  ],
};

/** µs of CPU per call of `f` over `xs`. */
function cpuPerCall(xs: readonly Case[], f: Step): number {
  const t = process.cpuUsage();
  for (const x of xs) f(x);
  const used = process.cpuUsage(t);
  return (used.user + used.system) / xs.length;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sets: Array<[string, Case[]]> = [
  ...SEEDS.map((seed): [string, Case[]] => [`market seed ${seed}`, cases(seed)]),
  ['veteran, new counterparty', veteran()],
];
const lines: string[] = [`before: ${process.env.BASE ? `${process.env.BASE}/src` : 'safeAmountByBisection'}`];
for (const [label, xs] of sets) {
  const paths: SafeAmountPaths = { closed: 0, ends: 0, bisection: 0, exactBisection: 0 };
  let differ = 0;
  for (const c of xs) {
    const after = safeAmountFrom(c.prepared, c.request.currency, c.policy, paths);
    if (!Object.is(after, before(c.prepared, c.request.currency, c.policy))) differ++;
  }
  // Only the cases with a step inside the grid search at all; the rest end on the first tests.
  const interior = xs.filter((c) => {
    const p = { closed: 0, ends: 0, bisection: 0, exactBisection: 0 };
    safeAmountFrom(c.prepared, c.request.currency, c.policy, p);
    return p.ends === 0;
  });
  const groups: Array<[string, readonly Case[]]> = [
    ['all', xs],
    ['step inside', interior],
  ];
  for (const [name, [before, after]] of Object.entries(steps)) {
    for (const [group, ys] of groups) {
      if (ys.length === 0 || (group !== 'all' && ys.length === xs.length)) continue;
      const times: [number[], number[]] = [[], []];
      for (let round = 0; round < ROUNDS; round++) {
        // alternate which goes first, so neither always runs on a warmer cache
        const order = round % 2 ? [1, 0] : [0, 1];
        for (const i of order) times[i]!.push(cpuPerCall(ys, i ? after : before));
      }
      // the first round warms the JIT
      const [b, a] = times.map((t) => median(t.slice(1))) as [number, number];
      lines.push(
        `${label.padEnd(26)} ${`${name} (${group}, ${ys.length})`.padEnd(46)} ${b.toFixed(2)} → ${a.toFixed(2)} µs (×${(b / a).toFixed(1)})`,
      );
    }
  }
  const steps_ = paths.closed + paths.bisection;
  lines.push(
    `${label.padEnd(26)} paths ${JSON.stringify(paths)}; closed form lands ${
      steps_ ? ((100 * paths.closed) / steps_).toFixed(1) : '-'
    }% of steps inside the grid; answers differing from before: ${differ}`,
  );
}
console.log(lines.join('\n'));
