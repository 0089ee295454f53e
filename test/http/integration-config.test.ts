// VOUCH_PUBLIC_URL, VOUCH_CORS_ORIGINS and VOUCH_WEBHOOK_ALLOW_PRIVATE: read, defaulted and validated (docs/api.md,
// "Running it").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/env.ts';
import { ConfigError } from '../../src/config/env-values.ts';

test('defaults: no public URL, CORS off, private webhooks refused', () => {
  const config = loadConfig({});
  assert.equal(config.publicUrl, undefined);
  assert.deepEqual(config.corsOrigins, []);
  assert.equal(config.webhookAllowPrivate, false);
});

test('valid values are read; a trailing slash is dropped', () => {
  const config = loadConfig({
    VOUCH_PUBLIC_URL: 'https://risk.example.com/vouch/',
    VOUCH_CORS_ORIGINS: 'https://a.example, http://localhost:3000',
    VOUCH_WEBHOOK_ALLOW_PRIVATE: '1',
  });
  assert.equal(config.publicUrl, 'https://risk.example.com/vouch');
  assert.deepEqual(config.corsOrigins, ['https://a.example', 'http://localhost:3000']);
  assert.equal(config.webhookAllowPrivate, true);
});

test('bad values stop with a ConfigError naming the variable', () => {
  for (const [name, value] of [
    ['VOUCH_PUBLIC_URL', 'not a url'],
    ['VOUCH_PUBLIC_URL', 'ftp://x.example'],
    ['VOUCH_PUBLIC_URL', 'https://u:p@x.example'],
    ['VOUCH_PUBLIC_URL', 'https://x.example/?q=1'],
    ['VOUCH_CORS_ORIGINS', '*'],
    ['VOUCH_CORS_ORIGINS', 'https://a.example/path'],
    ['VOUCH_CORS_ORIGINS', ','],
    ['VOUCH_WEBHOOK_ALLOW_PRIVATE', 'yes'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (e: unknown) => e instanceof ConfigError && e.message.startsWith(name),
      `${name}=${value}`,
    );
  }
});
