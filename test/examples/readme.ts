// The README's shell commands as data, so the tests run what a reader copies and the two cannot
// drift apart: a section by its heading, its ```sh blocks, and a command line split into its
// leading VAR=value assignments and the command proper (single and double quotes as sh reads them).
import { readFileSync } from 'node:fs';

export const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The text of the `## heading` section, up to the next `## ` heading. */
export function section(heading: string, text = README): string {
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no "## ${heading}" section`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The bodies of the ```sh fenced blocks of a text, in order. */
export function shellBlocks(text: string): string[] {
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The words of one command line as sh splits them; a `#` that starts a word ends the line. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const close = line.indexOf(c, i + 1);
      if (close < 0) throw new Error(`unterminated ${c} in: ${line}`);
      word = (word ?? '') + line.slice(i + 1, close);
      i = close;
    } else if (c === ' ' || c === '\t') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) {
      break;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

export interface CommandLine {
  /** the leading NAME=value words (the variables sh sets for this command only) */
  env: Record<string, string>;
  /** the command and its arguments */
  argv: string[];
}

export function commandLine(line: string): CommandLine {
  const words = shellWords(line);
  const env: Record<string, string> = {};
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  return { env, argv: words };
}
