// The progress of `vouch policy fit|backtest` on standard error (--progress, or whenever standard
// error is a terminal): the job runs in this process's worker thread, which reports after every
// page and at every phase; the same figures reach the lease row, and thus GET
// /api/v1/policy-jobs, with each heartbeat. Standard output keeps the JSON result alone.
import { bar, progressLine } from '../lib/progress.ts';
import type { WorkerProgress } from './job-thread.ts';

const count = (n: number): string => n.toLocaleString('en');

function describe(kind: string, p: WorkerProgress): string {
  if (p.phase !== 'reading')
    return `${kind}: ${p.phase}, ${count(p.decisionsRead)} decisions read, ${count(p.labelled)} labelled`;
  const of = p.total === null ? '' : `/${count(p.total)}`;
  const meter = p.total ? `${bar(p.decisionsRead / p.total)} ` : '';
  return `${kind}: ${meter}reading ${count(p.decisionsRead)}${of} decisions, ${count(p.labelled)} labelled`;
}

/**
 * A listener for the job's reports and the call that ends the line. A terminal is redrawn at most
 * every 200 ms; elsewhere (a log) a line is written at each phase and at most every 5 s.
 */
export function jobProgressBar(
  kind: 'fit' | 'backtest',
  stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
) {
  const line = progressLine(stream);
  const every = stream.isTTY === true ? 200 : 5_000;
  let drawn = { at: 0, phase: '' };
  let last: WorkerProgress | undefined;
  return {
    onProgress(p: WorkerProgress): void {
      last = p;
      const now = Date.now();
      if (p.phase === drawn.phase && now - drawn.at < every) return;
      drawn = { at: now, phase: p.phase };
      line.update(describe(kind, p));
    },
    end(ok: boolean): void {
      line.end(
        last && ok
          ? `${kind}: done, ${count(last.decisionsRead)} decisions read, ${count(last.labelled)} labelled`
          : undefined,
      );
    },
  };
}

/** Awaits the job with its bar (if any) drawn, and ends the bar's line however the job ends. */
export async function withJobProgress<T>(
  progress: ReturnType<typeof jobProgressBar> | undefined,
  job: Promise<T>,
): Promise<T> {
  try {
    const value = await job;
    progress?.end(true);
    return value;
  } catch (err) {
    progress?.end(false);
    throw err;
  }
}
