// A signed peer request is bound to its recipient (docs/network.md, "Signed requests"): a request
// B signed for M, replayed by M at C, is refused by C and costs B's budget there nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { usedInWindow } from '../../src/network/budget-repository.ts';
import { networkDb } from '../../src/network/tables.ts';
import { recipientKey, signedInject, standInPeer } from './support.ts';

describeEachBackend('Signed requests are bound to their recipient', (ctx) => {
  test('a request signed for another deployment is 401 here and costs the budget nothing; the same request signed for this one is served', async () => {
    const b = standInPeer();
    const m = standInPeer();
    const added = await ctx().inject({
      method: 'POST',
      url: '/api/v1/network/peers',
      headers: bearer(await ctx().token()),
      payload: { name: 'market-b', url: 'https://93.184.216.34', signing_key: b.signingKey },
    });
    assert.equal(added.statusCode, 201, added.body);
    const peerId = added.json().id as string;
    const element = (await ctx().inject({ method: 'GET', url: '/network/v1/descriptor' })).json()
      .oprf_public_key as string;

    const forM = await signedInject(
      ctx(),
      b,
      'POST',
      '/network/v1/evaluate',
      { elements: [element, element] },
      {},
      m.signingKey,
    );
    const refused = problem(forM, 401, 'unauthenticated');
    assert.match(String(refused.detail), /recipient/);
    assert.equal(await usedInWindow(networkDb(ctx().store.db), peerId), 0);

    const forC = await signedInject(
      ctx(),
      b,
      'POST',
      '/network/v1/evaluate',
      { elements: [element] },
      {},
      await recipientKey(ctx()),
    );
    assert.equal(forC.statusCode, 200, forC.body);
    assert.equal(await usedInWindow(networkDb(ctx().store.db), peerId), 1);
  });
});
