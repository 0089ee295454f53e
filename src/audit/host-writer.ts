// One SQLite writer per host (`serve --workers N` on SQLite). SQLite admits one writer at a time:
// two workers committing their own writes wait for each other's write lock in SQLite's busy
// handler, which sleeps the whole worker (1, 2, 5, 10… ms). So the workers do not write decisions
// or event batches themselves: each sends what one turn produced to the primary over the cluster
// channel, the primary's group commits join what every worker sent in one of its turns into one
// transaction, and each message is answered once that commit is over.
//
// Nothing is acknowledged before its commit: a worker's request waits for the answer. A failed
// commit fails what it held (its requests answer 500), and only that. Should the primary die,
// with a group in flight or not, its open transaction is never committed (SQLite rolls it back on
// the next open), the channel closes and everything still waiting fails; the workers exit with it.
import type { DecisionCommit, DecisionRow, DecisionWriter } from './decisions.ts';

const MESSAGE = 'vouch:host-write';

interface Call {
  type: typeof MESSAGE;
  id: number;
  /** which of the primary's writers: 'decisions' or a name given to serveHostWrites */
  kind: string;
  payload: unknown;
}
interface Answer {
  type: typeof MESSAGE;
  id: number;
  result?: unknown;
  /** why the call failed as a whole (no request data) */
  error?: string;
}

const isMessage = (m: unknown): m is Call & Answer =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === MESSAGE;

/** What the worker side needs of its channel to the primary (a cluster worker's `process`). */
export interface WriterChannel {
  send(message: Call): unknown;
  onMessage(listener: (message: unknown) => void): void;
  /** the channel is gone (the primary died or disconnected) */
  onClose(listener: () => void): void;
}

/** Thrown for writes the host writer did not commit; answered as a 500 `internal`. */
export class HostWriteError extends Error {}

/** The worker's side: calls answered by the primary after the commit that holds them. */
export class HostWriter {
  private next = 1;
  private closed = false;
  private readonly pending = new Map<number, { resolve: (result: unknown) => void; reject: (err: Error) => void }>();

  constructor(private readonly channel: WriterChannel) {
    channel.onMessage((message) => {
      if (!isMessage(message)) return;
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.error !== undefined)
        waiting.reject(new HostWriteError(`the host writer did not commit: ${message.error}`));
      else waiting.resolve(message.result);
    });
    channel.onClose(() => {
      this.closed = true;
      for (const [id, waiting] of this.pending) {
        this.pending.delete(id);
        waiting.reject(new HostWriteError('the host writer is gone; the write may not be stored'));
      }
    });
  }

  call(kind: string, payload: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(new HostWriteError('the host writer is gone'));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.channel.send({ type: MESSAGE, id, kind, payload });
    });
  }

  /** A DecisionCommit that commits in the host's writer: an outcome per row. */
  decisionCommit(): DecisionCommit {
    return async (rows) => {
      const ok = (await this.call('decisions', rows)) as boolean[];
      const error = new HostWriteError('the host writer did not commit the decision');
      return rows.map((_, i) => (ok[i] ? { ok: true, result: undefined } : { ok: false, error }));
    };
  }
}

/** What the primary does with one kind of call: resolves with the answer once committed. */
export type HostHandler = (payload: unknown) => Promise<unknown>;

/**
 * The primary's decision handler: each row through `writer`, whose group commit joins every worker's rows of one turn.
 */
export function decisionHandler(writer: DecisionWriter): HostHandler {
  return async (payload) => {
    const rows = payload as DecisionRow[];
    const settled = await Promise.allSettled(rows.map((row) => writer.write(row)));
    return settled.map((s) => s.status === 'fulfilled');
  };
}

/** The primary's side: answers one call with its handler's result, or the reason it failed. */
export async function answerCall(
  handlers: Readonly<Record<string, HostHandler>>,
  message: unknown,
  answer: (answer: Answer) => void,
): Promise<boolean> {
  if (!isMessage(message) || typeof message.kind !== 'string') return false;
  const handler = Object.hasOwn(handlers, message.kind) ? handlers[message.kind] : undefined;
  try {
    if (!handler) throw new Error(`no host writer for ${message.kind}`);
    answer({ type: MESSAGE, id: message.id, result: await handler(message.payload) });
  } catch (err) {
    answer({ type: MESSAGE, id: message.id, error: err instanceof Error ? err.message : String(err) });
  }
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
