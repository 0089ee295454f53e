// Configuration from environment variables: the documented defaults, and a one-line ConfigError
// naming the variable for every bad value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/env.ts';
import { ConfigError } from '../../src/config/env-values.ts';

test('loadConfig with an empty environment: the docs/api.md, "Running it" defaults', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.databaseUrl, 'sqlite:./data/vouch.db');
  assert.equal(config.redisUrl, undefined);
  assert.equal(config.bootstrapClientId, undefined);
  assert.equal(config.bootstrapClientSecret, undefined);
  assert.equal(config.tokenTtlSeconds, 900);
  // A URL, so that discovery-based OAuth clients accept it (issue 18, item 9).
  assert.equal(config.issuer, 'http://127.0.0.1:8080');
  assert.equal(config.audience, 'vouch-api');
  assert.equal(config.policyFile, undefined);
  assert.equal(config.logLevel, 'info');
  // docs/api.md, "Limits": 100 requests/s with bursts of 200; token endpoint 30 per minute.
  assert.deepEqual(config.rateLimit, { perSecond: 100, burst: 200, tokenPerMinute: 30, tokenFailuresPerMinute: 30 });
  assert.equal(config.workers, undefined);
  // docs/api.md, "Limits": idle keep-alive connections close after 5 s; one source holds a quarter of the cap.
  assert.equal(config.keepAliveTimeoutMs, 5000);
  assert.equal(config.maxConnections, 1024);
  assert.equal(config.maxConnectionsPerSource, 256);
  assert.equal(config.sqliteWalLimitBytes, 1024 * 1024 * 1024);
});

test('the default issuer is the public URL, else the listen address (IPv6 in brackets); VOUCH_ISSUER wins', () => {
  assert.equal(loadConfig({ PORT: '9000', HOST: '10.1.2.3' }).issuer, 'http://10.1.2.3:9000');
  assert.equal(loadConfig({ HOST: '::1' }).issuer, 'http://[::1]:8080');
  assert.equal(
    loadConfig({ VOUCH_PUBLIC_URL: 'https://risk.example.com/vouch/' }).issuer,
    'https://risk.example.com/vouch',
  );
  assert.equal(loadConfig({ VOUCH_PUBLIC_URL: 'https://risk.example.com', VOUCH_ISSUER: 'vouch' }).issuer, 'vouch');
  // Tokens issued under the former default stay valid while no issuer is chosen explicitly.
  assert.deepEqual(loadConfig({}).formerIssuers, ['vouch']);
  assert.deepEqual(loadConfig({ VOUCH_ISSUER: 'https://vouch.example' }).formerIssuers, []);
});

test('connection and WAL limits are read; the per-source default follows the cap', () => {
  const config = loadConfig({
    VOUCH_MAX_CONNECTIONS: '50',
    VOUCH_KEEP_ALIVE_TIMEOUT_MS: '2500',
    VOUCH_SQLITE_WAL_LIMIT_MB: '16',
  });
  assert.equal(config.maxConnectionsPerSource, 13);
  assert.equal(config.keepAliveTimeoutMs, 2500);
  assert.equal(config.sqliteWalLimitBytes, 16 * 1024 * 1024);
  assert.equal(
    loadConfig({ VOUCH_MAX_CONNECTIONS: '50', VOUCH_MAX_CONNECTIONS_PER_SOURCE: '5' }).maxConnectionsPerSource,
    5,
  );
});

test('loadConfig with every variable set: each is read', () => {
  const config = loadConfig({
    PORT: '9090',
    HOST: '0.0.0.0',
    VOUCH_DATABASE_URL: 'postgres://u:p@db:5432/vouch',
    VOUCH_REDIS_URL: 'redis://cache:6379',
    VOUCH_BOOTSTRAP_CLIENT_ID: 'ops-admin',
    VOUCH_BOOTSTRAP_CLIENT_SECRET: 'a-very-long-secret-value',
    VOUCH_TOKEN_TTL_SECONDS: '300',
    VOUCH_ISSUER: 'https://vouch.example',
    VOUCH_AUDIENCE: 'marketplace',
    VOUCH_POLICY_FILE: '/etc/vouch/policy.json',
    VOUCH_LOG_LEVEL: 'debug',
    VOUCH_RATE_LIMIT_PER_SECOND: '10',
    VOUCH_RATE_LIMIT_BURST: '20',
    VOUCH_TOKEN_RATE_LIMIT_PER_MINUTE: '5',
    VOUCH_WORKERS: '4',
    VOUCH_TOKEN_FAILURES_PER_MINUTE: '7',
    VOUCH_SECRET_KEY: 'k'.repeat(32),
    VOUCH_SECRET_KEY_FILE: '/etc/vouch/kek',
    VOUCH_TRUST_PROXY: '10.0.0.0/8, loopback',
    VOUCH_REQUIRE_HASHED_IDS: '1',
    VOUCH_METRICS_TOKEN: 'metrics-token-0123',
    VOUCH_MAX_CONNECTIONS: '50',
  });
  assert.equal(config.port, 9090);
  assert.equal(config.host, '0.0.0.0');
  assert.equal(config.databaseUrl, 'postgres://u:p@db:5432/vouch');
  assert.equal(config.redisUrl, 'redis://cache:6379');
  assert.equal(config.bootstrapClientId, 'ops-admin');
  assert.equal(config.bootstrapClientSecret, 'a-very-long-secret-value');
  assert.equal(config.tokenTtlSeconds, 300);
  assert.equal(config.issuer, 'https://vouch.example');
  assert.equal(config.audience, 'marketplace');
  assert.equal(config.policyFile, '/etc/vouch/policy.json');
  assert.equal(config.logLevel, 'debug');
  assert.deepEqual(config.rateLimit, { perSecond: 10, burst: 20, tokenPerMinute: 5, tokenFailuresPerMinute: 7 });
  assert.equal(config.workers, 4);
  assert.equal(config.secretKey, 'k'.repeat(32));
  assert.equal(config.secretKeyFile, '/etc/vouch/kek');
  assert.deepEqual(config.trustProxy, ['10.0.0.0/8', 'loopback']);
  assert.equal(config.requireHashedIds, true);
  assert.equal(config.metricsToken, 'metrics-token-0123');
  assert.equal(config.maxConnections, 50);
  assert.equal(loadConfig({ VOUCH_TRUST_PROXY: 'hops:2' }).trustProxy, 2);
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ VOUCH_DATABASE_URL: 'postgresql://h/db' }).databaseUrl, 'postgresql://h/db');
  assert.equal(loadConfig({ VOUCH_DATABASE_URL: 'sqlite:/tmp/x.db' }).databaseUrl, 'sqlite:/tmp/x.db');
  assert.equal(loadConfig({}).sqliteSynchronous, 'normal');
  assert.equal(loadConfig({ VOUCH_SQLITE_SYNCHRONOUS: 'FULL' }).sqliteSynchronous, 'full');
});

const BAD: [Record<string, string>, string][] = [
  [{ PORT: 'abc' }, 'PORT'],
  [{ PORT: '70000' }, 'PORT'],
  [{ PORT: '-1' }, 'PORT'],
  [{ PORT: '80.5' }, 'PORT'],
  [{ HOST: '  ' }, 'HOST'],
  [{ VOUCH_DATABASE_URL: 'mysql://x' }, 'VOUCH_DATABASE_URL'],
  [{ VOUCH_DATABASE_URL: 'sqlite:' }, 'VOUCH_DATABASE_URL'],
  [{ VOUCH_DATABASE_URL: '' }, 'VOUCH_DATABASE_URL'],
  [{ VOUCH_REDIS_URL: 'http://cache' }, 'VOUCH_REDIS_URL'],
  [{ VOUCH_LOG_LEVEL: 'loud' }, 'VOUCH_LOG_LEVEL'],
  [{ VOUCH_TOKEN_TTL_SECONDS: '5' }, 'VOUCH_TOKEN_TTL_SECONDS'],
  [{ VOUCH_TOKEN_TTL_SECONDS: '86401' }, 'VOUCH_TOKEN_TTL_SECONDS'],
  [{ VOUCH_TOKEN_TTL_SECONDS: '15m' }, 'VOUCH_TOKEN_TTL_SECONDS'],
  [{ VOUCH_BOOTSTRAP_CLIENT_ID: 'admin', VOUCH_BOOTSTRAP_CLIENT_SECRET: 'short' }, 'VOUCH_BOOTSTRAP_CLIENT_SECRET'],
  [
    { VOUCH_BOOTSTRAP_CLIENT_ID: 'has space', VOUCH_BOOTSTRAP_CLIENT_SECRET: 'long-enough-secret-123' },
    'VOUCH_BOOTSTRAP_CLIENT_ID',
  ],
  [{ VOUCH_BOOTSTRAP_CLIENT_ID: 'admin' }, 'VOUCH_BOOTSTRAP_CLIENT_SECRET'],
  [{ VOUCH_BOOTSTRAP_CLIENT_SECRET: 'long-enough-secret-123' }, 'VOUCH_BOOTSTRAP_CLIENT_ID'],
  [{ VOUCH_ISSUER: '' }, 'VOUCH_ISSUER'],
  [{ VOUCH_RATE_LIMIT_PER_SECOND: '0' }, 'VOUCH_RATE_LIMIT_PER_SECOND'],
  [{ VOUCH_TOKEN_RATE_LIMIT_PER_MINUTE: 'many' }, 'VOUCH_TOKEN_RATE_LIMIT_PER_MINUTE'],
  [{ VOUCH_SECRET_KEY: 'short' }, 'VOUCH_SECRET_KEY'],
  [{ VOUCH_TRUST_PROXY: 'proxy.example' }, 'VOUCH_TRUST_PROXY'],
  [{ VOUCH_TRUST_PROXY: '1' }, 'VOUCH_TRUST_PROXY'],
  [{ VOUCH_TRUST_PROXY: 'true' }, 'VOUCH_TRUST_PROXY'],
  [{ VOUCH_REQUIRE_HASHED_IDS: 'yes' }, 'VOUCH_REQUIRE_HASHED_IDS'],
  [{ VOUCH_METRICS_TOKEN: 'short' }, 'VOUCH_METRICS_TOKEN'],
  [{ VOUCH_MAX_CONNECTIONS: '0' }, 'VOUCH_MAX_CONNECTIONS'],
  [{ VOUCH_MAX_CONNECTIONS: '10', VOUCH_MAX_CONNECTIONS_PER_SOURCE: '11' }, 'VOUCH_MAX_CONNECTIONS_PER_SOURCE'],
  [{ VOUCH_MAX_CONNECTIONS_PER_SOURCE: '0' }, 'VOUCH_MAX_CONNECTIONS_PER_SOURCE'],
  [{ VOUCH_KEEP_ALIVE_TIMEOUT_MS: '0' }, 'VOUCH_KEEP_ALIVE_TIMEOUT_MS'],
  [{ VOUCH_KEEP_ALIVE_TIMEOUT_MS: '5s' }, 'VOUCH_KEEP_ALIVE_TIMEOUT_MS'],
  [{ VOUCH_SQLITE_WAL_LIMIT_MB: '0' }, 'VOUCH_SQLITE_WAL_LIMIT_MB'],
  [{ VOUCH_WORKERS: '0' }, 'VOUCH_WORKERS'],
  [{ VOUCH_SQLITE_SYNCHRONOUS: 'off' }, 'VOUCH_SQLITE_SYNCHRONOUS'],
];

for (const [env, variable] of BAD) {
  test(`bad ${variable}=${JSON.stringify(Object.values(env).at(-1))}: ConfigError with a one-line message naming ${variable}`, () => {
    assert.throws(
      () => loadConfig(env),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError, `not a ConfigError: ${String(err)}`);
        assert.ok(err.message.startsWith(variable), err.message);
        assert.ok(!/[\r\n]/.test(err.message), 'one line');
        return true;
      },
    );
  });
}

test('a bad value with a newline or a very long value still gives a one-line, bounded message', () => {
  for (const value of ['80\n80', 'x'.repeat(10_000), '8080\r\nInjected: yes', '\u2028']) {
    assert.throws(
      () => loadConfig({ PORT: value }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.ok(!/[\r\n\u2028\u2029]/.test(err.message), JSON.stringify(err.message));
        assert.ok(err.message.length < 120, err.message);
        assert.ok(err.message.startsWith('PORT'));
        return true;
      },
    );
  }
  assert.throws(
    () => loadConfig({ VOUCH_LOG_LEVEL: 'info\nfatal' }),
    (err: unknown) => err instanceof ConfigError && !err.message.includes('\n'),
  );
});

test('empty optional variables count as unset', () => {
  const config = loadConfig({
    VOUCH_REDIS_URL: '',
    VOUCH_POLICY_FILE: '',
    PORT: '',
    VOUCH_BOOTSTRAP_CLIENT_ID: '',
    VOUCH_BOOTSTRAP_CLIENT_SECRET: '',
  });
  assert.equal(config.redisUrl, undefined);
  assert.equal(config.policyFile, undefined);
  assert.equal(config.port, 8080);
  assert.equal(config.bootstrapClientId, undefined);
});
