// The worker thread of fits and backtests (issue 18), one job at a time. `start` names the job;
// then either `read` (the worker reads the store over a connection of its own, see store/readers.ts)
// or a series of `page`s fed by the main thread, each answered once it is folded in so the
// reader never runs ahead, and `end`. The result (or the job's error) is the last reply.
// The worker reports its progress after every page and at every phase (job-thread.ts passes it to
// the lease row); the decisions to read are counted first, over the same connection.
import { parentPort } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
import { jobWork, toWireError, type JobTask, type WireDecision } from './job-tasks.ts';
import { openReader } from '../store/readers.ts';
import { countDecisions, jobPages } from './stored.ts';
import type { ToWorker, FromWorker } from './job-thread.ts';
import type { JobPhase } from './jobs.ts';

const port = parentPort!;
const reply = (message: FromWorker) => port.postMessage(message);

let task: JobTask | undefined;
let hold: Int32Array | undefined;
let work: ReturnType<typeof jobWork> | undefined;
let read = 0;
let total: number | null = null;
let peakHeap = 0;

function report(phase: JobPhase): void {
  peakHeap = Math.max(peakHeap, getHeapStatistics().used_heap_size);
  reply({
    type: 'progress',
    progress: { phase, decisionsRead: read, labelled: work?.labelled() ?? 0, total, heapUsed: peakHeap },
  });
}

function fold(rows: readonly WireDecision[]): void {
  work ??= jobWork(task!);
  work.add(rows);
  read += rows.length;
  report('reading');
  if (hold) {
    // Tests only (job-thread.ts holdNextJob): stop mid-job, synchronously, until released.
    if (Atomics.load(hold, 0) === 0) reply({ type: 'held' });
    Atomics.wait(hold, 0, 0);
  }
}

function finish(): unknown {
  work ??= jobWork(task!);
  const value = work.finish(report);
  report('reporting');
  work = undefined;
  return value;
}

async function readAndFinish(message: Extract<ToWorker, { type: 'read' }>): Promise<unknown> {
  const db = openReader(message.source);
  try {
    total = await countDecisions(db, message.environment, message.window);
    report('reading');
    for await (const page of jobPages(db, task!, message.environment, message.window)) fold(page);
    return finish();
  } finally {
    await db.destroy();
  }
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'start') {
    ({ task, hold } = message);
    work = undefined;
    read = 0;
    total = message.total ?? null;
    peakHeap = 0;
    return;
  }
  try {
    if (message.type === 'page') {
      fold(message.rows);
      reply({ type: 'ack' });
    } else if (message.type === 'end') {
      reply({ type: 'result', value: finish() });
    } else {
      readAndFinish(message).then(
        (value) => reply({ type: 'result', value }),
        (err: unknown) => reply({ type: 'error', error: toWireError(err) }),
      );
    }
  } catch (err) {
    reply({ type: 'error', error: toWireError(err) });
  }
});
