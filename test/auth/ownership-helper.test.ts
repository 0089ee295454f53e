// "A non-admin sees only its client's rows" is decided in one place, ownerFilter in
// src/http/route.ts (docs/api.md, "Ownership"): no handler or query compares a role by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ownerFilter } from '../../src/http/route.ts';
import type { Principal } from '../../src/lib/principal.ts';
import { SRC_DIR } from '../helpers/repo-root.ts';

const srcRoot = SRC_DIR;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('no source file but src/http/route.ts filters rows by comparing a role to admin', () => {
  const files = sourceFiles(srcRoot);
  assert.ok(files.length > 100, `the scan found only ${files.length} source files`);
  const handWritten = files
    .filter((path) => relative(srcRoot, path) !== join('http', 'route.ts'))
    .filter((path) => /\.role\s*!==?\s*'admin'/.test(readFileSync(path, 'utf8')))
    .map((path) => relative(srcRoot, path));
  assert.deepEqual(handWritten, []);
});

test('ownerFilter: an admin filters on no owner, anyone else on its own client', () => {
  const principal = (role: Principal['role']) => ({ role, clientId: 'cli_1' }) as Principal;
  assert.equal(ownerFilter(principal('admin')), undefined);
  assert.equal(ownerFilter(principal('operator')), 'cli_1');
  assert.equal(ownerFilter(principal('service')), 'cli_1');
});
