// The test pyramid without moving a file: every test/**/*.test.ts falls in exactly one tier,
// decided by what the file (and the test-local helpers it imports) reach for.
//
//   unit    pure modules: nothing below, run many files at once
//   api     an in-process app or store (test/helpers/app.ts, instances.ts, migrations.ts,
//           src/app.ts, src/server.ts, src/store/db.ts), a database or Redis client, a socket
//   system  other processes: test/helpers/processes.ts (vouch serve, CLIs, throwaway Redis and
//           PostgreSQL, kill tests), node:child_process, Chromium (test/console/browser.ts,
//           playwright-core; these are marked `browser`, and run one at a time)
//
// The strongest signal wins (system > api > unit). Only the test tree's own files are followed
// (test/**/*.ts helpers); src/ is not, since importing a module starts nothing by itself. Type-only
// imports do not count. OVERRIDES holds the exceptions, each with its reason; a new test file lands
// in a tier by itself.
//
//   tsx scripts/test-tiers.ts list <tier>...   files of the tiers, one a line, slowest known first
//   tsx scripts/test-tiers.ts show             every file, its tier and why
//   tsx scripts/test-tiers.ts check            every file in exactly one tier; overrides still apply
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TIERS = ['unit', 'api', 'system'] as const;
export type Tier = (typeof TIERS)[number];

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TEST_DIR = join(ROOT, 'test');

/** A module (a repository path, or a package name) that puts its importer in a tier. */
const SIGNALS: Record<string, Exclude<Tier, 'unit'>> = {
  // processes and browsers
  'test/helpers/processes.ts': 'system',
  'test/console/browser.ts': 'system',
  'playwright-core': 'system',
  'node:child_process': 'system',
  child_process: 'system',
  // an app, a store, a database or Redis client, a socket
  // test/helpers/app.ts only when a name that opens a store is imported: its constants and small
  // helpers (ADMIN_ID, bearer, problem) are used by pure tests too.
  'test/helpers/app.ts#startApp': 'api',
  'test/helpers/app.ts#describeEachBackend': 'api',
  'test/helpers/app.ts#freshStore': 'api',
  'test/helpers/app.ts#backends': 'api',
  'test/helpers/instances.ts': 'api',
  'test/helpers/migrations.ts': 'api',
  'src/app.ts': 'api',
  'src/server.ts': 'api',
  'src/store/db.ts': 'api',
  pg: 'api',
  ioredis: 'api',
  'better-sqlite3': 'api',
  kysely: 'api',
  fastify: 'api',
  'node:net': 'api',
  'node:http': 'api',
  'node:https': 'api',
  'node:dgram': 'api',
};

/** Exceptions to the rule: repository path → tier and why. Keep short; prefer fixing the rule. */
const OVERRIDES: Record<string, { tier: Tier; why: string }> = {};

export interface Placement {
  file: string;
  tier: Tier;
  why: string;
  /** drives Chromium (test/console/browser.ts, playwright-core): a system file run one at a time */
  browser: boolean;
}

const BROWSER = ['test/console/browser.ts', 'playwright-core'];

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else if (entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** Every test file, as a repository path with forward slashes, sorted. */
export function testFiles(): string[] {
  return walk(TEST_DIR)
    .map((f) => relative(ROOT, f).split(sep).join('/'))
    .sort();
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:([\w*${}\s,]*?)\s+from\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

interface Dependency {
  /** a repository path for a relative import, else the package (or node:) name */
  module: string;
  /** the names imported by value, or undefined when the whole module is (namespace, default, dynamic) */
  names?: string[];
}

/** What a file imports at run time (type-only imports and names are left out). */
function importsOf(file: string): Dependency[] {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, '');
  const found: Dependency[] = [];
  for (const m of text.matchAll(IMPORT)) {
    if (m[1]) continue; // import type ... / export type ...
    const spec = m[3] ?? m[4]!;
    const module = spec.startsWith('.')
      ? relative(ROOT, resolve(ROOT, dirname(file), spec))
          .split(sep)
          .join('/')
      : spec.replace(/^(@[^/]+\/[^/]+|[^@/][^/]*).*$/, '$1');
    const clause = m[2]?.trim();
    const braces = clause?.match(/^\{([^}]*)\}$/);
    const names = braces
      ? braces[1]!
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n && !n.startsWith('type '))
          .map((n) => n.split(/\s+as\s+/)[0]!)
      : undefined;
    if (names?.length === 0) continue; // import { type A, type B } ...
    found.push(names ? { module, names } : { module });
  }
  return found;
}

/** The signal a dependency carries: by module, or (for a module listed by name) by the names imported. */
function signalOf(dep: Dependency): { tier: Exclude<Tier, 'unit'>; what: string } | undefined {
  const whole = SIGNALS[dep.module];
  if (whole) return { tier: whole, what: dep.module };
  const byName = Object.keys(SIGNALS).filter((k) => k.startsWith(`${dep.module}#`));
  for (const key of byName) {
    const name = key.slice(dep.module.length + 1);
    if (dep.names === undefined || dep.names.includes(name))
      return { tier: SIGNALS[key]!, what: `${dep.module} (${name})` };
  }
  return undefined;
}

/** The strongest signal reachable from `file` through test-local modules, with the path to it. */
function strongest(file: string): { tier: Tier; why: string; browser: boolean } {
  const rank = (t: Tier) => TIERS.indexOf(t);
  let best: { tier: Tier; why: string } = { tier: 'unit', why: 'imports no app, store, socket or process' };
  let browser = false;
  const seen = new Set<string>();
  const visit = (mod: string, chain: string[]) => {
    if (seen.has(mod)) return;
    seen.add(mod);
    for (const dep of importsOf(mod)) {
      if (BROWSER.includes(dep.module)) browser = true;
      const signal = signalOf(dep);
      if (signal && rank(signal.tier) > rank(best.tier))
        best = { tier: signal.tier, why: [...chain, signal.what].join(' → ') };
      // Follow the test tree's own helpers (not src/: importing it starts nothing by itself).
      const m = dep.module;
      const judgedByName = Object.keys(SIGNALS).some((k) => k.startsWith(`${m}#`));
      if (m.startsWith('test/') && m.endsWith('.ts') && !SIGNALS[m] && !judgedByName && existsSync(join(ROOT, m)))
        visit(m, [...chain, m]);
    }
  };
  visit(file, []);
  return { ...best, browser };
}

export function classify(file: string): Placement {
  const found = strongest(file);
  const override = OVERRIDES[file];
  if (override) return { file, tier: override.tier, why: `override: ${override.why}`, browser: found.browser };
  return { file, ...found };
}

/**
 * Known slow files first (longest first, by wall time measured on a 2-core machine), so the long
 * ones start early and a parallel run does not end with one long file running alone: node --test
 * starts files in the order given. Every other file follows in path order. Only an ordering hint:
 * a name here that no longer exists is reported by `check` as a warning and otherwise ignored.
 */
const SLOW_FIRST: readonly string[] = [
  // system
  'test/policies/cli.test.ts',
  'test/cli/serve-as-container-user.test.ts',
  'test/cli/cli.test.ts',
  'test/scale/multi-instance.test.ts',
  'test/network/cli.test.ts',
  'test/reviews/cli.test.ts',
  'test/policies/job-progress.test.ts',
  'test/scale/faults.test.ts',
  'test/audit/labels-cli.test.ts',
  'test/webhooks/processes.test.ts',
  'test/scale/host-writer.test.ts',
  'test/network/processes.test.ts',
  // api
  'test/network/deployments.test.ts',
  'test/network/pending-fairness.test.ts',
  'test/network/publisher.test.ts',
  'test/webhooks/durability.test.ts',
  'test/policies/jobs.test.ts',
  'test/webhooks/fanout.test.ts',
  'test/trust/profile-cache.test.ts',
  'test/keys/limits.test.ts',
  'test/rings/graph-property.test.ts',
  'test/policies/routes.test.ts',
  'test/http/hardening.test.ts',
  'test/policies/fit-review-labels.test.ts',
  'test/network/pending.test.ts',
  'test/auth/oauth-interop.test.ts',
  // unit
  'test/policies/quality.test.ts',
  'test/policies/report.test.ts',
  'test/policies/job-thread.test.ts',
  'test/policies/market.test.ts',
  'test/policies/shapes.test.ts',
  'test/policies/fit.test.ts',
  'test/policies/fit-compact.test.ts',
  'test/trust/safe-amount.test.ts',
];

/** The files of the tiers; `browser` true or false keeps only the files that do (or do not) drive Chromium. */
export function tierFiles(tiers: readonly Tier[], browser?: boolean): string[] {
  const files = testFiles()
    .map(classify)
    .filter((p) => tiers.includes(p.tier) && (browser === undefined || p.browser === browser))
    .map((p) => p.file);
  const order = (f: string) => {
    const i = SLOW_FIRST.indexOf(f);
    return i === -1 ? SLOW_FIRST.length : i;
  };
  return files.sort((a, b) => order(a) - order(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** SLOW_FIRST names that no longer exist (harmless: only the order of a run changes). */
export function warnings(): string[] {
  const files = testFiles();
  return SLOW_FIRST.filter((f) => !files.includes(f)).map((f) => `SLOW_FIRST lists ${f}: no such test file`);
}

/** Problems with the tiers: overrides naming no file, a file in no tier or in more than one. */
export function check(): string[] {
  const files = testFiles();
  const problems: string[] = [];
  for (const file of Object.keys(OVERRIDES))
    if (!files.includes(file)) problems.push(`override for ${file}: no such test file`);
  const counts = new Map<string, number>();
  for (const tier of TIERS) for (const f of tierFiles([tier])) counts.set(f, (counts.get(f) ?? 0) + 1);
  for (const f of files) {
    const n = counts.get(f) ?? 0;
    if (n !== 1) problems.push(`${f} is in ${n} tiers`);
  }
  return problems;
}

function main(argv: string[]): number {
  const [command, ...rest] = argv;
  if (command === 'list') {
    const tiers = rest.length ? rest : [...TIERS];
    const bad = tiers.filter((t) => !(TIERS as readonly string[]).includes(t));
    if (bad.length) {
      console.error(`unknown tier: ${bad.join(', ')} (tiers: ${TIERS.join(', ')})`);
      return 2;
    }
    for (const f of tierFiles(tiers as Tier[])) console.log(f);
    return 0;
  }
  if (command === 'show') {
    const placements = testFiles().map(classify);
    for (const p of placements)
      console.log(`${p.tier.padEnd(6)} ${p.file}  (${p.why}${p.browser ? '; Chromium' : ''})`);
    for (const t of TIERS) console.log(`${t}: ${placements.filter((p) => p.tier === t).length}`);
    return 0;
  }
  if (command === 'check') {
    for (const w of warnings()) console.error(`test-tiers: warning: ${w}`);
    const problems = check();
    for (const p of problems) console.error(`test-tiers: ${p}`);
    if (problems.length) return 1;
    const n = testFiles().length;
    console.log(`test-tiers: ${n} files, ${TIERS.map((t) => `${t} ${tierFiles([t]).length}`).join(', ')}`);
    return 0;
  }
  console.error('usage: tsx scripts/test-tiers.ts list <tier>... | show | check');
  return 2;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exitCode = main(process.argv.slice(2));
