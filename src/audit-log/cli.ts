// `vouch audit verify` (docs/api.md, "Audit log"): checks the chain of the whole log, both
// environments, straight in the store. Exit status 0 with the count of entries checked, or 1
// naming the first entry that was edited, deleted or moved.
import type { Command } from 'commander';
import { loadConfig, type Config } from '../config/env.ts';
import type { Store } from '../store/db.ts';
import { verifyAuditLog } from './verify.ts';

export interface AuditLogCliSupport {
  withStore: <T>(config: Config, fn: (store: Store) => Promise<T>) => Promise<T>;
  /** the command ran and found a break: exit status 1 */
  failure: (message: string) => Error;
}

export function registerAuditLogCommands(program: Command, { withStore, failure }: AuditLogCliSupport): void {
  program
    .command('audit')
    .description('the audit log of changes by people and clients')
    .command('verify')
    .description(
      "check the audit log's hash chain: prints how many entries were checked, or names the first broken one (exit status 1)",
    )
    .action(async () => {
      const result = await withStore(loadConfig(), (store) => verifyAuditLog(store.db));
      const tail = result.last ? `; the last is ${result.last.seq} (${result.last.id}), hash ${result.last.hash}` : '';
      if (result.broken) {
        const { seq, id, detail, reason } = result.broken;
        process.stdout.write(`${result.checked} entries check out before entry ${seq}${tail}\n`);
        throw failure(
          reason === 'gap'
            ? `audit log broken: ${detail.replace(/\)$/, `, ${id})`)}`
            : `audit log broken at entry ${seq} (${id}): ${detail}`,
        );
      }
      process.stdout.write(`audit log intact: ${result.checked} entries checked${tail}\n`);
    });
}
