// What a peer's evaluate request costs it (docs/network.md, "Asking"): every element is paid from
// its budget before any is looked at, so a batch refused for a bad element is not a free way to
// spend this deployment's CPU; the checks run in the worker thread; a peer past 80 % of its budget
// in 24 hours raises vouch_network_budget_alerts_total once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { usedInWindow } from '../../src/network/budget-repository.ts';
import { evaluateBlindedOff } from '../../src/network/oprf-thread.ts';
import { generateOprfKey } from '../../src/network/oprf.ts';
import { networkDb } from '../../src/network/tables.ts';
import { signedInject, standInPeer } from './support.ts';

const alerts = (metrics: string, peerId: string) =>
  Number(new RegExp(`vouch_network_budget_alerts_total\\{peer_id="${peerId}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);

describeEachBackend('Evaluate requests are charged', (ctx) => {
  let element: string;
  const addPeer = async (budget: number) => {
    const peer = standInPeer();
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/network/peers',
      headers: bearer(await ctx().token()),
      payload: {
        name: `p${budget}`,
        url: 'https://93.184.216.34',
        signing_key: peer.signingKey,
        budget_per_day: budget,
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    element ??= (await ctx().inject({ method: 'GET', url: '/network/v1/descriptor' })).json().oprf_public_key as string;
    return { peer, id: res.json().id as string };
  };

  test('a batch refused for one bad element is charged in full, and the budget it spent is gone', async () => {
    const { peer, id } = await addPeer(1000);
    const elements = Array.from({ length: 1000 }, (_, i) => (i === 500 ? 'A'.repeat(43) : element));
    const refused = problem(
      await signedInject(ctx(), peer, 'POST', '/network/v1/evaluate', { elements }),
      400,
      'validation_failed',
    );
    assert.deepEqual(
      (refused.errors as Array<{ field: string }>).map((e) => e.field),
      ['/elements/500'],
    );
    assert.equal(await usedInWindow(networkDb(ctx().store.db), id), 1000);
    problem(
      await signedInject(ctx(), peer, 'POST', '/network/v1/evaluate', { elements: [element] }),
      429,
      'rate_limited',
    );
  });

  test('a peer that passes 80 % of its budget is alerted on once', async () => {
    const { peer, id } = await addPeer(10);
    const evaluate = async (n: number) =>
      assert.equal(
        (
          await signedInject(ctx(), peer, 'POST', '/network/v1/evaluate', {
            elements: Array.from({ length: n }, () => element),
          })
        ).statusCode,
        200,
      );
    const metrics = async () => (await ctx().inject({ method: 'GET', url: '/metrics' })).body;
    await evaluate(7);
    assert.equal(alerts(await metrics(), id), 0);
    await evaluate(1);
    const after = await metrics();
    assert.equal(alerts(after, id), 1);
    assert.match(after, new RegExp(`vouch_network_budget_used_ratio\\{peer_id="${id}"\\} 0\\.8`));
    await evaluate(2);
    assert.equal(alerts(await metrics(), id), 1);
  });

  test('the element checks run in the worker: the first bad element is named, the identity and non-canonical encodings included', async () => {
    const keys = generateOprfKey();
    const identity = Buffer.alloc(32).toString('base64url');
    assert.deepEqual(await evaluateBlindedOff(keys, [element, identity]), { bad: 1 });
    // The same 32 bytes with a padding bit set in the last character: not canonical base64url.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const nonCanonical = element.slice(0, 42) + alphabet[alphabet.indexOf(element.at(-1)!) | 1]!;
    assert.deepEqual(await evaluateBlindedOff(keys, [nonCanonical, element]), { bad: 0 });
    const answer = await evaluateBlindedOff(keys, [element]);
    assert.ok('evaluated' in answer && answer.evaluated.length === 1 && answer.proof.length === 86);
  });
});
