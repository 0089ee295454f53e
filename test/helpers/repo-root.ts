// The repository's root, whether a test runs from test/ (tsx) or from its compiled twin in
// .test-dist/test/ (scripts/test-build.ts): tests that read the sources as text (.ts files) need
// the real src/, not the compiled tree's.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/[\\/]\.test-dist[\\/]$/, '/');

/** The sources' folder, whose .ts files the scanning tests read. */
export const SRC_DIR = join(REPO_ROOT, 'src');
