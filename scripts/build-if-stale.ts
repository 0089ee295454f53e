// `npm start`'s prestart: builds (tsc, then Vite for the console, ~20 s) only when an output is
// missing or a source changed since, so a second start serves at once. A clean clone has no dist/
// and builds on its first start. Sources are what the build reads: src/, the console, the tsconfigs,
// and package-lock.json (the console bundles its dependencies).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');

/** What `npm start` serves: the compiled CLI and the console's page. */
const OUTPUTS = ['dist/cli.js', 'console/dist/index.html'];
const SOURCE_FILES = [
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
  'console/index.html',
  'console/vite.config.ts',
  'console/tsconfig.json',
];
const SOURCE_DIRS = ['src', 'console/src'];

function mtime(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function newestIn(dir: string): number {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    // A directory's own mtime counts too: a deleted or renamed source changes it.
    newest = Math.max(newest, mtime(path) ?? 0, entry.isDirectory() ? newestIn(path) : 0);
  }
  return newest;
}

/** Why a build is needed under `root`, or undefined when the outputs are newer than every source. */
export function staleReason(root: string): string | undefined {
  const outputs = OUTPUTS.map((file) => ({ file, at: mtime(join(root, file)) }));
  const missing = outputs.find((o) => o.at === undefined);
  if (missing) return `${missing.file} is missing`;
  const built = Math.min(...outputs.map((o) => o.at!));
  const sources = Math.max(
    ...SOURCE_FILES.map((f) => mtime(join(root, f)) ?? 0),
    ...SOURCE_DIRS.map((d) => newestIn(join(root, d))),
  );
  return sources > built ? 'sources changed since the last build' : undefined;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const reason = staleReason(ROOT);
  if (reason !== undefined) {
    process.stderr.write(`vouch: building (${reason})\n`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const build = spawnSync(npm, ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    process.exit(build.status ?? 1);
  }
}
