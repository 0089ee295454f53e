// What every `vouch` command shares: its store, its audit log, and the errors that pick the exit
// status. Exit statuses (printed by `vouch --help`): 0 done; 1 the command ran and failed (not
// found, a conflict, a rejected import line, an unreachable store); 2 the command was not
// understood (unknown command or option, bad argument, bad environment variable).
import { silentLog, lineLog, type AuthLog } from '../auth/events.ts';
import type { Config } from '../config/env.ts';
import { openStore, type Store } from '../store/db.ts';

/** An input the command cannot act on: exit status 2 and one line, like a bad environment. */
export class UsageError extends Error {}
/** The command understood its input but could not do it (e.g. no such client): exit status 1. */
export class CommandFailure extends Error {}
/** The command ran but did not fully succeed (e.g. an import with rejected lines): exit status 1. */
export class PartialFailure extends Error {}

export const EXIT_CODES_HELP = `
Exit status:
  0  done
  1  the command ran and failed: not found, a conflict, rejected input lines, the store unreachable
  2  usage: unknown command or option, bad argument, bad environment variable`;

/**
 * The audit lines of CLI changes (client created, key rotated) go to standard error, and only
 * when VOUCH_LOG_LEVEL is set: a person at a terminal wants the credentials, not a JSON line
 * beside them, while a script that sets the level for its log collector gets every line.
 */
export function cliLog(config: Config, env: NodeJS.ProcessEnv = process.env): AuthLog {
  return env.VOUCH_LOG_LEVEL ? lineLog(config.logLevel, process.stderr) : silentLog;
}

export async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  try {
    await store.migrate();
    return await fn(store);
  } finally {
    await store.close();
  }
}
