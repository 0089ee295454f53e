// The worker thread of fits and backtests (issue 18), one job at a time: `start` names the job,
// then it receives the stored decisions page by page, answers each page once it is folded in (so
// the reader never runs ahead of it), and posts the result at `end`. Spawned by job-thread.ts.
import { parentPort } from 'node:worker_threads';
import { jobWork, toWireError, type JobTask } from './job-tasks.ts';
import type { ToWorker, FromWorker } from './job-thread.ts';

const port = parentPort!;
const reply = (message: FromWorker) => port.postMessage(message);

let task: JobTask | undefined;
let hold: Int32Array | undefined;
let work: ReturnType<typeof jobWork> | undefined;
port.on('message', (message: ToWorker) => {
  if (message.type === 'start') {
    ({ task, hold } = message);
    work = undefined;
    return;
  }
  try {
    work ??= jobWork(task!);
    if (message.type === 'page') {
      work.add(message.rows);
      if (hold) {
        // Tests only (job-thread.ts holdNextJob): stop mid-job, synchronously, until released.
        if (Atomics.load(hold, 0) === 0) reply({ type: 'held' });
        Atomics.wait(hold, 0, 0);
      }
      reply({ type: 'ack' });
    } else {
      const value = work.finish();
      work = undefined;
      reply({ type: 'result', value });
    }
  } catch (err) {
    reply({ type: 'error', error: toWireError(err) });
  }
});
