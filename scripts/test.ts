// Runs the test tiers (scripts/test-tiers.ts) one after the other, each with node's test runner
// at the concurrency it stays reliable at, and fails when any tier fails. The spec reporter names
// every failing test (and its file) as it happens and again in a list at the end of its tier; the
// last lines here say which tiers failed and how long each took.
//
//   tsx scripts/test.ts                  unit, api, system
//   tsx scripts/test.ts api system       those tiers only
//   tsx scripts/test.ts api -- <file>... those files of the tier (for a quick re-run)
//
// VOUCH_TEST_CONCURRENCY_<TIER> (e.g. VOUCH_TEST_CONCURRENCY_API=2) overrides a tier's concurrency.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { TIERS, check, tierFiles, warnings, type Tier } from './test-tiers.ts';

/**
 * How many files of a tier run at once. unit: pure CPU, one a core and one more to cover each
 * file's start-up. api: in-process apps on a store; a file spends most of its time waiting on
 * PostgreSQL and timers, so more files than cores keep the cores busy. system: servers, CLIs and
 * Chromium with deadlines of their own (readiness, kill and drain timings) — two at once at most.
 * Measured on a 2-core machine; see the README's "Tests and checks".
 */
function concurrency(tier: Tier): number {
  const set = process.env[`VOUCH_TEST_CONCURRENCY_${tier.toUpperCase()}`];
  if (set && /^[1-9]\d*$/.test(set)) return Number(set);
  const cores = availableParallelism();
  if (tier === 'unit') return Math.max(2, cores + 1);
  if (tier === 'api') return Math.max(2, Math.min(cores + 1, 6));
  return Math.min(2, Math.max(1, Math.floor(cores / 2)));
}

function run(tier: Tier, files: string[]): Promise<number> {
  const args = [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency(tier)}`,
    '--test-reporter=spec',
    ...files,
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const names = dash === -1 ? argv : argv.slice(0, dash);
  const only = dash === -1 ? undefined : argv.slice(dash + 1);
  const unknown = names.filter((n) => !(TIERS as readonly string[]).includes(n));
  if (unknown.length) {
    console.error(`test: unknown tier ${unknown.join(', ')} (tiers: ${TIERS.join(', ')})`);
    return 2;
  }
  const tiers = (names.length ? names : [...TIERS]) as Tier[];

  for (const w of warnings()) console.error(`test-tiers: warning: ${w}`);
  const problems = check();
  if (problems.length) {
    for (const p of problems) console.error(`test-tiers: ${p}`);
    return 1;
  }

  const results: { tier: Tier; files: number; code: number; ms: number }[] = [];
  for (const tier of tiers) {
    let files = tierFiles([tier]);
    if (only) files = files.filter((f) => only.some((o) => f === o || f.endsWith(o)));
    // Never hand node --test an empty list: it would look for test files everywhere.
    if (files.length === 0) {
      if (!only) results.push({ tier, files: 0, code: 1, ms: 0 });
      continue;
    }
    console.log(`\n── ${tier}: ${files.length} files, ${concurrency(tier)} at a time ──\n`);
    const started = performance.now();
    // The console's browser tests build it when its build is older than its sources; built here
    // once, files running at once never rebuild it under each other's server (the build empties
    // console/dist first).
    if (files.some((f) => f.startsWith('test/console/'))) {
      const { ensureConsoleBuilt } = await import('../test/console/browser.ts');
      ensureConsoleBuilt();
    }
    const code = await run(tier, files);
    results.push({ tier, files: files.length, code, ms: performance.now() - started });
  }

  console.log('');
  for (const r of results) {
    const state = r.files === 0 ? 'NO FILES' : r.code === 0 ? 'passed' : `FAILED (exit ${r.code})`;
    console.log(`test: ${r.tier.padEnd(6)} ${String(r.files).padStart(3)} files  ${state}  ${seconds(r.ms)}`);
  }
  const failed = results.filter((r) => r.code !== 0);
  if (failed.length)
    console.log(
      `test: failed: ${failed.map((r) => r.tier).join(', ')} (the failing tests are listed at the end of each tier's output above)`,
    );
  return failed.length ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
