// Two instances over one store: two apps, each with its own store connection (one SQLite file or
// one PostgreSQL schema), the bootstrap admin's token, and API keys made on the first.
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { freshStore, testConfig, ADMIN_ID, ADMIN_SECRET, type Backend, type TestStore } from './app.ts';
import { openStore } from '../../src/store/db.ts';
import { buildApp } from '../../src/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import type { Environment } from '../../src/lib/principal.ts';

export interface TwoInstances {
  fresh: TestStore;
  a: FastifyInstance;
  b: FastifyInstance;
  /** the bootstrap admin's bearer token */
  token: string;
  /** a new API key (its secret), made on the first instance */
  key(name: string, environment: Environment, role: string, scopes: string[]): Promise<string>;
  close(): Promise<void>;
}

export async function twoInstances(backend: Backend): Promise<TwoInstances> {
  const fresh = await freshStore(backend);
  const config = testConfig();
  await ensureBootstrapAdmin(fresh.store, config);
  const second = openStore(fresh.url);
  const a = await buildApp({ config, store: fresh.store, logger: false });
  const b = await buildApp({ config, store: second, logger: false });
  await Promise.all([a.ready(), b.ready()]);
  const token = (
    await a.inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET },
    })
  ).json().access_token as string;
  return {
    fresh,
    a,
    b,
    token,
    async key(name, environment, role, scopes) {
      const res = await a.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: { authorization: `Bearer ${token}` },
        payload: { name, role, environment, scopes },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().key as string;
    },
    async close() {
      await Promise.all([a.close(), b.close()]);
      await second.close();
      await fresh.drop();
    },
  };
}
