// What the benchmarks that start a Vouch server share: its bootstrap admin and the environment
// that lifts the rate limits, waiting until it is ready, an admin token and an API key, and the
// CPU seconds of its processes read from /proc.
import { readFileSync } from 'node:fs';

export const ADMIN = { id: 'bench-admin', secret: 'bench-admin-secret-0123456789' };

/** The server's environment for a bench: the admin above, no rate limit in the way, warnings only. */
export function benchEnv(port: number, databaseUrl: string, workers: string): Record<string, string> {
  return {
    NODE_ENV: 'production',
    PORT: String(port),
    VOUCH_DATABASE_URL: databaseUrl,
    VOUCH_LOG_LEVEL: 'warn',
    VOUCH_WORKERS: workers,
    VOUCH_BOOTSTRAP_CLIENT_ID: ADMIN.id,
    VOUCH_BOOTSTRAP_CLIENT_SECRET: ADMIN.secret,
    VOUCH_RATE_LIMIT_PER_SECOND: '10000000',
    VOUCH_RATE_LIMIT_BURST: '20000000',
    VOUCH_TOKEN_RATE_LIMIT_PER_MINUTE: '100000',
  };
}

/** Waits until /readyz answers (a minute: on a shared machine the workers can take 20 s); false if it never did. */
export async function waitReady(base: string, tries = 600, path = '/readyz'): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    try {
      if ((await fetch(`${base}${path}`)).ok) return true;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** The admin's token and a new API key with `scopes`. */
export async function benchCredentials(
  base: string,
  scopes = ['trust:read', 'trust:write', 'dispute:analyze'],
): Promise<{ token: string; key: string }> {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
    (
      await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    ).json() as Promise<Record<string, string>>;
  const token = (await post('/api/v1/auth/token', { client_id: ADMIN.id, client_secret: ADMIN.secret })).access_token!;
  const key = (await post('/api/v1/keys', { name: 'bench', scopes }, { authorization: `Bearer ${token}` })).key!;
  return { token, key };
}

/** The child processes of `pid` (a cluster's workers). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * User + system CPU seconds of one process (/proc/PID/stat fields 14 and 15, in ticks of 1/100 s); 0 once it is gone.
 */
export function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}
