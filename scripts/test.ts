// Runs the test tiers (scripts/test-tiers.ts) one after the other, each with node's test runner
// at the concurrency it stays reliable at, and fails when any of them fails. The test tree is
// compiled once first (scripts/test-build.ts). The spec reporter
// names every failing test (and its file) as it happens and again in a list at the end of its
// run; the last lines here say which runs failed and how long each took.
//
//   tsx scripts/test.ts                  unit, api, system
//   tsx scripts/test.ts api system       those tiers only
//   tsx scripts/test.ts api -- <file>... those files of the tier (a quick re-run)
//
// VOUCH_TEST_CONCURRENCY_<UNIT|API|SYSTEM|BROWSER>=n overrides how many processes of a run go at
// once; VOUCH_TEST_FILES_PER_PROCESS_<UNIT|API|BROWSER>=n how many files share a process (1: each its own).
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { buildTestTree, compiled } from './test-build.ts';
import { writeGroups } from './test-groups.ts';
import { TIERS, check, tierFiles, warnings, type Tier } from './test-tiers.ts';

type Run = 'unit' | 'api' | 'system' | 'browser';

/** VOUCH_TEST_<setting>_<RUN> when it is a positive integer (anything else leaves the default). */
function countFromEnv(setting: string, run: Run): number | undefined {
  const set = process.env[`VOUCH_TEST_${setting}_${run.toUpperCase()}`];
  return set && /^[1-9]\d*$/.test(set) ? Number(set) : undefined;
}

/**
 * How many files of a run go at once (measured on a 2-core machine with PostgreSQL and Redis).
 * unit: pure CPU, one a core and one more to cover each file's start-up. api: in-process apps on
 * a store, several files to a process (filesPerProcess), one process a core: with the start-ups
 * shared, more processes only contend (measured here, grouped: 345.7 s at 2, 373.6 s at 3, 439.0 s
 * at 4, the test processes' CPU falling with them). system: servers, CLIs and kill tests with deadlines of their own
 * (readiness, drain and kill timings), one a core. browser: the system files that drive Chromium,
 * whose pages wait at most 10 s for an element, one at a time (two at once, with the CLI tests
 * beside them, ran out of that time on 2 cores).
 */
function concurrency(run: Run): number {
  const set = countFromEnv('CONCURRENCY', run);
  if (set !== undefined) return set;
  const cores = availableParallelism();
  if (run === 'unit') return cores + 1;
  if (run === 'api') return Math.min(cores, 8);
  if (run === 'system') return Math.min(cores, 4);
  return 1;
}

/**
 * How many files share a process (scripts/test-groups.ts): the unit and api tiers' files start
 * nothing outside their process, so they run several to a process (about 24 api groups keep four
 * processes busy to the end with the heaviest started first); the Chromium files, one process at a
 * time anyway, five to a process sharing one Chromium (test/console/browser.ts); the other system
 * files start servers and CLIs with deadlines of their own, one file to a process as before.
 */
function filesPerProcess(run: Run): number {
  const set = countFromEnv('FILES_PER_PROCESS', run);
  if (set !== undefined) return set;
  if (run === 'unit') return 10;
  if (run === 'api') return 7;
  if (run === 'browser') return 5;
  return 1;
}

/** The runs of a tier: the system tier's Chromium files go on their own, after the others. */
function runsOf(tier: Tier): { run: Run; label: string; files: string[] }[] {
  if (tier !== 'system') return [{ run: tier, label: tier, files: tierFiles([tier]) }];
  return [
    { run: 'system', label: 'system', files: tierFiles(['system'], false) },
    { run: 'browser', label: 'system (Chromium)', files: tierFiles(['system'], true) },
  ];
}

/**
 * A test still running after this fails, and its file's process then exits once its tests are
 * done even if something holds the event loop: a hung test costs five minutes and a named failure,
 * never the whole CI run (the longest test here takes ≈ 45 s under load).
 */
const TEST_TIMEOUT_MS = 300_000;

/**
 * node's test runner on a run's files, their compiled twins in .test-dist/ (scripts/test-build.ts),
 * with source maps so a failure names the .ts line.
 */
function nodeTest(run: Run, files: string[], env: NodeJS.ProcessEnv, grouped: boolean): Promise<number> {
  const perProcess = grouped ? filesPerProcess(run) : 1;
  const entries = perProcess > 1 ? writeGroups(run, files, perProcess) : files.map(compiled);
  if (perProcess > 1)
    console.log(`test: ${files.length} files in ${entries.length} processes (.test-dist/groups/${run}-*.test.js)\n`);
  const args = [
    '--enable-source-maps',
    '--test',
    `--test-timeout=${TEST_TIMEOUT_MS}`,
    '--test-force-exit',
    `--test-concurrency=${concurrency(run)}`,
    '--test-reporter=spec',
    ...entries,
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit', env });
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

  const results: { label: string; files: number; code: number; ms: number }[] = [];
  let built = false;
  for (const tier of tiers) {
    for (const { run, label, files: all } of runsOf(tier)) {
      const files = only ? all.filter((f) => only.some((o) => f === o || f.endsWith(o))) : all;
      // Never hand node --test an empty list: it would look for test files everywhere.
      if (files.length === 0) continue;
      console.log(`\n── ${label}: ${files.length} files, ${concurrency(run)} processes at a time ──\n`);
      // The console's browser tests build it when its build is older than its sources; built here
      // once, files running at once never rebuild it under each other's server (the build empties
      // console/dist first).
      if (files.some((f) => f.startsWith('test/console/'))) {
        const { ensureConsoleBuilt } = await import('../test/console/browser.ts');
        ensureConsoleBuilt();
      }
      if (!built) {
        const start = performance.now();
        await buildTestTree();
        console.log(`test: the test tree compiled into .test-dist/ in ${seconds(performance.now() - start)}`);
        built = true;
      }
      // The servers and CLIs the system tier starts run the compiled tree's cli.js, not src through tsx.
      const env = { ...process.env, VOUCH_TEST_BUILT_CLI: compiled('src/cli.ts') };
      const started = performance.now();
      // A quick re-run of named files gives each its own process, as a file runs alone.
      const code = await nodeTest(run, files, env, only === undefined);
      results.push({ label, files: files.length, code, ms: performance.now() - started });
    }
  }
  if (results.length === 0) {
    console.error('test: no test files to run');
    return 1;
  }

  console.log('');
  for (const r of results) {
    const state = r.code === 0 ? 'passed' : `FAILED (exit ${r.code})`;
    console.log(`test: ${r.label.padEnd(17)} ${String(r.files).padStart(3)} files  ${state}  ${seconds(r.ms)}`);
  }
  const failed = results.filter((r) => r.code !== 0);
  if (failed.length)
    console.log(
      `test: FAILED: ${failed.map((r) => r.label).join(', ')} (the failing tests are listed at the end of each run above)`,
    );
  return failed.length ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
