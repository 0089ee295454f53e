// Issue 29, item 18: a first-time user subscribing http://127.0.0.1:9000 was told "url must be an
// https:// URL" and nothing about the setting that allows it. A refusal that a setting would lift names it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { checkDestination } from '../../src/webhooks/ssrf.ts';

describeEachBackend(
  'webhook URL refusals name the setting that allows them',
  (ctx) => {
    test('http:// and a loopback address: 400 naming VOUCH_WEBHOOK_ALLOW_PRIVATE, not the network variable', async () => {
      const token = await ctx().token(['webhooks:read', 'webhooks:write'], 'operator');
      for (const url of ['http://127.0.0.1:9000/hooks', 'https://127.0.0.1:9000/hooks']) {
        const res = await ctx().inject({
          method: 'POST',
          url: '/api/v1/webhooks',
          headers: bearer(token),
          payload: { url, events: ['decision.high_risk'] },
        });
        const body = problem(res, 400, 'validation_failed');
        assert.match(String(body.detail), /VOUCH_WEBHOOK_ALLOW_PRIVATE=1/, url);
        assert.doesNotMatch(String(body.detail), /VOUCH_NETWORK_ALLOW_PRIVATE/, url);
      }
    });
  },
  {},
);

test('a policy that names its setting names that one; one that does not names both', async () => {
  const network = await checkDestination('http://10.0.0.5/', {
    allowPrivate: false,
    setting: 'VOUCH_NETWORK_ALLOW_PRIVATE',
  });
  assert.equal(network.ok, false);
  assert.match(
    !network.ok ? network.message : '',
    /^must be an https:\/\/ URL \(http:\/\/ is allowed with VOUCH_NETWORK_ALLOW_PRIVATE=1\)$/,
  );
  const unnamed = await checkDestination('https://10.0.0.5/', { allowPrivate: false });
  assert.match(
    !unnamed.ok ? unnamed.message : '',
    /VOUCH_WEBHOOK_ALLOW_PRIVATE=1 \(webhooks\) or VOUCH_NETWORK_ALLOW_PRIVATE=1 \(network peers\)/,
  );
  // Where the setting is on, http:// is no longer refused, so nothing to name.
  const allowed = await checkDestination('ftp://10.0.0.5/', {
    allowPrivate: true,
    setting: 'VOUCH_WEBHOOK_ALLOW_PRIVATE',
  });
  assert.deepEqual(allowed, { ok: false, reason: 'syntax', message: 'must be an https:// or http:// URL' });
});
