// One environment variable read as a typed value, or a ConfigError naming the variable and what
// it must be (the value quoted, escaped and cut short), so that a bad setting stops the process.

export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

/** A value quoted for the one-line message: escaped (no raw newline) and cut short. */
export function shown(raw: string): string {
  const quoted = JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);
  return quoted.replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,15}$/.test(raw)) throw new ConfigError(`${name} must be an integer, got ${shown(raw)}`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function text(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined) return fallback;
  if (raw.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return raw;
}

export function sqliteSynchronous(env: Env): 'normal' | 'full' {
  const raw = optional(env, 'VOUCH_SQLITE_SYNCHRONOUS')?.toLowerCase() ?? 'normal';
  if (raw !== 'normal' && raw !== 'full') throw new ConfigError('VOUCH_SQLITE_SYNCHRONOUS must be normal or full');
  return raw;
}

export function optional(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
}

export function flag(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${name} must be 1 or 0, got ${shown(raw)}`);
}

const PROXY_ENTRY = /^[0-9A-Fa-f.:]+(\/\d{1,3})?$|^(loopback|linklocal|uniquelocal)$/;

export function trustProxy(env: Env): false | number | string[] {
  const raw = optional(env, 'VOUCH_TRUST_PROXY');
  if (raw === undefined || raw === '0' || raw === 'false') return false;
  // Trusting every hop would let any client name its own address in X-Forwarded-For (and so
  // dodge every per-IP limit): only a hop count or the proxies' own addresses are accepted.
  if (raw === '1' || raw === 'true') {
    throw new ConfigError(
      "VOUCH_TRUST_PROXY=1 would trust every hop (clients could choose their own address); use hops:N or the proxies' addresses/CIDRs",
    );
  }
  if (/^hops:\d{1,2}$/.test(raw)) return Number(raw.slice(5));
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0 || !entries.every((e) => PROXY_ENTRY.test(e))) {
    throw new ConfigError(
      `VOUCH_TRUST_PROXY must be hops:N or a comma-separated list of addresses, CIDRs, loopback, linklocal or uniquelocal; got ${shown(raw)}`,
    );
  }
  return entries;
}

export function publicUrl(env: Env): string | undefined {
  const raw = optional(env, 'VOUCH_PUBLIC_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`VOUCH_PUBLIC_URL must be an absolute http:// or https:// URL, got ${shown(raw)}`);
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username ||
    url.password ||
    url.search ||
    url.hash
  ) {
    throw new ConfigError(
      `VOUCH_PUBLIC_URL must be an http:// or https:// URL without credentials, query or fragment, got ${shown(raw)}`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

export function corsOrigins(env: Env): string[] {
  const raw = optional(env, 'VOUCH_CORS_ORIGINS');
  if (raw === undefined) return [];
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const entry of entries) {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    // An origin is scheme://host[:port] and nothing else; '*' is refused (the contract echoes origins).
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== entry.replace(/\/$/, '')) {
      throw new ConfigError(
        `VOUCH_CORS_ORIGINS must be a comma-separated list of origins (scheme://host[:port]), got ${shown(entry)}`,
      );
    }
  }
  if (entries.length === 0) throw new ConfigError('VOUCH_CORS_ORIGINS must list at least one origin when set');
  return entries.map((e) => new URL(e).origin);
}
