// A fresh store migrated only up to a given migration, to test a later one over existing data.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, type Kysely } from 'kysely';
import { openStore, type Store } from '../../src/store/db.ts';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import type { Backend } from './app.ts';
import { newPostgresHome } from './pg-stores.ts';

/** Every migration whose name sorts before `firstMissing` (e.g. '006') is applied; none after. */
export async function storeMigratedBefore(
  backend: Backend,
  firstMissing: string,
): Promise<{ store: Store; drop(): Promise<void> }> {
  const tag = randomBytes(6).toString('hex');
  let store: Store;
  let drop: () => Promise<void>;
  let schema: string | undefined;
  if (backend === 'sqlite') {
    const path = join(tmpdir(), `vouch-mig-${tag}.db`);
    store = openStore(`sqlite:${path}`);
    drop = async () => {
      await store.close();
      for (const s of ['', '-wal', '-shm']) rmSync(path + s, { force: true });
    };
  } else {
    // An empty database of its own (test/helpers/pg-stores.ts), or an empty schema.
    const home = await newPostgresHome(false);
    schema = home.schema ?? 'public';
    store = openStore(home.url, { ...(home.schema ? { schema } : {}), poolSize: 2 });
    drop = async () => {
      await store.close();
      await home.drop();
    };
  }
  const before = Object.fromEntries(
    Object.entries(MIGRATIONS)
      .filter(([name]) => name < firstMissing)
      .map(([name, make]) => [name, make(backend)]),
  );
  const migrator = new Migrator({
    db: store.db as Kysely<unknown>,
    provider: { getMigrations: async () => before },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
  return { store, drop };
}
