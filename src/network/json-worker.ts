// The worker thread that parses peers' answers (json-thread.ts): a large answer's JSON.parse would
// otherwise hold the process's requests — scores included — for as long as it takes.
import { parentPort } from 'node:worker_threads';
import { parseBounded } from './bounded-json.ts';

const port = parentPort!;

port.on('message', (job: { id: number; text: string; maxDepth: number }) => {
  try {
    port.postMessage({ id: job.id, ok: true, value: parseBounded(job.text, job.maxDepth) });
  } catch (err) {
    port.postMessage({ id: job.id, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});
