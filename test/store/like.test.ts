// "Contains this text" as LIKE (src/store/like.ts): the text's own wildcards and backslashes match
// only themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { containsPattern } from '../../src/store/like.ts';

test('the pattern escapes \\, % and _ and wraps the text in %', () => {
  assert.equal(containsPattern('a%b_c\\d'), '%a\\%b\\_c\\\\d%');
  assert.equal(containsPattern('plain'), '%plain%');
});

test("SQLite reads it with escape '\\': a wildcard in the text matches only itself", () => {
  const db = new Database(':memory:');
  const like = (value: string, text: string) =>
    (db.prepare(`select ? like ? escape '\\' as hit`).get(value, containsPattern(text)) as { hit: number }).hit;
  assert.equal(like('xx50%yy', '50%'), 1);
  assert.equal(like('xx50Ayy', '50%'), 0);
  assert.equal(like('id_1', 'id_1'), 1);
  assert.equal(like('idX1', 'id_1'), 0);
  assert.equal(like('a\\b', 'a\\b'), 1);
  db.close();
});
