// The test tree compiled once (scripts/test.ts): every test process ran its files through tsx,
// which compiled the sources it imported again in each of ~230 processes (≈ 2.5 s of CPU a file
// on this 2-core machine, more than most files' tests). esbuild emits src/, test/ and what the tests
// import into .test-dist/ with the same layout (`npm run typecheck` checks the types),
// so a path a file builds from import.meta.url (`../../package.json`, `./fixtures/x.json`) lands
// on the same file: the repository's other entries are linked in, and the compiled folders' other
// files copied beside their modules.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where the compiled tree goes (ignored by git, lint and the formatter). */
export const TEST_DIST = join(ROOT, '.test-dist');

/** The folders compiled; everything else at the root is linked. */
const COMPILED = ['src', 'test', 'sdk', 'bench', 'examples', 'scripts'];
const NEVER_LINKED = new Set(['.git', 'node_modules', '.test-dist', ...COMPILED]);

/** The compiled twin of a repository path ending in .ts (`test/a/b.test.ts` → `.test-dist/test/a/b.test.js`). */
export function compiled(file: string): string {
  return join(TEST_DIST, file.replace(/\.ts$/, '.js'));
}

/**
 * A relative module specifier naming a .ts file, in esbuild's printed imports (`from "./a.ts"`,
 * `import "./a.ts"`, `import("./a.ts")`): rewritten to the .js it compiles to. The same length,
 * so the source maps still line up.
 */
const TS_SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"(\.{1,2}\/[^"\n]*?)\.ts"/g;

/** A compiled module's text with its relative `.ts` imports naming the `.js` files they compile to. */
export function jsImports(text: string): string {
  return text.replace(TS_SPECIFIER, '$1"$2.js"');
}

/** Compiles the test tree into .test-dist/; throws when a file does not compile. */
export async function buildTestTree(): Promise<void> {
  rmSync(TEST_DIST, { recursive: true, force: true });
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...COMPILED], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`test: git ls-files failed (exit ${listed.status})`);
  const files = listed.stdout.split('\0').filter((f) => f !== '' && existsSync(join(ROOT, f)));
  // esbuild, as tsx transforms each file today: the same output the tests ran on, once.
  const result = await build({
    entryPoints: files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => join(ROOT, f)),
    outdir: TEST_DIST,
    outbase: ROOT,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    tsconfig: join(ROOT, 'tsconfig.json'),
    logLevel: 'warning',
    write: false,
  });
  for (const out of result.outputFiles) {
    mkdirSync(dirname(out.path), { recursive: true });
    writeFileSync(out.path, out.path.endsWith('.js') ? jsImports(out.text) : out.contents);
  }
  for (const path of files) {
    if (path.endsWith('.ts')) continue;
    mkdirSync(dirname(join(TEST_DIST, path)), { recursive: true });
    copyFileSync(join(ROOT, path), join(TEST_DIST, path));
  }
  for (const entry of readdirSync(ROOT)) {
    if (NEVER_LINKED.has(entry)) continue;
    symlinkSync(relative(TEST_DIST, join(ROOT, entry)), join(TEST_DIST, entry));
  }
}
