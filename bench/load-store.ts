// `npx tsx bench/load-store.ts FILE|postgres://… ENTITIES EVENTS`: a store for bench/cpu-per-request.ts, loaded with
// the bench's synthetic history (bench/data.ts) as `npm run bench` loads its own, and kept.
import { openStore } from '../src/store/db.ts';
import { ingestEvents } from '../src/trust/ingest.ts';
import { DEFAULT_POLICY } from '../src/model/policy.ts';
import { history } from './data.ts';

const [target, entities, events] = process.argv.slice(2);
if (!target || !entities || !events) throw new Error('usage: load-store.ts FILE|postgres://… ENTITIES EVENTS');
const store = openStore(target.includes('://') ? target : `sqlite:${target}`);
await store.migrate();
let loaded = 0;
for (const batch of history(Number(entities), Number(events))) {
  loaded += batch.length;
  await ingestEvents(store, batch, DEFAULT_POLICY, { environment: 'live' });
  if (loaded % 100_000 === 0) process.stderr.write(`loaded ${loaded}\n`);
}
await store.close();
