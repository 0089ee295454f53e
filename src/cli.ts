// The `vouch` command: serve, migrate, clients, signing-keys, events import. Parsing is
// commander's: `--help` on any command prints its usage and runs nothing; configuration is read
// only once a command actually runs, so help works whatever the environment holds.
import { CommanderError } from 'commander';
import { ConfigError } from './config/env-values.ts';
import { buildProgram } from './cli/program.ts';
import { UsageError } from './cli/support.ts';

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  // `vouch` alone is a request for help, not an error.
  if (argv.length === 0) {
    program.outputHelp();
    return;
  }
  await program.parseAsync(argv, { from: 'user' });
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof CommanderError) {
    // Help and version print and exit 0; commander has already written its own one-line error.
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  if (err instanceof ConfigError || err instanceof UsageError) {
    process.stderr.write(`vouch: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`vouch: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
