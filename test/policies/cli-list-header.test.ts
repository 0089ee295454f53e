// Issue 29, item 19: `vouch policy list` printed its rows with no header; a reader could not tell
// the columns apart. The first line names them (tab-separated, as the rows).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { backends, freshStore } from '../helpers/app.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { VOUCH } from '../helpers/vouch-command.ts';

for (const backend of backends()) {
  test(`policy list: a header line naming the columns, then one row per version [${backend}]`, async (t) => {
    const fresh = await freshStore(backend);
    t.after(() => fresh.drop());
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VOUCH_')));
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [...VOUCH, 'policy', 'list'],
        { env: { ...base, VOUCH_DATABASE_URL: fresh.url }, timeout: 60_000 },
        (err, out, stderr) => (err ? reject(new Error(stderr)) : resolve(out)),
      );
    });
    const [header, ...rows] = stdout.trimEnd().split('\n');
    assert.equal(header, 'version\tstatus\tsource\tcreated_at\tsummary');
    assert.equal(rows.length, 1);
    assert.match(rows[0]!, new RegExp(`^${DEFAULT_POLICY.version.replace(/\./g, '\\.')}\tactive\tbuiltin\t`));
  });
}
