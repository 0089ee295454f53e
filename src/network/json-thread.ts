// Peers' answers parsed off the main thread (json-worker.ts): one worker per process, started on
// first use, idle without keeping the process alive. Small answers (a descriptor, a problem) are
// parsed in place: their cost is bounded by their size and a thread hop would cost more.
import { Worker } from 'node:worker_threads';
import { parseBounded } from './bounded-json.ts';

/** Up to this many characters, parsing in place costs well under a millisecond. */
const IN_PLACE_CHARS = 32 * 1024;

function spawn(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./json-worker.js', import.meta.url));
  const entry = new URL('./json-worker.ts', import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`, { eval: true });
}

let worker: Worker | undefined;
let nextId = 0;
const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();

function failAll(err: Error): void {
  for (const w of waiting.values()) w.reject(err);
  waiting.clear();
  worker = undefined;
}

function ensureWorker(): Worker {
  if (worker) return worker;
  const w = spawn();
  w.on('message', (reply: { id: number; ok: boolean; value?: unknown; error?: string }) => {
    const pending = waiting.get(reply.id);
    if (!pending) return;
    waiting.delete(reply.id);
    if (waiting.size === 0) w.unref();
    if (reply.ok) pending.resolve(reply.value);
    else pending.reject(new Error(reply.error));
  });
  w.on('error', (err) => failAll(err));
  w.on('exit', () => failAll(new Error('the JSON worker stopped')));
  worker = w;
  return w;
}

/** The parsed answer; rejects when it is not JSON or nests deeper than `maxDepth`. */
export function parseOff(text: string, maxDepth: number): Promise<unknown> {
  if (text.length <= IN_PLACE_CHARS) {
    try {
      return Promise.resolve(parseBounded(text, maxDepth));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    const w = ensureWorker();
    w.ref();
    w.postMessage({ id, text, maxDepth });
  });
}
