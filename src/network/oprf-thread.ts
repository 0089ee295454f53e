// The OPRF's batch work off the main thread (oprf-worker.ts): one worker per process, started on
// first use, jobs answered in order. Serving a peer's evaluate request or resolving a batch of
// identifiers then costs the process's other requests nothing but a core's share.
import { LazyWorker, type WorkerReply } from '../lib/worker-thread.ts';
import type { Blinded, OprfKeyPair } from './oprf.ts';

export type OprfJob =
  | { id: number; op: 'evaluate'; secretKey: Uint8Array; publicKey: Uint8Array; elements: string[] }
  | { id: number; op: 'blind'; inputs: Uint8Array[] }
  | { id: number; op: 'own'; secretKey: Uint8Array; inputs: Uint8Array[] }
  | { id: number; op: 'finalize'; items: Blinded[]; evaluated: Uint8Array[]; publicKey: Uint8Array; proof: Uint8Array };

export type OprfReply = WorkerReply;

type Job = OprfJob extends infer J ? (J extends OprfJob ? Omit<J, 'id'> : never) : never;

const thread = new LazyWorker<Job>(import.meta.url, 'oprf-worker');
const submit = <T>(job: Job): Promise<T> => thread.submit<T>(job);

/**
 * What a peer's evaluate request gets: the answer (base64url), or the index of the first element that is not a valid
 * one.
 */
export type EvaluateAnswer = { evaluated: string[]; proof: string } | { bad: number };

/**
 * A peer's elements (base64url, as received) checked and evaluated under `keys` (evaluateElements,
 * oprf.ts), in the worker: decoding 1,000 ristretto255 elements alone is ~0.1 s of CPU.
 */
export const evaluateBlindedOff = (keys: OprfKeyPair, elements: string[]) =>
  submit<EvaluateAnswer>({ op: 'evaluate', secretKey: keys.secretKey, publicKey: keys.publicKey, elements });

/** ownEntries (oprf.ts), in the worker: the publisher's PRF of new flagged identifiers. */
export const ownEntriesOff = (secretKey: Uint8Array, inputs: Uint8Array[]) =>
  submit<Array<{ tag: string; labelKey: string }>>({ op: 'own', secretKey, inputs });

/** blindInputs (oprf.ts), in the worker. */
export const blindInputsOff = (inputs: Uint8Array[]) => submit<Blinded[]>({ op: 'blind', inputs });

/** finalizeAll (oprf.ts), in the worker: undefined when the proof does not verify. */
export const finalizeAllOff = async (
  items: Blinded[],
  evaluated: Uint8Array[],
  publicKey: Uint8Array,
  proof: Uint8Array,
) => (await submit<Uint8Array[] | null>({ op: 'finalize', items, evaluated, publicKey, proof })) ?? undefined;
