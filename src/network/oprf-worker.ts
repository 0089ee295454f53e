// The worker thread of the OPRF's batch work (oprf-thread.ts): a 1,000-element evaluation, blinding
// or proof check takes a second or more of CPU, which on the main thread would hold every request
// of the process — scores included — for that long.
import { parentPort } from 'node:worker_threads';
import { blindInputs, evaluateElements, finalizeAll, ownEntries } from './oprf.ts';
import type { OprfJob, OprfReply } from './oprf-thread.ts';

const port = parentPort!;

function run(job: OprfJob): unknown {
  if (job.op === 'evaluate')
    return evaluateElements({ secretKey: job.secretKey, publicKey: job.publicKey }, job.elements);
  if (job.op === 'blind') return blindInputs(job.inputs);
  if (job.op === 'own') return ownEntries(job.secretKey, job.inputs);
  return finalizeAll(job.items, job.evaluated, job.publicKey, job.proof) ?? null;
}

port.on('message', (job: OprfJob) => {
  let reply: OprfReply;
  try {
    reply = { id: job.id, ok: true, value: run(job) };
  } catch (err) {
    reply = { id: job.id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply);
});
