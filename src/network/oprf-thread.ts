// The OPRF's batch work off the main thread (oprf-worker.ts): one worker per process, started on
// first use, jobs answered in order. Serving a peer's evaluate request or resolving a batch of
// identifiers then costs the process's other requests nothing but a core's share.
import { Worker } from 'node:worker_threads';
import type { Blinded, OprfKeyPair } from './oprf.ts';

export type OprfJob =
  | { id: number; op: 'evaluate'; secretKey: Uint8Array; publicKey: Uint8Array; elements: string[] }
  | { id: number; op: 'blind'; inputs: Uint8Array[] }
  | { id: number; op: 'own'; secretKey: Uint8Array; inputs: Uint8Array[] }
  | { id: number; op: 'finalize'; items: Blinded[]; evaluated: Uint8Array[]; publicKey: Uint8Array; proof: Uint8Array };

export type OprfReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

type Job = OprfJob extends infer J ? (J extends OprfJob ? Omit<J, 'id'> : never) : never;

/** The worker's entry: the compiled .js in dist/; under tsx, the .ts source through tsx's loader. */
function spawn(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./oprf-worker.js', import.meta.url));
  const entry = new URL('./oprf-worker.ts', import.meta.url).href;
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
  w.on('message', (reply: OprfReply) => {
    const pending = waiting.get(reply.id);
    if (!pending) return;
    waiting.delete(reply.id);
    // An idle worker does not keep the process alive; one with work does.
    if (waiting.size === 0) w.unref();
    if (reply.ok) pending.resolve(reply.value);
    else pending.reject(new Error(reply.error));
  });
  w.on('error', (err) => failAll(err));
  w.on('exit', () => failAll(new Error('the OPRF worker stopped')));
  worker = w;
  return w;
}

function submit<T>(job: Job): Promise<T> {
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
    const w = ensureWorker();
    w.ref();
    w.postMessage({ ...job, id });
  });
}

/** What a peer's evaluate request gets: the answer (base64url), or the index of the first element that is not a valid one. */
export type EvaluateAnswer = { evaluated: string[]; proof: string } | { bad: number };

/**
 * A peer's elements (base64url, as received) checked and evaluated under `keys` (evaluateElements,
 * oprf.ts), in the worker: decoding 1,000 ristretto255 elements alone is ~0.1 s of CPU.
 */
export const evaluateBlindedOff = (keys: OprfKeyPair, elements: string[]) =>
  submit<EvaluateAnswer>({ op: 'evaluate', secretKey: keys.secretKey, publicKey: keys.publicKey, elements });

/** ownEntries (oprf.ts), in the worker: the publisher's PRF of new flagged identifiers. */
export const ownEntriesOff = (secretKey: Uint8Array, inputs: Uint8Array[]) => submit<Array<{ tag: string; labelKey: string }>>({ op: 'own', secretKey, inputs });

/** blindInputs (oprf.ts), in the worker. */
export const blindInputsOff = (inputs: Uint8Array[]) => submit<Blinded[]>({ op: 'blind', inputs });

/** finalizeAll (oprf.ts), in the worker: undefined when the proof does not verify. */
export const finalizeAllOff = async (items: Blinded[], evaluated: Uint8Array[], publicKey: Uint8Array, proof: Uint8Array) =>
  (await submit<Uint8Array[] | null>({ op: 'finalize', items, evaluated, publicKey, proof })) ?? undefined;
