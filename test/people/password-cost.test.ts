// Passwords' work factor (docs/api.md, "People"; VOUCH_PASSWORD_COST): a hash names its parameters,
// verifies whatever cost it was made at, and a sign-in makes a hash of a lower cost again at the
// current one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../helpers/app.ts';
import { person } from '../helpers/people.ts';
import {
  dummyHash,
  hashPassword,
  needsRehash,
  paddingCosts,
  verifyPassword,
  verifyPasswordAtCost,
} from '../../src/people/passwords.ts';
import { checkLogin } from '../../src/people/service.ts';
import { loadConfig } from '../../src/config/env.ts';

test('VOUCH_PASSWORD_COST is 17 by default (OWASP’s floor for scrypt) and refused outside 15–20', () => {
  assert.equal(loadConfig({}).passwordCost, 17);
  assert.equal(loadConfig({ VOUCH_PASSWORD_COST: '15' }).passwordCost, 15);
  for (const bad of ['14', '21', 'x', '16.5'])
    assert.throws(() => loadConfig({ VOUCH_PASSWORD_COST: bad }), /VOUCH_PASSWORD_COST/);
});

test('a hash names N = 2^cost, r = 8, p = 1, verifies its password only, and asks to be made again below the current cost', async () => {
  const stored = await hashPassword('correct horse battery', 15);
  assert.match(stored, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert.equal(await verifyPassword('correct horse battery', stored), true);
  assert.equal(await verifyPassword('correct horse batterY', stored), false);
  assert.equal(needsRehash(stored, 15), false);
  assert.equal(needsRehash(stored, 16), true);
  assert.equal(needsRehash('bcrypt$whatever', 15), true);
  // a lowered setting rehashes downward too, so every check costs the same again
  assert.equal(needsRehash(await hashPassword('correct horse battery', 16), 15), true);
  assert.equal(await verifyPassword('', dummyHash(15)), false);
  assert.match(dummyHash(16), /^scrypt\$65536\$8\$1\$/);
});

test('a check of a hash stored at a lower cost is padded to the work of one at the current cost', async () => {
  // unknown e-mail: one hash at 2^17; known, stored at 2^15: 2^15 + 2^15 + 2^16 = 2^17
  assert.deepEqual(paddingCosts(2 ** 15, 17), [2 ** 15, 2 ** 16]);
  assert.equal(2 ** 15 + paddingCosts(2 ** 15, 17).reduce((a, b) => a + b, 0), 2 ** 17);
  assert.deepEqual(paddingCosts(2 ** 17, 17), []);
  assert.deepEqual(paddingCosts(2 ** 18, 17), []);
  for (const bad of [NaN, 0, -4, 3 * 2 ** 14]) assert.deepEqual(paddingCosts(bad, 17), []);
  const stored = await hashPassword('correct horse battery', 15);
  assert.equal(await verifyPasswordAtCost('correct horse battery', stored, 16), true);
  assert.equal(await verifyPasswordAtCost('wrong horse battery', stored, 16), false);
});

describeEachBackend(
  'a sign-in upgrades an older hash',
  (ctx) => {
    test('signing in at a higher cost stores the password hashed at it; the next sign-in leaves it', async () => {
      const p = await person(ctx(), 'viewer');
      const stored = async () =>
        (
          await ctx()
            .store.db.selectFrom('users')
            .select('password_hash')
            .where('id', '=', p.id)
            .executeTakeFirstOrThrow()
        ).password_hash!;
      assert.match(await stored(), /^scrypt\$32768\$/);
      await checkLogin(ctx().store, p.email, p.password, 16);
      const upgraded = await stored();
      assert.match(upgraded, /^scrypt\$65536\$/);
      assert.equal(await verifyPassword(p.password, upgraded), true);
      await checkLogin(ctx().store, p.email, p.password, 16);
      assert.equal(await stored(), upgraded);
      await assert.rejects(checkLogin(ctx().store, p.email, 'not the password', 16), /Wrong e-mail or password/);
      assert.equal(await stored(), upgraded);
    });
  },
  { passwordCost: 15 },
);
