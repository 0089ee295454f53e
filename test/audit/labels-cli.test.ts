// `vouch labels import FILE` (issue 20 item 6): CSV or JSON Lines, sent through POST /api/v1/labels in
// chunks of up to 1,000 with the caller's credentials; a progress line on stderr, a summary on
// stdout, exit status 1 if any label failed (2 for an unusable command).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { describeEachBackend, bearer, ADMIN_ID, ADMIN_SECRET } from '../helpers/app.ts';
import { hash, score } from '../helpers/trust.ts';
import { runCli } from '../helpers/processes.ts';
import { guessFormat, parseLabels } from '../../src/audit/label-file.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';

describe('label files', () => {
  test('CSV: header decision_id,label,note; RFC 4180 quoting; CRLF; an empty note is left out', () => {
    const text =
      '\uFEFFdecision_id,label,note\r\ndec_1,fraud,"chargeback, confirmed"\r\ndec_2,legit,\r\ndec_3,fraud,"said ""no""\non two lines"\r\n\r\n';
    const { labels, errors } = parseLabels(text, 'csv');
    assert.deepEqual(errors, []);
    assert.deepEqual(labels, [
      { line: 2, body: { decision_id: 'dec_1', label: 'fraud', note: 'chargeback, confirmed' } },
      { line: 3, body: { decision_id: 'dec_2', label: 'legit' } },
      { line: 4, body: { decision_id: 'dec_3', label: 'fraud', note: 'said "no"\non two lines' } },
    ]);
  });

  test('CSV: the note column may be left out; a row of the wrong width and a missing header are named by line', () => {
    assert.deepEqual(parseLabels('decision_id,label\ndec_1,legit\n', 'csv').labels, [
      { line: 2, body: { decision_id: 'dec_1', label: 'legit' } },
    ]);
    const wrong = parseLabels('decision_id,label,note\ndec_1,legit\ndec_2,fraud,x,y\ndec_3,fraud,ok\n', 'csv');
    assert.deepEqual(wrong.errors, [
      { line: 2, message: '2 fields, expected 3' },
      { line: 3, message: '4 fields, expected 3' },
    ]);
    assert.equal(wrong.labels.length, 1);
    assert.match(parseLabels('id,outcome\nx,y\n', 'csv').errors[0]!.message, /header decision_id,label,note/);
    assert.match(parseLabels('decision_id,label,note\ndec_1,fraud,"open\n', 'csv').errors[0]!.message, /not closed/);
  });

  test('JSON Lines: one object a line; blank lines skipped; anything else named by line', () => {
    const { labels, errors } = parseLabels(
      '{"decision_id":"a","label":"fraud"}\n\nnot json\n[1]\n{"decision_id":"b","label":"legit","note":"n"}\n',
      'jsonl',
    );
    assert.deepEqual(
      labels.map((l) => l.line),
      [1, 5],
    );
    assert.deepEqual(errors, [
      { line: 3, message: 'not valid JSON' },
      { line: 4, message: 'not a JSON object' },
    ]);
  });

  test('the format follows the file name, else the first line', () => {
    assert.equal(guessFormat('a.csv', '{'), 'csv');
    assert.equal(guessFormat('a.JSONL', 'decision_id'), 'jsonl');
    assert.equal(guessFormat('-', '  {"a":1}'), 'jsonl');
    assert.equal(guessFormat('-', 'decision_id,label'), 'csv');
  });
});

describeEachBackend('vouch labels import against a running service', (ctx) => {
  let dir = '';
  let url = '';
  let key = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vouch-labels-'));
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    const created = await ctx().inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(await ctx().token()),
      payload: { name: 'labels-cli', scopes: ['labels:write', 'trust:read', 'audit:read'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    key = created.json().key as string;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const scored = async () => {
    const res = await score(ctx(), await ctx().token(), {
      entity_id: hash('labels-cli'),
      amount: 10 + Math.random(),
      currency: 'USD',
      context: {},
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().decision_id as string;
  };
  const labelOf = async (id: string) =>
    (await ctx().inject({ method: 'GET', url: `/api/v1/decisions/${id}`, headers: { 'x-api-key': key } })).json().label;

  test('a CSV with good and bad rows: the good ones are labelled, each failure named by line, exit status 1', async () => {
    const [a, b] = [await scored(), await scored()];
    const file = join(dir, 'mixed.csv');
    writeFileSync(
      file,
      `decision_id,label,note\n${a},fraud,"chargeback, bank ref 7"\ndec_unknown,fraud,\n${b},legit,\n${b},perhaps,\n`,
    );
    const run = await runCli(['labels', 'import', file], { VOUCH_URL: url, VOUCH_API_KEY: key });
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { labelled: 2, failed: 2 });
    assert.match(run.stderr, /labels: 4\/4 sent, 2 failed/);
    assert.match(run.stderr, /line 3: not_found: No such decision\./);
    assert.match(run.stderr, /line 5: validation_failed: .*label/);
    assert.ok(!run.stderr.includes(key), 'the API key reached the output');
    assert.equal((await labelOf(a)).label, 'fraud');
    assert.equal((await labelOf(a)).note, 'chargeback, bank ref 7');
    assert.equal((await labelOf(b)).label, 'legit');
  });

  test('2,500 JSON Lines labels with client credentials: three chunks, all labelled, exit status 0', async () => {
    const features = JSON.stringify(Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0])));
    const ids = Array.from({ length: 2500 }, (_, i) => `dec_cli_${i}`);
    const rows = ids.map((id, i) => ({
      id,
      kind: 'score',
      environment: 'live',
      principal_id: ADMIN_ID,
      owner_client_id: ADMIN_ID,
      subject_id: hash(`cli-e${i}`),
      request_digest: 'd',
      result: '{}',
      policy_version: 'v',
      created_at: Date.now() - 1000,
      features,
      feature_set: 2,
    }));
    for (let i = 0; i < rows.length; i += 250)
      await ctx()
        .store.db.insertInto('decisions')
        .values(rows.slice(i, i + 250) as never)
        .execute();
    const file = join(dir, 'year.jsonl');
    writeFileSync(
      file,
      ids.map((id, i) => JSON.stringify({ decision_id: id, label: i % 7 === 0 ? 'fraud' : 'legit' })).join('\n'),
    );
    const run = await runCli(['labels', 'import', file], {
      VOUCH_URL: url,
      VOUCH_CLIENT_ID: ADMIN_ID,
      VOUCH_CLIENT_SECRET: ADMIN_SECRET,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { labelled: 2500, failed: 0 });
    assert.deepEqual(run.stderr.trim().split('\n'), [
      'labels: 1000/2500 sent, 0 failed',
      'labels: 2000/2500 sent, 0 failed',
      'labels: 2500/2500 sent, 0 failed',
    ]);
    const labelled = await ctx()
      .store.db.selectFrom('decisions')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('id', 'like', 'dec_cli_%')
      .where('label', 'is not', null)
      .executeTakeFirstOrThrow();
    assert.equal(Number(labelled.n), 2500);
  });

  test('an unusable command exits 2: no credentials, an unreadable file, a CSV without its header', async () => {
    const file = join(dir, 'headerless.csv');
    writeFileSync(file, 'dec_1,fraud,\n');
    const none = await runCli(['labels', 'import', file], { VOUCH_URL: url });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /VOUCH_API_KEY/);
    const missing = await runCli(['labels', 'import', join(dir, 'nope.csv')], { VOUCH_URL: url, VOUCH_API_KEY: key });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read .*ENOENT/);
    const headerless = await runCli(['labels', 'import', file], { VOUCH_URL: url, VOUCH_API_KEY: key });
    assert.equal(headerless.code, 2);
    assert.match(headerless.stderr, /line 1: the first line must be the header/);
  });

  test("a credential without labels:write: the service's refusal, exit status 1", async () => {
    const created = await ctx().inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(await ctx().token()),
      payload: { name: 'read-only', scopes: ['audit:read'] },
    });
    const file = join(dir, 'one.jsonl');
    writeFileSync(file, `${JSON.stringify({ decision_id: await scored(), label: 'fraud' })}\n`);
    const run = await runCli(['labels', 'import', file], {
      VOUCH_URL: url,
      VOUCH_API_KEY: created.json().key as string,
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /answered 403/);
  });
});
