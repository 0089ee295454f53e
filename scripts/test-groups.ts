// Several test files in one process (scripts/test.ts): on this 2-core machine loading the app's
// module graph costs ≈ 1.2 s of CPU a process (typebox alone is 679 ES modules, kysely 262), more
// than most files' tests, and node 20's test runner gives every file a process of its own. A group
// file imports its members, so node's test runner runs their tests one file after another in one
// process that loaded the graph once. A member's failure is still named by its test and, through
// the source maps, its file; a group file lists its members at the top.
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { compiled, TEST_DIST } from './test-build.ts';

const GROUPS_DIR = join(TEST_DIST, 'groups');

/**
 * The files in `count` groups of about equal weight (the source's size, a fair stand-in for how
 * long a file runs), heaviest group first: node's test runner starts processes in the order given,
 * so the longest start early and the short ones fill in behind them.
 */
export function balance(files: readonly string[], count: number, weight: (file: string) => number): string[][] {
  const groups = Array.from({ length: Math.max(1, Math.min(count, files.length)) }, () => ({
    files: [] as string[],
    weight: 0,
  }));
  const heaviestFirst = [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));
  for (const file of heaviestFirst) {
    const lightest = groups.reduce((min, g) => (g.weight < min.weight ? g : min));
    lightest.files.push(file);
    lightest.weight += weight(file);
  }
  return groups
    .filter((g) => g.files.length > 0)
    .sort((a, b) => b.weight - a.weight)
    .map((g) => g.files.sort());
}

/**
 * Writes the group files of a run's files (repository paths of .ts tests) into .test-dist/groups/
 * and answers their paths, to hand node's test runner in place of the files' compiled twins.
 */
export function writeGroups(label: string, files: readonly string[], perProcess: number): string[] {
  mkdirSync(GROUPS_DIR, { recursive: true });
  const groups = balance(files, Math.ceil(files.length / perProcess), (file) => statSync(file).size);
  return groups.map((members, i) => {
    const path = join(GROUPS_DIR, `${label}-${String(i + 1).padStart(2, '0')}.test.js`);
    const lines = [
      `// ${label} group ${i + 1} of ${groups.length} (scripts/test-groups.ts): ${members.length} files in one process.`,
      ...members.map((m) => `import ${JSON.stringify(relative(GROUPS_DIR, compiled(m)))};`),
    ];
    writeFileSync(path, lines.join('\n') + '\n');
    return path;
  });
}
