// Worker threads for work that would hold the event loop (the OPRF, peers' answers, policy jobs).
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker whose entry is `name` beside the calling module (`callerUrl`, its import.meta.url): the
 * compiled .js in dist/; under tsx (tests, dev) the .ts source, loaded through tsx's loader, which a
 * worker does not inherit from its parent.
 */
export function spawnWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), options);
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(
    `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`,
    { ...options, eval: true },
  );
}

export type WorkerReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/**
 * One worker per process, started on first use, jobs answered by id. An idle worker does not keep
 * the process alive; one with work does. A worker that fails or stops fails what it was given, and
 * the next job starts a new one.
 */
export class LazyWorker<Job extends object> {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();

  constructor(
    private readonly callerUrl: string,
    private readonly name: string,
  ) {}

  submit<T>(job: Job): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      const w = this.ensure();
      w.ref();
      w.postMessage({ ...job, id });
    });
  }

  private failAll(err: Error): void {
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
    this.worker = undefined;
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const w = spawnWorker(this.callerUrl, this.name);
    w.on('message', (reply: WorkerReply) => {
      const pending = this.waiting.get(reply.id);
      if (!pending) return;
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) w.unref();
      if (reply.ok) pending.resolve(reply.value);
      else pending.reject(new Error(reply.error));
    });
    w.on('error', (err) => this.failAll(err));
    w.on('exit', () => this.failAll(new Error(`the ${this.name} thread stopped`)));
    this.worker = w;
    return w;
  }
}
