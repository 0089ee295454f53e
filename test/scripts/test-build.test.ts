// The compiled test tree's imports (scripts/test-build.ts): relative `.ts` imports name the `.js`
// they compile to; a package, a non-relative path or a `.ts` inside a string is left alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsImports } from '../../scripts/test-build.ts';

test('static, side-effect, re-export and dynamic imports of a relative .ts file name its .js', () => {
  const text = [
    'import { a } from "./a.ts";',
    'import "../b/c.ts";',
    'export { d } from "./d.ts";',
    'const e = await import("../../e.ts");',
    'const f = await import( "./f.ts");',
  ].join('\n');
  assert.equal(
    jsImports(text),
    [
      'import { a } from "./a.js";',
      'import "../b/c.js";',
      'export { d } from "./d.js";',
      'const e = await import("../../e.js");',
      'const f = await import( "./f.js");',
    ].join('\n'),
  );
});

test('packages, absolute paths and .ts names that are not imports are left as written', () => {
  const text = [
    'import { build } from "esbuild";',
    'import x from "/abs/x.ts";',
    'const path = "./cli.ts";',
    'spawn("node", ["--import", "tsx", "./src/cli.ts"]);',
    'import y from "./y.tsx";',
  ].join('\n');
  assert.equal(jsImports(text), text);
});

test('the rewrite keeps every line its length, so the source maps still line up', () => {
  const line = 'import { a } from "./deep/path/a.ts";';
  assert.equal(jsImports(line).length, line.length);
});
