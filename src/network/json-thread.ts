// Peers' answers parsed off the main thread (json-worker.ts): one worker per process, started on
// first use, idle without keeping the process alive. Small answers (a descriptor, a problem) are
// parsed in place: their cost is bounded by their size and a thread hop would cost more.
import { LazyWorker } from '../lib/worker-thread.ts';
import { parseBounded } from './bounded-json.ts';

/** Up to this many characters, parsing in place costs well under a millisecond. */
const IN_PLACE_CHARS = 32 * 1024;

const thread = new LazyWorker<{ text: string; maxDepth: number }>(import.meta.url, 'json-worker');

/** The parsed answer; rejects when it is not JSON or nests deeper than `maxDepth`. */
export function parseOff(text: string, maxDepth: number): Promise<unknown> {
  if (text.length <= IN_PLACE_CHARS) {
    try {
      return Promise.resolve(parseBounded(text, maxDepth));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
  return thread.submit({ text, maxDepth });
}
