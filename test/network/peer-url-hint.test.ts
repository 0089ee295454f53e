// Issue 29, item 18: a peer URL refused for being http:// or private names the setting that allows
// it for peers (VOUCH_NETWORK_ALLOW_PRIVATE), not the webhooks' one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { standInPeer } from './support.ts';

describeEachBackend(
  'peer URL refusals name the network setting',
  (ctx) => {
    test('http:// and a loopback address: 400 naming VOUCH_NETWORK_ALLOW_PRIVATE only', async () => {
      const token = await ctx().token(['network:admin'], 'admin');
      const key = standInPeer().signingKey;
      for (const url of ['http://127.0.0.1:9000', 'https://127.0.0.1:9000']) {
        const res = await ctx().inject({
          method: 'POST',
          url: '/api/v1/network/peers',
          headers: bearer(token),
          payload: { name: 'local', url, signing_key: key },
        });
        const body = problem(res, 400, 'validation_failed');
        const text = JSON.stringify(body);
        assert.match(text, /VOUCH_NETWORK_ALLOW_PRIVATE=1/, url);
        assert.doesNotMatch(text, /VOUCH_WEBHOOK_ALLOW_PRIVATE/, url);
      }
    });
  },
  {},
);
