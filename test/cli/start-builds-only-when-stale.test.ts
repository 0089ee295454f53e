// Issue 29, item 18: `npm start` ran tsc and Vite (~20 s) before every start. Its prestart now
// builds only when an output is missing or older than a source (scripts/build-if-stale.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { staleReason } from '../../scripts/build-if-stale.ts';
import { REPO_ROOT } from '../helpers/repo-root.ts';

const ROOT = REPO_ROOT;

function tree(files: Record<string, number>): string {
  const root = mkdtempSync(join(tmpdir(), 'vouch-build-'));
  for (const [file, at] of Object.entries(files)) {
    const path = join(root, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, '');
    utimesSync(path, at, at);
  }
  // Directories' own mtimes are part of the comparison (a deleted source changes them): date them too.
  for (const dir of ['src', 'src/model', 'console/src']) {
    try {
      utimesSync(join(root, dir), 1000, 1000);
    } catch {
      // not in this tree
    }
  }
  return root;
}

test("npm start's prestart is the staleness check, not an unconditional build", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  assert.equal(pkg.scripts.prestart, 'tsx scripts/build-if-stale.ts');
  assert.match(pkg.scripts.start!, /dist\/cli\.js serve$/);
});

test('a clean clone (no dist/) builds; outputs newer than every source do not; a changed source or console file does', (t) => {
  const clean = tree({ 'src/cli.ts': 1000, 'console/src/main.tsx': 1000 });
  t.after(() => rmSync(clean, { recursive: true, force: true }));
  assert.equal(staleReason(clean), 'dist/cli.js is missing');

  const built = {
    'src/cli.ts': 1000,
    'src/model/signal-model.ts': 1000,
    'console/src/main.tsx': 1000,
    'tsconfig.json': 1000,
    'dist/cli.js': 2000,
    'console/dist/index.html': 2000,
  };
  const fresh = tree(built);
  t.after(() => rmSync(fresh, { recursive: true, force: true }));
  assert.equal(staleReason(fresh), undefined);

  for (const changed of ['src/model/signal-model.ts', 'console/src/main.tsx', 'tsconfig.json']) {
    const root = tree({ ...built, [changed]: 3000 });
    t.after(() => rmSync(root, { recursive: true, force: true }));
    assert.equal(staleReason(root), 'sources changed since the last build', changed);
  }
  const noConsole = tree({ ...built, 'console/dist/index.html': 0 });
  rmSync(join(noConsole, 'console/dist/index.html'));
  t.after(() => rmSync(noConsole, { recursive: true, force: true }));
  assert.equal(staleReason(noConsole), 'console/dist/index.html is missing');
});
