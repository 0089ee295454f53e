// docs/rules.md as a new user reads it: the ten worked rules save as written (no literal a
// variable never holds, every list they name declared), and the curl example's JSON body parses
// to exactly rule 9's condition, its regular expression escaped for CEL and then for JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { checkRule, type RuleBody } from '../../src/rules/compile.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';

const doc = readFileSync(new URL('../../docs/rules.md', import.meta.url), 'utf8');
const worked = doc.slice(doc.indexOf('## Ten worked rules'), doc.indexOf('### Saving one with curl'));
const conditions = [...worked.matchAll(/^ {3}`(.+?)` →/gm)].map((m) => m[1]!);
const lists = new Map([
  ['mules', 'entity'],
  ['market_makers', 'entity'],
  ['high_risk_countries', 'country'],
]);

test('the ten worked rules of docs/rules.md save as written', () => {
  assert.equal(conditions.length, 10);
  conditions.forEach((condition, i) => {
    const body: RuleBody = { name: `rule ${i + 1}`, condition, action: 'review' };
    assert.deepEqual(checkRule(body, SIGNAL_NAMES, lists), [], `rule ${i + 1}: ${condition}`);
  });
});

test("the curl example's body is JSON whose condition is rule 9's, regular expression and all", () => {
  const block = /```sh\n(curl [^\n]*-d '\{[\s\S]*?\}')\n```/.exec(doc.slice(doc.indexOf('### Saving one with curl')));
  assert.ok(block, 'a curl block');
  const json = block[1]!.slice(block[1]!.indexOf("-d '") + 4, -1);
  const body = JSON.parse(json) as RuleBody;
  assert.equal(body.condition, conditions[8]);
  assert.deepEqual(checkRule(body, SIGNAL_NAMES, lists), []);
});
