// `vouch users invite|list|set-role|deactivate` against a real store (docs/api.md, "People"): the
// invitation link and token printed once, the table and JSON, a role change and a deactivation,
// an unknown user exiting 1, and every change in the audit log with the CLI as its actor.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/db.ts';
import { VOUCH } from '../helpers/vouch-command.ts';

let dir = '';
let url = '';

function vouch(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VOUCH_')));
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [...VOUCH, ...args],
      { env: { ...env, VOUCH_DATABASE_URL: url, VOUCH_PUBLIC_URL: 'https://desk.example' }, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    ),
  );
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vouch-users-cli-'));
  url = `sqlite:${join(dir, 'vouch.db')}`;
  const migrated = await vouch(['migrate']);
  assert.equal(migrated.code, 0, migrated.stderr);
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('invite, list, set-role, deactivate: each printed and audited with the CLI as the actor', async () => {
  const invited = await vouch([
    'users',
    'invite',
    '--email',
    'Ops@Desk.example',
    '--name',
    'Ops Lead',
    '--role',
    'admin',
  ]);
  assert.equal(invited.code, 0, invited.stderr);
  const fields = Object.fromEntries(
    invited.stdout
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  assert.match(fields.invitation_url!, /^https:\/\/desk\.example\/console\/\?invitation=[\w-]{43}$/);
  assert.ok(fields.invitation_url!.endsWith(fields.invitation_token!));
  const id = fields.user_id!;
  const again = await vouch(['users', 'invite', '--email', 'ops@desk.example', '--name', 'x', '--role', 'viewer']);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /exists/);
  assert.equal((await vouch(['users', 'invite', '--email', 'a@b.c', '--name', 'x', '--role', 'root'])).code, 2);

  const listed = JSON.parse((await vouch(['users', 'list', '--json'])).stdout) as Array<Record<string, string>>;
  assert.deepEqual(
    listed.map((u) => [u.id, u.email, u.role, u.status]),
    [[id, 'ops@desk.example', 'admin', 'invited']],
  );
  assert.match((await vouch(['users', 'list'])).stdout, /^ID\s+STATUS\s+ROLE\s+EMAIL\s+NAME\n/);
  assert.equal((await vouch(['users', 'set-role', id, 'operator'])).stdout, `${id} operator\n`);
  assert.equal((await vouch(['users', 'deactivate', id])).stdout, `${id} deactivated\n`);
  const missing = await vouch(['users', 'deactivate', 'usr_nobody']);
  assert.equal(missing.code, 1);

  const store = openStore(url);
  try {
    const rows = await store.db.selectFrom('audit_log').selectAll().orderBy('seq').execute();
    assert.deepEqual(
      rows.map((r) => r.action),
      ['user.invited', 'user.role_changed', 'user.deactivated'],
    );
    for (const r of rows) assert.equal(JSON.parse(r.actor).id, 'cli');
    assert.deepEqual(
      [JSON.parse(rows[1]!.before!), JSON.parse(rows[1]!.after!)],
      [{ role: 'admin' }, { role: 'operator' }],
    );
  } finally {
    await store.close();
  }
});
