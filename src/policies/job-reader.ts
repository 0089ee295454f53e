// A job's worker thread reads the store over a connection of its own: store/readers.ts opens it,
// for whichever store runs.
export { openReader, storeSource, type StoreSource } from '../store/readers.ts';
