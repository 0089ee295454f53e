// Issue 18, item 8 (part): a label's free-text `note` refuses raw identifiers as ids do (400
// raw_identifier_rejected naming the field, nothing stored) while ordinary prose passes; a note
// or a policy `version` with control characters (Unicode Cc) is 400 validation_failed naming
// the field.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { corpus } from '../helpers/disguises.ts';
import { hash, score } from '../helpers/trust.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';

const CONTROL = ['\u0000', '\u0007', '\u0008', '\t', '\n', '\r', '\u001b[31m', '\u007f', '\u0085', '\u009b'];

const fieldsOf = (body: Record<string, unknown>) => (body.errors as Array<{ field: string }>).map((e) => e.field);

describeEachBackend('free-text fields: label notes and policy versions', (ctx) => {
  let operator = '';
  before(async () => {
    const c = await ctx().client(
      ['trust:read', 'audit:read', 'labels:write', 'policy:read', 'policy:write'],
      'operator',
    );
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { client_id: c.id, client_secret: c.secret },
    });
    operator = res.json().access_token as string;
  });

  async function decision(t: TestContext): Promise<string> {
    const res = await score(t, operator, { entity_id: hash(`note-${Math.random()}`), amount: 50, currency: 'USD' });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().decision_id as string;
  }
  const label = (id: string, note: string) =>
    ctx().inject({
      method: 'POST',
      url: `/api/v1/decisions/${id}/label`,
      headers: bearer(operator),
      payload: { label: 'fraud', note },
    });
  const storedLabel = async (id: string) =>
    (await ctx().inject({ method: 'GET', url: `/api/v1/decisions/${id}`, headers: bearer(operator) })).json().label as {
      note?: string;
    } | null;

  test('a note with a raw identifier in it: 400 raw_identifier_rejected naming note, never echoed, the label not stored', async () => {
    const id = await decision(ctx());
    for (const note of [
      'call me at +1 415 555 2671',
      'buyer is alice@example.com',
      ...corpus.text_refused.map((e) => e.value),
      ...corpus.refused.map((e) => e.value),
    ]) {
      const res = await label(id, note);
      const body = problem(res, 400, 'raw_identifier_rejected');
      assert.deepEqual(fieldsOf(body), ['note'], note);
      assert.ok(!res.body.includes('415 555 2671') && !res.body.includes('alice@example.com'));
    }
    assert.equal(await storedLabel(id), null);
  });

  test('a note of ordinary prose with short numbers, dates and amounts is stored (200)', async () => {
    const id = await decision(ctx());
    for (const note of ['chargeback 3 of 5 on 2026-11-20', ...corpus.text_accepted.map((e) => e.value)]) {
      const res = await label(id, note);
      assert.equal(res.statusCode, 200, `${note}: ${res.body}`);
      assert.equal(res.json().note, note);
      assert.equal((await storedLabel(id))?.note, note);
    }
  });

  test('a note with a control character: 400 validation_failed naming note, the label not stored', async () => {
    const id = await decision(ctx());
    for (const control of CONTROL) {
      const body = problem(await label(id, `confirmed${control}by the bank`), 400, 'validation_failed');
      assert.deepEqual(fieldsOf(body), ['note'], JSON.stringify(control));
    }
    assert.equal(await storedLabel(id), null);
  });

  test('a policy version with a control character: 400 validation_failed naming version, nothing stored; a plain one: 201', async () => {
    const upload = (version: string) =>
      ctx().inject({
        method: 'POST',
        url: '/api/v1/policies',
        headers: bearer(operator),
        payload: { ...DEFAULT_POLICY, version },
      });
    for (const control of CONTROL) {
      const body = problem(await upload(`v1${control}2`), 400, 'validation_failed');
      assert.deepEqual(fieldsOf(body), ['version'], JSON.stringify(control));
    }
    const list = await ctx().inject({ method: 'GET', url: '/api/v1/policies?limit=100', headers: bearer(operator) });
    assert.ok((list.json().data as Array<{ version: string }>).every((p) => !/\p{Cc}/u.test(p.version)));
    assert.equal((await upload('v1 2 (plain)')).statusCode, 201);
  });
});
