// Ad-hoc: the pure-CPU parts of a score, timed in-process on profiles read from the profiling
// store (bench/profile-run.ts builds /work/prof/bench.db). With BASE=<dir holding another copy of
// src/> the same steps are timed on that copy too, interleaved in one run, so a change can be
// read as before → after on the same machine state:
//   git archive main src | tar -x -C /tmp/base && ln -s $PWD/node_modules /tmp/base/
//   BASE=/tmp/base npx tsx bench/micro-cpu.ts
import { openStore } from '../src/store/db.ts';
import { DEFAULT_POLICY } from '../src/model/policy.ts';
import { loadProfile } from '../src/trust/profile.ts';
import type { EntityProfile, ScoreRequest } from '../src/model/types.ts';
import { entityId, rng } from './data.ts';

const DB = process.env.DB ?? '/work/prof/bench.db';
const N = Number(process.env.N ?? 4000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);

const store = openStore(`sqlite:${DB}`);
const random = rng(9);
const now = Date.now();
const currencies = ['USD', 'EUR', 'NGN', 'USDT', 'BTC'];
const reqs: ScoreRequest[] = Array.from({ length: N }, (_, i) => {
  const e = Math.floor(random() * 10000);
  return {
    entity_id: entityId(e),
    amount: Math.round(50 + random() * 500),
    currency: currencies[e % 5]!,
    context: {
      counterparty_id: entityId(Math.floor(random() * 10000)),
      payment_method: i % 3 ? 'bank_transfer' : 'card',
      side: 'sell',
    },
  };
});
const texts = reqs.map((r) => JSON.stringify(r));
const profiles: EntityProfile[] = [];
for (const r of reqs) {
  profiles.push(
    (
      await loadProfile(store, {
        environment: 'live',
        entityId: r.entity_id,
        currency: r.currency,
        counterpartyId: r.context.counterparty_id,
        now,
      })
    ).profile,
  );
}
await store.close();

async function load(root: string) {
  const model = await import(`${root}/src/model/signal-model.ts`);
  const safe = await import(`${root}/src/trust/safe-amount.ts`);
  const features = await import(`${root}/src/model/feature-vector.ts`);
  const idGen = await import(`${root}/src/lib/ids.ts`);
  const ids = await import(`${root}/src/lib/identifiers.ts`);
  const schemas = await import(`${root}/src/trust/schemas.ts`);
  const cache = await import(`${root}/src/trust/cache.ts`);
  const validation = await import(`${root}/src/http/validation.ts`);
  const validate = validation.compileBodyValidator(schemas.ScoreBody);
  const results: Array<{ result: unknown; values: unknown }> = new Array(N);
  const policy = DEFAULT_POLICY;
  const steps: Record<string, (i: number) => unknown> = {
    // evaluate: the score and the values and prepared terms it hands on (src/model/signal-model.ts).
    scoreEntity: (i) => (results[i] = model.evaluate(profiles[i], reqs[i], policy, now)),
    safeAmount: (i) => safe.safeAmount(profiles[i], reqs[i], policy, now),
    learningColumns: (i) => features.learningColumns(results[i]!.values, reqs[i], results[i]!.result, null),
    'score+safe+learning': (i) => {
      const { result, values, prepared } = model.evaluate(profiles[i], reqs[i], policy, now);
      safe.safeAmountFrom(prepared, reqs[i]!.currency, policy);
      return features.learningColumns(values, reqs[i], result, null);
    },
    'score+safe (one dispute party)': (i) => {
      const { prepared } = model.evaluate(profiles[i], reqs[i], policy, now);
      return safe.safeAmountFrom(prepared, reqs[i]!.currency, policy);
    },
    newId: () => idGen.newId('dec'),
    'looksLikeRawIdentifier x2': (i) => [
      ids.looksLikeRawIdentifier(reqs[i]!.entity_id),
      ids.looksLikeRawIdentifier(reqs[i]!.context.counterparty_id),
    ],
    // A freshly parsed body each time, as a request has (the parse is timed on both sides).
    'JSON.parse + ajv + checkScoreBody': (i) => {
      const body = JSON.parse(texts[i]!);
      validate(body);
      return schemas.checkScoreBody(body, policy.cryptoAssets, {});
    },
    cacheKey: (i) =>
      cache.cacheKey({
        principalId: 'key_x',
        policyVersion: policy.version,
        entityId: reqs[i]!.entity_id,
        amount: reqs[i]!.amount,
        currency: reqs[i]!.currency,
        context: reqs[i]!.context,
      }),
    requestDigest: (i) => cache.requestDigest(reqs[i]),
  };
  return steps;
}

const impls: Array<[string, Record<string, (i: number) => unknown>]> = [];
if (process.env.BASE) impls.push(['before', await load(process.env.BASE)]);
impls.push(['after', await load(new URL('..', import.meta.url).pathname.replace(/\/$/, ''))]);

const times = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const [label, steps] of round % 2 ? [...impls].reverse() : impls) {
    for (const [name, f] of Object.entries(steps)) {
      // CPU time rather than wall time: the machine may be shared, and preemption is not cost.
      const t = process.cpuUsage();
      for (let i = 0; i < N; i++) f(i);
      const used = process.cpuUsage(t);
      const us = (used.user + used.system) / N;
      const key = `${name}\t${label}`;
      times.set(key, [...(times.get(key) ?? []), us]);
    }
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const names = [...new Set([...times.keys()].map((k) => k.split('\t')[0]!))];
for (const name of names) {
  const cells = impls.map(([label]) => median(times.get(`${name}\t${label}`)!.slice(1)).toFixed(2));
  console.log(`${name.padEnd(32)} ${cells.join(' → ')} µs`);
}
