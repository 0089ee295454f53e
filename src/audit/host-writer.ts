// One SQLite writer per host (`serve --workers N` on SQLite). SQLite admits one writer at a time:
// two workers committing their own decisions wait for each other's write lock in SQLite's busy
// handler, which sleeps the whole worker (1, 2, 5, 10… ms). So the workers never write decisions
// themselves: each sends the group of one turn to the primary over the cluster channel, the
// primary's DecisionWriter commits the groups of every worker that arrive in one of its turns in
// one transaction, and answers each message with an outcome per row once that commit is over.
//
// Nothing is acknowledged before its commit: a worker's request waits for the answer. A failed
// commit fails the rows it held (their requests answer 500), and only those. Should the primary
// die, with a group in flight or not, its open transaction is never committed (SQLite rolls it back
// on the next open), the channel closes and every row still waiting fails; the workers exit with it.
import type { DecisionCommit, DecisionRow, DecisionWriter } from './decisions.ts';
import type { Outcome } from '../lib/group-commit.ts';

const MESSAGE = 'vouch:decisions';

interface Submit {
  type: typeof MESSAGE;
  id: number;
  rows: DecisionRow[];
}
interface Answer {
  type: typeof MESSAGE;
  id: number;
  /** one per row, in order: committed or not */
  ok: boolean[];
  /** why the rows that failed did (no row data) */
  error?: string;
}

const isMessage = (m: unknown): m is Submit & Answer => typeof m === 'object' && m !== null && (m as { type?: unknown }).type === MESSAGE;

/** What the worker side needs of its channel to the primary (a cluster worker's `process`). */
export interface WriterChannel {
  send(message: Submit): unknown;
  onMessage(listener: (message: unknown) => void): void;
  /** the channel is gone (the primary died or disconnected) */
  onClose(listener: () => void): void;
}

/** Thrown for rows the host writer did not commit; answered as a 500 `internal`. */
export class HostWriteError extends Error {}

/** The worker's side: a DecisionCommit that commits in the host's writer. */
export function remoteDecisionCommit(channel: WriterChannel): DecisionCommit {
  let next = 1;
  let closed = false;
  const pending = new Map<number, { rows: number; resolve: (outcomes: Array<Outcome<undefined>>) => void }>();
  channel.onMessage((message) => {
    if (!isMessage(message)) return;
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    const error = new HostWriteError(`the host writer did not commit the decision: ${message.error ?? 'unknown error'}`);
    waiting.resolve(Array.from({ length: waiting.rows }, (_, i) => (message.ok[i] ? { ok: true, result: undefined } : { ok: false, error })));
  });
  channel.onClose(() => {
    closed = true;
    const error = new HostWriteError('the host writer is gone; the decision may not be stored');
    for (const [id, waiting] of pending) {
      pending.delete(id);
      waiting.resolve(Array.from({ length: waiting.rows }, () => ({ ok: false, error })));
    }
  });
  return (rows) => {
    if (closed) return Promise.reject(new HostWriteError('the host writer is gone'));
    const id = next++;
    return new Promise((resolve) => {
      pending.set(id, { rows: rows.length, resolve });
      channel.send({ type: MESSAGE, id, rows: [...rows] });
    });
  };
}

/**
 * The primary's side: commits what a worker sent through `writer` (whose group commit joins the
 * rows of every worker that arrive in one turn) and answers with an outcome per row.
 */
export async function commitForWorker(writer: DecisionWriter, message: unknown, answer: (answer: Answer) => void): Promise<boolean> {
  if (!isMessage(message) || !Array.isArray(message.rows)) return false;
  const settled = await Promise.allSettled(message.rows.map((row) => writer.write(row)));
  const failure = settled.find((s) => s.status === 'rejected');
  answer({
    type: MESSAGE,
    id: message.id,
    ok: settled.map((s) => s.status === 'fulfilled'),
    ...(failure ? { error: failure.reason instanceof Error ? failure.reason.message : String(failure.reason) } : {}),
  });
  return true;
}

/** A cluster worker's channel to its primary. */
export function primaryChannel(): WriterChannel {
  return {
    send: (message) => process.send!(message),
    onMessage: (listener) => process.on('message', listener),
    onClose: (listener) => process.on('disconnect', listener),
  };
}
