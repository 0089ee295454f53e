// How a test runs `vouch`: the arguments to node before the command's own. In the system tier,
// scripts/test.ts compiles src/ once and names its cli.js in VOUCH_TEST_BUILT_CLI, so a process
// does not compile the sources again on every start (≈ 2 s of CPU each here); a file run by
// itself goes through the sources and tsx, so an edit is never tested stale.
import { join } from 'node:path';
import { REPO_ROOT } from './repo-root.ts';

const BUILT = process.env.VOUCH_TEST_BUILT_CLI;

/** `vouch` as a user runs it: bin/vouch.js, or the system tier's build. */
export const VOUCH: readonly string[] = BUILT ? [BUILT] : [join(REPO_ROOT, 'bin', 'vouch.js')];

/** `vouch` from src/cli.ts through tsx's loader, or the system tier's build. */
export const VOUCH_SOURCES: readonly string[] = BUILT ? [BUILT] : ['--import', 'tsx', join(REPO_ROOT, 'src', 'cli.ts')];
