// `vouch policy …` against a real store (docs/api.md, "Policies"): list, show, import, export, activate, shadow,
// backtest, fit, report; --help acts on nothing; errors exit 2 with one line.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { fitCandidate } from '../../src/policies/report.ts';
import { plotData } from '../../src/policies/plots.ts';
import { insertPolicy } from '../../src/policies/repository.ts';
import { splitByEntity } from '../../src/policies/split.ts';
import { VOUCH } from '../helpers/vouch-command.ts';

function vouch(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VOUCH_')));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...VOUCH, ...args],
      { env: { ...base, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        });
      },
    );
  });
}

for (const backend of backends()) {
  describe(`vouch policy [${backend}]`, () => {
    let fresh: TestStore;
    let dir: string;
    let env: Record<string, string>;

    before(async () => {
      fresh = await freshStore(backend);
      dir = mkdtempSync(join(tmpdir(), 'vouch-policy-cli-'));
      env = { VOUCH_DATABASE_URL: fresh.url };
    });
    after(async () => {
      await fresh?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('--help on every policy command prints usage and acts on nothing', async () => {
      for (const command of [
        ['list'],
        ['show'],
        ['import'],
        ['export'],
        ['fit'],
        ['backtest'],
        ['activate'],
        ['shadow'],
        ['report'],
      ]) {
        const run = await vouch(['policy', ...command, '--help'], env);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, new RegExp(`^Usage: vouch policy ${command[0]}`));
      }
      assert.equal(
        (await fresh.store.db.selectFrom('policies').select('version').execute()).length,
        0,
        'nothing stored by --help',
      );
    });

    test('list, import, show, export, activate, shadow, backtest; bad input exits 2, not found or a conflict 1', async () => {
      const list = await vouch(['policy', 'list'], env);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, new RegExp(`^${DEFAULT_POLICY.version.replace(/\./g, '\\.')}\tactive\tbuiltin\t`, 'm'));

      const file = join(dir, 'p.json');
      writeFileSync(file, JSON.stringify({ ...DEFAULT_POLICY, version: 'cli-1', bias: -2 }));
      const imported = await vouch(['policy', 'import', file], env);
      assert.equal(imported.code, 0, imported.stderr);
      assert.equal(JSON.parse(imported.stdout).status, 'candidate');
      const again = await vouch(['policy', 'import', file], env);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /^vouch: .*already exists\n$/);
      writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...DEFAULT_POLICY, version: 'cli-bad', bias: 'x' }));
      const bad = await vouch(['policy', 'import', join(dir, 'bad.json')], env);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /\/bias/);

      // --environment test: its own versions; the live list does not show them, nor test the live ones.
      writeFileSync(join(dir, 't.json'), JSON.stringify({ ...DEFAULT_POLICY, version: 'cli-test-only' }));
      assert.equal((await vouch(['policy', 'import', join(dir, 't.json'), '--environment', 'test'], env)).code, 0);
      assert.match(
        (await vouch(['policy', 'list', '--environment', 'test'], env)).stdout,
        /^cli-test-only\tcandidate\t/m,
      );
      assert.doesNotMatch((await vouch(['policy', 'list'], env)).stdout, /cli-test-only/);
      assert.equal((await vouch(['policy', 'show', 'cli-1', '--environment', 'test'], env)).code, 1);
      assert.equal((await vouch(['policy', 'list', '--environment', 'staging'], env)).code, 2);

      const shown = await vouch(['policy', 'show', 'cli-1'], env);
      assert.equal(JSON.parse(shown.stdout).document.bias, -2);
      const exported = await vouch(['policy', 'export', 'cli-1'], env);
      assert.deepEqual(JSON.parse(exported.stdout), {
        ...JSON.parse(JSON.stringify(DEFAULT_POLICY)),
        version: 'cli-1',
        bias: -2,
      });
      assert.equal((await vouch(['policy', 'show', 'nope'], env)).code, 1);

      const activated = await vouch(['policy', 'activate', 'cli-1'], env);
      assert.equal(activated.code, 0, activated.stderr);
      assert.equal(JSON.parse(activated.stdout).status, 'active');
      const retired = await fresh.store.db
        .selectFrom('policies')
        .select('status')
        .where('environment', '=', 'live')
        .where('version', '=', DEFAULT_POLICY.version)
        .executeTakeFirstOrThrow();
      assert.equal(retired.status, 'retired');
      const feed = await fresh.store.db
        .selectFrom('revocations')
        .select(['kind', 'subject'])
        .where('kind', '=', 'policy')
        .execute();
      assert.ok(
        feed.some((r) => r.subject === 'live:cli-1'),
        'the activation is announced on the feed',
      );

      const shadow = await vouch(['policy', 'shadow', DEFAULT_POLICY.version], env);
      assert.equal(JSON.parse(shadow.stdout).status, 'shadow');
      const off = await vouch(['policy', 'shadow', '--off'], env);
      assert.match(off.stdout, /shadow mode ended/);

      const bt = await vouch(['policy', 'backtest', 'cli-1'], env);
      assert.equal(bt.code, 0, bt.stderr);
      assert.equal(JSON.parse(bt.stdout).decisions, 0);
      const fit = await vouch(['policy', 'fit'], env);
      assert.equal(fit.code, 1);
      assert.match(fit.stderr, /at least 30/);
      const noReport = await vouch(['policy', 'report', 'cli-1', '--out', join(dir, 'r.html')], env);
      assert.equal(noReport.code, 1);
    });

    test('report VERSION --out FILE writes the self-contained HTML page of a fitted policy', async () => {
      // A fitted policy from synthetic labelled decisions, stored as the fit route stores one.
      const rows = Array.from({ length: 200 }, (_, i) => ({
        entityId: `e${i}`,
        features: { chargebacks: i % 4 === 0 ? 1 + (i % 3) : 0, completed_trades: (i % 7) / 2 },
        label: (i % 4 === 0 ? 1 : 0) as 0 | 1,
      }));
      const { policy, report } = fitCandidate(rows, DEFAULT_POLICY, { version: 'cli-fit' });
      const { holdout } = splitByEntity(rows, (r) => r.entityId, { fraction: 0.3 });
      await insertPolicy(fresh.store.db, 'live', {
        policy,
        source: 'fit',
        parentVersion: DEFAULT_POLICY.version,
        report: { ...report, holdout_fraction: 0.3, plots: plotData(holdout, DEFAULT_POLICY, policy) },
      });
      const out = join(dir, 'report.html');
      const run = await vouch(['policy', 'report', 'cli-fit', '--out', out], env);
      assert.equal(run.code, 0, run.stderr);
      assert.ok(existsSync(out));
      const html = readFileSync(out, 'utf8');
      assert.ok((html.match(/<svg/g) ?? []).length >= 5);
      assert.ok(!/<script/i.test(html));
    });

    test('activate asks first when the share flagged high+ moves beyond the limits: without a terminal it refuses, --yes activates; fit targets take one limit', async () => {
      const zeros = Object.fromEntries(Object.keys(DEFAULT_POLICY.weights).map((n) => [n, 0]));
      const rows = Array.from({ length: 600 }, (_, i) => ({
        id: `cli-op-${i}`,
        kind: 'score',
        environment: 'live',
        principal_id: 'p',
        owner_client_id: 'c',
        subject_id: `s${i}`,
        request_digest: 'd',
        result: '{}',
        policy_version: DEFAULT_POLICY.version,
        created_at: Date.parse('2026-11-01T00:00:00Z') + i,
        features: JSON.stringify({ ...zeros, chargebacks: i % 10 === 0 ? 1 : 0 }),
        feature_set: 2,
        risk_level: 'low',
      }));
      for (let i = 0; i < rows.length; i += 200)
        await fresh.store.db
          .insertInto('decisions')
          .values(rows.slice(i, i + 200) as never)
          .execute();
      const file = join(dir, 'wide.json');
      writeFileSync(
        file,
        JSON.stringify({ ...DEFAULT_POLICY, version: 'cli-wide', thresholds: { medium: 1, high: 2, critical: 3 } }),
      );
      assert.equal((await vouch(['policy', 'import', file], env)).code, 0);
      const refused = await vouch(['policy', 'activate', 'cli-wide'], env);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /not activated: cli-wide flags 100\.0 % of the 600 most recent decisions .*--yes/);
      const yes = await vouch(['policy', 'activate', 'cli-wide', '--yes'], env);
      assert.equal(yes.code, 0, yes.stderr);
      assert.equal(JSON.parse(yes.stdout).status, 'active');
      const two = await vouch(['policy', 'fit', '--max-share-flagged', '0.1', '--min-precision', '0.2'], env);
      assert.equal(two.code, 2);
      assert.match(two.stderr, /at most one of/);
    });
  });
}
