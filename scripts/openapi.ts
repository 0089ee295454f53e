// Writes the OpenAPI document the server serves at GET /api/v1/openapi.json to a file (default
// openapi.json in the OS temp directory), from an in-process app on an in-memory SQLite store.
// `npm run lint:openapi` lints that file with Redocly's recommended rules.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/env.ts';
import { openStore } from '../src/store/db.ts';
import { buildApp } from '../src/app.ts';

const out = process.argv[2] ?? join(tmpdir(), 'vouch-openapi.json');
const store = openStore('sqlite::memory:');
await store.migrate();
const app = await buildApp({ config: loadConfig({}), store, logger: false });
await app.ready();
const res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
if (res.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.statusCode}`);
writeFileSync(out, JSON.stringify(res.json(), null, 2) + '\n');
await app.close();
await store.close();
console.log(out);
