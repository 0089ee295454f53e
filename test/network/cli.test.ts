// `vouch network …` against a store: peers add (URL rules), list, suspend, activate, remove; status;
// sync (nothing to do without peers; exit status 1 when a peer cannot be reached).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { freePort, runCli } from '../helpers/processes.ts';
import { standInPeer } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'vouch-net-cli-'));
const env = { VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}` };
after(() => rmSync(dir, { recursive: true, force: true }));

test('vouch network: peers, status and sync from a terminal', { timeout: 180_000 }, async () => {
  const key = standInPeer().signingKey;
  const none = await runCli(['network', 'sync'], env);
  assert.equal(none.code, 0, none.stderr);
  assert.deepEqual(JSON.parse(none.stdout), { peers: [] });

  const refused = await runCli(
    ['network', 'peers', 'add', '--name', 'b', '--url', 'http://127.0.0.1:9', '--signing-key', key],
    env,
  );
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /url must be an https:\/\/ URL/);

  const port = await freePort();
  const added = await runCli(
    [
      'network',
      'peers',
      'add',
      '--name',
      'b',
      '--url',
      `http://127.0.0.1:${port}`,
      '--signing-key',
      key,
      '--publish',
      'chargeback,fraud_report',
      '--budget',
      '50',
    ],
    { ...env, VOUCH_NETWORK_ALLOW_PRIVATE: '1' },
  );
  assert.equal(added.code, 0, added.stderr);
  const peer = JSON.parse(added.stdout) as { id: string; publish: string[]; budget_per_day: number; status: string };
  assert.deepEqual([peer.publish, peer.budget_per_day, peer.status], [['chargeback', 'fraud_report'], 50, 'active']);

  const list = await runCli(['network', 'peers', 'list'], env);
  assert.equal(list.stdout.split('\n')[0], 'id\tstatus\tname\turl\tweight\tpublish\tlast_sync_at');
  assert.match(
    list.stdout,
    new RegExp(`^${peer.id}\tactive\tb\thttp://127.0.0.1:${port}\t1\tchargeback,fraud_report\t-$`, 'm'),
  );

  const failed = await runCli(['network', 'sync'], { ...env, VOUCH_NETWORK_ALLOW_PRIVATE: '1' });
  assert.equal(failed.code, 1);
  assert.match(JSON.parse(failed.stdout).peers[0].error, /.+/);

  assert.equal(JSON.parse((await runCli(['network', 'peers', 'suspend', peer.id], env)).stdout).status, 'suspended');
  const status = JSON.parse((await runCli(['network', 'status'], env)).stdout);
  assert.match(status.signing_key, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(status.published, 0);
  assert.deepEqual([status.peers[0].id, status.peers[0].status, status.peers[0].matched], [peer.id, 'suspended', 0]);
  assert.match(status.peers[0].last_error, /.+/);
  assert.equal(JSON.parse((await runCli(['network', 'peers', 'activate', peer.id], env)).stdout).status, 'active');

  assert.equal((await runCli(['network', 'peers', 'remove', peer.id], env)).code, 0);
  assert.equal((await runCli(['network', 'peers', 'remove', peer.id], env)).code, 2);
  assert.equal(
    (await runCli(['network', 'peers', 'list'], env)).stdout,
    'id\tstatus\tname\turl\tweight\tpublish\tlast_sync_at\n',
    'the header alone',
  );
});
