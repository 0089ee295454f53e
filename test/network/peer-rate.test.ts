// Each peer's request rate on /network/v1 (docs/network.md, "A peer's request rate"): a flags page
// costs a unit per 1,000 entries asked, past 120 units a minute the peer gets 429 with
// Retry-After, other peers are unaffected, and requests forged under its key spend none of it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { HEADER } from '../../src/network/peer-auth.ts';
import { PEER_UNITS_PER_WINDOW } from '../../src/network/peer-rate.ts';
import { signedInject, standInPeer } from './support.ts';

describeEachBackend("A peer's request rate", (ctx) => {
  test('past its allowance a peer gets 429 with Retry-After, forged requests under its key spend nothing of it, and another peer is still served', async () => {
    const admin = await ctx().token();
    const add = async (name: string, key: string) => {
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/network/peers',
        headers: bearer(admin),
        payload: { name, url: 'https://93.184.216.34', signing_key: key },
      });
      assert.equal(res.statusCode, 201, res.body);
    };
    const greedy = standInPeer();
    const other = standInPeer();
    await add('greedy', greedy.signingKey);
    await add('other', other.signingKey);
    const page = '/network/v1/flags?limit=5000';

    // Someone without the peer's private key sends requests under its key: refused, and counted nowhere.
    for (let i = 0; i < 5; i++) {
      problem(
        await signedInject(ctx(), greedy, 'GET', page, undefined, { [HEADER.signature]: 'A'.repeat(86) }),
        401,
        'unauthenticated',
      );
    }
    // A page of 5,000 entries costs 5 units: the whole allowance is 24 of them.
    for (let i = 0; i < PEER_UNITS_PER_WINDOW / 5; i++) {
      const res = await signedInject(ctx(), greedy, 'GET', page);
      assert.equal(res.statusCode, 200, `page ${i}: ${res.body}`);
    }
    const limited = await signedInject(ctx(), greedy, 'GET', page);
    const body = problem(limited, 429, 'rate_limited');
    assert.match(String(body.detail), /request rate/);
    const retry = Number(limited.headers['retry-after']);
    assert.ok(retry >= 1 && retry <= 60, String(retry));
    // Refused before its body is read, and an evaluate batch too.
    problem(
      await signedInject(ctx(), greedy, 'POST', '/network/v1/evaluate', { elements: ['A'.repeat(43)] }),
      429,
      'rate_limited',
    );

    assert.equal((await signedInject(ctx(), other, 'GET', page)).statusCode, 200);
    const metrics = (await ctx().inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /vouch_network_refused_total\{reason="rate"\} [1-9]/);
  });
});
