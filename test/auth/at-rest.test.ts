// Secrets at rest: the SQLite file and its directory are private to the owner, and private
// signing keys are sealed under a key-encryption key, so a copy of the database alone cannot sign.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  copyFileSync,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
  chmodSync,
  existsSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, decodeProtectedHeader, SignJWT } from 'jose';
import { backends, freshStore, testConfig, bearer } from '../helpers/app.ts';
import { sql } from 'kysely';
import { openStore } from '../../src/store/db.ts';
import { buildApp } from '../../src/app.ts';
import { ensureSigningKey, prepareStore } from '../../src/server.ts';
import { resolveKeyEncryption, unseal, SigningKeyDecryptionError } from '../../src/auth/kek.ts';
import { ConfigError } from '../../src/config/env-values.ts';
import { silentLog } from '../../src/auth/events.ts';
import { KeyRing, rotateSigningKey } from '../../src/auth/signing-keys.ts';

const mode = (path: string) => statSync(path).mode & 0o777;
const SECRET_A = 'a'.repeat(16) + '-first-secret-key-encryption';
const SECRET_B = 'b'.repeat(16) + '-second-secret-key-encryption';

describe('SQLite file permissions', () => {
  test('a new database: its directory is created 0700, the file, -wal and -shm are 0600, the generated vouch.key 0600', async () => {
    const root = mkdtempSync(join(tmpdir(), 'vouch-perm-'));
    try {
      const path = join(root, 'nested', 'dir', 'vouch.db');
      const store = await prepareStore({ ...testConfig(), databaseUrl: `sqlite:${path}` }, silentLog);
      try {
        await store.db.selectFrom('clients').selectAll().execute();
        assert.equal(mode(join(root, 'nested')), 0o700);
        assert.equal(mode(join(root, 'nested', 'dir')), 0o700);
        assert.equal(mode(path), 0o600);
        assert.equal(mode(`${path}-wal`), 0o600);
        assert.equal(mode(`${path}-shm`), 0o600);
        assert.equal(mode(join(root, 'nested', 'dir', 'vouch.key')), 0o600);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('an existing world-readable database file is narrowed to 0600 when opened', async () => {
    const root = mkdtempSync(join(tmpdir(), 'vouch-perm-'));
    try {
      const path = join(root, 'old.db');
      writeFileSync(path, '');
      chmodSync(path, 0o644);
      const store = openStore(`sqlite:${path}`);
      await store.migrate();
      await store.close();
      assert.equal(mode(path), 0o600);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

for (const backend of backends()) {
  describe(`signing keys at rest [${backend}]`, () => {
    test('the stored private_jwk is sealed: no clear "d" member, nor its value anywhere in the row', async () => {
      const fresh = await freshStore(backend);
      const config = testConfig({ secretKey: SECRET_A });
      try {
        const app = await buildApp({ config, store: fresh.store, logger: false });
        await app.close();
        const rows = await fresh.store.db.selectFrom('signing_keys').selectAll().execute();
        assert.equal(rows.length, 1);
        const row = rows[0]!;
        const stored = JSON.parse(row.private_jwk) as Record<string, unknown>;
        assert.ok(!('d' in stored));
        assert.equal(stored.sealed, 'A256GCM');
        const d = String(
          (JSON.parse(unseal(row.private_jwk, row.kid, resolveKeyEncryption(config, fresh.store)).jwk) as { d: string })
            .d,
        );
        assert.equal(Buffer.from(d, 'base64url').length, 32);
        assert.ok(!row.private_jwk.includes(d));
        assert.ok(!row.private_jwk.includes(Buffer.from(d, 'base64url').toString('hex')));
      } finally {
        await fresh.drop();
      }
    });

    test('a store sealed under one KEK, started with another: a clear error naming the key-encryption key, nothing signed', async () => {
      const fresh = await freshStore(backend);
      try {
        await ensureSigningKey(
          fresh.store,
          resolveKeyEncryption({ secretKey: SECRET_A, secretKeyFile: undefined }, fresh.store),
        );
        const before = await fresh.store.db.selectFrom('signing_keys').selectAll().execute();
        await assert.rejects(
          buildApp({ config: testConfig({ secretKey: SECRET_B }), store: fresh.store, logger: false }),
          (err: unknown) =>
            err instanceof SigningKeyDecryptionError &&
            err instanceof ConfigError &&
            /key-encryption key/.test(err.message) &&
            /VOUCH_SECRET_KEY/.test(err.message),
        );
        await assert.rejects(
          ensureSigningKey(
            fresh.store,
            resolveKeyEncryption({ secretKey: SECRET_B, secretKeyFile: undefined }, fresh.store),
          ),
          SigningKeyDecryptionError,
        );
        // `vouch signing-keys rotate` under the wrong KEK fails too, rather than mixing two KEKs.
        await assert.rejects(
          rotateSigningKey(
            fresh.store.db,
            resolveKeyEncryption({ secretKey: SECRET_B, secretKeyFile: undefined }, fresh.store),
          ),
          SigningKeyDecryptionError,
        );
        // Nothing was rewritten or added under the wrong key.
        assert.deepEqual(await fresh.store.db.selectFrom('signing_keys').selectAll().execute(), before);
      } finally {
        await fresh.drop();
      }
    });

    test('an old clear-text private key is sealed and retired at start: new tokens use a new key; tokens it signed verify until they expire; its bytes are gone from the SQLite file', async () => {
      const fresh = await freshStore(backend);
      try {
        const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
        const kid = 'legacy-key';
        const privateJwk = await exportJWK(privateKey);
        const clear = JSON.stringify({ ...privateJwk, kid, alg: 'EdDSA' });
        await fresh.store.db
          .insertInto('signing_keys')
          .values({
            kid,
            private_jwk: clear,
            public_jwk: JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' }),
            created_at: Date.now(),
            retired_at: null,
          })
          .execute();
        // As in a store that has held the key for a while: the clear row is in the main file, not only the WAL.
        if (backend === 'sqlite') await sql`pragma wal_checkpoint(truncate)`.execute(fresh.store.db);
        const config = testConfig({ secretKey: SECRET_A });
        // The serving start (prepareStore → ensureSigningKey) replaces the key and scrubs the file.
        await ensureSigningKey(fresh.store, resolveKeyEncryption(config, fresh.store), silentLog);
        if (backend === 'sqlite') {
          const path = fresh.url.slice('sqlite:'.length);
          for (const file of [path, `${path}-wal`]) {
            if (existsSync(file))
              assert.ok(
                !readFileSync(file).includes(String(privateJwk.d)),
                `${file} still holds the clear private key`,
              );
          }
        }
        const app = await buildApp({ config, store: fresh.store, logger: false });
        try {
          const row = await fresh.store.db
            .selectFrom('signing_keys')
            .selectAll()
            .where('kid', '=', kid)
            .executeTakeFirstOrThrow();
          assert.notEqual(row.private_jwk, clear);
          assert.ok(!('d' in (JSON.parse(row.private_jwk) as object)));
          assert.ok(row.retired_at !== null, 'the key that was stored in clear no longer signs');
          assert.equal(unseal(row.private_jwk, kid, resolveKeyEncryption(config, fresh.store)).jwk, clear);
          const { createClient } = await import('../../src/auth/clients.ts');
          const { client, secret } = await createClient(fresh.store.db, {
            name: 'c',
            role: 'service',
            scopes: ['keys:read'],
          });
          const res = await app.inject({
            method: 'POST',
            url: '/api/v1/auth/token',
            payload: { client_id: client.client_id, client_secret: secret },
          });
          assert.equal(res.statusCode, 200);
          const token = res.json().access_token as string;
          assert.notEqual(decodeProtectedHeader(token).kid, kid);
          assert.equal(
            (await app.inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(token) })).statusCode,
            200,
          );
          // A token the old key signed before the upgrade still works until it expires.
          const now = Math.floor(Date.now() / 1000);
          const old = await new SignJWT({
            client_id: client.client_id,
            scope: 'keys:read',
            role: 'service',
            jti: 'legacy-token',
          })
            .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'at+jwt' })
            .setIssuer(config.issuer)
            .setAudience(config.audience)
            .setSubject(client.client_id)
            .setIssuedAt(now)
            .setExpirationTime(now + 600)
            .sign(privateKey);
          assert.equal(
            (await app.inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(old) })).statusCode,
            200,
          );
        } finally {
          await app.close();
        }
      } finally {
        await fresh.drop();
      }
    });

    test('a running process on the old KEK still verifies tokens of a key another process sealed under a new KEK; signing with it says which KEK is missing', async () => {
      const fresh = await freshStore(backend);
      try {
        const encA = resolveKeyEncryption({ secretKey: SECRET_A, secretKeyFile: undefined }, fresh.store);
        const encB = resolveKeyEncryption({ secretKey: SECRET_B, secretKeyFile: undefined }, fresh.store);
        await ensureSigningKey(fresh.store, encA, silentLog);
        const ring = new KeyRing(fresh.store.db, 60_000, encA);
        await ring.init();
        // Another process, restarted with the new KEK (and the old one as previous), rotates.
        const kid = await rotateSigningKey(fresh.store.db, { ...encB, previous: [encA.current] });
        await ring.refresh();
        assert.ok(await ring.verificationKey(kid), 'the new key verifies on the old process');
        await assert.rejects(ring.signingKey(), SigningKeyDecryptionError);
      } finally {
        await fresh.drop();
      }
    });

    test('KEK rotation: started with the new key and VOUCH_SECRET_KEY_PREVIOUS = the old one, every row is resealed; then the new key alone starts', async () => {
      const fresh = await freshStore(backend);
      try {
        const oldEnc = resolveKeyEncryption({ secretKey: SECRET_A, secretKeyFile: undefined }, fresh.store);
        await ensureSigningKey(fresh.store, oldEnc);
        const rotating = resolveKeyEncryption({ secretKey: SECRET_B, secretKeyFile: undefined }, fresh.store, {
          VOUCH_SECRET_KEY_PREVIOUS: SECRET_A,
        });
        await ensureSigningKey(fresh.store, rotating);
        const rows = await fresh.store.db.selectFrom('signing_keys').selectAll().execute();
        assert.ok(rows.every((r) => (JSON.parse(r.private_jwk) as { kek: string }).kek === rotating.current.id));
        const app = await buildApp({ config: testConfig({ secretKey: SECRET_B }), store: fresh.store, logger: false });
        await app.close();
        // The old key alone no longer opens the store.
        await assert.rejects(
          buildApp({ config: testConfig({ secretKey: SECRET_A }), store: fresh.store, logger: false }),
          SigningKeyDecryptionError,
        );
      } finally {
        await fresh.drop();
      }
    });
  });
}

describe('key-encryption key sources', () => {
  test('a copy of the SQLite file alone (no vouch.key beside it) cannot start: clear error', async () => {
    const root = mkdtempSync(join(tmpdir(), 'vouch-copy-'));
    try {
      const path = join(root, 'a', 'vouch.db');
      const store = await prepareStore({ ...testConfig(), databaseUrl: `sqlite:${path}` }, silentLog);
      store.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
      await store.close();
      const stolen = join(root, 'b', 'vouch.db');
      const copy = openStore(`sqlite:${stolen}`); // makes the directory
      await copy.close();
      copyFileSync(path, stolen);
      rmSync(`${stolen}-wal`, { force: true });
      rmSync(`${stolen}-shm`, { force: true });
      await assert.rejects(
        prepareStore({ ...testConfig(), databaseUrl: `sqlite:${stolen}` }, silentLog),
        (err: unknown) => err instanceof SigningKeyDecryptionError && /key-encryption key/.test((err as Error).message),
      );
      // With the original key file beside it, it starts.
      copyFileSync(join(root, 'a', 'vouch.key'), join(root, 'b', 'vouch.key'));
      const ok = await prepareStore({ ...testConfig(), databaseUrl: `sqlite:${stolen}` }, silentLog);
      await ok.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('VOUCH_SECRET_KEY_FILE is read (and must exist and hold 32+ characters); VOUCH_SECRET_KEY wins over it; a short previous key is refused', () => {
    const root = mkdtempSync(join(tmpdir(), 'vouch-kek-'));
    try {
      const store = { sqlite: undefined };
      const file = join(root, 'kek');
      writeFileSync(file, `${SECRET_A}\n`, { mode: 0o600 });
      assert.equal(
        resolveKeyEncryption({ secretKey: undefined, secretKeyFile: file }, store, {}).current.id,
        resolveKeyEncryption({ secretKey: SECRET_A, secretKeyFile: undefined }, store, {}).current.id,
      );
      assert.equal(
        resolveKeyEncryption({ secretKey: SECRET_B, secretKeyFile: file }, store, {}).current.id,
        resolveKeyEncryption({ secretKey: SECRET_B, secretKeyFile: undefined }, store, {}).current.id,
      );
      assert.throws(
        () => resolveKeyEncryption({ secretKey: undefined, secretKeyFile: join(root, 'missing') }, store, {}),
        /VOUCH_SECRET_KEY_FILE/,
      );
      writeFileSync(join(root, 'short'), 'too short');
      assert.throws(
        () => resolveKeyEncryption({ secretKey: undefined, secretKeyFile: join(root, 'short') }, store, {}),
        /at least 32/,
      );
      assert.throws(
        () =>
          resolveKeyEncryption({ secretKey: SECRET_A, secretKeyFile: undefined }, store, {
            VOUCH_SECRET_KEY_PREVIOUS: 'short',
          }),
        /VOUCH_SECRET_KEY_PREVIOUS/,
      );
      assert.notEqual(
        resolveKeyEncryption({ secretKey: SECRET_A, secretKeyFile: undefined }, store, {}).current.id,
        resolveKeyEncryption({ secretKey: SECRET_B, secretKeyFile: undefined }, store, {}).current.id,
      );
      assert.ok(!existsSync(join(root, 'vouch.key')));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
