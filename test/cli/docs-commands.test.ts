// Every `vouch …` command the README and docs/learning.md show exists, with the options they
// show: the README's CLI table and each inline or block mention are walked through the real
// command tree (commander's), so a renamed command or option fails here, not for a reader.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const README = read('README.md');
const LEARNING = read('docs/learning.md');

/** "policy list|show [--environment test]" → the command paths it names and the options it shows. */
function usages(span: string): { paths: string[][]; options: string[] } {
  const words = span.replaceAll('\\|', '|').trim().split(/\s+/);
  const path: string[][] = [];
  for (const word of words) {
    if (!/^[a-z][a-z-]*(\|[a-z][a-z-]*)*$/.test(word)) break;
    path.push(word.split('|'));
  }
  const paths = path.reduce<string[][]>((acc, choices) => acc.flatMap((p) => choices.map((c) => [...p, c])), [[]]);
  return { paths, options: [...span.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]) };
}

/** The spans that show a command: the README's CLI table cells, and "vouch …" anywhere in both files. */
function documented(): string[] {
  const cli = README.slice(README.indexOf('\n## CLI\n'), README.indexOf('\n## ', README.indexOf('\n## CLI\n') + 1));
  const cells = cli
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split(/(?<!\\)\|/)[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
  const table = cells.filter((c) => /^[a-z]/.test(c));
  const mentions = [README, LEARNING].flatMap((text) =>
    [...text.matchAll(/\bvouch ([a-z][^`\n)"]*)/g)].map((m) => m[1]!),
  );
  return [...table, ...mentions];
}

function find(program: Command, path: string[]): Command | undefined {
  let command: Command | undefined = program;
  for (const name of path) {
    if (!command || command.commands.length === 0) break;
    command = command.commands.find((c) => c.name() === name);
  }
  return command;
}

test('the docs show the CLI: commands from the table and the prose are found', () => {
  const spans = documented();
  assert.ok(spans.length >= 15, `found ${spans.length} mentions`);
  for (const expected of ['serve', 'clients list', 'policy fit', 'events import']) {
    assert.ok(
      spans.some((s) => s.startsWith(expected)),
      `the docs mention vouch ${expected}`,
    );
  }
});

test('every documented vouch command exists, with every option shown beside it', () => {
  const program = buildProgram();
  for (const span of documented()) {
    const { paths, options } = usages(span);
    for (const path of paths) {
      const command = find(program, path);
      assert.ok(command && command !== program, `vouch ${path.join(' ')} (from "${span}") is not a command`);
      // A group ("vouch policy") stands for each of its commands.
      for (const leaf of command.commands.length > 0 ? command.commands : [command]) {
        const known = new Set([...leaf.options.map((o) => o.long), '--help']);
        for (const option of options)
          assert.ok(
            known.has(option),
            `vouch ${[...path, ...(leaf === command ? [] : [leaf.name()])].join(' ')} has no ${option} (from "${span}")`,
          );
      }
    }
  }
});

test('docs/learning.md: every vouch policy command takes --environment test, as it says', () => {
  assert.match(LEARNING.replace(/\s+/g, ' '), /Every `vouch policy` command takes `--environment test`/);
  const policy = find(buildProgram(), ['policy'])!;
  for (const command of policy.commands) {
    const option = command.options.find((o) => o.long === '--environment');
    assert.deepEqual(option?.argChoices, ['live', 'test'], `vouch policy ${command.name()}`);
  }
});
