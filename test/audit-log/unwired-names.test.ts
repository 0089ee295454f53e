// An entry point that forgets to wire the actor directory (src/actor-directory.ts) fails at the
// first name it resolves, saying what to import, instead of naming people by their ids. Run in a
// worker thread: its modules are its own, so the directory this process wired is not there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';

test('resolving a name without the actor directory wired fails, naming the file to import', async () => {
  // The module beside this test's own form: .ts run through tsx, .js in the compiled test tree.
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const actors = new URL(`../../src/audit-log/actors.${extension}`, import.meta.url).href;
  // A worker does not inherit tsx's loader: one running the sources registers it first.
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     (workerData.ts ? import('tsx/esm/api').then((tsx) => tsx.register()) : Promise.resolve())
       .then(() => import(workerData.actors))
       .then((m) => m.knownActors({}, ['usr_someone']))
       .then(() => parentPort.postMessage('resolved'), (err) => parentPort.postMessage(String(err.message)));`,
    { eval: true, workerData: { actors, ts: extension === 'ts' } },
  );
  const answer = await new Promise<string>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  assert.equal(answer, 'actor names are not wired: import src/actor-directory.ts in the entry point');
});
