// Configuration comes from environment variables only; a bad value stops the process with one
// line that names the variable, so an operator never runs on a silently-defaulted setting.
import {
  ConfigError,
  corsOrigins,
  flag,
  integer,
  optional,
  publicUrl,
  shown,
  sqliteSynchronous,
  text,
  trustProxy,
  type Env,
} from './env-values.ts';
import { isPersonRole, PERSON_ROLES, type PersonRole } from '../lib/person-roles.ts';

// Exported here too: whoever calls loadConfig catches its error from the same module.

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string | undefined;
  bootstrapClientId: string | undefined;
  bootstrapClientSecret: string | undefined;
  tokenTtlSeconds: number;
  /**
   * VOUCH_PASSWORD_COST: scrypt's work factor for people's passwords, log2 N (r = 8, p = 1), 15–20,
   * default 17 (OWASP's floor for scrypt: 128 MiB a hash)
   */
  passwordCost: number;
  issuer: string;
  /**
   * also accepted as `iss`: the old default, `vouch`, while VOUCH_ISSUER is unset (tokens issued
   * before the upgrade)
   */
  formerIssuers: string[];
  audience: string;
  policyFile: string | undefined;
  logLevel: string;
  /** tokenFailuresPerMinute counts failed token attempts per client_id and source address */
  rateLimit: { perSecond: number; burst: number; tokenPerMinute: number; tokenFailuresPerMinute: number };
  /** VOUCH_LABELS_PER_MINUTE: labels one principal may send through POST /api/v1/labels per minute */
  labelsPerMinute: number;
  workers: number | undefined;
  /** the key-encryption key for private signing keys (VOUCH_SECRET_KEY); see secretKeyFile */
  secretKey: string | undefined;
  /** a file holding the key-encryption key (VOUCH_SECRET_KEY_FILE); by default one is generated beside the database */
  secretKeyFile: string | undefined;
  /** VOUCH_TRUST_PROXY: false, a hop count, or a list of proxy addresses/CIDRs */
  trustProxy: false | number | string[];
  /** VOUCH_REQUIRE_HASHED_IDS=1: identifiers must be hex or base64url digests of >= 32 characters */
  requireHashedIds: boolean;
  /** VOUCH_METRICS_TOKEN: when set, /metrics requires Authorization: Bearer <this token> */
  metricsToken: string | undefined;
  /** VOUCH_MAX_CONNECTIONS: open connections per serving process (idle keep-alive ones are reclaimed first) */
  maxConnections: number;
  /**
   * VOUCH_MAX_CONNECTIONS_PER_SOURCE: connections one address (IPv6: one /64) may hold; default a
   * quarter of the cap
   */
  maxConnectionsPerSource: number;
  /** VOUCH_KEEP_ALIVE_TIMEOUT_MS: an idle keep-alive connection is closed after this long */
  keepAliveTimeoutMs: number;
  /** VOUCH_SQLITE_WAL_LIMIT_MB: a WAL larger than this is checkpointed and truncated (TRUNCATE) */
  sqliteWalLimitBytes: number;
  /** VOUCH_PUBLIC_URL: the service's public base URL (no trailing slash), for absolute links in OAuth metadata */
  publicUrl: string | undefined;
  /** VOUCH_CORS_ORIGINS: origins CORS answers for; empty = CORS off */
  corsOrigins: string[];
  /** VOUCH_WEBHOOK_ALLOW_PRIVATE=1: webhooks may target private and loopback addresses, and http:// */
  webhookAllowPrivate: boolean;
  /** VOUCH_WEBHOOKS_PER_CLIENT and the delivery limits of src/webhooks/worker.ts (VOUCH_WEBHOOK_*) */
  webhooks: {
    maxPerClient: number;
    concurrency: number;
    endpointConcurrency: number;
    clientConcurrency: number;
    breakerFailures: number;
    breakerCooldownMs: number;
  };
  /** VOUCH_SQLITE_SYNCHRONOUS: NORMAL (survives a process crash) or FULL (a power loss too) */
  sqliteSynchronous: 'normal' | 'full';
  /**
   * the network (docs/network.md): VOUCH_NETWORK_NAME, VOUCH_NETWORK_ALLOW_PRIVATE=1 (peers on private
   * addresses and http://), VOUCH_NETWORK_SYNC_SECONDS,
   * VOUCH_NETWORK_COMMON_ENTITY_IDS=1 (the admin declares that entity ids follow the members' common
   * hashing: they are published and resolved),
   * VOUCH_NETWORK_MAX_FLAGS_PER_PEER (flags held per peer; absent: the default of src/network/limits.ts),
   * VOUCH_NETWORK_PENDING_PER_CLIENT (identifiers named only in one client's score requests that may
   * wait for a peer; absent: src/network/pending.ts's)
   */
  network: {
    name: string;
    allowPrivate: boolean;
    syncSeconds: number;
    commonEntityIds: boolean;
    maxFlagsPerPeer?: number;
    pendingPerClient?: number;
  };
  /** single sign-on through an OpenID Connect provider (VOUCH_OIDC_*); undefined without VOUCH_OIDC_ISSUER */
  oidc: OidcConfig | undefined;
}

/** Single sign-on (docs/api.md, "People"); the redirect URI is VOUCH_PUBLIC_URL + /api/v1/auth/sso/callback. */
export interface OidcConfig {
  /** VOUCH_OIDC_ISSUER: https://, or http:// on a loopback host (a provider on the same machine) */
  issuer: string;
  clientId: string;
  /** VOUCH_OIDC_CLIENT_SECRET; unset: a public client (PKCE only) */
  clientSecret: string | undefined;
  /** VOUCH_OIDC_ROLE_CLAIM: the claim whose value (or highest known value of a list) is the person's role */
  roleClaim: string;
  /** VOUCH_OIDC_DEFAULT_ROLE: the role of a person whose claim is absent or unknown; unset: refused */
  defaultRole: PersonRole | undefined;
  /** VOUCH_OIDC_ALLOWED_DOMAINS: e-mail domains (lower case) that may sign in; empty: any */
  allowedDomains: string[];
}

/**
 * The listen address as a URL origin (an IPv6 literal in brackets); an unspecified address (0.0.0.0,
 * ::) is no URL a client can use, localhost is.
 */
export function listenUrl(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '::' || host === '[::]') return `http://localhost:${port}`;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/** The default issuer before it became a URL: tokens issued under it stay valid (docs/operations.md). */
const FORMER_DEFAULT_ISSUER = 'vouch';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = text(env, 'VOUCH_DATABASE_URL', 'sqlite:./data/vouch.db');
  if (!/^sqlite:.+/.test(databaseUrl) && !/^postgres(ql)?:\/\/.+/.test(databaseUrl)) {
    throw new ConfigError('VOUCH_DATABASE_URL must be sqlite:<path> or postgres://…');
  }
  const redisUrl = optional(env, 'VOUCH_REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\/.+/.test(redisUrl)) {
    throw new ConfigError('VOUCH_REDIS_URL must be redis://… or rediss://…');
  }
  const bootstrapClientId = optional(env, 'VOUCH_BOOTSTRAP_CLIENT_ID');
  const bootstrapClientSecret = optional(env, 'VOUCH_BOOTSTRAP_CLIENT_SECRET');
  if (bootstrapClientSecret !== undefined && bootstrapClientSecret.length < 16) {
    throw new ConfigError('VOUCH_BOOTSTRAP_CLIENT_SECRET must be at least 16 characters');
  }
  if (bootstrapClientId !== undefined && !/^[A-Za-z0-9_.-]{1,128}$/.test(bootstrapClientId)) {
    throw new ConfigError('VOUCH_BOOTSTRAP_CLIENT_ID must be 1-128 characters of A-Z a-z 0-9 _ . -');
  }
  // One without the other would silently create no admin.
  if (bootstrapClientId !== undefined && bootstrapClientSecret === undefined) {
    throw new ConfigError('VOUCH_BOOTSTRAP_CLIENT_SECRET must be set when VOUCH_BOOTSTRAP_CLIENT_ID is');
  }
  if (bootstrapClientSecret !== undefined && bootstrapClientId === undefined) {
    throw new ConfigError('VOUCH_BOOTSTRAP_CLIENT_ID must be set when VOUCH_BOOTSTRAP_CLIENT_SECRET is');
  }
  const logLevel = text(env, 'VOUCH_LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`VOUCH_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${shown(logLevel)}`);
  }
  const workersRaw = optional(env, 'VOUCH_WORKERS');
  const secretKey = optional(env, 'VOUCH_SECRET_KEY');
  if (secretKey !== undefined && secretKey.length < 32)
    throw new ConfigError('VOUCH_SECRET_KEY must be at least 32 characters');
  const metricsToken = optional(env, 'VOUCH_METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16)
    throw new ConfigError('VOUCH_METRICS_TOKEN must be at least 16 characters');
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = text(env, 'HOST', '127.0.0.1');
  const publicBase = publicUrl(env);
  const maxConnections = integer(env, 'VOUCH_MAX_CONNECTIONS', 1024, 1, 1_000_000);
  return {
    port,
    host,
    databaseUrl,
    redisUrl,
    bootstrapClientId,
    bootstrapClientSecret,
    tokenTtlSeconds: integer(env, 'VOUCH_TOKEN_TTL_SECONDS', 900, 60, 86400),
    passwordCost: integer(env, 'VOUCH_PASSWORD_COST', 17, 15, 20),
    // A URL by default: discovery-based OAuth clients (openid-client) require the issuer to be
    // the URL they discovered it from (docs/operations.md, "OAuth discovery and token checks").
    issuer: text(env, 'VOUCH_ISSUER', publicBase ?? listenUrl(host, port)),
    formerIssuers: optional(env, 'VOUCH_ISSUER') === undefined ? [FORMER_DEFAULT_ISSUER] : [],
    audience: text(env, 'VOUCH_AUDIENCE', 'vouch-api'),
    policyFile: optional(env, 'VOUCH_POLICY_FILE'),
    logLevel,
    rateLimit: {
      perSecond: integer(env, 'VOUCH_RATE_LIMIT_PER_SECOND', 100, 1, 10_000_000),
      burst: integer(env, 'VOUCH_RATE_LIMIT_BURST', 200, 1, 20_000_000),
      tokenPerMinute: integer(env, 'VOUCH_TOKEN_RATE_LIMIT_PER_MINUTE', 30, 1, 1_000_000),
      tokenFailuresPerMinute: integer(env, 'VOUCH_TOKEN_FAILURES_PER_MINUTE', 30, 1, 1_000_000),
    },
    // At least one full batch (1,000 labels) a minute, or a full batch could never pass.
    labelsPerMinute: integer(env, 'VOUCH_LABELS_PER_MINUTE', 6000, 1000, 10_000_000),
    workers: workersRaw === undefined ? undefined : integer(env, 'VOUCH_WORKERS', 1, 1, 256),
    secretKey,
    secretKeyFile: optional(env, 'VOUCH_SECRET_KEY_FILE'),
    trustProxy: trustProxy(env),
    requireHashedIds: flag(env, 'VOUCH_REQUIRE_HASHED_IDS'),
    metricsToken,
    maxConnections,
    maxConnectionsPerSource: integer(
      env,
      'VOUCH_MAX_CONNECTIONS_PER_SOURCE',
      Math.ceil(maxConnections / 4),
      1,
      maxConnections,
    ),
    keepAliveTimeoutMs: integer(env, 'VOUCH_KEEP_ALIVE_TIMEOUT_MS', 5000, 100, 600_000),
    sqliteWalLimitBytes: integer(env, 'VOUCH_SQLITE_WAL_LIMIT_MB', 1024, 1, 1_048_576) * 1024 * 1024,
    publicUrl: publicBase,
    corsOrigins: corsOrigins(env),
    webhookAllowPrivate: flag(env, 'VOUCH_WEBHOOK_ALLOW_PRIVATE'),
    webhooks: {
      maxPerClient: integer(env, 'VOUCH_WEBHOOKS_PER_CLIENT', 20, 1, 10_000),
      concurrency: integer(env, 'VOUCH_WEBHOOK_CONCURRENCY', 64, 1, 10_000),
      endpointConcurrency: integer(env, 'VOUCH_WEBHOOK_ENDPOINT_CONCURRENCY', 2, 1, 100),
      clientConcurrency: integer(env, 'VOUCH_WEBHOOK_CLIENT_CONCURRENCY', 16, 1, 10_000),
      breakerFailures: integer(env, 'VOUCH_WEBHOOK_BREAKER_FAILURES', 5, 1, 1000),
      breakerCooldownMs: integer(env, 'VOUCH_WEBHOOK_BREAKER_COOLDOWN_SECONDS', 60, 1, 86_400) * 1000,
    },
    sqliteSynchronous: sqliteSynchronous(env),
    network: {
      name: text(env, 'VOUCH_NETWORK_NAME', 'vouch'),
      allowPrivate: flag(env, 'VOUCH_NETWORK_ALLOW_PRIVATE'),
      syncSeconds: integer(env, 'VOUCH_NETWORK_SYNC_SECONDS', 300, 1, 86_400),
      commonEntityIds: flag(env, 'VOUCH_NETWORK_COMMON_ENTITY_IDS'),
      maxFlagsPerPeer: integer(env, 'VOUCH_NETWORK_MAX_FLAGS_PER_PEER', 1_000_000, 1000, 100_000_000),
      pendingPerClient: integer(env, 'VOUCH_NETWORK_PENDING_PER_CLIENT', 1000, 10, 1_000_000),
    },
    oidc: oidcConfig(env, publicBase),
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** VOUCH_OIDC_*: off without the issuer; with it, the client id and VOUCH_PUBLIC_URL (the redirect URI's base). */
function oidcConfig(env: Env, publicBase: string | undefined): OidcConfig | undefined {
  const issuer = optional(env, 'VOUCH_OIDC_ISSUER');
  const others = ['CLIENT_ID', 'CLIENT_SECRET', 'ROLE_CLAIM', 'DEFAULT_ROLE', 'ALLOWED_DOMAINS'].map(
    (n) => `VOUCH_OIDC_${n}`,
  );
  if (issuer === undefined) {
    const stray = others.find((name) => optional(env, name) !== undefined);
    // a half-configured SSO would silently be off
    if (stray) throw new ConfigError(`VOUCH_OIDC_ISSUER must be set when ${stray} is`);
    return undefined;
  }
  let url: URL | undefined;
  try {
    url = new URL(issuer);
  } catch {
    url = undefined;
  }
  if (
    !url ||
    !(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) ||
    url.username ||
    url.password ||
    url.search ||
    url.hash
  ) {
    throw new ConfigError(
      `VOUCH_OIDC_ISSUER must be an https:// URL (http:// only on localhost) without credentials, query or fragment, got ${shown(issuer)}`,
    );
  }
  const clientId = optional(env, 'VOUCH_OIDC_CLIENT_ID');
  if (clientId === undefined) throw new ConfigError('VOUCH_OIDC_CLIENT_ID must be set when VOUCH_OIDC_ISSUER is');
  // the redirect URI the provider has registered: never derived from a request's Host header
  if (publicBase === undefined) throw new ConfigError('VOUCH_PUBLIC_URL must be set when VOUCH_OIDC_ISSUER is');
  const roleClaim = text(env, 'VOUCH_OIDC_ROLE_CLAIM', 'vouch_role');
  if (!/^\S{1,256}$/.test(roleClaim))
    throw new ConfigError(`VOUCH_OIDC_ROLE_CLAIM must be a claim name without spaces, got ${shown(roleClaim)}`);
  const defaultRole = optional(env, 'VOUCH_OIDC_DEFAULT_ROLE');
  if (defaultRole !== undefined && !isPersonRole(defaultRole)) {
    throw new ConfigError(
      `VOUCH_OIDC_DEFAULT_ROLE must be one of ${PERSON_ROLES.join(', ')}, got ${shown(defaultRole)}`,
    );
  }
  const allowedDomains = (optional(env, 'VOUCH_OIDC_ALLOWED_DOMAINS') ?? '')
    .split(',')
    .map((d) => d.trim().toLowerCase().replace(/^@/, ''))
    .filter((d) => d !== '');
  const bad = allowedDomains.find((d) => !DOMAIN.test(d));
  if (bad !== undefined)
    throw new ConfigError(`VOUCH_OIDC_ALLOWED_DOMAINS must be comma-separated e-mail domains, got ${shown(bad)}`);
  return {
    issuer,
    clientId,
    clientSecret: optional(env, 'VOUCH_OIDC_CLIENT_SECRET'),
    roleClaim,
    defaultRole,
    allowedDomains,
  };
}
