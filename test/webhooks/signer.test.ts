// Webhook secrets at rest: sealed through the shared envelope, in the format they were always
// stored in, so secrets sealed by earlier releases still open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sealSecret, unsealSecret } from '../../src/webhooks/signer.ts';

const kek = { id: 'fixturekek000001', key: Buffer.alloc(32, 7) };
const otherKek = { id: 'fixturekek000002', key: Buffer.alloc(32, 8) };
const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
// Sealed by the release before the shared envelope, for webhook `wh_fixture` under `kek`.
const sealedBefore =
  '{"kek":"fixturekek000001","iv":"LrIcWmhTVi_go13l","ct":"wDgswHMFg1Lq9Iuyr84sHXOeCzeJfIpnj7OlFw7bUJ7pcp7yzKHpdw8KznNBHn74JOU","tag":"6k6dkKUAoQa5lMsSPzEnSg"}';

test('a secret sealed by an earlier release opens, also when its KEK is the previous one', () => {
  assert.equal(unsealSecret(sealedBefore, 'wh_fixture', { current: kek, previous: [], source: 'test' }), secret);
  assert.equal(
    unsealSecret(sealedBefore, 'wh_fixture', { current: otherKek, previous: [kek], source: 'test' }),
    secret,
  );
});

test('a sealed secret keeps the stored shape: the KEK named, no marker member, no clear text', () => {
  const stored = sealSecret(secret, 'wh_fixture', kek);
  assert.deepEqual(Object.keys(JSON.parse(stored) as object).sort(), ['ct', 'iv', 'kek', 'tag']);
  assert.equal((JSON.parse(stored) as { kek: string }).kek, kek.id);
  assert.ok(!stored.includes(secret.slice(6)));
  assert.equal(unsealSecret(stored, 'wh_fixture', { current: kek, previous: [], source: 'test' }), secret);
});

test('a secret does not open for another webhook, under an unknown KEK, or when malformed', () => {
  const enc = { current: kek, previous: [], source: 'test' };
  assert.equal(unsealSecret(sealedBefore, 'wh_other', enc), undefined);
  assert.equal(
    unsealSecret(sealedBefore, 'wh_fixture', { current: otherKek, previous: [], source: 'test' }),
    undefined,
  );
  assert.equal(unsealSecret('not json', 'wh_fixture', enc), undefined);
  assert.equal(unsealSecret('null', 'wh_fixture', enc), undefined);
});
